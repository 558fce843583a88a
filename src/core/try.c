/* try/except/finally and with statements, recovered from the 3.11+
 * exception table.  CPython flattens nested handlers into one table where
 * each instruction maps to its innermost handler; we rebuild the nesting:
 * a handler's protected range grows to include every try whose handler code
 * it protects. */
#include <string.h>

#include "dc.h"

static int is_handler_start(const dc *d, int at) {
    return at >= 0 && at < d->n && d->in[at].op == IR_PUSH_EXC_INFO;
}

/* Builds d->handlers once per code object. */
static int find_handlers(dc *d) {
    if (d->handlers != NULL || d->f.nexc == 0)
        return 0;
    d->handlers = dp_alloc_array(d->sh->ar, (size_t)d->f.nexc, sizeof *d->handlers);
    if (d->handlers == NULL)
        return dc_fail(d, -1, "out of memory");
    for (int k = 0; k < d->f.nexc; k++) {
        const dp_exc_entry *e = &d->f.exc[k];
        /* (code stepped over, a comprehension's cleanup, is no part of a try) */
        if (!is_handler_start(d, e->target) || d->skip_to[e->start] >= e->end)
            continue;
        int h = 0;
        while (h < d->nhandlers && d->handlers[h].at != e->target)
            h++;
        if (h == d->nhandlers) {
            d->handlers[h].at = e->target;
            d->handlers[h].start = e->start;
            d->handlers[h].end = e->end;
            d->handlers[h].opened = 0;
            d->nhandlers++;
        }
        if (e->start < d->handlers[h].start)
            d->handlers[h].start = e->start;
        if (e->end > d->handlers[h].end)
            d->handlers[h].end = e->end;
    }
    /* a try protects the handlers of the tries nested in its body */
    for (int round = 0, changed = 1; changed && round <= d->nhandlers; round++) {
        changed = 0;
        for (int a = 0; a < d->nhandlers; a++)
            for (int b = 0; b < d->nhandlers; b++) {
                dc_handler *A = &d->handlers[a], *B = &d->handlers[b];
                /* B's handler code, or the cleanup block protecting it, is in A's try */
                int cleanup = d->handler[B->at];
                int inside = d->handler[B->at] == A->at || (cleanup >= 0 && d->handler[cleanup] == A->at);
                if (a != b && inside && B->start < A->start) {
                    A->start = B->start;
                    changed = 1;
                }
            }
    }
    return 0;
}

static dc_handler *handler_at(dc *d, int at) {
    for (int h = 0; h < d->nhandlers; h++)
        if (d->handlers[h].at == at)
            return &d->handlers[h];
    return NULL;
}

/* Is `at` the target of any exception-table entry? */
static int is_exc_target(const dc *d, int at) {
    for (int k = 0; k < d->f.nexc; k++)
        if (d->f.exc[k].target == at)
            return 1;
    return 0;
}

/* The end of the `COPY 3; POP_EXCEPT; RERAISE 1` block that every handler
 * is protected by. */
static int cleanup_end(const dc *d, int cleanup) {
    if (cleanup >= 0 && cleanup + 2 < d->n && d->in[cleanup].op == IR_COPY && d->in[cleanup + 1].op == IR_POP_EXCEPT &&
        d->in[cleanup + 2].op == IR_RERAISE)
        return cleanup + 3;
    return -1;
}

static int region_with(dc *d, int start, int end, int exit, dc_stack *st, dp_nodes *out, dp_node *extra1,
                       dp_node *extra2) {
    dc_stack tmp = {0};
    if (dc_stack_copy(d, &tmp, st) < 0)
        return -1;
    if (extra1 && dc_push(d, &tmp, extra1) < 0)
        return -1;
    if (extra2 && dc_push(d, &tmp, extra2) < 0)
        return -1;
    return dc_region(d, start, end, exit, &tmp, out);
}

/* Where control continues after a try statement: the target of the jumps
 * that leave its parts, else just past its handler code. */
/* Is [i, i + len) the same code as ops[0..len)? */
static int is_copy(const dc *d, int i, const dp_instr *ops, int len) {
    for (int k = 0; k < len; k++) {
        const dp_instr *a = &d->in[i + k], *b = &ops[k];
        if (a->op != b->op || a->arg != b->arg || a->cst != b->cst ||
            (a->name != b->name && (a->name == NULL || b->name == NULL || strcmp(a->name, b->name) != 0)))
            return 0;
    }
    return 1;
}

static int is_jump_op(int op) {
    return op == IR_JUMP || op == IR_POP_JUMP_IF_FALSE || op == IR_POP_JUMP_IF_TRUE || op == IR_POP_JUMP_IF_NONE ||
           op == IR_POP_JUMP_IF_NOT_NONE || op == IR_JUMP_IF_FALSE_OR_POP || op == IR_JUMP_IF_TRUE_OR_POP ||
           op == IR_FOR_ITER;
}

static int is_loop_exit(const dc *d, int target) {
    return d->loop && (target == d->loop->brk || target == d->loop->head);
}

static int try_after(const dc *d, int from, int to, int fallback) {
    int after = -1;
    for (int j = from; j < to; j++) {
        const dp_instr *x = &d->in[j];
        /* break and continue leave the try too, but they do not end it */
        if (x->op == IR_JUMP && x->target >= to && x->target > after && !is_loop_exit(d, x->target))
            after = x->target;
    }
    return after > 0 ? after : fallback;
}

/* Handlers of a try/except, starting at H (PUSH_EXC_INFO). */
static int except_handlers(dc *d, dp_node *tr, int H, int clean, int exit, dc_stack *st) {
    dp_node *prev = dc_node(d, X_PREV_EXC), *exc = dc_node(d, X_EXC);
    if (prev == NULL || exc == NULL)
        return -1;
    int p = H + 1;
    while (p < clean) {
        const dp_instr *ins = &d->in[p];
        if (ins->op == IR_RERAISE) {
            d->seen[p] = 1;
            return 0; /* no clause matched */
        }
        dp_node *h = dc_stmt(d, S_EXCEPT, p);
        if (h == NULL || dc_add(d, &tr->l2, h) < 0)
            return -1;
        int body, body_end;
        if (ins->op == IR_POP_TOP) {
            d->seen[p] = 1;
            body = p + 1;
            body_end = clean;
        } else {
            dc_stack tmp = {0};
            if (dc_stack_copy(d, &tmp, st) < 0 || dc_push(d, &tmp, prev) < 0 || dc_push(d, &tmp, exc) < 0)
                return -1;
            int q = p;
            while (q < clean && d->in[q].op != IR_CHECK_EXC_MATCH && d->in[q].op != IR_CHECK_EG_MATCH) {
                if (dc_expr_step(d, q, &tmp) <= 0)
                    return dc_fail(d, q, "unexpected code in an except clause");
                q++;
            }
            if (q + 2 >= clean || d->in[q + 1].op != IR_POP_JUMP_IF_FALSE)
                return dc_fail(d, p, "malformed except clause");
            if (d->in[q].op == IR_CHECK_EG_MATCH)
                tr->op = 1;
            if ((h->a = dc_top(d, &tmp, 0, q)) == NULL)
                return -1;
            int next = d->in[q + 1].target;
            const dp_instr *bind = &d->in[q + 2];
            if (bind->op == IR_STORE_FAST || bind->op == IR_STORE_NAME || bind->op == IR_STORE_DEREF ||
                bind->op == IR_STORE_GLOBAL)
                h->s = bind->name;
            else if (bind->op != IR_POP_TOP)
                return dc_fail(d, q + 2, "malformed except clause");
            dc_seen(d, q, q + 3); /* CHECK_EXC_MATCH, the jump, the binding */
            body = q + 3;
            body_end = next;
            p = next;
        }
        /* `except E as e:` bodies are protected by a block that clears e
         * (`e = None; del e; RERAISE`) placed right after them */
        for (int j = body; h->s && j + 3 < body_end; j++)
            if (is_exc_target(d, j) && d->in[j].op == IR_LOAD_CONST && d->in[j + 1].name &&
                strcmp(d->in[j + 1].name, h->s) == 0 && d->in[j + 2].op >= IR_DELETE_NAME &&
                d->in[j + 2].op <= IR_DELETE_DEREF && d->in[j + 3].op == IR_RERAISE) {
                body_end = j;
                dc_seen(d, j, j + 4);
                break;
            }
        const char *saved = d->except_name;
        d->except_name = h->s;
        int r = region_with(d, body, body_end, exit, st, &h->l1, prev, NULL);
        d->except_name = saved;
        if (r < 0)
            return -1;
        if (ins->op == IR_POP_TOP)
            return 0; /* a bare except is the last clause */
    }
    return 0;
}

/* Is the handler at H a finally block (as opposed to except clauses)? */
static int is_finally(dc *d, int H, int clean) {
    if (d->in[H + 1].op == IR_POP_TOP)
        return 0;
    for (int q = H + 1; q < clean; q++) {
        int op = d->in[q].op;
        if (op == IR_CHECK_EXC_MATCH || op == IR_CHECK_EG_MATCH)
            return 0;
        if (op != IR_LOAD_GLOBAL && op != IR_LOAD_NAME && op != IR_LOAD_FAST && op != IR_LOAD_DEREF &&
            op != IR_LOAD_ATTR && op != IR_BUILD_TUPLE && op != IR_LOAD_CONST && op != IR_NOP &&
            op != IR_LOAD_CLASSDEREF)
            return 1;
    }
    return 1;
}

/* 3.12+ places handlers after the normal flow ("cold" blocks) and ends an
 * except clause either with a backward jump to where the try statement
 * continues or with a copy of that code.  The join of the try at `stop`,
 * or -1 when every clause leaves otherwise (return, raise). */
static int cold_join(dc *d, int stop, int H, int cend) {
    for (int j = H; j < cend; j++) {
        const dp_instr *x = &d->in[j];
        if (x->op == IR_JUMP && (x->target < H || x->target >= cend) && !is_loop_exit(d, x->target))
            return x->target;
    }
    /* copies: each clause ends `POP_EXCEPT [e = None; del e] <copy>`, the copy
     * being the code after the try up to its return */
    int join = -1;
    for (int p = H; p < cend; p++) {
        if (d->in[p].op != IR_POP_EXCEPT)
            continue;
        int t = p + 1;
        if (t + 2 < cend && d->in[t].op == IR_LOAD_CONST && d->in[t + 2].op >= IR_DELETE_NAME &&
            d->in[t + 2].op <= IR_DELETE_DEREF)
            t += 3;
        int e = t;
        while (e < cend && d->in[e].op != IR_RETURN_VALUE && !is_jump_op(d->in[e].op) &&
               d->in[e].op != IR_RERAISE && d->in[e].op != IR_RAISE)
            e++;
        if (e >= cend || d->in[e].op != IR_RETURN_VALUE || e == t)
            continue;
        int len = e + 1 - t;
        for (int J = stop; J + len <= H; J++) {
            int same = 1;
            for (int k = 0; k < len && same; k++) {
                const dp_instr *a = &d->in[t + k], *b = &d->in[J + k];
                same = a->op == b->op && a->arg == b->arg && a->cst == b->cst &&
                       (a->name == b->name || (a->name && b->name && strcmp(a->name, b->name) == 0));
            }
            if (same && (join < 0 || join == J)) {
                join = J;
                d->vjump[t] = J;
                dc_seen(d, t, e + 1);
                break;
            }
        }
    }
    return join;
}

static int try_stmt(dc *d, dc_handler *h, int i, dc_stack *st, dp_nodes *out, int *next) {
    int H = h->at;
    int clean = H < d->n ? d->handler[H] : -1;
    int cend = cleanup_end(d, clean);
    if (cend < 0)
        return dc_fail(d, H, "handler without its cleanup block");
    h->opened = 1;
    d->seen[H] = 1;
    dc_seen(d, clean, cend);
    dp_node *tr = dc_stmt(d, S_TRY, i);
    if (tr == NULL)
        return -1;
    if (is_finally(d, H, clean)) {
        if (clean - 1 <= H || d->in[clean - 1].op != IR_RERAISE)
            return dc_fail(d, H, "malformed finally block");
        d->seen[clean - 1] = 1;
        int after = try_after(d, i, H, cend);
        const dp_instr *saved_ops = d->fin_ops;
        int saved_len = d->fin_len, saved_outer = d->nfin_outer;
        if (saved_ops && d->nfin_outer < (int)(sizeof d->fin_outer / sizeof d->fin_outer[0])) {
            d->fin_outer[d->nfin_outer].ops = saved_ops; /* a return runs every enclosing finally */
            d->fin_outer[d->nfin_outer].len = saved_len;
            d->nfin_outer++;
        }
        d->fin_ops = &d->in[H + 1];
        d->fin_len = clean - 1 - (H + 1);
        int cold = d->code->py_minor >= 12, r;
        if (cold) {
            /* 3.12+: the body, then the finally copy of its normal exit, then
             * the code after the statement; the handler is elsewhere */
            int body_end = h->end;
            for (int k = 0; k < d->f.nexc; k++)
                if (d->f.exc[k].target == H && d->f.exc[k].end > body_end && d->skip_to[d->f.exc[k].start] < d->f.exc[k].end)
                    body_end = d->f.exc[k].end;
            d->finish_stmt = 1;
            r = region_with(d, i, body_end, body_end, st, &tr->l1, NULL, NULL);
            int j = d->region_stop;
            while (j < H && d->in[j].op == IR_NOP)
                j++;
            after = d->region_stop;
            if (r >= 0 && d->fin_len >= 0 && j + d->fin_len <= H && is_copy(d, j, &d->in[H + 1], d->fin_len)) {
                dc_seen(d, j, j + d->fin_len);
                after = j + d->fin_len;
            }
            d->skip_to[H] = cend;
        } else {
            r = region_with(d, i, H, after, st, &tr->l1, NULL, NULL);
        }
        d->fin_ops = saved_ops;
        d->fin_len = saved_len;
        d->nfin_outer = saved_outer;
        if (r < 0)
            return -1;
        dp_node *prev = dc_node(d, X_PREV_EXC), *exc = dc_node(d, X_EXC);
        if (prev == NULL || exc == NULL)
            return -1;
        if (region_with(d, H + 1, clean - 1, -1, st, &tr->l4, prev, exc) < 0)
            return -1;
        if (tr->l4.n == 0 && dc_add(d, &tr->l4, dc_stmt(d, S_PASS, H)) < 0)
            return -1;
        /* try/except/finally compiles as a try/except inside a try/finally */
        if (tr->l1.n == 1 && tr->l1.v[0]->kind == S_TRY && tr->l1.v[0]->l4.n == 0 && tr->l1.v[0]->l2.n > 0) {
            dp_node *inner = tr->l1.v[0];
            tr->l1 = inner->l1;
            tr->l2 = inner->l2;
            tr->l3 = inner->l3;
            tr->op = inner->op;
        }
        *next = after;
        return dc_add(d, out, tr);
    }
    int body_end = h->end;
    for (int k = 0; k < d->f.nexc; k++)
        if (d->f.exc[k].target == H && d->f.exc[k].end > body_end && d->skip_to[d->f.exc[k].start] < d->f.exc[k].end)
            body_end = d->f.exc[k].end;
    if (body_end > H)
        return dc_fail(d, i, "try body overlaps its handler");
    if (d->code->py_minor >= 12) {
        /* 3.12+: handlers are cold blocks; see cold_join */
        d->finish_stmt = 1;
        if (region_with(d, i, body_end, body_end, st, &tr->l1, NULL, NULL) < 0)
            return -1;
        int stop = d->region_stop;
        int join = cold_join(d, stop, H, cend);
        if (join > stop && region_with(d, stop, join, join, st, &tr->l3, NULL, NULL) < 0)
            return -1;
        if (except_handlers(d, tr, H, clean, join, st) < 0)
            return -1;
        d->skip_to[H] = cend;
        *next = join > stop ? join : stop;
        return dc_add(d, out, tr);
    }
    int after = try_after(d, body_end, cend, cend);
    for (int j = H; j < cend; j++) {
        const dp_instr *x = &d->in[j];
        if (x->op == IR_JUMP && x->target >= cend && x->target > after && !is_loop_exit(d, x->target))
            after = x->target;
    }
    d->finish_stmt = 1;
    if (region_with(d, i, body_end, after, st, &tr->l1, NULL, NULL) < 0)
        return -1;
    body_end = d->region_stop;
    if (body_end < H && region_with(d, body_end, H, after, st, &tr->l3, NULL, NULL) < 0)
        return -1;
    if (except_handlers(d, tr, H, clean, after, st) < 0)
        return -1;
    *next = after;
    return dc_add(d, out, tr);
}

/* with mgr as target: BEFORE_WITH at i, the handler protecting i + 1. */
int dc_with(dc *d, int i, dc_stack *st, dp_nodes *out, int *next) {
    if (d->code->py_minor <= 10)
        return dc_legacy_async_with(d, i, st, out, next);
    dp_node *mgr = dc_pop(d, st, i);
    if (mgr == NULL)
        return -1;
    int is_async = d->in[i].op == IR_BEFORE_ASYNC_WITH;
    int body = i + 1;
    if (is_async) { /* the awaited __aenter__ */
        while (body < d->n && d->in[body].op != IR_YIELD_FROM)
            body++;
        body++;
    }
    /* the exit handler of this with: the first one not yet taken that
     * protects the code after the enter (the binding of an async with's
     * target can still be covered by an enclosing with) */
    int H = -1;
    if (find_handlers(d) < 0)
        return -1;
    for (int j = body; j < d->n && j < body + 64 && H < 0; j++) {
        int c = d->handler[j];
        dc_handler *ch = handler_at(d, c);
        if (ch && !ch->opened && c + 1 < d->n && d->in[c + 1].op == IR_WITH_EXCEPT_START)
            H = c;
    }
    dc_handler *h = handler_at(d, H);
    int test = H + 2; /* after WITH_EXCEPT_START (and the await of __aexit__) */
    while (is_async && test < d->n && d->in[test].op != IR_POP_JUMP_IF_TRUE && test < H + 8)
        test++;
    if (h == NULL || test >= d->n || d->in[H + 1].op != IR_WITH_EXCEPT_START || d->in[test].op != IR_POP_JUMP_IF_TRUE)
        return dc_fail(d, i, "with statement without its exit handler");
    h->opened = 1;
    int L = d->in[test].target;
    int after = L + 4;
    if (after > d->n)
        return dc_fail(d, H, "truncated with handler");
    for (int j = body; j < H; j++) {
        const dp_instr *x = &d->in[j];
        if (x->op == IR_JUMP && x->target > after && !is_loop_exit(d, x->target))
            after = x->target;
    }
    dp_node *w = dc_stmt(d, S_WITH, i), *item = dc_node(d, E_WITHITEM);
    dp_node *exitfn = dc_node(d, X_WITH_EXIT), *holder = dc_node(d, E_TUPLE), *slot = dc_node(d, X_SLOT);
    if (w == NULL || item == NULL || exitfn == NULL || holder == NULL || slot == NULL ||
        dp_nodes_push(d->sh->ar, &holder->l1, NULL) < 0 || dc_add(d, &w->l1, item) < 0)
        return -1;
    exitfn->a = mgr;
    slot->a = holder;
    item->a = mgr;
    w->op = is_async;
    d->stop_node = exitfn;
    if (region_with(d, body, H, after, st, &w->l2, exitfn, slot) < 0)
        return -1;
    item->b = holder->l1.v[0];
    d->skip_to[H] = L + 4;
    dc_seen(d, H, L + 4);
    int cl = d->handler[H], clend = cleanup_end(d, cl);
    if (cl > L && clend > 0) {
        /* 3.12+: the handler is cold: after it, a jump back to the code
         * after the with or a copy of that code, then its cleanup block */
        dc_seen(d, L + 4, clend);
        d->skip_to[H] = clend;
    }
    dc_seen(d, i, body); /* BEFORE_WITH and the await of __aenter__ */
    *next = d->region_stop;
    return dc_add(d, out, w);
}

int dc_try(dc *d, int i, int end, dc_stack *st, dp_nodes *out, int *next) {
    if (find_handlers(d) < 0)
        return -1;
    dc_handler *best = NULL;
    for (int h = 0; h < d->nhandlers; h++) {
        dc_handler *c = &d->handlers[h];
        /* before 3.12 a try's handler follows its body within the region;
         * from 3.12 on handlers are cold blocks placed after the function */
        int in_region = c->at < end || d->code->py_minor >= 12;
        if (!c->opened && c->start == i && in_region && (best == NULL || c->at > best->at))
            best = c;
    }
    if (best == NULL)
        return 0;
    return try_stmt(d, best, i, st, out, next) < 0 ? -1 : 1;
}
