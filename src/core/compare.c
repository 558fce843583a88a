/* Chained comparisons `a < b < c`.  CPython evaluates each middle operand
 * once: `a; b; SWAP 2; COPY 2; COMPARE; jump-if-false cleanup; c; COMPARE`
 * (3.8-3.10: `DUP_TOP; ROT_THREE` in place of `SWAP 2; COPY 2`)
 * and a cleanup block pops the saved operand on the early exit.  In a value
 * context the chain ends `JUMP_FORWARD end; cleanup: SWAP 2; POP_TOP; end:`;
 * as a condition, see dc_chain_compare's end. */
#include "dc.h"

static int is_compare(int op) { return op == IR_COMPARE || op == IR_IS || op == IR_CONTAINS; }

static int is_cond(int op) {
    return op == IR_POP_JUMP_IF_FALSE || op == IR_POP_JUMP_IF_TRUE || op == IR_JUMP_IF_FALSE_OR_POP ||
           op == IR_JUMP_IF_TRUE_OR_POP;
}

/* How many instructions save the middle operand at q (`SWAP 2; COPY 2`, or
 * 3.8-3.10's `DUP_TOP; ROT_THREE` lifted as `COPY 1; SWAP 3; SWAP 2`)
 * before a link's compare and jump; 0 if no link starts at q. */
static int link_at(const dc *d, int q) {
    int n = 0;
    if (q + 1 < d->n && d->in[q].op == IR_SWAP && d->in[q].arg == 2 && d->in[q + 1].op == IR_COPY &&
        d->in[q + 1].arg == 2)
        n = 2;
    else if (q + 2 < d->n && d->in[q].op == IR_COPY && d->in[q].arg == 1 && d->in[q + 1].op == IR_SWAP &&
             d->in[q + 1].arg == 3 && d->in[q + 2].op == IR_SWAP && d->in[q + 2].arg == 2)
        n = 3;
    return n && q + n + 1 < d->n && is_compare(d->in[q + n].op) && is_cond(d->in[q + n + 1].op) ? n : 0;
}

static int cmp_op(const dp_instr *x) {
    if (x->op == IR_IS)
        return x->arg ? DP_CMP_IS_NOT : DP_CMP_IS;
    if (x->op == IR_CONTAINS)
        return x->arg ? DP_CMP_NOT_IN : DP_CMP_IN;
    return x->arg;
}

static int add_link(dc *d, dp_node *cmp, int op, dp_node *right, int *cap) {
    if (cmp->l1.n == *cap) {
        int ncap = *cap * 2;
        int *ops = dp_alloc_array(d->sh->ar, (size_t)ncap, sizeof(int));
        if (ops == NULL)
            return dc_fail(d, -1, "out of memory");
        for (int k = 0; k < cmp->l1.n; k++)
            ops[k] = cmp->ops[k];
        cmp->ops = ops;
        *cap = ncap;
    }
    cmp->ops[cmp->l1.n] = op;
    return dc_add(d, &cmp->l1, right);
}

/* Is [c, ...) a copy of the exit block at `at` (a few plain instructions
 * ending the function or raising) that nothing jumps into?  Returns its
 * length, or 0. */
static int exit_copy_len(const dc *d, int c, int at) {
    while (at < d->n && d->in[at].op == IR_NOP) /* (a NOP kept for its line) */
        at++;
    for (int k = 0; k < 8 && c + k < d->n && at + k < d->n; k++) {
        const dp_instr *x = &d->in[c + k], *y = &d->in[at + k];
        if (d->nref[c + k] > 0 || !dc_same_instr(x, y) || (dc_is_jump(x->op) && x->op != IR_JUMP) ||
            x->op == IR_FOR_ITER || dc_is_block_setup(x->op))
            return 0;
        if (x->op == IR_JUMP)
            return x->target == y->target ? k + 1 : 0;
        if (x->op == IR_RETURN_VALUE || x->op == IR_RAISE || x->op == IR_RERAISE)
            return k + 1;
    }
    return 0;
}

/* Does control at t go on to `to`: t is `to`, or jumps there (a JUMP
 * forward to a JUMP back to a loop head is not threaded)? */
static int goes_to(const dc *d, int t, int to) {
    for (int hops = 0; hops < 3 && t >= 0 && t < d->n; hops++) {
        if (t == to)
            return 1;
        if (d->in[t].op != IR_JUMP)
            return 0;
        t = d->in[t].target;
    }
    return t == to;
}

static void to_nop(dc *d, int at) {
    d->f.ins[at].op = IR_NOP;
    d->f.ins[at].target = -1;
}

/* A chain ending in the conditional jump at q, used as a condition: the
 * early exits jump to `cleanup`, which pops the saved operand and then
 * joins the false path FP (x's target when x jumps if false, else the code
 * after x): by a JUMP that leads there, by falling into it, or by a copy of
 * it when FP is a small exit block (3.12+).  The true path after x starts with `JUMP B`
 * (up to 3.11) or is the code at q + 1.  Rewritten to NOPs (the cleanup,
 * and the JUMP when it only skips the cleanup) the final jump reads as a
 * plain condition with the same two exits. */
static int as_condition(dc *d, int q, int cleanup) {
    const dp_instr *x = &d->in[q];
    dp_instr *skip = &d->f.ins[q + 1];
    if (d->in[cleanup].op == IR_NOP)
        return 0; /* rewritten already (a speculation visited it first) */
    if (d->in[cleanup].op != IR_POP_TOP || (x->op != IR_POP_JUMP_IF_FALSE && x->op != IR_POP_JUMP_IF_TRUE))
        return dc_fail(d, q, "unrecognized chained comparison");
    int after_skip = skip->op == IR_JUMP ? skip->target : q + 1;
    int fp = x->op == IR_POP_JUMP_IF_FALSE ? x->target : after_skip;
    int c = cleanup + 1, cleanup_end = c, len;
    if (d->in[c].op == IR_JUMP && goes_to(d, d->in[c].target, fp)) {
        d->nref[d->in[c].target]--;
        to_nop(d, c);
        cleanup_end = c + 1;
    } else if (c != fp) {
        if ((len = exit_copy_len(d, c, fp)) == 0)
            return dc_fail(d, q, "unrecognized chained comparison");
        if (d->in[c + len - 1].op == IR_JUMP)
            d->nref[d->in[c + len - 1].target]--;
        for (int k = 0; k < len; k++)
            to_nop(d, c + k);
        cleanup_end = c + len;
    }
    if (skip->op == IR_JUMP && cleanup == q + 2 && skip->target == cleanup_end) {
        d->nref[skip->target]--;
        to_nop(d, q + 1);
    }
    to_nop(d, cleanup);
    d->nref[cleanup] = 0;
    return 0;
}

int dc_chain_compare(dc *d, int i, dc_stack *st, int *next) {
    if (!link_at(d, i))
        return 0;
    dp_node *b = dc_pop(d, st, i), *a = b ? dc_pop(d, st, i) : NULL;
    dp_node *cmp = dc_node(d, E_COMPARE);
    int cap = 4;
    if (a == NULL || cmp == NULL || (cmp->ops = dp_alloc_array(d->sh->ar, (size_t)cap, sizeof(int))) == NULL)
        return -1;
    cmp->a = a;
    int q = i, n = link_at(d, i), cleanup = d->in[i + n + 1].target;
    int base = st->n;
    for (;;) {
        if (add_link(d, cmp, cmp_op(&d->in[q + n]), b, &cap) < 0)
            return -1;
        if (d->in[q + n + 1].target != cleanup)
            return dc_fail(d, q + n + 1, "chained comparison with two cleanup blocks");
        q += n + 2;
        /* the next operand, with the saved middle operand below it */
        if (dc_push(d, st, b) < 0)
            return -1;
        for (;;) {
            if (q >= d->n)
                return dc_fail(d, q, "truncated chained comparison");
            if (st->n == base + 2 && (link_at(d, q) || is_compare(d->in[q].op)))
                break;
            if (dc_expr_step(d, q, st) <= 0)
                return dc_fail(d, q, "unexpected code in a chained comparison");
            q++;
        }
        dp_node *c = dc_pop(d, st, q);
        if (c == NULL || dc_pop(d, st, q) == NULL)
            return -1;
        b = c;
        if ((n = link_at(d, q)) > 0)
            continue;
        if (add_link(d, cmp, cmp_op(&d->in[q]), b, &cap) < 0)
            return -1;
        q++;
        break;
    }
    if (q >= d->n)
        return dc_fail(d, q, "truncated chained comparison");
    const dp_instr *x = &d->in[q];
    dc_seen(d, i, q);
    for (int j = i; j < q; j++) /* the links (SWAP, COPY, compares, jumps) */
        d->seen[j] = 1;
    if (x->op == IR_JUMP && x->target == cleanup + 2 && d->in[cleanup].op == IR_SWAP &&
        d->in[cleanup + 1].op == IR_POP_TOP) {
        dc_seen(d, q, q + 1);
        dc_seen(d, cleanup, cleanup + 2);
        *next = x->target; /* value context */
        return dc_push(d, st, cmp) < 0 ? -1 : 1;
    }
    if (is_cond(x->op) && q + 1 < d->n && cleanup + 1 < d->n) {
        if (as_condition(d, q, cleanup) < 0)
            return -1;
        *next = q;
        return dc_push(d, st, cmp) < 0 ? -1 : 1;
    }
    return dc_fail(d, q, "unrecognized end of a chained comparison");
}
