/* IR op names and a text listing of a lifted function, for debugging and
 * tests.  Constants get a short rendering of their own (this file must not
 * depend on the source printer). */
#include <stdio.h>

#include "ir.h"

static const char *const IR_NAMES[IR_OP_COUNT] = {
    [IR_NOP] = "NOP",
    [IR_LOAD_CONST] = "LOAD_CONST",
    [IR_LOAD_NAME] = "LOAD_NAME",
    [IR_LOAD_GLOBAL] = "LOAD_GLOBAL",
    [IR_LOAD_FAST] = "LOAD_FAST",
    [IR_LOAD_DEREF] = "LOAD_DEREF",
    [IR_LOAD_CLASSDEREF] = "LOAD_CLASSDEREF",
    [IR_LOAD_CLOSURE] = "LOAD_CLOSURE",
    [IR_LOAD_FAST_AND_CLEAR] = "LOAD_FAST_AND_CLEAR",
    [IR_STORE_NAME] = "STORE_NAME",
    [IR_STORE_GLOBAL] = "STORE_GLOBAL",
    [IR_STORE_FAST] = "STORE_FAST",
    [IR_STORE_DEREF] = "STORE_DEREF",
    [IR_DELETE_NAME] = "DELETE_NAME",
    [IR_DELETE_GLOBAL] = "DELETE_GLOBAL",
    [IR_DELETE_FAST] = "DELETE_FAST",
    [IR_DELETE_DEREF] = "DELETE_DEREF",
    [IR_LOAD_ATTR] = "LOAD_ATTR",
    [IR_LOAD_METHOD] = "LOAD_METHOD",
    [IR_LOAD_SUPER_ATTR] = "LOAD_SUPER_ATTR",
    [IR_STORE_ATTR] = "STORE_ATTR",
    [IR_DELETE_ATTR] = "DELETE_ATTR",
    [IR_PUSH_NULL] = "PUSH_NULL",
    [IR_LOAD_ASSERTION_ERROR] = "LOAD_ASSERTION_ERROR",
    [IR_LOAD_BUILD_CLASS] = "LOAD_BUILD_CLASS",
    [IR_LOAD_LOCALS] = "LOAD_LOCALS",
    [IR_BINARY_OP] = "BINARY_OP",
    [IR_UNARY] = "UNARY",
    [IR_COMPARE] = "COMPARE",
    [IR_IS] = "IS",
    [IR_CONTAINS] = "CONTAINS",
    [IR_BINARY_SUBSCR] = "BINARY_SUBSCR",
    [IR_STORE_SUBSCR] = "STORE_SUBSCR",
    [IR_DELETE_SUBSCR] = "DELETE_SUBSCR",
    [IR_BINARY_SLICE] = "BINARY_SLICE",
    [IR_STORE_SLICE] = "STORE_SLICE",
    [IR_BUILD_SLICE] = "BUILD_SLICE",
    [IR_CALL] = "CALL",
    [IR_CALL_EX] = "CALL_EX",
    [IR_MAKE_FUNCTION] = "MAKE_FUNCTION",
    [IR_SET_FUNCTION_ATTRIBUTE] = "SET_FUNCTION_ATTRIBUTE",
    [IR_CALL_INTRINSIC_1] = "CALL_INTRINSIC_1",
    [IR_CALL_INTRINSIC_2] = "CALL_INTRINSIC_2",
    [IR_BUILD_TUPLE] = "BUILD_TUPLE",
    [IR_BUILD_LIST] = "BUILD_LIST",
    [IR_BUILD_SET] = "BUILD_SET",
    [IR_BUILD_MAP] = "BUILD_MAP",
    [IR_BUILD_CONST_KEY_MAP] = "BUILD_CONST_KEY_MAP",
    [IR_BUILD_STRING] = "BUILD_STRING",
    [IR_LIST_APPEND] = "LIST_APPEND",
    [IR_SET_ADD] = "SET_ADD",
    [IR_MAP_ADD] = "MAP_ADD",
    [IR_LIST_EXTEND] = "LIST_EXTEND",
    [IR_SET_UPDATE] = "SET_UPDATE",
    [IR_DICT_UPDATE] = "DICT_UPDATE",
    [IR_DICT_MERGE] = "DICT_MERGE",
    [IR_LIST_TO_TUPLE] = "LIST_TO_TUPLE",
    [IR_BUILD_UNPACK] = "BUILD_UNPACK",
    [IR_FORMAT_VALUE] = "FORMAT_VALUE",
    [IR_CONVERT_VALUE] = "CONVERT_VALUE",
    [IR_UNPACK_SEQUENCE] = "UNPACK_SEQUENCE",
    [IR_UNPACK_EX] = "UNPACK_EX",
    [IR_POP_TOP] = "POP_TOP",
    [IR_COPY] = "COPY",
    [IR_SWAP] = "SWAP",
    [IR_RETURN_VALUE] = "RETURN_VALUE",
    [IR_JUMP] = "JUMP",
    [IR_POP_JUMP_IF_FALSE] = "POP_JUMP_IF_FALSE",
    [IR_POP_JUMP_IF_TRUE] = "POP_JUMP_IF_TRUE",
    [IR_POP_JUMP_IF_NONE] = "POP_JUMP_IF_NONE",
    [IR_POP_JUMP_IF_NOT_NONE] = "POP_JUMP_IF_NOT_NONE",
    [IR_JUMP_IF_FALSE_OR_POP] = "JUMP_IF_FALSE_OR_POP",
    [IR_JUMP_IF_TRUE_OR_POP] = "JUMP_IF_TRUE_OR_POP",
    [IR_GET_ITER] = "GET_ITER",
    [IR_FOR_ITER] = "FOR_ITER",
    [IR_RAISE] = "RAISE",
    [IR_RERAISE] = "RERAISE",
    [IR_RETURN_GENERATOR] = "RETURN_GENERATOR",
    [IR_YIELD_VALUE] = "YIELD_VALUE",
    [IR_GET_YIELD_FROM_ITER] = "GET_YIELD_FROM_ITER",
    [IR_GET_AWAITABLE] = "GET_AWAITABLE",
    [IR_YIELD_FROM] = "YIELD_FROM",
    [IR_GET_AITER] = "GET_AITER",
    [IR_GET_ANEXT] = "GET_ANEXT",
    [IR_END_ASYNC_FOR] = "END_ASYNC_FOR",
    [IR_BEFORE_ASYNC_WITH] = "BEFORE_ASYNC_WITH",
    [IR_ASYNC_GEN_WRAP] = "ASYNC_GEN_WRAP",
    [IR_STOPITERATION_ERROR] = "STOPITERATION_ERROR",
    [IR_PUSH_EXC_INFO] = "PUSH_EXC_INFO",
    [IR_POP_EXCEPT] = "POP_EXCEPT",
    [IR_CHECK_EXC_MATCH] = "CHECK_EXC_MATCH",
    [IR_CHECK_EG_MATCH] = "CHECK_EG_MATCH",
    [IR_PREP_RERAISE_STAR] = "PREP_RERAISE_STAR",
    [IR_BEFORE_WITH] = "BEFORE_WITH",
    [IR_WITH_EXCEPT_START] = "WITH_EXCEPT_START",
    [IR_SETUP_FINALLY] = "SETUP_FINALLY",
    [IR_SETUP_WITH] = "SETUP_WITH",
    [IR_SETUP_ASYNC_WITH] = "SETUP_ASYNC_WITH",
    [IR_POP_BLOCK] = "POP_BLOCK",
    [IR_BEGIN_FINALLY] = "BEGIN_FINALLY",
    [IR_END_FINALLY] = "END_FINALLY",
    [IR_CALL_FINALLY] = "CALL_FINALLY",
    [IR_POP_FINALLY] = "POP_FINALLY",
    [IR_WITH_CLEANUP_START] = "WITH_CLEANUP_START",
    [IR_WITH_CLEANUP_FINISH] = "WITH_CLEANUP_FINISH",
    [IR_IMPORT_NAME] = "IMPORT_NAME",
    [IR_IMPORT_FROM] = "IMPORT_FROM",
    [IR_IMPORT_STAR] = "IMPORT_STAR",
    [IR_SETUP_ANNOTATIONS] = "SETUP_ANNOTATIONS",
    [IR_PRINT_EXPR] = "PRINT_EXPR",
    [IR_MATCH_CLASS] = "MATCH_CLASS",
    [IR_MATCH_MAPPING] = "MATCH_MAPPING",
    [IR_MATCH_SEQUENCE] = "MATCH_SEQUENCE",
    [IR_MATCH_KEYS] = "MATCH_KEYS",
    [IR_COPY_DICT_WITHOUT_KEYS] = "COPY_DICT_WITHOUT_KEYS",
    [IR_GET_LEN] = "GET_LEN",
};

const char *dp_irop_name(int op) {
    if (op < 0 || op >= IR_OP_COUNT || IR_NAMES[op] == NULL)
        return "?";
    return IR_NAMES[op];
}

/* ---- constants ---- */

#define CONST_DEPTH 3   /* nesting shown before "..." */
#define CONST_ITEMS 8   /* items of a tuple/frozenset shown */
#define CONST_CHARS 40  /* characters of a str/bytes shown */

static void put_quoted(dp_buf *out, const char *s, size_t len, int is_bytes) {
    if (is_bytes)
        dp_buf_putc(out, 'b');
    dp_buf_putc(out, '\'');
    for (size_t i = 0; i < len && i < CONST_CHARS; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '\'' || ch == '\\')
            dp_buf_printf(out, "\\%c", ch);
        else if (ch == '\n')
            dp_buf_puts(out, "\\n");
        else if (ch < 0x20 || ch == 0x7f || (is_bytes && ch >= 0x80))
            dp_buf_printf(out, "\\x%02x", ch);
        else
            dp_buf_putc(out, (char)ch);
    }
    dp_buf_puts(out, len > CONST_CHARS ? "...'" : "'");
}

static void put_const(dp_buf *out, const dp_const *c, int depth) {
    if (c == NULL) {
        dp_buf_puts(out, "<null>");
        return;
    }
    switch (c->kind) {
    case DP_CONST_NONE: dp_buf_puts(out, "None"); return;
    case DP_CONST_TRUE: dp_buf_puts(out, "True"); return;
    case DP_CONST_FALSE: dp_buf_puts(out, "False"); return;
    case DP_CONST_ELLIPSIS: dp_buf_puts(out, "Ellipsis"); return;
    case DP_CONST_INT: dp_buf_putn(out, c->text ? c->text : "?", c->text ? c->len : 1); return;
    case DP_CONST_FLOAT: dp_buf_printf(out, "%.17g", c->f); return;
    case DP_CONST_COMPLEX: dp_buf_printf(out, "(%.17g%+.17gj)", c->f, c->im); return;
    case DP_CONST_STR: put_quoted(out, c->text ? c->text : "", c->text ? c->len : 0, 0); return;
    case DP_CONST_BYTES: put_quoted(out, c->text ? c->text : "", c->text ? c->len : 0, 1); return;
    case DP_CONST_CODE:
        dp_buf_printf(out, "<code %s>", c->code && c->code->name ? c->code->name : "?");
        return;
    case DP_CONST_OTHER: case DP_CONST_OBJECT: dp_buf_printf(out, "<%s>", c->text ? c->text : "object"); return;
    case DP_CONST_TUPLE:
    case DP_CONST_FROZENSET:
        break;
    }
    int tuple = c->kind == DP_CONST_TUPLE;
    dp_buf_puts(out, tuple ? "(" : "frozenset({");
    if (depth >= CONST_DEPTH && c->n > 0)
        dp_buf_puts(out, "...");
    for (size_t i = 0; depth < CONST_DEPTH && i < c->n; i++) {
        if (i > 0)
            dp_buf_puts(out, ", ");
        if (i == CONST_ITEMS) {
            dp_buf_puts(out, "...");
            break;
        }
        put_const(out, c->items[i], depth + 1);
    }
    dp_buf_puts(out, tuple ? (c->n == 1 ? ",)" : ")") : "})");
}

/* ---- operands ---- */

static const char *const BINOPS[DP_BIN_COUNT] = {"+", "&", "//", "<<", "@", "*", "%", "|", "**", ">>", "-", "/", "^"};
static const char *const UNOPS[] = {"+", "-", "not", "~"};
static const char *const CMPOPS[] = {"<", "<=", "==", "!=", ">", ">="};

static void put_operands(dp_buf *out, const dp_instr *in) {
    switch (in->op) {
    case IR_BINARY_OP:
        if (in->arg >= 0 && in->arg < DP_BIN_COUNT)
            dp_buf_printf(out, " %s%s", BINOPS[in->arg], in->arg2 ? "=" : "");
        return;
    case IR_UNARY:
        if (in->arg >= 0 && in->arg <= DP_UN_INVERT)
            dp_buf_printf(out, " %s", UNOPS[in->arg]);
        return;
    case IR_COMPARE:
        if (in->arg >= 0 && in->arg <= DP_CMP_GE)
            dp_buf_printf(out, " %s", CMPOPS[in->arg]);
        return;
    case IR_IS:
        dp_buf_puts(out, in->arg ? " is not" : " is");
        return;
    case IR_CONTAINS:
        dp_buf_puts(out, in->arg ? " not in" : " in");
        return;
    case IR_BUILD_UNPACK:
        dp_buf_printf(out, " %d %c", in->arg, (char)in->arg2);
        return;
    case IR_CALL:
        dp_buf_printf(out, " %d", in->arg);
        if (in->arg2 & DP_CALL_PAIR)
            dp_buf_puts(out, " pair");
        if (in->cst) {
            dp_buf_puts(out, " kw=");
            put_const(out, in->cst, 0);
        }
        return;
    case IR_CALL_EX:
        dp_buf_printf(out, " %d%s", in->arg, (in->arg2 & DP_CALL_PAIR) ? " pair" : "");
        return;
    case IR_LOAD_CONST:
        dp_buf_putc(out, ' ');
        put_const(out, in->cst, 0);
        return;
    default:
        break;
    }
    if (in->name) {
        dp_buf_printf(out, " %s", in->name);
        if (in->op == IR_LOAD_SUPER_ATTR && in->arg)
            dp_buf_printf(out, " %d", in->arg);
        return;
    }
    if (in->arg || in->arg2)
        dp_buf_printf(out, " %d", in->arg);
    if (in->arg2)
        dp_buf_printf(out, " %d", in->arg2);
}

/* One line per instruction:
 *   index offset line ['*' = line start] ['>>' = jump target] OP operands [-> target]
 * then one line per exception-table entry. */
void dp_ir_dump(const dp_irfunc *f, dp_buf *out) {
    for (int32_t i = 0; i < f->n; i++) {
        const dp_instr *in = &f->ins[i];
        char line[16] = "-";
        if (in->line >= 0)
            snprintf(line, sizeof line, "%d", (int)in->line);
        dp_buf_printf(out, "%4d %5d %5s%c %2s %s", (int)i, (int)in->offset, line,
                      (in->flags & DP_INSTR_LINE_START) ? '*' : ' ',
                      (in->flags & DP_INSTR_JUMP_TARGET) ? ">>" : "", dp_irop_name(in->op));
        put_operands(out, in);
        if (in->target >= 0)
            dp_buf_printf(out, " -> %d", (int)in->target);
        dp_buf_putc(out, '\n');
    }
    for (int32_t k = 0; k < f->nexc; k++) {
        const dp_exc_entry *e = &f->exc[k];
        dp_buf_printf(out, "exc %d..%d -> %d depth %d%s\n", (int)e->start, (int)e->end, (int)e->target,
                      (int)e->depth, e->lasti ? " lasti" : "");
    }
}
