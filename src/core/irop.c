/* The one table of IR op properties: name, control flow, whether the op can
 * raise, and its stack effect.  Every pass that asks "is this a jump?",
 * "does it end a block?", "how many values does it take?" reads it here
 * (lift.c, cfg.c, the structurer, fallback.c, equiv.c, and the tests
 * through depyf._core.ir_dump(code, effects=True)). */
#include "ir.h"

#define V DP_EFFECT_VARIES

/* Control-flow flags. */
#define J DP_IRF_JUMP
#define C DP_IRF_COND
#define T DP_IRF_NOFALL
#define S DP_IRF_SETUP
#define B DP_IRF_BLOCK
#define N DP_IRF_NORAISE
#define P DP_IRF_POPS_TEST

/* name, flags, in, out, keep: [in values] -> [out values], the bottom `keep`
 * of them left as they were; V where the argument decides (dp_ir_effect). */
const dp_irop_info dp_irop_table[IR_OP_COUNT + 1] = {
    [IR_NOP] = {"NOP", N, V, V, 0},
    [IR_LOAD_CONST] = {"LOAD_CONST", N, 0, 1, 0},
    [IR_LOAD_NAME] = {"LOAD_NAME", 0, 0, 1, 0},
    [IR_LOAD_GLOBAL] = {"LOAD_GLOBAL", 0, 0, 1, 0},
    [IR_LOAD_FAST] = {"LOAD_FAST", 0, 0, 1, 0},
    [IR_LOAD_DEREF] = {"LOAD_DEREF", 0, 0, 1, 0},
    [IR_LOAD_CLASSDEREF] = {"LOAD_CLASSDEREF", 0, 0, 1, 0},
    [IR_LOAD_CLOSURE] = {"LOAD_CLOSURE", N, 0, 1, 0},
    [IR_LOAD_FAST_AND_CLEAR] = {"LOAD_FAST_AND_CLEAR", N, 0, 1, 0},
    [IR_STORE_NAME] = {"STORE_NAME", 0, 1, 0, 0},
    [IR_STORE_GLOBAL] = {"STORE_GLOBAL", 0, 1, 0, 0},
    [IR_STORE_FAST] = {"STORE_FAST", N, 1, 0, 0},
    [IR_STORE_DEREF] = {"STORE_DEREF", N, 1, 0, 0},
    [IR_DELETE_NAME] = {"DELETE_NAME", 0, 0, 0, 0},
    [IR_DELETE_GLOBAL] = {"DELETE_GLOBAL", 0, 0, 0, 0},
    [IR_DELETE_FAST] = {"DELETE_FAST", 0, 0, 0, 0},
    [IR_DELETE_DEREF] = {"DELETE_DEREF", 0, 0, 0, 0},
    [IR_LOAD_ATTR] = {"LOAD_ATTR", 0, 1, 1, 0},
    [IR_LOAD_METHOD] = {"LOAD_METHOD", 0, 1, 2, 0},
    [IR_LOAD_SUPER_ATTR] = {"LOAD_SUPER_ATTR", 0, 3, V, 0},
    [IR_STORE_ATTR] = {"STORE_ATTR", 0, 2, 0, 0},
    [IR_DELETE_ATTR] = {"DELETE_ATTR", 0, 1, 0, 0},
    [IR_PUSH_NULL] = {"PUSH_NULL", N, 0, 1, 0},
    [IR_LOAD_ASSERTION_ERROR] = {"LOAD_ASSERTION_ERROR", N, 0, 1, 0},
    [IR_LOAD_BUILD_CLASS] = {"LOAD_BUILD_CLASS", 0, 0, 1, 0},
    [IR_LOAD_LOCALS] = {"LOAD_LOCALS", 0, 0, 1, 0},
    [IR_BINARY_OP] = {"BINARY_OP", 0, 2, 1, 0},
    [IR_UNARY] = {"UNARY", 0, 1, 1, 0},
    [IR_COMPARE] = {"COMPARE", 0, 2, 1, 0},
    [IR_IS] = {"IS", 0, 2, 1, 0},
    [IR_CONTAINS] = {"CONTAINS", 0, 2, 1, 0},
    [IR_BINARY_SUBSCR] = {"BINARY_SUBSCR", 0, 2, 1, 0},
    [IR_STORE_SUBSCR] = {"STORE_SUBSCR", 0, 3, 0, 0},
    [IR_DELETE_SUBSCR] = {"DELETE_SUBSCR", 0, 2, 0, 0},
    [IR_BINARY_SLICE] = {"BINARY_SLICE", 0, 3, 1, 0},
    [IR_STORE_SLICE] = {"STORE_SLICE", 0, 4, 0, 0},
    [IR_BUILD_SLICE] = {"BUILD_SLICE", N, V, 1, 0},
    [IR_CALL] = {"CALL", 0, V, 1, 0},
    [IR_CALL_EX] = {"CALL_EX", 0, V, 1, 0},
    [IR_MAKE_FUNCTION] = {"MAKE_FUNCTION", N, V, 1, 0},
    [IR_SET_FUNCTION_ATTRIBUTE] = {"SET_FUNCTION_ATTRIBUTE", N, 2, 1, 0},
    [IR_CALL_INTRINSIC_1] = {"CALL_INTRINSIC_1", 0, 1, 1, 0},
    [IR_CALL_INTRINSIC_2] = {"CALL_INTRINSIC_2", 0, 2, 1, 0},
    [IR_BUILD_TUPLE] = {"BUILD_TUPLE", N, V, 1, 0},
    [IR_BUILD_LIST] = {"BUILD_LIST", N, V, 1, 0},
    [IR_BUILD_SET] = {"BUILD_SET", 0, V, 1, 0},
    [IR_BUILD_MAP] = {"BUILD_MAP", 0, V, 1, 0},
    [IR_BUILD_CONST_KEY_MAP] = {"BUILD_CONST_KEY_MAP", 0, V, 1, 0},
    [IR_BUILD_STRING] = {"BUILD_STRING", 0, V, 1, 0},
    [IR_LIST_APPEND] = {"LIST_APPEND", N, V, V, V},
    [IR_SET_ADD] = {"SET_ADD", 0, V, V, V},
    [IR_MAP_ADD] = {"MAP_ADD", 0, V, V, V},
    [IR_LIST_EXTEND] = {"LIST_EXTEND", 0, V, V, V},
    [IR_SET_UPDATE] = {"SET_UPDATE", 0, V, V, V},
    [IR_DICT_UPDATE] = {"DICT_UPDATE", 0, V, V, V},
    [IR_DICT_MERGE] = {"DICT_MERGE", 0, V, V, V},
    [IR_LIST_TO_TUPLE] = {"LIST_TO_TUPLE", 0, 1, 1, 0},
    [IR_BUILD_UNPACK] = {"BUILD_UNPACK", 0, V, 1, 0},
    [IR_FORMAT_VALUE] = {"FORMAT_VALUE", 0, V, 1, 0},
    [IR_CONVERT_VALUE] = {"CONVERT_VALUE", 0, 1, 1, 0},
    [IR_UNPACK_SEQUENCE] = {"UNPACK_SEQUENCE", 0, 1, V, 0},
    [IR_UNPACK_EX] = {"UNPACK_EX", 0, 1, V, 0},
    [IR_POP_TOP] = {"POP_TOP", N, 1, 0, 0},
    [IR_COPY] = {"COPY", N, V, V, V},
    [IR_SWAP] = {"SWAP", N, V, V, 0},
    [IR_RETURN_VALUE] = {"RETURN_VALUE", T | N, 1, 0, 0},
    [IR_JUMP] = {"JUMP", J | T | N, 0, 0, 0},
    [IR_POP_JUMP_IF_FALSE] = {"POP_JUMP_IF_FALSE", J | C | P, 1, 0, 0},
    [IR_POP_JUMP_IF_TRUE] = {"POP_JUMP_IF_TRUE", J | C | P, 1, 0, 0},
    [IR_POP_JUMP_IF_NONE] = {"POP_JUMP_IF_NONE", J | C | P | N, 1, 0, 0},
    [IR_POP_JUMP_IF_NOT_NONE] = {"POP_JUMP_IF_NOT_NONE", J | C | P | N, 1, 0, 0},
    /* (the jump keeps the value: see dp_ir_effect) */
    [IR_JUMP_IF_FALSE_OR_POP] = {"JUMP_IF_FALSE_OR_POP", J | C, 1, 0, 0},
    [IR_JUMP_IF_TRUE_OR_POP] = {"JUMP_IF_TRUE_OR_POP", J | C, 1, 0, 0},
    [IR_GET_ITER] = {"GET_ITER", 0, 1, 1, 0},
    /* (falls through with the next item; the jump pops the iterator) */
    [IR_FOR_ITER] = {"FOR_ITER", J | C, 1, 2, 1},
    [IR_RAISE] = {"RAISE", T, V, 0, 0},
    [IR_RERAISE] = {"RERAISE", T, V, 0, 0},
    [IR_RETURN_GENERATOR] = {"RETURN_GENERATOR", N, 0, 0, 0},
    [IR_YIELD_VALUE] = {"YIELD_VALUE", 0, 1, 1, 0},
    [IR_GET_YIELD_FROM_ITER] = {"GET_YIELD_FROM_ITER", 0, 1, 1, 0},
    [IR_GET_AWAITABLE] = {"GET_AWAITABLE", 0, 1, 1, 0},
    [IR_YIELD_FROM] = {"YIELD_FROM", 0, 1, 1, 0},
    [IR_GET_AITER] = {"GET_AITER", 0, 1, 1, 0},
    [IR_GET_ANEXT] = {"GET_ANEXT", 0, 1, 2, 1},
    [IR_END_ASYNC_FOR] = {"END_ASYNC_FOR", 0, V, 0, 0},
    [IR_BEFORE_ASYNC_WITH] = {"BEFORE_ASYNC_WITH", 0, 1, 2, 0},
    [IR_ASYNC_GEN_WRAP] = {"ASYNC_GEN_WRAP", 0, 1, 1, 0},
    [IR_STOPITERATION_ERROR] = {"STOPITERATION_ERROR", 0, 1, 1, 0},
    [IR_PUSH_EXC_INFO] = {"PUSH_EXC_INFO", N, 1, 2, 0},
    [IR_POP_EXCEPT] = {"POP_EXCEPT", N, V, 0, 0},
    [IR_CHECK_EXC_MATCH] = {"CHECK_EXC_MATCH", 0, 2, 2, 1},
    [IR_CHECK_EG_MATCH] = {"CHECK_EG_MATCH", 0, 2, 2, 0},
    [IR_PREP_RERAISE_STAR] = {"PREP_RERAISE_STAR", 0, 2, 1, 0},
    [IR_BEFORE_WITH] = {"BEFORE_WITH", 0, 1, 2, 0},
    /* (calls __exit__ with what lies below the top, leaving it there) */
    [IR_WITH_EXCEPT_START] = {"WITH_EXCEPT_START", 0, 0, 1, 0},
    /* 3.8-3.10 block stack: the effect on falling through; a SETUP_*'s
     * handler edge is dp_ir_effect's jump effect */
    [IR_SETUP_FINALLY] = {"SETUP_FINALLY", S | B | N, 0, 0, 0},
    [IR_SETUP_WITH] = {"SETUP_WITH", S | B, 1, 2, 0},
    [IR_SETUP_ASYNC_WITH] = {"SETUP_ASYNC_WITH", S | B | N, 1, 1, 0},
    [IR_POP_BLOCK] = {"POP_BLOCK", B | N, 0, 0, 0},
    /* 3.8's finally machinery pushes and pops as many values as the way
     * into the finally body decides: no fixed effect */
    [IR_BEGIN_FINALLY] = {"BEGIN_FINALLY", B | N, V, V, 0},
    [IR_END_FINALLY] = {"END_FINALLY", B, V, V, 0},
    [IR_CALL_FINALLY] = {"CALL_FINALLY", J | B | N, V, V, 0},
    [IR_POP_FINALLY] = {"POP_FINALLY", B | N, V, V, 0},
    [IR_WITH_CLEANUP_START] = {"WITH_CLEANUP_START", B, V, V, 0},
    [IR_WITH_CLEANUP_FINISH] = {"WITH_CLEANUP_FINISH", B, V, V, 0},
    [IR_IMPORT_NAME] = {"IMPORT_NAME", 0, 2, 1, 0},
    [IR_IMPORT_FROM] = {"IMPORT_FROM", 0, 1, 2, 1},
    [IR_IMPORT_STAR] = {"IMPORT_STAR", 0, 1, 0, 0},
    [IR_SETUP_ANNOTATIONS] = {"SETUP_ANNOTATIONS", 0, 0, 0, 0},
    [IR_PRINT_EXPR] = {"PRINT_EXPR", 0, 1, 0, 0},
    [IR_MATCH_CLASS] = {"MATCH_CLASS", 0, 3, 1, 0},
    [IR_MATCH_MAPPING] = {"MATCH_MAPPING", 0, 1, 2, 1},
    [IR_MATCH_SEQUENCE] = {"MATCH_SEQUENCE", 0, 1, 2, 1},
    [IR_MATCH_KEYS] = {"MATCH_KEYS", 0, 2, 3, 2},
    [IR_COPY_DICT_WITHOUT_KEYS] = {"COPY_DICT_WITHOUT_KEYS", 0, 2, 2, 1},
    [IR_GET_LEN] = {"GET_LEN", 0, 1, 2, 1},
    [IR_OP_COUNT] = {"?", 0, V, V, 0},
};

const char *dp_irop_name(int op) { return dp_op_info(op)->name; }

static int bits4(int32_t v) { return (v & 1) + ((v >> 1) & 1) + ((v >> 2) & 1) + ((v >> 3) & 1); }

/* The argument-dependent part of the effect on falling through. */
static int varying_effect(const dp_instr *x, const dp_layout *lay, dp_effect *e) {
    int32_t a = x->arg;
    int pair = (x->arg2 & DP_CALL_PAIR) != 0;
    /* under a block stack an except block holds three values (type, value,
     * traceback); with an exception table, one exception */
    int three = lay->block_stack;
    switch (x->op) {
    case IR_NOP: /* (with DP_NOP_TO_BOOL: [a] -> [bool(a)]) */
        e->in = e->out = x->arg2 == DP_NOP_TO_BOOL;
        return 0;
    case IR_LOAD_SUPER_ATTR: e->out = 1 + (a & 1); return 0;
    case IR_BUILD_SLICE: case IR_BUILD_TUPLE: case IR_BUILD_LIST: case IR_BUILD_SET: case IR_BUILD_STRING:
    case IR_BUILD_UNPACK:
        e->in = a; return 0;
    case IR_BUILD_MAP: e->in = 2 * (int64_t)a > INT32_MAX ? INT32_MAX : 2 * a; return 0;
    case IR_BUILD_CONST_KEY_MAP: e->in = a == INT32_MAX ? a : a + 1; return 0;
    case IR_CALL: e->in = a > INT32_MAX - 2 ? INT32_MAX : a + 1 + pair; return 0;
    case IR_CALL_EX: e->in = 2 + (a & 1) + pair; return 0;
    case IR_MAKE_FUNCTION: e->in = 1 + bits4(a); return 0;
    case IR_FORMAT_VALUE: e->in = 1 + ((a & DP_FMT_HAS_SPEC) != 0); return 0;
    case IR_UNPACK_SEQUENCE: e->out = a; return 0;
    case IR_UNPACK_EX: e->out = (a & 0xff) + ((a >> 8) & 0xffffff) + 1; return 0;
    case IR_LIST_APPEND: case IR_SET_ADD: case IR_LIST_EXTEND: case IR_SET_UPDATE: case IR_DICT_UPDATE:
    case IR_DICT_MERGE: case IR_MAP_ADD: { /* [.. coll (arg-1 more), v(, v2)] -> [.. coll ..] */
        int take = x->op == IR_MAP_ADD ? 2 : 1;
        if (a < 1 || a > INT32_MAX - 2)
            return -1;
        e->in = a + take;
        e->out = e->keep = a;
        return 0;
    }
    case IR_COPY:
        if (a < 1 || a == INT32_MAX)
            return -1;
        e->in = e->keep = a;
        e->out = a + 1;
        return 0;
    case IR_SWAP:
        if (a < 2)
            return -1;
        e->in = e->out = a;
        return 0;
    case IR_RAISE:
        if (a < 0 || a > 2)
            return -1;
        e->in = a;
        return 0;
    case IR_RERAISE: case IR_POP_EXCEPT: e->in = three ? 3 : 1; return 0;
    case IR_END_ASYNC_FOR: e->in = three ? 7 : 2; return 0;
    default:
        return -1; /* (3.8's finally machinery) */
    }
}

int dp_ir_effect(const dp_instr *x, const dp_layout *lay, int jumping, dp_effect *e) {
    const dp_irop_info *p = dp_op_info(x->op);
    e->in = p->in;
    e->out = p->out;
    e->keep = p->keep;
    if ((e->in == V || e->out == V || e->keep == V) && varying_effect(x, lay, e) < 0)
        return -1;
    if (!jumping)
        return 0;
    switch (x->op) {
    case IR_JUMP_IF_FALSE_OR_POP: case IR_JUMP_IF_TRUE_OR_POP: /* the tested value stays */
        e->out = e->keep = 1;
        return 0;
    case IR_FOR_ITER: /* exhausted: the iterator is gone */
        e->out = e->keep = 0;
        return 0;
    /* a handler below a SETUP_* gets six values above the block's level
     * (the previous exception's and the new one's type, value, traceback);
     * SETUP_WITH's level is above __exit__, SETUP_ASYNC_WITH's below the
     * __aenter__ result it pops */
    case IR_SETUP_FINALLY: e->in = 0; e->out = 6; e->keep = 0; return 0;
    case IR_SETUP_WITH: e->in = 1; e->out = 7; e->keep = 0; return 0;
    case IR_SETUP_ASYNC_WITH: e->in = 1; e->out = 6; e->keep = 0; return 0;
    default:
        return (p->flags & DP_IRF_JUMP) ? 0 : -1;
    }
}
