/* The version-neutral instruction set.  lift.c decodes a dp_code of any
 * CPython version (EXTENDED_ARG, inline CACHE entries, relative/absolute and
 * instruction-unit jumps) into an array of dp_instr; everything downstream
 * reads only this.
 *
 * Conventions
 * - `target` of a jump is an index into dp_irfunc.ins (never a byte offset).
 * - Stack effects are given as [inputs] -> [outputs], top of stack last.
 * - "callable slot pair": from 3.11 on (and with 3.8-3.10 LOAD_METHOD) a call
 *   target occupies two stack slots, one of which is NULL or the bound self.
 *   IR_PUSH_NULL, IR_LOAD_METHOD and IR_LOAD_SUPER_ATTR(method) produce them
 *   in the interpreter's order; IR_CALL/IR_CALL_EX say with DP_CALL_PAIR
 *   whether the call consumes a pair or a single callable.
 * - `offset` is where an instruction's first EXTENDED_ARG prefix starts
 *   (that is what jumps and exception-table entries point at).
 * - Normalizations lift performs so that every version reads alike:
 *   `RETURN_GENERATOR; POP_TOP` (3.10 GEN_START) is IR_RETURN_GENERATOR + NOP
 *   with no stack effect; before 3.11 the DUP_TOP before an exception match
 *   is dropped (IR_CHECK_EXC_MATCH then has 3.11's shape); 3.10
 *   MATCH_KEYS/MATCH_CLASS take 3.11's meaning; END_FOR reached by falling
 *   through is POP_TOP(s); CLEANUP_THROW of 3.12+ await loops is NOPs and its
 *   exception entries are dropped.  3.8-3.10 handlers keep the old stack
 *   effects (POP_EXCEPT/RERAISE handle 3 values, a SETUP_* handler starts 6
 *   above its block).
 * - Instructions that only matter to the interpreter (RESUME, PRECALL,
 *   KW_NAMES, MAKE_CELL, COPY_FREE_VARS, TO_BOOL, CACHE, EXTENDED_ARG, ...)
 *   become IR_NOP or vanish; their information is folded into the
 *   instruction that needs it.
 */
#ifndef DEPYF_IR_H
#define DEPYF_IR_H

#include <stdint.h>

#include "arena.h"
#include "buf.h"
#include "code.h"
#include "error.h"
#include "layout.h"

/* Binary operators; numbering equals 3.11's BINARY_OP argument (0..12). */
typedef enum dp_binop {
    DP_BIN_ADD, DP_BIN_AND, DP_BIN_FLOORDIV, DP_BIN_LSHIFT, DP_BIN_MATMUL,
    DP_BIN_MUL, DP_BIN_MOD, DP_BIN_OR, DP_BIN_POW, DP_BIN_RSHIFT, DP_BIN_SUB,
    DP_BIN_TRUEDIV, DP_BIN_XOR,
    DP_BIN_COUNT
} dp_binop;

typedef enum dp_unop { DP_UN_POS, DP_UN_NEG, DP_UN_NOT, DP_UN_INVERT } dp_unop;

/* Rich comparisons; numbering equals 3.8-3.11's COMPARE_OP argument. */
typedef enum dp_cmpop {
    DP_CMP_LT, DP_CMP_LE, DP_CMP_EQ, DP_CMP_NE, DP_CMP_GT, DP_CMP_GE,
    /* not produced by IR_COMPARE, used by the AST for chained comparisons */
    DP_CMP_IN, DP_CMP_NOT_IN, DP_CMP_IS, DP_CMP_IS_NOT
} dp_cmpop;

enum { DP_CALL_PAIR = 1 };            /* IR_CALL/IR_CALL_EX arg2 bit */
/* arg2 of IR_NOP (3.13 TO_BOOL) and of 3.13 comparisons (COMPARE_OP's bool
 * bit): the value is converted to bool.  Lift drops a TO_BOOL right before a
 * conditional jump, which tests the value itself. */
enum { DP_NOP_TO_BOOL = 1 };
/* arg2 of IR_RETURN_VALUE: 3.12+ fuses a `return <constant>` statement
 * into RETURN_CONST, so a LOAD_CONST then RETURN_VALUE of its bytecode is
 * an arm of a conditional expression whose value is returned (the return
 * copied into each arm). */
enum { DP_RETURN_ARM = 1 };
enum { DP_FN_DEFAULTS = 1, DP_FN_KWDEFAULTS = 2, DP_FN_ANNOTATIONS = 4, DP_FN_CLOSURE = 8 };
enum { DP_FMT_CONV_MASK = 3, DP_FMT_HAS_SPEC = 4 }; /* FORMAT_VALUE arg; conv 1=!s 2=!r 3=!a */

typedef enum dp_irop {
    IR_NOP,               /* nothing, or with arg2 = DP_NOP_TO_BOOL: [a] -> [bool(a)] */
    /* ---- loads, stores, deletes: `name` holds the resolved name ---- */
    IR_LOAD_CONST,        /* [] -> [cst] */
    IR_LOAD_NAME, IR_LOAD_GLOBAL, IR_LOAD_FAST, IR_LOAD_DEREF,
    IR_LOAD_CLASSDEREF,   /* class body: locals dict, then cell (3.12 LOAD_LOCALS+LOAD_FROM_DICT_OR_DEREF) */
    IR_LOAD_CLOSURE,      /* [] -> [cell] (for MAKE_FUNCTION closures) */
    IR_LOAD_FAST_AND_CLEAR, /* 3.12+ inlined comprehension: save a local */
    IR_STORE_NAME, IR_STORE_GLOBAL, IR_STORE_FAST, IR_STORE_DEREF,  /* [v] -> [] */
    IR_DELETE_NAME, IR_DELETE_GLOBAL, IR_DELETE_FAST, IR_DELETE_DEREF,
    IR_LOAD_ATTR,         /* [obj] -> [obj.name] */
    IR_LOAD_METHOD,       /* [obj] -> [pair for obj.name] */
    IR_LOAD_SUPER_ATTR,   /* 3.12+: [global super, class, self] -> [attr] or pair if arg&1; arg&2: two-arg form */
    IR_STORE_ATTR,        /* [v, obj] -> [] */
    IR_DELETE_ATTR,       /* [obj] -> [] */
    IR_PUSH_NULL,         /* [] -> [NULL] */
    IR_LOAD_ASSERTION_ERROR, IR_LOAD_BUILD_CLASS, IR_LOAD_LOCALS,
    /* ---- operators ---- */
    IR_BINARY_OP,         /* [a, b] -> [a op b]; arg = dp_binop, arg2 = 1 if in-place */
    IR_UNARY,             /* [a] -> [op a]; arg = dp_unop */
    IR_COMPARE,           /* [a, b] -> [a cmp b]; arg = dp_cmpop (LT..GE); arg2 = DP_NOP_TO_BOOL: bool() of it */
    IR_IS,                /* [a, b] -> [a is b]; arg = 1 for `is not` */
    IR_CONTAINS,          /* [a, b] -> [a in b]; arg = 1 for `not in` */
    IR_BINARY_SUBSCR,     /* [a, i] -> [a[i]] */
    IR_STORE_SUBSCR,      /* [v, a, i] -> [] */
    IR_DELETE_SUBSCR,     /* [a, i] -> [] */
    IR_BINARY_SLICE,      /* 3.12+: [a, lo, hi] -> [a[lo:hi]] */
    IR_STORE_SLICE,       /* 3.12+: [v, a, lo, hi] -> [] */
    IR_BUILD_SLICE,       /* [lo, hi(, step)] -> [slice]; arg = 2 or 3 */
    /* ---- calls and functions ---- */
    IR_CALL,              /* [callable(pair), args..., kwvalues...] -> [result]; arg = number of
                             values above the callable; cst = tuple of keyword names or NULL;
                             arg2 = DP_CALL_PAIR when the callable is a slot pair */
    IR_CALL_EX,           /* [callable(pair), args tuple(, kwargs dict)] -> [result]; arg&1 = kwargs */
    IR_MAKE_FUNCTION,     /* [defaults?, kwdefaults?, annotations?, closure?, code] -> [fn]; arg = DP_FN_* present
                             (3.8-3.10's qualname operand is dropped by lift) */
    IR_SET_FUNCTION_ATTRIBUTE, /* 3.13: [value, fn] -> [fn]; arg = one DP_FN_* flag */
    IR_CALL_INTRINSIC_1,  /* 3.12+ intrinsics with no dedicated IR op: [a] -> [f(a)]; arg = intrinsic */
    IR_CALL_INTRINSIC_2,  /* [a, b] -> [f(a, b)] */
    /* ---- building values ---- */
    IR_BUILD_TUPLE, IR_BUILD_LIST, IR_BUILD_SET, /* [x1..xn] -> [c]; arg = n */
    IR_BUILD_MAP,         /* [k1, v1, .. kn, vn] -> [d]; arg = n */
    IR_BUILD_CONST_KEY_MAP, /* [v1..vn, keys tuple] -> [d]; arg = n */
    IR_BUILD_STRING,      /* [s1..sn] -> [joined]; arg = n */
    IR_LIST_APPEND, IR_SET_ADD, /* [.. coll .., v] -> [.. coll ..]; arg = depth of coll */
    IR_MAP_ADD,           /* [.. d .., k, v] -> [.. d ..]; arg = depth */
    IR_LIST_EXTEND, IR_SET_UPDATE, IR_DICT_UPDATE, IR_DICT_MERGE, /* [.. c .., it] -> [.. c ..]; arg = depth */
    IR_LIST_TO_TUPLE,     /* [list] -> [tuple] */
    IR_BUILD_UNPACK,      /* 3.8: BUILD_{TUPLE,LIST,SET,MAP}_UNPACK(_WITH_CALL): [it1..itn] -> [c];
                             arg = n, arg2 = 'T','L','S','M' (kind), 'C' = tuple for call, 'K' = map for call */
    IR_FORMAT_VALUE,      /* [v(, spec)] -> [str]; arg = conversion | DP_FMT_HAS_SPEC */
    IR_CONVERT_VALUE,     /* 3.13: [v] -> [converted v]; arg = conversion 1..3 */
    IR_UNPACK_SEQUENCE,   /* [seq] -> [xn..x1]; arg = n */
    IR_UNPACK_EX,         /* [seq] -> [...]; arg = before | after << 8 */
    /* ---- stack shuffles ---- */
    IR_POP_TOP,
    IR_COPY,              /* [.. x (n-1 more)] -> [.. x .. x]; arg = n >= 1 (3.8 DUP_TOP = COPY 1) */
    IR_SWAP,              /* swap top with the n-th; arg = n >= 2 (3.8 ROT_* become SWAP sequences) */
    /* ---- control flow ---- */
    IR_RETURN_VALUE,      /* [v] -> (3.12 RETURN_CONST becomes LOAD_CONST + RETURN_VALUE); arg2 =
                             DP_RETURN_ARM: see there */
    IR_JUMP,              /* target */
    IR_POP_JUMP_IF_FALSE, IR_POP_JUMP_IF_TRUE, IR_POP_JUMP_IF_NONE, IR_POP_JUMP_IF_NOT_NONE,
    IR_JUMP_IF_FALSE_OR_POP, IR_JUMP_IF_TRUE_OR_POP, /* <= 3.11 */
    IR_GET_ITER,          /* [it] -> [iterator] */
    IR_FOR_ITER,          /* [iterator] -> [iterator, next]; when exhausted the iterator is popped and
                             control goes to `target` (3.12+ END_FOR handling folded in) */
    IR_RAISE,             /* arg = 0 (re-raise), 1 (exc), 2 (exc, cause) */
    IR_RERAISE,           /* [exc] -> raise it again; arg as in CPython (set f_lasti) */
    /* ---- generators and coroutines ---- */
    IR_RETURN_GENERATOR,  /* generator prologue */
    IR_YIELD_VALUE,       /* [v] -> [sent] */
    IR_GET_YIELD_FROM_ITER, /* [it] -> [iter] */
    IR_GET_AWAITABLE,     /* [x] -> [awaitable]; arg as in CPython */
    IR_YIELD_FROM,        /* [iter] -> [result]: the whole send/yield loop of `yield from`/`await`
                             (3.8 LOAD_CONST None + YIELD_FROM; 3.11+ SEND ... loop) */
    IR_GET_AITER, IR_GET_ANEXT, IR_END_ASYNC_FOR, IR_BEFORE_ASYNC_WITH,
    IR_ASYNC_GEN_WRAP,    /* [v] -> [wrapped v] */
    IR_STOPITERATION_ERROR, /* generator epilogue handler */
    /* ---- exceptions and with ---- */
    IR_PUSH_EXC_INFO,     /* [exc] -> [prev exc, exc] */
    IR_POP_EXCEPT,        /* [prev exc] -> [] */
    IR_CHECK_EXC_MATCH,   /* [exc, type] -> [exc, bool] (3.8-3.10 JUMP_IF_NOT_EXC_MATCH is split) */
    IR_CHECK_EG_MATCH,    /* except*: [eg, type] -> [rest, match] */
    IR_PREP_RERAISE_STAR,
    IR_BEFORE_WITH,       /* [mgr] -> [exit, enter result] */
    IR_WITH_EXCEPT_START, /* [exit, lasti, prev, exc] -> [.., res] */
    /* 3.8-3.10 block-stack instructions (kept for issue 4's structurer) */
    IR_SETUP_FINALLY, IR_SETUP_WITH, IR_SETUP_ASYNC_WITH, IR_POP_BLOCK, IR_BEGIN_FINALLY,
    IR_END_FINALLY, IR_CALL_FINALLY, IR_POP_FINALLY, IR_WITH_CLEANUP_START, IR_WITH_CLEANUP_FINISH,
    /* ---- imports, classes, misc ---- */
    IR_IMPORT_NAME,       /* [level, fromlist] -> [module] */
    IR_IMPORT_FROM,       /* [module] -> [module, attr] */
    IR_IMPORT_STAR,       /* [module] -> [] */
    IR_SETUP_ANNOTATIONS,
    IR_PRINT_EXPR,
    /* ---- pattern matching ---- */
    IR_MATCH_CLASS,       /* [subject, cls, names] -> [attrs or None]; arg = positional count */
    IR_MATCH_MAPPING, IR_MATCH_SEQUENCE, /* [s] -> [s, bool] */
    IR_MATCH_KEYS,        /* [s, keys] -> [s, keys, values or None] */
    IR_COPY_DICT_WITHOUT_KEYS, /* 3.10: [s, keys] -> [s, rest], rest = {**s} without keys
                                  (3.11+ spell it BUILD_MAP, DICT_UPDATE, DELETE_SUBSCR) */
    IR_GET_LEN,           /* [s] -> [s, len] */
    IR_OP_COUNT
} dp_irop;

enum { DP_INSTR_JUMP_TARGET = 1, DP_INSTR_LINE_START = 2 };

typedef struct dp_instr {
    uint16_t op;          /* dp_irop */
    uint8_t flags;        /* DP_INSTR_* */
    int32_t arg, arg2;
    int32_t target;       /* jump target (IR index) or -1 */
    int32_t offset;       /* byte offset of the source instruction */
    int32_t line;         /* source line or -1 */
    const char *name;     /* resolved name for name/attr/import ops */
    const dp_const *cst;  /* LOAD_CONST value; IR_CALL keyword names */
} dp_instr;

/* One exception-table entry (3.11+; synthesized from SETUP_* for older code
 * by the structurer, not by lift).  start/end/target are IR indices, end is
 * exclusive. */
typedef struct dp_exc_entry {
    int32_t start, end, target;
    int32_t depth;
    int lasti;
} dp_exc_entry;

typedef struct dp_irfunc {
    const dp_code *code;
    dp_instr *ins;
    int32_t n;
    dp_exc_entry *exc;
    int32_t nexc;
    dp_layout lay;       /* how code->py_minor lays out bytecode (set by dp_lift) */
    /* Where the compiler left a constant no instruction reads (the True of
     * a test the peephole pass deleted, lay.keeps_folded_test_consts): the
     * offset of the first instruction reading the constant after it, when
     * co_consts holds one True, which nothing reads, every other constant
     * (the first, a function's docstring or None, aside) is read, and their
     * first reads come in the order of their indices (the compiler numbers
     * constants as it first uses them; Dynamo's code keeps the original's
     * pool and adds to it).  -1: none, or not such a pool (set by dp_lift,
     * read by folded_test.c). */
    int32_t unused_true_before;
} dp_irfunc;

/* Decodes and lifts one code object (not its nested code objects). */
int dp_lift(dp_arena *a, const dp_code *code, dp_irfunc *out, dp_error *err);

/* ---- op properties (irop.c): the one place that says what an op does to
 * control flow and to the stack ---- */
enum {
    DP_IRF_JUMP = 1,      /* `target` is where control may go next */
    DP_IRF_COND = 2,      /* ... or it falls through (conditional jumps, FOR_ITER) */
    DP_IRF_NOFALL = 4,    /* never falls through (JUMP, RETURN_VALUE, RAISE, RERAISE) */
    DP_IRF_SETUP = 8,     /* 3.8-3.10 SETUP_*: `target` is the handler of a new block */
    DP_IRF_BLOCK = 16,    /* 3.8-3.10 block-stack bookkeeping (SETUP_*, POP_BLOCK, 3.8's finally ops) */
    DP_IRF_NORAISE = 32,  /* cannot raise */
    DP_IRF_POPS_TEST = 64, /* a conditional jump that pops its operand both ways (POP_JUMP_IF_*) */
};
enum { DP_EFFECT_VARIES = -1 };
typedef struct dp_irop_info {
    const char *name;
    uint8_t flags;        /* DP_IRF_* */
    int8_t in, out, keep; /* fixed stack effect (see dp_effect), or DP_EFFECT_VARIES */
} dp_irop_info;
/* Stack effect: the top `in` values are replaced by `out` values, of which
 * the bottom `keep` are inputs left as they were ([it] -> [it, next] is
 * in 1, out 2, keep 1). */
typedef struct dp_effect {
    int32_t in, out, keep;
} dp_effect;

extern const dp_irop_info dp_irop_table[IR_OP_COUNT + 1];
/* The properties of op (the last entry, "?", for an op out of range). */
static inline const dp_irop_info *dp_op_info(int op) {
    return &dp_irop_table[op >= 0 && op < IR_OP_COUNT ? op : IR_OP_COUNT];
}
/* Name of an IR op, for disassembly and messages ("?" if none). */
const char *dp_irop_name(int op);
/* The effect of x when it falls through (jumping = 0) or takes its jump
 * (a SETUP_*: enters its handler).  The layout matters only for the
 * handler ops, whose except block holds three values under a block stack
 * (lay->block_stack).  -1 when no effect is fixed (3.8's finally
 * machinery, a bad argument). */
int dp_ir_effect(const dp_instr *x, const dp_layout *lay, int jumping, dp_effect *e);
/* Classifications read off the table. */
static inline int dp_is_jump(int op) { return (dp_op_info(op)->flags & DP_IRF_JUMP) != 0; }
static inline int dp_is_cond_jump(int op) {
    return (dp_op_info(op)->flags & (DP_IRF_JUMP | DP_IRF_COND)) == (DP_IRF_JUMP | DP_IRF_COND);
}
static inline int dp_is_pop_jump(int op) { return (dp_op_info(op)->flags & DP_IRF_POPS_TEST) != 0; }
static inline int dp_falls_through(int op) { return !(dp_op_info(op)->flags & DP_IRF_NOFALL); }
static inline int dp_can_raise(int op) { return !(dp_op_info(op)->flags & DP_IRF_NORAISE); }
/* Text listing of a lifted function (index, offset, line, op, args, target,
 * exception table), for debugging and tests. */
void dp_ir_dump(const dp_irfunc *f, dp_buf *out);
/* The same; with `effects`, each instruction's stack effect (irop.c) too. */
void dp_ir_dump_ex(const dp_irfunc *f, int effects, dp_buf *out);

#endif
