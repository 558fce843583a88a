/* match statements.  CPython compiles
 *
 *     match subject:
 *         case PATTERN if GUARD: BODY
 *         ...
 *
 * as the subject, then for each case: `COPY 1` (left out for the last case,
 * or the one before a trailing `case _:`), the pattern code, the stores of
 * the captured names, the guard, `POP_TOP` of the subject, the body and
 * `JUMP end`.  After the body come the case's failure blocks: one POP_TOP
 * per value the pattern had on the stack where it failed, falling into the
 * next case.  A trailing `case _:` is just code reached by the last failure.
 *
 * The pattern code is read by symbolic execution over "cells": every value
 * the pattern code works on is a node of the pattern tree being rebuilt.
 * Composite patterns (sequence, mapping, class, or) push cells for their
 * parts; a capture leaves its cell on the stack until a STORE names it, a
 * wildcard pops it unnamed.  Executing every SWAP and POP_TOP on the cells
 * keeps the names right however the compiler rotated the captures or
 * reordered the stores (apply_static_swaps turns SWAPs into reordered
 * STORE_FAST/POP_TOP instructions).
 *
 * From 3.12 on CPython copies a short block that returns into each jump to
 * it: the alternatives of an or-pattern may each end in a copy of the case
 * body, and a failure may lead to a copy of the `return` after the
 * statement.  It also drops the `COPY 1; POP_TOP` of a guarded `case _:`,
 * and a failure threaded back to a loop's head becomes a conditional jump
 * over a JUMP.
 *
 * Recognition is an analysis first (any mismatch: not a match statement)
 * that changes nothing but CPython's chained comparisons, which it reads
 * the way dc_chain_compare always does; only then are the bodies
 * structured with dc_region. */
#include <limits.h>
#include <string.h>

#include "dc.h"

enum { MAX_PATTERN_DEPTH = 200, MAX_GUARD_SEGS = 64 };

/* A value the pattern code works on. */
typedef struct cell {
    dp_node *node;      /* becomes this value's pattern (a P_AS placeholder until finished) */
    dp_node *pat;       /* what the value must match; NULL: anything */
    const char *name;   /* capture target, once a STORE consumed the value */
    struct cell *same;  /* or-alternative: the first alternative's cell at the same stack slot */
    int as;             /* pat is the inner cell of `pat as name` */
    int star;           /* the starred element of a sequence pattern */
    int junk;           /* no pattern applies: a keys tuple, or a finished subject awaiting POP_TOP */
} cell;

/* A jump to a failure block, with the stack depth after it. */
typedef struct mfail {
    int jump, target, depth, ctx;
} mfail;

/* Pattern-reading state of one case. */
typedef struct mp {
    dc *d;
    int p;              /* next instruction */
    cell **v;           /* the stack, from the statement's subject up */
    int n, cap;
    cell **all;         /* every cell, for the final pass */
    int nall, capall;
    mfail *f;
    int nf, capf;
    int *ctx_base;      /* per failure context: stack depth its failure blocks pop back to */
    int nctx, capctx;
    int ctx;            /* current failure context (0: the case) */
    int level;
    int cut;            /* 3.12+ or-pattern whose alternatives hold copies of the body:
                           where the first copy ends, -1 if none */
    int resume;         /* ... and where the code after the copies goes on */
} mp;

typedef struct gseg {   /* one operand of a guard */
    int start, jump, target, jumps_if;
    dp_node *e;
} gseg;

/* One case as found by the analysis. */
typedef struct mcase {
    dp_node *node;      /* S_CASE: pattern and guard */
    int start;          /* first instruction */
    int body;           /* first instruction of the body */
    int body_end;       /* end of the body, -1 while unknown */
    int next;           /* where its failure blocks end (the next case), -1 if unknown */
    int k0;             /* last case: target of a failure that pops nothing, -1 if none */
    int refutable;      /* the pattern can fail (the guard aside) */
} mcase;

/* ------------------------------------------------------------------ */
/* small helpers                                                       */

static int op_at(const dc *d, int p) { return p >= 0 && p < d->n ? d->in[p].op : -1; }

static int is_store(int op) {
    return op == IR_STORE_FAST || op == IR_STORE_NAME || op == IR_STORE_GLOBAL || op == IR_STORE_DEREF;
}

static int is_load(int op) {
    return op == IR_LOAD_CONST || op == IR_LOAD_NAME || op == IR_LOAD_GLOBAL || op == IR_LOAD_FAST ||
           op == IR_LOAD_DEREF || op == IR_LOAD_CLASSDEREF;
}

/* A small integer operand (lengths and indexes); -1 if none. */
static int small_int(const dc *d, int p) {
    if (op_at(d, p) != IR_LOAD_CONST || d->in[p].cst == NULL || d->in[p].cst->kind != DP_CONST_INT ||
        d->in[p].cst->text == NULL)
        return -1;
    const char *s = d->in[p].cst->text;
    long v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 1000000)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return (int)v;
}

/* A short block that returns (`return c`; from 3.12 on any block of up to
 * four instructions): CPython copies such exit blocks into every jump that
 * leads to them, so two targets can be the same exit.  Its length, or 0. */
static int exit_len(const dc *d, int p) {
    for (int k = 0; k < 4 && p + k < d->n; k++) {
        const dp_instr *x = &d->in[p + k];
        if (x->op == IR_RETURN_VALUE)
            return k + 1;
        if (x->target >= 0 || x->op == IR_RAISE || x->op == IR_RERAISE)
            return 0;
    }
    return 0;
}

static int is_exit_copy(const dc *d, int p) { return exit_len(d, p) > 0; }

static int ends_flow(const dc *d, int p) { return !dp_falls_through(op_at(d, p)); }

static int same_code(const dc *d, int a, int b, int len);

static int same_target(const dc *d, int a, int b) {
    int len = exit_len(d, a);
    return a == b || (len > 0 && len == exit_len(d, b) && same_code(d, a, b, len));
}

/* ------------------------------------------------------------------ */
/* the symbolic stack                                                  */

static int grow_cells(mp *m, cell ***v, int *cap, int need) {
    if (need <= *cap)
        return 0;
    int ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    if (ncap > 1 << 20)
        return -1;
    cell **nv = dp_alloc_array(m->d->sh->ar, (size_t)ncap, sizeof *nv);
    if (nv == NULL)
        return -1;
    if (*cap)
        memcpy(nv, *v, (size_t)*cap * sizeof *nv);
    *v = nv;
    *cap = ncap;
    return 0;
}

static int push(mp *m, cell *c) {
    if (c == NULL || grow_cells(m, &m->v, &m->cap, m->n + 1) < 0)
        return -1;
    m->v[m->n++] = c;
    return 0;
}

static cell *pop(mp *m) { return m->n > 0 ? m->v[--m->n] : NULL; }

static cell *top(const mp *m) { return m->n > 0 ? m->v[m->n - 1] : NULL; }

static cell *new_cell(mp *m, int junk) {
    cell *c = dp_alloc(m->d->sh->ar, sizeof *c);
    if (c == NULL)
        return NULL;
    memset(c, 0, sizeof *c);
    c->junk = junk;
    if (!junk) {
        if ((c->node = dp_node_new(m->d->sh->ar, P_AS)) == NULL ||
            grow_cells(m, &m->all, &m->capall, m->nall + 1) < 0)
            return NULL;
        m->all[m->nall++] = c;
    }
    return c;
}

static int swap(mp *m, int k) {
    if (k < 2 || k > m->n)
        return -1;
    cell *t = m->v[m->n - 1];
    m->v[m->n - 1] = m->v[m->n - k];
    m->v[m->n - k] = t;
    return 0;
}

static int record_fail(mp *m, int jump, int target, int ctx) {
    if (m->nf == m->capf) {
        int ncap = m->capf ? m->capf * 2 : 16;
        mfail *nf = ncap > 1 << 20 ? NULL : dp_alloc_array(m->d->sh->ar, (size_t)ncap, sizeof *nf);
        if (nf == NULL)
            return -1;
        if (m->nf)
            memcpy(nf, m->f, (size_t)m->nf * sizeof *nf);
        m->f = nf;
        m->capf = ncap;
    }
    m->f[m->nf++] = (mfail){jump, target, m->n, ctx};
    return 0;
}

/* Records the conditional jump at m->p as a failure of the current context
 * (with the stack as it is once the jump popped its operand) and steps over it. */
static int add_fail(mp *m) {
    if (!dc_is_pop_jump(op_at(m->d, m->p)) || record_fail(m, m->p, m->d->in[m->p].target, m->ctx) < 0)
        return -1;
    m->p++;
    return 0;
}

static int inverse_jump(int op) {
    switch (op) {
    case IR_POP_JUMP_IF_FALSE: return IR_POP_JUMP_IF_TRUE;
    case IR_POP_JUMP_IF_TRUE: return IR_POP_JUMP_IF_FALSE;
    case IR_POP_JUMP_IF_NONE: return IR_POP_JUMP_IF_NOT_NONE;
    case IR_POP_JUMP_IF_NOT_NONE: return IR_POP_JUMP_IF_NONE;
    default: return -1;
    }
}

/* 3.12+ has no backward conditional jumps: one threaded to a loop's head
 * is `inverse-op over; JUMP head; over:`.  Is the jump at p one of those? */
static int jumps_back_over(const dc *d, int p) {
    return d->in[p].target == p + 2 && op_at(d, p + 1) == IR_JUMP && d->in[p + 1].target <= p;
}

/* A failure jump `op` at m->p, maybe inverted over a backward JUMP. */
static int fail_jump(mp *m, int op) {
    const dc *d = m->d;
    int p = m->p;
    if (op_at(d, p) == op)
        return add_fail(m);
    if (op_at(d, p) != inverse_jump(op) || !jumps_back_over(d, p) ||
        record_fail(m, p + 1, d->in[p + 1].target, m->ctx) < 0)
        return -1;
    m->p += 2;
    return 0;
}

static int new_ctx(mp *m, int base) {
    if (m->nctx == m->capctx) {
        int ncap = m->capctx ? m->capctx * 2 : 8;
        int *nb = ncap > 1 << 20 ? NULL : dp_alloc_array(m->d->sh->ar, (size_t)ncap, sizeof *nb);
        if (nb == NULL)
            return -1;
        if (m->nctx)
            memcpy(nb, m->ctx_base, (size_t)m->nctx * sizeof *nb);
        m->ctx_base = nb;
        m->capctx = ncap;
    }
    m->ctx_base[m->nctx] = base;
    return m->nctx++;
}

/* Where the failure blocks of context `ctx` end: every failure jump pops
 * its values with one POP_TOP each and falls into the same instruction.
 * -1: inconsistent; -2: no failure jumps. */
static int ctx_end(const mp *m, int ctx, int *lo) {
    int end = -2;
    *lo = -1;
    for (int k = 0; k < m->nf; k++) {
        const mfail *f = &m->f[k];
        if (f->ctx != ctx)
            continue;
        int pops = f->depth - m->ctx_base[ctx];
        if (pops < 0 || f->target <= f->jump)
            return -1;
        int e = f->target + pops;
        if (end != -2 && e != end)
            return -1;
        end = e;
        for (int q = f->target; q < e; q++)
            if (op_at(m->d, q) != IR_POP_TOP)
                return -1;
        if (*lo < 0 || f->target < *lo)
            *lo = f->target;
    }
    return end;
}

/* ------------------------------------------------------------------ */
/* patterns                                                            */

static int pattern(mp *m, cell *x);

/* SWAPs (rotations of captures) and the POP_TOPs of finished values that
 * the compiler emits between sub-patterns. */
static int settle(mp *m) {
    for (;;) {
        int op = op_at(m->d, m->p);
        if (op == IR_SWAP) {
            if (swap(m, m->d->in[m->p].arg) < 0)
                return -1;
        } else if (op == IR_POP_TOP && m->n > 0 && top(m)->junk) {
            m->n--;
        } else if (op != IR_NOP) {
            return 0;
        }
        m->p++;
    }
}

/* Evaluates the name and constant loads from m->p (the operands of a
 * value, class or mapping pattern) into `out`; stops at the first other
 * instruction.  Returns the number of values, -1 on error. */
static int expr_run(mp *m, int allow_tuple, dc_stack *out) {
    out->n = 0;
    dc_spec sp;
    dc_spec_begin(m->d, &sp);
    int r = 0;
    for (;;) {
        int op = op_at(m->d, m->p);
        if (!(is_load(op) || op == IR_LOAD_ATTR || op == IR_NOP || (allow_tuple && op == IR_BUILD_TUPLE)))
            break;
        if (op != IR_NOP && (r = dc_expr_step(m->d, m->p, out)) <= 0)
            break;
        m->p++;
    }
    return dc_spec_end(m->d, &sp, r < 0 ? -1 : 0) && r >= 0 ? out->n : -1;
}

/* A dotted name (class of a class pattern, value pattern, mapping key). */
static int is_dotted(const dp_node *e) {
    while (e->kind == E_ATTR)
        e = e->a;
    return e->kind == E_NAME;
}

static int is_singleton(const dp_node *e) {
    return dc_is_const_kind(e, DP_CONST_NONE) || dc_is_const_kind(e, DP_CONST_TRUE) ||
           dc_is_const_kind(e, DP_CONST_FALSE);
}

static int valid_value(const dp_node *e) {
    return (e->kind == E_CONST && !is_singleton(e)) || (e->kind == E_ATTR && is_dotted(e));
}

/* Pushes `count` new cells for the parts of an unpacked value (the first
 * part ends on top, as UNPACK_SEQUENCE leaves it) into parts[]. */
static int unpack_cells(mp *m, cell **parts, int count) {
    for (int k = 0; k < count; k++)
        if ((parts[k] = new_cell(m, 0)) == NULL)
            return -1;
    for (int k = count - 1; k >= 0; k--)
        if (push(m, parts[k]) < 0)
            return -1;
    return 0;
}

static cell **cell_array(mp *m, int count) {
    if (count < 0 || count > 1 << 16)
        return NULL;
    return dp_alloc_array(m->d->sh->ar, (size_t)(count ? count : 1), sizeof(cell *));
}

/* [p, q, *r] and friends; x (on top) is the subject. */
static int sequence(mp *m, cell *x) {
    const dc *d = m->d;
    dp_node *seq = dp_node_new(d->sh->ar, P_SEQUENCE);
    if (seq == NULL || op_at(d, m->p + 1) != IR_POP_JUMP_IF_FALSE)
        return -1;
    m->p++;
    if (add_fail(m) < 0)
        return -1;
    int cnt = -1, exact = 0;
    if (op_at(d, m->p) == IR_GET_LEN && op_at(d, m->p + 2) == IR_COMPARE &&
        op_at(d, m->p + 3) == IR_POP_JUMP_IF_FALSE) {
        cnt = small_int(d, m->p + 1);
        int cmp = d->in[m->p + 2].arg;
        if (cnt < 0 || (cmp != DP_CMP_EQ && cmp != DP_CMP_GE))
            return -1;
        exact = cmp == DP_CMP_EQ;
        m->p += 3;
        if (add_fail(m) < 0)
            return -1;
    }
    x->pat = seq;
    int op = op_at(d, m->p);
    if (op == IR_POP_TOP) {
        /* only wildcards: [_, _], [*_], [_, *_] */
        pop(m);
        m->p++;
        int n = cnt < 0 ? 0 : cnt;
        for (int k = 0; k <= n; k++) {
            if (k == n && exact)
                break;
            cell *w = new_cell(m, 0);
            if (w == NULL || dc_add(m->d, &seq->l1, w->node) < 0)
                return -1;
            w->star = k == n;
        }
        return 0;
    }
    if (op == IR_UNPACK_SEQUENCE || op == IR_UNPACK_EX) {
        int arg = d->in[m->p].arg, star = -1, count = arg;
        if (op == IR_UNPACK_EX) {
            star = arg & 0xff;
            count = star + (arg >> 8) + 1;
            if (cnt >= 0 ? exact || cnt != count - 1 : count != 1)
                return -1;
        } else if (!exact || cnt != count) {
            return -1;
        }
        cell **parts = cell_array(m, count);
        pop(m);
        m->p++;
        if (parts == NULL || unpack_cells(m, parts, count) < 0)
            return -1;
        for (int k = 0; k < count; k++) {
            parts[k]->star = k == star;
            if (dc_add(m->d, &seq->l1, parts[k]->node) < 0 || pattern(m, parts[k]) < 0)
                return -1;
        }
        return 0;
    }
    /* a starred wildcard: the other parts are read by subscripting, those
     * before the star from the front, those after it from the back */
    if (op != IR_COPY || d->in[m->p].arg != 1 || exact || cnt < 1)
        return -1;
    int size = cnt + 1, star = 0, last = -1, nparts = 0;
    cell **at = cell_array(m, size);
    if (at == NULL)
        return -1;
    memset(at, 0, (size_t)size * sizeof *at);
    for (;;) {
        if (settle(m) < 0)
            return -1;
        if (op_at(d, m->p) != IR_COPY || d->in[m->p].arg != 1 || top(m) != x)
            break;
        int q = m->p + 1, pos = small_int(d, q), from_back = small_int(d, q + 1);
        if (pos >= 0 && op_at(d, q + 1) == IR_BINARY_SUBSCR) {
            if (last >= star || pos < star)
                return -1; /* the front parts come first, in order */
            star = pos + 1;
            m->p = q + 2;
        } else if (op_at(d, q) == IR_GET_LEN && from_back >= 1 && op_at(d, q + 2) == IR_BINARY_OP &&
                   d->in[q + 2].arg == DP_BIN_SUB && op_at(d, q + 3) == IR_BINARY_SUBSCR) {
            pos = size - from_back;
            if (pos <= star || pos <= last)
                return -1;
            last = pos;
            m->p = q + 4;
        } else {
            return -1;
        }
        if (pos >= size || (at[pos] = new_cell(m, 0)) == NULL || push(m, at[pos]) < 0 || pattern(m, at[pos]) < 0)
            return -1;
        nparts++;
    }
    if (nparts == 0 || star >= size)
        return -1;
    for (int k = 0; k < size; k++) {
        if (at[k] == NULL && (at[k] = new_cell(m, 0)) == NULL)
            return -1;
        at[k]->star = k == star;
        if (dc_add(m->d, &seq->l1, at[k]->node) < 0)
            return -1;
    }
    x->junk = 1; /* its POP_TOP may come later */
    return 0;
}

/* 3.10 reads the parts of a class or mapping pattern by subscripting the
 * matched values (`vals`, on top: `COPY 1; LOAD_CONST k; BINARY_SUBSCR`),
 * in order, and skips the wildcards; `vals` is popped after the last one
 * (that POP_TOP is taken here: the junk below it is not the pattern's). */
static int subscripted_parts(mp *m, cell *vals, int count, cell **parts) {
    const dc *d = m->d;
    memset(parts, 0, (size_t)count * sizeof *parts);
    vals->junk = 0;
    for (int last = -1;;) {
        if (settle(m) < 0)
            return -1;
        if (op_at(d, m->p) == IR_POP_TOP && top(m) == vals) {
            pop(m);
            m->p++;
            break;
        }
        int q = m->p, pos = small_int(d, q + 1);
        if (op_at(d, q) != IR_COPY || d->in[q].arg != 1 || top(m) != vals || op_at(d, q + 2) != IR_BINARY_SUBSCR)
            break;
        if (pos <= last || pos >= count)
            return -1;
        m->p = q + 3;
        if ((parts[pos] = new_cell(m, 0)) == NULL || push(m, parts[pos]) < 0 || pattern(m, parts[pos]) < 0)
            return -1;
        last = pos;
    }
    vals->junk = 1;
    for (int k = 0; k < count; k++)
        if (parts[k] == NULL && (parts[k] = new_cell(m, 0)) == NULL)
            return -1;
    return 0;
}

/* The values a class or mapping pattern matched (`vals`, a junk cell on
 * top, None when the match failed): the failure test, then each value
 * matched against its sub-pattern (parts[k]).  3.11+ tests with
 * `COPY 1; POP_JUMP_IF_NONE` and unpacks; 3.10 pushed a flag, which lift.c
 * spells `COPY 1; LOAD_CONST None; IS not`, and subscripts. */
static int matched_parts(mp *m, cell *vals, int count, cell **parts) {
    const dc *d = m->d;
    int q = m->p;
    if (op_at(d, q) != IR_COPY || d->in[q].arg != 1)
        return -1;
    if (d->lay.match_tests_none_by_is) {
        const dp_const *none = op_at(d, q + 1) == IR_LOAD_CONST ? d->in[q + 1].cst : NULL;
        if (none == NULL || none->kind != DP_CONST_NONE || op_at(d, q + 2) != IR_IS || d->in[q + 2].arg != 1 ||
            op_at(d, q + 3) != IR_POP_JUMP_IF_FALSE)
            return -1;
        m->p = q + 3;
        return add_fail(m) < 0 ? -1 : subscripted_parts(m, vals, count, parts);
    }
    if (op_at(d, q + 1) != IR_POP_JUMP_IF_NONE || op_at(d, q + 2) != IR_UNPACK_SEQUENCE || d->in[q + 2].arg != count)
        return -1;
    m->p = q + 1;
    if (add_fail(m) < 0)
        return -1;
    m->p++;
    pop(m);
    if (unpack_cells(m, parts, count) < 0)
        return -1;
    for (int k = 0; k < count; k++)
        if (pattern(m, parts[k]) < 0)
            return -1;
    return 0;
}

/* {key: p, ..., **rest}; x (on top) is the subject. */
static int mapping(mp *m, cell *x) {
    dc *d = m->d;
    dp_node *map = dp_node_new(d->sh->ar, P_MAPPING);
    if (map == NULL || op_at(d, m->p + 1) != IR_POP_JUMP_IF_FALSE)
        return -1;
    m->p++;
    if (add_fail(m) < 0)
        return -1;
    x->pat = map;
    if (op_at(d, m->p) == IR_POP_TOP) { /* {} */
        pop(m);
        m->p++;
        return 0;
    }
    int cnt = 0;
    if (op_at(d, m->p) == IR_GET_LEN) {
        cnt = small_int(d, m->p + 1);
        if (cnt < 1 || op_at(d, m->p + 2) != IR_COMPARE || d->in[m->p + 2].arg != DP_CMP_GE)
            return -1;
        m->p += 3;
        if (add_fail(m) < 0)
            return -1;
    }
    dc_stack keys = {0};
    if (expr_run(m, 1, &keys) != 1 || op_at(d, m->p) != IR_MATCH_KEYS)
        return -1;
    dp_node *kt = keys.v[0];
    if (dc_is_const_kind(kt, DP_CONST_TUPLE)) {
        for (size_t k = 0; k < kt->cst->n; k++)
            if (dc_add(d, &map->l1, dc_const(d, kt->cst->items[k])) < 0)
                return -1;
    } else if (kt->kind == E_TUPLE) {
        for (int k = 0; k < kt->l1.n; k++) {
            dp_node *key = kt->l1.v[k];
            if (!(key->kind == E_CONST || (key->kind == E_ATTR && is_dotted(key))) || dc_add(d, &map->l1, key) < 0)
                return -1;
        }
    } else {
        return -1;
    }
    if (map->l1.n != cnt)
        return -1;
    cell *kc = new_cell(m, 1), *vals = new_cell(m, 1);
    if (kc == NULL || vals == NULL || push(m, kc) < 0 || push(m, vals) < 0)
        return -1;
    m->p++;
    cell **parts = cell_array(m, cnt);
    if (parts == NULL || matched_parts(m, vals, cnt, parts) < 0)
        return -1;
    for (int k = 0; k < cnt; k++)
        if (dc_add(d, &map->l2, parts[k]->node) < 0)
            return -1;
    if (settle(m) < 0)
        return -1;
    /* 3.10 **rest: `COPY_DICT_WITHOUT_KEYS; ROT_TWO; POP_TOP` (the subject) */
    if (op_at(d, m->p) == IR_COPY_DICT_WITHOUT_KEYS && m->n >= 2 && top(m) == kc && m->v[m->n - 2] == x) {
        cell *rest = new_cell(m, 0);
        if (rest == NULL)
            return -1;
        m->v[m->n - 1] = rest;
        m->p++;
        x->junk = 1;
        map->a = rest->node;
        return 0;
    }
    /* **rest (ours when our keys are on top, with our subject below them) */
    if (op_at(d, m->p) != IR_BUILD_MAP || d->in[m->p].arg != 0 || m->n < 2 || top(m) != kc || m->v[m->n - 2] != x) {
        x->junk = 1; /* with the keys, popped by the POP_TOPs that follow */
        return 0;
    }
    /* rest = dict(subject); del rest[key] for every key */
    const dp_instr *in = d->in;
    int q = m->p;
    if (op_at(d, q + 1) != IR_SWAP || in[q + 1].arg != 3 ||
        op_at(d, q + 2) != IR_DICT_UPDATE || in[q + 2].arg != 2 || op_at(d, q + 3) != IR_UNPACK_SEQUENCE ||
        in[q + 3].arg != cnt)
        return -1;
    q += 4;
    for (int k = cnt; k >= 1; k--, q += 3)
        if (op_at(d, q) != IR_COPY || in[q].arg != 1 + k || op_at(d, q + 1) != IR_SWAP || in[q + 1].arg != 2 ||
            op_at(d, q + 2) != IR_DELETE_SUBSCR)
            return -1;
    m->p = q;
    m->n -= 2;
    cell *rest = new_cell(m, 0);
    if (rest == NULL || push(m, rest) < 0)
        return -1;
    map->a = rest->node; /* named at the end */
    return 0;
}

/* A value pattern (`== v`), a singleton (`is c`) or a class pattern; x (on
 * top) is the subject. */
static int value_or_class(mp *m, cell *x) {
    dc *d = m->d;
    dc_stack vals = {0};
    int nv = expr_run(m, 0, &vals), op = op_at(d, m->p);
    if (nv == 1 && (op == IR_COMPARE || op == IR_IS)) {
        dp_node *v = vals.v[0];
        dp_node *pn = dp_node_new(d->sh->ar, op == IR_IS ? P_SINGLETON : P_VALUE);
        if (pn == NULL)
            return -1;
        if (op == IR_IS ? d->in[m->p].arg != 0 || !is_singleton(v) : d->in[m->p].arg != DP_CMP_EQ || !valid_value(v))
            return -1;
        if (op == IR_IS)
            pn->cst = v->cst;
        else
            pn->a = v;
        x->pat = pn;
        pop(m);
        m->p++;
        return fail_jump(m, IR_POP_JUMP_IF_FALSE);
    }
    if (nv != 2 || op != IR_MATCH_CLASS)
        return -1;
    dp_node *cls = vals.v[0], *names = vals.v[1];
    int npos = d->in[m->p].arg;
    if (!is_dotted(cls) || !dc_is_const_kind(names, DP_CONST_TUPLE) || npos < 0 || npos > 1 << 16 ||
        names->cst->n > 1 << 16)
        return -1;
    int count = npos + (int)names->cst->n;
    for (size_t k = 0; k < names->cst->n; k++)
        if (names->cst->items[k]->kind != DP_CONST_STR)
            return -1;
    dp_node *pc = dp_node_new(d->sh->ar, P_CLASS);
    cell *attrs = new_cell(m, 1);
    if (pc == NULL || attrs == NULL)
        return -1;
    pc->a = cls;
    x->pat = pc;
    pop(m);
    if (push(m, attrs) < 0)
        return -1;
    m->p++;
    cell **parts = cell_array(m, count);
    if (parts == NULL || matched_parts(m, attrs, count, parts) < 0)
        return -1;
    for (int k = 0; k < count; k++) {
        dp_node *slot = parts[k]->node;
        if (k >= npos) {
            dp_node *kw = dp_node_new(d->sh->ar, E_KEYWORD);
            if (kw == NULL)
                return -1;
            kw->s = names->cst->items[k - npos]->text;
            kw->a = slot;
            slot = kw;
        }
        if (dc_add(d, k < npos ? &pc->l1 : &pc->l2, slot) < 0)
            return -1;
    }
    return 0;
}

/* Do [a, a+len) and [b, b+len) hold the same straight-line code? */
static int same_code(const dc *d, int a, int b, int len) {
    if (a < 0 || b < 0 || a + len > d->n || b + len > d->n)
        return 0;
    for (int k = 0; k < len; k++) {
        const dp_instr *x = &d->in[a + k], *y = &d->in[b + k];
        if (!dc_same_instr(x, y) || x->target >= 0 || y->target >= 0)
            return 0;
    }
    return 1;
}

/* Appends a `_` alternative to the or-pattern `orp`. */
static int add_wildcard(mp *m, dp_node *orp) {
    cell *w = new_cell(m, 0);
    return w == NULL ? -1 : dc_add(m->d, &orp->l1, w->node);
}

/* The alternatives after the first one of `p1 | p2 | ...`, which ended at
 * m->p.  Each alternative works on its own COPY of x and leaves its
 * captures above x, in the first alternative's order; `saved` is the stack
 * (depth `base`, x on top) they all start from.  Then each alternative
 * jumps to the common continuation, or (3.12+, when the continuation is a
 * short block that returns) holds its own copy of it.  When none matches,
 * x is popped and the pattern fails.  On return the stack is the one the
 * first alternative left, at the continuation. */
static int alternatives(mp *m, cell *x, cell *first, int ctx, cell **saved, int base) {
    dc *d = m->d;
    int jumps = op_at(d, m->p) == IR_JUMP, parent = m->ctx;
    int end = jumps ? d->in[m->p].target : -1, cont = jumps ? end : m->p, len = -1;
    m->p += jumps;
    dp_node *orp = dp_node_new(d->sh->ar, P_OR);
    int ncap = m->n - base, nafter = m->n;
    cell **after = cell_array(m, nafter);
    if (orp == NULL || after == NULL || ncap < 0 || dc_add(d, &orp->l1, first->node) < 0)
        return -1;
    memcpy(after, m->v, (size_t)nafter * sizeof *after);
    for (;;) {
        int lo, next = ctx_end(m, ctx, &lo);
        if (next < 0)
            return -1; /* only the last alternative can be irrefutable */
        if (!jumps && len < 0) {
            len = lo - cont; /* the copy ends where the failure blocks start */
            if (len <= 0 || !ends_flow(d, lo - 1))
                return -1;
            m->cut = lo;
        }
        memcpy(m->v, saved, (size_t)base * sizeof *saved);
        m->n = base;
        if (jumps && next == end) { /* failing into the end: a `_` follows (see below) */
            if (add_wildcard(m, orp) < 0)
                return -1;
            break;
        }
        if (op_at(d, next) == IR_POP_TOP) {
            /* none matched: pop x and fail (a jump to the next instruction is left out) */
            m->n--;
            int j = next + 1, to_next = !jumps && op_at(d, j) != IR_JUMP && !is_exit_copy(d, j);
            if (to_next ? record_fail(m, next, j, parent) < 0
                        : is_exit_copy(d, j) ? record_fail(m, j, j, parent) < 0
                                             : op_at(d, j) != IR_JUMP || record_fail(m, j, d->in[j].target, parent) < 0)
                return -1;
            /* with the jumps, the continuation follows; without, a copied
             * exit is the code after the statement */
            if (jumps ? j + (op_at(d, j) == IR_JUMP ? 1 : exit_len(d, j)) != end
                      : (m->resume = j + (op_at(d, j) == IR_JUMP)) < 0)
                return -1;
            break;
        }
        if (op_at(d, next) != IR_COPY || d->in[next].arg != 1)
            return -1;
        m->p = next + 1;
        cell *alt = new_cell(m, 0);
        if (alt == NULL || push(m, alt) < 0 || (ctx = new_ctx(m, base)) < 0)
            return -1;
        m->ctx = ctx;
        int r = pattern(m, alt);
        m->ctx = parent;
        if (r < 0 || settle(m) < 0 || m->n - base != ncap || dc_add(d, &orp->l1, alt->node) < 0)
            return -1;
        for (int k = 0; k < ncap; k++) {
            if (m->v[base + k]->junk)
                return -1;
            m->v[base + k]->same = after[base + k];
        }
        if (!jumps) {
            if (!same_code(d, cont, m->p, len))
                return -1;
            m->p += len;
            if (ctx_end(m, ctx, &lo) == -2) { /* an irrefutable last alternative */
                m->resume = m->p;
                break;
            }
            if (lo != m->p)
                return -1;
            continue;
        }
        if (m->p == end) {
            /* an irrefutable last alternative falls into the end; one whose
             * failures go there too is followed by a `_` (3.13 drops its
             * `COPY 1; POP_TOP`) */
            if (ctx_end(m, ctx, &lo) == end && add_wildcard(m, orp) < 0)
                return -1;
            break;
        }
        if (op_at(d, m->p) != IR_JUMP || d->in[m->p].target != end)
            return -1;
        m->p++;
    }
    memcpy(m->v, after, (size_t)nafter * sizeof *after);
    m->n = nafter;
    m->p = cont;
    x->pat = orp;
    x->junk = 1; /* its POP_TOP comes after the captures are rotated below it */
    return 0;
}

/* `COPY 1` on the subject x: `p as name` or `p1 | p2 | ...`.  Both start
 * with a pattern on the copy.  The first alternative of an or-pattern then
 * jumps to the end, or fails to a COPY of x for the next alternative. */
static int as_or(mp *m, cell *x) {
    dc *d = m->d;
    int base = m->n, parent = m->ctx, first_fail = m->nf;
    cell **saved = cell_array(m, base);
    cell *copy = new_cell(m, 0);
    if (saved == NULL || copy == NULL)
        return -1;
    memcpy(saved, m->v, (size_t)base * sizeof *saved);
    m->p++;
    int ctx = new_ctx(m, base);
    if (ctx < 0 || push(m, copy) < 0)
        return -1;
    m->ctx = ctx;
    int r = pattern(m, copy);
    m->ctx = parent;
    if (r < 0 || settle(m) < 0)
        return -1;
    int lo, next = ctx_end(m, ctx, &lo);
    if ((op_at(d, m->p) == IR_JUMP && d->in[m->p].target > m->p) ||
        (next > m->p && op_at(d, next) == IR_COPY && d->in[next].arg == 1))
        return alternatives(m, x, copy, ctx, saved, base);
    if (next == m->p) {
        /* `p | _` whose `_` (COPY 1; POP_TOP) 3.13 dropped: p fails to where
         * it goes on when it matches */
        dp_node *orp = dp_node_new(d->sh->ar, P_OR);
        if (orp == NULL || dc_add(d, &orp->l1, copy->node) < 0 || add_wildcard(m, orp) < 0)
            return -1;
        x->pat = orp;
        x->junk = 1;
        return 0;
    }
    for (int k = first_fail; k < m->nf; k++)
        if (m->f[k].ctx == ctx)
            m->f[k].ctx = parent;
    x->pat = copy->node;
    x->as = 1;
    return 0;
}

static int on_stack(const mp *m, const cell *x) {
    for (int k = 0; k < m->n; k++)
        if (m->v[k] == x)
            return 1;
    return 0;
}

/* The pattern for x, the value on top of the stack. */
static int pattern(mp *m, cell *x) {
    if (++m->level > MAX_PATTERN_DEPTH)
        return -1;
    dc *d = m->d;
    int r = settle(m);
    /* POP_TOPs the compiler moved here (apply_static_swaps) for values
     * above x; x itself may have gone that way */
    while (r == 0 && op_at(d, m->p) == IR_POP_TOP && top(m) != x && on_stack(m, x)) {
        pop(m);
        m->p++;
        r = settle(m);
    }
    int op = op_at(d, m->p), on_top = top(m) == x;
    if (r < 0 || !on_stack(m, x)) {
        /* fall through to the return */
    } else if (op == IR_POP_TOP) {
        pop(m); /* a wildcard */
        m->p++;
    } else if (!on_top) {
        /* a capture whose SWAPs the compiler turned into reordered stores */
    } else if (op == IR_COPY && d->in[m->p].arg == 1) {
        r = as_or(m, x);
    } else if (op == IR_MATCH_SEQUENCE) {
        r = sequence(m, x);
    } else if (op == IR_MATCH_MAPPING) {
        r = mapping(m, x);
    } else if (op == IR_POP_JUMP_IF_NOT_NONE || (op == IR_POP_JUMP_IF_NONE && jumps_back_over(d, m->p))) {
        static const dp_const none = {.kind = DP_CONST_NONE};
        if ((x->pat = dp_node_new(d->sh->ar, P_SINGLETON)) == NULL)
            r = -1;
        else {
            x->pat->cst = &none;
            pop(m);
            r = fail_jump(m, IR_POP_JUMP_IF_NOT_NONE);
        }
    } else if (is_load(op)) {
        r = value_or_class(m, x);
    }
    /* anything else: a capture, named by a later STORE */
    m->level--;
    return r;
}

/* ------------------------------------------------------------------ */
/* guards                                                              */

/* One operand of a guard at p: pure expression code up to a conditional
 * jump.  Returns 1 if found. */
static int guard_seg(dc *d, int p, gseg *s) {
    dc_stack tmp = {0};
    dc_spec sp;
    dc_spec_begin(d, &sp);
    int q = p, r = 0;
    while (q < d->n && !dc_is_pop_jump(d->in[q].op) && r >= 0) {
        int nq = q + 1;
        r = dc_chain_compare(d, q, &tmp, &nq);
        if (r == 0)
            r = dc_expr_step(d, q, &tmp);
        if (r == 0)
            r = -1;
        q = nq;
    }
    if (!dc_spec_end(d, &sp, r) || q >= d->n || tmp.n != 1)
        return 0;
    int op = d->in[q].op;
    s->start = p;
    s->jump = q;
    s->target = d->in[q].target;
    s->jumps_if = op != IR_POP_JUMP_IF_FALSE;
    s->e = tmp.v[0];
    if (jumps_back_over(d, q)) {
        s->jump = q + 1;
        s->target = d->in[q + 1].target;
        s->jumps_if = !s->jumps_if;
    }
    if (op == IR_POP_JUMP_IF_NONE || op == IR_POP_JUMP_IF_NOT_NONE) {
        dp_node *c = dc_node(d, E_COMPARE);
        if (c == NULL || (c->ops = dp_alloc(d->sh->ar, sizeof(int))) == NULL || dc_add(d, &c->l1, dc_none(d)) < 0)
            return -1;
        c->a = s->e;
        c->ops[0] = op == IR_POP_JUMP_IF_NONE ? DP_CMP_IS : DP_CMP_IS_NOT;
        c->op2 = 1; /* either spelling compiles to this jump: dc_not may flip it */
        s->e = c;
    }
    return 1;
}

static int skip_nops(const dc *d, int p) {
    while (op_at(d, p) == IR_NOP)
        p++;
    return p;
}

static int seg_at(const gseg *s, int i, int j, int pos) {
    for (int k = i; k <= j; k++)
        if (s[k].start == pos)
            return k;
    return -1;
}

/* The condition of segments i..j that holds when control reaches T (the
 * other exit being F), as compiler_jump_if lays it out. */
static dp_node *guard_cond(dc *d, const gseg *s, int i, int j, int T, int F) {
    if (i == j) {
        /* F first: with an empty body both exits are the same place, and
         * the compiler's jumps are the ones taken when the guard is false */
        const gseg *g = &s[i];
        if (same_target(d, g->target, F))
            return g->jumps_if ? dc_not(d, g->e) : g->e;
        if (same_target(d, g->target, T))
            return g->jumps_if ? g->e : dc_not(d, g->e);
        return NULL;
    }
    int split = -1;
    for (int k = i; k < j; k++) {
        int at = seg_at(s, i + 1, j, s[k].target);
        if (at > split)
            split = at;
    }
    if (split > i) {
        int L = s[split].start, other = -1;
        for (int k = i; k < split; k++) {
            int t = s[k].target;
            if (same_target(d, t, T) || same_target(d, t, F))
                other = other < 0 || same_target(d, other, t) ? t : -2;
        }
        if (other == -2)
            return NULL;
        int is_or = other >= 0 && same_target(d, other, T);
        dp_node *l = is_or ? guard_cond(d, s, i, split - 1, T, L) : guard_cond(d, s, i, split - 1, L, F);
        dp_node *r = l ? guard_cond(d, s, split, j, T, F) : NULL;
        return r ? dc_boolop(d, is_or, l, r) : NULL;
    }
    const gseg *g = &s[i];
    dp_node *rest = guard_cond(d, s, i + 1, j, T, F);
    if (rest == NULL)
        return NULL;
    if (same_target(d, g->target, T))
        return dc_boolop(d, 1, g->jumps_if ? g->e : dc_not(d, g->e), rest);
    if (same_target(d, g->target, F))
        return dc_boolop(d, 0, g->jumps_if ? dc_not(d, g->e) : g->e, rest);
    return NULL;
}

/* Reads a guard at m->p.  `stop_pop`: it ends right before a POP_TOP (the
 * subject's, when more cases follow).  Otherwise (the last case) it is the
 * longest complete condition whose false exit is `fails_to`, where the
 * pattern fails; with no such place known, where the body ends.  Sets
 * *cond and returns 1, or 0 if there is no guard here. */
static int guard(mp *m, int stop_pop, int fails_to, dp_node **cond) {
    dc *d = m->d;
    gseg s[MAX_GUARD_SEGS];
    int k = 0, best = 0, best_T = -1;
    int p = m->p;
    while (k < MAX_GUARD_SEGS) {
        int r = guard_seg(d, p, &s[k]);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        p = skip_nops(d, s[k].jump + 1);
        k++;
        int T = p, F = s[k - 1].target, ok = F > s[k - 1].jump || !stop_pop;
        for (int j = 0; j < k && ok; j++)
            ok = same_target(d, s[j].target, T) || same_target(d, s[j].target, F) || seg_at(s, j + 1, k - 1, s[j].target) > j;
        if (ok && stop_pop && op_at(d, T) == IR_POP_TOP) {
            best = k;
            best_T = T;
            break;
        }
        if (ok && !stop_pop &&
            (fails_to < 0 ? ends_flow(d, F - 1)
                          : same_target(d, F, fails_to) || (op_at(d, fails_to) == IR_JUMP && d->in[fails_to].target == F))) {
            best = k;
            best_T = T;
        }
        if (stop_pop && op_at(d, T) == IR_POP_TOP)
            break;
    }
    if (best == 0)
        return 0;
    int F = s[best - 1].target;
    if ((*cond = guard_cond(d, s, 0, best - 1, best_T, F)) == NULL)
        return d->sh->ar->failed ? -1 : 0;
    for (int j = 0; j < best; j++)
        if (same_target(d, s[j].target, F) && record_fail(m, s[j].jump, s[j].target, 0) < 0)
            return -1;
    m->p = best_T;
    return 1;
}

/* ------------------------------------------------------------------ */
/* cases                                                               */

/* Turns the cells of a case into its final pattern nodes.  Cells are made
 * before the cells of their parts, so in reverse order every part is final
 * before the pattern that holds it. */
static int finish_cells(mp *m) {
    for (int k = m->nall - 1; k >= 0; k--) {
        cell *c = m->all[k];
        const char *name = c->name;
        for (const cell *s = c->same; name == NULL && s != NULL; s = s->same)
            name = s->name;
        dp_node *n = c->node;
        if (c->star) {
            if (c->pat != NULL)
                return -1;
            n->kind = P_STAR;
            n->s = name;
        } else if (c->as) {
            if (name == NULL)
                return -1;
            n->a = c->pat;
            n->s = name;
        } else if (c->pat != NULL) {
            if (name != NULL)
                return -1;
            *n = *c->pat;
            if (n->kind == P_MAPPING && n->a != NULL) { /* **rest */
                if ((n->s = n->a->s) == NULL)
                    return -1;
                n->a = NULL;
            }
        } else {
            n->s = name; /* a capture, or `_` */
        }
    }
    return 0;
}

/* The failures of the last case: those that pop values end where the
 * failure blocks end (returned, -2 if none); `*lo` is the first failure
 * block, `*k0` a target of the failures that pop nothing (the next case or
 * the end of the statement, maybe threaded or a copied exit). */
static int last_failures(const mp *m, int *lo, int *k0) {
    int end = -2;
    *lo = *k0 = -1;
    for (int k = 0; k < m->nf; k++) {
        const mfail *f = &m->f[k];
        if (f->ctx != 0)
            continue;
        int pops = f->depth;
        if (pops == 0) {
            if (*k0 < 0 || (f->target > f->jump && (f->target < *k0 || *k0 < f->jump)))
                *k0 = f->target;
            continue;
        }
        int e = f->target + pops;
        if (f->target <= f->jump || (end != -2 && e != end))
            return -1;
        end = e;
        for (int q = f->target; q < e; q++)
            if (op_at(m->d, q) != IR_POP_TOP)
                return -1;
        if (*lo < 0 || f->target < *lo)
            *lo = f->target;
    }
    return end;
}

/* Reads the case at p.  `copy`: the subject was copied for it, more cases
 * follow; `first`: no case before it.  Returns 0 and fills *c, or -1 if
 * there is no such case here. */
static int read_case(mp *m, int p, int copy, int first, mcase *c) {
    dc *d = m->d;
    memset(c, 0, sizeof *c);
    c->start = p;
    c->body_end = c->next = c->k0 = -1;
    m->p = p;
    m->n = m->nall = m->nf = m->nctx = m->ctx = m->level = 0;
    m->cut = m->resume = -1;
    int base = copy;
    cell *root = new_cell(m, 0);
    if (root == NULL || new_ctx(m, base) != 0 || (copy && push(m, new_cell(m, 1)) < 0))
        return -1;
    /* 3.12+ leaves out the `COPY 1; POP_TOP` of a guarded `case _:` */
    int elided = copy && (op_at(d, p) != IR_COPY || d->in[p].arg != 1);
    m->p += copy && !elided;
    if (!elided && (push(m, root) < 0 || pattern(m, root) < 0))
        return -1;
    /* the stores of the captures, and the POP_TOPs of what is left */
    while (m->n > base) {
        int op = op_at(d, m->p);
        if (is_store(op)) {
            cell *v = pop(m);
            if (v->junk || v->name != NULL)
                return -1;
            v->name = d->in[m->p].name;
        } else if (op == IR_POP_TOP) {
            pop(m);
        } else if (op == IR_SWAP) {
            if (swap(m, d->in[m->p].arg) < 0)
                return -1;
        } else if (op != IR_NOP) {
            return -1;
        }
        m->p++;
    }
    int bare = root->pat == NULL && root->name == NULL;
    if (finish_cells(m) < 0 || (c->node = dc_stmt(d, S_CASE, p)) == NULL)
        return -1;
    c->node->a = root->node;
    c->refutable = m->nf > 0;
    if (copy) {
        if ((elided || op_at(d, skip_nops(d, m->p)) != IR_POP_TOP) && guard(m, 1, -1, &c->node->b) <= 0)
            return -1;
        int at = skip_nops(d, m->p), lo;
        c->next = ctx_end(m, 0, &lo);
        c->body = at + 1;
        c->body_end = m->cut >= 0 && m->cut < lo ? m->cut : lo;
        /* an irrefutable case cannot be followed by others */
        return op_at(d, at) == IR_POP_TOP && c->next >= 0 && lo > at ? 0 : -1;
    }
    int lo, k0;
    int end = last_failures(m, &lo, &k0);
    if (end == -1)
        return -1;
    int r = guard(m, 0, end >= 0 ? end : k0, &c->node->b);
    if (r < 0 || (r > 0 && (end = last_failures(m, &lo, &k0)) == -1))
        return -1;
    /* a last unguarded `case _:` after others pops nothing: it is the code
     * the last failure leads to */
    if (bare && r == 0 && !first)
        return -1;
    c->body = m->p;
    c->next = end >= 0 ? end : -1;
    c->body_end = end >= 0 ? lo : -1;
    if (m->cut >= 0) {
        c->body_end = m->cut;
        if (end < 0)
            c->next = m->resume;
    }
    c->k0 = k0;
    return 0;
}

/* ------------------------------------------------------------------ */
/* the statement                                                       */

typedef struct mshape {
    mcase *cases;
    int n;
    int dflt, dflt_end; /* a trailing `case _:` [dflt, dflt_end), dflt -1 if none */
    int exit;           /* where control goes after the statement (-1: the code ends) */
    int end;            /* first instruction after the statement */
    int fall_return;    /* no case matched: a copied return found only here, -1 if none */
    int fall_case;      /* ... which is a trailing `case _:` (other bodies go on after the statement) */
} mshape;

/* Per instruction, the first instruction whose jump targets it or the
 * start of the first exception range handled there (INT_MAX: none).  Code
 * before a statement at `start` jumps to (or handles exceptions at) q when
 * first[q] < start: a body that ends without falling through is followed by
 * such code, which belongs to an enclosing statement.  Built once per code
 * object: a scan per candidate statement made the structurer quadratic. */
static const int *first_sources(dc *d) {
    if (d->first_source != NULL)
        return d->first_source;
    int *t = dp_alloc_array(d->sh->ar, (size_t)d->n + 1, sizeof(int));
    if (t == NULL)
        return NULL;
    for (int q = 0; q <= d->n; q++)
        t[q] = INT_MAX;
    for (int j = 0; j < d->n; j++) {
        int q = d->in[j].target;
        if (q >= 0 && q <= d->n && t[q] > j)
            t[q] = j;
    }
    for (int k = 0; k < d->f.nexc; k++) {
        int q = d->f.exc[k].target;
        if (q >= 0 && q <= d->n && t[q] > d->f.exc[k].start)
            t[q] = d->f.exc[k].start;
    }
    return d->first_source = t;
}

/* Where code of an enclosing statement starts after `from`: code before
 * the statement (at `start`) jumps there, or it is the test at the bottom
 * of the enclosing while loop, a copy of the one at its head that jumps
 * back into its body. */
static int next_outside(const dc *d, const int *first, int from, int start) {
    int q = from + 1;
    for (; q < d->n && first[q] >= start; q++) {
        const dp_instr *x = &d->in[q];
        if (d->loop != NULL && dc_is_pop_jump(x->op) && x->target < start && x->target > d->loop->head) {
            int len = x->target - d->loop->head - 1, test = q - len;
            if (test > from && same_code(d, d->loop->head, test, len))
                return test;
        }
    }
    return q;
}

static int is_break(const dc *d, int t) { return d->loop != NULL && t == d->loop->brk; }

/* Where a body goes when it falls off: the first forward jump target past
 * `after` that one of its jumps leaves it for (not a `break`; the
 * compiler threads these jumps, so an inner `if` may jump there too), or
 * -1. */
static int body_exit(const dc *d, const mcase *c, int after) {
    int exit = -1;
    for (int j = c->body; j < c->body_end; j++) {
        int t = d->in[j].target;
        if (d->in[j].op != IR_FOR_ITER && t >= c->body_end && t > after && !is_break(d, t) && (exit < 0 || t < exit))
            exit = t;
    }
    return exit;
}

/* CPython copies the implicit `return None` into each jump that leads to
 * it, so it has one way in; a `return None` reached in more ways (or by a
 * JUMP, which would have been replaced by the copy) is a statement. */
static int shared_exit(const dc *d, int p) {
    int ways = p > 0 && !ends_flow(d, p - 1);
    for (int j = 0; j < d->n; j++)
        if (d->in[j].target == p && (d->in[j].op == IR_JUMP || ++ways > 1))
            return 1;
    return ways > 1;
}

static int is_none_exit(const dc *d, int p) {
    return exit_len(d, p) == 2 && op_at(d, p) == IR_LOAD_CONST && d->in[p].cst != NULL &&
           d->in[p].cst->kind == DP_CONST_NONE;
}

/* Finds the cases of the statement whose first case starts at i, and where
 * its bodies and the whole statement end. */
static int analyse(dc *d, int i, mshape *sh) {
    mp m = {0};
    m.d = d;
    int cap = 0, p = i;
    memset(sh, 0, sizeof *sh);
    for (;;) {
        if (sh->n == cap) {
            int ncap = cap ? cap * 2 : 8;
            mcase *nc = dp_alloc_array(d->sh->ar, (size_t)ncap, sizeof *nc);
            if (nc == NULL || ncap > 1 << 20)
                return -1;
            if (sh->n)
                memcpy(nc, sh->cases, (size_t)sh->n * sizeof *nc);
            sh->cases = nc;
            cap = ncap;
        }
        mcase *c = &sh->cases[sh->n];
        if (read_case(&m, p, 1, sh->n == 0, c) == 0) {
            sh->n++;
            p = c->next;
            continue;
        }
        /* the last case; if there is none here, a case read before may be
         * the last one instead (3.12+: the first alternative of an
         * or-pattern with its copy of the body reads like a whole case) */
        while (read_case(&m, p, 0, sh->n == 0, c) < 0) {
            if (sh->n == 0)
                return -1;
            c = &sh->cases[--sh->n];
            p = c->start;
        }
        sh->n++;
        break;
    }
    mcase *last = &sh->cases[sh->n - 1];
    if (sh->n == 1 && !last->refutable)
        return -1; /* a lone irrefutable case reads as an assignment (and a condition) */
    /* Only a match keeps its subject on the stack (COPY) or tests it with
     * MATCH_* or stores it.  A lone value or singleton case does none of
     * that: one comparison consumes the subject, exactly the code of
     * `if subject == v` / `is c` (with `and guard`, `else` for `case _:`),
     * which is what it reads as. */
    int kind = sh->n == 1 && last->node->a != NULL ? last->node->a->kind : -1;
    if (kind == P_VALUE || kind == P_SINGLETON)
        return -1;
    int efwd = -1;
    for (int k = 0; k < sh->n; k++) {
        int t = body_exit(d, &sh->cases[k], last->start);
        if (t >= 0 && (efwd < 0 || t < efwd))
            efwd = t;
    }
    const int *first = first_sources(d);
    if (first == NULL)
        return -1;
    int dflt = last->next;
    if (last->body_end < 0) {
        /* no failure blocks: the body ends where the failures lead, where
         * the other bodies end, or where code of an enclosing statement
         * starts */
        int lb = next_outside(d, first, last->body, i);
        if (efwd >= last->body && efwd < lb)
            lb = efwd;
        if (last->k0 >= last->body && last->k0 < lb)
            lb = last->k0; /* an empty body starts where the failures go */
        last->body_end = lb;
        dflt = last->k0 == lb ? lb : -1;
        int t = body_exit(d, last, last->start);
        if (t >= 0 && (efwd < 0 || t < efwd))
            efwd = t;
    }
    if (last->body_end < last->body || last->body_end > d->n)
        return -1;
    sh->dflt = -1;
    sh->end = dflt >= 0 ? dflt : last->body_end;
    /* bodies that fall off go round the loop: the statement ends the loop's
     * body (and its own end, after a trailing `case _:` if any, goes round
     * too rather than out of the loop) */
    int head = d->loop != NULL ? d->loop->head : -1;
    int falls_into = last->body_end <= last->body || !ends_flow(d, last->body_end - 1);
    int tail = dflt >= 0 && dflt < d->n && first[dflt] >= i && !falls_into ? next_outside(d, first, dflt, i) : sh->end;
    int loop_tail = 0, goes_round = head >= 0 && ((op_at(d, tail) == IR_JUMP && d->in[tail].target == head) ||
                                                  (op_at(d, tail - 1) == IR_JUMP && d->in[tail - 1].target == head));
    for (int k = 0; k < sh->n && goes_round && efwd < 0; k++) {
        int j = sh->cases[k].body_end - 1;
        loop_tail |= op_at(d, j) == IR_JUMP && d->in[j].target == head && j >= sh->cases[k].body;
    }
    /* A trailing `case _:` is the code the last failure leads to, up to
     * where the other bodies go (the body before it cannot fall into it).
     * When none goes anywhere it is the same as code after the statement;
     * its NOP (the line of `case _:`) tells it apart from the NOP that ends
     * an enclosing try or with block only when it runs to the end of the
     * code or of the loop. */
    if (dflt >= 0 && dflt < d->n && first[dflt] >= i && op_at(d, dflt) != IR_JUMP && !falls_into) {
        int e = next_outside(d, first, dflt, i);
        if (efwd > dflt && efwd < e)
            e = efwd;
        else if (efwd <= dflt && op_at(d, dflt) != IR_NOP && !loop_tail)
            e = -1;
        if (e > skip_nops(d, dflt) && (efwd > dflt || loop_tail || e == d->n || is_break(d, e))) {
            sh->dflt = dflt;
            sh->dflt_end = sh->end = e;
        }
    }
    /* the implicit `return None` that ends the code, copied to each exit */
    int q = sh->end;
    while (q < d->n && is_none_exit(d, q) && !shared_exit(d, q))
        q += 2;
    if (q == d->n)
        sh->end = q;
    /* no case matched: CPython may have copied the `return` after the
     * statement into the failure path; keep it when nothing else does */
    sh->fall_return = -1;
    sh->fall_case = efwd >= 0;
    if (sh->dflt < 0 && last->k0 >= 0 && is_exit_copy(d, last->k0) && last->k0 < sh->end &&
        !(sh->end < d->n ? same_target(d, last->k0, sh->end) : is_none_exit(d, last->k0)))
        sh->fall_return = last->k0;
    if (efwd >= 0)
        sh->exit = efwd;
    else if (loop_tail)
        sh->exit = head;
    else if (sh->end < d->n && op_at(d, sh->end) == IR_JUMP)
        sh->exit = d->in[sh->end].target;
    else if (last->k0 >= 0 && last->k0 < i)
        sh->exit = last->k0; /* threaded to a loop's head */
    else
        sh->exit = sh->end < d->n && !is_break(d, sh->end) ? sh->end : -1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* building the statement                                              */

static int is_freevar(const dc *d, const char *name) {
    for (size_t k = 0; k < d->code->freevars.n; k++)
        if (strcmp(d->code->freevars.v[k], name) == 0)
            return 1;
    return 0;
}

/* `global x` / `nonlocal x` for captures stored outside the function. */
static int declare_captures(dc *d, int from, int to) {
    for (int p = from; p < to; p++) {
        const dp_instr *in = &d->in[p];
        dp_nodes *decls = NULL;
        if (in->op == IR_STORE_GLOBAL && !d->is_module)
            decls = &d->globals;
        else if (in->op == IR_STORE_DEREF && !d->is_class_body && is_freevar(d, in->name))
            decls = &d->nonlocals;
        if (decls != NULL && dc_declare(d, decls, in->name) < 0)
            return -1;
    }
    return 0;
}

/* A case body [start, end).  One that ends where its loop does and can
 * fall off its end (a `break` at the end of a loop's body is no jump, only
 * the iterator's POP_TOP) leaves the loop: that takes a `break`. */
static int body(dc *d, int start, int end, int exit, const dc_stack *st, dp_nodes *out) {
    dc_stack t = {0};
    if (dc_stack_copy(d, &t, st) < 0)
        return -1;
    t.n--; /* the subject was popped */
    if (dc_region(d, start, end, exit, &t, out) < 0)
        return -1;
    if (d->loop == NULL || end != d->loop->brk || end <= start)
        return 0;
    /* reachable code (as dc_region sees it) that goes on into `end` */
    int live = 1, falls = 0;
    for (int j = start; j < end && !falls; j++) {
        live |= d->nref[j] > 0;
        if (!live)
            continue;
        falls = d->in[j].target == end && d->in[j].op != IR_FOR_ITER && !(j == end - 1 && d->in[j].op == IR_JUMP);
        live = !ends_flow(d, j);
    }
    return falls || live ? dc_add(d, out, dc_stmt(d, S_BREAK, end - 1)) : 0;
}

/* Quick test before the analysis: the subject is on the stack and i holds
 * what only a case can start with.  `base`: the stack depth where the
 * statement started (one more inside a for body, which counts the loop's
 * target slot). */
static int starts_match(const dc *d, int i, int base, const dc_stack *st) {
    if (st->n < 1 || st->v[st->n - 1]->kind >= DP_NODE_KIND_COUNT)
        return 0;
    /* the COPY before i was read as an expression step: no match started there */
    if (i > 0 && d->in[i - 1].op == IR_COPY && d->in[i - 1].arg == 1 && st->n >= 2 &&
        st->v[st->n - 1] == st->v[st->n - 2])
        return 0;
    int op = d->in[i].op;
    if (op == IR_MATCH_SEQUENCE || op == IR_MATCH_MAPPING)
        return 1;
    if (op == IR_COPY && d->in[i].arg == 1) {
        int nx = op_at(d, i + 1);
        return nx == IR_MATCH_SEQUENCE || nx == IR_MATCH_MAPPING || nx == IR_COPY || is_load(nx) ||
               nx == IR_POP_JUMP_IF_NOT_NONE || is_store(nx) || nx == IR_POP_TOP;
    }
    /* a class pattern: its class and attribute names, then MATCH_CLASS */
    for (int q = i; q < i + 16 && (is_load(op_at(d, q)) || op_at(d, q) == IR_LOAD_ATTR); q++)
        if (op_at(d, q + 1) == IR_MATCH_CLASS)
            return 1;
    /* the guard of a `case _:` whose COPY was left out, and the POP_TOP of
     * the subject where it holds: no other statement keeps a value on the
     * stack across a condition */
    for (int q = i; st->n - 1 <= base && q < i + 64 && q < d->n && !ends_flow(d, q) && !is_store(op_at(d, q)); q++)
        if (dc_is_pop_jump(op_at(d, q)) &&
            (op_at(d, skip_nops(d, q + 1)) == IR_POP_TOP || op_at(d, d->in[q].target) == IR_POP_TOP))
            return 1;
    return 0;
}

/* Whether the statement's code falls into the instruction after it: what
 * the enclosing region's liveness means (a jump there makes the code after
 * it live by itself).  Assuming it always does made 3.12+ for loops end in
 * a `break`: their dead END_FOR ends the last body of a match that goes
 * round the loop. */
static int falls_through(const dc *d, int i, const mshape *sh) {
    int j = sh->end - 1;
    return j >= i && j < d->n && d->reach[j] && !ends_flow(d, j);
}

int dc_match(dc *d, int i, int base, dc_stack *st, dp_nodes *out, int *next) {
    /* (output language: before 3.10 a comparison chain can look like a
     * literal pattern, and `match` does not parse) */
    if (d->code->py_minor < 10 || !starts_match(d, i, base, st))
        return 0;
    mshape sh;
    dc_spec sp;
    dc_spec_begin(d, &sp);
    int r = analyse(d, i, &sh);
    if (!dc_spec_end(d, &sp, r))
        return d->sh->ar->failed ? dc_fail(d, i, "out of memory") : 0;
    dp_node *s = dc_stmt(d, S_MATCH, i);
    if (s == NULL)
        return -1;
    s->a = st->v[st->n - 1];
    for (int k = 0; k < sh.n; k++) {
        mcase *c = &sh.cases[k];
        if (declare_captures(d, c->start, c->body) < 0 ||
            body(d, c->body, c->body_end, sh.exit, st, &c->node->l1) < 0 || dc_add(d, &s->l1, c->node) < 0)
            return -1;
    }
    if (sh.fall_return >= 0 && sh.fall_case) {
        sh.dflt = sh.fall_return;
        sh.dflt_end = sh.fall_return + exit_len(d, sh.fall_return);
    }
    if (sh.dflt >= 0) {
        dp_node *c = dc_stmt(d, S_CASE, sh.dflt);
        if (c == NULL || (c->a = dc_node(d, P_AS)) == NULL || body(d, sh.dflt, sh.dflt_end, sh.exit, st, &c->l1) < 0 ||
            dc_add(d, &s->l1, c) < 0)
            return -1;
    }
    st->n--;
    *next = sh.end;
    if (dc_add(d, out, s) < 0)
        return -1;
    if (sh.fall_return >= 0 && !sh.fall_case) {
        dc_stack t = {0};
        if (dc_stack_copy(d, &t, st) < 0 ||
            dc_region(d, sh.fall_return, sh.fall_return + exit_len(d, sh.fall_return), -1, &t, out) < 0)
            return -1;
    }
    d->region_live = falls_through(d, i, &sh);
    return 1;
}
