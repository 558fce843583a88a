/* Loops: for, async for, while (with its test at the top, the bottom, or
 * none: `while True:`), break and continue. */
#include <string.h>

#include "structure.h"

/* Do the jump at j and its target lie in one except clause or finally
 * body (both protected by that handler's cleanup block: `COPY 3;
 * POP_EXCEPT; RERAISE 1`, or `e = None; del e; RERAISE 1` in an `except ...
 * as e` body) that does not hold the loop at `head`?  3.12+ places a loop's
 * last jump back in an except clause after the function: the clause's own
 * jumps past it leave no loop. */
static int within_handler(const dc *d, int head, int j, int target) {
    int c = !d->lay.block_stack && target < d->n ? dc_handler_at(d, j) : -1;
    if (c < 0 || c + 2 >= d->n || dc_handler_at(d, target) != c || dc_handler_at(d, head) == c)
        return 0;
    const dp_instr *x = &d->in[c];
    return (x[0].op == IR_COPY && x[1].op == IR_POP_EXCEPT && x[2].op == IR_RERAISE) ||
           (c + 3 < d->n && x[0].op == IR_LOAD_CONST && dc_is_name_store(x[1].op) && x[2].op >= IR_DELETE_NAME &&
            x[2].op <= IR_DELETE_DEREF && x[3].op == IR_RERAISE);
}

/* Where `break` jumps: the largest forward jump target beyond `after` found
 * in [from, to), or `after` when no jump leaves the loop. */
int dc_find_loop_exit(dc *d, int from, int to, int after) {
    int brk = after;
    for (int j = from; j < to; j++) {
        const dp_instr *x = &d->in[j];
        if (dc_is_jump(x->op) && x->target > brk && x->target > to && !within_handler(d, from, j, x->target))
            brk = x->target;
    }
    return brk;
}

/* Does a jump in [from, to) leave for where control goes on from `exit`
 * rather than from `after`? */
int dc_jumps_as(const dc *d, int from, int to, int exit, int after) {
    for (int j = from; j < to; j++) {
        int t = d->in[j].target;
        if (dc_is_jump(d->in[j].op) && (t < from - 1 || t >= to) && dc_continues_as(d, t, exit) &&
            !dc_continues_as(d, t, after))
            return 1;
    }
    return 0;
}

/* The copy at `at` of the code a region [from, end) goes on with, reached
 * only from that region (a loop's exit), is no code of its own: the
 * statements that follow skip it. */
static void skip_exit_copy(dc *d, int from, int end, int at) {
    int e = dc_return_tail_end(d, at);
    if (e < 0 || (at > 0 && d->reach[at - 1] && !dc_is_terminator(d->in[at - 1].op)))
        return;
    for (int j = 0; j < d->n; j++)
        if (d->reach[j] && d->in[j].target == at && (j < from || j >= end))
            return;
    dc_set(d, &d->skip_to[at], e + 1);
}

/* A loop's else [from, end), its breaks going to end.  (An else that
 * returns leaves the stack it unwound behind: the loop goes on with the
 * one its breaks leave.) */
int dc_loop_else(dc *d, int from, int end, dc_stack *st, dp_nodes *out) {
    dc_stack els = {0};
    if (dc_stack_copy(d, &els, st) < 0 || dc_region(d, from, end, end, &els, out) < 0)
        return -1;
    return d->region_live && dc_stack_copy(d, st, &els) < 0 ? -1 : 0;
}

int dc_loop_body(dc *d, dc_loop *lp, int start, int end, dc_stack *st, dp_nodes *out) {
    lp->up = d->loop;
    d->loop = lp;
    int r = dc_region(d, start, end, lp->head, st, out);
    d->loop = lp->up;
    return r;
}

int dc_for_loop(dc *d, int i, int end, int exit, dc_stack *st, dp_nodes *out, int *next) {
    const dp_instr *ins = &d->in[i];
    int done_at = ins->target; /* first instruction after the loop */
    if (done_at <= i || done_at > d->n)
        return dc_fail(d, i, "bad FOR_ITER target");
    dp_node *it = dc_top(d, st, 0, i);
    if (it == NULL)
        return -1;
    int body_end = done_at;
    if (done_at > end) {
        /* the loop exits past the enclosing region: to a copy of the code
         * the region goes on with (3.10+ duplicates a `return` there); the
         * body ends with the region */
        if (!dc_continues_as(d, done_at, exit >= 0 ? exit : end))
            return dc_fail(d, i, "for loop exits past its enclosing block");
        body_end = end;
    }
    if (body_end - 1 > i && d->in[body_end - 1].op == IR_JUMP && d->in[body_end - 1].target == i)
        dc_mark(d, --body_end);
    /* (no jump back ends a body that never falls off its end: 3.11 with a
     * try whose except clause continues, its body leaving by a break, ends
     * the region with the clause's cleanup) */
    else if (body_end < done_at && !(d->reach[body_end - 1] && dc_is_terminator(d->in[body_end - 1].op)))
        return dc_fail(d, i, "for loop body runs past its enclosing block");
    int brk = dc_find_loop_exit(d, i + 1, body_end, done_at);
    if (brk > end)
        brk = done_at;
    int then = -1;
    if (brk == done_at && done_at < end && exit >= 0 && dc_jumps_as(d, i + 1, body_end, exit, done_at)) {
        brk = end; /* a break that skips [done_at, end): the else */
        then = exit;
    }
    dp_node *s = dc_stmt(d, S_FOR, i), *holder = dc_node(d, E_TUPLE), *slot = dc_node(d, X_SLOT);
    if (s == NULL || holder == NULL || slot == NULL || dp_nodes_push(d->sh->ar, &holder->l1, NULL) < 0)
        return -1;
    slot->a = holder;
    s->b = it->kind == X_ITER ? it->a : it;
    s->op = 0;
    dc_stack body_st = {0};
    if (dc_stack_copy(d, &body_st, st) < 0 || dc_push(d, &body_st, slot) < 0)
        return -1;
    dc_loop lp = {i, brk, 1, NULL, then};
    if (dc_loop_body(d, &lp, i + 1, body_end, &body_st, &s->l1) < 0)
        return -1;
    /* without a jump back, falling off the body leaves the loop: the
     * compiler dropped the jump of a final `break` */
    if (d->region_live && !d->region_jumps_on && body_end == done_at &&
        dc_add(d, &s->l1, dc_stmt(d, S_BREAK, body_end - 1)) < 0)
        return -1;
    if ((s->a = holder->l1.v[0]) == NULL)
        return dc_fail(d, i, "for loop without a target");
    if (dc_pop(d, st, i) == NULL) /* the exhausted iterator is gone */
        return -1;
    if (brk > done_at && dc_loop_else(d, done_at, brk, st, &s->l2) < 0)
        return -1;
    if (done_at > end)
        skip_exit_copy(d, i, end, done_at);
    *next = brk > done_at ? brk : done_at;
    if (dc_add(d, out, s) < 0)
        return -1;
    return then >= 0 ? REST_OF_REGION : 0;
}

/* async for: `GET_AITER; head: GET_ANEXT; <await>; <store target>; body;
 * JUMP head` with StopAsyncIteration handled by END_ASYNC_FOR, the handler
 * of the GET_ANEXT.  Before 3.11 the head is `SETUP_FINALLY <END_ASYNC_FOR>`
 * and a POP_BLOCK follows the await. */
int dc_async_for_loop(dc *d, int i, int end, dc_stack *st, dp_nodes *out, int *next) {
    int legacy = dc_is_legacy_async_for(d, i);
    int stop = legacy ? d->in[i].target : dc_handler_at(d, i);
    if (stop <= i || stop >= d->n || d->in[stop].op != IR_END_ASYNC_FOR)
        return dc_fail(d, i, "async for without END_ASYNC_FOR");
    int body = i + 1;
    while (body < stop && d->in[body].op != IR_YIELD_FROM)
        body++;
    if (body >= stop)
        return dc_fail(d, i, "async for without its await");
    body++;
    if (legacy && (body >= stop || d->in[body].op != IR_POP_BLOCK))
        return dc_fail(d, i, "async for without POP_BLOCK after its await");
    body += legacy;
    int body_end = stop, after = stop + 1;
    int edge = stop - 1; /* the loop's back edge */
    while (edge > body && !(d->in[edge].op == IR_JUMP && d->in[edge].target == i))
        edge--;
    int cold = stop;
    while (cold - 1 > edge && d->in[cold - 1].op == IR_NOP)
        cold--;
    if (edge > body && cold > edge + 1 && stop + 1 < d->n && dc_same_continuation(d, edge + 1, stop + 1)) {
        /* 3.12+ inside a block: END_ASYNC_FOR (and the await's cleanup,
         * lifted to NOPs) sit at the cold end of the function, then jump
         * back to the loop's exit, which follows the back edge, or go on
         * with a copy of it (3.13 copies a `return`) */
        after = edge + 1;
        body_end = edge;
        int tail = stop + 1 + (d->in[stop + 1].op == IR_JUMP ? 1 : dc_exit_block_len(d, stop + 1));
        dc_seen(d, cold, tail);
        dc_set(d, &d->skip_to[cold], tail);
        dc_seen(d, body_end, after);
    } else if (edge > body && cold > edge + 1 && st->n >= 2 && st->v[st->n - 2]->kind == E_NAME &&
               strcmp(st->v[st->n - 2]->s, "<inlined comprehension>") == 0) {
        /* the same for a 3.12+ async comprehension inlined in a block: its
         * value goes on from END_ASYNC_FOR (the caller follows it there);
         * the code between the back edge and the cold end is not the
         * loop's */
        body_end = edge;
        dc_seen(d, body_end, body_end + 1);
        dc_seen(d, cold, stop + 1);
        dc_set(d, &d->skip_to[cold], stop + 1);
    } else {
        if (body_end - 1 > body && d->in[body_end - 1].op == IR_JUMP && d->in[body_end - 1].target == i)
            body_end--;
        dc_seen(d, body_end, stop + 1);
    }
    dc_seen(d, i, body);
    int brk = dc_find_loop_exit(d, body, body_end, after);
    if (brk > end)
        brk = after;
    if (after != stop + 1 && brk != after)
        return dc_fail(d, i, "async for with its END_ASYNC_FOR moved away, and an else clause");
    dp_node *it = dc_top(d, st, 0, i);
    dp_node *s = dc_stmt(d, S_FOR, i), *holder = dc_node(d, E_TUPLE), *slot = dc_node(d, X_SLOT);
    if (it == NULL || s == NULL || holder == NULL || slot == NULL || dp_nodes_push(d->sh->ar, &holder->l1, NULL) < 0)
        return -1;
    slot->a = holder;
    s->b = it->kind == X_ITER ? it->a : it; /* a comprehension iterates `.0` */
    s->op = 1;
    dc_stack body_st = {0};
    if (dc_stack_copy(d, &body_st, st) < 0 || dc_push(d, &body_st, slot) < 0)
        return -1;
    dc_loop lp = {i, brk, 1, NULL, -1};
    if (dc_loop_body(d, &lp, body, body_end, &body_st, &s->l1) < 0)
        return -1;
    if ((s->a = holder->l1.v[0]) == NULL)
        return dc_fail(d, i, "async for loop without a target");
    if (dc_pop(d, st, i) == NULL)
        return -1;
    if (brk > after && dc_region(d, after, brk, brk, st, &s->l2) < 0)
        return -1;
    *next = brk;
    return dc_add(d, out, s);
}

/* Nothing runs in [from, to): NOPs nothing jumps to, or unreachable code
 * (3.8 leaves the jump that followed a raise)? */
int dc_nothing_runs(const dc *d, int from, int to) {
    for (int j = from; j < to; j++)
        if ((d->in[j].op != IR_NOP || d->nref[j] > 0) && d->reach[j])
            return 0;
    return 1;
}

int dc_while_true(dc *d, int i, int last, int end, int exit, dc_stack *st, dp_nodes *out, int *next) {
    int brk = dc_cold_loop_exit(d, i, last, dc_find_loop_exit(d, i, last, last + 1));
    if (brk > end)
        brk = last + 1;
    dp_node *s = dc_stmt(d, S_WHILE, i);
    static const dp_const true_const = {.kind = DP_CONST_TRUE};
    if (s == NULL || (s->a = dc_const(d, &true_const)) == NULL)
        return -1;
    dc_loop lp = {i, brk, 0, NULL, -1};
    /* code after the jump back that the body jumps to is the body's own:
     * that jump is a `continue`, and the body ends with a `break` whose
     * jump the compiler dropped (it falls into the loop's exit) */
    int body_end = brk > last + 1 && dc_jumps_into(d, i, last, last + 1, brk) ? brk : last;
    /* (the same, the loop ending the body of an enclosing loop: its
     * breaks go to that loop's head) */
    if (brk == last + 1 && brk < end && d->loop && exit == d->loop->head && dc_jumps_into(d, i, last, last + 1, end) &&
        dc_jumps_as(d, i, last, exit, brk)) {
        body_end = brk = lp.brk = end;
        lp.then = exit;
    }
    /* (the loop ends its region: a jump to where the region goes on, a
     * 3.12+ break threaded to an enclosing loop's head, is a break too) */
    int ends_region = lp.then < 0 && brk == last + 1 && brk <= end && dc_nothing_runs(d, brk, end) && exit >= 0;
    if (ends_region)
        lp.then = exit;
    if (body_end == last)
        dc_seen(d, last, last + 1);
    if (dc_loop_body(d, &lp, i, body_end, st, &s->l1) < 0)
        return -1;
    if (lp.then >= 0) {
        /* (falling into the region's end is not the breaks' way out: what
         * it means is the enclosing statement's, a 3.12+ for loop's exit) */
        if (d->region_live && !ends_region)
            return dc_fail(d, end, "a loop body falls off its enclosing block");
        *next = end;
        if (dc_add(d, out, s) < 0)
            return -1;
        d->region_live = 0; /* its breaks leave by their jumps */
        return REST_OF_REGION;
    }
    if (body_end == brk && d->region_live && dc_add(d, &s->l1, dc_stmt(d, S_BREAK, brk - 1)) < 0)
        return -1;
    /* 3.11+: the last jump back can be a `continue` in an except clause,
     * whose handler's code the body's try statement took whole (3.12+
     * places it after the function): the loop, and its else, start past
     * where the body's walk ended */
    int from = !d->lay.block_stack && d->region_stop > last + 1 ? d->region_stop : last + 1;
    if (body_end == last && brk > from && dc_region(d, from, brk, brk, st, &s->l2) < 0)
        return -1;
    *next = brk > from ? brk : from;
    return dc_add(d, out, s);
}

/* `while True:` at i (3.10: the NOP kept for its line; a test there is
 * a `while cond:`, cond_while's) whose last jump back, past `last` (what
 * dc_back_edge found, or -1), is a `continue` in an except clause: the jump
 * back that would close the body is gone (3.8/3.9 leave it when dead in
 * most shapes, not after a return), the body never falling through, or it
 * is a `break` falling into the loop's exit.  The body ends at the first E past those jumps, within the
 * region ending at `end`, that is the end of a statement (E - 1 does not
 * fall through, or a jump lands at E), splits no statement of the body
 * (each block opened in it is closed with its handler before E), from
 * which only breaks leave (its jumps past E go to E), and into which no
 * code outside jumps.  A later end would read the same: code past E is
 * reached from the body by breaks only.  The end, or -1. */
int dc_legacy_loop_end(const dc *d, int i, int last, int end) {
    int lastj = -1;
    for (int j = d->last_back ? d->last_back[i] : -1; j >= 0; j = d->last_back[d->n + 1 + j])
        lastj = j > lastj ? j : lastj;
    if (!d->lay.block_stack || lastj <= last || lastj >= end || !dc_legacy_inside_try(d, lastj) ||
        (d->lay.line_nops && d->in[i].op != IR_NOP))
        return -1;
    for (int E = lastj + 1, tries = 0; E <= end && E <= d->n && tries < 64; E++) {
        if (!dc_is_terminator(d->in[E - 1].op) && d->reach[E - 1] && (E >= d->n || d->nref[E] == 0))
            continue;
        tries++;
        int ok = 1;
        for (int q = i; q < E && ok; q++) {
            int op = d->in[q].op, t = d->in[q].target;
            if (dc_is_block_setup(op)) {
                int he = dc_legacy_handler_end(d, q);
                ok = he > q && he <= E;
            } else if (dc_is_jump(op) || op == IR_FOR_ITER) {
                ok = t >= i && (t < E || (t == E && op != IR_FOR_ITER));
            }
        }
        /* (no jump from outside: the references into (i, E), counted from
         * reached code, all come from inside; none to i comes from past E,
         * its last jump back being before E) */
        long refs = 0;
        for (int q = i; q < E && ok; q++) {
            int t = d->in[q].target;
            refs += d->nref[q] * (q > i);
            if (d->reach[q] && t > i && t < E)
                refs--;
        }
        if (ok && refs == 0)
            return E;
    }
    return -1;
}

/* Can the statements l run past their end?  (1 when unsure.) */
int dc_can_complete(const dp_nodes *l, int depth) {
    if (l->n == 0 || depth > 64)
        return 1;
    const dp_node *s = l->v[l->n - 1];
    switch (s->kind) {
    case S_RETURN: case S_RAISE: case S_CONTINUE: case S_BREAK:
        return 0;
    case S_IF:
        return s->l2.n == 0 || dc_can_complete(&s->l1, depth + 1) || dc_can_complete(&s->l2, depth + 1);
    case S_TRY:
        if (s->l4.n > 0 && !dc_can_complete(&s->l4, depth + 1))
            return 0;
        if (dc_can_complete(&s->l1, depth + 1) && (s->l3.n == 0 || dc_can_complete(&s->l3, depth + 1)))
            return 1;
        for (int k = 0; k < s->l2.n; k++)
            if (dc_can_complete(&s->l2.v[k]->l1, depth + 1))
                return 1;
        return 0;
    default:
        return 1;
    }
}

/* The `while True:` of dc_legacy_loop_end: its body [i, E), its breaks to E. */
int dc_while_true_to(dc *d, int i, int E, dc_stack *st, dp_nodes *out, int *next) {
    dp_node *s = dc_stmt(d, S_WHILE, i);
    static const dp_const true_const = {.kind = DP_CONST_TRUE};
    if (s == NULL || (s->a = dc_const(d, &true_const)) == NULL)
        return -1;
    dc_loop lp = {i, E, 0, NULL, -1};
    if (dc_loop_body(d, &lp, i, E, st, &s->l1) < 0)
        return -1;
    /* falling into E is a break (where the code does not fall there, the
     * walk may still think it might, after a try whose parts all leave, or
     * drop a last `return None` as if it ended the function: a break is
     * the way out there too) */
    int falls = !dc_is_terminator(d->in[E - 1].op) && d->reach[E - 1];
    if ((falls || (d->region_live && dc_can_complete(&s->l1, 0))) && dc_add(d, &s->l1, dc_stmt(d, S_BREAK, E - 1)) < 0)
        return -1;
    *next = E;
    return dc_add(d, out, s);
}

/* Dominators and loops of the graph, built on first use: 0, or -1 out of
 * memory (error set). */
static int need_loops(dc *d) {
    return d->cfg.dominators || dp_cfg_dominators(d->sh->ar, &d->cfg, d->sh->err) == 0 ? 0 : -1;
}

int dc_is_back_edge(dc *d, int j) {
    int t = j >= 0 && j < d->n ? d->in[j].target : -1;
    if (t < 0 || t >= d->n || need_loops(d) < 0)
        return 0;
    int h = d->cfg.block_of[t];
    return d->cfg.b[h].start == t && dp_cfg_dominates(&d->cfg, h, d->cfg.block_of[j]);
}

/* The end of the natural loop of the back edge at `latch` to i, within
 * [i, end): past the last block of [i, end) that reaches the latch without
 * passing i, or -1 when i starts no block that dominates the latch (-2 out
 * of memory).  (The graph's loops merge those of one header: a `while
 * True:` starting the body of a `while c:` shares its head.)  Past that end
 * is code the loop only exits to. */
static int natural_loop_end(dc *d, int i, int latch, int end) {
    if (!dc_is_back_edge(d, latch))
        return d->sh->err->set ? -2 : -1;
    const dp_cfg *g = &d->cfg;
    if (d->loop_mark == NULL) {
        d->loop_mark = dp_alloc_array(d->sh->ar, (size_t)g->nb + 1, sizeof(int));
        d->loop_work = dp_alloc_array(d->sh->ar, (size_t)g->nb + 1, sizeof(int));
        if (d->loop_mark == NULL || d->loop_work == NULL) {
            dc_fail(d, i, "out of memory");
            return -2;
        }
        d->loop_stamp = 0;
        for (int b = 0; b <= g->nb; b++)
            d->loop_mark[b] = 0;
    }
    int stamp = ++d->loop_stamp, h = g->block_of[i], nw = 0, E = g->b[h].end < end ? g->b[h].end : end;
    d->loop_mark[h] = stamp;
    d->loop_work[nw++] = g->block_of[latch];
    d->loop_mark[g->block_of[latch]] = stamp;
    while (nw > 0) {
        const dp_block *b = &g->b[d->loop_work[--nw]];
        if (b->start >= i && b->start < end && (b->end < end ? b->end : end) > E)
            E = b->end < end ? b->end : end;
        for (int p = 0; p < b->npred; p++)
            if (d->loop_mark[b->pred[p]] != stamp && g->b[b->pred[p]].rpo >= 0) {
                d->loop_mark[b->pred[p]] = stamp;
                d->loop_work[nw++] = b->pred[p];
            }
    }
    return E > i ? E : -1;
}

/* 3.12+ `while True:` in the region [i, end) whose only jump back, at
 * `cold`, is cold code after the function, reached from the except clauses
 * of a try in the body (a `continue` there, or the clauses falling off the
 * body).  Where that jump is a clause's `continue` (not past the clauses,
 * where the try goes on) the body ends where the natural loop does, when a
 * statement can end there: the code past it is reached from the body only
 * by falling into it, a `break` whose jump the compiler dropped.  Else the
 * body is the rest of the region, and the clauses' jump back its end. */
int dc_while_true_cold(dc *d, int i, int cold, int end, dc_stack *st, dp_nodes *out, int *next) {
    int E = natural_loop_end(d, i, cold, end);
    if (E == -2)
        return -1;
    if (E <= i || !dc_in_cold_handler(d, cold, i, end) || !dc_statement_boundary(d, i, E))
        E = end;
    if (dc_find_loop_exit(d, i, E, E) != E || dc_cold_loop_exit(d, i, E, cold + 1) != cold + 1)
        return dc_fail(d, i, "loop with its jump back after the function and a break");
    dp_node *s = dc_stmt(d, S_WHILE, i);
    static const dp_const true_const = {.kind = DP_CONST_TRUE};
    if (s == NULL || (s->a = dc_const(d, &true_const)) == NULL)
        return -1;
    dc_loop lp = {i, E, 0, NULL, -1};
    if (E == end) {
        dc_seen(d, cold, cold + 1);
        dc_set(d, &d->skip_to[cold], cold + 1); /* (the walk past the handler steps over it) */
    }
    if (dc_loop_body(d, &lp, i, E, st, &s->l1) < 0)
        return -1;
    if (E < end && d->region_live && dc_add(d, &s->l1, dc_stmt(d, S_BREAK, E - 1)) < 0)
        return -1;
    *next = E;
    return dc_add(d, out, s);
}
