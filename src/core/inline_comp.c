/* 3.12+ inlined comprehensions (PEP 709).  A list/set/dict comprehension
 * is compiled into the enclosing code instead of a nested code object:
 *
 *     <iterable> GET_ITER
 *     LOAD_FAST_AND_CLEAR v1 .. vk    save every name the comprehension binds
 *     SWAP k+1; BUILD_LIST 0; SWAP 2  the accumulator goes below the iterator
 *     L: FOR_ITER E ... LIST_APPEND n ... JUMP L
 *     E: SWAP k+1; STORE_FAST vk .. v1  restore the saved names
 *
 * and an exception-table entry sends any exception through a cleanup block
 * (`SWAP 2; POP_TOP; SWAP k+1; STORE_FAST ..; RERAISE 0`) that restores the
 * names too.  None of the saving and restoring is source: this file rebuilds
 * the comprehension expression and makes the walker step over the rest
 * (d->skip_to).  The loop itself is structured by dc_region like any for
 * loop; its LIST_APPEND/SET_ADD/MAP_ADD become `acc.append(v)` /
 * `acc.add(v)` / `acc[k] = v` statements on a placeholder accumulator,
 * recognized here by identity.  Turning a loop nest into clauses is shared
 * with comprehensions compiled as code objects (dc_comp_clauses). */
#include <string.h>

#include "dc.h"

enum {
    MAX_SAVED = 64,     /* names one comprehension saves (nested ones included) */
    OTHERS = 4,         /* values below the comprehension the restore may touch */
    MODEL = MAX_SAVED + OTHERS + 2,
    TAG_RESULT = -1,    /* the accumulator, then the finished value */
    TAG_ITER = -2,
    TAG_OTHER = -3      /* TAG_OTHER - d: the value d + 1 slots below the iterator */
};

/* The stack around a comprehension as tags, bottom first: saved names are
 * their index in `saved`, the rest are TAG_* values. */
typedef struct model {
    int v[MODEL];
    int n;
} model;

typedef struct shape {
    int kind;                      /* E_LISTCOMP, E_SETCOMP or E_DICTCOMP */
    int build;                     /* the BUILD_* of the accumulator */
    int loop;                      /* FOR_ITER, or GET_ANEXT of an async comprehension */
    int end;                       /* first instruction after the loop */
    const char *saved[MAX_SAVED];  /* names saved by LOAD_FAST_AND_CLEAR */
    int nsaved;
    model at_end;                  /* the real stack when the loop is done */
    int handler;                   /* the cleanup block, -1 if none */
    int handler_end;
} shape;

static int swap(model *m, int k) {
    if (k < 2 || k > m->n)
        return -1;
    int t = m->v[m->n - 1];
    m->v[m->n - 1] = m->v[m->n - k];
    m->v[m->n - k] = t;
    return 0;
}

static int push(model *m, int tag) {
    if (m->n >= MODEL)
        return -1;
    m->v[m->n++] = tag;
    return 0;
}

/* The stack seen by the walker, which never holds the saved names. */
static model without_saved(const model *m) {
    model w = {{0}, 0};
    for (int k = 0; k < m->n; k++)
        if (m->v[k] < 0)
            w.v[w.n++] = m->v[k];
    return w;
}

static int build_kind(const dp_instr *x) {
    if (x->arg != 0)
        return -1;
    return x->op == IR_BUILD_LIST ? E_LISTCOMP : x->op == IR_BUILD_SET ? E_SETCOMP
         : x->op == IR_BUILD_MAP ? E_DICTCOMP : -1;
}

/* From i to the loop: saves, the empty accumulator, the shuffles.  Returns 1
 * when they have the compiler's shape (s->loop, kind, saved filled). */
static int parse_prologue(const dc *d, int i, shape *s, model *m) {
    m->n = 0;
    for (int k = OTHERS; k > 0; k--)
        push(m, TAG_OTHER - (k - 1));
    push(m, TAG_ITER);
    s->kind = s->build = -1;
    s->nsaved = 0;
    int j = i;
    for (; j < d->n; j++) {
        const dp_instr *x = &d->in[j];
        if (x->op == IR_LOAD_FAST_AND_CLEAR && s->kind < 0) {
            if (s->nsaved == MAX_SAVED || push(m, s->nsaved) < 0)
                return 0;
            s->saved[s->nsaved++] = x->name;
        } else if (x->op == IR_SWAP) {
            if (swap(m, x->arg) < 0)
                return 0;
        } else if (x->op == IR_NOP) { /* MAKE_CELL of a saved cell variable */
            continue;
        } else if (s->kind < 0 && build_kind(x) >= 0) {
            s->kind = build_kind(x);
            s->build = j;
            if (push(m, TAG_RESULT) < 0)
                return 0;
        } else {
            break;
        }
    }
    if (s->kind < 0 || j >= d->n || (d->in[j].op != IR_FOR_ITER && d->in[j].op != IR_GET_ANEXT))
        return 0;
    /* at the loop: the iterator on top, the accumulator under it, and the
     * values below the comprehension where they were */
    model w = without_saved(m);
    if (w.n != OTHERS + 2 || w.v[w.n - 1] != TAG_ITER || w.v[w.n - 2] != TAG_RESULT)
        return 0;
    for (int k = 0; k < OTHERS; k++)
        if (w.v[k] != TAG_OTHER - (OTHERS - 1 - k))
            return 0;
    s->loop = j;
    return 1;
}

/* Where the loop ends: FOR_ITER's exit, or past the END_ASYNC_FOR that
 * handles an async iterator's StopAsyncIteration. */
static int loop_end(const dc *d, int loop) {
    const dp_instr *x = &d->in[loop];
    if (x->op == IR_FOR_ITER)
        return x->target > loop && x->target <= d->n ? x->target : -1;
    int h = dc_handler_at(d, loop);
    return h > loop && h < d->n && d->in[h].op == IR_END_ASYNC_FOR ? h + 1 : -1;
}

/* Runs the restore after the loop on the tag model: every saved name goes
 * back with STORE_FAST (the compiler's static swaps may have moved the store
 * of the result, or a POP_TOP, in between; a jump may lead over a cleanup
 * block placed right after the loop).  Fills `skip` with the instructions
 * the walker must step over (and `to` with where each skip lands) and
 * returns their count; -1 when the code is not a restore we can account
 * for.  *resume: where the walker goes on, past the restore unless it must
 * execute some of it.  `kept_ok`: may the walker execute stores among the
 * restores (not when other values of the statement are on the stack: it
 * would pair stores with the wrong values). */
static int parse_restore(const dc *d, shape *s, int kept_ok, int *skip, int *to, int cap, int *resume) {
    model real = s->at_end, walker = without_saved(&s->at_end);
    int left = s->nsaved, nskip = 0, kept = 0, j = s->end;
    for (; left > 0; j++) {
        if (j >= d->n || nskip == cap)
            return -1;
        const dp_instr *x = &d->in[j];
        if (x->op == IR_NOP)
            continue;
        if (x->op == IR_JUMP && x->target > j && x->target < d->n && d->nref[x->target] == 1) {
            skip[nskip] = j;
            to[nskip++] = x->target;
            j = x->target - 1;
            continue;
        }
        if (x->op == IR_SWAP) {
            if (swap(&real, x->arg) < 0)
                return -1;
            skip[nskip] = j;
            to[nskip++] = j + 1;
            continue;
        }
        if ((x->op != IR_STORE_FAST && x->op != IR_POP_TOP) || real.n == 0)
            return -1;
        int t = real.v[--real.n];
        if (t >= 0) {
            if (x->op != IR_STORE_FAST || strcmp(x->name, s->saved[t]) != 0)
                return -1;
            skip[nskip] = j;
            to[nskip++] = j + 1;
            left--;
            continue;
        }
        /* a store the walker executes: it must take the same value there */
        if (!kept_ok || walker.n == 0 || walker.v[--walker.n] != t)
            return -1;
        kept = 1;
    }
    if (real.n != walker.n || memcmp(real.v, walker.v, (size_t)real.n * sizeof *real.v) != 0)
        return -1;
    *resume = kept ? s->end : j;
    return nskip;
}

static int is_saved(const shape *s, const char *name) {
    for (int k = 0; k < s->nsaved; k++)
        if (strcmp(s->saved[k], name) == 0)
            return 1;
    return 0;
}

/* The end of the cleanup block at h, or -1 if there is none: `SWAP 2;
 * POP_TOP` (drop the accumulator), shuffles and stores of the saved names,
 * `RERAISE`.  No other handler starts with a SWAP. */
static int cleanup_end(const dc *d, int h) {
    if (h < 0 || h + 2 >= d->n || d->in[h].op != IR_SWAP || d->in[h].arg != 2 || d->in[h + 1].op != IR_POP_TOP)
        return -1;
    for (int j = h + 2; j < d->n && j < h + 2 + 2 * MAX_SAVED + 4; j++) {
        int op = d->in[j].op;
        if (op == IR_RERAISE)
            return j + 1;
        if (op != IR_STORE_FAST && op != IR_SWAP && op != IR_NOP)
            return -1;
    }
    return -1;
}

void dc_inline_comp_cleanups(dc *d) {
    if (!d->lay.inline_comprehensions)
        return;
    for (int k = 0; k < d->f.nexc; k++) {
        int t = d->f.exc[k].target, end = cleanup_end(d, t);
        if (end > t)
            dc_set(d, &d->skip_to[t], end);
    }
}

/* The cleanup block protecting the comprehension from its accumulator on:
 * it restores exactly the saved names. */
static int parse_handler(const dc *d, shape *s) {
    s->handler = s->handler_end = -1;
    if (s->nsaved == 0)
        return 1; /* nothing to restore: no cleanup block */
    int h = dc_handler_at(d, s->build), end = cleanup_end(d, h);
    if (end < 0)
        return 0;
    int stores = 0;
    for (int j = h + 2; j < end; j++)
        if (d->in[j].op == IR_STORE_FAST) {
            if (!is_saved(s, d->in[j].name))
                return 0;
            stores++;
        }
    s->handler = h;
    s->handler_end = end;
    return stores == s->nsaved;
}

/* ---- from the structured loop nest to clauses ----
 * Shared with comprehensions compiled as code objects (decompile.c): there
 * the element is an X_APPEND statement or a generator's `yield`, and the
 * outermost loop iterates the code's `.0` argument. */

typedef struct nest {
    dp_node *comp;
    dp_node *acc;        /* the inlined accumulator, or NULL */
    dp_node *outer_iter; /* stands for `.0`, or NULL */
} nest;

/* Is `st` the statement that adds the element?  Fills it (key and value
 * for a dict). */
static int element_stmt(const nest *n, const dp_node *st, dp_node **key, dp_node **value) {
    int kind = n->comp->kind;
    if (st->kind == X_APPEND && kind != E_GENEXP) {
        *key = st->a;
        *value = kind == E_DICTCOMP ? st->b : st->a;
        return *value != NULL;
    }
    if (st->kind != S_EXPR && st->kind != S_ASSIGN)
        return 0;
    if (kind == E_GENEXP && st->kind == S_EXPR && st->a->kind == E_YIELD) {
        *value = st->a->a;
        return 1;
    }
    if (n->acc == NULL)
        return 0;
    if ((kind == E_LISTCOMP || kind == E_SETCOMP) && st->kind == S_EXPR && st->a->kind == E_CALL) {
        const dp_node *call = st->a, *meth = call->a;
        const char *want = kind == E_LISTCOMP ? "append" : "add";
        if (meth->kind == E_ATTR && meth->a == n->acc && strcmp(meth->s, want) == 0 && call->l1.n == 1 &&
            call->l2.n == 0) {
            *value = call->l1.v[0];
            return 1;
        }
    }
    if (kind == E_DICTCOMP && st->kind == S_ASSIGN && st->l1.n == 1 && st->l1.v[0]->kind == E_SUBSCR &&
        st->l1.v[0]->a == n->acc) {
        *key = st->l1.v[0]->b;
        *value = st->b;
        return 1;
    }
    return 0;
}

/* An element of the comprehension as a source expression (`yield` of
 * None leaves NULL). */
static dp_node *element_expr(dc *d, dp_node *e, int at) {
    if (e == NULL)
        return dc_none(d);
    if (e->kind == X_FUNC) /* 3.13 keeps lambdas as functions until stored */
        return dc_lambda(d, e, at);
    if (e->kind >= DP_NODE_KIND_COUNT) {
        dc_fail(d, at, "comprehension element has no source form");
        return NULL;
    }
    return e;
}

/* ---- filters ----
 * A filter `if c` jumps back to the loop head when c is false, so the body
 * reads as guards, `if not c: continue`, in front of the rest; a filter
 * with a conditional expression or `or` gives nested ifs whose branches
 * continue or fall through.  A guard statement becomes the condition under
 * which it falls through: G_TRUE (always), G_FALSE (never) or an expression. */
enum { G_TRUE, G_FALSE, G_EXPR };

/* `not e`, pushed through and/or (De Morgan) so that it reads as written. */
static dp_node *negate(dc *d, dp_node *e, int depth) {
    if (e == NULL || e->kind != E_BOOLOP || depth > DP_MAX_NESTING)
        return dc_not(d, e);
    dp_node *n = dc_node(d, E_BOOLOP);
    if (n == NULL)
        return NULL;
    n->op = !e->op;
    for (int k = 0; k < e->l1.n; k++)
        if (dc_add(d, &n->l1, negate(d, e->l1.v[k], depth + 1)) < 0)
            return NULL;
    return n;
}

static int guards(dc *d, const dp_nodes *l, int from, int to, dp_node **e, int depth);

/* if c: A else: B, as a guard. */
static int guard_if(dc *d, dp_node *s, dp_node **e, int depth) {
    dp_node *a = NULL, *b = NULL, *c = s->a;
    int ka = guards(d, &s->l1, 0, s->l1.n, &a, depth + 1);
    int kb = ka < 0 ? -1 : guards(d, &s->l2, 0, s->l2.n, &b, depth + 1);
    if (kb < 0 || (ka == kb && ka != G_EXPR)) /* no choice to make: not a filter */
        return -1;
    if (ka == G_FALSE)
        *e = kb == G_TRUE ? negate(d, c, 0) : dc_boolop(d, 0, negate(d, c, 0), b);
    else if (kb == G_FALSE)
        *e = ka == G_TRUE ? c : dc_boolop(d, 0, c, a);
    else if (ka == G_TRUE)
        *e = dc_boolop(d, 1, c, b);
    else if (kb == G_TRUE)
        *e = dc_boolop(d, 1, negate(d, c, 0), a);
    else if ((*e = dc_node(d, E_IFEXP)) != NULL) {
        (*e)->a = c;
        (*e)->b = a;
        (*e)->c = b;
    }
    return *e ? G_EXPR : -2;
}

/* The guards l[from, to): G_TRUE, G_FALSE or G_EXPR (*e set); -1 when they
 * are not all guards, -2 on error. */
static int guards(dc *d, const dp_nodes *l, int from, int to, dp_node **e, int depth) {
    if (depth > DP_MAX_NESTING)
        return -1;
    int kind = G_TRUE;
    *e = NULL;
    for (int k = from; k < to; k++) {
        dp_node *s = l->v[k], *part = NULL;
        if (kind == G_FALSE)
            return -1; /* code after `continue` */
        if (s->kind == S_CONTINUE) {
            kind = G_FALSE;
            continue;
        }
        if (s->kind != S_IF)
            return -1;
        int r = guard_if(d, s, &part, depth);
        if (r < 0)
            return r;
        *e = kind == G_TRUE ? part : dc_boolop(d, 0, *e, part);
        if (*e == NULL)
            return -2;
        kind = G_EXPR;
    }
    return kind;
}

static int clauses(dc *d, const nest *n, dp_nodes *body, int at, int depth);

static int is_dot0(const dp_node *e) { return e->kind == E_NAME && strcmp(e->s, ".0") == 0; }

/* A for loop of the nest: one more `for` clause, then its body. */
static int loop_clause(dc *d, const nest *n, dp_node *loop, int at, int depth) {
    dp_node *cl = dc_node(d, E_COMPREHENSION);
    if (cl == NULL || dc_add(d, &n->comp->l1, cl) < 0)
        return -1;
    cl->a = loop->a;
    cl->b = n->outer_iter && is_dot0(loop->b) ? n->outer_iter : loop->b;
    cl->op = loop->op;
    if (loop->l2.n)
        return dc_fail(d, at, "for-else in a comprehension");
    return clauses(d, n, &loop->l1, at, depth + 1);
}

/* Turns one loop level's statements into clauses and the element. */
static int clauses(dc *d, const nest *n, dp_nodes *body, int at, int depth) {
    if (depth > DP_MAX_NESTING)
        return dc_fail(d, at, "comprehension nested too deeply");
    if (body->n == 0 || n->comp->l1.n == 0)
        return dc_fail(d, at, "unexpected statements in a comprehension");
    dp_node *cl = n->comp->l1.v[n->comp->l1.n - 1], *filter = NULL;
    int g = guards(d, body, 0, body->n - 1, &filter, 0);
    if (g == -2)
        return -1;
    if (g == -1 || g == G_FALSE)
        return dc_fail(d, at, "unexpected statements in a comprehension");
    if (g == G_EXPR && dc_add(d, &cl->l1, filter) < 0)
        return -1;
    dp_node *s = body->v[body->n - 1], *key = NULL, *value = NULL;
    if (s->kind == S_FOR)
        return loop_clause(d, n, s, at, depth);
    if (s->kind == S_IF && s->l2.n == 0) {
        if (dc_add(d, &cl->l1, s->a) < 0)
            return -1;
        return clauses(d, n, &s->l1, at, depth + 1);
    }
    if (element_stmt(n, s, &key, &value)) {
        dp_node *comp = n->comp;
        if ((comp->a = element_expr(d, comp->kind == E_DICTCOMP ? key : value, at)) == NULL)
            return -1;
        if (comp->kind == E_DICTCOMP && (comp->b = element_expr(d, value, at)) == NULL)
            return -1;
        return 0;
    }
    return dc_fail(d, at, "unexpected statement in a comprehension");
}

int dc_comp_clauses(dc *d, const dp_nodes *stmts, dp_node *comp, dp_node *acc, dp_node *outer_iter) {
    /* the loop; besides it, a code object's `return acc` and the
     * declarations of the names a walrus binds in the enclosing scope */
    dp_node *loop = NULL;
    for (int k = 0; k < stmts->n; k++) {
        dp_node *s = stmts->v[k];
        if (s->kind == S_FOR && loop == NULL)
            loop = s;
        else if (s->kind != S_RETURN && s->kind != S_NONLOCAL && s->kind != S_GLOBAL)
            return dc_fail(d, -1, "unexpected statements around a comprehension");
    }
    if (loop == NULL)
        return dc_fail(d, -1, "comprehension without its loop");
    nest n = {comp, acc, outer_iter};
    return loop_clause(d, &n, loop, -1, 0);
}

/* Structures the loop [s->loop, s->end) with the accumulator and `iter` as
 * its whole stack, and builds the comprehension from it. */
static dp_node *build(dc *d, const shape *s, dp_node *iter) {
    int at = s->loop;
    dp_node *acc = dc_name(d, "<inlined comprehension>"), *comp = dc_node(d, s->kind);
    if (acc == NULL || comp == NULL)
        return NULL;
    dc_stack body_st = {0};
    if (dc_push(d, &body_st, acc) < 0 || dc_push(d, &body_st, iter) < 0)
        return NULL;
    /* the loop body is no part of the statement around it: no pending
     * chained assignment, no finally copies (a comprehension cannot exit) */
    dp_node *chain = d->pending_chain;
    const dp_instr *fin_ops = d->fin_ops;
    int fin_len = d->fin_len;
    d->pending_chain = NULL;
    d->fin_ops = NULL;
    d->fin_len = 0;
    dp_nodes stmts = {0};
    int r = dc_region(d, s->loop, s->end, s->end, &body_st, &stmts);
    d->pending_chain = chain;
    d->fin_ops = fin_ops;
    d->fin_len = fin_len;
    if (r < 0)
        return NULL;
    if (body_st.n != 1 || body_st.v[0] != acc || stmts.n != 1) {
        dc_fail(d, at, "inlined comprehension is not one loop");
        return NULL;
    }
    if (dc_comp_clauses(d, &stmts, comp, acc, NULL) < 0)
        return NULL;
    return comp;
}

int dc_inline_comprehension(dc *d, int i, dc_stack *st, dp_nodes *out, int *next) {
    (void)out; /* the comprehension is a value: it adds no statement */
    const dp_instr *x = &d->in[i];
    if (st->n == 0 || st->v[st->n - 1]->kind != X_ITER)
        return 0;
    if (x->op != IR_LOAD_FAST_AND_CLEAR &&
        !(build_kind(x) >= 0 && i + 1 < d->n && d->in[i + 1].op == IR_SWAP && d->in[i + 1].arg == 2))
        return 0;
    shape s;
    model m;
    if (!parse_prologue(d, i, &s, &m) || (s.end = loop_end(d, s.loop)) < 0)
        return 0;
    /* when the loop is done the iterator is gone and the result is on top */
    s.at_end = m;
    s.at_end.n--;
    int skip[2 * MAX_SAVED + 8], to[2 * MAX_SAVED + 8];
    int alone = st->n - 1 <= d->base; /* nothing else of the statement on the stack */
    int resume = s.end;
    int nskip = parse_restore(d, &s, alone, skip, to, (int)(sizeof skip / sizeof *skip), &resume);
    if (nskip < 0 || !parse_handler(d, &s))
        return 0;
    dp_node *comp = build(d, &s, st->v[st->n - 1]);
    if (comp == NULL)
        return -1;
    st->v[st->n - 1] = comp;
    dc_seen(d, i, s.loop);
    for (int k = 0; k < nskip; k++) {
        dc_mark(d, skip[k]);
        dc_set(d, &d->skip_to[skip[k]], to[k]);
    }
    if (s.handler >= 0) {
        dc_seen(d, s.handler, s.handler_end);
        dc_set(d, &d->skip_to[s.handler], s.handler_end);
    }
    *next = resume;
    return 1;
}
