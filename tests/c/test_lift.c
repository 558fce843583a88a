/* dp_lift: hand-assembled bytecode per version (each case a translation rule
 * of ir.h), real code objects compiled by CPython 3.8-3.12 (embedded below,
 * printed once by a script from `co_code`, the line and exception tables),
 * every .pyc vector of tests/c/pyc_vectors.inc, damaged input, every opcode
 * of every table, and random programs (which must fail cleanly or lift to
 * well-formed IR). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "depyf.h"
#include "ir.h"
#include "opcodes.h"
#include "testlib.h"

/* ------------------------------------------------------------ assembler */

typedef struct asm_ins {
    uint16_t op; /* dp_opname */
    uint32_t arg;
} asm_ins;

static uint8_t opcode_byte(int minor, uint16_t op) {
    const dp_optable *t = dp_optable_for(minor);
    for (int b = 0; b < 256; b++)
        if (t->op[b] == op)
            return (uint8_t)b;
    fprintf(stderr, "%s does not exist in 3.%d\n", dp_opname_str[op], minor);
    return 0;
}

static const char *NAMES[] = {"g", "attr", "ValueError"};
static const char *VARNAMES[] = {"a", "b", "c"};
static const char *CELLVARS[] = {"c", "cell"};
static const char *FREEVARS[] = {"free"};

/* A code object around hand-written instructions: EXTENDED_ARG prefixes and
 * zeroed inline caches are added as the version needs.  Constants:
 * 0 None, 1 the int 7, 2 the tuple ('k',), 3 the str 'q'. */
static dp_code *assemble(dp_arena *a, int minor, const asm_ins *ins, size_t n) {
    const dp_optable *t = dp_optable_for(minor);
    uint8_t *code = dp_alloc(a, n * 16 + 2);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = opcode_byte(minor, ins[i].op);
        for (int shift = 24; shift > 0; shift -= 8)
            if (ins[i].arg >> shift) {
                code[len++] = opcode_byte(minor, DPO_EXTENDED_ARG);
                code[len++] = (uint8_t)(ins[i].arg >> shift);
            }
        code[len++] = b;
        code[len++] = (uint8_t)ins[i].arg;
        for (int c = 0; c < t->caches[b]; c++, len += 2)
            code[len] = code[len + 1] = 0;
    }
    dp_code *co = dp_code_new(a);
    co->py_minor = minor;
    co->code = code;
    co->codelen = len;
    co->stacksize = 10;
    co->firstlineno = 1;
    co->names = (dp_strs){NAMES, 3};
    co->varnames = (dp_strs){VARNAMES, 3};
    co->cellvars = (dp_strs){CELLVARS, 2};
    co->freevars = (dp_strs){FREEVARS, 1};
    dp_const **consts = dp_alloc_array(a, 4, sizeof *consts);
    consts[0] = dp_const_new(a, DP_CONST_NONE);
    consts[1] = dp_const_new(a, DP_CONST_INT);
    consts[1]->text = "7";
    consts[1]->len = 1;
    consts[3] = dp_const_new(a, DP_CONST_STR);
    consts[3]->text = "q";
    consts[3]->len = 1;
    consts[2] = dp_const_new(a, DP_CONST_TUPLE);
    consts[2]->items = dp_alloc_array(a, 1, sizeof(dp_const *));
    consts[2]->items[0] = dp_const_new(a, DP_CONST_STR);
    consts[2]->items[0]->text = "k";
    consts[2]->items[0]->len = 1;
    consts[2]->n = 1;
    co->consts = consts;
    co->nconsts = 4;
    co->qualname = co->name = "f";
    return co;
}

/* Space-separated op names of the IR, for compact expectations. */
static const char *ops_of(const dp_irfunc *f) {
    static char text[4096];
    size_t len = 0;
    text[0] = '\0';
    for (int32_t i = 0; i < f->n && len + 40 < sizeof text; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", i ? " " : "", dp_irop_name(f->ins[i].op));
    return text;
}

typedef struct lifted {
    dp_arena a;
    dp_irfunc f;
    dp_error err;
    int rc;
} lifted;

#define LIFT(L, minor, ...)                                                              \
    do {                                                                                 \
        static const asm_ins prog_[] = {__VA_ARGS__};                                    \
        dp_arena_init(&(L).a);                                                           \
        dp_error_init(&(L).err);                                                         \
        dp_code *co_ = assemble(&(L).a, (minor), prog_, sizeof prog_ / sizeof *prog_);   \
        (L).rc = dp_lift(&(L).a, co_, &(L).f, &(L).err);                                 \
    } while (0)

#define I(op, arg) {DPO_##op, arg}

/* ------------------------------------------------------ translation rules */

static void test_extended_arg_is_folded_into_the_argument(void) {
    lifted L;
    LIFT(L, 11, I(NOP, 0), I(BUILD_TUPLE, 0x10203), I(RETURN_VALUE, 0));
    CHECK(L.rc == 0);
    CHECK_STR(ops_of(&L.f), "NOP BUILD_TUPLE RETURN_VALUE");
    CHECK(L.f.ins[1].arg == 0x10203);
    CHECK(L.f.ins[1].offset == 2); /* where its first EXTENDED_ARG starts */
    CHECK(L.f.ins[2].offset == 8);
    dp_arena_free(&L.a);
}

static void test_jump_units_per_version(void) {
    lifted L;
    /* 3.8: absolute byte offset 6; 3.10: instruction 3 (= byte 6) */
    LIFT(L, 8, I(LOAD_FAST, 0), I(POP_JUMP_IF_FALSE, 6), I(NOP, 0), I(LOAD_CONST, 0), I(RETURN_VALUE, 0));
    CHECK(L.rc == 0 && L.f.ins[1].op == IR_POP_JUMP_IF_FALSE && L.f.ins[1].target == 3);
    CHECK(L.f.ins[3].flags & DP_INSTR_JUMP_TARGET);
    CHECK(!(L.f.ins[2].flags & DP_INSTR_JUMP_TARGET));
    dp_arena_free(&L.a);
    LIFT(L, 10, I(LOAD_FAST, 0), I(POP_JUMP_IF_FALSE, 3), I(NOP, 0), I(LOAD_CONST, 0), I(RETURN_VALUE, 0));
    CHECK(L.rc == 0 && L.f.ins[1].target == 3);
    dp_arena_free(&L.a);
    /* 3.9 relative, in bytes from the next instruction */
    LIFT(L, 9, I(JUMP_FORWARD, 2), I(NOP, 0), I(LOAD_CONST, 0), I(RETURN_VALUE, 0));
    CHECK(L.rc == 0 && L.f.ins[0].op == IR_JUMP && L.f.ins[0].target == 2);
    dp_arena_free(&L.a);
}

static void test_backward_jumps_count_from_after_the_caches(void) {
    lifted L;
    /* 3.11: LOAD_GLOBAL has 5 caches; POP_JUMP_BACKWARD_IF_TRUE arg counts back from its end */
    LIFT(L, 11, I(NOP, 0), I(LOAD_GLOBAL, 0), I(POP_JUMP_BACKWARD_IF_TRUE, 8), I(LOAD_CONST, 0),
         I(RETURN_VALUE, 0));
    CHECK(L.rc == 0);
    CHECK_STR(ops_of(&L.f), "NOP LOAD_GLOBAL POP_JUMP_IF_TRUE LOAD_CONST RETURN_VALUE");
    CHECK(L.f.ins[2].target == 0);
    dp_arena_free(&L.a);
    /* 3.13: JUMP_BACKWARD itself has a cache */
    LIFT(L, 13, I(NOP, 0), I(JUMP_BACKWARD, 3));
    CHECK(L.rc == 0 && L.f.ins[1].op == IR_JUMP && L.f.ins[1].target == 0);
    dp_arena_free(&L.a);
}

static void test_cache_entries_are_skipped(void) {
    lifted L;
    LIFT(L, 12, I(LOAD_FAST, 0), I(LOAD_ATTR, 2), I(BINARY_OP, 0), I(RETURN_VALUE, 0));
    CHECK(L.rc == 0);
    CHECK_STR(ops_of(&L.f), "LOAD_FAST LOAD_ATTR BINARY_OP RETURN_VALUE");
    CHECK(L.f.ins[2].offset == 2 + 2 + 2 * 9); /* LOAD_ATTR has 9 caches in 3.12 */
    dp_arena_free(&L.a);
}

static void test_load_global_null_order(void) {
    lifted L;
    LIFT(L, 11, I(LOAD_GLOBAL, 1), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "PUSH_NULL LOAD_GLOBAL RETURN_VALUE");
    CHECK_STR(L.f.ins[1].name, "g");
    dp_arena_free(&L.a);
    LIFT(L, 12, I(LOAD_GLOBAL, 3), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "PUSH_NULL LOAD_GLOBAL RETURN_VALUE");
    CHECK_STR(L.f.ins[1].name, "attr");
    dp_arena_free(&L.a);
    LIFT(L, 13, I(LOAD_GLOBAL, 5), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_GLOBAL PUSH_NULL RETURN_VALUE");
    CHECK_STR(L.f.ins[0].name, "ValueError");
    dp_arena_free(&L.a);
    LIFT(L, 10, I(LOAD_GLOBAL, 1), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_GLOBAL RETURN_VALUE");
    CHECK_STR(L.f.ins[0].name, "attr");
    dp_arena_free(&L.a);
}

static void test_method_loads(void) {
    lifted L;
    LIFT(L, 12, I(LOAD_FAST, 0), I(LOAD_ATTR, 3), I(CALL, 0), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_FAST LOAD_METHOD CALL RETURN_VALUE");
    CHECK_STR(L.f.ins[1].name, "attr");
    CHECK(L.f.ins[2].arg == 0 && L.f.ins[2].arg2 == DP_CALL_PAIR && L.f.ins[2].cst == NULL);
    dp_arena_free(&L.a);
    LIFT(L, 9, I(LOAD_FAST, 0), I(LOAD_METHOD, 1), I(LOAD_FAST, 1), I(CALL_METHOD, 1), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_FAST LOAD_METHOD LOAD_FAST CALL RETURN_VALUE");
    CHECK(L.f.ins[3].arg == 1 && L.f.ins[3].arg2 == DP_CALL_PAIR);
    dp_arena_free(&L.a);
    /* 3.12 super().attr / super().method(): name index >> 2, low bits kept */
    LIFT(L, 12, I(LOAD_GLOBAL, 0), I(LOAD_DEREF, 1), I(LOAD_FAST, 0), I(LOAD_SUPER_ATTR, 4 | 1),
         I(RETURN_VALUE, 0));
    CHECK(L.rc == 0 && L.f.ins[3].op == IR_LOAD_SUPER_ATTR && L.f.ins[3].arg == 1);
    CHECK_STR(L.f.ins[3].name, "attr");
    dp_arena_free(&L.a);
}

static void test_keyword_calls_fold_the_names_tuple(void) {
    lifted L;
    /* 3.11 KW_NAMES + PRECALL + CALL */
    LIFT(L, 11, I(PUSH_NULL, 0), I(LOAD_FAST, 0), I(LOAD_CONST, 1), I(KW_NAMES, 2), I(PRECALL, 1),
         I(CALL, 1), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "PUSH_NULL LOAD_FAST LOAD_CONST NOP NOP CALL RETURN_VALUE");
    CHECK(L.f.ins[5].arg == 1 && L.f.ins[5].arg2 == DP_CALL_PAIR);
    CHECK(L.f.ins[5].cst != NULL && L.f.ins[5].cst->kind == DP_CONST_TUPLE);
    dp_arena_free(&L.a);
    /* 3.12 KW_NAMES + CALL */
    LIFT(L, 12, I(PUSH_NULL, 0), I(LOAD_FAST, 0), I(LOAD_CONST, 1), I(KW_NAMES, 2), I(CALL, 1),
         I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "PUSH_NULL LOAD_FAST LOAD_CONST NOP CALL RETURN_VALUE");
    CHECK(L.f.ins[4].cst == L.f.code->consts[2]);
    dp_arena_free(&L.a);
    /* 3.13 CALL_KW takes the tuple from the LOAD_CONST before it */
    LIFT(L, 13, I(LOAD_FAST, 0), I(PUSH_NULL, 0), I(LOAD_CONST, 1), I(LOAD_CONST, 2), I(CALL_KW, 1),
         I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_FAST PUSH_NULL LOAD_CONST NOP CALL RETURN_VALUE");
    CHECK(L.f.ins[4].cst == L.f.code->consts[2] && L.f.ins[4].arg2 == DP_CALL_PAIR);
    dp_arena_free(&L.a);
    /* 3.8 CALL_FUNCTION_KW: a single callable */
    LIFT(L, 8, I(LOAD_FAST, 0), I(LOAD_CONST, 1), I(LOAD_CONST, 2), I(CALL_FUNCTION_KW, 1), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_FAST LOAD_CONST NOP CALL RETURN_VALUE");
    CHECK(L.f.ins[3].cst == L.f.code->consts[2] && L.f.ins[3].arg2 == 0);
    dp_arena_free(&L.a);
}

/* dp_irfunc.unused_true_before: the pool (None, 7, True, ('k',)) with the
 * program's reads. */
static int32_t unused_true_before(int minor, const asm_ins *prog, size_t n) {
    dp_arena a;
    dp_arena_init(&a);
    dp_error err;
    dp_error_init(&err);
    dp_code *co = assemble(&a, minor, prog, n);
    co->consts[3] = co->consts[2];
    co->consts[2] = dp_const_new(&a, DP_CONST_TRUE);
    dp_irfunc f;
    int32_t r = dp_lift(&a, co, &f, &err) == 0 ? f.unused_true_before : -2;
    dp_arena_free(&a);
    return r;
}

#define UNUSED_TRUE_BEFORE(minor, ...)                                                     \
    unused_true_before((minor), (const asm_ins[]){__VA_ARGS__},                            \
                       sizeof((const asm_ins[]){__VA_ARGS__}) / sizeof(asm_ins))

static void test_an_unread_true_is_placed_by_the_constant_after_it(void) {
    /* a = 7; b = ('k',); return None: True was compiled before ('k',) */
    CHECK(UNUSED_TRUE_BEFORE(10, I(LOAD_CONST, 1), I(STORE_FAST, 0), I(LOAD_CONST, 3), I(STORE_FAST, 1),
                             I(LOAD_CONST, 0), I(RETURN_VALUE, 0)) == 4);
    /* True read: nothing to place */
    CHECK(UNUSED_TRUE_BEFORE(10, I(LOAD_CONST, 1), I(STORE_FAST, 0), I(LOAD_CONST, 2), I(STORE_FAST, 1),
                             I(LOAD_CONST, 3), I(RETURN_VALUE, 0)) == -1);
    /* a pool not in first-use order (('k',) read before 7) */
    CHECK(UNUSED_TRUE_BEFORE(10, I(LOAD_CONST, 3), I(STORE_FAST, 0), I(LOAD_CONST, 1), I(STORE_FAST, 1),
                             I(LOAD_CONST, 0), I(RETURN_VALUE, 0)) == -1);
    /* another constant unread (7) */
    CHECK(UNUSED_TRUE_BEFORE(10, I(LOAD_CONST, 3), I(STORE_FAST, 0), I(LOAD_CONST, 0), I(RETURN_VALUE, 0)) == -1);
    /* 3.11: KW_NAMES reads ('k',) by index (the IR folds it into the call) */
    CHECK(UNUSED_TRUE_BEFORE(11, I(PUSH_NULL, 0), I(LOAD_FAST, 0), I(LOAD_CONST, 1), I(KW_NAMES, 3),
                             I(PRECALL, 1), I(CALL, 1), I(RETURN_VALUE, 0)) == 6);
}

static void test_keyword_names_must_be_where_expected(void) {
    lifted L;
    LIFT(L, 13, I(LOAD_FAST, 0), I(PUSH_NULL, 0), I(LOAD_FAST, 1), I(CALL_KW, 0), I(RETURN_VALUE, 0));
    CHECK(L.rc < 0 && L.err.offset == 6 && strstr(L.err.msg, "CALL_KW") != NULL);
    dp_arena_free(&L.a);
    LIFT(L, 8, I(LOAD_FAST, 0), I(LOAD_CONST, 1), I(CALL_FUNCTION_KW, 0), I(RETURN_VALUE, 0));
    CHECK(L.rc < 0 && strstr(L.err.msg, "not a tuple") != NULL);
    dp_arena_free(&L.a);
    LIFT(L, 12, I(KW_NAMES, 2), I(NOP, 0), I(CALL, 0), I(RETURN_VALUE, 0));
    CHECK(L.rc < 0 && L.err.offset == 0 && strstr(L.err.msg, "KW_NAMES") != NULL);
    dp_arena_free(&L.a);
}

static void test_call_ex_uses_a_pair_from_3_11(void) {
    lifted L;
    LIFT(L, 10, I(LOAD_FAST, 0), I(LOAD_FAST, 1), I(CALL_FUNCTION_EX, 0), I(RETURN_VALUE, 0));
    CHECK(L.f.ins[2].op == IR_CALL_EX && L.f.ins[2].arg == 0 && L.f.ins[2].arg2 == 0);
    dp_arena_free(&L.a);
    LIFT(L, 11, I(PUSH_NULL, 0), I(LOAD_FAST, 0), I(LOAD_FAST, 1), I(LOAD_FAST, 2), I(CALL_FUNCTION_EX, 1),
         I(RETURN_VALUE, 0));
    CHECK(L.f.ins[4].op == IR_CALL_EX && L.f.ins[4].arg == 1 && L.f.ins[4].arg2 == DP_CALL_PAIR);
    dp_arena_free(&L.a);
}

static void test_make_function_drops_the_qualname_before_3_11(void) {
    lifted L;
    LIFT(L, 9, I(LOAD_FAST, 0), I(LOAD_CONST, 1), I(LOAD_CONST, 3), I(MAKE_FUNCTION, 1), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_FAST LOAD_CONST NOP MAKE_FUNCTION RETURN_VALUE");
    CHECK(L.f.ins[3].arg == DP_FN_DEFAULTS);
    dp_arena_free(&L.a);
    LIFT(L, 13, I(LOAD_CONST, 1), I(MAKE_FUNCTION, 0), I(LOAD_FAST, 0), I(SWAP, 2),
         I(SET_FUNCTION_ATTRIBUTE, 8), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_CONST MAKE_FUNCTION LOAD_FAST SWAP SET_FUNCTION_ATTRIBUTE RETURN_VALUE");
    CHECK(L.f.ins[4].arg == DP_FN_CLOSURE);
    dp_arena_free(&L.a);
}

static void test_old_stack_shuffles_become_copy_and_swap(void) {
    lifted L;
    LIFT(L, 8, I(DUP_TOP, 0), I(DUP_TOP_TWO, 0), I(ROT_TWO, 0), I(ROT_THREE, 0), I(ROT_FOUR, 0),
         I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "COPY COPY COPY SWAP SWAP SWAP SWAP SWAP SWAP RETURN_VALUE");
    static const int32_t args[] = {1, 2, 2, 2, 3, 2, 4, 3, 2};
    for (int i = 0; i < 9; i++)
        CHECK(L.f.ins[i].arg == args[i]);
    dp_arena_free(&L.a);
    LIFT(L, 10, I(ROT_N, 5), I(ROT_N, 1), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "SWAP SWAP SWAP SWAP NOP RETURN_VALUE");
    CHECK(L.f.ins[0].arg == 5 && L.f.ins[3].arg == 2);
    dp_arena_free(&L.a);
    LIFT(L, 10, I(ROT_N, 0), I(RETURN_VALUE, 0));
    CHECK(L.rc < 0);
    dp_arena_free(&L.a);
}

static void test_binary_and_inplace_operators(void) {
    lifted L;
    LIFT(L, 8, I(BINARY_SUBTRACT, 0), I(INPLACE_POWER, 0), I(UNARY_INVERT, 0), I(RETURN_VALUE, 0));
    CHECK(L.f.ins[0].op == IR_BINARY_OP && L.f.ins[0].arg == DP_BIN_SUB && L.f.ins[0].arg2 == 0);
    CHECK(L.f.ins[1].op == IR_BINARY_OP && L.f.ins[1].arg == DP_BIN_POW && L.f.ins[1].arg2 == 1);
    CHECK(L.f.ins[2].op == IR_UNARY && L.f.ins[2].arg == DP_UN_INVERT);
    dp_arena_free(&L.a);
    LIFT(L, 11, I(BINARY_OP, 13 + DP_BIN_XOR), I(RETURN_VALUE, 0));
    CHECK(L.f.ins[0].arg == DP_BIN_XOR && L.f.ins[0].arg2 == 1);
    dp_arena_free(&L.a);
    LIFT(L, 11, I(BINARY_OP, 26), I(RETURN_VALUE, 0));
    CHECK(L.rc < 0 && strstr(L.err.msg, "operator") != NULL);
    dp_arena_free(&L.a);
}

static void test_comparisons_per_version(void) {
    lifted L;
    LIFT(L, 8, I(COMPARE_OP, 2), I(COMPARE_OP, 7), I(COMPARE_OP, 9), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "COMPARE CONTAINS IS RETURN_VALUE");
    CHECK(L.f.ins[0].arg == DP_CMP_EQ && L.f.ins[1].arg == 1 && L.f.ins[2].arg == 1);
    dp_arena_free(&L.a);
    LIFT(L, 12, I(COMPARE_OP, (DP_CMP_GT << 4) | 0xf), I(RETURN_VALUE, 0));
    CHECK(L.f.ins[0].op == IR_COMPARE && L.f.ins[0].arg == DP_CMP_GT);
    dp_arena_free(&L.a);
    LIFT(L, 13, I(COMPARE_OP, (DP_CMP_LE << 5) | 16), I(RETURN_VALUE, 0));
    CHECK(L.f.ins[0].op == IR_COMPARE && L.f.ins[0].arg == DP_CMP_LE);
    dp_arena_free(&L.a);
    LIFT(L, 11, I(COMPARE_OP, 6), I(RETURN_VALUE, 0));
    CHECK(L.rc < 0 && strstr(L.err.msg, "comparison") != NULL);
    dp_arena_free(&L.a);
}

static void test_exception_match_drops_the_dup_top(void) {
    lifted L;
    /* 3.8: DUP_TOP; LOAD_GLOBAL mod; LOAD_ATTR E; COMPARE_OP exception-match; POP_JUMP_IF_FALSE */
    LIFT(L, 8, I(DUP_TOP, 0), I(LOAD_GLOBAL, 0), I(LOAD_ATTR, 1), I(COMPARE_OP, 10), I(POP_JUMP_IF_FALSE, 12),
         I(POP_TOP, 0), I(END_FINALLY, 0));
    CHECK_STR(ops_of(&L.f), "NOP LOAD_GLOBAL LOAD_ATTR CHECK_EXC_MATCH POP_JUMP_IF_FALSE POP_TOP END_FINALLY");
    CHECK(L.f.ins[4].target == 6);
    dp_arena_free(&L.a);
    /* 3.9: JUMP_IF_NOT_EXC_MATCH is split in two; the jump keeps its target */
    LIFT(L, 9, I(DUP_TOP, 0), I(LOAD_GLOBAL, 0), I(LOAD_GLOBAL, 2), I(BUILD_TUPLE, 2),
         I(JUMP_IF_NOT_EXC_MATCH, 12), I(POP_TOP, 0), I(RERAISE, 0));
    CHECK_STR(ops_of(&L.f), "NOP LOAD_GLOBAL LOAD_GLOBAL BUILD_TUPLE CHECK_EXC_MATCH POP_JUMP_IF_FALSE POP_TOP RERAISE");
    CHECK(L.f.ins[5].target == 7 && L.f.ins[4].offset == 8 && L.f.ins[5].offset == 8);
    dp_arena_free(&L.a);
    /* no DUP_TOP where the match expects it */
    LIFT(L, 10, I(LOAD_FAST, 0), I(LOAD_GLOBAL, 0), I(JUMP_IF_NOT_EXC_MATCH, 4), I(NOP, 0), I(RERAISE, 0));
    CHECK(L.rc < 0 && L.err.offset == 4 && strstr(L.err.msg, "DUP_TOP") != NULL);
    dp_arena_free(&L.a);
}

static void test_old_yield_from_folds_the_none(void) {
    lifted L;
    LIFT(L, 8, I(LOAD_FAST, 0), I(GET_AWAITABLE, 0), I(LOAD_CONST, 0), I(YIELD_FROM, 0), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_FAST GET_AWAITABLE NOP YIELD_FROM RETURN_VALUE");
    dp_arena_free(&L.a);
    LIFT(L, 8, I(LOAD_FAST, 0), I(GET_YIELD_FROM_ITER, 0), I(LOAD_CONST, 1), I(YIELD_FROM, 0), I(RETURN_VALUE, 0));
    CHECK(L.rc < 0 && strstr(L.err.msg, "None") != NULL);
    dp_arena_free(&L.a);
}

static void test_send_loop_becomes_one_yield_from(void) {
    lifted L;
    /* 3.11 */
    LIFT(L, 11, I(RETURN_GENERATOR, 0), I(POP_TOP, 0), I(RESUME, 0), I(LOAD_FAST, 0), I(GET_AWAITABLE, 0),
         I(LOAD_CONST, 0), I(SEND, 3), I(YIELD_VALUE, 0), I(RESUME, 3), I(JUMP_BACKWARD_NO_INTERRUPT, 4),
         I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "RETURN_GENERATOR NOP NOP LOAD_FAST GET_AWAITABLE NOP YIELD_FROM NOP NOP NOP RETURN_VALUE");
    for (int32_t i = 0; i < L.f.n; i++)
        CHECK(!(L.f.ins[i].flags & DP_INSTR_JUMP_TARGET) && L.f.ins[i].target == -1);
    dp_arena_free(&L.a);
    /* 3.12: SEND targets END_SEND; the CLEANUP_THROW handler's entry is dropped */
    LIFT(L, 12, I(LOAD_FAST, 0), I(GET_AWAITABLE, 0), I(LOAD_CONST, 0), I(SEND, 3), I(YIELD_VALUE, 2),
         I(RESUME, 3), I(JUMP_BACKWARD_NO_INTERRUPT, 5), I(END_SEND, 0), I(RETURN_VALUE, 0),
         I(CLEANUP_THROW, 0), I(JUMP_BACKWARD, 4));
    CHECK_STR(ops_of(&L.f), "LOAD_FAST GET_AWAITABLE NOP YIELD_FROM NOP NOP NOP NOP RETURN_VALUE NOP NOP");
    dp_arena_free(&L.a);
    /* a SEND outside the loop shape */
    LIFT(L, 11, I(LOAD_FAST, 0), I(LOAD_CONST, 0), I(SEND, 0), I(RETURN_VALUE, 0));
    CHECK(L.rc < 0 && L.err.offset == 4);
    dp_arena_free(&L.a);
}

static void test_for_iter_target_skips_end_for(void) {
    lifted L;
    /* 3.12: exhausted FOR_ITER skips END_FOR (1 cache after FOR_ITER) */
    LIFT(L, 12, I(LOAD_FAST, 0), I(GET_ITER, 0), I(FOR_ITER, 2), I(STORE_FAST, 1), I(JUMP_BACKWARD, 4),
         I(END_FOR, 0), I(RETURN_CONST, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_FAST GET_ITER FOR_ITER STORE_FAST JUMP POP_TOP POP_TOP LOAD_CONST RETURN_VALUE");
    CHECK(L.f.ins[2].target == 7 && L.f.ins[4].target == 2);
    CHECK(L.f.ins[7].flags & DP_INSTR_JUMP_TARGET);
    dp_arena_free(&L.a);
    /* 3.13: END_FOR then POP_TOP, both skipped */
    LIFT(L, 13, I(LOAD_FAST, 0), I(GET_ITER, 0), I(FOR_ITER, 3), I(STORE_FAST, 1), I(JUMP_BACKWARD, 5),
         I(END_FOR, 0), I(POP_TOP, 0), I(RETURN_CONST, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_FAST GET_ITER FOR_ITER STORE_FAST JUMP POP_TOP POP_TOP LOAD_CONST RETURN_VALUE");
    CHECK(L.f.ins[2].target == 7 && L.f.ins[4].target == 2);
    dp_arena_free(&L.a);
}

static void test_3_12_intrinsics(void) {
    lifted L;
    LIFT(L, 12, I(LOAD_NAME, 0), I(CALL_INTRINSIC_1, 1), I(POP_TOP, 0), I(LOAD_FAST, 0),
         I(CALL_INTRINSIC_1, 5), I(CALL_INTRINSIC_1, 6), I(CALL_INTRINSIC_1, 7), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_NAME PRINT_EXPR NOP LOAD_FAST UNARY LIST_TO_TUPLE CALL_INTRINSIC_1 RETURN_VALUE");
    CHECK(L.f.ins[4].arg == DP_UN_POS && L.f.ins[6].arg == 7);
    dp_arena_free(&L.a);
    LIFT(L, 12, I(LOAD_CONST, 1), I(LOAD_CONST, 2), I(IMPORT_NAME, 0), I(CALL_INTRINSIC_1, 2),
         I(RETURN_CONST, 0));
    CHECK(L.rc < 0 && strstr(L.err.msg, "POP_TOP") != NULL); /* the None result must be popped */
    dp_arena_free(&L.a);
    LIFT(L, 12, I(LOAD_FAST, 0), I(LOAD_FAST, 1), I(CALL_INTRINSIC_2, 1), I(RETURN_VALUE, 0));
    CHECK(L.f.ins[2].op == IR_PREP_RERAISE_STAR);
    dp_arena_free(&L.a);
}

static void test_3_13_superinstructions(void) {
    lifted L;
    LIFT(L, 13, I(LOAD_FAST_LOAD_FAST, 0x12), I(STORE_FAST_LOAD_FAST, 0x20), I(STORE_FAST_STORE_FAST, 0x01),
         I(LOAD_FAST, 0), I(TO_BOOL, 0), I(FORMAT_SIMPLE, 0), I(LOAD_CONST, 3), I(FORMAT_WITH_SPEC, 0),
         I(CONVERT_VALUE, 2), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_FAST LOAD_FAST STORE_FAST LOAD_FAST STORE_FAST STORE_FAST LOAD_FAST NOP "
                            "FORMAT_VALUE LOAD_CONST FORMAT_VALUE CONVERT_VALUE RETURN_VALUE");
    static const char *names[] = {"b", "c", "c", "a", "a", "b"};
    for (int i = 0; i < 6; i++)
        CHECK_STR(L.f.ins[i].name, names[i]);
    CHECK(L.f.ins[8].arg == 0 && L.f.ins[10].arg == DP_FMT_HAS_SPEC && L.f.ins[11].arg == 2);
    dp_arena_free(&L.a);
}

static void test_locals_and_cells_per_version(void) {
    lifted L;
    /* <= 3.10: DEREF indexes cellvars then freevars */
    LIFT(L, 10, I(LOAD_DEREF, 2), I(LOAD_CLOSURE, 0), I(LOAD_CLASSDEREF, 1), I(RETURN_VALUE, 0));
    CHECK_STR(L.f.ins[0].name, "free");
    CHECK_STR(L.f.ins[1].name, "c");
    CHECK_STR(L.f.ins[2].name, "cell");
    dp_arena_free(&L.a);
    /* 3.11+: one space: a b c (c is also a cell), cell, free */
    LIFT(L, 11, I(LOAD_DEREF, 2), I(LOAD_DEREF, 3), I(LOAD_DEREF, 4), I(LOAD_FAST, 1), I(RETURN_VALUE, 0));
    CHECK_STR(L.f.ins[0].name, "c");
    CHECK_STR(L.f.ins[1].name, "cell");
    CHECK_STR(L.f.ins[2].name, "free");
    CHECK_STR(L.f.ins[3].name, "b");
    dp_arena_free(&L.a);
    LIFT(L, 11, I(LOAD_DEREF, 5), I(RETURN_VALUE, 0));
    CHECK(L.rc < 0 && strstr(L.err.msg, "out of range") != NULL);
    dp_arena_free(&L.a);
    /* 3.12 class body: LOAD_LOCALS + LOAD_FROM_DICT_OR_DEREF */
    LIFT(L, 12, I(LOAD_LOCALS, 0), I(LOAD_FROM_DICT_OR_DEREF, 4), I(LOAD_LOCALS, 0), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "NOP LOAD_CLASSDEREF LOAD_LOCALS RETURN_VALUE");
    CHECK_STR(L.f.ins[1].name, "free");
    dp_arena_free(&L.a);
}

static void test_3_10_pattern_matching_pushes_a_bool(void) {
    lifted L;
    LIFT(L, 10, I(LOAD_FAST, 0), I(LOAD_CONST, 2), I(MATCH_KEYS, 0), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_FAST LOAD_CONST MATCH_KEYS COPY LOAD_CONST IS RETURN_VALUE");
    CHECK(L.f.ins[4].cst->kind == DP_CONST_NONE && L.f.ins[5].arg == 1);
    dp_arena_free(&L.a);
    LIFT(L, 11, I(LOAD_FAST, 0), I(LOAD_CONST, 2), I(MATCH_KEYS, 0), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "LOAD_FAST LOAD_CONST MATCH_KEYS RETURN_VALUE");
    dp_arena_free(&L.a);
}

static void test_generator_prologue_is_stack_neutral(void) {
    lifted L;
    LIFT(L, 11, I(RETURN_GENERATOR, 0), I(POP_TOP, 0), I(RESUME, 0), I(LOAD_CONST, 0), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "RETURN_GENERATOR NOP NOP LOAD_CONST RETURN_VALUE");
    dp_arena_free(&L.a);
    LIFT(L, 10, I(GEN_START, 0), I(LOAD_CONST, 0), I(RETURN_VALUE, 0));
    CHECK_STR(ops_of(&L.f), "RETURN_GENERATOR LOAD_CONST RETURN_VALUE");
    dp_arena_free(&L.a);
    LIFT(L, 12, I(RETURN_GENERATOR, 0), I(RESUME, 0), I(RETURN_CONST, 0));
    CHECK(L.rc < 0 && strstr(L.err.msg, "POP_TOP") != NULL);
    dp_arena_free(&L.a);
}

static void test_dump_format(void) {
    lifted L;
    LIFT(L, 11, I(PUSH_NULL, 0), I(LOAD_FAST, 0), I(LOAD_CONST, 3), I(KW_NAMES, 2), I(PRECALL, 1), I(CALL, 1),
         I(POP_JUMP_FORWARD_IF_TRUE, 0), I(LOAD_CONST, 1), I(RETURN_VALUE, 0));
    dp_buf b;
    dp_buf_init(&b);
    dp_ir_dump(&L.f, &b);
    CHECK_STR(b.data, "   0     0     -     PUSH_NULL\n"
                      "   1     2     -     LOAD_FAST a\n"
                      "   2     4     -     LOAD_CONST 'q'\n"
                      "   3     6     -     NOP\n"
                      "   4     8     -     NOP\n"
                      "   5    12     -     CALL 1 pair kw=('k',)\n"
                      "   6    22     -     POP_JUMP_IF_TRUE -> 7\n"
                      "   7    24     -  >> LOAD_CONST 7\n"
                      "   8    26     -     RETURN_VALUE\n");
    dp_buf_free(&b);
    dp_arena_free(&L.a);
}

static void test_every_ir_op_has_a_name(void) {
    for (int op = 0; op < IR_OP_COUNT; op++)
        CHECK(strcmp(dp_irop_name(op), "?") != 0);
    CHECK_STR(dp_irop_name(IR_OP_COUNT), "?");
    CHECK_STR(dp_irop_name(-1), "?");
}

/* ------------------------------------------------------ damaged bytecode */

static int lift_bytes(int minor, const uint8_t *code, size_t len, dp_error *err) {
    dp_arena a;
    dp_arena_init(&a);
    static const asm_ins nothing[] = {{DPO_NOP, 0}};
    dp_code *co = assemble(&a, minor, nothing, 1);
    uint8_t *copy = malloc(len ? len : 1); /* exact size: the sanitizer sees overreads */
    memcpy(copy, code, len);
    co->code = copy;
    co->codelen = len;
    dp_irfunc f;
    dp_error_init(err);
    int rc = dp_lift(&a, co, &f, err);
    free(copy);
    dp_arena_free(&a);
    return rc;
}

static void test_damaged_code_is_reported_with_its_offset(void) {
    dp_error err;
    const uint8_t odd[] = {9, 0, 83};
    CHECK(lift_bytes(8, odd, 3, &err) < 0 && strstr(err.msg, "length") != NULL);
    CHECK(lift_bytes(8, odd, 0, &err) < 0);
    const uint8_t unknown[] = {9, 0, 0, 0};
    CHECK(lift_bytes(8, unknown, 4, &err) < 0 && err.offset == 2 && strstr(err.msg, "unknown opcode 0") != NULL);
    const uint8_t ext_at_end[] = {9, 0, 144, 1};
    CHECK(lift_bytes(9, ext_at_end, 4, &err) < 0 && err.offset == 2 && strstr(err.msg, "EXTENDED_ARG") != NULL);
    const uint8_t jump_out[] = {110, 8, 9, 0}; /* 3.8 JUMP_FORWARD past the end */
    CHECK(lift_bytes(8, jump_out, 4, &err) < 0 && err.offset == 0 && strstr(err.msg, "out of range") != NULL);
    const uint8_t jump_back_out[] = {9, 0, 140, 5}; /* 3.11 JUMP_BACKWARD before the start */
    CHECK(lift_bytes(11, jump_back_out, 4, &err) < 0 && err.offset == 2);
    /* 3.11 jump into the caches of LOAD_GLOBAL (at 4) */
    const uint8_t into_cache[] = {110, 2, 9, 0, 116, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 83, 0};
    CHECK(lift_bytes(11, into_cache, sizeof into_cache, &err) < 0 && strstr(err.msg, "middle") != NULL);
    const uint8_t caches_cut[] = {9, 0, 116, 0, 0, 0};
    CHECK(lift_bytes(11, caches_cut, sizeof caches_cut, &err) < 0 && strstr(err.msg, "caches") != NULL);
    const uint8_t bad_const[] = {100, 9, 83, 0};
    CHECK(lift_bytes(8, bad_const, 4, &err) < 0 && strstr(err.msg, "constant index 9") != NULL);
    const uint8_t bad_name[] = {101, 3, 83, 0};
    CHECK(lift_bytes(8, bad_name, 4, &err) < 0 && strstr(err.msg, "co_names") != NULL);
    const uint8_t instrumented[] = {240, 0, 83, 0}; /* 3.12 INSTRUMENTED_RESUME */
    CHECK(lift_bytes(12, instrumented, 4, &err) < 0 && strstr(err.msg, "unsupported opcode INSTRUMENTED_RESUME") != NULL);
    CHECK_STR(err.where, "f");
}

static void test_damaged_exception_table(void) {
    dp_arena a;
    dp_arena_init(&a);
    static const asm_ins prog[] = {{DPO_NOP, 0}, {DPO_RETURN_VALUE, 0}};
    dp_code *co = assemble(&a, 11, prog, 2);
    dp_irfunc f;
    dp_error err;
    static const uint8_t cut[] = {0x80, 0x01};                 /* stops inside an entry */
    static const uint8_t beyond[] = {0x80, 0x05, 0x00, 0x00};  /* covers past the end */
    static const uint8_t handler[] = {0x80, 0x01, 0x09, 0x00}; /* handler past the end */
    static const uint8_t endless[] = {0x80, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41};
    static const uint8_t good[] = {0x80, 0x01, 0x01, 0x03};
    const uint8_t *tables[] = {cut, beyond, handler, endless};
    size_t lens[] = {sizeof cut, sizeof beyond, sizeof handler, sizeof endless};
    for (int k = 0; k < 4; k++) {
        co->exctable = tables[k];
        co->exctablelen = lens[k];
        dp_error_init(&err);
        CHECK(dp_lift(&a, co, &f, &err) < 0 && strstr(err.msg, "exception table") != NULL);
    }
    co->exctable = good;
    co->exctablelen = sizeof good;
    dp_error_init(&err);
    CHECK(dp_lift(&a, co, &f, &err) == 0 && f.nexc == 1);
    CHECK(f.exc[0].start == 0 && f.exc[0].end == 1 && f.exc[0].target == 1);
    CHECK(f.exc[0].depth == 1 && f.exc[0].lasti == 1);
    CHECK(f.ins[1].flags & DP_INSTR_JUMP_TARGET);
    dp_arena_free(&a);
}

/* ---------------------------------------------- real interpreters' code */

/* async def sample(a, k):            # line 2
 *     try:
 *         r = await a(k, key=1)
 *     except ValueError as e:
 *         r = e
 *     return r
 * names ('ValueError',), varnames (a, k, r, e), consts (None, 1, ('key',)) */
typedef struct sample {
    int minor, firstlineno, stacksize;
    const char *code;
    size_t codelen;
    const char *lines;
    size_t lineslen;
    const char *exc;
    size_t exclen;
} sample;

static const sample SAMPLE_3_8 = {8, 2, 10,
    "\x7a\x16\x7c\x00\x7c\x01\x64\x01\x64\x02\x8d\x02\x49\x00\x64\x00\x48\x00\x7d\x02\x57\x00\x6e\x26\x04\x00\x74"
    "\x00\x6b\x0a\x72\x3c\x01\x00\x7d\x03\x01\x00\x7a\x08\x7c\x03\x7d\x02\x57\x00\x35\x00\x64\x00\x7d\x03\x7e\x03"
    "\x58\x00\x59\x00\x6e\x02\x58\x00\x7c\x02\x53\x00", 66,
    "\x00\x01\x02\x01\x16\x01\x10\x01\x16\x01", 10,
    "", 0};
static const sample SAMPLE_3_10 = {10, 2, 10,
    "\x81\x01\x7a\x0c\x7c\x00\x7c\x01\x64\x01\x64\x02\x8d\x02\x49\x00\x64\x00\x48\x00\x7d\x02\x57\x00\x7c\x02\x53"
    "\x00\x04\x00\x74\x00\x79\x22\x01\x00\x7d\x03\x01\x00\x7a\x09\x7c\x03\x7d\x02\x57\x00\x59\x00\x64\x00\x7d\x03"
    "\x7e\x03\x7c\x02\x53\x00\x64\x00\x7d\x03\x7e\x03\x77\x01\x77\x00", 70,
    "\x02\x80\x02\x01\x14\x01\x04\x03\x0e\xfe\x0e\x01\x04\x01\x08\x80\x02\xfe", 18,
    "", 0};
static const sample SAMPLE_3_11 = {11, 2, 4,
    "\x4b\x00\x01\x00\x97\x00\x09\x00\x02\x00\x7c\x00\x7c\x01\x64\x01\xac\x02\xa6\x02\x00\x00\xab\x02\x00\x00\x00"
    "\x00\x00\x00\x00\x00\x83\x00\x64\x00\x7b\x03\x56\x00\x97\x03\x86\x04\x7d\x02\x6e\x19\x23\x00\x74\x00\x00\x00"
    "\x00\x00\x00\x00\x00\x00\x00\x00\x24\x00\x72\x0c\x7d\x03\x7c\x03\x7d\x02\x59\x00\x64\x00\x7d\x03\x7e\x03\x6e"
    "\x08\x64\x00\x7d\x03\x7e\x03\x77\x01\x77\x00\x78\x03\x59\x00\x77\x01\x7c\x02\x53\x00", 102,
    "\xe8\x00\xe8\x00\x80\x00\xf0\x02\x03\x05\x0e\xd8\x12\x13\x90\x21\x90\x41\x98\x31\x90\x2b\x91\x2b\x94\x2b\xd0"
    "\x0c\x1d\xd0\x0c\x1d\xd0\x0c\x1d\xd0\x0c\x1d\xd0\x0c\x1d\xd0\x0c\x1d\x88\x01\x88\x01\xf8\xdd\x0b\x15\xf0\x00"
    "\x01\x05\x0e\xf0\x00\x01\x05\x0e\xf0\x00\x01\x05\x0e\xd8\x0c\x0d\x88\x01\x88\x01\x88\x01\x88\x01\x88\x01\x88"
    "\x01\xf8\xf8\xf8\xf8\xf0\x03\x01\x05\x0e\xf8\xf8\xf8\xe0\x0b\x0c\x80\x48", 99,
    "\x84\x13\x18\x00\x98\x0a\x2e\x03\xa2\x02\x29\x03\xa9\x05\x2e\x03", 16};
static const sample SAMPLE_3_12 = {12, 2, 4,
    "\x4b\x00\x01\x00\x97\x00\x09\x00\x02\x00\x7c\x00\x7c\x01\x64\x01\xac\x02\xab\x02\x00\x00\x00\x00\x00\x00\x83"
    "\x00\x64\x00\x7b\x03\x00\x00\x96\x03\x97\x03\x86\x05\x05\x00\x7d\x02\x7c\x02\x53\x00\x37\x00\x8c\x06\x23\x00"
    "\x74\x00\x00\x00\x00\x00\x00\x00\x00\x00\x24\x00\x72\x0d\x7d\x03\x7c\x03\x7d\x02\x59\x00\x64\x00\x7d\x03\x7e"
    "\x03\x7c\x02\x53\x00\x64\x00\x7d\x03\x7e\x03\x77\x01\x77\x00\x78\x03\x59\x00\x77\x01\xad\x03\x77\x01", 106,
    "\xe8\x00\xf8\x80\x00\xf0\x02\x03\x05\x0e\xd9\x12\x13\x90\x41\x98\x31\x94\x2b\xd7\x0c\x1d\x88\x01\xf0\x06\x00"
    "\x0c\x0d\x80\x48\xf0\x07\x00\x0d\x1e\xf9\xdc\x0b\x15\xf2\x00\x01\x05\x0e\xd8\x0c\x0d\x8c\x01\xd8\x0b\x0c\x80"
    "\x48\xfb\xf0\x05\x01\x05\x0e\xfc", 62,
    "\x82\x01\x33\x01\x84\x0d\x1a\x00\x91\x01\x18\x04\x92\x04\x1a\x00\x96\x02\x33\x01\x98\x01\x1a\x00\x9a\x09\x30"
    "\x03\xa3\x02\x2b\x03\xa5\x06\x33\x01\xab\x05\x30\x03\xb0\x03\x33\x01", 44};

static int lift_sample(dp_arena *a, const sample *s, dp_irfunc *f) {
    static const char *names[] = {"ValueError"};
    static const char *varnames[] = {"a", "k", "r", "e"};
    static const asm_ins nothing[] = {{DPO_NOP, 0}};
    dp_code *co = assemble(a, s->minor, nothing, 1);
    co->code = (const uint8_t *)s->code;
    co->codelen = s->codelen;
    co->linetable = (const uint8_t *)s->lines;
    co->linetablelen = s->lineslen;
    co->exctable = s->exclen ? (const uint8_t *)s->exc : NULL;
    co->exctablelen = s->exclen;
    co->firstlineno = s->firstlineno;
    co->names = (dp_strs){names, 1};
    co->varnames = (dp_strs){varnames, 4};
    co->cellvars = co->freevars = (dp_strs){NULL, 0};
    dp_error err;
    dp_error_init(&err);
    int rc = dp_lift(a, co, f, &err);
    if (rc < 0)
        fprintf(stderr, "  sample 3.%d: %s at %d\n", s->minor, err.msg, err.offset);
    return rc;
}

/* Index of the first IR instruction with the given op and offset, or -1. */
static int32_t at(const dp_irfunc *f, int op, int32_t offset) {
    for (int32_t i = 0; i < f->n; i++)
        if (f->ins[i].op == op && f->ins[i].offset == offset)
            return i;
    return -1;
}

static int line_starts_at(const dp_irfunc *f, int32_t offset, int32_t line) {
    for (int32_t i = 0; i < f->n; i++)
        if (f->ins[i].offset == offset)
            return f->ins[i].line == line && (f->ins[i].flags & DP_INSTR_LINE_START);
    return 0;
}

static void test_sample_3_8(void) {
    dp_arena a;
    dp_arena_init(&a);
    dp_irfunc f;
    CHECK(lift_sample(&a, &SAMPLE_3_8, &f) == 0);
    CHECK_STR(ops_of(&f), "SETUP_FINALLY LOAD_FAST LOAD_FAST LOAD_CONST NOP CALL GET_AWAITABLE NOP YIELD_FROM "
                          "STORE_FAST POP_BLOCK JUMP NOP LOAD_GLOBAL CHECK_EXC_MATCH POP_JUMP_IF_FALSE POP_TOP "
                          "STORE_FAST POP_TOP SETUP_FINALLY LOAD_FAST STORE_FAST POP_BLOCK BEGIN_FINALLY LOAD_CONST "
                          "STORE_FAST DELETE_FAST END_FINALLY POP_EXCEPT JUMP END_FINALLY LOAD_FAST RETURN_VALUE");
    CHECK(f.ins[0].target == at(&f, IR_NOP, 24));
    CHECK(f.ins[15].target == at(&f, IR_END_FINALLY, 60));
    CHECK(line_starts_at(&f, 0, 3) && line_starts_at(&f, 2, 4) && line_starts_at(&f, 24, 5));
    CHECK(line_starts_at(&f, 40, 6) && line_starts_at(&f, 62, 7));
    CHECK(f.ins[at(&f, IR_POP_EXCEPT, 56)].line == 6);
    CHECK(f.nexc == 0);
    dp_arena_free(&a);
}

static void test_sample_3_10(void) {
    dp_arena a;
    dp_arena_init(&a);
    dp_irfunc f;
    CHECK(lift_sample(&a, &SAMPLE_3_10, &f) == 0);
    int32_t match = at(&f, IR_CHECK_EXC_MATCH, 32);
    CHECK(match > 0 && f.ins[match + 1].op == IR_POP_JUMP_IF_FALSE);
    CHECK(f.ins[match + 1].target == at(&f, IR_RERAISE, 68));
    CHECK(f.ins[at(&f, IR_SETUP_FINALLY, 2)].target == at(&f, IR_NOP, 28));
    CHECK(f.ins[0].op == IR_RETURN_GENERATOR && f.ins[0].line == -1);
    CHECK(line_starts_at(&f, 2, 3) && line_starts_at(&f, 4, 4) && line_starts_at(&f, 24, 7));
    CHECK(line_starts_at(&f, 28, 5) && line_starts_at(&f, 42, 6) && line_starts_at(&f, 68, 5));
    dp_arena_free(&a);
}

static void test_sample_3_11(void) {
    dp_arena a;
    dp_arena_init(&a);
    dp_irfunc f;
    CHECK(lift_sample(&a, &SAMPLE_3_11, &f) == 0);
    CHECK_STR(ops_of(&f), "RETURN_GENERATOR NOP NOP NOP PUSH_NULL LOAD_FAST LOAD_FAST LOAD_CONST NOP NOP CALL "
                          "GET_AWAITABLE NOP YIELD_FROM NOP NOP NOP STORE_FAST JUMP PUSH_EXC_INFO LOAD_GLOBAL "
                          "CHECK_EXC_MATCH POP_JUMP_IF_FALSE STORE_FAST LOAD_FAST STORE_FAST POP_EXCEPT LOAD_CONST "
                          "STORE_FAST DELETE_FAST JUMP LOAD_CONST STORE_FAST DELETE_FAST RERAISE RERAISE COPY "
                          "POP_EXCEPT RERAISE LOAD_FAST RETURN_VALUE");
    CHECK(f.ins[10].cst != NULL && f.ins[10].arg == 2);
    /* exception table (end exclusive): 8-46 -> 48 [0]; 48-68 -> 92 [1] lasti; 68-72 -> 82; 82-92 -> 92 */
    CHECK(f.nexc == 4);
    CHECK(f.exc[0].start == 4 && f.exc[0].end == 18 && f.exc[0].target == 19 && f.exc[0].depth == 0);
    CHECK(f.exc[1].start == 19 && f.exc[1].end == 24 && f.exc[1].target == 36 && f.exc[1].lasti);
    CHECK(f.ins[19].flags & DP_INSTR_JUMP_TARGET);
    CHECK(f.ins[18].target == 39 && f.ins[22].target == 35);
    CHECK(line_starts_at(&f, 0, 2) && line_starts_at(&f, 6, 3) && line_starts_at(&f, 8, 4));
    CHECK(line_starts_at(&f, 50, 5) && line_starts_at(&f, 68, 6) && line_starts_at(&f, 98, 7));
    CHECK(f.ins[19].line == -1); /* PUSH_EXC_INFO has no location */
    dp_arena_free(&a);
}

static void test_sample_3_12(void) {
    dp_arena a;
    dp_arena_init(&a);
    dp_irfunc f;
    CHECK(lift_sample(&a, &SAMPLE_3_12, &f) == 0);
    int32_t yf = at(&f, IR_YIELD_FROM, 30);
    CHECK(yf > 0 && f.ins[yf - 1].op == IR_NOP && f.ins[yf + 5].op == IR_STORE_FAST);
    for (int32_t i = yf + 1; i < yf + 5; i++)
        CHECK(f.ins[i].op == IR_NOP && !(f.ins[i].flags & DP_INSTR_JUMP_TARGET));
    /* CLEANUP_THROW and its jump back to END_SEND are inert */
    CHECK(f.ins[at(&f, IR_NOP, 48)].target == -1 && f.ins[at(&f, IR_NOP, 50)].target == -1);
    /* the entry to CLEANUP_THROW (34 to 34) is gone and its neighbours merged */
    for (int32_t k = 0; k < f.nexc; k++)
        CHECK(f.ins[f.exc[k].target].offset != 48);
    CHECK(f.exc[1].start == at(&f, IR_PUSH_NULL, 8) && f.exc[1].end == at(&f, IR_LOAD_FAST, 44));
    CHECK(f.ins[f.exc[1].target].op == IR_PUSH_EXC_INFO);
    CHECK(f.ins[at(&f, IR_POP_JUMP_IF_FALSE, 66)].target == at(&f, IR_RERAISE, 94));
    CHECK(f.ins[f.n - 2].op == IR_STOPITERATION_ERROR);
    CHECK(line_starts_at(&f, 8, 4) && line_starts_at(&f, 44, 7) && line_starts_at(&f, 54, 5));
    dp_arena_free(&a);
}

/* Every code object of the .pyc vectors of every version lifts. */
typedef struct pyc_vector {
    int py_minor;
    const uint8_t *data;
    size_t len;
    const char *opnames;
} pyc_vector;

#include "pyc_vectors.inc"

static int lift_tree(dp_arena *a, const dp_code *co, int depth, int *count) {
    dp_irfunc f;
    dp_error err;
    dp_error_init(&err);
    if (depth > 50 || dp_lift(a, co, &f, &err) < 0) {
        fprintf(stderr, "  3.%d %s: %s at %d\n", co->py_minor, co->qualname, err.msg, err.offset);
        return -1;
    }
    (*count)++;
    for (size_t i = 0; i < co->nconsts; i++)
        if (co->consts[i]->kind == DP_CONST_CODE && lift_tree(a, co->consts[i]->code, depth + 1, count) < 0)
            return -1;
    return 0;
}

static void test_every_code_object_of_the_pyc_vectors_lifts(void) {
    int seen[DP_MAX_MINOR + 1] = {0};
    for (size_t v = 0; v < sizeof pyc_vectors / sizeof *pyc_vectors; v++) {
        dp_arena a;
        dp_arena_init(&a);
        dp_code *co = NULL;
        dp_error err;
        dp_error_init(&err);
        int count = 0;
        CHECK(dp_read_pyc(&a, pyc_vectors[v].data, pyc_vectors[v].len, &co, &err) == 0);
        if (co != NULL) {
            CHECK(lift_tree(&a, co, 0, &count) == 0);
            CHECK(count > 1);
            seen[co->py_minor] = 1;
        }
        dp_arena_free(&a);
    }
    for (int m = DP_MIN_MINOR; m <= DP_MAX_MINOR; m++)
        CHECK(seen[m]);
}

/* ---------------------------------------------- every opcode, random code */

/* Opcodes with no IR form: lifting them is a clean "unsupported" error. */
static int expected_unsupported(const char *name) {
    static const char *const list[] = {"CACHE", "RESERVED", "INTERPRETER_EXIT", "ENTER_EXECUTOR", "EXIT_INIT_CHECK"};
    if (strncmp(name, "INSTRUMENTED_", 13) == 0)
        return 1;
    for (size_t i = 0; i < sizeof list / sizeof *list; i++)
        if (strcmp(name, list[i]) == 0)
            return 1;
    return 0;
}

static void test_every_opcode_of_every_version_lifts_or_fails_cleanly(void) {
    for (int m = DP_MIN_MINOR; m <= DP_MAX_MINOR; m++) {
        const dp_optable *t = dp_optable_for(m);
        for (int b = 0; b < 256; b++) {
            if (t->op[b] == DPO_EXTENDED_ARG)
                continue;
            /* the opcode with argument 0, its caches, then NOPs to land on */
            uint8_t code[64] = {0};
            size_t len = 0;
            code[len++] = (uint8_t)b;
            code[len++] = 0;
            len += 2 * (size_t)t->caches[b];
            for (int k = 0; k < 4; k++, len += 2)
                code[len] = opcode_byte(m, DPO_NOP);
            dp_error err;
            int rc = lift_bytes(m, code, len, &err);
            const char *name = dp_opname_str[t->op[b]];
            if (t->op[b] == DPO_UNKNOWN) {
                CHECK(rc < 0 && strstr(err.msg, "unknown opcode") != NULL);
            } else if (rc < 0) {
                int unsupported = strstr(err.msg, "unsupported opcode") != NULL;
                if (unsupported != expected_unsupported(name))
                    fprintf(stderr, "  3.%d %s: %s\n", m, name, err.msg);
                CHECK(unsupported == expected_unsupported(name));
                CHECK(err.msg[0] != '\0' && err.offset == 0);
            } else {
                CHECK(!expected_unsupported(name));
            }
        }
    }
}

static uint32_t rng_state = 12345;
static uint32_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* Lifted IR must be well-formed whatever the input: targets are IR indices,
 * exception entries are ordered ranges inside the function. */
static int well_formed(const dp_irfunc *f, size_t codelen) {
    for (int32_t i = 0; i < f->n; i++) {
        const dp_instr *in = &f->ins[i];
        if (in->target < -1 || in->target >= f->n || in->offset < 0 || (size_t)in->offset >= codelen ||
            in->op >= IR_OP_COUNT)
            return 0;
        if (i > 0 && in->offset < f->ins[i - 1].offset)
            return 0;
    }
    for (int32_t k = 0; k < f->nexc; k++)
        if (f->exc[k].start < 0 || f->exc[k].start >= f->exc[k].end || f->exc[k].end > f->n ||
            f->exc[k].target < 0 || f->exc[k].target >= f->n)
            return 0;
    return 1;
}

static void test_random_programs_lift_or_fail_cleanly(void) {
    int lifted_ok = 0;
    for (int round = 0; round < 20000; round++) {
        int m = DP_MIN_MINOR + (int)(rnd() % 6);
        size_t len = 2 * (1 + rnd() % 40);
        uint8_t *code = malloc(len);
        const dp_optable *t = dp_optable_for(m);
        for (size_t i = 0; i < len; i += 2) {
            uint8_t b = (uint8_t)rnd();
            while (rnd() % 32 && t->op[b] == DPO_UNKNOWN) /* mostly real opcodes */
                b = (uint8_t)rnd();
            if (rnd() % 2) /* and many common ones, so that many programs lift */
                b = opcode_byte(m, (uint16_t[]){DPO_NOP, DPO_LOAD_CONST, DPO_LOAD_FAST, DPO_POP_TOP,
                                                DPO_RETURN_VALUE, DPO_JUMP_FORWARD}[rnd() % 6]);
            code[i] = b;
            code[i + 1] = (uint8_t)(rnd() % 8 ? rnd() % 3 : rnd());
        }
        uint8_t lines[16], exc[12];
        for (size_t i = 0; i < sizeof lines; i++)
            lines[i] = (uint8_t)rnd();
        for (size_t i = 0; i < sizeof exc; i++)
            exc[i] = (uint8_t)(rnd() % 8 | (i % 4 == 0 ? 0x80 : 0));
        dp_arena a;
        dp_arena_init(&a);
        static const asm_ins nothing[] = {{DPO_NOP, 0}};
        dp_code *co = assemble(&a, m, nothing, 1);
        co->code = code;
        co->codelen = len;
        co->linetable = lines;
        co->linetablelen = rnd() % sizeof lines;
        co->exctable = exc;
        co->exctablelen = rnd() % 4 ? 0 : rnd() % sizeof exc;
        dp_irfunc f;
        dp_error err;
        dp_error_init(&err);
        if (dp_lift(&a, co, &f, &err) == 0) {
            lifted_ok++;
            CHECK(well_formed(&f, len));
        } else {
            CHECK(err.set && err.msg[0] != '\0');
        }
        dp_arena_free(&a);
        free(code);
    }
    printf("  %d of 20000 lifted\n", lifted_ok);
    CHECK(lifted_ok > 2000);
}

int main(void) {
    RUN(test_extended_arg_is_folded_into_the_argument);
    RUN(test_jump_units_per_version);
    RUN(test_backward_jumps_count_from_after_the_caches);
    RUN(test_cache_entries_are_skipped);
    RUN(test_load_global_null_order);
    RUN(test_method_loads);
    RUN(test_keyword_calls_fold_the_names_tuple);
    RUN(test_an_unread_true_is_placed_by_the_constant_after_it);
    RUN(test_keyword_names_must_be_where_expected);
    RUN(test_call_ex_uses_a_pair_from_3_11);
    RUN(test_make_function_drops_the_qualname_before_3_11);
    RUN(test_old_stack_shuffles_become_copy_and_swap);
    RUN(test_binary_and_inplace_operators);
    RUN(test_comparisons_per_version);
    RUN(test_exception_match_drops_the_dup_top);
    RUN(test_old_yield_from_folds_the_none);
    RUN(test_send_loop_becomes_one_yield_from);
    RUN(test_for_iter_target_skips_end_for);
    RUN(test_3_12_intrinsics);
    RUN(test_3_13_superinstructions);
    RUN(test_locals_and_cells_per_version);
    RUN(test_3_10_pattern_matching_pushes_a_bool);
    RUN(test_generator_prologue_is_stack_neutral);
    RUN(test_dump_format);
    RUN(test_every_ir_op_has_a_name);
    RUN(test_damaged_code_is_reported_with_its_offset);
    RUN(test_damaged_exception_table);
    RUN(test_sample_3_8);
    RUN(test_sample_3_10);
    RUN(test_sample_3_11);
    RUN(test_sample_3_12);
    RUN(test_every_code_object_of_the_pyc_vectors_lifts);
    RUN(test_every_opcode_of_every_version_lifts_or_fails_cleanly);
    RUN(test_random_programs_lift_or_fail_cleanly);
    return TEST_REPORT();
}
