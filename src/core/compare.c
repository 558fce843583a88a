/* Chained comparisons `a < b < c`.  CPython evaluates each middle operand
 * once: `a; b; SWAP 2; COPY 2; COMPARE; jump-if-false cleanup; c; COMPARE`
 * and a cleanup block pops the saved operand on the early exit.  In a value
 * context the chain ends `JUMP_FORWARD end; cleanup: SWAP 2; POP_TOP; end:`;
 * as a condition, see dc_chain_compare's end. */
#include "dc.h"

static int is_compare(int op) { return op == IR_COMPARE || op == IR_IS || op == IR_CONTAINS; }

static int is_cond(int op) {
    return op == IR_POP_JUMP_IF_FALSE || op == IR_POP_JUMP_IF_TRUE || op == IR_JUMP_IF_FALSE_OR_POP ||
           op == IR_JUMP_IF_TRUE_OR_POP;
}

static int link_at(const dc *d, int q) {
    return q + 3 < d->n && d->in[q].op == IR_SWAP && d->in[q].arg == 2 && d->in[q + 1].op == IR_COPY &&
           d->in[q + 1].arg == 2 && is_compare(d->in[q + 2].op) && is_cond(d->in[q + 3].op);
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

int dc_chain_compare(dc *d, int i, dc_stack *st, int *next) {
    if (!link_at(d, i))
        return 0;
    dp_node *b = dc_pop(d, st, i), *a = b ? dc_pop(d, st, i) : NULL;
    dp_node *cmp = dc_node(d, E_COMPARE);
    int cap = 4;
    if (a == NULL || cmp == NULL || (cmp->ops = dp_alloc_array(d->sh->ar, (size_t)cap, sizeof(int))) == NULL)
        return -1;
    cmp->a = a;
    int q = i, cleanup = d->in[i + 3].target;
    int base = st->n;
    for (;;) {
        if (add_link(d, cmp, cmp_op(&d->in[q + 2]), b, &cap) < 0)
            return -1;
        if (d->in[q + 3].target != cleanup)
            return dc_fail(d, q + 3, "chained comparison with two cleanup blocks");
        q += 4;
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
        if (link_at(d, q))
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
        /* as a condition: the final jump is followed by `JUMP_FORWARD B`, and
         * the cleanup pops the saved operand and joins the false path, either
         * `POP_TOP; JUMP_FORWARD F; B:` or `POP_TOP; B:` (B being the false
         * path itself).  Rewritten to NOPs, the final jump reads as a plain
         * condition with the same fall-through. */
        dp_instr *skip = &d->f.ins[q + 1];
        int nops[3] = {q + 1, cleanup, -1};
        if (skip->op == IR_JUMP && d->in[cleanup].op == IR_POP_TOP) {
            if (skip->target == cleanup + 2 && d->in[cleanup + 1].op == IR_JUMP) {
                nops[2] = cleanup + 1;
                d->nref[d->in[cleanup + 1].target]--;
            } else if (skip->target != cleanup + 1) {
                return dc_fail(d, q, "unrecognized chained comparison");
            }
            d->nref[skip->target]--;
            for (int k = 0; k < 3; k++)
                if (nops[k] >= 0) {
                    d->f.ins[nops[k]].op = IR_NOP;
                    d->f.ins[nops[k]].target = -1;
                }
            d->nref[cleanup] = 0;
        } else if (!(skip->op == IR_NOP && d->in[cleanup].op == IR_NOP)) {
            return dc_fail(d, q, "unrecognized chained comparison");
        }
        *next = q;
        return dc_push(d, st, cmp) < 0 ? -1 : 1;
    }
    return dc_fail(d, q, "unrecognized end of a chained comparison");
}
