/* try/except/finally and with for 3.8-3.10, recovered from the block-stack
 * instructions (SETUP_FINALLY, SETUP_WITH, POP_BLOCK, ...) instead of an
 * exception table.  The region walker (stmt.c) hands us every such
 * instruction; a SETUP starts a statement, which we structure whole, and the
 * POP_BLOCK/POP_EXCEPT met inside its parts are consumed here with the code
 * the compiler emits around them (finally copies, __exit__ calls).
 *
 * Layouts (IR, after lift dropped the DUP_TOP before exception matches):
 *   try/except   SETUP_FINALLY H; body; POP_BLOCK; JUMP else|join
 *                H: [type; CHECK_EXC_MATCH; POP_JUMP_IF_FALSE next;]
 *                   POP_TOP; STORE e|POP_TOP; POP_TOP; clause; POP_EXCEPT; JUMP join
 *                ...; RERAISE (3.8: END_FINALLY); else; join:
 *   try/finally  3.9/3.10: SETUP_FINALLY H; body; POP_BLOCK; <finally copy>; JUMP after
 *                H: finally; RERAISE; after:
 *                3.8: SETUP_FINALLY H; body; POP_BLOCK; BEGIN_FINALLY; H: finally; END_FINALLY
 *   with         mgr; SETUP_WITH H; target; body; POP_BLOCK; <call __exit__>; ...
 * A handler starts with six values above its block (the previous exception
 * and the current one, three values each). */
#include <stdint.h>
#include <string.h>

#include "dc.h"

/* Any instruction that can go elsewhere than the next one, the block
 * setups (to their handler) and a 3.8 finally call included. */
/* Any op with a target: a jump, FOR_ITER, a SETUP_*, CALL_FINALLY. */
static int is_jump_op(int op) { return (dp_op_info(op)->flags & (DP_IRF_JUMP | DP_IRF_SETUP)) != 0; }

/* Is [i, i + len) the same code as [j, j + len), jumps inside keeping their
 * relative layout?  A jump of the original to its end may go in the copy i
 * where the copy continues (threaded, or to a copy of a return there). */
static int is_copy_to(const dc *d, int i, int j, int len, int jend) {
    if (i < 0 || j < 0 || len < 0 || i + len > d->n || j + len > d->n)
        return 0;
    for (int k = 0; k < len; k++) {
        const dp_instr *a = &d->in[i + k], *b = &d->in[j + k];
        if (!dc_same_instr(a, b) || (a->target >= 0) != (b->target >= 0))
            return 0;
        if (a->target >= 0 && a->target - i != b->target - j &&
            !(b->target == jend && dc_is_jump(a->op) && dc_same_continuation(d, a->target, i + len)))
            return 0;
    }
    return 1;
}

static int is_copy(const dc *d, int i, int j, int len) {
    return is_copy_to(d, i, j, len, j + len);
}

/* The end (RETURN_VALUE) of a tail starting at k that only computes a
 * return value, or -1. */
static int tail_end(const dc *d, int k) {
    int e = k;
    while (e < d->n && d->in[e].op != IR_RETURN_VALUE && !is_jump_op(d->in[e].op) && d->in[e].op != IR_RERAISE &&
           d->in[e].op != IR_RAISE && d->in[e].op != IR_POP_BLOCK && d->in[e].op != IR_POP_EXCEPT)
        e++;
    return e < d->n && d->in[e].op == IR_RETURN_VALUE ? e : -1;
}

/* The RETURN_VALUE or RAISE ending straight code at k (no jump, no block
 * left or entered but an except block), or -1. */
static int straight_end(const dc *d, int k) {
    for (int e = k; e >= 0 && e < d->n; e++) {
        int op = d->in[e].op;
        if (op == IR_RETURN_VALUE || op == IR_RAISE)
            return e;
        if (is_jump_op(op) || op == IR_RERAISE || op == IR_POP_BLOCK || op == IR_END_FINALLY)
            return -1;
    }
    return -1;
}

/* 3.10 copies a small exit block (`return x`) to the ends of the parts of a
 * try or with statement instead of jumping there: is the code at k a copy
 * of the code at `target`?  Then it is read as a jump to target. */
static int tail_copy_of(dc *d, int k, int target) {
    int e = k < d->n ? tail_end(d, k) : -1;
    if (e <= k || target < 0 || target == k || !is_copy(d, k, target, e + 1 - k))
        return 0;
    dc_set(d, &d->vjump[k], target);
    dc_seen(d, k, e + 1);
    return 1;
}

/* 3.10 copies the code after a with into the end of its body when that
 * code is small: is [k, H), up to the with's handler at H, straight code
 * ending in a raise and a copy of the code at `after`?  Then it is read as
 * a jump there. */
static int raise_copy_of(dc *d, int k, int H, int after) {
    if (k >= H || after < 0 || after + (H - k) > d->n || (d->in[H - 1].op != IR_RAISE && d->in[H - 1].op != IR_RERAISE))
        return 0;
    for (int q = k; q < H; q++)
        if (is_jump_op(d->in[q].op) || d->in[q].op == IR_POP_BLOCK || d->in[q].op == IR_POP_EXCEPT ||
            (q < H - 1 && (d->in[q].op == IR_RAISE || d->in[q].op == IR_RERAISE || d->in[q].op == IR_RETURN_VALUE)))
            return 0;
    if (!is_copy(d, k, after, H - k))
        return 0;
    dc_set(d, &d->vjump[k], after);
    dc_seen(d, k, H);
    return 1;
}

/* The SETUP_* of the innermost block open at i, from the CFG's exception
 * regions (the block stack as CPython 3.11's compiler walks it), or -1. */
static int block_of(const dc *d, int i) {
    int32_t r = i >= 0 && i < d->n ? d->cfg.exc_of[i] : -1;
    return r >= 0 ? d->cfg.exc[r].setup : -1;
}

/* The block enclosing the one that SETUP s opens: the one open at s. */
static int enclosing_block(const dc *d, int s) { return block_of(d, s); }

/* `e = None; del e` (the end of every `except ... as e` clause) at i? */
static int is_name_cleanup(const dc *d, int i) {
    return i >= 0 && i + 2 < d->n && d->in[i].op == IR_LOAD_CONST && d->in[i].cst && d->in[i].cst->kind == DP_CONST_NONE &&
           (d->in[i + 1].op == IR_STORE_FAST || d->in[i + 1].op == IR_STORE_NAME || d->in[i + 1].op == IR_STORE_DEREF ||
            d->in[i + 1].op == IR_STORE_GLOBAL) &&
           d->in[i + 2].op >= IR_DELETE_NAME && d->in[i + 2].op <= IR_DELETE_DEREF && d->in[i + 1].name &&
           d->in[i + 2].name && strcmp(d->in[i + 1].name, d->in[i + 2].name) == 0;
}

/* The block whose handler is at H guards an `except ... as` clause (its
 * handler only clears the name)? */
static int is_name_cleanup_handler(const dc *d, int H) {
    return is_name_cleanup(d, H) && H + 3 < d->n &&
           (d->in[H + 3].op == IR_RERAISE || d->in[H + 3].op == IR_END_FINALLY);
}

/* Does the handler at H hold except clauses (rather than a finally body)? */
static int is_except_handler(const dc *d, int H) {
    if (H + 2 < d->n && d->in[H].op == IR_POP_TOP && d->in[H + 1].op == IR_POP_TOP && d->in[H + 2].op == IR_POP_TOP)
        return 1;
    for (int q = H; q < d->n && q < H + 64; q++) {
        int op = d->in[q].op;
        if (op == IR_CHECK_EXC_MATCH)
            return 1;
        if (!dc_is_exc_type_op(op))
            return 0;
    }
    return 0;
}

/* The instruction ending the finally body whose handler starts at H
 * (RERAISE, or END_FINALLY in 3.8): the first one that no jump of the
 * handler passes (nested statements end with their own), -1 if none. */
static int finally_end(const dc *d, int H) {
    int closer = d->lay.finally_subroutine ? IR_END_FINALLY : IR_RERAISE;
    /* up to 3.9 each block opened in the body closes its handler with one
     * closer of its own (3.10 copies them into branches) */
    int far = -1, nested = 0, count = !d->lay.copies_small_exits;
    for (int j = H; j < d->n; j++) {
        const dp_instr *x = &d->in[j];
        if (count && dc_is_block_setup(x->op) && x->target > j)
            nested++;
        if (x->op == closer && nested > 0) {
            nested--;
            continue;
        }
        if (x->op == closer && far <= j)
            return j;
        if (x->target > j && !dc_is_loop_exit(d, x->target) && x->target > far)
            far = x->target;
    }
    return -1;
}

static dp_node *new_exc_value(dc *d) {
    return dc_node(d, X_EXC);
}

/* Walks [start, end) with `nvals` copies of `v` (then `extra`) pushed above st. */
static int region_with(dc *d, int start, int end, int exit, dc_stack *st, dp_nodes *out, dp_node *v, int nvals,
                       dp_node *extra) {
    dc_stack tmp = {0};
    if (dc_stack_copy(d, &tmp, st) < 0)
        return -1;
    for (int k = 0; k < nvals; k++)
        if (dc_push(d, &tmp, v) < 0)
            return -1;
    if (extra && dc_push(d, &tmp, extra) < 0)
        return -1;
    return dc_region(d, start, end, exit, &tmp, out);
}

/* ---- where copies of a return tail start ---- */

/* Per instruction, a hash of the code from it to the next RETURN_VALUE
 * (equal for instructions dc_same_instr calls the same), and the
 * instructions chained by hash bucket, last first: so a clause's tail finds
 * its copies without comparing itself with every return of the function. */
typedef struct dc_tail_index {
    uint32_t *hash;
    int *bucket, *prev;
    uint32_t mask;
} dc_tail_index;

static dc_tail_index *tail_index(dc *d) {
    if (d->tail_index != NULL)
        return d->tail_index;
    dc_tail_index *t = dp_alloc(d->sh->ar, sizeof *t);
    uint32_t size = 16;
    while (size < 2u * (uint32_t)d->n)
        size *= 2;
    if (t == NULL || (t->hash = dp_alloc_array(d->sh->ar, (size_t)d->n + 1, sizeof *t->hash)) == NULL ||
        (t->bucket = dp_alloc_array(d->sh->ar, size, sizeof *t->bucket)) == NULL ||
        (t->prev = dp_alloc_array(d->sh->ar, (size_t)d->n + 1, sizeof *t->prev)) == NULL) {
        dc_fail(d, -1, "out of memory");
        return NULL;
    }
    t->mask = size - 1;
    t->hash[d->n] = 0;
    for (int i = d->n - 1; i >= 0; i--)
        t->hash[i] = dc_instr_hash(&d->in[i]) + (d->in[i].op == IR_RETURN_VALUE ? 0 : 31u * t->hash[i + 1]);
    for (uint32_t b = 0; b < size; b++)
        t->bucket[b] = -1;
    for (int i = 0; i < d->n; i++) {
        uint32_t b = t->hash[i] & t->mask;
        t->prev[i] = t->bucket[b];
        t->bucket[b] = i;
    }
    return d->tail_index = t;
}

/* The last copy after `after` of the tail [r, r + len) (ending in a
 * RETURN_VALUE), -1 if none, -2 when out of memory. */
static int last_tail_copy(dc *d, int r, int len, int after) {
    dc_tail_index *t = tail_index(d);
    if (t == NULL)
        return -2;
    /* (one right after a POP_EXCEPT is another except clause's own return) */
    for (int p = t->bucket[t->hash[r] & t->mask]; p > after; p = t->prev[p])
        if (t->hash[p] == t->hash[r] && p + len <= d->n && d->in[p + len - 1].op == IR_RETURN_VALUE &&
            d->in[p - 1].op != IR_POP_EXCEPT && is_copy(d, r, p, len))
            return p;
    return -1;
}

/* ---- try/except ---- */

/* Where an except clause that stopped at r (its POP_EXCEPT done) goes: a
 * jump (consumed), or a copy of the code at the join ending in a return
 * (3.10 duplicates small exits) within the region ending at `end`.
 * Returns the join, -2 for a break or continue (appended to `body`), -1
 * for none, -3 on error. */
static int clause_exit(dc *d, int r, int tail, int head, int end, dc_stack *st, dp_nodes *body, int *cend,
                       int *own) {
    *cend = r;
    *own = -1;
    if (r >= d->n || !d->reach[r])
        return -1;
    /* break/continue out of nested except blocks: each is left first */
    int q = r;
    while (q < d->n && d->in[q].op == IR_POP_EXCEPT)
        q++;
    /* `return v` out of nested except blocks: each is left first */
    int te = q > r && q < d->n ? tail_end(d, q) : -1;
    if (te >= q) {
        if (!dc_only_unwinds_legacy(d, q))
            return dc_fail(d, q, "code after the try statement copied into an except clause"), -3;
        dc_stack tmp = {0};
        *cend = te + 1;
        return dc_stack_copy(d, &tmp, st) < 0 || dc_region(d, r, te + 1, -1, &tmp, body) < 0 ? -3 : -1;
    }
    if (q > r && (q >= d->n || d->in[q].op != IR_JUMP || !dc_is_loop_exit(d, d->in[q].target)))
        return -1;
    if (d->in[q].op == IR_JUMP) {
        dc_seen(d, r, q + 1);
        *cend = q + 1;
        int t = d->in[q].target;
        if (t > r || t == head)
            return t; /* (head: the try ends its loop's body, as the clause does) */
        /* (the last clause falling off the statement, whose code after is
         * the jump back that ends its loop's body: CPython threaded the
         * clause's jump there through it) */
        if (q + 2 < d->n && (d->in[q + 1].op == IR_END_FINALLY || d->in[q + 1].op == IR_RERAISE) &&
            d->in[q + 2].op == IR_JUMP && d->in[q + 2].target == t && dc_is_loop_head(d, t))
            return q + 2;
        /* (3.8/3.9: or, the clause's jump back followed by code that runs,
         * where a `continue` leaves its dead exit `POP_EXCEPT; JUMP`, the
         * clause fell off the statement, whose else ends the loop's body
         * (falling into its jump back, or returning before it: not a jump
         * of its own, which the body's exit would be threaded through
         * too): the clause's jump was threaded through that one) */
        if (d->lay.keeps_dead_blocks && q + 1 < d->n && d->reach[q + 1] && end > q + 1 && end < d->n &&
            d->in[end].op == IR_JUMP && d->in[end].target == t && dc_is_loop_head(d, t) &&
            (d->reach[end] || d->in[end - 1].op == IR_RETURN_VALUE || d->in[end - 1].op == IR_RAISE))
            return end;
        if (dc_is_loop_exit(d, t)) {
            dp_node *s = dc_stmt(d, dc_is_loop_head(d, t) ? S_CONTINUE : S_BREAK, q);
            if (s == NULL || dc_add(d, body, s) < 0)
                return -3;
            return -2;
        }
        return dc_fail(d, r, "except clause jumps backwards"), -3;
    }
    /* 3.8/3.9: `break` out of a for loop pops the iterator, then jumps */
    if (d->in[r].op == IR_POP_TOP && r + 1 < d->n && d->in[r + 1].op == IR_JUMP && d->loop && d->loop->is_for &&
        d->in[r + 1].target == d->loop->brk) {
        dp_node *b = dc_stmt(d, S_BREAK, r);
        dc_seen(d, r, r + 2);
        *cend = r + 2;
        return b == NULL || dc_add(d, body, b) < 0 ? -3 : -2;
    }
    if (d->in[r].op == IR_POP_BLOCK) {
        /* `return <constant>` leaving enclosing blocks (their finally copies) */
        int e = r; /* (3.8 runs each finally body on the way with CALL_FINALLY, which comes back) */
        while (e < d->n && d->in[e].op != IR_RETURN_VALUE && (!is_jump_op(d->in[e].op) || d->in[e].op == IR_CALL_FINALLY) &&
               d->in[e].op != IR_RAISE && d->in[e].op != IR_RERAISE)
            e++;
        if (e >= d->n || d->in[e].op != IR_RETURN_VALUE)
            return -1;
        *cend = e + 1;
        return region_with(d, r, e + 1, -1, st, body, NULL, 0, NULL) < 0 ? -3 : -1; /* (a stack copy: see below) */
    }
    int e = tail_end(d, r);
    if (e <= r) {
        /* 3.10: or a copy of the code after the statement ending in a raise
         * (a bare `raise` there re-raises what an enclosing clause handles,
         * in the copy as in the code) */
        int re = e < 0 && tail >= 0 && d->lay.copies_small_exits ? straight_end(d, r) : -1;
        if (re < 0 || d->in[re].op != IR_RAISE || tail == r || !is_copy(d, r, tail, re + 1 - r))
            return -1;
        dc_seen(d, r, re + 1);
        *cend = re + 1;
        return tail;
    }
    int len = e + 1 - r;
    *cend = e + 1;
    /* 3.10: `break` out of a for loop pops the iterator, then copies the
     * code after the loop */
    if (d->in[r].op == IR_POP_TOP && d->loop && d->loop->is_for && e > r + 1 && d->loop->brk > r &&
        is_copy(d, r + 1, d->loop->brk, len - 1)) {
        dp_node *b = dc_stmt(d, S_BREAK, r);
        dc_seen(d, r, e + 1);
        return b == NULL || dc_add(d, body, b) < 0 ? -3 : -2;
    }
    if (tail >= 0 && is_copy(d, r, tail, len)) {
        dc_seen(d, r, e + 1);
        return tail;
    }
    /* (a tail that pops first consumes a value of the enclosing code, which
     * a copy elsewhere would not see: no such copy) */
    /* the code itself comes after its copies; it ends with a RETURN_VALUE
     * as the copy does */
    /* (only 3.10 copies exits: up to 3.9 a return in a clause is its own) */
    int copy = d->in[r].op == IR_POP_TOP || !d->lay.copies_small_exits ? -1 : last_tail_copy(d, r, len, e);
    if (copy == -2)
        return -3;
    if (copy >= 0 && copy <= end) { /* (past the region's end it is no place to join) */
        *own = r; /* (or a return of its own: the statement decides, see copy_join_fits) */
        return copy;
    }
    /* a return of the clause's own (its value computed before POP_EXCEPT:
     * else the code after the try statement, copied) */
    if (!dc_only_unwinds_legacy(d, r))
        return dc_fail(d, r, "code after the try statement copied into an except clause"), -3;
    /* (on a copy of the stack: the unwinding before the return pops what
     * the code after the statement still has, a with's __exit__) */
    return region_with(d, r, e + 1, -1, st, body, NULL, 0, NULL) < 0 ? -3 : -1;
}

/* Does control at a go to b: a is b, or a jump there? */
static int same_place(const dc *d, int a, int b) {
    return a == b || (a < d->n && d->in[a].op == IR_JUMP && d->in[a].target == b);
}

/* Does the run of POP_BLOCKs ending at p leave block s (innermost) and only
 * try/except blocks around it? */
static int pops_except_blocks(const dc *d, int p, int s) {
    int q = p;
    while (q - 1 > s && d->in[q - 1].op == IR_POP_BLOCK)
        q--;
    if (block_of(d, q) != s)
        return 0;
    for (int b = s; q < p; q++) {
        b = enclosing_block(d, b);
        if (b < 0 || d->in[b].op != IR_SETUP_FINALLY || !is_except_handler(d, d->in[b].target))
            return 0;
    }
    return 1;
}

/* A later copy c of an except clause's return tail is where the clauses
 * join (3.10 copies a small exit block into the clauses that jump to it)
 * only if the code after the statement can run into it: from the body's
 * exit X, an else [X, c) no jump of which goes past c but to leave a
 * loop, and into which no code after c jumps; with no such exit (or a
 * return after the body's POP_BLOCK, T), c follows the handlers (`last`).
 * Else the clause's return is its own.  (Either reading runs the same
 * code: the clause's tail is the same as the code at c, and ends in a
 * return.) */
static int copy_join_fits(const dc *d, int s, int X, int T, int last, int c) {
    if (X < 0 || T >= 0)
        return c == last;
    if (c < X || X < s)
        return 0;
    for (int j = 0; j < d->n; j++) {
        int t = d->in[j].target;
        if (!is_jump_op(d->in[j].op) || t < 0)
            continue;
        if (j >= X && j < c) {
            if (t > c && !dc_is_loop_exit(d, t))
                return 0;
        } else if ((j < s || j >= c) && t >= X && t < c) {
            return 0;
        }
    }
    return 1;
}

#define MAX_COPY_JOINS 16

/* A 3.8-3.10 try/except statement being read (except_stmt): the SETUP_FINALLY
 * at s, its handler H, the statement and the places its parts end. */
typedef struct legacy_try {
    int s, end, H;
    dc_stack *st;
    dp_nodes *out;
    int *next;
    dp_node *tr, *prev;
    /* the body's normal exit: POP_BLOCK; JUMP X (else or join); 3.10: T
     * (a return copied after the POP_BLOCK) and E (an else that raises) */
    int X, T, E, body_end, to_head;
    int join, p, last;  /* where the clauses join, the next clause, past the handler */
    /* clauses whose return tail has a later copy: where (own), in which clause */
    int own_tail[MAX_COPY_JOINS], own_end[MAX_COPY_JOINS], own_copy[MAX_COPY_JOINS], nown;
    dp_node *own_clause[MAX_COPY_JOINS];
    int left, left_limit, nleft; /* code after a clause's POP_EXCEPT that is none of its own */
} legacy_try;

/* 3.10: is the lone bare `raise` at t, after the body's POP_BLOCK, the code
 * after the statement?  It is when an except clause ends with a copy of
 * it (`POP_EXCEPT; RAISE_VARARGS 0`): no clause reaches an else. */
static int clause_raises_alike(const dc *d, const legacy_try *L, int t) {
    if (d->in[t].op != IR_RAISE || d->in[t].arg != 0)
        return 0;
    for (int k = L->H; k + 1 < L->end && k + 1 < d->n && k < L->H + 512; k++)
        if (d->in[k].op == IR_POP_EXCEPT && d->in[k + 1].op == IR_RAISE && d->in[k + 1].arg == 0)
            return 1;
    return 0;
}

/* The try body, up to its normal exit. */
static int except_body(dc *d, legacy_try *L) {
    if (L->tr == NULL || L->prev == NULL)
        return -1;
    /* the body's normal exit: POP_BLOCK; JUMP else-or-join */
    L->X = -1;
    if (L->H - 2 > L->s && d->in[L->H - 1].op == IR_JUMP && d->in[L->H - 2].op == IR_POP_BLOCK && d->in[L->H - 1].target > L->H)
        L->X = d->in[L->H - 1].target;
    L->body_end = L->H;
    /* at the end of a loop body: POP_BLOCK; JUMP head (no else: that would sit in between) */
    L->to_head = L->H - 2 > L->s && d->in[L->H - 1].op == IR_JUMP && d->in[L->H - 2].op == IR_POP_BLOCK && d->loop &&
                  d->in[L->H - 1].target == d->loop->head && d->in[L->H - 1].target < L->s;
    if (L->to_head) {
        L->X = d->in[L->H - 1].target;
        L->body_end = L->H - 1; /* the jump back is walked after the statement: the loop body ends there */
    }
    /* or POP_BLOCK; JUMP <the loop's exit>: the body ends in a break, walked with it */
    if (L->X >= 0 && !L->to_head && d->loop && d->loop->head <= L->s && L->X == d->loop->brk)
        L->X = -1;
    /* 3.10: or POP_BLOCK and a copy of the code after the statement (a
     * return), which then is read as that code */
    L->T = -1;
    /* (3.10 also copies code after the statement that raises: `raise` in
     * the try body compiles before its POP_BLOCK) */
    int raises = d->lay.copies_small_exits && L->H - 1 > L->s && d->in[L->H - 1].op == IR_RAISE;
    /* (3.8/3.9 copy nothing: there `POP_BLOCK; LOAD_CONST; RETURN_VALUE` is
     * a `return <constant>` ending the body, which unwinds before it loads) */
    if (L->X < 0 && L->H - 1 > L->s && d->lay.copies_small_exits && (d->in[L->H - 1].op == IR_RETURN_VALUE || raises)) {
        int t = L->H - 1;
        while (t > L->s + 1 && d->in[t - 1].op != IR_POP_BLOCK && straight_end(d, t - 1) == L->H - 1)
            t--;
        /* (a value computed in the body is returned by a lone RETURN_VALUE;
         * a SWAP or POP_TOP after the POP_BLOCK moves the value past a
         * with's __exit__ or a loop's iterator, and POP_BLOCKs leaving
         * enclosing blocks other than try/except ones precede their exit
         * code (__exit__, a finally copy): the return is the body's own) */
        if (t > L->s + 1 && (t < L->H - 1 || clause_raises_alike(d, L, t)) && d->in[t - 1].op == IR_POP_BLOCK &&
            d->in[t].op != IR_SWAP &&
            d->in[t].op != IR_POP_TOP && pops_except_blocks(d, t - 1, L->s) &&
            straight_end(d, t) == L->H - 1 && (raises || tail_end(d, t) == L->H - 1)) {
            L->T = t;
            L->X = t;
            L->body_end = t;
        }
    }
    /* 3.10: or POP_BLOCK and a small block ending in a raise, copied in
     * place of the jump to it (the else, or the code after the statement,
     * which the clauses do not reach): it runs when the body completes, as
     * an else clause does.  Read into the body, the handlers would catch
     * what it raises. */
    L->E = -1;
    if (L->X < 0 && L->T < 0 && d->lay.copies_small_exits && L->H - 1 > L->s + 1 && d->in[L->H - 1].op == IR_RAISE) {
        int t = L->H - 1;
        while (t > L->s + 1 && L->H - t < 16 && d->in[t - 1].op != IR_POP_BLOCK && !is_jump_op(d->in[t - 1].op) &&
               d->in[t - 1].op != IR_RETURN_VALUE && d->in[t - 1].op != IR_RAISE && d->in[t - 1].op != IR_RERAISE &&
               !dc_is_block_setup(d->in[t - 1].op))
            t--;
        if (t > L->s + 1 && d->in[t - 1].op == IR_POP_BLOCK && block_of(d, t - 1) == L->s && d->nref[t] == 0) {
            L->E = t;
            L->body_end = t;
        }
    }
    dc_mark(d, L->s);
    if (region_with(d, L->s + 1, L->body_end, L->X, L->st, &L->tr->l1, NULL, 0, NULL) < 0)
        return -1;
    if (L->E >= 0 && dc_region(d, L->E, L->H, -1, L->st, &L->tr->l3) < 0)
        return -1;
    return 0;
}

/* The except clause at L->p: 1 when another may follow, 0 past the last,
 * -1 on error. */
static int except_clause(dc *d, legacy_try *L) {
    const dp_instr *ins = &d->in[L->p];
    if (ins->op == IR_RERAISE || ins->op == IR_END_FINALLY) {
        dc_mark(d, L->p); /* no clause matched */
        L->last = L->p + 1;
        return 0;
    }
    dp_node *h = dc_stmt(d, S_EXCEPT, L->p);
    if (h == NULL || dc_add(d, &L->tr->l2, h) < 0)
        return -1;
    int body, limit, bare = 0, cleanup = -1;
    if (ins->op == IR_POP_TOP) {
        if (L->p + 2 >= d->n || d->in[L->p + 1].op != IR_POP_TOP || d->in[L->p + 2].op != IR_POP_TOP)
            return dc_fail(d, L->p, "malformed bare except");
        dc_seen(d, L->p, L->p + 3);
        body = L->p + 3;
        limit = L->X > L->p ? L->X : L->end; /* the else or the code after follows the last clause */
        bare = 1;
    } else {
        dc_stack tmp = {0};
        dp_node *exc = new_exc_value(d);
        if (exc == NULL || dc_stack_copy(d, &tmp, L->st) < 0)
            return -1;
        for (int k = 0; k < 6; k++)
            if (dc_push(d, &tmp, k < 5 ? L->prev : exc) < 0)
                return -1;
        int q = L->p;
        while (q < L->end && d->in[q].op != IR_CHECK_EXC_MATCH) {
            if (dc_expr_step(d, q, &tmp) <= 0)
                return dc_fail(d, q, "unexpected code in an except clause");
            dc_mark(d, q);
            q++;
        }
        if (q + 4 >= L->end || d->in[q + 1].op != IR_POP_JUMP_IF_FALSE || d->in[q + 2].op != IR_POP_TOP ||
            d->in[q + 4].op != IR_POP_TOP || d->in[q + 1].target <= q)
            return dc_fail(d, L->p, "malformed except clause");
        if ((h->a = dc_top(d, &tmp, 0, q)) == NULL)
            return -1;
        if (dc_except_binding(d, h, q + 3) < 0)
            return -1;
        dc_seen(d, q, q + 5);
        body = q + 5;
        limit = d->in[q + 1].target;
        if (h->s) {
            /* the clause body is guarded by a block that clears the name */
            if (body >= limit || d->in[body].op != IR_SETUP_FINALLY ||
                !is_name_cleanup_handler(d, d->in[body].target))
                return dc_fail(d, body, "except-as clause without its cleanup");
            int C = cleanup = d->in[body].target;
            dc_mark(d, body);
            dc_seen(d, C, C + 4);
            dc_set(d, &d->skip_to[C], C + 4);
            /* 3.8 leaves the clause through the cleanup (BEGIN_FINALLY falls
             * into it): without that way in (none, or a dead one after a
             * raise), what follows it is dead */
            if (d->lay.finally_subroutine && (d->in[C - 1].op != IR_BEGIN_FINALLY || !d->reach[C - 1]) &&
                C + 4 < d->n &&
                d->in[C + 4].op == IR_POP_EXCEPT)
                dc_seen(d, C + 4, C + 5 < d->n && d->in[C + 5].op == IR_JUMP ? C + 6 : C + 5);
            body++;
        }
    }
    const char *saved = d->except_name;
    d->except_name = h->s;
    d->stop_node = L->prev; /* the clause ends once POP_EXCEPT left the handler */
    int r = region_with(d, body, limit, -1, L->st, &h->l1, L->prev, 3, NULL);
    d->except_name = saved;
    if (r < 0)
        return -1;
    int stop = d->region_stop;
    if (h->s && stop < limit && is_name_cleanup(d, stop)) {
        dc_seen(d, stop, stop + 3);
        stop += 3;
    } else if (cleanup >= 0 && stop < limit && d->in[stop].op == IR_CALL_FINALLY && d->in[stop].target == cleanup) {
        dc_mark(d, stop++); /* 3.8: a return clears the name through the cleanup, after POP_EXCEPT */
    }
    int cend = stop, own = -1;
    int j = stop < limit ? clause_exit(d, stop, L->T, L->to_head ? L->X : -1, L->end, L->st, &h->l1, &cend, &own) : -1;
    if (j == -3)
        return -1;
    if (j == -1 && cend == stop && stop < limit && d->reach[stop] && !bare) {
        L->nleft++; /* code after the clause's POP_EXCEPT that is none of its own */
        L->left = stop;
        L->left_limit = limit;
    }
    if (j >= 0 && own >= 0 && L->nown < MAX_COPY_JOINS) {
        L->own_tail[L->nown] = own;
        L->own_end[L->nown] = cend;
        L->own_copy[L->nown] = j;
        L->own_clause[L->nown++] = h;
        j = -1; /* decided once every clause's exit is known */
    } else if (j >= 0 && own >= 0) {
        j = -1;
        if (dc_region(d, own, cend, -1, L->st, &h->l1) < 0)
            return -1;
    }
    if (j >= 0) {
        if (L->join >= 0 && L->join != j)
            return dc_fail(d, stop, "except clauses end in different places");
        L->join = j;
    }
    L->last = cend > L->last ? cend : L->last;
    if (bare)
        return 0;
    L->p = limit;
    L->last = L->p;
    return 1;
}

/* Where the clauses join, the else clause, the walk's next place. */
static int except_join(dc *d, legacy_try *L) {
    for (int k = 0; k < L->nown; k++) {
        int c = L->own_copy[k];
        if (L->join < 0 && copy_join_fits(d, L->s, L->X, L->T, L->last, c))
            L->join = c;
        if (c == L->join) {
            dc_seen(d, L->own_tail[k], L->own_end[k]);
        } else {
            dc_stack tmp = {0}; /* (the return leaves the stack behind) */
            if (dc_stack_copy(d, &tmp, L->st) < 0 || dc_region(d, L->own_tail[k], L->own_end[k], -1, &tmp, &L->own_clause[k]->l1) < 0)
                return -1;
        }
    }
    /* 3.10: where the body never goes on past the statement, the code
     * after it is the exit block a clause jumped to, small enough to be
     * copied there (and then dropped), ending in a return or raise: the
     * statement ends there, and the walk steps over the rest of the
     * handler.  (Not the clause's own code: a raise there would chain the
     * exception handled.) */
    int body_returns = 1; /* (every way out of the body is a return: none goes on past the statement) */
    for (int P = L->s + 1; P < L->H && body_returns; P++) {
        if (d->in[P].op != IR_POP_BLOCK || block_of(d, P) != L->s || P + 1 == L->T)
            continue; /* (T: see below) */
        int q = P + 1; /* (leaving enclosing blocks on the way: an except clause's, its name's) */
        while (q < L->H && (d->in[q].op == IR_POP_BLOCK || d->in[q].op == IR_POP_EXCEPT || is_name_cleanup(d, q)))
            q += is_name_cleanup(d, q) ? 3 : 1;
        body_returns = q < L->H && tail_end(d, q) >= q;
    }
    /* (the body's own copy of it, after its POP_BLOCK before the handler,
     * is then that code too) */
    if (L->nleft == 1 && L->join < 0 && (L->X < 0 || L->X == L->T) && body_returns) {
        int e = straight_end(d, L->left);
        if (e >= L->left && e < L->left_limit &&
            (L->T < 0 || (e + 1 - L->left == L->H - L->T && is_copy(d, L->left, L->T, L->H - L->T)))) {
            L->join = L->left;
            if (e + 1 < L->last)
                dc_set(d, &d->skip_to[e + 1], L->last);
            if (L->T >= 0) {
                dc_seen(d, L->T, L->H);
                L->X = L->join;
                L->T = -1;
            }
        }
    }
    if (L->T >= 0 && L->join >= 0 && L->join != L->T && tail_copy_of(d, L->T, L->join)) {
        L->X = L->join; /* the body's copy of the code after the handlers */
        L->T = -1;
    }
    if (L->T >= 0 && L->join >= 0 && L->join != L->T) {
        /* the clauses go on elsewhere: the return after the body's
         * POP_BLOCK is the statement's else clause (3.10 places it before
         * the handlers) */
        if (dc_region(d, L->T, L->H, -1, L->st, &L->tr->l3) < 0)
            return -1;
        L->X = L->T = -1;
    }
    if (L->X >= 0 && L->join > L->X && L->join + (L->join - L->X) <= d->n && is_copy(d, L->join, L->X, L->join - L->X)) {
        dc_seen(d, L->join, L->join + (L->join - L->X)); /* 3.10: the clauses go to a copy of the code after */
        dc_set(d, &d->skip_to[L->join], L->join + (L->join - L->X)); /* (the walk after the statement steps over it) */
        L->join = L->X;
    }
    /* `else`: where the body's exit jumps, when that is not the join */
    int after = L->join >= 0 ? L->join : L->X > L->last ? L->X : L->last;
    if (L->to_head) {
        if (L->join >= 0 && L->join != L->X)
            return dc_fail(d, L->H, "try at the end of a loop body with a join elsewhere");
        L->join = L->X;
        after = L->H - 1;
        dc_set(d, &d->skip_to[L->H], L->last);
        /* (3.8: the jump back after the handler's END_FINALLY, which never
         * falls through when it closes except clauses) */
        if (L->last < d->n && d->in[L->last - 1].op == IR_END_FINALLY && d->in[L->last].op == IR_JUMP && d->in[L->last].target == L->X)
            dc_mark(d, L->last);
    }
    if (L->X >= 0 && L->join >= 0 && L->X != L->join) {
        /* (an else running past the enclosing region's end would take code
         * that is not the statement's: the clauses' join is not there) */
        /* (the enclosing region ending where a jump to the join follows
         * (an if's over its else), the clauses go where it goes on: the
         * else is the rest of the region, and the walk goes on there) */
        int else_end = L->join > L->end && L->X < L->end && L->end < d->n && d->in[L->end].op == IR_JUMP &&
                               same_place(d, L->join, d->in[L->end].target)
                           ? L->end : L->join;
        if (L->X > L->join || L->X < L->last || else_end > L->end)
            return dc_fail(d, L->H, "try body exits to an unexpected place");
        if (dc_region(d, L->X, else_end, L->join, L->st, &L->tr->l3) < 0)
            return -1;
        after = else_end;
    }
    if (L->T >= 0) {
        /* the walk goes back to the code after the body, then over the handlers */
        after = L->T;
        dc_set(d, &d->skip_to[L->H], L->last);
    }
    *L->next = after;
    return dc_add(d, L->out, L->tr);
}

static int except_stmt(dc *d, int s, int end, dc_stack *st, dp_nodes *out, int *next) {
    legacy_try L = {.s = s, .end = end, .H = d->in[s].target, .st = st, .out = out, .next = next};
    L.tr = dc_stmt(d, S_TRY, s);
    L.prev = new_exc_value(d);
    if (L.tr == NULL || L.prev == NULL || except_body(d, &L) < 0)
        return -1;
    L.join = -1;
    L.p = L.last = L.H;
    L.left = L.left_limit = -1;
    int r = 1;
    while (r > 0 && L.p < end)
        r = except_clause(d, &L);
    return r < 0 ? -1 : except_join(d, &L);
}
/* ---- try/finally ---- */

/* The length of the finally body at H closed at FE: 3.10 may close it
 * twice (`RERAISE; RERAISE`, the first reached by falling through). */
static int finally_len(const dc *d, int H, int FE) {
    /* (a RERAISE after one that does not fall through is a nested try's
     * own: the path of an exception that no clause matched) */
    if (d->lay.copies_small_exits && FE - 1 > H && d->in[FE - 1].op == IR_RERAISE) {
        int op = d->in[FE - 2].op;
        if (FE - 2 < H || !(op == IR_RETURN_VALUE || op == IR_RAISE || op == IR_RERAISE || op == IR_JUMP))
            return FE - 1 - H;
    }
    return FE - H;
}

/* 3.10 copies the RERAISE closing the finally body at H (at FE, the body
 * [H, H + flen)) into the branches that end the body.  Where a copy of the
 * body on the way out of the try (after a POP_BLOCK of block s) leaves with
 * a jump, the handler's RERAISE is such a copy (dc_copy_len takes a RERAISE
 * for an exit only there): it becomes a jump to FE, the same code, which
 * the walk reads as the end of the body.  A copy equal to the body says
 * that every RERAISE in it is a nested statement's own. */
static void reraise_exits(dc *d, int s, int H, int FE, int flen) {
    int any = 0;
    for (int k = H; k < H + flen && !any; k++)
        any = d->in[k].op == IR_RERAISE && d->in[k].arg == d->in[FE].arg;
    int ks[64], nks = -1;
    for (int P = s + 1; P < H && any; P++)
        if (d->in[P].op == IR_POP_BLOCK && block_of(d, P) == s) {
            if (is_copy_to(d, P + 1, H, flen, FE))
                return;
            if (nks < 0)
                nks = dc_copy_exits(d, P + 1, H, d->in + H, flen, ks, 64);
        }
    /* (only the RERAISEs the copy leaves at: one it copies as a RERAISE is
     * a nested try's own) */
    for (int x = 0; x < nks; x++) {
        int k = H + ks[x];
        if (d->in[k].op == IR_RERAISE && d->in[k].arg == d->in[FE].arg) {
            dp_instr *x = dc_edit(d, k);
            x->op = IR_JUMP;
            x->arg = 0;
            x->target = FE;
            dc_set(d, &d->nref[FE], d->nref[FE] + 1);
        }
    }
}

/* The try/finally whose SETUP_FINALLY is s.  `carried`: entered with values
 * of the region on the stack (Dynamo's graph break inside a with, see
 * dc_try): they go into temporaries first, the code after the statement
 * goes on with the stack the body leaves, and the handler sees none of
 * them (the body may consume them: CPython's unwinding then leaves fewer
 * values, or a call's NULL result, than at the SETUP). */
static int finally_stmt(dc *d, int s, dc_stack *st, dp_nodes *out, int *next, int carried) {
    int H = d->in[s].target, FE = finally_end(d, H);
    if (FE < 0)
        return dc_fail(d, H, "finally block without its end");
    dp_node *tr = dc_stmt(d, S_TRY, s), *exc = new_exc_value(d);
    if (tr == NULL || exc == NULL)
        return -1;
    if (carried && dc_spill_stack(d, st, out, s) < 0)
        return -1;
    dc_mark(d, s);
    int after = FE + 1, body_end = H, flen = finally_len(d, H, FE), skip_from = -1;
    /* 3.10: the normal exit `POP_BLOCK; <finally copy>; <return ...>` may
     * hold the only copy of the code after the statement (the first one,
     * only copies of it follow: jumps from inside the body go to those):
     * walk it there, and step over the copies and the handler */
    for (int P = s + 1; d->lay.copies_small_exits && P + flen + 1 < H; P++) {
        if (d->in[P].op != IR_POP_BLOCK)
            continue; /* (before the scans below: a scan at every P was quadratic) */
        int t = P + 1 + flen, e = t < d->n ? tail_end(d, t) : -1;
        int len = e + 1 - P, copies = e > t && e < H && (H - (e + 1)) % len == 0;
        for (int c = e + 1; copies && c < H; c += len)
            copies = is_copy(d, c, P, len);
        /* (an if whose branches both leave through copies is no such exit) */
        for (int j = s + 1; copies && j < P; j++)
            copies = !(is_jump_op(d->in[j].op) && d->in[j].op != IR_JUMP && d->in[j].target > P && d->in[j].target < H);
        if (copies && block_of(d, P) == s && is_copy_to(d, P + 1, H, flen, FE) &&
            !tail_copy_of(d, t, after)) {
            dc_seen(d, P, t);
            dc_seen(d, e + 1, H); /* (the copies, which jumps from the body reach) */
            body_end = P;
            after = t;
            skip_from = e + 1;
            break;
        }
    }
    /* 3.9+: the normal exit `POP_BLOCK; <finally copy>; JUMP X` jumps on
     * to the code after the statement, or past it where that was a jump
     * (threaded: the end of an if's branch, its jump over the else): the
     * jump is no part of the statement, the walk goes on with it there,
     * then past the handler */
    if (body_end == H && !d->lay.finally_subroutine && H - 2 > s && d->in[H - 1].op == IR_JUMP &&
        d->in[H - 1].target > FE + 1 && d->nref[H - 1] == 0 && !is_jump_op(d->in[H - 2].op) &&
        d->in[H - 2].op != IR_RETURN_VALUE && d->in[H - 2].op != IR_RAISE && d->in[H - 2].op != IR_RERAISE) {
        body_end = after = H - 1;
        skip_from = H;
    }
    dc_stack left = {0}, none = {0};
    if (dc_stack_copy(d, &left, st) < 0 || dc_region(d, s + 1, body_end, after, &left, &tr->l1) < 0 ||
        (carried && dc_carry_on(d, s + 1, d->region_stop, d->region_live, &left, &tr->l1, st) < 0))
        return -1;
    if (d->lay.copies_small_exits)
        reraise_exits(d, s, H, FE, flen);
    /* 3.8 reaches the finally body from the try body too (BEGIN_FINALLY
     * pushes one value, CALL_FINALLY a return address): walk it as a handler */
    if (H + flen < FE)
        dc_set(d, &d->skip_to[H + flen], FE); /* the first of two closing RERAISEs */
    /* (a walk of this statement that failed, speculating on a conditional
     * expression, may have left the step over the handler there) */
    if (skip_from == H)
        dc_set(d, &d->skip_to[H], -1);
    if (region_with(d, H, FE, FE, carried ? &none : st, &tr->l4, exc, 6, NULL) < 0)
        return -1;
    dc_seen(d, H + flen, FE + 1);
    if (skip_from >= 0)
        dc_set(d, &d->skip_to[skip_from], FE + 1);
    if (tr->l4.n == 0 && dc_add(d, &tr->l4, dc_stmt(d, S_PASS, H)) < 0)
        return -1;
    dc_merge_inner_except(tr);
    *next = after;
    return dc_add(d, out, tr);
}

/* ---- with ---- */

/* `GET_AWAITABLE; (NOP); YIELD_FROM` (an await) at j: its length, or 0. */
static int await_len(const dc *d, int j) {
    if (j >= d->n || d->in[j].op != IR_GET_AWAITABLE)
        return 0;
    int k = j + 1;
    while (k < d->n && d->in[k].op == IR_NOP)
        k++;
    return k < d->n && d->in[k].op == IR_YIELD_FROM ? k + 1 - j : 0;
}

/* Past the call of __exit__ (or the start of it) ending before j: in an
 * async with an await follows it.  The index after that, or -1. */
static int past_await(const dc *d, int j, int is_async) {
    int aw = is_async ? await_len(d, j) : 0;
    return is_async && aw == 0 ? -1 : j + aw;
}

/* The normal exit of a with block at i: `LOAD_CONST None; COPY 1; COPY 1;
 * CALL 3; POP_TOP` (3.9/3.10, plus an await for async with) or
 * `BEGIN_FINALLY; WITH_CLEANUP_START; WITH_CLEANUP_FINISH; (END_FINALLY |
 * POP_FINALLY 0)` (3.8).  Its length, or 0. */
static int exit_call_len(const dc *d, int i, int is_async) {
    if (!d->lay.finally_subroutine) {
        if (i + 4 >= d->n || d->in[i].op != IR_LOAD_CONST || !d->in[i].cst || d->in[i].cst->kind != DP_CONST_NONE ||
            d->in[i + 1].op != IR_COPY || d->in[i + 1].arg != 1 || d->in[i + 2].op != IR_COPY ||
            d->in[i + 2].arg != 1 || d->in[i + 3].op != IR_CALL || d->in[i + 3].arg != 3)
            return 0;
        int j = past_await(d, i + 4, is_async);
        return j >= 0 && j < d->n && d->in[j].op == IR_POP_TOP ? j + 1 - i : 0;
    }
    if (i + 2 >= d->n || d->in[i].op != IR_BEGIN_FINALLY || d->in[i + 1].op != IR_WITH_CLEANUP_START)
        return 0;
    int j = past_await(d, i + 2, is_async);
    if (j < 0 || j + 1 >= d->n || d->in[j].op != IR_WITH_CLEANUP_FINISH)
        return 0;
    if (d->in[j + 1].op == IR_END_FINALLY || (d->in[j + 1].op == IR_POP_FINALLY && d->in[j + 1].arg == 0))
        return j + 2 - i;
    return 0;
}

/* The end of a with block's exception handler at H, or -1. */
static int with_handler_end(const dc *d, int H, int is_async) {
    /* 3.8: the handler is the tail of the normal exit: WITH_CLEANUP_START ... END_FINALLY */
    int v38 = d->lay.finally_subroutine;
    if (H >= d->n || d->in[H].op != (v38 ? IR_WITH_CLEANUP_START : IR_WITH_EXCEPT_START))
        return -1;
    int j = past_await(d, H + 1, is_async);
    if (j < 0 || j + 1 >= d->n)
        return -1;
    if (v38)
        return d->in[j].op == IR_WITH_CLEANUP_FINISH && d->in[j + 1].op == IR_END_FINALLY ? j + 2 : -1;
    if (d->in[j].op != IR_POP_JUMP_IF_TRUE || d->in[j + 1].op != IR_RERAISE)
        return -1;
    int L = d->in[j].target;
    if (L != j + 2 || L + 4 >= d->n)
        return -1;
    for (int k = 0; k < 3; k++)
        if (d->in[L + k].op != IR_POP_TOP)
            return -1;
    return d->in[L + 3].op == IR_POP_EXCEPT && d->in[L + 4].op == IR_POP_TOP ? L + 5 : -1;
}

static int with_stmt(dc *d, int s, int at, dc_stack *st, dp_nodes *out, int *next) {
    int is_async = d->in[s].op == IR_SETUP_ASYNC_WITH;
    int H = d->in[s].target;
    int HE = with_handler_end(d, H, is_async);
    if (HE < 0)
        return dc_fail(d, s, "with statement without its exit handler");
    dp_node *mgr = dc_pop(d, st, s);
    if (mgr == NULL)
        return -1;
    dp_node *exitfn, *slot, *w = dc_with_node(d, mgr, is_async, at, &exitfn, &slot);
    if (w == NULL)
        return -1;
    dc_mark(d, s);
    /* 3.8 falls from the normal exit into the handler's tail */
    int body_end = H, after = HE;
    if (d->lay.finally_subroutine) {
        int k = H - 2;
        if (k > s && d->in[k].op == IR_POP_BLOCK && d->in[k + 1].op == IR_BEGIN_FINALLY)
            body_end = k;
    } else if (H - 1 > s && d->in[H - 1].op == IR_JUMP && d->in[H - 1].target >= HE) {
        after = d->in[H - 1].target;
    }
    /* `with m:` drops what __enter__ returned */
    int body = s + 1, bound = !(body < body_end && d->in[body].op == IR_POP_TOP);
    if (!bound)
        dc_mark(d, body++);
    if (region_with(d, body, body_end, after, st, &w->l2, exitfn, 1, bound ? slot : NULL) < 0)
        return -1;
    if (body_end < H) { /* 3.8: POP_BLOCK; BEGIN_FINALLY before the handler */
        dc_seen(d, body_end, H);
    }
    dc_seen(d, H, HE);
    /* 3.10 may follow the handler with a copy of the code after the with */
    if (after > HE && is_copy(d, HE, after, after - HE))
        dc_seen(d, HE, after);
    w->l1.v[0]->b = slot->a->l1.v[0];
    *next = after;
    return dc_add(d, out, w);
}

/* ---- POP_BLOCK and friends met inside the parts ---- */

/* The end (RETURN_VALUE) of the normal exit of a with at its POP_BLOCK i
 * when it ends in a return (`POP_BLOCK; <call __exit__>; <tail>`), or -1. */
static int exit_copy_end(const dc *d, int i, int is_async) {
    int len = i + 1 < d->n ? exit_call_len(d, i + 1, is_async) : 0;
    return len > 0 && i + 1 + len < d->n ? tail_end(d, i + 1 + len) : -1;
}

int dc_legacy_exit_end(const dc *d, int i) {
    if (i < 0 || i >= d->n || d->in[i].op != IR_POP_BLOCK)
        return -1;
    int e = exit_copy_end(d, i, 0);
    return e >= 0 ? e : exit_copy_end(d, i, 1);
}

/* Does the code at j only leave (for a return, break or continue): unwind
 * blocks, handlers, an iterator or a with's __exit__, then return a value
 * computed before, or a constant, or jump (or the region ends there)?
 * (Or return local variables, a tuple of them: 3.10's copy of such a
 * return past the statement reads the same inside the body, where they
 * are bound; nothing there can raise.) */
static int unwinds_only(const dc *d, int j, int end) {
    for (int steps = 0; j < end && j < d->n && steps < 64; steps++) {
        int op = d->in[j].op;
        if (op == IR_RETURN_VALUE || op == IR_JUMP || op == IR_POP_BLOCK || op == IR_CALL_FINALLY ||
            op == IR_BEGIN_FINALLY)
            return 1; /* (a POP_BLOCK: the next block's own) */
        if (is_name_cleanup(d, j))
            j += 3;
        else if (exit_call_len(d, j, 0) > 0 || exit_call_len(d, j, 1) > 0)
            j += exit_call_len(d, j, 0) > 0 ? exit_call_len(d, j, 0) : exit_call_len(d, j, 1);
        else if (op == IR_LOAD_CONST || op == IR_LOAD_FAST) {
            int k = j;
            while (k < d->n && (d->in[k].op == IR_LOAD_CONST || d->in[k].op == IR_LOAD_FAST))
                k++;
            k += k > j + 1 && k < d->n && d->in[k].op == IR_BUILD_TUPLE && d->in[k].arg == k - j;
            return k < d->n && d->in[k].op == IR_RETURN_VALUE;
        }
        else if (op == IR_POP_EXCEPT || op == IR_POP_TOP || op == IR_SWAP || op == IR_NOP || op == IR_POP_FINALLY)
            j++;
        else
            return 0;
    }
    return 1;
}

/* 3.10: a `break` that leaves blocks copies the code after the loop when it
 * is small (a return), after popping a for loop's iterator: is the code at
 * k such a copy?  Then it is read as the jump there. */
static int breaks_to_copy(dc *d, int k) {
    if (d->loop == NULL || k >= d->n)
        return 0;
    if (d->loop->is_for)
        return d->in[k].op == IR_POP_TOP && tail_copy_of(d, k + 1, d->loop->brk);
    return tail_copy_of(d, k, d->loop->brk);
}

/* Does the tail [k, e] (its RETURN_VALUE) return a value computed before
 * (it only pops the iterators of the for loops it leaves), or constants and
 * local variables that the finally body [H + 1, FE) does not bind?  Then it
 * returns the same before the finally body runs as after: read as the try
 * body's return. */
static int returns_what_finally_keeps(const dc *d, int k, int e, int H, int FE) {
    while (k < e && (d->in[k].op == IR_POP_TOP || d->in[k].op == IR_SWAP))
        k++;
    int j = k;
    while (j < e && (d->in[j].op == IR_LOAD_CONST || d->in[j].op == IR_LOAD_FAST))
        j++;
    j += j > k + 1 && j < e && d->in[j].op == IR_BUILD_TUPLE && d->in[j].arg == j - k;
    if (j != e)
        return 0;
    for (int q = k; q < e; q++)
        for (int f = H + 1; d->in[q].op == IR_LOAD_FAST && f < FE && f < d->n; f++)
            if ((d->in[f].op == IR_STORE_FAST || d->in[f].op == IR_DELETE_FAST) && d->in[f].arg == d->in[q].arg)
                return 0;
    return 1;
}

/* Leaves block s at its POP_BLOCK i; the region being walked ends at `end`. */
static int pop_block(dc *d, int i, int s, int end, dc_stack *st, int *next) {
    if (s < 0)
        return dc_fail(d, i, "POP_BLOCK outside a block");
    dc_mark(d, i);
    int H = d->in[s].target, j = i + 1;
    if (d->in[s].op == IR_SETUP_WITH || d->in[s].op == IR_SETUP_ASYNC_WITH) {
        /* 3.10 copies the normal exit of a with (POP_BLOCK, __exit__, the
         * code after the with when it is a small return) into the branches
         * that end its body: a copy of the exit where the region ends is
         * read as going there (the walk after the region takes that one) */
        int ce = exit_copy_end(d, i, d->in[s].op == IR_SETUP_ASYNC_WITH);
        if (ce > i && end > ce && ce + 1 - i <= d->n - end && d->in[end].op == IR_POP_BLOCK &&
            is_copy(d, i, end, ce + 1 - i)) {
            dc_seen(d, i, ce + 1);
            *next = end;
            return 0;
        }
        /* leave the with: its __exit__ is called (`return v` swaps v below it first) */
        if (j < d->n && d->in[j].op == IR_SWAP && d->in[j].arg == 2 && st->n >= 2) {
            dp_node *t = st->v[st->n - 1];
            st->v[st->n - 1] = st->v[st->n - 2];
            st->v[st->n - 2] = t;
            dc_mark(d, j++);
        }
        int len = exit_call_len(d, j, d->in[s].op == IR_SETUP_ASYNC_WITH);
        if (len == 0 || st->n < 1 || st->v[st->n - 1]->kind != X_WITH_EXIT)
            return dc_fail(d, i, "with block left without calling __exit__");
        st->n--;
        dc_seen(d, j, j + len);
        *next = j + len;
        /* what follows __exit__ and computes a return value is the code
         * after the with (3.10 copies it): a value computed inside the
         * block comes before POP_BLOCK, a constant may come after */
        int k = j + len, e = k < d->n ? tail_end(d, k) : -1;
        if (e > k && breaks_to_copy(d, k))
            return 0;
        /* (from inside a loop within the with, control cannot go to the code
         * after the with but by a return: `return <constant>` it is; so is
         * one before the end of the body, a branch's, whose walk has no
         * place to go to the code after the with) */
        /* (a return of a value computed in the block from inside for loops:
         * each loop's iterator is popped from under it first) */
        int unwind = k;
        while (d->loop && d->loop->is_for && unwind + 1 < e && d->in[unwind].op == IR_SWAP && d->in[unwind].arg == 2 &&
               d->in[unwind + 1].op == IR_POP_TOP)
            unwind += 2;
        if (e > k && unwind == e)
            return 0;
        /* (`return <constant>`: after the iterators of the for loops it
         * leaves are popped) */
        int c = k;
        while (d->loop && d->loop->is_for && c < e && d->in[c].op == IR_POP_TOP)
            c++;
        int const_return = e == c + 1 && d->in[c].op == IR_LOAD_CONST;
        if (const_return && ((d->loop && d->loop->head > s) || e + 1 < H))
            return 0;
        int HE = with_handler_end(d, H, d->in[s].op == IR_SETUP_ASYNC_WITH);
        /* 3.10: straight code up to the handler that raises, a copy of the
         * code after the with, is read as going there */
        if (e < 0 && raise_copy_of(d, k, H, HE))
            return 0;
        if (e > k && !tail_copy_of(d, k, HE) && !const_return)
            return dc_fail(d, k, "code after __exit__ that is not the code after the with");
        return 0;
    }
    if (d->lay.finally_subroutine) {
        /* 3.8 enters a finally body (or the cleanup of an except-as clause)
         * from the normal exit with BEGIN_FINALLY: the walk ends there */
        if (j < d->n && d->in[j].op == IR_BEGIN_FINALLY && !is_except_handler(d, H))
            dc_mark(d, j++);
        *next = j;
        return 0;
    }
    if (is_name_cleanup_handler(d, H) || is_except_handler(d, H)) {
        /* (a try body goes on after its POP_BLOCK only to leave: code that
         * computes is past the statement, copied there by 3.10) */
        if (!is_name_cleanup_handler(d, H) && !unwinds_only(d, j, end))
            return dc_fail(d, i, "code after a try body's POP_BLOCK read as the body's");
        *next = j;
        return 0;
    }
    /* a finally block: its body is copied here (3.9/3.10) */
    if (!d->lay.finally_subroutine) {
        int FE = finally_end(d, H), flen = FE < 0 ? 0 : finally_len(d, H, FE), clen = flen;
        /* (3.10 copies the closing RERAISE into the branches of the body,
         * which the copy here leaves with jumps: dc_copy_len reads those) */
        if (FE >= 0 && !is_copy_to(d, j, H, flen, FE))
            clen = d->lay.copies_small_exits ? dc_copy_len(d, j, d->n, d->in + H, flen) : 0;
        if (FE < 0 || clen <= 0)
            return dc_fail(d, i, "finally block left without its copy");
        dc_unthread_copy(d, j, clen);
        dc_seen(d, j, j + clen);
        *next = j + clen;
        /* past the copy the statement is left: for the code after it, or
         * after the loop a break leaves (copies of small code, 3.10), or by
         * `return <constant>` (the compiler loads a constant after the
         * unwinding; a computed value is loaded before POP_BLOCK).  Code
         * that computes, ending in the body (an if's branch in it) and not
         * just before the handler (the code after the statement, placed
         * there), is none of these. */
        if (!tail_copy_of(d, *next, FE + 1) && !breaks_to_copy(d, *next)) {
            int e = tail_end(d, *next);
            if (e > *next && e + 1 < H && !returns_what_finally_keeps(d, *next, e, H, FE))
                return dc_fail(d, *next, "code after the copy of a finally block read as the try body's");
        }
        return 0;
    }
    *next = j;
    return 0;
}

int dc_legacy_inside_try(const dc *d, int j) {
    if (!d->lay.block_stack || j < 1 || j >= d->n)
        return 0;
    /* the try body's normal exit: its handler follows */
    if (d->in[j - 1].op == IR_POP_BLOCK) {
        int s = block_of(d, j - 1);
        return s >= 0 && d->in[s].op == IR_SETUP_FINALLY && d->in[s].target > j;
    }
    if (d->in[j - 1].op == IR_POP_EXCEPT)
        return 1;
    return j >= 4 && d->in[j - 4].op == IR_POP_EXCEPT && is_name_cleanup(d, j - 3);
}

/* After an except clause's POP_EXCEPT, from j on: only the unwinding of the
 * clause's return, break or continue (name cleanup, with exits, finally
 * blocks left, a constant or local loaded for the return) up to its
 * RETURN_VALUE or JUMP?  3.10 copies a small exit block after the try into
 * the clause's jump to it: read into the clause by a nested statement, that
 * code would run with the exception still handled (see dc_region). */
int dc_only_unwinds_legacy(const dc *d, int j) {
    for (int steps = 0; j < d->n && steps < 64; steps++, j++) {
        switch (d->in[j].op) {
        case IR_RETURN_VALUE: case IR_JUMP:
        case IR_POP_BLOCK: case IR_CALL_FINALLY: /* a finally body on the way out */
            return 1;
        case IR_LOAD_FAST: {
            int k = j;
            while (k < d->n && (d->in[k].op == IR_LOAD_FAST || d->in[k].op == IR_LOAD_CONST ||
                                (d->in[k].op == IR_BUILD_TUPLE && k > j)))
                k++;
            return k < d->n && d->in[k].op == IR_RETURN_VALUE;
        }
        case IR_POP_EXCEPT: case IR_NOP: case IR_POP_TOP: case IR_SWAP: case IR_COPY: case IR_LOAD_CONST:
        case IR_STORE_FAST: case IR_STORE_NAME: case IR_STORE_DEREF: case IR_DELETE_FAST: case IR_DELETE_NAME:
        case IR_DELETE_DEREF: case IR_CALL: case IR_GET_AWAITABLE: case IR_YIELD_FROM: case IR_POP_FINALLY:
        case IR_BEGIN_FINALLY: case IR_WITH_CLEANUP_START: case IR_WITH_CLEANUP_FINISH:
            break;
        default:
            return 0;
        }
    }
    return 0;
}

/* The RETURN_VALUE ending straight code at t (at most 16 instructions)
 * that leaves an except block (a POP_EXCEPT in it), or, for a jump that
 * keeps its value (`pops`), drops it first; or -1.  (Not a try body's
 * POP_BLOCK: the walk would read the code after it as the body's; nor a
 * with's, whose walk takes the last copy, before the handler, for the
 * code after the statement.) */
/* The block open at i as the layout shows it, for this pass alone: it
 * moves jumps, so it runs before the CFG is built.  A block's handler
 * follows its body, so the innermost SETUP before i whose handler comes
 * after i, less the blocks the straight code before i left (POP_BLOCKs);
 * the one enclosing SETUP s is the innermost before it whose handler comes
 * after s's. */
static int layout_block_of(const dc *d, int i) {
    int k = i - 1, pops = 0;
    for (; k >= 0 && !dc_is_block_setup(d->in[k].op); k--) {
        int op = d->in[k].op;
        if (op == IR_JUMP || op == IR_RETURN_VALUE || op == IR_RAISE || op == IR_RERAISE)
            break;
        pops += op == IR_POP_BLOCK;
    }
    int at = k + 1 > i ? i : k + 1, s = -1;
    for (int o = at - 1; o >= 0 && s < 0; o--)
        if (dc_is_block_setup(d->in[o].op) && d->in[o].target > at)
            s = o;
    for (; pops > 0 && s >= 0; pops--) {
        int up = -1;
        for (int o = s - 1; o >= 0 && up < 0; o--)
            if (dc_is_block_setup(d->in[o].op) && d->in[o].target > d->in[s].target)
                up = o;
        s = up;
    }
    return s;
}

static int block_exit_end(const dc *d, int t, int pops) {
    int b = d->in[t].op == IR_POP_BLOCK ? layout_block_of(d, t) : -1;
    if (d->in[t].op == IR_POP_BLOCK && (b < 0 || !is_name_cleanup_handler(d, d->in[b].target)))
        return -1;
    for (int e = t; e < d->n && e < t + 16; e++) {
        int op = d->in[e].op;
        if (op == IR_RETURN_VALUE)
            return pops ? e : -1;
        if (is_jump_op(op) || op == IR_RAISE || op == IR_RERAISE || op == IR_END_FINALLY || op == IR_YIELD_VALUE ||
            op == IR_YIELD_FROM)
            return -1;
        pops += op == IR_POP_EXCEPT;
    }
    return -1;
}

/* 3.10 copies a small exit block into the blocks that jump to it: an except
 * clause whose branches all go on to `return x` after leaving the handler
 * ends each branch with its own `POP_EXCEPT; return x` (the one it falls
 * into, the others where its jumps, conditional ones too, go); so with
 * `POP_TOP; return None` after an and/or statement ending the function.  Identical straight code runs the same wherever it is placed
 * (the handler is the block stack's, not the instruction's): a jump to such
 * a copy goes to the one before it that the code falls into instead, as
 * the compiler first laid it out. */
void dc_legacy_join_exit_copies(dc *d) {
    dp_instr *in = d->f.ins;
    /* handlers[x]: how many handlers start before x (a copy the code falls
     * into past a handler is the code after another statement) */
    int *handlers = dp_alloc_array(d->sh->ar, (size_t)d->n + 1, sizeof *handlers);
    if (handlers == NULL)
        return; /* (no such reading: the copies stay as they are) */
    for (int x = 0; x <= d->n; x++)
        handlers[x] = 0;
    for (int x = 0; x < d->n; x++)
        if (dc_is_block_setup(in[x].op) && in[x].target > x && in[x].target < d->n)
            handlers[in[x].target + 1]++;
    for (int x = 1; x <= d->n; x++)
        handlers[x] += handlers[x - 1];
    for (int j = 0; j < d->n; j++) {
        int t = in[j].target, op = in[j].op;
        int keeps = op == IR_JUMP_IF_FALSE_OR_POP || op == IR_JUMP_IF_TRUE_OR_POP;
        if ((op != IR_JUMP && !dc_is_pop_jump(op) && !keeps) || t <= j + 1 || t >= d->n)
            continue;
        int e = block_exit_end(d, t, keeps && in[t].op == IR_POP_TOP);
        if (e < 0)
            continue;
        int len = e + 1 - t;
        /* (the nearest copy only: a scan and a comparison per jump) */
        for (int c = t - 1; c > j + 1 && c > t - 512 && handlers[c + 1] == handlers[j + 1]; c--) {
            int op = in[c - 1].op;
            if (op == IR_RETURN_VALUE || op == IR_RAISE || op == IR_RERAISE || op == IR_JUMP || in[c].op != in[t].op ||
                !is_copy(d, t, c, len))
                continue;
            if (layout_block_of(d, c) == layout_block_of(d, t))
                in[j].target = c;
            break;
        }
    }
}

int dc_legacy_handler_end(const dc *d, int s) {
    if (s < 0 || s >= d->n || !dc_is_block_setup(d->in[s].op))
        return -1;
    int H = d->in[s].target;
    if (H <= s || H >= d->n)
        return -1;
    if (d->in[s].op != IR_SETUP_FINALLY)
        return with_handler_end(d, H, d->in[s].op == IR_SETUP_ASYNC_WITH);
    if (!is_except_handler(d, H)) {
        int FE = finally_end(d, H);
        return FE < 0 ? -1 : FE + 1;
    }
    /* the clauses, each matching jumping to the next, up to the RERAISE */
    for (int p = H; p < d->n;) {
        if (d->in[p].op == IR_RERAISE || d->in[p].op == IR_END_FINALLY)
            return p + 1;
        int q = p;
        while (q < d->n && dc_is_exc_type_op(d->in[q].op))
            q++;
        if (q + 1 >= d->n || d->in[q].op != IR_CHECK_EXC_MATCH || d->in[q + 1].op != IR_POP_JUMP_IF_FALSE ||
            d->in[q + 1].target <= q)
            return -1; /* (a bare except, or no clause we know) */
        p = d->in[q + 1].target;
    }
    return -1;
}

int dc_legacy_op(dc *d, int i, int end, dc_stack *st, dp_nodes *out, int *next) {
    if (!d->lay.block_stack)
        return 0;
    const dp_instr *ins = &d->in[i];
    int r;
    switch (ins->op) {
    case IR_SETUP_FINALLY: {
        int H = ins->target, carried = st->n > d->base;
        if (H <= i || H >= d->n || d->in[H].op == IR_END_ASYNC_FOR)
            return 0;
        int except = is_except_handler(d, H);
        /* (not a carried try/except: the stacks its clauses leave would have
         * to agree with the body's where they join; nor 3.8's try/finally,
         * whose body enters the finally block with a value of its own) */
        if (carried && (except || d->lay.finally_subroutine))
            return 0;
        r = except ? except_stmt(d, i, end, st, out, next) : finally_stmt(d, i, st, out, next, carried);
        break;
    }
    case IR_SETUP_WITH: case IR_SETUP_ASYNC_WITH:
        if (ins->target <= i || ins->target >= d->n)
            return 0;
        r = with_stmt(d, i, i, st, out, next);
        break;
    case IR_POP_BLOCK: {
        /* `return` and `break` leave several blocks in a row, inner first */
        int s = block_of(d, i);
        r = pop_block(d, i, s, end, st, next);
        while (r >= 0 && *next < end && *next < d->n && d->in[*next].op == IR_POP_BLOCK) {
            s = enclosing_block(d, s);
            r = pop_block(d, *next, s, end, st, next);
        }
        break;
    }
    case IR_CALL_FINALLY: { /* 3.8: run a finally body (or clear an except-as name) on the way out */
        int H = ins->target;
        if (H <= i || H >= d->n || is_except_handler(d, H) || d->in[H].op == IR_WITH_CLEANUP_START)
            return 0;
        dc_mark(d, i);
        *next = i + 1;
        return 1;
    }
    case IR_POP_EXCEPT: { /* leaves an except block: the previous exception's three values */
        int q = i;
        while (q < d->n && d->in[q].op == IR_POP_EXCEPT)
            q++;
        /* (the clause's own way out, `POP_EXCEPT; JUMP <loop head>` right
         * before the next clause or the re-raise when none matched, is
         * falling off the clause at the end of a loop body: a `continue`
         * written there leaves a second, dead copy of the pair) */
        int own_exit = q == i + 1 && q < d->n && d->in[q].op == IR_JUMP && dc_is_loop_head(d, d->in[q].target) &&
                       (q + 1 == end || (q + 1 < d->n && (d->in[q + 1].op == IR_END_FINALLY || d->in[q + 1].op == IR_RERAISE)));
        if (q < d->n && d->in[q].op == IR_JUMP && dc_is_loop_exit(d, d->in[q].target) && !own_exit) {
            /* part of a break/continue: the jump leaves, the stack does not matter */
            dc_seen(d, i, q);
            *next = q;
            return 1;
        }
        for (int k = 0; k < 3; k++)
            if (dc_pop(d, st, i) == NULL)
                return -1;
        dc_mark(d, i);
        *next = i + 1;
        return 1;
    }
    default:
        return 0;
    }
    return r < 0 ? -1 : 1;
}

int dc_legacy_async_with(dc *d, int i, dc_stack *st, dp_nodes *out, int *next) {
    /* BEFORE_ASYNC_WITH; GET_AWAITABLE; YIELD_FROM; SETUP_ASYNC_WITH: the
     * manager stays on the stack for with_stmt */
    int s = i + 1;
    while (s < d->n && s < i + 6 && d->in[s].op != IR_SETUP_ASYNC_WITH)
        s++;
    if (s >= d->n || d->in[s].op != IR_SETUP_ASYNC_WITH || d->in[s].target <= s || d->in[s].target >= d->n)
        return dc_fail(d, i, "async with without SETUP_ASYNC_WITH");
    dc_seen(d, i, s);
    return with_stmt(d, s, i, st, out, next);
}
