/* Conditions: if/elif/else, conditional expressions, and/or chains,
 * assert, and while loops whose test this is. */
#include <limits.h>
#include <string.h>

#include "structure.h"

typedef struct seg {
    int start;      /* first instruction of the operand */
    int jump;       /* the conditional jump */
    dp_node *e;     /* the tested expression */
    int jumps_if;   /* 1: jumps when e is true; 0: when false */
    int or_pop;     /* JUMP_IF_*_OR_POP: the value itself flows to the target */
    int target;
} seg;

#define MAX_SEGS 64

static dp_node *tested(dc *d, dp_node *x, int op, int *jumps_if) {
    static const dp_const none = {.kind = DP_CONST_NONE};
    switch (op) {
    case IR_POP_JUMP_IF_FALSE: case IR_JUMP_IF_FALSE_OR_POP:
        *jumps_if = 0;
        return x;
    case IR_POP_JUMP_IF_TRUE: case IR_JUMP_IF_TRUE_OR_POP:
        *jumps_if = 1;
        return x;
    default: {
        dp_node *c = dc_node(d, E_COMPARE);
        if (c == NULL || (c->ops = dp_alloc(d->sh->ar, sizeof(int))) == NULL)
            return NULL;
        c->a = x;
        c->ops[0] = op == IR_POP_JUMP_IF_NONE ? DP_CMP_IS : DP_CMP_IS_NOT;
        c->op2 = 1; /* either spelling compiles to this jump: dc_not may flip it */
        if (dc_add(d, &c->l1, dc_const(d, &none)) < 0)
            return NULL;
        *jumps_if = 1;
        return c;
    }
    }
}

/* One step of a pure expression: a chained comparison or a single
 * instruction; *next receives where the step ends. */
static int value_step(dc *d, int q, dc_stack *st, int *next) {
    int r = d->lay.inline_comprehensions ? dc_inline_comprehension(d, q, st, NULL, next) : 0;
    if (r == 0)
        r = dc_chain_compare(d, q, st, next);
    if (r != 0)
        return r;
    *next = q + 1;
    return dc_expr_step(d, q, st);
}

/* Speculatively evaluates a pure operand from `p`: expression steps only,
 * up to a conditional jump with exactly one new value on the stack. */
static int try_segment(dc *d, int p, int end, dc_stack *st, seg *out) {
    size_t shared = d->shared_seq; /* (put back below: the copy is gone then, see dc.h) */
    dc_stack tmp = {0};
    if (dc_stack_copy(d, &tmp, st) < 0)
        return -1;
    int base = tmp.n;
    dc_spec sp;
    dc_spec_begin(d, &sp);
    int q = p, ok = 0;
    while (q < end) {
        int op = d->in[q].op;
        if (dc_is_cond_jump(op)) {
            ok = tmp.n == base + 1;
            break;
        }
        if (op == IR_JUMP || op == IR_FOR_ITER || op == IR_RETURN_VALUE)
            break;
        int nq = q + 1;
        if (value_step(d, q, &tmp, &nq) <= 0)
            break;
        q = nq;
    }
    int kept = dc_spec_end(d, &sp, ok ? 0 : -1);
    d->shared_seq = shared;
    if (!kept || !ok)
        return 0;
    dp_node *x = tmp.v[tmp.n - 1];
    out->start = p;
    out->jump = q;
    out->target = d->in[q].target;
    out->or_pop = d->in[q].op == IR_JUMP_IF_FALSE_OR_POP || d->in[q].op == IR_JUMP_IF_TRUE_OR_POP;
    out->e = tested(d, x, d->in[q].op, &out->jumps_if);
    return out->e ? 1 : -1;
}

/* CPython duplicates small exit blocks (`return <const>`) into every jump
 * that leads to them, so two different targets can be the same exit. */
static int same_exit(const dc *d, int a, int b) {
    if (a == b)
        return 1;
    if (a < 0 || b < 0 || a + 1 >= d->n || b + 1 >= d->n)
        return 0;
    if (d->in[a].op == IR_LOAD_CONST && d->in[b].op == IR_LOAD_CONST && d->in[a].cst == d->in[b].cst &&
        d->in[a + 1].op == IR_RETURN_VALUE && d->in[b + 1].op == IR_RETURN_VALUE)
        return 1;
    /* (3.12+ copies any small block that returns: `return x, 0`) */
    int e = dc_return_tail_end(d, a);
    if (e < 0 || e - a > 8 || b + (e - a) >= d->n)
        return 0;
    for (int k = 0; k <= e - a; k++)
        if (!dc_same_instr(&d->in[a + k], &d->in[b + k]) || dc_handler_at(d, a + k) != dc_handler_at(d, b + k))
            return 0;
    return 1;
}

/* Does control at B only pass NOPs to reach t (the jump a chained
 * comparison's cleanup left there, erased with it)? */
static int falls_to(const dc *d, int B, int t) {
    if (t < B || t - B > 8)
        return 0;
    for (int j = B; j < t; j++)
        if (d->in[j].op != IR_NOP || d->in[j].arg2 != 0)
            return 0;
    return 1;
}

/* Is the code at B (past line NOPs) a plain jump to t?  A test that jumps
 * to t then goes where one that falls into B goes: CPython threads the
 * jump of `if a or b: break` (or `continue`) past the then-branch's own
 * jump, straight to the loop's exit. */
static int jumps_on_to(const dc *d, int B, int t) {
    int b = dc_past_line_nops(d, B);
    return b < d->n && b != t && d->in[b].op == IR_JUMP && d->in[b].target == t;
}

static void retarget(dc *d, seg *g, int to) {
    dp_instr *j = dc_edit(d, g->jump);
    int old = j->target;
    dc_set(d, &d->nref[old], d->nref[old] - 1);
    dc_set(d, &d->nref[to], d->nref[to] + 1);
    j->target = to;
    g->target = to;
    /* a copy of a return tail nothing reaches any more is no code of its
     * own (NOPs before it: code erased as dead, a chain's cleanup) */
    int p = old - 1;
    while (p >= 0 && d->in[p].op == IR_NOP && d->nref[p] == 0)
        p--;
    int e = d->nref[old] == 0 && p >= 0 && dc_is_terminator(d->in[p].op) ? dc_return_tail_end(d, old) : -1;
    if (e >= 0)
        dc_seen(d, old, e + 1);
}

/* Points every jump of the chain that goes to a copy of exit F at the
 * earliest copy after the condition, so the chain has one far exit, and
 * every jump to a copy of the code at B (a `return <const>` the true side
 * falls into) at B itself. */
static int unify_exits(dc *d, seg *s, int k) {
    int B = s[k - 1].jump + 1, F = s[k - 1].target;
    for (int m = 0; m < k; m++)
        if (s[m].target >= B && s[m].target < F && same_exit(d, s[m].target, F))
            F = s[m].target;
    for (int m = 0; m < k; m++) {
        if (s[m].target != F && same_exit(d, s[m].target, F))
            retarget(d, &s[m], F);
        else if (s[m].target != B && !same_exit(d, s[m].target, F) &&
                 (same_exit(d, s[m].target, dc_past_line_nops(d, B)) || falls_to(d, B, s[m].target) ||
                  jumps_on_to(d, B, s[m].target)))
            retarget(d, &s[m], B);
    }
    return F;
}

static int seg_starting_at(const seg *s, int k, int pos) {
    for (int m = 0; m < k; m++)
        if (s[m].start == pos)
            return m;
    return -1;
}

/* Is segs[0..k) a complete condition: every jump goes to the fall-through
 * exit B, the far exit F (= the last jump's target) or a later segment? */
static int chain_valid(const dc *d, const seg *s, int k) {
    int B = s[k - 1].jump + 1, F = s[k - 1].target;
    if (F == B)
        return 0;
    for (int m = 0; m < k - 1; m++) {
        int t = s[m].target;
        /* its value flows on: `a or b and c` nests to the right; but in
         * `(a or b and c) and p` the chain starts with a test that keeps
         * no value, and a kept value that leaves for the chain's end the
         * same way as the last one is the value of the whole chain there */
        if (s[m].or_pop && (s[0].or_pop || !s[k - 1].or_pop || s[m].target != F ||
                            s[m].jumps_if != s[k - 1].jumps_if))
            return 0;
        if (same_exit(d, t, F) || t == B || same_exit(d, t, dc_past_line_nops(d, B)) || falls_to(d, B, t) ||
            jumps_on_to(d, B, t))
            continue;
        int at = seg_starting_at(s, k, t);
        if (at <= m)
            return 0;
    }
    return 1;
}

/* `not (a is b)` / `not (a in b)` cannot appear in compiled source: the
 * AST optimizer folds it into `is not` / `not in`.  Such a test comes from
 * a negated group, `not (a is b or c)`; rebuild that form. */
static int folded_not(const dp_node *e) {
    if (e->kind != E_UNARY || e->op != DP_UN_NOT || e->a->kind != E_COMPARE || e->a->l1.n != 1)
        return 0;
    int op = e->a->ops[0];
    return op == DP_CMP_IS || op == DP_CMP_IS_NOT || op == DP_CMP_IN || op == DP_CMP_NOT_IN;
}

static int folded_nots(const dp_node *e) {
    int n = folded_not(e);
    if (e->kind == E_BOOLOP)
        for (int k = 0; k < e->l1.n; k++)
            n += folded_not(e->l1.v[k]);
    return n;
}

static dp_node *cond_boolop(dc *d, int is_or, dp_node *l, dp_node *r) {
    if (l == NULL || r == NULL)
        return NULL;
    int before = folded_nots(l) + folded_nots(r);
    if (before > 0) {
        dp_node *nl = dc_not(d, l), *nr = dc_not(d, r);
        if (nl == NULL || nr == NULL)
            return NULL;
        if (folded_nots(nl) + folded_nots(nr) < before)
            return dc_not(d, dc_boolop(d, !is_or, nl, nr));
    }
    return dc_boolop(d, is_or, l, r);
}

/* Can segs[i..j] split into operands segs[i..split) and segs[split..j]?
 * The left operand's jumps go inside itself, to the right operand's start,
 * or to one exit: returns that exit (T: `or`, F: `and`), -1 when none
 * leaves, -2 when the split does not hold. */
static int split_exit(const seg *s, int i, int split, int j, int T, int F) {
    int L = s[split].start, other = -1;
    for (int m = i; m < split; m++) {
        int t = s[m].target, at = seg_starting_at(s, j + 1, t);
        if (t == L || (at > m && at < split))
            continue;
        if (t != T && t != F)
            return -2;
        other = other < 0 || other == t ? t : -2;
    }
    return other;
}

/* The condition of segs[i..j] that holds exactly when control reaches T
 * (the other exit being F). */
static dp_node *parse_cond(dc *d, const seg *s, int i, int j, int T, int F) {
    if (i == j) {
        const seg *g = &s[i];
        int jump_true = g->jumps_if; /* jumps to target when e == jump_true */
        if (g->target == T)
            return jump_true ? g->e : dc_not(d, g->e);
        if (g->target == F)
            return jump_true ? dc_not(d, g->e) : g->e;
        dc_fail(d, g->jump, "condition jumps to neither exit");
        return NULL;
    }
    /* split at the furthest jump target that starts a later segment */
    int split = -1;
    for (int m = i; m < j; m++) {
        int at = seg_starting_at(s + 0, j + 1, s[m].target);
        if (at > i && at <= j && at > split)
            split = at;
    }
    if (split > i) {
        int other = split_exit(s, i, split, j, T, F);
        /* `a and (b and c or d)`: the furthest target is inside the right
         * operand; the outer split is then nearer, where every jump of
         * the left part leaves to the right part's start or to one exit */
        for (int k = split - 1; other == -2 && k > i; k--)
            if ((other = split_exit(s, i, k, j, T, F)) != -2)
                split = k;
        int L = s[split].start;
        if (other == F || other == -1) {
            dp_node *l = parse_cond(d, s, i, split - 1, L, F), *r = l ? parse_cond(d, s, split, j, T, F) : NULL;
            return cond_boolop(d, 0, l, r);
        }
        if (other == T) {
            dp_node *l = parse_cond(d, s, i, split - 1, T, L), *r = l ? parse_cond(d, s, split, j, T, F) : NULL;
            return cond_boolop(d, 1, l, r);
        }
        dc_fail(d, s[i].jump, "unrecognized boolean condition");
        return NULL;
    }
    const seg *g = &s[i];
    dp_node *rest = parse_cond(d, s, i + 1, j, T, F);
    if (rest == NULL)
        return NULL;
    if (g->target == T)
        return cond_boolop(d, 1, g->jumps_if ? g->e : dc_not(d, g->e), rest);
    if (g->target == F)
        return cond_boolop(d, 0, g->jumps_if ? dc_not(d, g->e) : g->e, rest);
    dc_fail(d, g->jump, "condition jumps to neither exit");
    return NULL;
}

/* Do instructions [a, a+len) and [b, b+len) do the same thing? (while loops
 * test their condition at the top and again at the bottom) */
static int same_code(const dc *d, int a, int b, int len) {
    for (int k = 0; k < len; k++) {
        const dp_instr *x = &d->in[a + k], *y = &d->in[b + k];
        if (dc_is_cond_jump(x->op) && dc_is_cond_jump(y->op))
            continue;
        if (!dc_same_instr(x, y))
            return 0;
    }
    return 1;
}

/* 3.12+ has no backward conditional jump: the test repeated at the bottom
 * of a while loop exits like the top one and ends with `JUMP body`, the
 * jump at `jump_at`.  Is [bottom, jump_at) the top test [s0, B) exactly,
 * every jump going to the same place (the body is reached through the
 * JUMP)? */
static int same_bottom_test(const dc *d, const seg *s, int k, int bottom, int jump_at) {
    int s0 = s[0].start, B = s[k - 1].jump + 1, F = s[k - 1].target;
    if (jump_at - bottom != B - s0)
        return 0;
    for (int q = 0; q < B - s0; q++) {
        const dp_instr *x = &d->in[s0 + q], *y = &d->in[bottom + q];
        if (!dc_same_instr(x, y))
            return 0;
        if (!dc_is_jump(x->op))
            continue;
        int t = x->target, u = y->target;
        int same = (t == F && same_exit(d, u, F)) || (t == B && (u == B || u == jump_at)) ||
                   (t > s0 && t < B && u - bottom == t - s0);
        if (!same)
            return 0;
    }
    return 1;
}

/* A while loop whose test [s0, B) is repeated at [test_end - len, test_end)
 * before the back edge at `last` (the same instruction up to 3.11, a JUMP
 * after the copy from 3.12 on). */
static int cond_while(dc *d, const seg *s, int k, int test_end, int last, int end, int exit, dc_stack *st,
                      dp_nodes *out, int *next) {
    int B = s[k - 1].jump + 1, F = s[k - 1].target;
    int top_len = B - s[0].start;
    int bottom = test_end - top_len;
    if (bottom < B)
        return 0;
    if (test_end == last + 1 ? !same_code(d, s[0].start, bottom, top_len) : !same_bottom_test(d, s, k, bottom, last))
        return 0;
    dp_node *w = dc_stmt(d, S_WHILE, s[0].start);
    if (w == NULL || (w->a = parse_cond(d, s, 0, k - 1, B, F)) == NULL)
        return -1;
    int brk = dc_find_loop_exit(d, B, bottom, F);
    if (brk > end)
        brk = F;
    dc_loop lp = {s[0].start, brk, 0, NULL, -1};
    if (brk == F && F < end && exit >= 0 && dc_jumps_as(d, B, bottom, exit, F)) {
        lp.brk = end; /* a break that skips [F, end): the else */
        lp.then = exit;
    }
    dc_seen(d, bottom, last + 1); /* the test repeated at the bottom */
    for (int j = last + 1; j < F; j++)
        if (d->in[j].op == IR_POP_TOP || d->in[j].op == IR_JUMP)
            dc_mark(d, j); /* a chained comparison's cleanup */
    if (dc_loop_body(d, &lp, B, bottom, st, &w->l1) < 0)
        return -1;
    if (lp.then >= 0) {
        if (dc_loop_else(d, F, end, st, &w->l2) < 0)
            return -1;
        *next = end;
        return dc_add(d, out, w) < 0 ? -1 : REST_OF_REGION;
    }
    if (brk > F && dc_region(d, F, brk, brk, st, &w->l2) < 0)
        return -1;
    *next = brk;
    return dc_add(d, out, w) < 0 ? -1 : 1;
}

/* 3.12+: a while loop whose body ends in a try statement that leaves the
 * loop or returns on its normal path (the break's copy of the code after
 * the loop, an else clause's return): the test repeated at the bottom is
 * placed with the except clauses after the function, `[test] JUMP body`
 * at [C, c], its exit at c + 1 a `JUMP F` to where the top test exits.  Only the
 * clauses (or the body) jump there; nothing falls into it.  The loop's body
 * is all of [B, F), a jump to C its `continue`.  Returns 0 when the loop
 * is not of this shape. */
static int cold_cond_while(dc *d, const seg *s, int k, int stmt_start, int end, dc_stack *st, dp_nodes *out,
                           int *next) {
    int s0 = s[0].start, B = s[k - 1].jump + 1, F = s[k - 1].target, len = B - s0;
    if (!d->lay.cold_handlers || F <= B || F > end || !dc_is_terminator(d->in[F - 1].op))
        return 0;
    dc_back_edge(d, B, d->n); /* (builds d->last_back) */
    int c = -1;
    for (int j = d->last_back != NULL ? d->last_back[B] : -1; j >= 0 && c < 0; j = d->last_back[d->n + 1 + j])
        if (j - len > F && !d->seen[j] && d->in[j].op == IR_JUMP)
            c = j;
    if (c < 0 || !dc_is_terminator(d->in[c - len - 1].op))
        return 0;
    int C = c - len;
    for (int q = 0; q < len; q++) {
        const dp_instr *x = &d->in[s0 + q], *y = &d->in[C + q];
        if (!dc_same_instr(x, y) || (q > 0 && d->nref[C + q] > 0))
            return 0;
        if (!dc_is_jump(x->op))
            continue;
        int t = x->target, u = y->target;
        int same = (t == F && u == c + 1 && u < d->n && d->in[u].op == IR_JUMP && d->in[u].target == F) ||
                   (t == B && (u == B || u == c)) || (t > s0 && t < B && u - C == t - s0);
        if (!same)
            return 0;
    }
    /* (jumps to the test: continues from the body or its clauses only) */
    for (int q = 0; q < d->n; q++)
        if (dc_is_jump(d->in[q].op) && d->in[q].target == C && !(q >= B && q < F) && !dc_in_cold_handler(d, q, B, F))
            return 0;
    int brk = F;
    for (int j = B; j < F; j++) {
        int t = d->in[j].target;
        if (dc_is_jump(d->in[j].op) && t > brk && t != C) {
            if (t > end)
                return 0;
            brk = t;
        }
    }
    if (dc_flush_leftovers(d, st, 0, NULL, out, stmt_start) < 0)
        return -1;
    dp_node *w = dc_stmt(d, S_WHILE, s0);
    if (w == NULL || (w->a = parse_cond(d, s, 0, k - 1, B, F)) == NULL)
        return -1;
    dc_seen(d, C, c + 2);
    dc_set(d, &d->skip_to[C], c + 2); /* (the walk past the clauses steps over it) */
    dc_loop lp = {C, brk, 0, NULL, -1};
    if (dc_loop_body(d, &lp, B, F, st, &w->l1) < 0)
        return -1;
    if (d->region_live)
        return dc_fail(d, F, "a loop body falls into its else");
    if (brk > F && dc_region(d, F, brk, brk, st, &w->l2) < 0)
        return -1;
    *next = brk;
    return dc_add(d, out, w) < 0 ? -1 : 1;
}

/* The failing side of `assert c, m` starting at i (after NOPs):
 * `LOAD_ASSERTION_ERROR; [m; CALL]; RAISE_VARARGS 1`, which only an assert
 * compiles to, on the assert's line: not on a later line than the test's
 * first instruction `first` (a later line is an `if c:` around an `assert
 * False`, whose test is folded away).  3.8 loads AssertionError with
 * LOAD_GLOBAL, as `raise AssertionError` does: the line tells them apart
 * too (a raise statement of its own starts a new line; on one line both
 * forms compile alike).  Returns the index of the RAISE, or -1. */
static int assert_fail(const dc *d, int i, int first) {
    while (i < d->n && d->in[i].op == IR_NOP && d->nref[i] == 0)
        i++;
    if (i >= d->n)
        return -1;
    const dp_instr *x = &d->in[i];
    int line = d->in[first].line, known = x->line >= 0 && line >= 0;
    if (known && x->line > line)
        return -1;
    if (x->op != IR_LOAD_ASSERTION_ERROR &&
        !(d->lay.assert_loads_global && x->op == IR_LOAD_GLOBAL && x->name && strcmp(x->name, "AssertionError") == 0 &&
          known))
        return -1;
    for (int j = i + 1; j < d->n && d->nref[j] == 0; j++) {
        int op = d->in[j].op;
        if (op == IR_RAISE)
            return d->in[j].arg == 1 ? j : -1;
        if (dc_is_jump(op) || dc_is_terminator(op) || op == IR_FOR_ITER || dc_is_block_setup(op))
            return -1;
    }
    return -1;
}

/* Is `raise` statement s, which starts at `start`, the failing side of an
 * assert with no test (3.9+: it loads AssertionError with
 * LOAD_ASSERTION_ERROR)? */
int dc_is_assert_false(const dc *d, int start, const dp_node *s) {
    while (start < d->n && d->in[start].op == IR_NOP)
        start++;
    if (start >= d->n || d->in[start].op != IR_LOAD_ASSERTION_ERROR)
        return 0;
    const dp_node *e = s->a;
    if (e->kind == E_CALL && e->l1.n == 1 && e->l2.n == 0)
        e = e->a;
    return e->kind == E_NAME && strcmp(e->s, "AssertionError") == 0;
}

/* `assert c(, m)` whose failing side runs [fail, raise]; c holds when the
 * chain `s` goes to `pass` (else it goes to `other`).  The message is evaluated on a copy of the stack (the
 * side has no effect on the code that follows). */
static int assert_stmt(dc *d, const seg *s, int k, int stmt_start, int fail, int raise, int pass, int other,
                       dc_stack *st, dp_nodes *out);

/* Gathers the operands after s[0] that are tests too, and returns how many
 * of them form the longest complete condition. */
static int extend_chain(dc *d, seg *s, int end, dc_stack *st) {
    int k = 1, best = 1;
    while (k < MAX_SEGS) {
        int r = try_segment(d, s[k - 1].jump + 1, end, st, &s[k]);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        k++;
        if (chain_valid(d, s, k))
            best = k;
    }
    return best;
}

/* `if a: while b: body` tests a, then b, before the body: one chain to
 * the eye.  The loop's head says where its test starts: a jump back to an
 * operand (3.8/3.9 test at the top only), or, where the test is repeated
 * before a jump back to the body (3.10/3.11), the operands that repeat.
 * How many operands of s[0..k) the `if` keeps. */
static int cut_at_loop_test(dc *d, const seg *s, int k) {
    int B = s[k - 1].jump + 1, cut = k;
    for (int m = 1; m < k && cut == k; m++)
        if (dc_back_edge(d, s[m].start, d->n) >= s[m].start) /* (3.10/3.11 `while a and b: pass`: */
            cut = m;                                          /* the bottom test jumps back to the NOP) */
    int j = dc_back_edge(d, B, d->n);
    if (cut == k && j > B && dc_is_cond_jump(d->in[j].op)) {
        for (int m = 0; m < k; m++) {
            int len = B - s[m].start;
            if (j + 1 - len >= B && same_code(d, s[m].start, j + 1 - len, len)) {
                cut = m > 0 ? m : k;
                break;
            }
        }
    }
    while (cut > 1 && !chain_valid(d, s, cut))
        cut--;
    return cut;
}

/* Runs the chosen operands s[1..k) on the real stack (they were only
 * evaluated speculatively), consuming each test. */
static int consume_chain(dc *d, const seg *s, int from, int k, dc_stack *st) {
    for (int m = from; m < k; m++) {
        for (int q = s[m].start; q < s[m].jump;)
            if (value_step(d, q, st, &q) < 0)
                return -1;
        if (dc_pop(d, st, s[m].jump) == NULL)
            return -1;
        dc_mark(d, s[m].jump);
    }
    return 0;
}

/* `while cond:` whose body never falls through (it ends in break or
 * continue), so CPython emits no test at the bottom: the loop head at i
 * starts with a test that exits past the back edge `last`.  Returns 1 if
 * handled, 0 if the loop is not of this shape. */
/* 3.8/3.9: does the test of the loop [i, last] exit by jumping back to F,
 * where the region goes on (the head of the enclosing loop), with nothing
 * that runs between the loop and the region's end? */
static int exits_back(const dc *d, int i, int last, int end, int exit, int F) {
    if (F >= i || exit < 0 || !dc_continues_as(d, F, exit) || d->lay.while_test_at_bottom)
        return 0;
    for (int j = last + 1; j < end; j++)
        if (d->reach[j] && d->in[j].op != IR_NOP)
            return 0;
    return 1;
}

int dc_while_without_bottom_test(dc *d, int i, int last, int end, int exit, dc_stack *st, dp_nodes *out,
                                     int *next) {
    seg s[MAX_SEGS];
    int r = try_segment(d, i, end, st, &s[0]);
    if (r <= 0)
        return r;
    int k = extend_chain(d, s, end, st);
    if (k < 0)
        return -1;
    int B = s[k - 1].jump + 1, F = s[k - 1].target;
    /* (up to 3.9 a `while` has no bottom test: its exit follows the back
     * edge; later that layout is a `while True:` whose test breaks) */
    if (s[k - 1].or_pop || B > last || (F < last + 1 && !exits_back(d, i, last, end, exit, F)) ||
        (F == last + 1 && d->lay.while_test_at_bottom))
        return 0;
    /* (an exit past the region's end is where the region goes on: the
     * loop ends an if's branch, which jumps over the else) */
    int stop = F < i ? last + 1 : F, else_breaks = 0;
    if (F > end) {
        /* (`while c: ... else: break` ending the body of an enclosing
         * loop: the test jumps to that loop's exit, threaded through the
         * else's dead `break`; the loop's own breaks go on at its head) */
        else_breaks = d->loop && exit == d->loop->head && last < end && dc_nothing_runs(d, last + 1, end) &&
                      dc_continues_as(d, F, d->loop->brk) && !dc_continues_as(d, F, end);
        if (!else_breaks && !dc_continues_as(d, F, end))
            return 0;
        stop = end;
    }
    /* a loop ending its region whose breaks go where the region goes on:
     * [stop, end) is its else */
    int then = else_breaks || (F > i && stop < end && exit >= 0 && dc_jumps_as(d, B, last, exit, stop)) ? exit : -1;
    /* (a jump out past that exit is a `break` of a `while ... else`, or
     * threaded through it: the `while True:` form covers those) */
    for (int j = B; F == last + 1 && j < last; j++)
        if (d->in[j].target > F && !(then >= 0 && dc_continues_as(d, d->in[j].target, then)))
            return 0;
    for (int m = 0; m < k; m++)
        if (s[m].target != F && s[m].target != B && seg_starting_at(s, k, s[m].target) < 0)
            return 0;
    if (consume_chain(d, s, 0, k, st) < 0)
        return -1;
    dp_node *w = dc_stmt(d, S_WHILE, i);
    if (w == NULL || (w->a = parse_cond(d, s, 0, k - 1, B, F)) == NULL)
        return -1;
    dc_loop lp = {i, then >= 0 ? end : F, 0, NULL, then};
    /* (the body ends before its jump back at `last`, so a jump from it to
     * the exit is a `break`, not the end of the body; 3.8/3.9 may leave
     * dead jumps between the two, after a body whose last statement always
     * jumps) */
    int body_end = stop;
    if ((F == stop || else_breaks) && stop > last && dc_nothing_runs(d, last + 1, stop)) {
        body_end = last;
        dc_seen(d, last, last + 1);
    }
    if (dc_loop_body(d, &lp, B, body_end, st, &w->l1) < 0)
        return -1;
    /* code after the back edge that falls into the exit ends with `break` */
    for (int j = last + 1; j < stop; j++)
        if (d->reach[j] && d->nref[j] > 0) {
            if (dc_add(d, &w->l1, dc_stmt(d, S_BREAK, j)) < 0)
                return -1;
            break;
        }
    *next = stop;
    if (lp.then >= 0) {
        if (dc_loop_else(d, stop, end, st, &w->l2) < 0)
            return -1;
        /* (at the dead break's own place, which has its line) */
        if (else_breaks && dc_add(d, &w->l2, dc_stmt(d, S_BREAK, last + 1 < end ? last + 1 : F)) < 0)
            return -1;
        *next = end;
    }
    if (dc_add(d, out, w) < 0)
        return -1;
    return lp.then >= 0 ? REST_OF_REGION : 1;
}

/* `if a: assert b` compiles to one chain of tests `a and not b` jumping
 * over the assert's failing side: the if's test ends where the assert's
 * starts, on the assert's line.  Returns how many segments of `s` to keep. */
static int assert_split(const dc *d, const seg *s, int k) {
    int B = s[k - 1].jump + 1, F = s[k - 1].target, at = B;
    for (int side = 0; side < 2; side++, at = F) {
        while (at < d->n && d->in[at].op == IR_NOP && d->nref[at] == 0)
            at++;
        int line = at < d->n ? d->in[at].line : -1;
        if (line < 0 || (d->in[at].op != IR_LOAD_ASSERTION_ERROR && d->in[at].op != IR_LOAD_GLOBAL))
            continue;
        for (int m = 1; m < k; m++)
            if (d->in[s[m - 1].jump].line >= 0 && d->in[s[m - 1].jump].line < line &&
                d->in[s[m].start].line == line && assert_fail(d, at, s[m].start) >= 0 && chain_valid(d, s, m))
                return m;
    }
    return k;
}

static int assert_stmt(dc *d, const seg *s, int k, int stmt_start, int fail, int raise, int pass, int other,
                       dc_stack *st, dp_nodes *out) {
    dp_node *a = dc_stmt(d, S_ASSERT, stmt_start);
    if (a == NULL || (a->a = parse_cond(d, s, 0, k - 1, pass, other)) == NULL)
        return -1;
    dc_stack tmp = {0};
    if (dc_stack_copy(d, &tmp, st) < 0)
        return -1;
    for (int q = fail; q < raise;)
        if (value_step(d, q, &tmp, &q) <= 0)
            return dc_fail(d, q, "unexpected code in assert");
    dp_node *exc = dc_top(d, &tmp, 0, raise);
    if (exc == NULL)
        return -1;
    dc_seen(d, fail, raise + 1);
    if (exc->kind == E_CALL && exc->l1.n == 1 && exc->l2.n == 0)
        a->b = exc->l1.v[0];
    else if (exc->kind == E_CALL)
        return dc_fail(d, raise, "unexpected exception in assert");
    return dc_add(d, out, a);
}

/* Are instructions x and y the same operation (one copied by the compiler)? */
static int same_instr(const dp_instr *x, const dp_instr *y) {
    return x->op == y->op && x->arg == y->arg && x->arg2 == y->arg2 && x->cst == y->cst &&
           (x->name == y->name || (x->name && y->name && strcmp(x->name, y->name) == 0));
}

/* 3.10+ copies a short exit (`CALL; RETURN_VALUE`, `CALL; RAISE`) into both
 * arms of a conditional expression: `return f(a if c else b)` compiles to
 * `f; c; jump to F if not c; a; CALL; RETURN; F: b; CALL; RETURN`.  With values of this
 * statement below the test (`f`), `if c: return f(a)` would evaluate them
 * after the test: when both arms are one value followed by the same tail,
 * the value is the conditional expression and the walk goes on with the
 * else arm's copy of the tail.  0 when the arms are not so. */
static int ifexp_shared_tail(dc *d, dp_node *cond, int B, int F, int end, dc_stack *st, int *next) {
    int tail_op = F - 1 > B ? d->in[F - 1].op : IR_NOP;
    if (st->n <= d->base || (tail_op != IR_RETURN_VALUE && tail_op != IR_RAISE))
        return 0;
    int F2 = F;
    while (F2 < end && !dc_is_terminator(d->in[F2].op) && !dc_is_jump(d->in[F2].op) &&
           (F2 == F || d->nref[F2] == 0))
        F2++;
    if (F2 >= end || !same_instr(&d->in[F2], &d->in[F - 1]) || (F2 > F && d->nref[F2] != 0))
        return 0;
    F2++;
    for (int L = 1; L <= 8 && F - L > B && F2 - L > F; L++) {
        if (!same_instr(&d->in[F - L], &d->in[F2 - L]) || d->nref[F - L] != 0 || d->nref[F2 - L] != 0 ||
            dc_is_jump(d->in[F - L].op))
            return 0;
        dc_spec sp;
        dc_spec_begin(d, &sp);
        dc_stack t1 = {0}, t2 = {0};
        dp_node *a = NULL, *b = NULL;
        if (dc_stack_copy(d, &t1, st) == 0 && dc_stack_copy(d, &t2, st) == 0 &&
            (a = dc_value_region(d, B, F - L, &t1)) != NULL && dc_same_stack(&t1, st))
            b = dc_value_region(d, F, F2 - L, &t2);
        if (b && !dc_same_stack(&t2, st))
            b = NULL;
        if (!dc_spec_end(d, &sp, b ? 0 : -1))
            continue;
        dp_node *e = dc_node(d, E_IFEXP);
        if (e == NULL)
            return -1;
        e->a = cond;
        e->b = a;
        e->c = b;
        dc_seen(d, F - L, F);
        *next = F2 - L;
        return dc_push(d, st, e) < 0 ? -1 : 1;
    }
    return 0;
}

/* The conditional statement dc_cond reads: its operands s[0..k), the code
 * after the test (B), where its jump goes (F), the region around it. */
typedef struct cond {
    seg *s;
    int k, i, B, F;
    int stmt_start, end, exit;
    int finishes;      /* the region may complete its last statement past its end */
    int far_exit;      /* where the then-part goes on when F was past the region */
    dc_stack *st;
    dp_nodes *out;
    int *next;
} cond;

/* An assert: its failing side, after the jump, the assert being the last
 * statement before F; or at F, which nothing else reaches, the code after
 * the assert coming next (3.12+ loops: the jump back to the head).  1 if
 * one was read, 0 if none, -1 on error.  The statement's leftovers are
 * flushed when the jump makes a statement. */
static int cond_assert(dc *d, cond *c) {
    seg *s = c->s;
    int k = c->k, B = c->B, F = c->F, end = c->end;
    int fail = -1, raise = assert_fail(d, B, c->stmt_start), pass = F, cont = F;
    if (raise >= 0 && raise < F && F <= end && dc_nothing_runs(d, raise + 1, F)) {
        fail = B;
    } else if (raise >= 0 && (F < c->i || F > end) && F == c->exit && dc_nothing_runs(d, raise + 1, end)) {
        fail = B; /* passing goes where the region flows: the loop head, the if's end */
        cont = end;
    } else if (F > B && F < d->n && (raise = assert_fail(d, F, c->stmt_start)) >= 0 &&
               (dc_is_terminator(d->in[F - 1].op) || d->in[F - 1].op == IR_JUMP)) {
        int refs = 0;
        for (int m = 0; m < k; m++)
            refs += s[m].target == F;
        if (refs == d->nref[F]) {
            fail = F;
            pass = cont = B;
        }
    }
    /* from here on the jump makes a statement: values left below it go to
     * temporaries first (see dc_flush_leftovers) */
    if ((F < c->i || fail >= 0 || F > end) && dc_flush_leftovers(d, c->st, 0, NULL, c->out, c->stmt_start) < 0)
        return -1;
    if (fail < 0)
        return 0;
    if (assert_stmt(d, s, k, c->stmt_start, fail, raise, pass, pass == F ? B : F, c->st, c->out) < 0)
        return -1;
    if (fail == F) /* the walk steps over the failing side when it gets there */
        dc_set(d, &d->skip_to[F], raise + 1);
    *c->next = cont;
    return 1;
}

/* `if cond: [B, X)` then the jump back at X, tried: the then-part falls
 * into X (falls), or never completes.  1 when added, 0 when not that, -1
 * on error. */
static int if_up_to(dc *d, cond *c, int X, int falls) {
    dc_spec sp;
    dc_stack saved = {0};
    dp_node *ifs = dc_stmt(d, S_IF, c->stmt_start);
    if (ifs == NULL || dc_stack_copy(d, &saved, c->st) < 0 ||
        (ifs->a = parse_cond(d, c->s, 0, c->k - 1, c->B, c->F)) == NULL)
        return -1;
    dc_spec_begin(d, &sp);
    int r = dc_region(d, c->B, X, X, c->st, &ifs->l1);
    /* (a dead jump is no way out of a then-part that falls into it) */
    int fits = dc_spec_end(d, &sp, r) && (falls ? d->region_stop == X && d->region_live : !d->region_live);
    /* (not falling through, it may have popped what the code after the
     * if still holds: a return out of a for loop pops the iterator) */
    if ((!fits || !falls) && dc_stack_copy(d, c->st, &saved) < 0)
        return -1;
    if (!fits)
        return 0;
    *c->next = X;
    return dc_add(d, c->out, ifs) < 0 ? -1 : 1;
}

/* A backward conditional jump: `if cond: continue` in a loop; dc_cond's
 * result. */
static int cond_backward(dc *d, cond *c) {
    seg *s = c->s;
    int k = c->k, B = c->B, F = c->F, end = c->end, exit = c->exit;
    dc_stack *st = c->st;
    dp_node *test = parse_cond(d, s, 0, k - 1, F, B);
    int handled;
    dp_nodes body = {0};
    if (test == NULL || dc_jump_stmt(d, c->i, F, exit, &body, &handled) < 0)
        return -1;
    if (!handled)
        return dc_fail(d, s[k - 1].jump, "unstructured backward jump");
    /* the region ends by jumping back there: `if cond: <up to that
     * jump>` then the jump, which CPython threaded the if's jump
     * through, when the if falls into it (tried: the rest may not be
     * one block) */
    int r = 0;
    if (exit != F && end - 1 > B && end <= d->n && d->in[end - 1].op == IR_JUMP && d->in[end - 1].target == F &&
        (r = if_up_to(d, c, end - 1, 1)) != 0)
        return r < 0 ? -1 : 0;
    /* or the region itself flows to where the jump goes (an `elif` at the
     * end of a loop's body: the jump past the if's end was threaded
     * through the jump back): `if cond: <the rest of the region>` */
    if (exit >= 0 && exit != F && end > B && end <= d->n && dc_continues_as(d, exit, F) &&
        (r = if_up_to(d, c, end, 1)) != 0)
        return r < 0 ? -1 : 0;
    /* 3.8/3.9: or `if not cond: <... return>` at the end of the loop's
     * body: the dead jump back after the return is where the if's jump
     * went before CPython threaded it (a jump erased after a return
     * leaves no such block) */
    int X = B;
    while (d->lay.keeps_dead_blocks && X <= end && X < d->n &&
           !(d->in[X].op == IR_JUMP && d->in[X].target == F && !d->reach[X] && X > B && d->in[X - 1].op == IR_RETURN_VALUE))
        X++;
    if (X <= end && X < d->n && !dc_jumps_into(d, B, X, X, INT_MAX) && (r = if_up_to(d, c, X, 0)) != 0) {
        if (r < 0 || X == end)
            return r < 0 ? -1 : 0;
        /* (that jump is the statement after the if: a `continue` where
         * more of the region follows, not dead code to step over) */
        int jumped;
        if (dc_jump_stmt(d, X, F, exit, c->out, &jumped) < 0)
            return -1;
        dc_mark(d, X);
        *c->next = X + 1;
        return 0;
    }
    dp_node *ifs = dc_stmt(d, S_IF, c->stmt_start);
    if (ifs == NULL)
        return -1;
    if (exit == F) {
        /* the region loops back anyway: `if not cond: rest` */
        if ((ifs->a = parse_cond(d, s, 0, k - 1, B, F)) == NULL || dc_region(d, B, end, exit, st, &ifs->l1) < 0)
            return -1;
        *c->next = end;
        return dc_add(d, c->out, ifs) < 0 ? -1 : REST_OF_REGION;
    }
    ifs->a = test;
    ifs->l1 = body;
    *c->next = B;
    return dc_add(d, c->out, ifs);
}

/* A jump past the region's end: `if cond: <break, continue, the
 * region's way out>` (1, statement added), or one to where the region
 * flows anyway, read from here on as a jump to the end (0), or -1. */
static int cond_past_end(dc *d, cond *c) {
    seg *s = c->s;
    int k = c->k, B = c->B, F = c->F, i = c->i, exit = c->exit;
    /* the last statement of a try body can end past the protected range
     * (its RETURN_VALUE cannot raise, a `continue` or `break` unwinds the
     * try before it jumps): `if c: return x` falls to F there; with a
     * constant x, or for `if not c: continue`, the whole branch is past it
     * (B == end, 3.11: F is the JUMP_FORWARD over the handler) */
    const dp_instr *last = F > 0 && F <= d->n ? &d->in[F - 1] : NULL;
    /* (3.12+ reads `if not c: continue` from its inverted jump: cond_loops) */
    int leaves_loop = !d->lay.forward_cond_jumps && last && last->op == IR_JUMP && d->loop &&
                      (last->target == d->loop->head || last->target == d->loop->brk);
    if (c->finishes && F > c->end && F < d->n && B <= c->end &&
        (last->op == IR_RETURN_VALUE || last->op == IR_RAISE || leaves_loop)) {
        int inside = 1;
        for (int j = c->end; j < F && inside; j++)
            inside = d->in[j].op != IR_PUSH_EXC_INFO && !(d->nref[j] > 0 && j > B);
        if (inside)
            c->end = F;
    }
    int end = c->end;
    if (F <= end)
        return 0;
    int handled;
    dp_nodes body = {0};
    /* (a copy of the `return <const>` the region exits to is that exit) */
    if (dc_jump_stmt(d, i, same_exit(d, F, exit) ? exit : F, exit, &body, &handled) < 0)
        return -1;
    if (!handled) {
        int r = dc_far_jump_stmt(d, i, F, end, exit, &body);
        if (r < 0)
            return -1;
        if (r == 0)
            return dc_fail(d, i, "conditional jump past its enclosing block");
        handled = 1;
    }
    if (handled && body.n > 0) {
        dp_node *ifs = dc_stmt(d, S_IF, c->stmt_start);
        if (ifs == NULL || (ifs->a = parse_cond(d, s, 0, k - 1, F, B)) == NULL)
            return -1;
        ifs->l1 = body;
        *c->next = B;
        return dc_add(d, c->out, ifs) < 0 ? -1 : 1;
    }
    /* jumps to where this region flows anyway (its exit: the operands
     * jumping there are read as going to its end) */
    for (int m = 0; handled && m < k; m++)
        if (s[m].target == F)
            s[m].target = end;
    c->F = end;
    c->far_exit = exit; /* where the then-part goes on too */
    return 0;
}

/* 3.12+: is the JUMP at j back to the loop head one that the compiler's
 * jump normalization made for a conditional jump at cj?  A conditional jump
 * never goes backward there: one to the loop head is inverted to skip a new
 * block holding `JUMP head`, made after the exception table was labelled,
 * so no handler covers that JUMP (3.13 leaves the inverted jump itself
 * uncovered too).  A `continue` statement's JUMP is covered by the handler
 * of the loop around it (a try around the loop, a generator's epilogue):
 * where the test before cj is under that handler and j is under none, the
 * source was `if c: rest`, the rest ending the loop body.  (Not in a 3.12+
 * inlined comprehension, whose cleanup handler covers its loop: there the
 * clauses `if a if b` and `if a and b` compile the same, and the second
 * reads better.) */
static int normalized_back_jump(const dc *d, int cj, int j) {
    int h = dp_cfg_handler(&d->cfg, cj - 1);
    int hj = dp_cfg_handler(&d->cfg, cj);
    return d->lay.forward_cond_jumps && h >= 0 && (hj == h || hj < 0) && dp_cfg_handler(&d->cfg, j) < 0 &&
           dp_cfg_handler(&d->cfg, d->loop->head) == h && !(d->skip_to[h] > h && d->in[h].op == IR_SWAP);
}

/* Loops whose test this is: 3.12+ `if c: rest` ending a loop body, a
 * while loop with its test repeated at the bottom, a 3.12+ while loop
 * with cold blocks.  dc_cond's result when one was read, else NOT_A_LOOP. */
enum { NOT_A_LOOP = 0x10000 };
static int cond_loops(dc *d, cond *c) {
    seg *s = c->s;
    int k = c->k, B = c->B, F = c->F, end = c->end, exit = c->exit;
    dc_stack *st = c->st;
    /* 3.12+ has no backward conditional jump: `if c: rest` ending a loop
     * body compiles to `c; jump to rest if c; JUMP head` just like `if not
     * c: continue; rest`.  Where `not c` is a test the AST optimizer folds
     * (`not (a in b)`), or where the JUMP is one the compiler made (see
     * normalized_back_jump), only the first spelling recompiles the same. */
    if (d->loop && exit == d->loop->head && exit != d->loop->brk && F > B && F <= end) {
        int j = B;
        while (j < F && d->in[j].op == IR_NOP)
            j++;
        dp_node *cont = NULL;
        if (j == F - 1 && d->in[j].op == IR_JUMP && d->in[j].target == exit &&
            (cont = parse_cond(d, s, 0, k - 1, B, F)) == NULL)
            return -1;
        if (cont && (folded_nots(cont) > 0 || normalized_back_jump(d, s[k - 1].jump, j))) {
            dp_node *ifs = dc_stmt(d, S_IF, c->stmt_start);
            if (ifs == NULL || (ifs->a = parse_cond(d, s, 0, k - 1, F, B)) == NULL)
                return -1;
            dc_seen(d, B, F);
            if (dc_region(d, F, end, exit, st, &ifs->l1) < 0)
                return -1;
            *c->next = end;
            return dc_add(d, c->out, ifs) < 0 ? -1 : REST_OF_REGION;
        }
    }
    /* while loop whose test is repeated at the bottom (a chained comparison
     * there leaves its cleanup between the test and the loop exit) */
    int last = F - 1;
    while (last - 1 > B && same_exit(d, last - 1, F) && last - 1 != F)
        last -= 2; /* the loop exit `return` duplicated after the bottom test (a copy per jump) */
    while (last > B && (d->in[last].op == IR_NOP || d->in[last].op == IR_POP_TOP ||
                        (d->in[last].op == IR_JUMP && d->in[last].target == F)))
        last--;
    int body = B; /* past the NOPs left by a chained comparison */
    while (body < last && d->in[body].op == IR_NOP)
        body++;
    if (last > B && (d->in[last].target == B || d->in[last].target == body) &&
        (dc_is_cond_jump(d->in[last].op) || (d->in[last].op == IR_JUMP && d->lay.forward_cond_jumps))) {
        if (dc_flush_leftovers(d, st, 0, NULL, c->out, c->stmt_start) < 0)
            return -1;
        int test_end = d->in[last].op == IR_JUMP ? last : last + 1;
        int r = cond_while(d, s, k, test_end, last, end, exit, st, c->out, c->next);
        if (r != 0)
            return r < 0 ? -1 : r == REST_OF_REGION ? REST_OF_REGION : 0;
    }
    if (d->lay.cold_handlers && F > B && F <= end && dc_is_terminator(d->in[F - 1].op)) {
        int r = cold_cond_while(d, s, k, c->stmt_start, end, st, c->out, c->next);
        if (r != 0)
            return r < 0 ? -1 : 0;
    }
    return NOT_A_LOOP;
}

/* The then-part [B, then_end) and the else-part [F, J) of an if whose
 * then-part jumps over what follows it (J > F: an else, or the rest of
 * the region, `rest`); J_exit: where both branches go on (-1: J). */
typedef struct branches {
    int then_end, J, J_exit, rest;
} branches;

/* The then-part ends in code that never falls through (a try's cleanup
 * block, a return, an assert's failing side, a continue or break): if it
 * jumps past F, [F, J) is the else. */
static void else_past_a_leaving_then(dc *d, const cond *c, branches *b) {
    int B = c->B, F = c->F, end = c->end, exit = c->exit;
    int vj = 0, to_f = 0;
    for (int j = B; j < F; j++) {
        int op = d->in[j].op;
        int t = op == IR_JUMP || (dc_is_cond_jump(op) && op != IR_JUMP_IF_FALSE_OR_POP && op != IR_JUMP_IF_TRUE_OR_POP)
                    ? d->in[j].target : -1;
        if (t > F && t <= end && t > b->J && !(d->loop && (t == d->loop->brk || t == d->loop->head)))
            b->J = t;
        /* (a try's clause going where the region goes on past its
         * end: the rest of the region is the else) */
        else if (t > end && end > b->J && dc_continues_as(d, t, exit >= 0 ? exit : end) &&
                 !(d->loop && (t == d->loop->brk || t == d->loop->head))) {
            b->J = end;
            b->J_exit = exit >= 0 ? exit : end; /* (where the then-part goes on too) */
        }
        else if (d->vjump[j] >= 0 && d->vjump[j] == (exit >= 0 ? exit : end))
            vj = 1;
        to_f |= d->in[j].target == F; /* (any jump: the then-part goes on there) */
    }
    /* (or, where it jumps nowhere past F nor to F, a duplicate of the
     * code there: 3.12+ copies the return after a try into its except
     * clauses) */
    if (b->J == F && vj && !to_f && end > F) {
        b->J = end;
        b->J_exit = exit >= 0 ? exit : end;
    }
}

/* 3.12+: a then-part that never falls through by itself may go on from
 * the handlers of its code, placed after all other code: a with whose
 * __exit__ suppresses the exception, an except clause that completes, jump
 * back to the code after the if.  The one place in (F, end] they jump to
 * (walking the handlers' blocks in the CFG, at most COLD_WALK of them), or
 * -1: none, more than one, or a jump back elsewhere. */
enum { COLD_WALK = 128 };

/* Adds block b to the walk's queue unless it is there: -1 when full. */
static int queue_block(int *queue, int *nq, int b) {
    for (int k = 0; k < *nq; k++)
        if (queue[k] == b)
            return 0;
    if (*nq == COLD_WALK)
        return -1;
    queue[(*nq)++] = b;
    return 0;
}

static int cold_way_on(dc *d, int B, int F, int end) {
    const dp_cfg *g = &d->cfg;
    if (!d->lay.cold_handlers)
        return -1;
    /* (only handlers of statements inside the then-part: one that also
     * covers the test is an enclosing statement's) */
    int queue[COLD_WALK], nq = 0, found = -1, cold = d->n, outer = B > 0 ? dc_handler_at(d, B - 1) : -1;
    for (int j = B; j < F; j++) {
        int h = dc_handler_at(d, j), hb = h > F && h < d->n && h != outer ? g->block_of[h] : -1;
        if (hb < 0)
            continue;
        if (queue_block(queue, &nq, hb) < 0)
            return -1;
        cold = h < cold ? h : cold; /* (the handlers and what only they reach lie past it) */
    }
    for (int k = 0; k < nq; k++) {
        const dp_block *blk = &g->b[queue[k]];
        for (int e = 0; e < blk->nsucc; e++) {
            int to = blk->succ[e].to, at = g->b[to].start;
            if (blk->succ[e].kind == DP_EDGE_EXC) /* (re-raised: on to enclosing handlers) */
                continue;
            if (at < cold) { /* back in the code before the handlers */
                if ((found >= 0 && found != at) || at <= F || at > end)
                    return -1;
                found = at;
                continue;
            }
            if (queue_block(queue, &nq, to) < 0)
                return -1;
        }
    }
    return found;
}

/* 3.8-3.9: the peephole optimizer erases the dead jump after a then-part
 * that returns (not one that raises) but keeps the code it jumped to, the end
 * of an else, as a block of its own: unreachable code just after a
 * returning else (the implicit `return None`, an except clause's exit).
 * Where the rest of the region is such code from some point on after a
 * return, the code before it was the else.  Returns that point, or F. */
static int legacy_dead_else_end(const dc *d, int B, int F, int end) {
    if (!d->lay.keeps_dead_blocks || end > d->n)
        return F;
    int X = end;
    while (X > F && !d->reach[X - 1])
        X--;
    /* (or the region ends there: a then-part's dead jump over an else
     * kept for that reason) */
    if ((X == end && (end >= d->n || d->reach[end])) || X <= F || d->in[X - 1].op != IR_RETURN_VALUE)
        return F;
    /* (an else leaves by its returns alone: the then-part jumps to no
     * code after it, no jump of the else goes on past it, and the dead
     * code is no loop's back edge into it) */
    if (dc_jumps_into(d, B, F, F, F + 1) || dc_jumps_into(d, F, X, X, INT_MAX) || dc_jumps_into(d, X, end, F + 1, X))
        return F;
    return X;
}

static void cond_branches(dc *d, const cond *c, branches *b) {
    int B = c->B, F = c->F, end = c->end, exit = c->exit;
    b->then_end = F, b->J = F, b->J_exit = -1, b->rest = 0;
    if (F - 1 >= B && d->in[F - 1].op == IR_JUMP && d->in[F - 1].target > F) {
        int t = d->in[F - 1].target;
        int is_break = d->loop && t == d->loop->brk;
        int is_continue = d->loop && t == d->loop->head;
        /* (past the region's end it must be where the region goes on:
         * else the jump is a statement of the then-part) */
        if (!is_break && (!is_continue || t == exit) && (t <= end || dc_continues_as(d, t, exit >= 0 ? exit : end))) {
            if (t > end)
                dc_skip_exit_copy_at(d, t, exit >= 0 ? exit : end);
            b->then_end = F - 1;
            b->J = t > end ? end : t;
            b->J_exit = t > end && exit >= 0 ? exit : b->J; /* where both branches go on */
            dc_mark(d, F - 1);
        }
    }
    /* (3.12+ threads the jump out of a nested if to the end of a then-part
     * ending in `continue` or `break` on to the join past the else) */
    int leaves_loop = F - 1 >= B && d->in[F - 1].op == IR_JUMP && d->loop &&
                      (d->in[F - 1].target == d->loop->head || d->in[F - 1].target == d->loop->brk);
    if (b->J == F && (leaves_loop || (F - 1 >= B && (d->in[F - 1].op == IR_RERAISE ||
                                                     d->in[F - 1].op == IR_RETURN_VALUE || d->in[F - 1].op == IR_RAISE))))
        else_past_a_leaving_then(d, c, b);
    if (b->J == F && F - 1 >= B && d->in[F - 1].op == IR_RETURN_VALUE)
        b->J = legacy_dead_else_end(d, B, F, end);
    if (b->J == F && F - 1 >= B && !dp_falls_through(d->in[F - 1].op) && d->in[F - 1].op != IR_JUMP) {
        int t = cold_way_on(d, B, F, end);
        if (t > F && !dc_jumps_into(d, B, F, F, t))
            b->J = t;
    }
    /* the then-part jumps to where the region goes on, from outside it (3.12+:
     * an except clause's exit, `POP_EXCEPT; JUMP` back to the code after the
     * try, copied into each branch), or it ends with a loop whose breaks go
     * there (threaded past the if's end to an enclosing loop's head): the
     * rest of the region is the else, and the statement falls off the
     * region only as the else does.  (Not when the then-part jumps into it.) */
    int ends_in_loop = F - 1 > B && d->in[F - 1].op == IR_JUMP && d->in[F - 1].target >= B &&
                       d->in[F - 1].target < F - 1;
    for (int j = B; ends_in_loop && j < F - 1; j++)
        if (d->in[j].op == IR_JUMP && d->in[j].target == exit)
            ends_in_loop = 2;
    if (b->J == F && F < end && exit >= 0 && (exit < B || exit > end) && F - 1 >= B && d->in[F - 1].op == IR_JUMP &&
        ((d->in[F - 1].target == exit && !(d->loop && (exit == d->loop->head || exit == d->loop->brk))) ||
         (ends_in_loop == 2 && !(d->loop && exit == d->loop->brk))) &&
        !dc_jumps_into(d, B, F, F, end)) {
        b->J = end;
        b->J_exit = exit;
        b->rest = 1;
    }
    /* 3.8-3.9: a then-part that raises keeps its dead jump over the else,
     * threaded on to the loop's head where the if ends the loop's body:
     * the rest of the body is the else (a `continue` written after the
     * raise would be dead code of the same bytecode) */
    if (b->J == F && F < end && d->lay.keeps_dead_blocks && d->loop && exit == d->loop->head && F - 2 >= B &&
        d->in[F - 1].op == IR_JUMP && d->in[F - 1].target == exit && !d->reach[F - 1] &&
        (d->in[F - 2].op == IR_RAISE || d->in[F - 2].op == IR_RERAISE) && !dc_jumps_into(d, B, F, F, end)) {
        b->then_end = F - 1;
        dc_mark(d, F - 1);
        b->J = end;
        b->J_exit = exit;
        b->rest = 1;
    }
}

/* A conditional expression leaves one value from each branch: 1 if it is
 * one (pushed), 0 if not, -1 on error. */
static int cond_ifexp(dc *d, const cond *c, dp_node *test, const branches *b) {
    int B = c->B, F = c->F, J = b->J;
    dc_spec sp;
    dc_spec_begin(d, &sp);
    dc_stack t1 = {0}, t2 = {0};
    dp_node *a = NULL, *e2 = NULL;
    /* (a branch that is no value leaves its loops as they were, as the
     * failed speculation unmarks what it consumed: a jump back marked seen
     * would hide the loop from the statement walk) */
    if (dc_stack_copy(d, &t1, c->st) == 0 && dc_stack_copy(d, &t2, c->st) == 0) {
        a = dc_value_region(d, B, b->then_end, &t1);
        e2 = a ? dc_value_region(d, F, J, &t2) : NULL;
    }
    if (!dc_spec_end(d, &sp, e2 ? 0 : -1))
        return 0;
    dp_node *e = dc_node(d, E_IFEXP);
    if (e == NULL)
        return -1;
    e->a = test;
    e->b = a;
    e->c = e2;
    *c->next = J;
    return dc_push(d, c->st, e) < 0 ? -1 : 1;
}

/* The if statement: `if test: [B, then_end)` and its else [F, J). */
static int cond_if(dc *d, const cond *c, dp_node *test, branches *b) {
    int B = c->B, F = c->F, J = b->J;
    dc_stack *st = c->st;
    if (dc_flush_leftovers(d, st, 0, NULL, c->out, c->stmt_start) < 0)
        return -1;
    dp_node *ifs = dc_stmt(d, S_IF, c->stmt_start);
    if (ifs == NULL)
        return -1;
    ifs->a = test;
    dc_stack t1 = {0};
    if (dc_stack_copy(d, &t1, st) < 0)
        return -1;
    if (J > F && b->J_exit < 0)
        b->J_exit = J;
    /* (J_exit is set where the then-part jumps on past the region's end,
     * also with no else between: J == F == end) */
    int then_exit = J > F || b->J_exit >= 0 ? b->J_exit : c->far_exit >= 0 ? c->far_exit : F;
    if (dc_region(d, B, b->then_end, then_exit, &t1, &ifs->l1) < 0)
        return -1;
    if (d->region_live && !dc_same_stack(&t1, st))
        return dc_fail(d, B, "a value flows out of the branch");
    dc_stack before = {0};
    if (dc_stack_copy(d, &before, st) < 0)
        return -1;
    if (J > F && dc_region(d, F, J, b->J_exit, st, &ifs->l2) < 0)
        return -1;
    if (J > F && d->region_live && !dc_same_stack(st, &before))
        return dc_fail(d, F, "a value flows out of the branch");
    /* (an else that never falls through, a `return` out of an except
     * clause, may have popped what the code after the if still holds) */
    if (J > F && !d->region_live && dc_stack_copy(d, st, &before) < 0)
        return -1;
    *c->next = J;
    if (dc_add(d, c->out, ifs) < 0)
        return -1;
    return b->rest ? REST_OF_REGION : 0;
}

/* `a and b and c ...` as a value: every operand but the last keeps its
 * value and jumps to the end F when it decides (JUMP_IF_FALSE_OR_POP F).
 * The operands from B on that do so are taken here, one after the other,
 * into *left (the chain so far, an E_BOOLOP when it grows): the value
 * region [B, F) holding the rest is then one operand, not a chain nested
 * as deep as it is long.  Returns where that rest starts, -1 on error. */
static int flat_operands(dc *d, int is_or, int B, int F, dc_stack *st, dp_node **left) {
    dp_node *chain = NULL;
    for (;;) {
        seg g;
        int r = try_segment(d, B, F, st, &g);
        if (r < 0)
            return -1;
        if (r == 0 || !g.or_pop || g.target != F || g.jumps_if != is_or)
            return B;
        for (int q = g.start; q < g.jump;)
            if (value_step(d, q, st, &q) < 0)
                return -1;
        dp_node *v = dc_pop(d, st, g.jump);
        if (v == NULL)
            return -1;
        dc_mark(d, g.jump);
        if (chain == NULL) {
            /* (built once and grown: dc_boolop copies its operands) */
            if ((chain = dc_boolop(d, is_or, *left, v)) == NULL)
                return -1;
            *left = chain;
        } else if (v->kind == E_BOOLOP && v->op == is_or) {
            for (int m = 0; m < v->l1.n; m++)
                if (dc_add(d, &chain->l1, v->l1.v[m]) < 0)
                    return -1;
        } else if (dc_add(d, &chain->l1, v) < 0) {
            return -1;
        }
        B = g.jump + 1;
    }
}

int dc_cond(dc *d, int stmt_start, int i, int end, int exit, dc_stack *st, dp_nodes *out, int *next) {
    int finishes = d->cond_finishes;
    d->cond_finishes = 0;
    seg s[MAX_SEGS];
    int k = 1;
    dp_node *x = dc_pop(d, st, i);
    if (x == NULL)
        return -1;
    s[0].start = stmt_start;
    s[0].jump = i;
    s[0].target = d->in[i].target;
    s[0].or_pop = d->in[i].op == IR_JUMP_IF_FALSE_OR_POP || d->in[i].op == IR_JUMP_IF_TRUE_OR_POP;
    if ((s[0].e = tested(d, x, d->in[i].op, &s[0].jumps_if)) == NULL)
        return -1;
    if ((k = extend_chain(d, s, end, st)) < 0)
        return -1;
    if ((k = cut_at_loop_test(d, s, k)) < 1 || (k = assert_split(d, s, k)) < 0 || consume_chain(d, s, 1, k, st) < 0)
        return -1;
    int B = s[k - 1].jump + 1, F = unify_exits(d, s, k);
    /* the chosen operands are consumed: re-run them on the real stack */
    for (int m = 1; m < k; m++) {
        for (int q = s[m].start; q < s[m].jump;)
            if (value_step(d, q, st, &q) < 0)
                return -1;
        dc_pop(d, st, s[m].jump);
    }
    if (s[k - 1].or_pop) {
        /* value context: (chain) and/or (value region [B, F)) */
        int is_or = s[k - 1].jumps_if;
        dp_node *left = is_or ? parse_cond(d, s, 0, k - 1, F, B) : parse_cond(d, s, 0, k - 1, B, F);
        if (k == 1)
            left = x;
        if (left == NULL || (B = flat_operands(d, is_or, B, F, st, &left)) < 0)
            return -1;
        dp_node *right = dc_value_region(d, B, F, st);
        if (right == NULL)
            return -1;
        *next = F;
        return dc_push(d, st, dc_boolop(d, is_or, left, right));
    }
    cond c = {s, k, i, B, F, stmt_start, end, exit, finishes, -1, st, out, next};
    int r = cond_assert(d, &c);
    if (r != 0)
        return r;
    if (F < i)
        return cond_backward(d, &c);
    if (F > d->n)
        return dc_fail(d, i, "jump out of range");
    if ((r = cond_past_end(d, &c)) != 0)
        return r < 0 ? -1 : 0;
    if ((r = cond_loops(d, &c)) != NOT_A_LOOP)
        return r;
    dp_node *test = parse_cond(d, s, 0, k - 1, c.B, c.F);
    if (test == NULL)
        return -1;
    branches b;
    cond_branches(d, &c, &b);
    if (b.J > c.F && (r = cond_ifexp(d, &c, test, &b)) != 0)
        return r < 0 ? -1 : 0;
    if (b.J == c.F && (r = ifexp_shared_tail(d, test, c.B, c.F, c.end, st, next)) != 0)
        return r < 0 ? -1 : 0;
    return cond_if(d, &c, test, &b);
}