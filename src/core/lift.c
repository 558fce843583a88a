/* Lifting: the wordcode of any supported CPython version becomes the
 * version-neutral IR of ir.h.
 *
 * Pass 1 (decode) splits co_code into instructions (EXTENDED_ARG prefixes
 * folded, inline CACHE units skipped), computes every jump target as a byte
 * offset, reads the exception table and the line table.  Pass 2 (translate)
 * turns each instruction into zero or more IR instructions; most opcodes
 * mean the same under every version that has them, so a table maps them,
 * and the few whose meaning moved get a small handler each.  Pass 3 turns
 * byte-offset targets into IR indices and flags jump targets.
 *
 * An instruction "starts" at its first EXTENDED_ARG prefix: that is where
 * jumps and exception-table entries point, and it is the IR `offset`. */
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "opcodes.h"

#define MAX_CODE_BYTES ((size_t)1 << 28) /* keeps every index in int32_t */
#define EXC_MATCH_SCAN 64                /* IR instructions searched back for an except clause's DUP_TOP */
#define MAX_ROT_N 4096
#define MAX_IR ((int32_t)1 << 26)

typedef struct dinstr {
    int32_t start;   /* offset of the first EXTENDED_ARG prefix, or of the opcode */
    int32_t off;     /* offset of the opcode itself */
    int32_t next;    /* offset after the inline caches */
    uint16_t op;     /* dp_opname */
    uint32_t arg;    /* with EXTENDED_ARG folded in; 0 for opcodes without argument */
    int64_t target;  /* jump target byte offset, or -1 */
    int32_t line;
    int32_t ir_first, ir_count;
    uint8_t is_target; /* some jump or exception handler lands here */
    uint8_t fold;      /* absorbed by a neighbour: becomes IR_NOP */
} dinstr;

typedef struct raw_exc {
    int64_t start, end, target; /* bytes */
    int32_t depth;
    int lasti;
} raw_exc;

typedef struct lifter {
    dp_arena *a;
    const dp_code *code;
    dp_error *err;
    const dp_optable *tab;
    int minor;
    const dp_layout *lay; /* (the output's: dp_irfunc.lay) */
    dinstr *d;
    int32_t nd;
    int32_t *unit_dec;  /* code unit -> index of the instruction covering it */
    int32_t *unit_line; /* code unit -> source line or -1 */
    raw_exc *exc;
    int32_t nexc;
    const char **localsplus; /* 3.11+: varnames, then cells that are not arguments, then frees */
    size_t nlocalsplus;
    dp_instr *ins;
    int32_t n, cap;
    dp_const *none; /* for the synthesized `is not None` of 3.10 pattern matching */
} lifter;

static int fail_oom(lifter *L) { return dp_fail(L->err, -1, "out of memory while lifting"); }

/* ------------------------------------------------------------------ pass 1 */

static int is_backward_jump(uint16_t op) {
    return op == DPO_JUMP_BACKWARD || op == DPO_JUMP_BACKWARD_NO_INTERRUPT ||
           op == DPO_POP_JUMP_BACKWARD_IF_FALSE || op == DPO_POP_JUMP_BACKWARD_IF_TRUE ||
           op == DPO_POP_JUMP_BACKWARD_IF_NONE || op == DPO_POP_JUMP_BACKWARD_IF_NOT_NONE;
}

/* 3.8/3.9 count jumps in bytes, 3.10+ in code units. */
static int64_t jump_target(const lifter *L, const dinstr *di, uint8_t flags) {
    int64_t scale = L->minor >= 10 ? 2 : 1;
    int64_t arg = (int64_t)di->arg * scale;
    if (flags & DP_OPF_JABS)
        return arg;
    if (L->minor >= 11 && is_backward_jump(di->op))
        return di->next - arg;
    int64_t t = di->next + arg;
    /* Exhausted 3.12 FOR_ITER skips its END_FOR; 3.13 skips END_FOR and POP_TOP. */
    if (di->op == DPO_FOR_ITER && L->minor == 12)
        t += 2;
    else if (di->op == DPO_FOR_ITER && L->minor >= 13)
        t += 4;
    return t;
}

static int decode(lifter *L) {
    const dp_code *c = L->code;
    size_t units = c->codelen / 2;
    L->d = dp_alloc_array(L->a, units, sizeof *L->d);
    L->unit_dec = dp_alloc_array(L->a, units, sizeof *L->unit_dec);
    if (L->d == NULL || L->unit_dec == NULL)
        return fail_oom(L);
    size_t pos = 0;
    while (pos < c->codelen) {
        dinstr *di = &L->d[L->nd];
        di->start = (int32_t)pos;
        uint32_t arg = 0;
        for (;;) {
            if (pos >= c->codelen)
                return dp_fail(L->err, di->start, "EXTENDED_ARG at the end of the code");
            uint8_t byte = c->code[pos];
            arg = (arg << 8) | c->code[pos + 1];
            if (L->tab->op[byte] != DPO_EXTENDED_ARG)
                break;
            L->unit_dec[pos / 2] = L->nd;
            pos += 2;
        }
        uint8_t byte = c->code[pos];
        di->off = (int32_t)pos;
        di->op = L->tab->op[byte];
        if (di->op == DPO_UNKNOWN)
            return dp_fail(L->err, di->start, "unknown opcode %d for Python 3.%d", byte, L->minor);
        uint8_t flags = L->tab->flags[byte];
        di->arg = (flags & DP_OPF_HASARG) ? arg : 0;
        if (di->arg > INT32_MAX)
            return dp_fail(L->err, di->start, "argument %u of %s too large", (unsigned)di->arg,
                           dp_opname_str[di->op]);
        size_t next = pos + 2 + 2 * (size_t)L->tab->caches[byte];
        if (next > c->codelen)
            return dp_fail(L->err, di->start, "%s: inline caches run past the end of the code",
                           dp_opname_str[di->op]);
        for (; pos < next; pos += 2)
            L->unit_dec[pos / 2] = L->nd;
        di->next = (int32_t)next;
        di->target = (flags & (DP_OPF_JREL | DP_OPF_JABS)) ? jump_target(L, di, flags) : -1;
        L->nd++;
    }
    return 0;
}

/* Index of the instruction starting exactly at byte `off`, or -1. */
static int32_t instr_at(const lifter *L, int64_t off) {
    if (off < 0 || off >= (int64_t)L->code->codelen || (off & 1))
        return -1;
    int32_t k = L->unit_dec[off / 2];
    return L->d[k].start == off ? k : -1;
}

/* 3.11+ exception table: big-endian varints of 6-bit groups (bit 6 = more),
 * bit 7 marks the first byte of an entry.  Fields: start, length, target in
 * code units, then depth << 1 | lasti. */
static int read_exc_varint(const uint8_t *p, size_t len, size_t *i, int64_t *out) {
    int64_t v = 0;
    for (int k = 0; k < 6; k++) {
        if (*i >= len)
            return -1;
        uint8_t b = p[(*i)++];
        v = (v << 6) | (b & 63);
        if (!(b & 64)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static int read_exctable(lifter *L) {
    const uint8_t *p = L->code->exctable;
    size_t len = L->code->exctablelen, i = 0;
    if (L->minor < 11 || p == NULL || len == 0)
        return 0;
    L->exc = dp_alloc_array(L->a, len / 4 + 1, sizeof *L->exc); /* >= 4 bytes per entry */
    if (L->exc == NULL)
        return fail_oom(L);
    while (i < len) {
        int64_t start, length, target, dl;
        if (read_exc_varint(p, len, &i, &start) < 0 || read_exc_varint(p, len, &i, &length) < 0 ||
            read_exc_varint(p, len, &i, &target) < 0 || read_exc_varint(p, len, &i, &dl) < 0)
            return dp_fail(L->err, -1, "malformed exception table at byte %zu", i);
        raw_exc *e = &L->exc[L->nexc++];
        e->start = start * 2;
        e->end = (start + length) * 2;
        e->target = target * 2;
        e->depth = (int32_t)(dl >> 1);
        e->lasti = (int)(dl & 1);
        if (instr_at(L, e->start) < 0 || e->end > (int64_t)L->code->codelen ||
            instr_at(L, e->target) < 0 || dl > INT32_MAX)
            return dp_fail(L->err, -1, "exception table entry %d: range or handler out of bounds", L->nexc - 1);
        if (length == 0)
            L->nexc--; /* covers nothing */
    }
    return 0;
}

/* ---- line tables: fill unit_line (one entry per code unit, -1 = none) ---- */

/* Lines are summed in 64 bits: hostile tables must not overflow. */
static void fill_lines(lifter *L, int64_t from, int64_t to, int64_t line) {
    int64_t units = (int64_t)(L->code->codelen / 2);
    int32_t v = line >= 0 && line <= INT32_MAX ? (int32_t)line : -1;
    if (from < 0)
        from = 0;
    for (int64_t u = from; u < to && u < units; u++)
        L->unit_line[u] = v;
}

/* 3.8/3.9 co_lnotab: (byte increment, signed line increment) pairs. */
static void lines_lnotab(lifter *L, const uint8_t *p, size_t len) {
    int64_t addr = 0;
    int64_t line = L->code->firstlineno;
    for (size_t i = 0; i + 1 < len; i += 2) {
        int64_t next = addr + p[i];
        fill_lines(L, addr / 2, (next + 1) / 2, line);
        addr = next;
        line += (int8_t)p[i + 1];
    }
    fill_lines(L, addr / 2, INT64_MAX, line);
}

/* 3.10 co_linetable: (byte length, signed line delta; -128 = no line) pairs. */
static void lines_310(lifter *L, const uint8_t *p, size_t len) {
    int64_t addr = 0;
    int64_t line = L->code->firstlineno;
    for (size_t i = 0; i + 1 < len; i += 2) {
        int64_t next = addr + p[i];
        int8_t delta = (int8_t)p[i + 1];
        if (delta != -128)
            line += delta;
        fill_lines(L, addr / 2, (next + 1) / 2, delta == -128 ? -1 : line);
        addr = next;
    }
}

/* Location-table varints are little-endian 6-bit groups, bit 6 = more. */
static int read_loc_varint(const uint8_t *p, size_t len, size_t *i, uint32_t *out) {
    uint32_t v = 0;
    for (int shift = 0; shift < 32; shift += 6) {
        if (*i >= len)
            return -1;
        uint8_t b = p[(*i)++];
        v |= (uint32_t)(b & 63) << shift;
        if (!(b & 64)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static int read_loc_svarint(const uint8_t *p, size_t len, size_t *i, int32_t *out) {
    uint32_t u;
    if (read_loc_varint(p, len, i, &u) < 0)
        return -1;
    *out = (u & 1) ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
    return 0;
}

/* 3.11+ location table (Objects/locations.md).  A malformed table ends the
 * decoding: the remaining instructions keep line -1. */
static void lines_311(lifter *L, const uint8_t *p, size_t len) {
    int64_t unit = 0;
    int64_t line = L->code->firstlineno;
    size_t i = 0;
    while (i < len) {
        uint8_t b = p[i++];
        if (!(b & 0x80))
            return;
        int code = (b >> 3) & 15, n = (b & 7) + 1;
        int has_line = 1;
        uint32_t skip;
        int32_t delta = 0;
        if (code == 15) {
            has_line = 0;
        } else if (code == 14) {
            if (read_loc_svarint(p, len, &i, &delta) < 0 || read_loc_varint(p, len, &i, &skip) < 0 ||
                read_loc_varint(p, len, &i, &skip) < 0 || read_loc_varint(p, len, &i, &skip) < 0)
                return;
        } else if (code == 13) {
            if (read_loc_svarint(p, len, &i, &delta) < 0)
                return;
        } else if (code >= 10) {
            delta = code - 10;
            i += 2; /* start and end column */
        } else {
            i += 1; /* column byte */
        }
        line += delta;
        fill_lines(L, unit, unit + n, has_line ? line : -1);
        unit += n;
    }
}

static int read_lines(lifter *L) {
    size_t units = L->code->codelen / 2;
    L->unit_line = dp_alloc_array(L->a, units, sizeof *L->unit_line);
    if (L->unit_line == NULL)
        return fail_oom(L);
    for (size_t u = 0; u < units; u++)
        L->unit_line[u] = -1;
    const uint8_t *p = L->code->linetable;
    size_t len = L->code->linetablelen;
    if (p == NULL)
        return 0;
    if (L->minor <= 9)
        lines_lnotab(L, p, len);
    else if (L->minor == 10)
        lines_310(L, p, len);
    else
        lines_311(L, p, len);
    return 0;
}

/* ---- names ---- */

static int cmp_str_ptr(const void *x, const void *y) {
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* 3.11+ index space of LOAD_FAST/LOAD_DEREF & co.  Sorting a copy of the
 * varnames keeps the "cell that is also an argument" test O(n log n). */
static int build_localsplus(lifter *L) {
    const dp_code *c = L->code;
    size_t nv = c->varnames.n, nc = c->cellvars.n, nf = c->freevars.n;
    const char **sorted = dp_alloc_array(L->a, nv + 1, sizeof *sorted);
    L->localsplus = dp_alloc_array(L->a, nv + nc + nf + 1, sizeof *L->localsplus);
    if (sorted == NULL || L->localsplus == NULL)
        return fail_oom(L);
    for (size_t k = 0; k < nv; k++) {
        if (c->varnames.v[k] == NULL)
            return dp_fail(L->err, -1, "co_varnames[%zu] is missing", k);
        sorted[k] = L->localsplus[L->nlocalsplus++] = c->varnames.v[k];
    }
    qsort(sorted, nv, sizeof *sorted, cmp_str_ptr);
    for (size_t k = 0; k < nc; k++) {
        const char *s = c->cellvars.v[k];
        if (s == NULL)
            return dp_fail(L->err, -1, "co_cellvars[%zu] is missing", k);
        if (nv == 0 || bsearch(&s, sorted, nv, sizeof *sorted, cmp_str_ptr) == NULL)
            L->localsplus[L->nlocalsplus++] = s;
    }
    for (size_t k = 0; k < nf; k++)
        L->localsplus[L->nlocalsplus++] = c->freevars.v[k];
    return 0;
}

static const char *pick(const dp_strs *s, size_t i) { return i < s->n ? s->v[i] : NULL; }

static const char *co_name(const lifter *L, uint32_t i) { return pick(&L->code->names, i); }

static const char *local_name(const lifter *L, uint32_t i) {
    if (L->minor >= 11)
        return i < L->nlocalsplus ? L->localsplus[i] : NULL;
    return pick(&L->code->varnames, i);
}

/* <= 3.10: cells then frees; 3.11+: the same index space as locals. */
static const char *cell_name(const lifter *L, uint32_t i) {
    if (L->minor >= 11)
        return local_name(L, i);
    size_t nc = L->code->cellvars.n;
    return i < nc ? L->code->cellvars.v[i] : pick(&L->code->freevars, i - nc);
}

/* ------------------------------------------------------------------ pass 2 */

static dp_instr *emit_at(lifter *L, const dinstr *di, int op) {
    if (L->n == MAX_IR) {
        dp_fail(L->err, di->start, "more than %d IR instructions", (int)MAX_IR);
        return NULL;
    }
    if (L->n == L->cap) {
        /* first sized for the usual IR (about one op per instruction), so
         * that the array is rarely copied */
        int64_t want = L->cap ? (int64_t)L->cap * 2 : (int64_t)L->nd + L->nd / 4 + 16;
        int32_t cap = want > MAX_IR ? MAX_IR : (int32_t)want;
        dp_instr *ins = dp_alloc_array(L->a, (size_t)cap, sizeof *ins);
        if (ins == NULL) {
            fail_oom(L);
            return NULL;
        }
        if (L->n)
            memcpy(ins, L->ins, (size_t)L->n * sizeof *ins);
        L->ins = ins;
        L->cap = cap;
    }
    dp_instr *in = &L->ins[L->n++];
    memset(in, 0, sizeof *in);
    in->op = (uint16_t)op;
    in->target = -1;
    in->offset = di->start;
    in->line = di->line;
    return in;
}

#define EMIT(op)                                      \
    do {                                              \
        if ((in = emit_at(L, di, (op))) == NULL)      \
            return -1;                                \
    } while (0)

static int const_at(lifter *L, const dinstr *di, uint32_t i, const dp_const **out) {
    if (i >= L->code->nconsts || L->code->consts[i] == NULL)
        return dp_fail(L->err, di->start, "%s: constant index %u out of range (%zu constants)",
                       dp_opname_str[di->op], (unsigned)i, L->code->nconsts);
    *out = L->code->consts[i];
    return 0;
}

static int need_name(lifter *L, const dinstr *di, const char *name, uint32_t idx, const char *table) {
    if (name == NULL)
        return dp_fail(L->err, di->start, "%s: index %u out of range of %s", dp_opname_str[di->op],
                       (unsigned)idx, table);
    return 0;
}

static int emit_name(lifter *L, const dinstr *di, int op, uint32_t idx) {
    const char *s = co_name(L, idx);
    dp_instr *in;
    if (need_name(L, di, s, idx, "co_names") < 0)
        return -1;
    EMIT(op);
    in->arg = (int32_t)idx;
    in->name = s;
    return 0;
}

static int emit_local(lifter *L, const dinstr *di, int op, uint32_t idx) {
    const char *s = local_name(L, idx);
    dp_instr *in;
    if (need_name(L, di, s, idx, "the local variables") < 0)
        return -1;
    EMIT(op);
    in->arg = (int32_t)idx;
    in->name = s;
    return 0;
}

static int emit_cell(lifter *L, const dinstr *di, int op, uint32_t idx) {
    const char *s = cell_name(L, idx);
    dp_instr *in;
    if (need_name(L, di, s, idx, "the cell and free variables") < 0)
        return -1;
    EMIT(op);
    in->arg = (int32_t)idx;
    in->name = s;
    return 0;
}

static int emit_arg(lifter *L, const dinstr *di, int op, int32_t arg) {
    dp_instr *in;
    EMIT(op);
    in->arg = arg;
    return 0;
}

/* Opcodes that mean the same in every version having them. */
enum { K_NONE, K_PLAIN, K_ARG, K_NAME, K_LOCAL, K_CELL, K_CONST, K_JUMP };

typedef struct op_map {
    uint8_t ir;   /* dp_irop */
    uint8_t kind; /* K_*: where the IR arg/name/const/target come from */
    int8_t arg;   /* K_PLAIN: the IR arg */
    int8_t arg2;  /* the IR arg2 */
} op_map;

static const op_map SIMPLE[DPO_COUNT] = {
    /* interpreter bookkeeping */
    [DPO_NOP] = {IR_NOP, K_PLAIN, 0, 0},
    [DPO_RESUME] = {IR_NOP, K_PLAIN, 0, 0},
    [DPO_PRECALL] = {IR_NOP, K_PLAIN, 0, 0},
    [DPO_MAKE_CELL] = {IR_NOP, K_PLAIN, 0, 0},
    [DPO_COPY_FREE_VARS] = {IR_NOP, K_PLAIN, 0, 0},
    [DPO_GEN_START] = {IR_RETURN_GENERATOR, K_PLAIN, 0, 0},
    /* loads and stores */
    [DPO_LOAD_CONST] = {IR_LOAD_CONST, K_CONST, 0, 0},
    [DPO_LOAD_NAME] = {IR_LOAD_NAME, K_NAME, 0, 0},
    [DPO_STORE_NAME] = {IR_STORE_NAME, K_NAME, 0, 0},
    [DPO_DELETE_NAME] = {IR_DELETE_NAME, K_NAME, 0, 0},
    [DPO_STORE_GLOBAL] = {IR_STORE_GLOBAL, K_NAME, 0, 0},
    [DPO_DELETE_GLOBAL] = {IR_DELETE_GLOBAL, K_NAME, 0, 0},
    [DPO_STORE_ATTR] = {IR_STORE_ATTR, K_NAME, 0, 0},
    [DPO_DELETE_ATTR] = {IR_DELETE_ATTR, K_NAME, 0, 0},
    [DPO_LOAD_METHOD] = {IR_LOAD_METHOD, K_NAME, 0, 0},
    [DPO_IMPORT_NAME] = {IR_IMPORT_NAME, K_NAME, 0, 0},
    [DPO_IMPORT_FROM] = {IR_IMPORT_FROM, K_NAME, 0, 0},
    [DPO_LOAD_FAST] = {IR_LOAD_FAST, K_LOCAL, 0, 0},
    [DPO_LOAD_FAST_CHECK] = {IR_LOAD_FAST, K_LOCAL, 0, 0},
    [DPO_LOAD_FAST_AND_CLEAR] = {IR_LOAD_FAST_AND_CLEAR, K_LOCAL, 0, 0},
    [DPO_STORE_FAST] = {IR_STORE_FAST, K_LOCAL, 0, 0},
    [DPO_DELETE_FAST] = {IR_DELETE_FAST, K_LOCAL, 0, 0},
    [DPO_LOAD_DEREF] = {IR_LOAD_DEREF, K_CELL, 0, 0},
    [DPO_STORE_DEREF] = {IR_STORE_DEREF, K_CELL, 0, 0},
    [DPO_DELETE_DEREF] = {IR_DELETE_DEREF, K_CELL, 0, 0},
    [DPO_LOAD_CLOSURE] = {IR_LOAD_CLOSURE, K_CELL, 0, 0},
    [DPO_LOAD_CLASSDEREF] = {IR_LOAD_CLASSDEREF, K_CELL, 0, 0},
    [DPO_PUSH_NULL] = {IR_PUSH_NULL, K_PLAIN, 0, 0},
    [DPO_LOAD_ASSERTION_ERROR] = {IR_LOAD_ASSERTION_ERROR, K_PLAIN, 0, 0},
    [DPO_LOAD_BUILD_CLASS] = {IR_LOAD_BUILD_CLASS, K_PLAIN, 0, 0},
    /* operators */
    [DPO_UNARY_POSITIVE] = {IR_UNARY, K_PLAIN, DP_UN_POS, 0},
    [DPO_UNARY_NEGATIVE] = {IR_UNARY, K_PLAIN, DP_UN_NEG, 0},
    [DPO_UNARY_NOT] = {IR_UNARY, K_PLAIN, DP_UN_NOT, 0},
    [DPO_UNARY_INVERT] = {IR_UNARY, K_PLAIN, DP_UN_INVERT, 0},
    [DPO_BINARY_ADD] = {IR_BINARY_OP, K_PLAIN, DP_BIN_ADD, 0},
    [DPO_BINARY_AND] = {IR_BINARY_OP, K_PLAIN, DP_BIN_AND, 0},
    [DPO_BINARY_FLOOR_DIVIDE] = {IR_BINARY_OP, K_PLAIN, DP_BIN_FLOORDIV, 0},
    [DPO_BINARY_LSHIFT] = {IR_BINARY_OP, K_PLAIN, DP_BIN_LSHIFT, 0},
    [DPO_BINARY_MATRIX_MULTIPLY] = {IR_BINARY_OP, K_PLAIN, DP_BIN_MATMUL, 0},
    [DPO_BINARY_MULTIPLY] = {IR_BINARY_OP, K_PLAIN, DP_BIN_MUL, 0},
    [DPO_BINARY_MODULO] = {IR_BINARY_OP, K_PLAIN, DP_BIN_MOD, 0},
    [DPO_BINARY_OR] = {IR_BINARY_OP, K_PLAIN, DP_BIN_OR, 0},
    [DPO_BINARY_POWER] = {IR_BINARY_OP, K_PLAIN, DP_BIN_POW, 0},
    [DPO_BINARY_RSHIFT] = {IR_BINARY_OP, K_PLAIN, DP_BIN_RSHIFT, 0},
    [DPO_BINARY_SUBTRACT] = {IR_BINARY_OP, K_PLAIN, DP_BIN_SUB, 0},
    [DPO_BINARY_TRUE_DIVIDE] = {IR_BINARY_OP, K_PLAIN, DP_BIN_TRUEDIV, 0},
    [DPO_BINARY_XOR] = {IR_BINARY_OP, K_PLAIN, DP_BIN_XOR, 0},
    [DPO_INPLACE_ADD] = {IR_BINARY_OP, K_PLAIN, DP_BIN_ADD, 1},
    [DPO_INPLACE_AND] = {IR_BINARY_OP, K_PLAIN, DP_BIN_AND, 1},
    [DPO_INPLACE_FLOOR_DIVIDE] = {IR_BINARY_OP, K_PLAIN, DP_BIN_FLOORDIV, 1},
    [DPO_INPLACE_LSHIFT] = {IR_BINARY_OP, K_PLAIN, DP_BIN_LSHIFT, 1},
    [DPO_INPLACE_MATRIX_MULTIPLY] = {IR_BINARY_OP, K_PLAIN, DP_BIN_MATMUL, 1},
    [DPO_INPLACE_MULTIPLY] = {IR_BINARY_OP, K_PLAIN, DP_BIN_MUL, 1},
    [DPO_INPLACE_MODULO] = {IR_BINARY_OP, K_PLAIN, DP_BIN_MOD, 1},
    [DPO_INPLACE_OR] = {IR_BINARY_OP, K_PLAIN, DP_BIN_OR, 1},
    [DPO_INPLACE_POWER] = {IR_BINARY_OP, K_PLAIN, DP_BIN_POW, 1},
    [DPO_INPLACE_RSHIFT] = {IR_BINARY_OP, K_PLAIN, DP_BIN_RSHIFT, 1},
    [DPO_INPLACE_SUBTRACT] = {IR_BINARY_OP, K_PLAIN, DP_BIN_SUB, 1},
    [DPO_INPLACE_TRUE_DIVIDE] = {IR_BINARY_OP, K_PLAIN, DP_BIN_TRUEDIV, 1},
    [DPO_INPLACE_XOR] = {IR_BINARY_OP, K_PLAIN, DP_BIN_XOR, 1},
    [DPO_IS_OP] = {IR_IS, K_ARG, 0, 0},
    [DPO_CONTAINS_OP] = {IR_CONTAINS, K_ARG, 0, 0},
    [DPO_BINARY_SUBSCR] = {IR_BINARY_SUBSCR, K_PLAIN, 0, 0},
    [DPO_STORE_SUBSCR] = {IR_STORE_SUBSCR, K_PLAIN, 0, 0},
    [DPO_DELETE_SUBSCR] = {IR_DELETE_SUBSCR, K_PLAIN, 0, 0},
    [DPO_BINARY_SLICE] = {IR_BINARY_SLICE, K_PLAIN, 0, 0},
    [DPO_STORE_SLICE] = {IR_STORE_SLICE, K_PLAIN, 0, 0},
    [DPO_BUILD_SLICE] = {IR_BUILD_SLICE, K_ARG, 0, 0},
    /* calls and functions (the 3.11+ CALL, keyword and MAKE_FUNCTION forms are handled below) */
    [DPO_CALL_FUNCTION] = {IR_CALL, K_ARG, 0, 0},
    [DPO_CALL_METHOD] = {IR_CALL, K_ARG, 0, DP_CALL_PAIR},
    [DPO_SET_FUNCTION_ATTRIBUTE] = {IR_SET_FUNCTION_ATTRIBUTE, K_ARG, 0, 0},
    /* building values */
    [DPO_BUILD_TUPLE] = {IR_BUILD_TUPLE, K_ARG, 0, 0},
    [DPO_BUILD_LIST] = {IR_BUILD_LIST, K_ARG, 0, 0},
    [DPO_BUILD_SET] = {IR_BUILD_SET, K_ARG, 0, 0},
    [DPO_BUILD_MAP] = {IR_BUILD_MAP, K_ARG, 0, 0},
    [DPO_BUILD_CONST_KEY_MAP] = {IR_BUILD_CONST_KEY_MAP, K_ARG, 0, 0},
    [DPO_BUILD_STRING] = {IR_BUILD_STRING, K_ARG, 0, 0},
    [DPO_LIST_APPEND] = {IR_LIST_APPEND, K_ARG, 0, 0},
    [DPO_SET_ADD] = {IR_SET_ADD, K_ARG, 0, 0},
    [DPO_MAP_ADD] = {IR_MAP_ADD, K_ARG, 0, 0},
    [DPO_LIST_EXTEND] = {IR_LIST_EXTEND, K_ARG, 0, 0},
    [DPO_SET_UPDATE] = {IR_SET_UPDATE, K_ARG, 0, 0},
    [DPO_DICT_UPDATE] = {IR_DICT_UPDATE, K_ARG, 0, 0},
    [DPO_DICT_MERGE] = {IR_DICT_MERGE, K_ARG, 0, 0},
    [DPO_LIST_TO_TUPLE] = {IR_LIST_TO_TUPLE, K_PLAIN, 0, 0},
    [DPO_BUILD_TUPLE_UNPACK] = {IR_BUILD_UNPACK, K_ARG, 0, 'T'},
    [DPO_BUILD_LIST_UNPACK] = {IR_BUILD_UNPACK, K_ARG, 0, 'L'},
    [DPO_BUILD_SET_UNPACK] = {IR_BUILD_UNPACK, K_ARG, 0, 'S'},
    [DPO_BUILD_MAP_UNPACK] = {IR_BUILD_UNPACK, K_ARG, 0, 'M'},
    [DPO_BUILD_TUPLE_UNPACK_WITH_CALL] = {IR_BUILD_UNPACK, K_ARG, 0, 'C'},
    [DPO_BUILD_MAP_UNPACK_WITH_CALL] = {IR_BUILD_UNPACK, K_ARG, 0, 'K'},
    [DPO_FORMAT_VALUE] = {IR_FORMAT_VALUE, K_ARG, 0, 0},
    [DPO_FORMAT_SIMPLE] = {IR_FORMAT_VALUE, K_PLAIN, 0, 0},
    [DPO_FORMAT_WITH_SPEC] = {IR_FORMAT_VALUE, K_PLAIN, DP_FMT_HAS_SPEC, 0},
    [DPO_CONVERT_VALUE] = {IR_CONVERT_VALUE, K_ARG, 0, 0},
    [DPO_UNPACK_SEQUENCE] = {IR_UNPACK_SEQUENCE, K_ARG, 0, 0},
    [DPO_UNPACK_EX] = {IR_UNPACK_EX, K_ARG, 0, 0},
    /* control flow */
    [DPO_RETURN_VALUE] = {IR_RETURN_VALUE, K_PLAIN, 0, 0},
    [DPO_JUMP_FORWARD] = {IR_JUMP, K_JUMP, 0, 0},
    [DPO_JUMP_ABSOLUTE] = {IR_JUMP, K_JUMP, 0, 0},
    [DPO_JUMP_BACKWARD] = {IR_JUMP, K_JUMP, 0, 0},
    [DPO_JUMP_BACKWARD_NO_INTERRUPT] = {IR_JUMP, K_JUMP, 0, 0},
    [DPO_POP_JUMP_IF_FALSE] = {IR_POP_JUMP_IF_FALSE, K_JUMP, 0, 0},
    [DPO_POP_JUMP_IF_TRUE] = {IR_POP_JUMP_IF_TRUE, K_JUMP, 0, 0},
    [DPO_POP_JUMP_IF_NONE] = {IR_POP_JUMP_IF_NONE, K_JUMP, 0, 0},
    [DPO_POP_JUMP_IF_NOT_NONE] = {IR_POP_JUMP_IF_NOT_NONE, K_JUMP, 0, 0},
    [DPO_POP_JUMP_FORWARD_IF_FALSE] = {IR_POP_JUMP_IF_FALSE, K_JUMP, 0, 0},
    [DPO_POP_JUMP_FORWARD_IF_TRUE] = {IR_POP_JUMP_IF_TRUE, K_JUMP, 0, 0},
    [DPO_POP_JUMP_FORWARD_IF_NONE] = {IR_POP_JUMP_IF_NONE, K_JUMP, 0, 0},
    [DPO_POP_JUMP_FORWARD_IF_NOT_NONE] = {IR_POP_JUMP_IF_NOT_NONE, K_JUMP, 0, 0},
    [DPO_POP_JUMP_BACKWARD_IF_FALSE] = {IR_POP_JUMP_IF_FALSE, K_JUMP, 0, 0},
    [DPO_POP_JUMP_BACKWARD_IF_TRUE] = {IR_POP_JUMP_IF_TRUE, K_JUMP, 0, 0},
    [DPO_POP_JUMP_BACKWARD_IF_NONE] = {IR_POP_JUMP_IF_NONE, K_JUMP, 0, 0},
    [DPO_POP_JUMP_BACKWARD_IF_NOT_NONE] = {IR_POP_JUMP_IF_NOT_NONE, K_JUMP, 0, 0},
    [DPO_JUMP_IF_FALSE_OR_POP] = {IR_JUMP_IF_FALSE_OR_POP, K_JUMP, 0, 0},
    [DPO_JUMP_IF_TRUE_OR_POP] = {IR_JUMP_IF_TRUE_OR_POP, K_JUMP, 0, 0},
    [DPO_GET_ITER] = {IR_GET_ITER, K_PLAIN, 0, 0},
    [DPO_FOR_ITER] = {IR_FOR_ITER, K_JUMP, 0, 0},
    [DPO_RAISE_VARARGS] = {IR_RAISE, K_ARG, 0, 0},
    [DPO_RERAISE] = {IR_RERAISE, K_ARG, 0, 0},
    /* generators and coroutines */
    [DPO_YIELD_VALUE] = {IR_YIELD_VALUE, K_PLAIN, 0, 0},
    [DPO_GET_YIELD_FROM_ITER] = {IR_GET_YIELD_FROM_ITER, K_PLAIN, 0, 0},
    [DPO_GET_AWAITABLE] = {IR_GET_AWAITABLE, K_ARG, 0, 0},
    [DPO_GET_AITER] = {IR_GET_AITER, K_PLAIN, 0, 0},
    [DPO_GET_ANEXT] = {IR_GET_ANEXT, K_PLAIN, 0, 0},
    [DPO_END_ASYNC_FOR] = {IR_END_ASYNC_FOR, K_PLAIN, 0, 0},
    [DPO_BEFORE_ASYNC_WITH] = {IR_BEFORE_ASYNC_WITH, K_PLAIN, 0, 0},
    [DPO_ASYNC_GEN_WRAP] = {IR_ASYNC_GEN_WRAP, K_PLAIN, 0, 0},
    /* exceptions and with */
    [DPO_PUSH_EXC_INFO] = {IR_PUSH_EXC_INFO, K_PLAIN, 0, 0},
    [DPO_POP_EXCEPT] = {IR_POP_EXCEPT, K_PLAIN, 0, 0},
    [DPO_CHECK_EXC_MATCH] = {IR_CHECK_EXC_MATCH, K_PLAIN, 0, 0},
    [DPO_CHECK_EG_MATCH] = {IR_CHECK_EG_MATCH, K_PLAIN, 0, 0},
    [DPO_PREP_RERAISE_STAR] = {IR_PREP_RERAISE_STAR, K_PLAIN, 0, 0},
    [DPO_BEFORE_WITH] = {IR_BEFORE_WITH, K_PLAIN, 0, 0},
    [DPO_WITH_EXCEPT_START] = {IR_WITH_EXCEPT_START, K_PLAIN, 0, 0},
    [DPO_SETUP_FINALLY] = {IR_SETUP_FINALLY, K_JUMP, 0, 0},
    [DPO_SETUP_WITH] = {IR_SETUP_WITH, K_JUMP, 0, 0},
    [DPO_SETUP_ASYNC_WITH] = {IR_SETUP_ASYNC_WITH, K_JUMP, 0, 0},
    [DPO_POP_BLOCK] = {IR_POP_BLOCK, K_PLAIN, 0, 0},
    [DPO_BEGIN_FINALLY] = {IR_BEGIN_FINALLY, K_PLAIN, 0, 0},
    [DPO_END_FINALLY] = {IR_END_FINALLY, K_PLAIN, 0, 0},
    [DPO_CALL_FINALLY] = {IR_CALL_FINALLY, K_JUMP, 0, 0},
    [DPO_POP_FINALLY] = {IR_POP_FINALLY, K_ARG, 0, 0},
    [DPO_WITH_CLEANUP_START] = {IR_WITH_CLEANUP_START, K_PLAIN, 0, 0},
    [DPO_WITH_CLEANUP_FINISH] = {IR_WITH_CLEANUP_FINISH, K_PLAIN, 0, 0},
    /* imports, classes, misc */
    [DPO_IMPORT_STAR] = {IR_IMPORT_STAR, K_PLAIN, 0, 0},
    [DPO_SETUP_ANNOTATIONS] = {IR_SETUP_ANNOTATIONS, K_PLAIN, 0, 0},
    [DPO_PRINT_EXPR] = {IR_PRINT_EXPR, K_PLAIN, 0, 0},
    /* pattern matching (3.10's MATCH_CLASS / MATCH_KEYS are handled below) */
    [DPO_MATCH_MAPPING] = {IR_MATCH_MAPPING, K_PLAIN, 0, 0},
    [DPO_MATCH_SEQUENCE] = {IR_MATCH_SEQUENCE, K_PLAIN, 0, 0},
    [DPO_GET_LEN] = {IR_GET_LEN, K_PLAIN, 0, 0},
    [DPO_COPY_DICT_WITHOUT_KEYS] = {IR_COPY_DICT_WITHOUT_KEYS, K_PLAIN, 0, 0},
};

static int lift_simple(lifter *L, const dinstr *di, const op_map *m) {
    dp_instr *in;
    switch (m->kind) {
    case K_NAME:
        return emit_name(L, di, m->ir, di->arg);
    case K_LOCAL:
        return emit_local(L, di, m->ir, di->arg);
    case K_CELL:
        return emit_cell(L, di, m->ir, di->arg);
    case K_CONST: {
        const dp_const *c = NULL;
        if (const_at(L, di, di->arg, &c) < 0)
            return -1;
        EMIT(m->ir);
        in->arg = (int32_t)di->arg;
        in->cst = c;
        return 0;
    }
    case K_JUMP:
        if (di->target < 0 || di->target >= (int64_t)L->code->codelen)
            return dp_fail(L->err, di->start, "%s: jump target out of range", dp_opname_str[di->op]);
        EMIT(m->ir);
        in->target = (int32_t)di->target; /* a byte offset until resolve_targets() */
        return 0;
    case K_ARG:
        EMIT(m->ir);
        in->arg = (int32_t)di->arg;
        in->arg2 = m->arg2;
        return 0;
    default: /* K_PLAIN */
        EMIT(m->ir);
        in->arg = m->arg;
        in->arg2 = m->arg2;
        return 0;
    }
}

/* ---- neighbours: instructions folded into the one that needs them ---- */

static const dinstr *prev_instr(const lifter *L, int32_t i, uint16_t op) {
    return i > 0 && L->d[i - 1].op == op && !L->d[i].is_target ? &L->d[i - 1] : NULL;
}

static const dinstr *next_instr(const lifter *L, int32_t i, uint16_t op) {
    return i + 1 < L->nd && L->d[i + 1].op == op && !L->d[i + 1].is_target ? &L->d[i + 1] : NULL;
}

/* The LOAD_CONST right before instruction i (and not jumped over) becomes
 * IR_NOP; its constant is returned to the instruction that consumes it. */
static int take_prev_const(lifter *L, int32_t i, const char *why, const dp_const **out) {
    const dinstr *p = prev_instr(L, i, DPO_LOAD_CONST);
    if (p == NULL || p->ir_count != 1 || L->ins[p->ir_first].op != IR_LOAD_CONST)
        return dp_fail(L->err, L->d[i].start, "%s: expected %s in a LOAD_CONST right before it",
                       dp_opname_str[L->d[i].op], why);
    dp_instr *c = &L->ins[p->ir_first];
    *out = c->cst;
    c->op = IR_NOP;
    c->arg = 0;
    c->cst = NULL;
    return 0;
}

static int take_prev_none(lifter *L, int32_t i) {
    const dp_const *c = NULL;
    if (take_prev_const(L, i, "the None it sends", &c) < 0)
        return -1;
    if (c->kind != DP_CONST_NONE)
        return dp_fail(L->err, L->d[i].start, "%s: the value sent first is not None",
                       dp_opname_str[L->d[i].op]);
    return 0;
}

static int take_prev_kwnames(lifter *L, int32_t i, const dp_const **out) {
    if (take_prev_const(L, i, "the keyword names", out) < 0)
        return -1;
    if ((*out)->kind != DP_CONST_TUPLE)
        return dp_fail(L->err, L->d[i].start, "keyword names are not a tuple");
    return 0;
}

static int kwnames_at(lifter *L, const dinstr *kw, const dp_const **out) {
    if (const_at(L, kw, kw->arg, out) < 0)
        return -1;
    if ((*out)->kind != DP_CONST_TUPLE)
        return dp_fail(L->err, kw->start, "KW_NAMES: constant is not a tuple");
    return 0;
}

/* 3.11 KW_NAMES k; PRECALL n; CALL n / 3.12 KW_NAMES k; CALL n. */
static const dinstr *kwnames_of_call(const lifter *L, int32_t i) {
    if (L->minor == 11) {
        const dinstr *pre = prev_instr(L, i, DPO_PRECALL);
        return pre ? prev_instr(L, i - 1, DPO_KW_NAMES) : NULL;
    }
    return prev_instr(L, i, DPO_KW_NAMES);
}

static int lift_kw_names(lifter *L, int32_t i) {
    const dinstr *di = &L->d[i];
    const dinstr *pre = L->minor == 11 ? next_instr(L, i, DPO_PRECALL) : NULL;
    const dinstr *call = next_instr(L, L->minor == 11 ? i + 1 : i, DPO_CALL);
    if ((L->minor == 11 && pre == NULL) || call == NULL)
        return dp_fail(L->err, di->start, "KW_NAMES is not followed by %s", L->minor == 11 ? "PRECALL; CALL" : "CALL");
    return emit_arg(L, di, IR_NOP, 0);
}

static int lift_call(lifter *L, int32_t i) {
    const dinstr *di = &L->d[i], *kw = kwnames_of_call(L, i);
    const dp_const *names = NULL;
    dp_instr *in;
    if (kw != NULL && kwnames_at(L, kw, &names) < 0)
        return -1;
    if (di->op == DPO_CALL_KW || di->op == DPO_CALL_FUNCTION_KW)
        if (take_prev_kwnames(L, i, &names) < 0)
            return -1;
    EMIT(IR_CALL);
    in->arg = (int32_t)di->arg;
    in->cst = names;
    in->arg2 = di->op == DPO_CALL_FUNCTION_KW ? 0 : DP_CALL_PAIR;
    return 0;
}

static int lift_make_function(lifter *L, int32_t i) {
    const dinstr *di = &L->d[i];
    if (L->minor <= 10) {
        const dp_const *qualname = NULL;
        if (take_prev_const(L, i, "the qualified name", &qualname) < 0)
            return -1;
    }
    return emit_arg(L, di, IR_MAKE_FUNCTION, (int32_t)di->arg);
}

/* Can `op` be part of the type an except clause matches (a name, an
 * attribute, a tuple of them, a call)?  Its effect is irop.c's. */
static int builds_exc_type(int op) {
    switch (op) {
    case IR_LOAD_CONST: case IR_LOAD_NAME: case IR_LOAD_GLOBAL: case IR_LOAD_FAST: case IR_LOAD_DEREF:
    case IR_LOAD_CLASSDEREF: case IR_PUSH_NULL: case IR_NOP: case IR_LOAD_ATTR: case IR_LOAD_METHOD:
    case IR_BUILD_TUPLE: case IR_BUILD_LIST: case IR_BINARY_SUBSCR: case IR_BINARY_OP: case IR_CALL:
        return 1;
    default:
        return 0;
    }
}

/* <= 3.10 `DUP_TOP; <type>; COMPARE_OP exception-match` (or JUMP_IF_NOT_EXC_MATCH)
 * compares a copy of the exception and leaves one value fewer than
 * IR_CHECK_EXC_MATCH ([exc, type] -> [exc, bool]).  Dropping the DUP_TOP makes
 * the two agree, as in 3.11's `<type>; CHECK_EXC_MATCH`. */
static int drop_exc_dup(lifter *L, int32_t i) {
    int need = 1;
    for (int32_t j = L->n - 1; j >= 0 && j >= L->n - EXC_MATCH_SCAN; j--) {
        dp_instr *in = &L->ins[j];
        const dinstr *src = &L->d[L->unit_dec[in->offset / 2]];
        if (need == 0) {
            if (in->op == IR_COPY && in->arg == 1) {
                in->op = IR_NOP;
                in->arg = 0;
                return 0;
            }
            break;
        }
        dp_effect e;
        if (!builds_exc_type(in->op) || dp_ir_effect(in, L->lay, 0, &e) < 0 || (src->is_target && src->ir_first == j))
            break;
        need -= e.out;
        if (need < 0)
            break;
        need += e.in;
    }
    return dp_fail(L->err, L->d[i].start, "%s: exception match without the usual DUP_TOP before the type",
                   dp_opname_str[L->d[i].op]);
}

/* 3.13 TO_BOOL.  Before a conditional jump, which tests the value itself,
 * it vanishes (the jump takes its place as a target); elsewhere it is
 * IR_NOP with arg2 = 1: the value is converted to bool (see expr.c). */
static int lift_to_bool(lifter *L, int32_t i) {
    if (next_instr(L, i, DPO_POP_JUMP_IF_FALSE) || next_instr(L, i, DPO_POP_JUMP_IF_TRUE))
        return 0;
    if (emit_arg(L, &L->d[i], IR_NOP, 0) < 0)
        return -1;
    L->ins[L->n - 1].arg2 = DP_NOP_TO_BOOL;
    return 0;
}

static int lift_compare(lifter *L, int32_t i) {
    const dinstr *di = &L->d[i];
    uint32_t cmp = L->minor >= 13 ? di->arg >> 5 : L->minor == 12 ? di->arg >> 4 : di->arg;
    if (cmp <= DP_CMP_GE) {
        if (emit_arg(L, di, IR_COMPARE, (int32_t)cmp) < 0)
            return -1;
        /* 3.13: the result converted to bool (as TO_BOOL, arg2 = 1) */
        L->ins[L->n - 1].arg2 = L->minor >= 13 && (di->arg & 16) != 0 ? DP_NOP_TO_BOOL : 0;
        return 0;
    }
    if (L->minor <= 10) { /* 3.8's in, not in, is, is not, exception match */
        if (cmp == 6 || cmp == 7)
            return emit_arg(L, di, IR_CONTAINS, (int32_t)(cmp - 6));
        if (cmp == 8 || cmp == 9)
            return emit_arg(L, di, IR_IS, (int32_t)(cmp - 8));
        if (cmp == 10)
            return drop_exc_dup(L, i) < 0 ? -1 : emit_arg(L, di, IR_CHECK_EXC_MATCH, 0);
    }
    return dp_fail(L->err, di->start, "COMPARE_OP: unknown comparison %u", (unsigned)di->arg);
}

static int lift_jump_if_not_exc_match(lifter *L, int32_t i) {
    const dinstr *di = &L->d[i];
    const op_map jump = {IR_POP_JUMP_IF_FALSE, K_JUMP, 0, 0};
    if (drop_exc_dup(L, i) < 0 || emit_arg(L, di, IR_CHECK_EXC_MATCH, 0) < 0)
        return -1;
    return lift_simple(L, di, &jump);
}

static int lift_binary_op(lifter *L, const dinstr *di) {
    dp_instr *in;
    if (di->arg >= 2 * DP_BIN_COUNT)
        return dp_fail(L->err, di->start, "BINARY_OP: unknown operator %u", (unsigned)di->arg);
    EMIT(IR_BINARY_OP);
    in->arg = (int32_t)(di->arg % DP_BIN_COUNT);
    in->arg2 = di->arg >= DP_BIN_COUNT;
    return 0;
}

/* 3.11+ LOAD_GLOBAL: bit 0 pushes NULL (before the global in 3.11/3.12, after in 3.13). */
static int lift_load_global(lifter *L, const dinstr *di) {
    dp_instr *in;
    if (L->minor <= 10)
        return emit_name(L, di, IR_LOAD_GLOBAL, di->arg);
    int null = di->arg & 1;
    if (null && L->minor <= 12)
        EMIT(IR_PUSH_NULL);
    if (emit_name(L, di, IR_LOAD_GLOBAL, di->arg >> 1) < 0)
        return -1;
    if (null && L->minor >= 13)
        EMIT(IR_PUSH_NULL);
    return 0;
}

/* 3.12+ LOAD_ATTR: bit 0 asks for a method load. */
static int lift_load_attr(lifter *L, const dinstr *di) {
    if (L->minor <= 11)
        return emit_name(L, di, IR_LOAD_ATTR, di->arg);
    return emit_name(L, di, (di->arg & 1) ? IR_LOAD_METHOD : IR_LOAD_ATTR, di->arg >> 1);
}

static int lift_load_super_attr(lifter *L, const dinstr *di) {
    if (emit_name(L, di, IR_LOAD_SUPER_ATTR, di->arg >> 2) < 0)
        return -1;
    L->ins[L->n - 1].arg = (int32_t)(di->arg & 3);
    return 0;
}

/* 3.12+ class bodies read a free variable with LOAD_LOCALS; LOAD_FROM_DICT_OR_DEREF. */
static int lift_load_locals(lifter *L, int32_t i) {
    const dinstr *di = &L->d[i];
    int folded = next_instr(L, i, DPO_LOAD_FROM_DICT_OR_DEREF) || next_instr(L, i, DPO_LOAD_FROM_DICT_OR_GLOBALS);
    return emit_arg(L, di, folded ? IR_NOP : IR_LOAD_LOCALS, 0);
}

/* 3.12+ annotation scopes and type aliases inside a class read a name from
 * the class namespace, then the globals: `LOAD_DEREF __classdict__` (or
 * LOAD_LOCALS); LOAD_FROM_DICT_OR_GLOBALS name.  That is how a plain name
 * reads in such a scope: IR_LOAD_NAME (the mapping load becomes IR_NOP). */
static int lift_load_from_dict_or_globals(lifter *L, int32_t i) {
    const dinstr *di = &L->d[i];
    const dinstr *p = prev_instr(L, i, DPO_LOAD_DEREF);
    if (p == NULL && prev_instr(L, i, DPO_LOAD_LOCALS) == NULL)
        return dp_fail(L->err, di->start, "LOAD_FROM_DICT_OR_GLOBALS without the class namespace loaded before it");
    return emit_name(L, di, IR_LOAD_NAME, di->arg);
}

/* LOAD_DEREF of the class namespace that LOAD_FROM_DICT_OR_GLOBALS (or, in
 * a type parameter scope inside a class, LOAD_FROM_DICT_OR_DEREF) reads. */
static int folds_into_dict_or_globals(const lifter *L, int32_t i) {
    return L->d[i].op == DPO_LOAD_DEREF && (next_instr(L, i, DPO_LOAD_FROM_DICT_OR_GLOBALS) != NULL ||
                                            next_instr(L, i, DPO_LOAD_FROM_DICT_OR_DEREF) != NULL);
}

static int lift_load_from_dict_or_deref(lifter *L, int32_t i) {
    const dinstr *di = &L->d[i];
    if (prev_instr(L, i, DPO_LOAD_LOCALS) == NULL && prev_instr(L, i, DPO_LOAD_DEREF) == NULL)
        return dp_fail(L->err, di->start, "LOAD_FROM_DICT_OR_DEREF without the class namespace loaded before it");
    return emit_cell(L, di, IR_LOAD_CLASSDEREF, di->arg);
}

/* Stack shuffles of 3.8-3.10 rewritten as 3.11's COPY/SWAP:
 * ROT_n moves the top below the next n-1 values = SWAP n, SWAP n-1, ..., SWAP 2. */
static int lift_rot(lifter *L, const dinstr *di, uint32_t n) {
    if (n == 0 || n > MAX_ROT_N)
        return dp_fail(L->err, di->start, "%s: cannot rotate %u values", dp_opname_str[di->op], (unsigned)n);
    if (n == 1)
        return emit_arg(L, di, IR_NOP, 0);
    for (uint32_t k = n; k >= 2; k--)
        if (emit_arg(L, di, IR_SWAP, (int32_t)k) < 0)
            return -1;
    return 0;
}

static int lift_copy_swap(lifter *L, const dinstr *di) {
    int swap = di->op == DPO_SWAP;
    if (di->arg < (swap ? 2u : 1u))
        return dp_fail(L->err, di->start, "%s %u is invalid", dp_opname_str[di->op], (unsigned)di->arg);
    return emit_arg(L, di, swap ? IR_SWAP : IR_COPY, (int32_t)di->arg);
}

/* 3.8-3.10 `LOAD_CONST None; YIELD_FROM`. */
static int lift_yield_from(lifter *L, int32_t i) {
    if (take_prev_none(L, i) < 0)
        return -1;
    return emit_arg(L, &L->d[i], IR_YIELD_FROM, 0);
}

/* 3.11+: LOAD_CONST None; SEND exit; YIELD_VALUE; RESUME; JUMP_BACKWARD_NO_INTERRUPT send;
 * then (3.12+) END_SEND at `exit`, with the loop's CLEANUP_THROW just before it
 * when the compiler placed it inline (inside exception handlers).  The whole
 * loop is one IR_YIELD_FROM. */
static int lift_send(lifter *L, int32_t i) {
    dinstr *di = &L->d[i];
    int32_t end = i + 4; /* first instruction after the loop */
    int ok = end <= L->nd && L->d[i + 1].op == DPO_YIELD_VALUE && L->d[i + 2].op == DPO_RESUME &&
             L->d[i + 3].op == DPO_JUMP_BACKWARD_NO_INTERRUPT && L->d[i + 3].target == di->start;
    if (ok && L->minor >= 12) {
        if (end < L->nd && L->d[end].op == DPO_CLEANUP_THROW)
            end++;
        ok = end < L->nd && L->d[end].op == DPO_END_SEND && di->target == L->d[end].start;
        end++;
    } else if (ok) {
        ok = di->target == L->d[i + 3].next;
    }
    if (!ok)
        return dp_fail(L->err, di->start, "SEND is not part of a yield-from/await loop");
    if (take_prev_none(L, i) < 0)
        return -1;
    for (int32_t k = i + 1; k < end; k++)
        L->d[k].fold = 1;
    return emit_arg(L, di, IR_YIELD_FROM, 0);
}

/* 3.12+ `CLEANUP_THROW; JUMP_BACKWARD(_NO_INTERRUPT) to END_SEND` is a SEND
 * loop's throw() path, reached only through the exception-table entry that
 * lift drops: both become IR_NOP so no jump lands inside the IR_YIELD_FROM. */
static int lift_cleanup_throw(lifter *L, int32_t i) {
    const dinstr *j = i + 1 < L->nd ? &L->d[i + 1] : NULL;
    int32_t k = j != NULL && j->target >= 0 ? instr_at(L, j->target) : -1;
    if (k >= 0 && L->d[k].op == DPO_END_SEND && SIMPLE[j->op].ir == IR_JUMP && SIMPLE[j->op].kind == K_JUMP)
        L->d[i + 1].fold = 1;
    return emit_arg(L, &L->d[i], IR_NOP, 0);
}

/* RETURN_GENERATOR's result and the PRINT / IMPORT_STAR intrinsics' None are
 * popped right away; the IR ops have no result, so the POP_TOP goes. */
static int pop_follows(lifter *L, int32_t i) {
    if (next_instr(L, i, DPO_POP_TOP) == NULL)
        return dp_fail(L->err, L->d[i].start, "%s is not followed by POP_TOP", dp_opname_str[L->d[i].op]);
    L->d[i + 1].fold = 1;
    return 0;
}

static int lift_intrinsic_1(lifter *L, int32_t i) {
    const dinstr *di = &L->d[i];
    switch (di->arg) {
    case 1: return pop_follows(L, i) < 0 ? -1 : emit_arg(L, di, IR_PRINT_EXPR, 0);
    case 2: return pop_follows(L, i) < 0 ? -1 : emit_arg(L, di, IR_IMPORT_STAR, 0);
    case 3: return emit_arg(L, di, IR_STOPITERATION_ERROR, 0);
    case 4: return emit_arg(L, di, IR_ASYNC_GEN_WRAP, 0);
    case 5: return emit_arg(L, di, IR_UNARY, DP_UN_POS);
    case 6: return emit_arg(L, di, IR_LIST_TO_TUPLE, 0);
    default: return emit_arg(L, di, IR_CALL_INTRINSIC_1, (int32_t)di->arg);
    }
}

static int lift_intrinsic_2(lifter *L, const dinstr *di) {
    if (di->arg == 1)
        return emit_arg(L, di, IR_PREP_RERAISE_STAR, 0);
    return emit_arg(L, di, IR_CALL_INTRINSIC_2, (int32_t)di->arg);
}

/* 3.13 superinstructions: two locals packed as hi << 4 | lo. */
static int lift_fast_pair(lifter *L, const dinstr *di) {
    int first = di->op == DPO_LOAD_FAST_LOAD_FAST ? IR_LOAD_FAST : IR_STORE_FAST;
    int second = di->op == DPO_STORE_FAST_STORE_FAST ? IR_STORE_FAST : IR_LOAD_FAST;
    if (emit_local(L, di, first, di->arg >> 4) < 0)
        return -1;
    return emit_local(L, di, second, di->arg & 15);
}

/* 3.10's pattern-matching ops also push `result is not None`. */
static int push_is_not_none(lifter *L, const dinstr *di) {
    dp_instr *in;
    if (L->none == NULL && (L->none = dp_const_new(L->a, DP_CONST_NONE)) == NULL)
        return fail_oom(L);
    if (emit_arg(L, di, IR_COPY, 1) < 0)
        return -1;
    EMIT(IR_LOAD_CONST);
    in->cst = L->none;
    return emit_arg(L, di, IR_IS, 1);
}

static int lift_match(lifter *L, const dinstr *di) {
    int op = di->op == DPO_MATCH_CLASS ? IR_MATCH_CLASS : IR_MATCH_KEYS;
    if (emit_arg(L, di, op, di->op == DPO_MATCH_CLASS ? (int32_t)di->arg : 0) < 0)
        return -1;
    return L->minor == 10 ? push_is_not_none(L, di) : 0;
}

/* END_FOR is skipped by FOR_ITER; reached otherwise it pops the iterator and
 * the value (3.12) or just one value (3.13, followed by its own POP_TOP). */
static int lift_end_for(lifter *L, const dinstr *di) {
    if (emit_arg(L, di, IR_POP_TOP, 0) < 0)
        return -1;
    return L->minor == 12 ? emit_arg(L, di, IR_POP_TOP, 0) : 0;
}

/* END_SEND outside a SEND loop: [receiver, value] -> [value]. */
static int lift_end_send(lifter *L, const dinstr *di) {
    if (emit_arg(L, di, IR_SWAP, 2) < 0)
        return -1;
    return emit_arg(L, di, IR_POP_TOP, 0);
}

static int lift_return_const(lifter *L, const dinstr *di) {
    const op_map load = {IR_LOAD_CONST, K_CONST, 0, 0};
    if (lift_simple(L, di, &load) < 0)
        return -1;
    return emit_arg(L, di, IR_RETURN_VALUE, 0);
}

static int is_named(const char *name, const char *want) { return name != NULL && strcmp(name, want) == 0; }

/* Class-body bookkeeping of 3.12+ with no source form: the namespace kept in
 * the __classdict__ cell for the type parameter scopes inside (`LOAD_LOCALS;
 * STORE_DEREF __classdict__`, then `LOAD_CLOSURE __classdict__; STORE_NAME
 * __classdictcell__`, LOAD_FAST on 3.13), and a generic class's
 * `__type_params__ = .type_params`.  Folds the instructions after i. */
static int class_bookkeeping(lifter *L, int32_t i) {
    const dinstr *di = &L->d[i];
    if (L->minor < 12 || di->fold)
        return 0;
    const dinstr *n = &L->d[i + 1];
    if (di->op == DPO_LOAD_LOCALS && next_instr(L, i, DPO_STORE_DEREF) && is_named(cell_name(L, n->arg), "__classdict__")) {
        L->d[i + 1].fold = 1;
        return 1;
    }
    if ((di->op == DPO_LOAD_CLOSURE || di->op == DPO_LOAD_FAST) && is_named(cell_name(L, di->arg), "__classdict__") &&
        next_instr(L, i, DPO_STORE_NAME) && is_named(co_name(L, n->arg), "__classdictcell__")) {
        L->d[i + 1].fold = 1;
        return 1;
    }
    if (di->op == DPO_LOAD_LOCALS && next_instr(L, i, DPO_LOAD_FROM_DICT_OR_DEREF) &&
        is_named(cell_name(L, n->arg), ".type_params") && next_instr(L, i + 1, DPO_STORE_NAME) &&
        is_named(co_name(L, L->d[i + 2].arg), "__type_params__")) {
        L->d[i + 1].fold = L->d[i + 2].fold = 1;
        return 1;
    }
    return 0;
}

static int lift_one(lifter *L, int32_t i) {
    const dinstr *di = &L->d[i];
    if (di->fold || folds_into_dict_or_globals(L, i) || class_bookkeeping(L, i))
        return emit_arg(L, di, IR_NOP, 0);
    const op_map *m = &SIMPLE[di->op];
    if (m->kind != K_NONE)
        return lift_simple(L, di, m);
    switch (di->op) {
    case DPO_POP_TOP: return emit_arg(L, di, IR_POP_TOP, 0);
    case DPO_RETURN_GENERATOR: return pop_follows(L, i) < 0 ? -1 : emit_arg(L, di, IR_RETURN_GENERATOR, 0);
    case DPO_RETURN_CONST: return lift_return_const(L, di);
    case DPO_LOAD_GLOBAL: return lift_load_global(L, di);
    case DPO_LOAD_ATTR: return lift_load_attr(L, di);
    case DPO_LOAD_SUPER_ATTR: return lift_load_super_attr(L, di);
    case DPO_LOAD_LOCALS: return lift_load_locals(L, i);
    case DPO_LOAD_FROM_DICT_OR_DEREF: return lift_load_from_dict_or_deref(L, i);
    case DPO_LOAD_FROM_DICT_OR_GLOBALS: return lift_load_from_dict_or_globals(L, i);
    case DPO_LOAD_FAST_LOAD_FAST:
    case DPO_STORE_FAST_LOAD_FAST:
    case DPO_STORE_FAST_STORE_FAST: return lift_fast_pair(L, di);
    case DPO_COMPARE_OP: return lift_compare(L, i);
    case DPO_TO_BOOL: return lift_to_bool(L, i);
    case DPO_JUMP_IF_NOT_EXC_MATCH: return lift_jump_if_not_exc_match(L, i);
    case DPO_BINARY_OP: return lift_binary_op(L, di);
    case DPO_KW_NAMES: return lift_kw_names(L, i);
    case DPO_CALL:
    case DPO_CALL_KW:
    case DPO_CALL_FUNCTION_KW: return lift_call(L, i);
    case DPO_CALL_FUNCTION_EX: {
        int pair = L->minor >= 11 ? DP_CALL_PAIR : 0;
        if (emit_arg(L, di, IR_CALL_EX, (int32_t)(di->arg & 1)) < 0)
            return -1;
        L->ins[L->n - 1].arg2 = pair;
        return 0;
    }
    case DPO_MAKE_FUNCTION: return lift_make_function(L, i);
    case DPO_CALL_INTRINSIC_1: return lift_intrinsic_1(L, i);
    case DPO_CALL_INTRINSIC_2: return lift_intrinsic_2(L, di);
    case DPO_DUP_TOP: return emit_arg(L, di, IR_COPY, 1);
    case DPO_DUP_TOP_TWO: return emit_arg(L, di, IR_COPY, 2) < 0 ? -1 : emit_arg(L, di, IR_COPY, 2);
    case DPO_ROT_TWO: return lift_rot(L, di, 2);
    case DPO_ROT_THREE: return lift_rot(L, di, 3);
    case DPO_ROT_FOUR: return lift_rot(L, di, 4);
    case DPO_ROT_N: return lift_rot(L, di, di->arg);
    case DPO_COPY:
    case DPO_SWAP: return lift_copy_swap(L, di);
    case DPO_YIELD_FROM: return lift_yield_from(L, i);
    case DPO_SEND: return lift_send(L, i);
    case DPO_END_SEND: return lift_end_send(L, di);
    case DPO_CLEANUP_THROW: return lift_cleanup_throw(L, i);
    case DPO_END_FOR: return lift_end_for(L, di);
    case DPO_MATCH_CLASS:
    case DPO_MATCH_KEYS: return lift_match(L, di);
    default:
        /* Instrumented/specialized forms never appear in co_code. */
        return dp_fail(L->err, di->start, "unsupported opcode %s in Python 3.%d code",
                       dp_opname_str[di->op], L->minor);
    }
}

/* ------------------------------------------------------------------ pass 3 */

static int resolve_targets(lifter *L) {
    for (int32_t j = 0; j < L->n; j++) {
        dp_instr *in = &L->ins[j];
        if (in->target < 0)
            continue;
        int32_t k = instr_at(L, in->target);
        if (k < 0)
            return dp_fail(L->err, in->offset, "%s: jump into the middle of an instruction (byte %d)",
                           dp_irop_name(in->op), in->target);
        in->target = L->d[k].ir_first;
        if (dp_op_info(in->op)->flags & (DP_IRF_JUMP | DP_IRF_SETUP))
            L->ins[in->target].flags |= DP_INSTR_JUMP_TARGET;
    }
    return 0;
}

static int only_nops(const lifter *L, int32_t from, int32_t to) {
    for (int32_t j = from; j < to; j++)
        if (L->ins[j].op != IR_NOP)
            return 0;
    return from <= to;
}

/* An entry protecting only a SEND loop's cold throw path (3.12+, see
 * lift_cleanup_throw: an IR_NOP that cannot raise): dropped with the rest
 * of the loop, or the try around an await would seem to reach past the
 * code that follows it to that path. */
static int only_cleanup_throw(const lifter *L, const raw_exc *e) {
    int32_t first = instr_at(L, e->start), last = L->unit_dec[(e->end - 1) / 2];
    if (first < 0 || L->d[first].op != DPO_CLEANUP_THROW)
        return 0;
    for (int32_t k = first + 1; k <= last; k++)
        if (!L->d[k].fold)
            return 0;
    return 1;
}

/* Exception-table entries in IR indices.  Those whose handler is a SEND
 * loop's CLEANUP_THROW belong to the folded IR_YIELD_FROM and are dropped;
 * neighbours with the same handler are merged across the NOPs left behind. */
static int convert_exctable(lifter *L, dp_irfunc *out) {
    if (L->nexc == 0)
        return 0;
    out->exc = dp_alloc_array(L->a, (size_t)L->nexc, sizeof *out->exc);
    if (out->exc == NULL)
        return fail_oom(L);
    for (int32_t k = 0; k < L->nexc; k++) {
        const raw_exc *e = &L->exc[k];
        const dinstr *h = &L->d[instr_at(L, e->target)];
        if (h->op == DPO_CLEANUP_THROW || only_cleanup_throw(L, e))
            continue;
        const dinstr *last = &L->d[L->unit_dec[(e->end - 1) / 2]];
        dp_exc_entry x = {L->d[instr_at(L, e->start)].ir_first, last->ir_first + last->ir_count,
                          h->ir_first, e->depth, e->lasti};
        L->ins[x.target].flags |= DP_INSTR_JUMP_TARGET;
        dp_exc_entry *prev = out->nexc ? &out->exc[out->nexc - 1] : NULL;
        if (prev && prev->target == x.target && prev->depth == x.depth && prev->lasti == x.lasti &&
            only_nops(L, prev->end, x.start))
            prev->end = x.end;
        else
            out->exc[out->nexc++] = x;
    }
    return 0;
}

/* 3.12+: returns of a constant not fused into RETURN_CONST (DP_RETURN_ARM). */
static void mark_returned_arms(lifter *L) {
    if (L->minor < 12)
        return;
    for (int32_t j = 1; j < L->n; j++) {
        dp_instr *x = &L->ins[j];
        if (x->op == IR_RETURN_VALUE && L->ins[j - 1].op == IR_LOAD_CONST &&
            L->d[L->unit_dec[x->offset / 2]].op == DPO_RETURN_VALUE)
            x->arg2 = DP_RETURN_ARM;
    }
}

static void to_nop(dp_instr *in) {
    in->op = IR_NOP;
    in->arg = 0;
    in->cst = NULL;
}

/* A join that every way in reaches with a constant just pushed, and that
 * pops it at once (torch 2.15's code around its profiler markers:
 * `if p: t = enter(); None` / `else: None`, then POP_TOP): pushing a
 * constant and popping it does nothing, so the pushes and the pop become
 * NOPs and the branches are plain statements again.  Only where each way
 * in is a fall-through from a LOAD_CONST or a JUMP right after one that
 * nothing else jumps to, and no exception handler starts at the join. */
static int drop_constants_popped_at_joins(lifter *L, const dp_irfunc *out) {
    int32_t n = L->n;
    int32_t *first = dp_alloc_array(L->a, (size_t)n + 1, sizeof *first);
    int32_t *next = dp_alloc_array(L->a, (size_t)n + 1, sizeof *next);
    if (first == NULL || next == NULL)
        return fail_oom(L);
    for (int32_t j = 0; j < n; j++)
        first[j] = -1;
    for (int32_t q = 0; q < n; q++) /* (every instruction that can go to j, by its target) */
        if (L->ins[q].target >= 0 && L->ins[q].target < n) {
            next[q] = first[L->ins[q].target];
            first[L->ins[q].target] = q;
        }
    for (int32_t k = 0; k < out->nexc; k++)
        if (out->exc[k].target >= 0 && out->exc[k].target < n)
            first[out->exc[k].target] = -2; /* (a handler starts here) */
    for (int32_t j = 1; j < n; j++) {
        if (first[j] < 0 || L->ins[j - 1].op != IR_LOAD_CONST)
            continue;
        int32_t pop = j;
        while (pop < n && L->ins[pop].op == IR_NOP && (pop == j || first[pop] == -1))
            pop++;
        if (pop >= n || L->ins[pop].op != IR_POP_TOP || (pop > j && first[pop] != -1))
            continue;
        int ok = 1;
        for (int32_t q = first[j]; q >= 0 && ok; q = next[q])
            ok = L->ins[q].op == IR_JUMP && q > 0 && L->ins[q - 1].op == IR_LOAD_CONST && first[q] == -1;
        if (!ok)
            continue;
        for (int32_t q = first[j]; q >= 0; q = next[q])
            to_nop(&L->ins[q - 1]);
        to_nop(&L->ins[j - 1]);
        to_nop(&L->ins[pop]);
    }
    return 0;
}

/* The instruction reads co_consts[arg]. */
static int reads_const(uint16_t op) {
    return op == DPO_LOAD_CONST || op == DPO_KW_NAMES || op == DPO_RETURN_CONST || op == DPO_INSTRUMENTED_RETURN_CONST;
}

/* dp_irfunc.unused_true_before, from every instruction that reads a
 * constant by its index (not from the IR, which folds some of them into
 * other instructions: KW_NAMES into the call, `LOAD_CONST None` into
 * YIELD_FROM). */
static int find_unused_true(lifter *L, dp_irfunc *out) {
    out->unused_true_before = -1;
    size_t n = L->code->nconsts, t = n;
    for (size_t k = 0; k < n; k++)
        if (L->code->consts[k] != NULL && L->code->consts[k]->kind == DP_CONST_TRUE) {
            if (t < n) /* (two Trues: no pool of the compiler's) */
                return 0;
            t = k;
        }
    if (t + 1 >= n) /* (no True, or no constant after it to place it by) */
        return 0;
    int32_t *first = dp_alloc_array(L->a, n, sizeof *first);
    if (first == NULL)
        return fail_oom(L);
    for (size_t k = 0; k < n; k++)
        first[k] = -1;
    for (int32_t i = 0; i < L->nd; i++) { /* (in the order of offsets: the first read is the first seen) */
        const dinstr *di = &L->d[i];
        if (reads_const(di->op) && di->arg < n && first[di->arg] < 0)
            first[di->arg] = di->start;
    }
    if (first[t] >= 0)
        return 0;
    int32_t last = -1;
    for (size_t k = 1; k < n; k++) {
        if (k == t)
            continue;
        if (first[k] <= last) /* (unread, or read first before a constant numbered before it) */
            return 0;
        last = first[k];
    }
    out->unused_true_before = first[t + 1];
    return 0;
}

static void mark_targets_and_lines(lifter *L) {
    for (int32_t i = 0; i < L->nd; i++) {
        int64_t t = L->d[i].target;
        int32_t k = t >= 0 ? instr_at(L, t) : -1;
        /* a SEND loop's own back edge disappears into IR_YIELD_FROM */
        if (k >= 0 && !(L->d[i].op == DPO_JUMP_BACKWARD_NO_INTERRUPT && L->d[k].op == DPO_SEND))
            L->d[k].is_target = 1;
        L->d[i].line = L->unit_line[L->d[i].off / 2];
    }
    for (int32_t k = 0; k < L->nexc; k++)
        L->d[instr_at(L, L->exc[k].target)].is_target = 1;
}

int dp_lift(dp_arena *a, const dp_code *code, dp_irfunc *out, dp_error *err) {
    lifter L = {0};
    L.a = a;
    L.code = code;
    L.err = err;
    L.minor = code->py_minor;
    L.tab = dp_optable_for(code->py_minor);
    memset(out, 0, sizeof *out);
    out->code = code;
    out->lay = dp_layout_for(code->py_minor);
    L.lay = &out->lay;
    int rc;
    if (L.tab == NULL)
        rc = dp_fail(err, -1, "unsupported Python version 3.%d", code->py_minor);
    else if (code->codelen == 0 || code->codelen % 2 || code->codelen > MAX_CODE_BYTES || code->code == NULL)
        rc = dp_fail(err, -1, "invalid bytecode length %zu", code->codelen);
    else
        rc = decode(&L);
    if (rc == 0)
        rc = read_exctable(&L);
    if (rc == 0)
        rc = read_lines(&L);
    if (rc == 0 && L.minor >= 11)
        rc = build_localsplus(&L);
    if (rc == 0) {
        mark_targets_and_lines(&L);
        int32_t lastline = -1;
        for (int32_t i = 0; i < L.nd && rc == 0; i++) {
            dinstr *di = &L.d[i];
            di->ir_first = L.n;
            rc = lift_one(&L, i);
            di->ir_count = L.n - di->ir_first;
            if (rc == 0 && di->ir_count > 0 && di->line >= 0 && di->line != lastline) {
                L.ins[di->ir_first].flags |= DP_INSTR_LINE_START;
                lastline = di->line;
            }
        }
    }
    if (rc == 0)
        rc = resolve_targets(&L);
    if (rc == 0)
        rc = convert_exctable(&L, out);
    if (rc == 0)
        rc = drop_constants_popped_at_joins(&L, out);
    if (rc == 0)
        mark_returned_arms(&L);
    if (rc == 0)
        rc = find_unused_true(&L, out);
    if (rc < 0) {
        dp_error_where(err, code->qualname);
        out->nexc = 0;
        out->exc = NULL;
        return -1;
    }
    out->ins = L.ins;
    out->n = L.n;
    return 0;
}
