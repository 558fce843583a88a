/* Chained comparisons `a < b < c`.  CPython evaluates each middle operand
 * once: `a; b; SWAP 2; COPY 2; COMPARE; jump-if-false cleanup; c; COMPARE`
 * and a cleanup block pops the saved operand on the early exit.  In a value
 * context the chain ends `JUMP_FORWARD end; cleanup: SWAP 2; POP_TOP; end:`;
 * as a condition, see dc_chain_compare's end. */
#include "dc.h"

static int is_compare(int op) { return op == IR_COMPARE || op == IR_IS || op == IR_CONTAINS; }

/* The jump of a link to the cleanup block, taken when the comparison is false. */
static int is_false_jump(int op) { return op == IR_POP_JUMP_IF_FALSE || op == IR_JUMP_IF_FALSE_OR_POP; }

static int op_at(const dc *d, int q) { return q >= 0 && q < d->n ? d->in[q].op : IR_NOP; }

static int instr_is(const dc *d, int q, int op, int arg) { return op_at(d, q) == op && d->in[q].arg == arg; }

/* A link of the chain starting at q: the saved middle operand, its
 * comparison and the jump to the cleanup.  Returns the index of that jump
 * and sets *cmp to the comparison's and *after to where the next operand
 * starts, or returns -1.  The operand is saved by `SWAP 2; COPY 2` (3.11+)
 * or DUP_TOP; ROT_THREE, lifted as `COPY 1; SWAP 3; SWAP 2` (3.8-3.10); the
 * jump is JUMP_IF_FALSE_OR_POP for a value (3.12+'s `COPY 1;
 * POP_JUMP_IF_FALSE; POP_TOP` is rewritten to it), POP_JUMP_IF_FALSE in a
 * condition. */
static int link_at(const dc *d, int q, int *cmp, int *after) {
    int c;
    if (instr_is(d, q, IR_SWAP, 2) && instr_is(d, q + 1, IR_COPY, 2))
        c = q + 2;
    else if (instr_is(d, q, IR_COPY, 1) && instr_is(d, q + 1, IR_SWAP, 3) && instr_is(d, q + 2, IR_SWAP, 2))
        c = q + 3;
    else
        return -1;
    if (!is_compare(op_at(d, c)))
        return -1;
    *cmp = c;
    int j = c + 1;
    while (op_at(d, j) == IR_NOP && d->in[j].arg2 == 0 && j < c + 3) /* (see normalize_boolops) */
        j++;
    if (!is_false_jump(op_at(d, j)))
        return -1;
    *after = j + 1;
    return j;
}

/* Where control really goes from j: past plain NOPs and unconditional jumps. */
static int resolve(const dc *d, int j) {
    for (int steps = 0; steps < 16 && j >= 0 && j < d->n; steps++) {
        if (d->in[j].op == IR_NOP && d->in[j].arg2 == 0)
            j++;
        else if (d->in[j].op == IR_JUMP)
            j = d->in[j].target;
        else
            break;
    }
    return j;
}

/* The length of the code at a that is a copy of the exit block at b (the
 * compiler duplicates small blocks that return, raise or jump), or 0. */
static int exit_copy_len(const dc *d, int a, int b) {
    for (int k = 0; k < 8 && a + k < d->n && b + k < d->n; k++) {
        const dp_instr *x = &d->in[a + k], *y = &d->in[b + k];
        if (!dc_same_instr(x, y) || (dc_is_jump(x->op) && x->op != IR_JUMP) || x->op == IR_FOR_ITER ||
            dc_is_block_setup(x->op))
            return 0;
        if (x->op == IR_JUMP)
            return x->target == y->target ? k + 1 : 0;
        if (x->op == IR_RETURN_VALUE || x->op == IR_RAISE || x->op == IR_RERAISE)
            return k + 1;
    }
    return 0;
}

/* Does no jump reach (from, to)? */
static int unreferenced(const dc *d, int from, int to) {
    for (int k = from + 1; k < to; k++)
        if (d->nref[k] > 0)
            return 0;
    return 1;
}

/* Rewrites [from, to) into NOPs: dead code no jump reaches any more. */
static void erase(dc *d, int from, int to) {
    for (int k = from; k < to; k++) {
        dp_instr *x = dc_edit(d, k);
        if (dc_is_jump(x->op) && x->target >= 0 && x->target < d->n && d->nref[x->target] > 0)
            dc_set(d, &d->nref[x->target], d->nref[x->target] - 1);
        x->op = IR_NOP;
        x->arg2 = 0;
        x->target = -1;
        dc_mark(d, k);
    }
}

/* The end of the cleanup block at `cleanup` when what follows its pops of
 * the saved operand (`npop` instructions) goes where `path` does, or is a
 * copy of that code; -1 if it does not.  The block ends after the pops, or
 * after the jump or copy that follows them if nothing else reaches it. */
static int cleanup_end(const dc *d, int cleanup, int npop, int path) {
    int cont = cleanup + npop, end, to = resolve(d, path);
    if (resolve(d, cont) == to) {
        end = cont;
        while (end < d->n && d->in[end].op == IR_NOP && d->in[end].arg2 == 0 && end != to)
            end++;
        if (end < d->n && d->in[end].op == IR_JUMP && end != to)
            end++;
    } else {
        int len = exit_copy_len(d, cont, to);
        if (len == 0)
            return -1;
        end = cont + len;
    }
    return unreferenced(d, cleanup, end) ? end : cont;
}

/* A cleanup block an earlier walk of the same chain erased. */
static int erased(const dc *d, int cleanup) { return d->in[cleanup].op == IR_NOP && d->nref[cleanup] == 0; }

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
    int c, after, j = link_at(d, i, &c, &after);
    if (j < 0)
        return 0;
    dp_node *b = dc_pop(d, st, i), *a = b ? dc_pop(d, st, i) : NULL;
    dp_node *cmp = dc_node(d, E_COMPARE);
    int cap = 4;
    if (a == NULL || cmp == NULL || (cmp->ops = dp_alloc_array(d->sh->ar, (size_t)cap, sizeof(int))) == NULL)
        return -1;
    cmp->a = a;
    int q = i, cleanup = d->in[j].target, links = 0;
    int base = st->n;
    for (;; links++) {
        if (add_link(d, cmp, cmp_op(&d->in[c]), b, &cap) < 0)
            return -1;
        if (d->in[j].target != cleanup)
            return dc_fail(d, j, "chained comparison with two cleanup blocks");
        q = after;
        /* the next operand, with the saved middle operand below it */
        if (dc_push(d, st, b) < 0)
            return -1;
        for (;;) {
            if (q >= d->n)
                return dc_fail(d, q, "truncated chained comparison");
            if (st->n == base + 2 && (link_at(d, q, &c, &after) >= 0 || is_compare(d->in[q].op)))
                break;
            if (dc_expr_step(d, q, st) <= 0)
                return dc_fail(d, q, "unexpected code in a chained comparison");
            q++;
        }
        dp_node *right = dc_pop(d, st, q);
        if (right == NULL || dc_pop(d, st, q) == NULL)
            return -1;
        b = right;
        if ((j = link_at(d, q, &c, &after)) >= 0)
            continue;
        if (add_link(d, cmp, cmp_op(&d->in[q]), b, &cap) < 0)
            return -1;
        q++;
        break;
    }
    if (q >= d->n || cleanup < 0 || cleanup + 1 >= d->n)
        return dc_fail(d, q, "truncated chained comparison");
    const dp_instr *x = &d->in[q];
    for (int k = i; k < q; k++) /* the links (SWAPs, COPYs, compares, jumps) */
        dc_mark(d, k);
    if (d->nref[cleanup] > links + 1) /* (links not reached do not count) */
        return dc_fail(d, cleanup, "chained comparison whose cleanup is shared");
    if (!erased(d, cleanup)) {
        /* as a condition the cleanup pops the saved operand, then goes
         * where the final jump goes when the comparison is false; as a
         * value `SWAP 2; POP_TOP` leaves the false result in the operand's
         * place and goes on to the code after the chain.  Without it (and
         * without a jump over it) the chain is one value or one condition. */
        int cond = x->op == IR_POP_JUMP_IF_FALSE || x->op == IR_POP_JUMP_IF_TRUE;
        int npop = cond ? 1 : 2, skip = cond ? q + 1 : q, end = -1;
        if (cond ? d->in[cleanup].op == IR_POP_TOP
                 : d->in[cleanup].op == IR_SWAP && d->in[cleanup].arg == 2 && d->in[cleanup + 1].op == IR_POP_TOP)
            end = cleanup_end(d, cleanup, npop, cond && x->op == IR_POP_JUMP_IF_FALSE ? x->target : q + cond);
        if (end < 0)
            return dc_fail(d, q, "unrecognized end of a chained comparison");
        dc_set(d, &d->nref[cleanup], 0);
        erase(d, cleanup, end);
        /* the jump over the cleanup goes too, if it lands right after it (one
         * going further, like a `continue` on 3.8, is the true path's own) */
        if (skip < cleanup && d->in[skip].op == IR_JUMP && d->in[skip].target == end)
            erase(d, skip, skip + 1);
    }
    *next = q;
    return dc_push(d, st, cmp) < 0 ? -1 : 1;
}
