/* A text listing of a lifted function, for debugging and tests.  Constants get a short rendering of their own (this file must not
 * depend on the source printer). */
#include <stdio.h>

#include "ir.h"

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

/* ` ; in>out` of irop.c's table, then ` | in>out` for the jump where that
 * differs; ` ; ?` where no effect is fixed. */
static void put_effect(dp_buf *out, const dp_instr *in, const dp_layout *lay) {
    dp_effect fall, jump;
    if (dp_ir_effect(in, lay, 0, &fall) < 0) {
        dp_buf_puts(out, " ; ?");
        return;
    }
    dp_buf_printf(out, " ; %d>%d", (int)fall.in, (int)fall.out);
    if (dp_ir_effect(in, lay, 1, &jump) == 0 && (jump.in != fall.in || jump.out != fall.out))
        dp_buf_printf(out, " | %d>%d", (int)jump.in, (int)jump.out);
}

void dp_ir_dump(const dp_irfunc *f, dp_buf *out) { dp_ir_dump_ex(f, 0, out); }

/* One line per instruction:
 *   index offset line ['*' = line start] ['>>' = jump target] OP operands [-> target] [effect]
 * then one line per exception-table entry. */
void dp_ir_dump_ex(const dp_irfunc *f, int effects, dp_buf *out) {
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
        if (effects)
            put_effect(out, in, &f->lay);
        dp_buf_putc(out, '\n');
    }
    for (int32_t k = 0; k < f->nexc; k++) {
        const dp_exc_entry *e = &f->exc[k];
        dp_buf_printf(out, "exc %d..%d -> %d depth %d%s\n", (int)e->start, (int)e->end, (int)e->target,
                      (int)e->depth, e->lasti ? " lasti" : "");
    }
}
