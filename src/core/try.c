/* try/except/finally and with statements, recovered from the 3.11+
 * exception table.  CPython flattens nested handlers into one table where
 * each instruction maps to its innermost handler; we rebuild the nesting:
 * a handler's protected range grows to include every try whose handler code
 * it protects. */
#include <stdlib.h>
#include <string.h>

#include "structure.h"

/* Lookups built once per code object: finding the try that starts at an
 * instruction, the table entries of a handler, the copies of an exit or the
 * jumps past a with then costs what is found instead of a scan of every
 * handler, entry or instruction, which made functions of thousands of try
 * statements quadratic. */
struct dc_try_index {
    /* built with the handlers (find_handlers) */
    int *entry_first; /* per instruction: an exception-table entry targeting it, -1 */
    int *entry_next;  /* per entry: the next entry with the same target, -1 */
    int *handler_at;  /* per instruction: the index in d->handlers of its handler, -1 */
    int *start_first; /* per instruction: a handler whose protected range starts there, -1 */
    int *start_next;  /* per handler: the next one whose range starts at the same place, -1 */
    int *ends[2];     /* where the RETURN_VALUEs [0] and RAISEs [1] are, ascending (built on first use) */
    int nends[2];
    struct keyed_exit *by_key; /* both past the first instruction, by the hash of their last
                                * two instructions, then ascending (built with them) */
    int nkeyed;
    int *handler_starts; /* where the PUSH_EXC_INFOs are, ascending (built on first use) */
    int nhandler_starts;
    int *jumps;       /* where the JUMPs are, by ascending target (built on first use) */
    int njumps;
};

struct keyed_exit {
    uint32_t key;
    int at;
};

static struct dc_try_index *try_index(dc *d) {
    if (d->try_index == NULL && (d->try_index = dp_alloc(d->sh->ar, sizeof *d->try_index)) == NULL)
        dc_fail(d, -1, "out of memory");
    return d->try_index;
}

static int is_handler_start(const dc *d, int at) {
    return at >= 0 && at < d->n && d->in[at].op == IR_PUSH_EXC_INFO;
}

static int *int_array(dc *d, int n, int fill) {
    int *a = dp_alloc_array(d->sh->ar, (size_t)n, sizeof *a);
    for (int k = 0; a != NULL && k < n; k++)
        a[k] = fill;
    return a;
}

/* The handler whose try protects handler h's code (k = 0) or the cleanup
 * block protecting that code (k = 1), or -1. */
static int protector(const dc *d, const struct dc_try_index *ix, int h, int k) {
    int c = dc_handler_at(d, d->handlers[h].at);
    if (k == 1 && c >= 0)
        c = dc_handler_at(d, c);
    int p = c >= 0 ? ix->handler_at[c] : -1;
    return p == h ? -1 : p;
}

/* Files each handler under the start of its protected range. */
static void index_starts(dc *d, struct dc_try_index *ix) {
    for (int p = 0; p <= d->n; p++)
        ix->start_first[p] = -1;
    for (int h = 0; h < d->nhandlers; h++) {
        int s = d->handlers[h].start;
        ix->start_next[h] = ix->start_first[s];
        ix->start_first[s] = h;
    }
}

/* A try protects the handlers of the tries nested in its body, so its range
 * starts no later than theirs: each range grows to the earliest start of
 * the handlers it protects, directly or through others.  Taking the starts
 * from the earliest on and spreading each to the handlers that protect it,
 * every handler is set once, by the first start that reaches it. */
static int nest_starts(dc *d, struct dc_try_index *ix) {
    int nh = d->nhandlers;
    unsigned char *done = dp_alloc(d->sh->ar, (size_t)nh);
    int *todo = int_array(d, nh, -1);
    if (done == NULL || todo == NULL)
        return dc_fail(d, -1, "out of memory");
    index_starts(d, ix);
    for (int p = 0; p <= d->n; p++)
        for (int h = ix->start_first[p]; h >= 0; h = ix->start_next[h]) {
            if (done[h])
                continue;
            done[h] = 1;
            int ntodo = 0;
            todo[ntodo++] = h;
            while (ntodo > 0) {
                int y = todo[--ntodo];
                for (int k = 0; k < 2; k++) {
                    int a = protector(d, ix, y, k);
                    if (a >= 0 && !done[a]) {
                        done[a] = 1;
                        d->handlers[a].start = p;
                        todo[ntodo++] = a;
                    }
                }
            }
        }
    index_starts(d, ix); /* with the grown ranges */
    return 0;
}

/* Does table entry e protect code of a try body?  Not when it covers code
 * stepped over (a comprehension's cleanup) or only NOPs: 3.12+ places an
 * await's CLEANUP_THROW (a NOP once lifted) after the function, where its
 * entry would stretch the try body over the code that follows it. */
static int protects_code(const dc *d, const dp_exc_entry *e) {
    if (d->skip_to[e->start] >= e->end)
        return 0;
    for (int j = e->start; j < e->end; j++)
        if (d->in[j].op != IR_NOP)
            return 1;
    return 0;
}

/* Builds d->handlers and the lookups once per code object. */
static int find_handlers(dc *d) {
    if (d->handlers != NULL || d->f.nexc == 0)
        return 0;
    struct dc_try_index *ix = try_index(d);
    dc_handler *hs = dp_alloc_array(d->sh->ar, (size_t)d->f.nexc, sizeof *hs);
    if (ix == NULL || hs == NULL || (ix->entry_first = int_array(d, d->n + 1, -1)) == NULL ||
        (ix->entry_next = int_array(d, d->f.nexc, -1)) == NULL ||
        (ix->handler_at = int_array(d, d->n + 1, -1)) == NULL ||
        (ix->start_first = int_array(d, d->n + 1, -1)) == NULL ||
        (ix->start_next = int_array(d, d->f.nexc, -1)) == NULL)
        return dc_fail(d, -1, "out of memory");
    int nh = 0;
    for (int k = 0; k < d->f.nexc; k++) {
        const dp_exc_entry *e = &d->f.exc[k];
        ix->entry_next[k] = ix->entry_first[e->target];
        ix->entry_first[e->target] = k;
        /* (entries over no code of a try: see protects_code) */
        if (!is_handler_start(d, e->target) || !protects_code(d, e))
            continue;
        int h = ix->handler_at[e->target];
        if (h < 0) {
            h = ix->handler_at[e->target] = nh++;
            hs[h].at = e->target;
            hs[h].start = e->start;
            hs[h].end = e->end;
        }
        if (e->start < hs[h].start)
            hs[h].start = e->start;
        if (e->end > hs[h].end)
            hs[h].end = e->end;
    }
    /* an entry over the NOPs of lines that open the body (`while True:`
     * as the body's first statement) before the first one over code: the
     * body starts there when what lies between is NOPs or code of tries
     * nested in it (a loop's head there is inside the try) */
    for (int k = 0; k < d->f.nexc; k++) {
        const dp_exc_entry *e = &d->f.exc[k];
        int h = is_handler_start(d, e->target) ? ix->handler_at[e->target] : -1;
        if (h < 0 || protects_code(d, e) || d->skip_to[e->start] >= e->end || e->end > hs[h].start ||
            e->start >= hs[h].start || hs[h].start > hs[h].at)
            continue;
        int j = e->end;
        while (j < hs[h].start && (d->in[j].op == IR_NOP || dc_handler_at(d, j) >= 0))
            j++;
        if (j == hs[h].start)
            hs[h].start = e->start;
    }
    d->handlers = hs;
    d->nhandlers = nh;
    if (nest_starts(d, ix) < 0) {
        d->handlers = NULL; /* (the lookups are not complete) */
        d->nhandlers = 0;
        return -1;
    }
    return 0;
}

/* (d->handlers is set once the lookups are complete) */
static dc_handler *handler_at(dc *d, int at) {
    int h = d->handlers != NULL && at >= 0 && at < d->n ? d->try_index->handler_at[at] : -1;
    return h >= 0 ? &d->handlers[h] : NULL;
}

/* Is `at` the target of any exception-table entry? */
static int is_exc_target(const dc *d, int at) {
    return d->handlers != NULL && at >= 0 && at < d->n && d->try_index->entry_first[at] >= 0;
}

/* Where the RETURN_VALUEs (kind 0) or RAISEs (kind 1) are, ascending
 * (*count of them): where copies of a function's exit blocks end (tables
 * built on first use, NULL with an error when out of memory). */
static int exit_kind(int op) { return op == IR_RETURN_VALUE ? 0 : op == IR_RAISE ? 1 : -1; }

static uint32_t exit_key(const dc *d, int at) {
    return dc_instr_hash(&d->in[at - 1]) * 31u + dc_instr_hash(&d->in[at]);
}

static int by_key_then_place(const void *a, const void *b) {
    const struct keyed_exit *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

static const int *exits_of(dc *d, int kind, int *count) {
    struct dc_try_index *ix = try_index(d);
    *count = 0;
    if (ix == NULL)
        return NULL;
    if (ix->by_key == NULL) {
        int m[2] = {0, 0};
        for (int i = 0; i < d->n; i++)
            if (exit_kind(d->in[i].op) >= 0)
                m[exit_kind(d->in[i].op)]++;
        if ((ix->ends[0] = dp_alloc_array(d->sh->ar, (size_t)m[0] + 1, sizeof(int))) == NULL ||
            (ix->ends[1] = dp_alloc_array(d->sh->ar, (size_t)m[1] + 1, sizeof(int))) == NULL ||
            (ix->by_key = dp_alloc_array(d->sh->ar, (size_t)(m[0] + m[1]) + 1, sizeof *ix->by_key)) == NULL) {
            dc_fail(d, -1, "out of memory");
            return NULL;
        }
        for (int i = 0; i < d->n; i++) {
            int k = exit_kind(d->in[i].op);
            if (k < 0)
                continue;
            ix->ends[k][ix->nends[k]++] = i;
            if (i > 0)
                ix->by_key[ix->nkeyed++] = (struct keyed_exit){exit_key(d, i), i};
        }
        if (ix->nkeyed > 1)
            qsort(ix->by_key, (size_t)ix->nkeyed, sizeof *ix->by_key, by_key_then_place);
    }
    *count = ix->nends[kind];
    return ix->ends[kind];
}

/* Where the exits by key (exits_of) with that key, at or after instruction
 * from, start; they go on while the key is the same. */
static int keyed_from(const struct dc_try_index *ix, uint32_t key, int from) {
    int lo = 0, hi = ix->nkeyed;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const struct keyed_exit *m = &ix->by_key[mid];
        if (m->key < key || (m->key == key && m->at < from))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* How many of those of a kind come before instruction k. */
static int exits_before(dc *d, int kind, int k) {
    int n;
    const int *ret = exits_of(d, kind, &n);
    return dc_lower_bound(ret, ret != NULL ? n : 0, k);
}

/* Where the try body protected by handler h ends: its table entries, those
 * over code (protects_code), reach that far. */
static int try_body_end(const dc *d, const dc_handler *h) {
    int end = h->end;
    for (int k = d->try_index->entry_first[h->at]; k >= 0; k = d->try_index->entry_next[k]) {
        const dp_exc_entry *e = &d->f.exc[k];
        if (e->end > end && protects_code(d, e))
            end = e->end;
    }
    /* 3.12+ leaves the jump back of a while loop ending the body outside
     * the table (it follows the loop's bottom test): it is the body's too */
    if (end < d->n && d->in[end].op == IR_JUMP && d->in[end].target >= h->start && d->in[end].target < end &&
        dc_handler_at(d, end) != h->at)
        end++;
    return end;
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

int dc_cold_loop_exit(dc *d, int from, int to, int after) {
    if (!d->lay.cold_handlers || find_handlers(d) < 0 || d->handlers == NULL)
        return after;
    for (int h = 0; h < d->nhandlers; h++) {
        int H = d->handlers[h].at, s = d->handlers[h].start;
        int cend = H < to || s < from || s >= to ? -1 : cleanup_end(d, dc_handler_at(d, H));
        for (int j = H; j < cend; j++)
            if (d->in[j].op == IR_JUMP && d->in[j].target > after && d->in[j].target >= cend)
                after = d->in[j].target;
    }
    return after;
}

int dc_cold_back_edge(dc *d, int head, int end) {
    if (!d->lay.cold_handlers || find_handlers(d) < 0 || d->handlers == NULL)
        return -1;
    int last = -1;
    for (int h = 0; h < d->nhandlers; h++) {
        int H = d->handlers[h].at, s = d->handlers[h].start;
        int cend = H < end || s < head || s >= end ? -1 : cleanup_end(d, dc_handler_at(d, H));
        for (int j = H; cend >= 0 && j <= cend && j < d->n; j++)
            if (d->in[j].op == IR_JUMP && d->in[j].target == head && j > last &&
                (!d->seen[j] || dc_is_back_edge(d, j)))
                last = j;
    }
    return last;
}

int dc_in_cold_handler(dc *d, int j, int from, int to) {
    if (!d->lay.cold_handlers || find_handlers(d) < 0 || d->handlers == NULL)
        return 0;
    for (int h = 0; h < d->nhandlers; h++) {
        int H = d->handlers[h].at, s = d->handlers[h].start;
        int cend = s < from || s >= to ? -1 : cleanup_end(d, dc_handler_at(d, H));
        if (j >= H && j < cend)
            return 1;
    }
    return 0;
}

int dc_is_loop_exit(const dc *d, int target) {
    return d->loop != NULL && (target == d->loop->brk || dc_is_loop_head(d, target));
}

int dc_is_loop_head(const dc *d, int target) {
    if (d->loop == NULL)
        return 0;
    /* (3.10 jumps to the NOP of a `while True` line before the head) */
    while (target >= 0 && target < d->loop->head && d->in[target].op == IR_NOP)
        target++;
    return target == d->loop->head;
}

/* Where control continues after a try statement: the target of the jumps
 * that leave its parts, else just past its handler code. */
static int try_after(const dc *d, int from, int to, int fallback) {
    int after = -1;
    for (int j = from; j < to; j++) {
        const dp_instr *x = &d->in[j];
        /* break and continue leave the try too, but they do not end it */
        if (x->op == IR_JUMP && x->target >= to && x->target > after && !dc_is_loop_exit(d, x->target))
            after = x->target;
    }
    return after > 0 ? after : fallback;
}

int dc_except_binding(dc *d, dp_node *h, int at) {
    const dp_instr *bind = &d->in[at];
    if (bind->op == IR_STORE_FAST || bind->op == IR_STORE_NAME || bind->op == IR_STORE_DEREF ||
        bind->op == IR_STORE_GLOBAL)
        h->s = bind->name;
    else if (bind->op != IR_POP_TOP)
        return dc_fail(d, at, "malformed except clause");
    return 0;
}

int dc_except_body(dc *d, dp_node *h, int body, int end, int exit, dc_stack *st, dp_node *prev) {
    const char *saved = d->except_name;
    const dc_names *saved_names = d->except_names;
    dc_names scope = {h->s, d->except_names};
    d->except_name = h->s;
    if (h->s)
        d->except_names = &scope;
    int r = region_with(d, body, end, exit, st, &h->l1, prev, NULL);
    d->except_name = saved;
    d->except_names = saved_names;
    return r;
}

/* Handlers of a try/except, starting at H (PUSH_EXC_INFO); `alone`: see
 * dc_except_star_handlers. */
static int except_handlers(dc *d, dp_node *tr, int H, int clean, int exit, dc_stack *st, int *alone) {
    if (dc_is_except_star(d, H))
        return dc_except_star_handlers(d, tr, H, clean, exit, st, alone);
    dp_node *prev = dc_node(d, X_PREV_EXC), *exc = dc_node(d, X_EXC);
    if (prev == NULL || exc == NULL)
        return -1;
    int p = H + 1;
    while (p < clean) {
        const dp_instr *ins = &d->in[p];
        if (ins->op == IR_RERAISE) {
            dc_mark(d, p);
            return 0; /* no clause matched */
        }
        dp_node *h = dc_stmt(d, S_EXCEPT, p);
        if (h == NULL || dc_add(d, &tr->l2, h) < 0)
            return -1;
        int body, body_end;
        if (ins->op == IR_POP_TOP) {
            dc_mark(d, p);
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
            if (dc_except_binding(d, h, q + 2) < 0)
                return -1;
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
        if (dc_except_body(d, h, body, body_end, exit, st, prev) < 0)
            return -1;
        if (ins->op == IR_POP_TOP)
            return 0; /* a bare except is the last clause */
    }
    return 0;
}

int dc_is_exc_type_op(int op) {
    return op == IR_LOAD_GLOBAL || op == IR_LOAD_NAME || op == IR_LOAD_FAST || op == IR_LOAD_DEREF ||
           op == IR_LOAD_ATTR || op == IR_BUILD_TUPLE || op == IR_LOAD_CONST || op == IR_NOP ||
           op == IR_LOAD_CLASSDEREF || op == IR_CALL || op == IR_PUSH_NULL || op == IR_LOAD_METHOD;
}

void dc_merge_inner_except(dp_node *tr) {
    if (tr->l1.n == 1 && tr->l1.v[0]->kind == S_TRY && tr->l1.v[0]->l4.n == 0 && tr->l1.v[0]->l2.n > 0) {
        dp_node *inner = tr->l1.v[0];
        tr->l1 = inner->l1;
        tr->l2 = inner->l2;
        tr->l3 = inner->l3;
        tr->op = inner->op;
    }
}

/* Is the handler at H a finally block (as opposed to except clauses)?
 * Except clauses start with the test of the first one: an expression (a
 * call too, `except (A, f()):`), then CHECK_EXC_MATCH; a finally body
 * ends its first statement (POP_TOP, a store...) before any such test. */
static int is_finally(dc *d, int H, int clean) {
    if (d->in[H + 1].op == IR_POP_TOP || dc_is_except_star(d, H))
        return 0;
    for (int q = H + 1; q < clean; q++) {
        int op = d->in[q].op;
        if (op == IR_CHECK_EXC_MATCH || op == IR_CHECK_EG_MATCH)
            return 0;
        if (!dc_is_exc_type_op(op))
            return 1;
    }
    return 1;
}

/* The furthest place past the code [*scan, to) jumps to, folded into *far
 * as *scan moves up to `to`: where code from the start of the walk can go
 * but by falling through (break and continue aside).  An else clause that
 * ends where the try statement's clauses join, at `to`, jumps nowhere past
 * it; a jump past `to` means `to` starts a branch inside it instead.
 * Called with ascending `to`, the scan is linear. */
static void furthest_jump(const dc *d, int *scan, int to, int *far) {
    for (; *scan < to; (*scan)++) {
        const dp_instr *x = &d->in[*scan];
        if (dc_is_jump(x->op) && x->target > *far && !dc_is_loop_exit(d, x->target) &&
            !dc_is_loop_head(d, x->target))
            *far = x->target;
    }
}

/* The position of a co_names entry in the code's names, or -1 (ops whose
 * name is a local or a cell). */
static int name_rank(const dc *d, const dp_instr *x) {
    switch (x->op) {
    case IR_LOAD_NAME: case IR_STORE_NAME: case IR_DELETE_NAME: case IR_LOAD_GLOBAL: case IR_STORE_GLOBAL:
    case IR_DELETE_GLOBAL: case IR_LOAD_ATTR: case IR_LOAD_METHOD: case IR_STORE_ATTR: case IR_DELETE_ATTR:
    case IR_IMPORT_NAME: case IR_IMPORT_FROM: case IR_LOAD_SUPER_ATTR:
        for (size_t k = 0; x->name && k < d->code->names.n; k++)
            if (d->code->names.v[k] == x->name)
                return (int)k;
        return -1;
    default:
        return -1;
    }
}

/* The position of a LOAD_CONST's constant in co_consts, or -1.  The first
 * slot, the docstring or None the compiler puts there before any code, and
 * a constant the flow-graph optimizer made (not at its operand's index)
 * tell no order. */
static int const_rank(const dc *d, const dp_instr *x) {
    if (x->op != IR_LOAD_CONST || x->cst == NULL || x->arg <= 0 || (size_t)x->arg >= d->code->nconsts ||
        d->code->consts[x->arg] != x->cst)
        return -1;
    return x->arg;
}

/* compiled_order by one numbering (names or constants): where[r] collects
 * the parts that use entry r. */
static int order_by(dc *d, int stop, int join, int H, int cend, int whole, size_t nn,
                    int (*rank)(const dc *, const dp_instr *)) {
    if (nn == 0 || nn > 4000)
        return 0;
    unsigned char *where = dp_alloc(d->sh->ar, nn);
    if (where == NULL)
        return 0;
    /* (whole: a name used anywhere else too, the code after the region
     * or the cold handlers of other statements, tells nothing) */
    for (int j = 0; j < (whole ? d->n : cend); j++) {
        int r = rank(d, &d->in[j]);
        int k = j >= stop && j < join ? 1 : j >= H && j < cend ? 2 : j < stop || whole ? 0 : -1;
        if (r >= 0 && (size_t)r < nn && k >= 0)
            where[r] |= (unsigned char)(1 << k);
    }
    int rest = -1, handlers = -1;
    for (size_t r = nn; r-- > 0;) {
        if (where[r] == 2)
            rest = (int)r;
        if (where[r] == 4)
            handlers = (int)r;
    }
    if (rest < 0 || handlers < 0)
        return 0;
    return handlers < rest ? -1 : 1;
}

/* 3.12+: where was [stop, join), code between a try body and where its
 * clauses join, compiled: after the handlers [H, cend), as the code after
 * the statement (-1), or before them, as its else clause (1)?  The
 * compiler numbers co_names, and co_consts, in the order it meets them,
 * and it compiles an else clause before the handlers, the code after the
 * statement after them: the names (constants) first used there come after
 * or before those first used in the handlers.  0 when nothing tells, or
 * the two numberings disagree (a clause ending in `return None` and an
 * empty clause at the end of the function compile alike otherwise).  Only
 * for functions of a few thousand instructions: it scans the code before. */
static int compiled_order(dc *d, int stop, int join, int H, int cend, int whole) {
    /* (except* compiles its else clause after the handlers too) */
    if (d->n > 4000 || dc_is_except_star(d, H))
        return 0;
    int by_names = order_by(d, stop, join, H, cend, whole, d->code->names.n, name_rank);
    int by_consts = order_by(d, stop, join, H, cend, whole, d->code->nconsts, const_rank);
    if (by_names != 0 && by_consts != 0 && by_names != by_consts)
        return 0;
    return by_names != 0 ? by_names : by_consts;
}

/* 3.12+ places handlers after the normal flow ("cold" blocks) and ends an
 * except clause either with a backward jump to where the try statement
 * continues or with a copy of that code.  The join of the try at `stop`
 * in the region [?, end) that goes on at `exit`, or -1 when every clause
 * leaves otherwise (return, raise). */
static int cold_join(dc *d, int stop, int H, int cend, int end, int exit) {
    for (int j = H; j < cend; j++) {
        const dp_instr *x = &d->in[j];
        if (x->op == IR_JUMP && (x->target < H || x->target >= cend) && !dc_is_loop_exit(d, x->target))
            return x->target;
    }
    /* copies: each clause ends `POP_EXCEPT [e = None; del e] <copy>`, the copy
     * being the code after the try up to its return or raise (a bare
     * `raise` there re-raises what an enclosing clause handles, as the
     * code after the try does) */
    int join = -1;
    for (int p = H; p < cend; p++) {
        if (d->in[p].op != IR_POP_EXCEPT)
            continue;
        int t = p + 1;
        if (t + 2 < cend && d->in[t].op == IR_LOAD_CONST && d->in[t + 2].op >= IR_DELETE_NAME &&
            d->in[t + 2].op <= IR_DELETE_DEREF)
            t += 3;
        int e = t;
        while (e < cend && d->in[e].op != IR_RETURN_VALUE && !dc_is_jump(d->in[e].op) && d->in[e].op != IR_FOR_ITER &&
               d->in[e].op != IR_RERAISE && d->in[e].op != IR_RAISE)
            e++;
        int kind = e < cend ? exit_kind(d->in[e].op) : -1;
        if (kind < 0 || (e == t && kind == 0))
            continue;
        int len = e + 1 - t;
        /* (a copy ends with the RETURN_VALUE or RAISE the clause's does) */
        int nret, scan = stop, far = -1;
        const int *ret = exits_of(d, kind, &nret);
        if (ret == NULL)
            return -1;
        /* the exits that end as the copy does: those of its last two
         * instructions (by their hash), else every one of its kind (a lone
         * raise) */
        const struct dc_try_index *ix = d->try_index;
        uint32_t key = len >= 2 ? exit_key(d, e) : 0;
        int x = len >= 2 ? keyed_from(ix, key, stop + len - 1) : exits_before(d, kind, stop + len - 1);
        int first_past_end = exits_before(d, kind, end);
        for (;; x++) {
            if (len >= 2 ? x >= ix->nkeyed || ix->by_key[x].key != key : x >= nret)
                break;
            int r = len >= 2 ? ix->by_key[x].at : ret[x];
            if (r >= H)
                break;
            if (exit_kind(d->in[r].op) != kind)
                continue; /* (the hash of another kind's last two) */
            int J = r + 1 - len, same = 1;
            /* (a return of the same value past the enclosing region is
             * some other statement's: the clause's copy is its own; only
             * the first exit of its kind past it may be the copy, when it
             * is `exit`) */
            if (r >= end && (J != exit || first_past_end >= nret || r != ret[first_past_end]))
                break;
            for (int k = 0; k < len && same; k++)
                same = dc_same_instr(&d->in[t + k], &d->in[J + k]);
            if (!same)
                continue;
            /* (nor is a return that the code after the body reaches only
             * inside a branch: `if c: return None` after the try; the scan
             * goes on from where the last same exit left it) */
            if (J > stop)
                furthest_jump(d, &scan, J, &far);
            if (J > stop && far > J)
                continue;
            if (join < 0 && compiled_order(d, stop, J, H, cend, 0) < 0)
                break; /* (the clause's return is its own) */
            if (join < 0 || join == J) {
                join = J;
                dc_set(d, &d->vjump[t], J);
                dc_seen(d, t, e + 1);
                break;
            }
        }
    }
    return join;
}

/* Does the RERAISE at j end the handler block of an inlined comprehension
 * (3.12+), which raises the comprehension's exception, not the finally's? */
static int ends_comprehension_cleanup(const dc *d, int j) {
    int q = j - 1;
    while (q > 0 && d->in[q].op == IR_STORE_FAST)
        q--;
    return q - 2 >= 0 && dc_comprehension_cleanup_end(d, q - 2) == j + 1;
}

/* 3.12+ copies the RERAISE closing a finally body (at `close`) into the
 * branches of the body that fall into it, in [from, to): jumps there again,
 * as in the source, so they read as the ends of the branches and not as
 * `raise`. */
static void unthread_reraises(dc *d, int from, int close, int to) {
    for (int j = from; j < to; j++) {
        const dp_instr *r = &d->in[j];
        if (j != close && r->op == IR_RERAISE && r->arg == d->in[close].arg &&
            dc_handler_at(d, j) == dc_handler_at(d, close) && !ends_comprehension_cleanup(d, j)) {
            dp_instr *x = dc_edit(d, j);
            x->op = IR_JUMP;
            x->arg = 0;
            x->target = close;
            dc_set(d, &d->nref[close], d->nref[close] + 1);
        }
    }
}

/* A try body [i, end) whose handler is at H: its statements are the ones
 * the handler protects (see dc_region).  `left` (or NULL) receives the
 * stack the body leaves. */
static int body_region(dc *d, int H, int i, int end, int exit, dc_stack *st, dp_nodes *out, dc_stack *left) {
    int saved = d->open_try;
    d->open_try = H;
    int r = left == NULL ? region_with(d, i, end, exit, st, out, NULL, NULL)
                         : dc_stack_copy(d, left, st) < 0 ? -1 : dc_region(d, i, end, exit, left, out);
    d->open_try = saved;
    return r;
}

/* A try entered with values on the stack (dc_try's `carried`): its handler
 * at H starts on the first of them only, as many as its table entries say. */
static int carried_handler_stack(dc *d, int H, const dc_stack *st, dc_stack *out) {
    int depth = -1;
    for (int k = d->try_index->entry_first[H]; k >= 0; k = d->try_index->entry_next[k]) {
        if (depth >= 0 && d->f.exc[k].depth != depth)
            return dc_fail(d, H, "handler entered at different stack depths");
        depth = d->f.exc[k].depth;
    }
    if (depth < 0 || depth > st->n)
        return dc_fail(d, H, "handler deeper than the stack at its try");
    out->n = 0;
    for (int k = 0; k < depth; k++)
        if (dc_push(d, out, st->v[k]) < 0)
            return -1;
    return 0;
}

int dc_carry_on(dc *d, int i, int stop, int live, dc_stack *left, dp_nodes *body, dc_stack *st) {
    int last = stop - 1;
    while (last > i && d->in[last].op == IR_NOP)
        last--;
    for (int j = i; j < stop; j++) {
        const dp_instr *x = &d->in[j];
        if ((dc_is_jump(x->op) && (x->target < i || x->target >= stop) && !(j == last && x->op == IR_JUMP)) ||
            x->op == IR_RETURN_VALUE)
            return dc_fail(d, j, "try entered with values on the stack, left by more than one way");
    }
    if (!live && !(last >= i && d->in[last].op == IR_JUMP))
        return 0;
    if (dc_spill_stack(d, left, body, i) < 0)
        return -1;
    return dc_stack_copy(d, st, left);
}

/* The last instruction of the finally body at H, whose cleanup block is at
 * `clean` (the RERAISE closing it, or the end of a body that never
 * completes), or -1.  Before 3.11 it is the last instruction of the
 * handler; 3.11+ places the handlers of tries nested in the body after
 * the body's code (and copies the RERAISE into the ends of their clauses):
 * the last instruction outside them. */
static int finally_last(const dc *d, int H, int clean) {
    int last = clean - 1;
    if (!d->lay.block_stack) {
        last = -1;
        for (int j = H + 1; j < clean;) {
            if (is_handler_start(d, j) && is_exc_target(d, j)) {
                int e = cleanup_end(d, dc_handler_at(d, j));
                if (e <= j || e > clean)
                    return -1;
                j = e;
                continue;
            }
            last = j++;
        }
        if (last >= 0 && d->in[last].op == IR_RERAISE && dc_handler_at(d, last) != clean)
            return -1;
    }
    return last > H ? last : -1;
}

/* 3.11's except* statement (dc_except_star_layout): the body [i, body_end)
 * jumps over the handler at H to its else clause [star_else, after) or to
 * `after`; a loop's head there: the statement ends the loop body. */
static int except_star_311(dc *d, dp_node *tr, int H, int i, int end, int clean, int cend, int body_end,
                           int star_else, int after, dc_stack *st, dp_nodes *out, int *next, int *falls) {
    d->finish_stmt = 1;
    if (body_region(d, H, i, body_end, after, st, &tr->l1, NULL) < 0)
        return -1;
    int j = d->region_stop;
    while (j < H && d->in[j].op == IR_NOP)
        dc_mark(d, j++);
    if (j < H && d->in[j].op == IR_JUMP)
        dc_mark(d, j++);
    if (j != H && d->region_live)
        return dc_fail(d, j, "unexpected code between an except* statement's body and its handler");
    if (star_else >= 0 && region_with(d, star_else, after, after, st, &tr->l3, NULL, NULL) < 0)
        return -1;
    if (except_handlers(d, tr, H, clean, after, st, NULL) < 0)
        return -1;
    dc_set(d, &d->skip_to[H], star_else >= 0 ? after : cend);
    *next = after;
    if (!dc_is_loop_head(d, after))
        return dc_add(d, out, tr);
    /* (no jump back follows the statement in the loop body: said so, or
     * the loop would read as left there) */
    *next = end > cend ? cend : end;
    *falls = 0;
    return dc_add(d, out, tr) < 0 ? -1 : dc_add(d, out, dc_stmt(d, S_CONTINUE, H));
}

/* 3.12+ except* whose handler at H goes on into the only copy of the code
 * after the statement, [alone[0], alone[1]) (a small exit, inlined there):
 * the body never falls through to it; what follows the body, [stop,
 * else_end), is the else clause, which cannot fall through either.  The
 * statement is followed by that code. */
static int star_alone(dc *d, dp_node *tr, int H, int cend, int stop, int else_end, const int *alone, dc_stack *st,
                      dp_nodes *out, int *next, int *falls) {
    if (stop < else_end) {
        if (region_with(d, stop, else_end, -1, st, &tr->l3, NULL, NULL) < 0)
            return -1;
        if (d->region_live)
            return dc_fail(d, d->region_stop, "except* else clause going on to the code only its handler reaches");
    }
    dc_set(d, &d->skip_to[H], cend);
    *next = else_end;
    *falls = 0;
    if (dc_add(d, out, tr) < 0)
        return -1;
    return region_with(d, alone[0], alone[1], -1, st, out, NULL, NULL);
}

/* One try statement as try_stmt reads it: what its parts (the finally form,
 * the except forms of each layout) share. */
typedef struct {
    dc_handler *h;
    dp_node *tr;          /* the statement built */
    int H, clean, cend;   /* its handler, the cleanup handler, the cleanup's end */
    int i, end, exit;     /* try_stmt's start and region */
    int carried;          /* entered with values on the stack (dc_try) */
    dc_stack *st;         /* the stack at the try */
    dc_stack *hst;        /* the stack its handler starts on */
    dc_stack *body_left;  /* where a carried body leaves its values, else NULL */
    dc_stack left, cut;   /* (what body_left and hst point to when carried) */
    dp_nodes *out;
    int *next, *falls;    /* try_stmt's outputs */
} try_parts;

/* The finally bodies dc_take_any_finally_copy looks for, saved on entering
 * a finally body's try to be put back after it: tries nest. */
typedef struct {
    const dp_instr *ops;
    int len, nouter;
} fin_saved;

/* Makes the finally body [H + 1, close) the one whose copies the try body
 * holds; the one before becomes an enclosing one (a return runs every
 * enclosing finally). */
static fin_saved enter_finally(dc *d, int H, int close) {
    fin_saved saved = {d->fin_ops, d->fin_len, d->nfin_outer};
    if (saved.ops && d->nfin_outer < (int)(sizeof d->fin_outer / sizeof d->fin_outer[0])) {
        d->fin_outer[d->nfin_outer].ops = saved.ops;
        d->fin_outer[d->nfin_outer].len = saved.len;
        d->nfin_outer++;
    }
    d->fin_ops = &d->in[H + 1];
    d->fin_len = close - (H + 1);
    return saved;
}

static void leave_finally(dc *d, fin_saved saved) {
    d->fin_ops = saved.ops;
    d->fin_len = saved.len;
    d->nfin_outer = saved.nouter;
}

/* 3.12+ try/finally body: the body, then the finally copy of its normal
 * exit, then the code after the statement (*after); the handler is
 * elsewhere.  `completes`: the finally body ends with the RERAISE closing
 * it (else with a raise or return of its own, as its copies do). */
static int finally_body_312(dc *d, try_parts *t, int completes, int *after) {
    int H = t->H, i = t->i;
    int body_end = try_body_end(d, t->h);
    /* (a carried body ends where its table entries do: it leaves its
     * values on the stack, which no statement end would show) */
    d->finish_stmt = !t->carried;
    d->finish_handler = H;
    d->fin_copy_end = -1;
    int r = body_region(d, H, i, body_end, body_end, t->st, &t->tr->l1, t->body_left);
    int j = d->region_stop, live = d->region_live, taken = d->fin_copy_end;
    if (r >= 0 && t->carried)
        r = dc_carry_on(d, i, j, live, &t->left, &t->tr->l1, t->st);
    while (j < H && d->in[j].op == IR_NOP)
        j++;
    while (taken >= 0 && taken < H && d->in[taken].op == IR_NOP)
        taken++;
    /* (a body that stops at the handler, a `while True:` whose
     * statements are tries, say, cannot fall into it: nothing falls
     * into PUSH_EXC_INFO, its normal exit has no copy to run) */
    int before_h = H > 0 ? d->in[H - 1].op : -1;
    if (j == H && (before_h == IR_RERAISE || before_h == IR_RETURN_VALUE || before_h == IR_RAISE ||
                   before_h == IR_JUMP))
        live = 0;
    *after = d->region_stop;
    int cl = r >= 0 ? dc_take_copy(d, j, H, &d->in[H + 1], d->fin_len) : 0;
    *t->falls = cl > 0 ? completes : live;
    if (r >= 0 && !completes && taken >= 0) {
        /* (a copy before another exit of the body, a return, is that
         * exit's end: not known here) */
        r = dc_fail(d, H, "finally block that never completes copied into the body");
    } else if (cl > 0) {
        *after = j + cl;
    } else if (r >= 0 && live && d->fin_len > 0 && taken != j) {
        /* the body goes on into code that is no copy of the finally
         * body (nor did it just step over one): taking it for the
         * code after the statement would run the finally body twice */
        r = dc_fail(d, j, "finally block left without its copy");
    }
    dc_set(d, &d->skip_to[H], t->cend);
    return r;
}

/* try/finally: the body (with the finally copies in it taken), then the
 * finally clause from the handler's copy [H + 1, close). */
static int try_finally(dc *d, try_parts *t) {
    int H = t->H, clean = t->clean;
    /* the body ends with the RERAISE closing it (close), or 3.12+ with
     * a raise or return of its own: it never completes, nor its copies */
    int last = finally_last(d, H, clean), cold = d->lay.cold_handlers, r;
    int completes = last > H && d->in[last].op == IR_RERAISE;
    if (!completes && !(cold && last > H && (d->in[last].op == IR_RAISE || d->in[last].op == IR_RETURN_VALUE)))
        return dc_fail(d, H, "malformed finally block");
    int close = completes ? last : last + 1; /* (else just past the body) */
    if (completes) {
        dc_mark(d, close);
        unthread_reraises(d, H + 1, close, clean);
    }
    int after;
    fin_saved saved = enter_finally(d, H, close);
    if (cold) {
        r = finally_body_312(d, t, completes, &after);
    } else {
        /* (only here: from 3.12 on the scan would reach over the rest of
         * the function to the cold handler) */
        after = try_after(d, t->i, H, t->cend);
        r = body_region(d, H, t->i, H, after, t->st, &t->tr->l1, t->body_left);
        if (r >= 0 && t->carried)
            r = dc_carry_on(d, t->i, d->region_stop, d->region_live, &t->left, &t->tr->l1, t->st);
    }
    leave_finally(d, saved);
    if (r < 0)
        return -1;
    dp_node *prev = dc_node(d, X_PREV_EXC), *exc = dc_node(d, X_EXC);
    if (prev == NULL || exc == NULL)
        return -1;
    if (region_with(d, H + 1, close, -1, t->hst, &t->tr->l4, prev, exc) < 0)
        return -1;
    if (t->tr->l4.n == 0 && dc_add(d, &t->tr->l4, dc_stmt(d, S_PASS, H)) < 0)
        return -1;
    dc_merge_inner_except(t->tr);
    *t->next = after;
    return dc_add(d, t->out, t->tr);
}

/* 3.12+ try/except where no clause goes on past the statement (each
 * returns, raises, or continues or breaks a loop) and the body falls
 * through: is the rest of the region [stop, rest) its else clause rather
 * than the code after it?  The order of co_names tells (compiled_order);
 * a clause going on inside it means no else. */
static int rest_is_else_clause(dc *d, int H, int cend, int stop, int rest) {
    int into_rest = 0;
    for (int j = H; j < cend && !into_rest; j++)
        into_rest = dc_is_jump(d->in[j].op) && d->in[j].target >= stop && d->in[j].target < rest;
    return !into_rest && compiled_order(d, stop, rest, H, cend, 1) > 0;
}

/* The first PUSH_EXC_INFO in [from, to), else to (by a table built on
 * first use: a scan of the code after each try was quadratic). */
static int first_handler_start(dc *d, int from, int to) {
    struct dc_try_index *ix = try_index(d);
    if (ix == NULL)
        return to;
    if (ix->handler_starts == NULL) {
        int m = 0;
        for (int i = 0; i < d->n; i++)
            m += is_handler_start(d, i);
        if ((ix->handler_starts = dp_alloc_array(d->sh->ar, (size_t)m + 1, sizeof(int))) == NULL) {
            dc_fail(d, -1, "out of memory");
            return to;
        }
        for (int i = 0; i < d->n; i++)
            if (is_handler_start(d, i))
                ix->handler_starts[ix->nhandler_starts++] = i;
    }
    int lo = dc_lower_bound(ix->handler_starts, ix->nhandler_starts, from);
    return lo < ix->nhandler_starts && ix->handler_starts[lo] < to ? ix->handler_starts[lo] : to;
}

/* 3.12+ try/except: handlers are cold blocks; see cold_join. */
static int try_except_312(dc *d, try_parts *t, int body_end) {
    int H = t->H, end = t->end, exit = t->exit;
    dp_node *tr = t->tr;
    d->finish_stmt = 1;
    d->finish_handler = H;
    if (body_region(d, H, t->i, body_end, body_end, t->st, &tr->l1, NULL) < 0)
        return -1;
    int stop = d->region_stop, live = d->region_live, handled = 0;
    int join = cold_join(d, stop, H, t->cend, end, exit), else_exit = join;
    /* (the rest of the region that may be an else clause ends at the
     * first cold handler, which is the code of another statement) */
    int rest = first_handler_start(d, stop, end < H ? end : H), rest_is_else = 0;
    if (join < 0 && dc_is_except_star(d, H)) {
        int alone[2];
        if (except_handlers(d, tr, H, t->clean, join, t->st, alone) < 0)
            return -1;
        if (alone[0] >= 0)
            return star_alone(d, tr, H, t->cend, stop, live ? rest : stop, alone, t->st, t->out, t->next, t->falls);
        handled = 1;
    }
    /* (a clause that leaves for where the enclosing region goes on, a jump
     * back out of an enclosing except clause, skips the code the body
     * falls into, unless that is a copy of where the region goes on: that
     * code is the else clause, not the code after the try, which the
     * clause would run too) */
    int skips_rest = join >= 0 && join <= stop && exit >= 0 && dc_continues_as(d, join, exit) &&
                     !dc_nothing_runs(d, stop, rest) && !dc_continues_as(d, stop, exit);
    int clauses_exit = join;
    if (join <= stop && live && stop < rest && (skips_rest || rest_is_else_clause(d, H, t->cend, stop, rest))) {
        clauses_exit = skips_rest ? join : rest;
        join = rest;
        else_exit = exit >= 0 ? exit : end;
        rest_is_else = 1;
    }
    *t->falls = join > stop || live;
    /* the clauses can join where the enclosing region goes on (an if
     * branch, its else placed before the join): the try ends with it */
    int last = join > end && end >= stop && dc_same_continuation(d, exit, join) ? end : join;
    /* (the else clause ends at the handler at the latest: the join can
     * be cold code placed after it, a loop's jump back) */
    int else_end = last > H ? H : last;
    /* (and short of the enclosing loop's exit, past the end of the region,
     * when other code enters it there (its FOR_ITER) and the clauses join
     * in cold code that jumps back to the loop's head) */
    int brk = d->loop != NULL ? d->loop->brk : -1;
    if (else_end > end && end >= stop && brk >= end && brk < else_end && d->nref[brk] > 0 &&
        dc_cold_tail_jumps_to(d, last, end, d->loop->head))
        else_end = end;
    if (join > stop && region_with(d, stop, else_end, else_exit, t->st, &tr->l3, NULL, NULL) < 0)
        return -1;
    if (rest_is_else)
        *t->falls = d->region_live; /* (the statement falls through as its else does) */
    if (!handled && except_handlers(d, tr, H, t->clean, clauses_exit, t->st, NULL) < 0)
        return -1;
    dc_set(d, &d->skip_to[H], t->cend);
    *t->next = join > stop ? last : stop;
    return dc_add(d, t->out, tr);
}

/* 3.11: a return in the body pops the except block first, so its code (the
 * return's line as a NOP, finally copies, the constant, RETURN_VALUE)
 * follows the table's range [i, body_end); the body's other ways out jump
 * past it, to t.  That code is the rest of the body's last branch, not an
 * else clause, which every way through the body reaches: the body ends at
 * t.  (A copy of the code after the statement, a `return None` with no
 * line of its own, reads better after it: it starts with the constant.) */
static int body_past_table(const dc *d, int i, int body_end, int H) {
    int t = -1;
    for (int j = i; j < body_end; j++) {
        const dp_instr *x = &d->in[j];
        if (dc_is_jump(x->op) && x->target > body_end && x->target < H && x->target > t &&
            !dc_is_loop_exit(d, x->target))
            t = x->target;
    }
    return t > body_end && d->in[body_end].op != IR_LOAD_CONST && dc_unwinds_to_return(d, body_end, t) ? t : body_end;
}

/* try/except before 3.12: the handlers follow the body and its else
 * clause [body's stop, H); the statement ends where their jumps go. */
static int try_except_inline(dc *d, try_parts *t, int body_end) {
    int H = t->H, cend = t->cend, star_else, star_after;
    if (d->lay.star_else_after_handlers &&
        dc_except_star_layout(d, H, t->clean, cend, body_end, &star_else, &star_after))
        return except_star_311(d, t->tr, H, t->i, t->end, t->clean, cend, body_end, star_else, star_after, t->st,
                               t->out, t->next, t->falls);
    body_end = body_past_table(d, t->i, body_end, H);
    int after = try_after(d, body_end, cend, cend);
    for (int j = H; j < cend; j++) {
        const dp_instr *x = &d->in[j];
        if (x->op == IR_JUMP && x->target >= cend && x->target > after && !dc_is_loop_exit(d, x->target))
            after = x->target;
    }
    d->finish_stmt = 1;
    if (body_region(d, H, t->i, body_end, after, t->st, &t->tr->l1, NULL) < 0)
        return -1;
    body_end = d->region_stop;
    /* (past the copied exit that the body's last finally copy no longer
     * reaches: dc_unthread_copy consumed it, it is no else clause) */
    while (!d->region_live && body_end < H && d->seen[body_end] && d->nref[body_end] == 0)
        body_end++;
    if (body_end < H && region_with(d, body_end, H, after, t->st, &t->tr->l3, NULL, NULL) < 0)
        return -1;
    if (except_handlers(d, t->tr, H, t->clean, after, t->st, NULL) < 0)
        return -1;
    *t->next = after;
    return dc_add(d, t->out, t->tr);
}

/* The try statement whose handler is h, starting at i, in the region [?, end)
 * that goes on at `exit`.  *next: where the code after it starts; *falls:
 * 0 when control cannot reach that place from the statement (it returns,
 * raises or jumps away on every path), else 1. */
static int try_stmt(dc *d, dc_handler *h, int i, int end, int exit, dc_stack *st, dp_nodes *out, int *next,
                    int *falls, int carried) {
    *falls = 1;
    try_parts t = {.h = h, .H = h->at, .i = i, .end = end, .exit = exit, .carried = carried, .st = st, .hst = st,
                   .out = out, .next = next, .falls = falls};
    int H = t.H;
    t.clean = H < d->n ? dc_handler_at(d, H) : -1;
    t.cend = cleanup_end(d, t.clean);
    if (t.cend < 0)
        return dc_fail(d, H, "handler without its cleanup block");
    if (dc_open_handler(d, h) < 0)
        return -1;
    dc_mark(d, H);
    dc_seen(d, t.clean, t.cend);
    if ((t.tr = dc_stmt(d, S_TRY, i)) == NULL)
        return -1;
    if (carried) {
        /* (only a try/finally: the stacks its except clauses leave would
         * have to agree with the body's where they join) */
        if (!is_finally(d, H, t.clean))
            return dc_fail(d, i, "try/except entered with values on the stack");
        if (carried_handler_stack(d, H, st, &t.cut) < 0)
            return -1;
        t.hst = &t.cut;
        t.body_left = &t.left;
    }
    if (is_finally(d, H, t.clean))
        return try_finally(d, &t);
    int body_end = try_body_end(d, h);
    if (body_end > H)
        return dc_fail(d, i, "try body overlaps its handler");
    if (d->lay.cold_handlers)
        return try_except_312(d, &t, body_end);
    return try_except_inline(d, &t, body_end);
}

dp_node *dc_with_node(dc *d, dp_node *mgr, int is_async, int at, dp_node **exitfn, dp_node **slot) {
    dp_node *w = dc_stmt(d, S_WITH, at), *item = dc_node(d, E_WITHITEM), *holder = dc_node(d, E_TUPLE);
    *exitfn = dc_node(d, X_WITH_EXIT);
    *slot = dc_node(d, X_SLOT);
    if (w == NULL || item == NULL || *exitfn == NULL || holder == NULL || *slot == NULL ||
        dp_nodes_push(d->sh->ar, &holder->l1, NULL) < 0 || dc_add(d, &w->l1, item) < 0)
        return NULL;
    (*exitfn)->a = mgr;
    (*slot)->a = holder;
    item->a = mgr;
    w->op = is_async;
    return w;
}

/* The JUMPs by ascending target (a counting sort), NULL when out of memory. */
static const int *jumps_by_target(dc *d, int *count) {
    struct dc_try_index *ix = try_index(d);
    *count = 0;
    if (ix == NULL)
        return NULL;
    if (ix->jumps == NULL) {
        int *first = int_array(d, d->n + 2, 0), m = 0; /* first[t]: where jumps to t go */
        for (int j = 0; first != NULL && j < d->n; j++)
            if (d->in[j].op == IR_JUMP && d->in[j].target >= 0) {
                first[d->in[j].target + 1]++;
                m++;
            }
        int *jumps = dp_alloc_array(d->sh->ar, (size_t)m, sizeof *jumps);
        if (first == NULL || jumps == NULL) {
            dc_fail(d, -1, "out of memory");
            return NULL;
        }
        for (int t = 0; t <= d->n; t++)
            first[t + 1] += first[t];
        for (int j = 0; j < d->n; j++)
            if (d->in[j].op == IR_JUMP && d->in[j].target >= 0)
                jumps[first[d->in[j].target]++] = j;
        ix->jumps = jumps;
        ix->njumps = m;
    }
    *count = ix->njumps;
    return ix->jumps;
}

/* The furthest place past `after` that a JUMP in [from, to) goes to, break
 * and continue aside, else `after`.  Walks the code from `from` and the
 * jumps from the furthest target down side by side, and stops with the
 * first walk to end: from 3.12 on a with's handler (`to`) is placed after
 * the rest of the function, past which few jumps go. */
static int furthest_exit(dc *d, int from, int to, int after) {
    int m, scan = after;
    const int *jumps = jumps_by_target(d, &m);
    if (jumps == NULL)
        return after; /* (out of memory: the error is set) */
    for (int j = from, k = m - 1;; j++, k--) {
        if (j >= to)
            return scan;
        if (k < 0 || d->in[jumps[k]].target <= after)
            return after;
        const dp_instr *x = &d->in[j];
        if (x->op == IR_JUMP && x->target > scan && !dc_is_loop_exit(d, x->target))
            scan = x->target;
        int source = jumps[k], target = d->in[source].target;
        if (source >= from && source < to && !dc_is_loop_exit(d, target))
            return target;
    }
}

/* Where the code from a and from b leads: 1 when both run the same
 * instructions to the same end (through jumps and NOPs, as a copy of an
 * exit does), 0 when they surely differ, -1 when this cannot tell. */
static int same_flow(const dc *d, int a, int b) {
    for (int steps = 0; steps < 64; steps++) {
        while (a >= 0 && a < d->n && (d->in[a].op == IR_NOP || d->in[a].op == IR_JUMP) && steps++ < 64)
            a = d->in[a].op == IR_NOP ? a + 1 : d->in[a].target;
        while (b >= 0 && b < d->n && (d->in[b].op == IR_NOP || d->in[b].op == IR_JUMP) && steps++ < 64)
            b = d->in[b].op == IR_NOP ? b + 1 : d->in[b].target;
        if (a == b)
            return 1;
        if (a < 0 || b < 0 || a >= d->n || b >= d->n || d->in[a].op == IR_JUMP || d->in[b].op == IR_JUMP)
            return -1;
        if (!dc_same_instr(&d->in[a], &d->in[b]))
            return 0;
        int op = d->in[a].op;
        if (op == IR_RETURN_VALUE || op == IR_RAISE || op == IR_RERAISE)
            return dc_handler_at(d, a) == dc_handler_at(d, b) ? 1 : -1;
        if (dc_is_jump(op) || op == IR_FOR_ITER)
            return -1;
        a++;
        b++;
    }
    return -1;
}

/* The end of the exit that goes on from p (before h): straight-line code up
 * to its RETURN_VALUE, RAISE or JUMP that nothing else jumps into, or -1. */
static int exit_end(const dc *d, int p, int h) {
    for (int j = p; j < h && j < p + 16; j++) {
        int op = d->in[j].op;
        if (j > p && d->nref[j] > 0)
            return -1;
        if (op == IR_RETURN_VALUE || op == IR_RAISE || op == IR_JUMP)
            return j + 1;
        if (dc_is_jump(op) || op == IR_FOR_ITER || op == IR_RERAISE || op == IR_PUSH_EXC_INFO)
            return -1;
    }
    return -1;
}

/* Where a suppressed exception goes on after __exit__ (`on`, or where its
 * JUMP goes: 3.12+): when that is a copy, reached from nowhere else, of the
 * code the body's exit goes on with at `stop` (nested withs returning a
 * constant: the enclosing with's __exit__ and the return, copied as exits
 * are), the copy is stepped over: that code is read once, at stop. */
static void skip_exit_copy(dc *d, int stop, int on) {
    if (on < 0 || on >= d->n)
        return;
    int via_jump = d->in[on].op == IR_JUMP, start = via_jump ? d->in[on].target : on;
    if (start < 0 || start >= d->n || d->nref[start] != via_jump || same_flow(d, stop, on) != 1)
        return;
    int a = stop; /* (not the code the exit itself goes on with) */
    for (int steps = 0; steps < 64 && a >= 0 && a < d->n && a != start; steps++)
        if (d->in[a].op == IR_NOP)
            a++;
        else if (d->in[a].op == IR_JUMP)
            a = d->in[a].target;
        else
            break;
    int ce = a == start ? -1 : exit_end(d, start, d->n);
    if (ce > start) {
        dc_seen(d, start, ce);
        dc_set(d, &d->skip_to[start], ce);
    }
}

/* with mgr as target: BEFORE_WITH at i, the handler protecting i + 1, in
 * the region [?, end).  1 when the statement never falls through (a
 * `continue` follows it), 0 when it may, -1 on error. */
int dc_with(dc *d, int i, int end, dc_stack *st, dp_nodes *out, int *next) {
    if (d->lay.block_stack)
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
        int c = dc_handler_at(d, j);
        dc_handler *ch = handler_at(d, c);
        if (ch && !ch->opened && c + 1 < d->n && d->in[c + 1].op == IR_WITH_EXCEPT_START)
            H = c;
    }
    dc_handler *h = handler_at(d, H);
    /* after WITH_EXCEPT_START (and the await of __aexit__: 3.12 adds
     * CLEANUP_THROW and END_SEND to its SEND loop) */
    int test = H + 2;
    while (is_async && test < d->n && d->in[test].op != IR_POP_JUMP_IF_TRUE && test < H + 16)
        test++;
    if (h == NULL || test >= d->n || d->in[H + 1].op != IR_WITH_EXCEPT_START || d->in[test].op != IR_POP_JUMP_IF_TRUE)
        return dc_fail(d, i, "with statement without its exit handler");
    if (dc_open_handler(d, h) < 0)
        return -1;
    int L = d->in[test].target;
    if (L < 0 || L + 4 >= d->n) /* (a suppressed exception goes on at L + 4: code follows) */
        return dc_fail(d, H, "truncated with handler");
    int after = furthest_exit(d, body, H, L + 4);
    dp_node *exitfn, *slot, *w = dc_with_node(d, mgr, is_async, i, &exitfn, &slot);
    if (w == NULL)
        return -1;
    d->stop_node = exitfn;
    /* (3.12+ places the handler after the rest of the function: a body
     * that never falls through to __exit__ must not run on past the
     * enclosing region, into the code after a loop) */
    int body_end = H > end && end > body ? end : H;
    if (region_with(d, body, body_end, after, st, &w->l2, exitfn, slot) < 0)
        return -1;
    w->l1.v[0]->b = slot->a->l1.v[0];
    int body_live = d->region_live, stop = d->region_stop;
    int cl = dc_handler_at(d, H), clend = cleanup_end(d, cl); /* (3.12+: the cold handler's cleanup) */
    dc_set(d, &d->skip_to[H], L + 4);
    dc_seen(d, H, L + 4);
    dc_seen(d, i, body); /* BEFORE_WITH and the await of __aenter__ */
    *next = stop;
    if (body_live && stop < H && same_flow(d, stop, L + 4) == 0) {
        /* after __exit__ the body goes elsewhere than where a suppressed
         * exception goes on: the rest of its last statement (`return c`,
         * break, continue: the unwinding calls __exit__ before), which
         * is no code after the with */
        int e = exit_end(d, stop, H);
        if (e < 0)
            return dc_fail(d, stop, "with block left for another place than after it");
        dp_nodes rest = {0};
        /* (on a copy of the stack: the unwinding of a return pops the
         * __exit__ of enclosing withs, which a suppressed exception's way
         * on still has) */
        if (region_with(d, stop, e, after, st, &rest, NULL, NULL) < 0)
            return -1;
        if (d->region_live)
            return dc_fail(d, stop, "with block left for another place than after it");
        for (int k = 0; k < rest.n; k++)
            if (dc_add(d, &w->l2, rest.v[k]) < 0)
                return -1;
        /* (3.12+: a suppressed exception goes on in the cold handler;
         * where it jumps back to must be the code after this exit) */
        int back = d->in[L + 4].op == IR_JUMP ? d->in[L + 4].target : -1;
        while (back >= 0 && back < e && d->in[back].op == IR_NOP)
            back++;
        /* (a with ending a loop body: the loop's end follows the exit (past
         * the POP_TOPs of a dead END_FOR), and the code after the with is
         * the jump back to the loop's head) */
        int k = e;
        while (d->loop != NULL && k < d->loop->brk && d->in[k].op == IR_POP_TOP && d->nref[k] == 0)
            k++;
        int loop_end = d->loop != NULL && dc_is_loop_head(d, back) && k == d->loop->brk;
        /* (or the code right after this with's cold handler, which the
         * walk steps over from e: the rest of an enclosing with's body) */
        int past_handler = e == H && cl > L && back == clend;
        if (d->lay.cold_handlers && back >= 0 && back != e && !loop_end && !past_handler)
            return dc_fail(d, L + 4, "with block left for another place than after it");
        *next = e;
        body_live = 0;
    } else if (body_live && stop < H) {
        skip_exit_copy(d, stop, L + 4);
    }
    if (cl > L && clend > 0 && !body_live && d->in[L + 4].op == IR_JUMP && dc_is_loop_head(d, d->in[L + 4].target)) {
        /* 3.12+, a body that never completes, in a loop: an exception that
         * __exit__ suppresses goes on at the loop's head (the with ends the
         * loop body); said so, or the loop would read as left there */
        dc_seen(d, L + 4, clend);
        dc_set(d, &d->skip_to[H], clend);
        if (dc_add(d, out, w) < 0 || dc_add(d, out, dc_stmt(d, S_CONTINUE, L + 4)) < 0)
            return -1;
        return 1;
    }
    if (cl > L && clend > 0) {
        if (!body_live && after == L + 4 && d->in[L + 4].op != IR_JUMP) {
            /* 3.12+, a body that never completes: the code after the with
             * runs only when __exit__ suppresses an exception, so its only
             * copy is in the cold handler: it goes on there */
            dc_set(d, &d->skip_to[cl], clend);
            dc_seen(d, cl, clend);
            /* (when the with ends its region and that region goes on
             * otherwise, as the then-part of an if goes on into its
             * else, the copy is this with's own way on: it follows the
             * with, which never falls through) */
            int e = *next >= end ? dc_return_tail_end(d, L + 4) : -1;
            if (e >= 0 && !dc_continues_as(d, L + 4, end)) {
                if (dc_add(d, out, w) < 0 || dc_region(d, L + 4, e + 1, -1, st, out) < 0)
                    return -1;
                return 1;
            }
            if (e >= 0) { /* (a copy of the code the region goes on with: the with goes on there) */
                dc_seen(d, L + 4, e + 1);
                dc_set(d, &d->skip_to[L + 4], e + 1);
                return dc_add(d, out, w);
            }
            *next = L + 4;
            return dc_add(d, out, w);
        }
        /* 3.12+: the handler is cold: after it, a jump back to the code
         * after the with or a copy of that code, then its cleanup block */
        dc_seen(d, L + 4, clend);
        dc_set(d, &d->skip_to[H], clend);
    }
    return dc_add(d, out, w);
}

int dc_try(dc *d, int i, int end, int exit, dc_stack *st, dp_nodes *out, int *next, int carried) {
    if (find_handlers(d) < 0)
        return -1;
    if (d->handlers == NULL || i < 0 || i >= d->n)
        return 0;
    dc_handler *best = NULL;
    for (int h = d->try_index->start_first[i]; h >= 0; h = d->try_index->start_next[h]) {
        dc_handler *c = &d->handlers[h];
        /* before 3.12 a try's handler follows its body within the region;
         * from 3.12 on handlers are cold blocks placed after the function */
        int in_region = c->at < end || d->lay.cold_handlers;
        if (!c->opened && in_region && (best == NULL || c->at > best->at))
            best = c;
    }
    if (best == NULL)
        return 0;
    if (carried && dc_spill_stack(d, st, out, i) < 0)
        return -1;
    int falls, r = try_stmt(d, best, i, end, exit, st, out, next, &falls, carried);
    d->region_live = falls;
    return r < 0 ? -1 : 1;
}
