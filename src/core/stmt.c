/* Statements: the walk over a region of IR (dc_region) and its simple
 * statements, stores and the temporaries for values kept on the stack,
 * jumps that are break/continue.  Conditions are in cond.c, loops in
 * loop.c, the copies CPython makes of finally bodies and exits in copies.c,
 * try/with in try.c (3.11+) and try_legacy.c (3.8-3.10). */
#include <stdio.h>
#include <string.h>

#include "print.h"
#include "structure.h"

struct dc_undo {
    int *slot;
    int old;
};

struct dc_undo_instr {
    int at;
    dp_instr old;
};

/* A log of d's arena with room for one more entry past its n: p itself,
 * or a copy twice as large (cap updated); NULL on out of memory (reported
 * at instruction `at`; the log stays as it was). */
static void *log_room(dc *d, void *p, int n, int *cap, size_t size, int at) {
    if (n < *cap)
        return p;
    int ncap = *cap ? *cap * 2 : 16;
    void *q = dp_alloc_array(d->sh->ar, (size_t)ncap, size);
    if (q == NULL) {
        dc_fail(d, at, "out of memory");
        return NULL;
    }
    if (n)
        memcpy(q, p, (size_t)n * size);
    *cap = ncap;
    return q;
}

/* A speculation that fails must leave no trace: the error, the try
 * statements it structured, the instructions it consumed (else the check
 * that every instruction was used would count code no statement holds),
 * the declarations it added, a pending chained assignment, temporaries. */
void dc_spec_begin(dc *d, dc_spec *s) {
    s->shared_seq = d->shared_seq;
    d->shared_seq = d->sh->ar->nodes; /* (a dropped speculation's changes to displays: dc_own_slot) */
    s->saved = *d->sh->err;
    s->pending_chain = d->pending_chain;
    s->ntemps = d->sh->ntemps;
    s->nopened = d->nopened;
    s->nseen_log = d->nseen_log;
    s->nundo = d->nundo;
    s->nundo_ins = d->nundo_ins;
    s->depth = d->spec_depth++;
    s->nglobals = d->globals.n;
    s->nnonlocals = d->nonlocals.n;
}

int dc_spec_end(dc *d, dc_spec *s, int result) {
    /* (set from the saved depth: a speculation left by an error return
     * inside this one is closed here too) */
    d->spec_depth = s->depth;
    d->shared_seq = s->shared_seq;
    if (result >= 0 && !d->sh->err->set) {
        if (d->spec_depth == 0)
            d->nseen_log = d->nundo = d->nundo_ins = 0; /* nothing left that could undo these */
        return 1;
    }
    *d->sh->err = s->saved;
    d->pending_chain = s->pending_chain;
    d->sh->ntemps = s->ntemps;
    while (d->nopened > s->nopened)
        d->handlers[d->opened_log[--d->nopened]].opened = 0;
    while (d->nseen_log > s->nseen_log)
        d->seen[d->seen_log[--d->nseen_log]] = 0;
    while (d->nundo > s->nundo) {
        d->nundo--;
        *d->undo[d->nundo].slot = d->undo[d->nundo].old;
    }
    while (d->nundo_ins > s->nundo_ins) {
        d->nundo_ins--;
        d->f.ins[d->undo_ins[d->nundo_ins].at] = d->undo_ins[d->nundo_ins].old;
    }
    d->globals.n = s->nglobals;
    d->nonlocals.n = s->nnonlocals;
    return 0;
}

void dc_set(dc *d, int *slot, int value) {
    if (*slot == value)
        return;
    if (d->spec_depth > 0) {
        struct dc_undo *u = log_room(d, d->undo, d->nundo, &d->capundo, sizeof *u, -1);
        if (u == NULL)
            return;
        d->undo = u;
        d->undo[d->nundo].slot = slot;
        d->undo[d->nundo].old = *slot;
        d->nundo++;
    }
    *slot = value;
}

dp_instr *dc_edit(dc *d, int k) {
    if (d->spec_depth > 0) {
        struct dc_undo_instr *u = log_room(d, d->undo_ins, d->nundo_ins, &d->capundo_ins, sizeof *u, k);
        if (u == NULL)
            return &d->f.ins[k];
        d->undo_ins = u;
        d->undo_ins[d->nundo_ins].at = k;
        d->undo_ins[d->nundo_ins].old = d->f.ins[k];
        d->nundo_ins++;
    }
    return &d->f.ins[k];
}

void dc_mark(dc *d, int i) {
    if (d->seen[i])
        return;
    d->seen[i] = 1;
    if (d->spec_depth == 0)
        return;
    int *log = log_room(d, d->seen_log, d->nseen_log, &d->capseen_log, sizeof *log, i);
    if (log == NULL)
        return;
    d->seen_log = log;
    d->seen_log[d->nseen_log++] = i;
}

int dc_open_handler(dc *d, dc_handler *h) {
    if (h->opened)
        return 0;
    int *log = log_room(d, d->opened_log, d->nopened, &d->capopened, sizeof *log, h->at);
    if (log == NULL)
        return -1;
    d->opened_log = log;
    d->opened_log[d->nopened++] = (int)(h - d->handlers);
    h->opened = 1;
    return 0;
}

dp_node *dc_stmt(dc *d, int kind, int at) {
    dp_node *n = dc_node(d, kind);
    if (n && at >= 0 && at < d->n) {
        n->line = d->in[at].line;
        n->offset = d->in[at].offset;
        /* (the line map covers the top-level code object only: offsets of
         * nested code objects would collide with its own) */
        n->nested = d->outer != NULL;
    }
    return n;
}

int dc_same_instr(const dp_instr *a, const dp_instr *b) {
    return a->op == b->op && a->arg == b->arg && a->cst == b->cst &&
           (a->name == b->name || (a->name != NULL && b->name != NULL && strcmp(a->name, b->name) == 0));
}

int dc_lower_bound(const int *a, int n, int v) {
    int lo = 0, hi = n;
    while (a != NULL && lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint32_t dc_instr_hash(const dp_instr *x) {
    uint32_t h = (uint32_t)x->op * 2654435761u ^ (uint32_t)x->arg * 40503u ^ (uint32_t)(uintptr_t)x->cst;
    for (const char *c = x->name; c != NULL && *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    return h;
}

int dc_is_block_setup(int op) {
    return op == IR_SETUP_FINALLY || op == IR_SETUP_WITH || op == IR_SETUP_ASYNC_WITH;
}

int dc_is_pop_jump(int op) { return dp_is_pop_jump(op); }

/* (FOR_ITER is a loop's, CALL_FINALLY 3.8's finally machinery) */
int dc_is_jump(int op) { return dp_is_jump(op) && op != IR_FOR_ITER && op != IR_CALL_FINALLY; }

int dc_is_terminator(int op) { return !dp_falls_through(op); }

/* Does instruction i complete a statement?  (`return x` inside a loop or
 * a with block pops the iterator or __exit__ result before RETURN_VALUE.) */
static int ends_stmt(const dc *d, int i) {
    if (i < 0)
        return 1;
    switch (d->in[i].op) {
    case IR_RETURN_VALUE: case IR_RAISE: case IR_RERAISE: case IR_JUMP:
    case IR_STORE_NAME: case IR_STORE_FAST: case IR_STORE_GLOBAL: case IR_STORE_DEREF:
    case IR_STORE_ATTR: case IR_STORE_SUBSCR: case IR_STORE_SLICE:
    case IR_DELETE_NAME: case IR_DELETE_FAST: case IR_DELETE_GLOBAL: case IR_DELETE_DEREF:
    case IR_DELETE_ATTR: case IR_DELETE_SUBSCR: case IR_IMPORT_STAR: case IR_NOP:
        return 1;
    case IR_POP_TOP: case IR_POP_EXCEPT:
        return 1;
    default:
        return 0;
    }
}

int dc_is_cond_jump(int op) { return dc_is_jump(op) && op != IR_JUMP; }

static int same_node(const dp_node *a, const dp_node *b);

static int same_list(const dp_nodes *a, const dp_nodes *b) {
    if (a->n != b->n)
        return 0;
    for (int k = 0; k < a->n; k++)
        if (!same_node(a->v[k], b->v[k]))
            return 0;
    return 1;
}

/* Structural equality of target expressions (for augmented assignment). */
static int same_node(const dp_node *a, const dp_node *b) {
    if (a == b)
        return 1;
    if (a == NULL || b == NULL || a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case E_NAME:
        return strcmp(a->s, b->s) == 0;
    case E_ATTR:
        return strcmp(a->s, b->s) == 0 && same_node(a->a, b->a);
    case E_SUBSCR:
        return same_node(a->a, b->a) && same_node(a->b, b->b);
    case E_SLICE:
        return same_node(a->a, b->a) && same_node(a->b, b->b) && same_node(a->c, b->c);
    case E_CONST:
        return a->cst == b->cst;
    case E_TUPLE:
        return same_list(&a->l1, &b->l1);
    default:
        return 0;
    }
}

/* ---- values left on the stack ----
 * Compiled Python never keeps a value on the stack across a statement, but
 * Dynamo's bytecode does.  The expression tree evaluates a value where it is
 * used, so such a value is first stored in a temporary, keeping the order of
 * evaluation (and surviving later stores, `del`s and mutations). */

static int is_comprehension_code(const dc *d) {
    const char *n = d->code->name;
    return strcmp(n, "<listcomp>") == 0 || strcmp(n, "<setcomp>") == 0 || strcmp(n, "<dictcomp>") == 0 ||
           strcmp(n, "<genexpr>") == 0;
}

static int needs_temp(const dc *d, const dp_node *v) {
    /* a name keeps its value until it is rebound (see protect_name); a
     * cell's read is an operation of its own: another scope may store into
     * it, and it may be empty */
    if (v->kind == E_NAME)
        return dc_is_cell_var(d->code, v->s);
    /* a function no def binds is made where the bytecode makes it (by value,
     * finish_made_function): its closure and MAKE_FUNCTION are operations
     * the checker keeps in order (torch 2.9-2.11 make a resume function, then
     * rearrange the lists it is called with) */
    if (v->kind == X_FUNC)
        return !d->lay.qualname_on_stack && v->cst && v->cst->code && strcmp(v->cst->code->name, "<lambda>") != 0;
    if (v->kind >= DP_NODE_KIND_COUNT || v->kind == E_CONST)
        return 0;
    /* the accumulator of a comprehension's loop */
    if ((v->kind == E_LIST || v->kind == E_SET || v->kind == E_DICT) && v->l1.n == 0 && is_comprehension_code(d))
        return 0;
    if (d->pending_chain && d->pending_chain->b == v)
        return 0;
    return 1;
}

dp_node *dc_new_temp(dc *d) {
    char name[32];
    snprintf(name, sizeof name, "__temp_%d", ++d->sh->ntemps);
    const char *s = dp_strdup(d->sh->ar, name);
    return s ? dc_name(d, s) : NULL;
}

/* Stores the value at stack slot k in a new temporary (emitted to `out`)
 * and makes every slot holding it refer to the temporary. */
static int to_temp(dc *d, dc_stack *st, int k, dp_nodes *out, int at) {
    dp_node *v = st->v[k];
    dp_node *t = dc_new_temp(d);
    dp_node *s = dc_stmt(d, S_ASSIGN, at);
    if (t == NULL || s == NULL || dc_add(d, &s->l1, t) < 0 || dc_add(d, out, s) < 0)
        return -1;
    s->b = v;
    for (int q = 0; q < st->n; q++)
        if (st->v[q] == v)
            st->v[q] = t;
    return 0;
}

static int reads_name(const dp_node *e, const char *name, int depth) {
    if (e == NULL || depth > 200)
        return depth > 200; /* too deep to tell: assume it does */
    if (e->kind == E_NAME)
        return strcmp(e->s, name) == 0;
    if (e->kind == E_LAMBDA || e->kind >= DP_NODE_KIND_COUNT)
        return 0;
    if (reads_name(e->a, name, depth + 1) || reads_name(e->b, name, depth + 1) || reads_name(e->c, name, depth + 1))
        return 1;
    const dp_nodes *ls[4] = {&e->l1, &e->l2, &e->l3, &e->l4};
    for (int l = 0; l < 4; l++)
        for (int k = 0; k < ls[l]->n; k++)
            if (reads_name(ls[l]->v[k], name, depth + 1))
                return 1;
    return 0;
}

/* Values kept on the stack across statements are looked through at every
 * store and statement; past this many (no compiler keeps more than a few:
 * loops, with blocks, unpack targets) the state machine, which keeps them
 * in variables, takes the code, so the look stays linear in the code. */
#define MAX_PENDING 256

static int too_many_pending(dc *d, const dc_stack *st, int at) {
    if (st->n <= MAX_PENDING)
        return 0;
    return dc_fail(d, at, "more than %d values kept on the stack across statements", MAX_PENDING);
}

/* Before `name` is stored or deleted: leftovers that read it get its
 * current value in a temporary. */
static int protect_name(dc *d, dc_stack *st, const char *name, const dp_node *value, dp_nodes *out, int at) {
    if (too_many_pending(d, st, at) < 0)
        return -1;
    for (int k = 0; k < st->n; k++) {
        dp_node *v = st->v[k];
        if (v != value && v->kind < DP_NODE_KIND_COUNT && v->kind != E_CONST &&
            !(d->pending_chain && d->pending_chain->b == v) && reads_name(v, name, 0) && to_temp(d, st, k, out, at) < 0)
            return -1;
    }
    return 0;
}

/* Puts into temporaries, in the order the bytecode computed them, the
 * values pending in slots [0, hi) that were computed before `before` (a
 * node's seq; SIZE_MAX for all), `keep` aside.  Below the region's base only
 * what the region pushed itself counts (the stack shrank under the base and
 * grew again): the rest belongs to the code around the region.  The order
 * matters because after SWAPs the order on the stack is not the order of
 * evaluation. */
static int spill_pending(dc *d, dc_stack *st, int hi, size_t before, const dp_node *keep, dp_nodes *out, int at) {
    if (too_many_pending(d, st, at) < 0)
        return -1;
    for (;;) {
        int first = -1;
        for (int q = 0; q < hi && q < st->n; q++) {
            dp_node *v = st->v[q];
            if (v == keep || (q < d->base && (d->base_vals == NULL || v == d->base_vals[q])) ||
                !needs_temp(d, v) || v->seq >= before)
                continue;
            if (first < 0 || v->seq < st->v[first]->seq)
                first = q;
        }
        if (first < 0)
            return 0;
        if (to_temp(d, st, first, out, at) < 0) /* (every slot of it becomes a name) */
            return -1;
    }
}

int dc_spill_stack(dc *d, dc_stack *st, dp_nodes *out, int at) {
    return spill_pending(d, st, st->n, SIZE_MAX, NULL, out, at);
}

/* Slot k goes into a temporary: the values computed before it first (a
 * temporary for k alone would move its evaluation before theirs). */
static int temps_through(dc *d, dc_stack *st, int k, dp_nodes *out, int at) {
    if (k < 0 || k >= st->n)
        return 0;
    if (spill_pending(d, st, st->n, st->v[k]->seq, st->v[k], out, at) < 0)
        return -1;
    return to_temp(d, st, k, out, at);
}

/* Storing to or deleting a plain local cannot change a pending value (only
 * protect_name's case) nor be observed by one: no other code sees it. */
static int is_private_local(const dc *d, const dp_node *target, int op) {
    if (target->kind != E_NAME || (op != IR_STORE_FAST && op != IR_DELETE_FAST))
        return 0;
    for (size_t k = 0; k < d->code->cellvars.n; k++)
        if (strcmp(d->code->cellvars.v[k], target->s) == 0)
            return 0;
    return 1;
}

/* Before a statement: the values left below its own operands (`value` is
 * the one being stored, which may legitimately stay: `a = b = v`). */
int dc_flush_leftovers(dc *d, dc_stack *st, int operands, const dp_node *value, dp_nodes *out, int at) {
    return spill_pending(d, st, st->n - operands, SIZE_MAX, value, out, at);
}

/* Before `target = *v`: the leftovers go to temporaries, and so does *v
 * when it was computed before one of them (a SWAP put it on top): printed
 * in the statement, it would be evaluated after that leftover. */
static int flush_before_store(dc *d, dc_stack *st, dp_node **v, dp_nodes *out, int at) {
    int later = 0;
    if (needs_temp(d, *v))
        for (int q = d->base; q < st->n && !later; q++)
            later = st->v[q] != *v && needs_temp(d, st->v[q]) && st->v[q]->seq > (*v)->seq;
    if (!later)
        return dc_flush_leftovers(d, st, 0, *v, out, at);
    if (dc_push(d, st, *v) < 0 || spill_pending(d, st, st->n, SIZE_MAX, NULL, out, at) < 0)
        return -1;
    *v = st->v[--st->n];
    return 0;
}

/* After `COPY 1; STORE a`, does the copied value go to another target
 * (`a = b = v`) rather than on into an expression (`(a := v) + 1`)? */
static int chained_store_follows(const dc *d, int j) {
    if (j >= d->n)
        return 0;
    int op = d->in[j].op;
    if (op == IR_COPY || op == IR_STORE_FAST || op == IR_STORE_NAME || op == IR_STORE_GLOBAL ||
        op == IR_STORE_DEREF || op == IR_UNPACK_SEQUENCE || op == IR_UNPACK_EX)
        return 1;
    /* attribute or subscript targets load their object (and index) first */
    for (int k = j; k < j + 8 && k < d->n; k++) {
        int o = d->in[k].op;
        if (o == IR_STORE_ATTR || o == IR_STORE_SUBSCR || o == IR_STORE_SLICE)
            return 1;
        if (o != IR_LOAD_FAST && o != IR_LOAD_NAME && o != IR_LOAD_GLOBAL && o != IR_LOAD_DEREF &&
            o != IR_LOAD_ATTR && o != IR_LOAD_CONST && o != IR_BINARY_SUBSCR && o != IR_LOAD_CLASSDEREF &&
            o != IR_BUILD_SLICE)
            return 0;
    }
    return 0;
}

/* COPY of a value that is not a plain name or constant would evaluate it
 * twice, except in the compiler's own patterns: `a = b = v`, `(a := v)`,
 * `a.x += v`, `a[i] += v`. */
static int copy_needs_temp(const dc *d, int i, const dc_stack *st) {
    const dp_instr *ins = &d->in[i];
    if (ins->arg < 1 || ins->arg > st->n)
        return 0;
    const dp_node *v = st->v[st->n - ins->arg];
    if (v->kind >= DP_NODE_KIND_COUNT || v->kind == E_CONST || v->kind == E_NAME)
        return 0;
    int nx = i + 1 < d->n ? d->in[i + 1].op : IR_NOP;
    if (ins->arg == 1 && (chained_store_follows(d, i + 1) || nx == IR_LOAD_ATTR || nx == IR_POP_JUMP_IF_FALSE ||
                          nx == IR_POP_JUMP_IF_TRUE))
        return 0;
    /* `a[i] += v` copies container and index: COPY 2; COPY 2 (3 for slices) */
    if ((ins->arg == 2 || ins->arg == 3) && ((nx == IR_COPY && d->in[i + 1].arg == ins->arg) ||
                                            (i > 0 && d->in[i - 1].op == IR_COPY && d->in[i - 1].arg == ins->arg)))
        return 0;
    return 1;
}

int dc_same_stack(const dc_stack *a, const dc_stack *b) {
    return a->n == b->n && (a->n == 0 || memcmp(a->v, b->v, (size_t)a->n * sizeof *a->v) == 0);
}

/* After a SWAP the stack no longer lists values in the order they were
 * computed, which printing (and dc_flush_leftovers) relies on: the earlier
 * impure values go to temporaries first.  The compiler's own SWAPs feed
 * stores (tuple and augmented assignments) or unwind around a return. */
static int swap_needs_temps(const dc *d, int i) {
    if (d->in[i].op != IR_SWAP || i + 1 >= d->n || dc_generic_call_swap(d, i))
        return 0;
    int j = i + 1;
    while (j < d->n && j < i + 4 && (d->in[j].op == IR_LOAD_FAST || d->in[j].op == IR_LOAD_NAME ||
                                      d->in[j].op == IR_LOAD_GLOBAL || d->in[j].op == IR_LOAD_DEREF ||
                                      d->in[j].op == IR_LOAD_CONST || d->in[j].op == IR_LOAD_ATTR))
        j++;
    switch (j < d->n ? d->in[j].op : IR_NOP) {
    case IR_COPY: /* a chained comparison: SWAP 2; COPY 2; COMPARE */
        return j != i + 1;
    case IR_STORE_FAST: case IR_STORE_NAME: case IR_STORE_GLOBAL: case IR_STORE_DEREF:
    case IR_STORE_ATTR: case IR_STORE_SUBSCR: case IR_STORE_SLICE: case IR_SWAP:
    case IR_POP_TOP: case IR_POP_EXCEPT: case IR_RETURN_VALUE:
        return j != i + 1 && d->in[j].op != IR_STORE_ATTR && d->in[j].op != IR_STORE_SUBSCR;
    default:
        return 1;
    }
}

static int on_stack(const dc_stack *st, const dp_node *v) {
    for (int k = 0; k < st->n; k++)
        if (st->v[k] == v)
            return 1;
    return 0;
}

/* How many values of a kind (with blocks' __exit__, except blocks' values)
 * are on the stack. */
static int count_kind(const dc_stack *st, int kind) {
    int n = 0;
    for (int k = 0; k < st->n; k++)
        n += st->v[k]->kind == kind;
    return n;
}

int dc_declare(dc *d, dp_nodes *decls, const char *name) {
    for (int k = 0; k < decls->n; k++)
        if (strcmp(decls->v[k]->s, name) == 0)
            return 0;
    return dc_add(d, decls, dc_name(d, name));
}

static int is_freevar(const dc *d, const char *name) {
    for (size_t k = 0; k < d->code->freevars.n; k++)
        if (strcmp(d->code->freevars.v[k], name) == 0)
            return 1;
    return 0;
}

/* Peels decorator calls `deco(inner)` around a function or class value. */
static dp_node *peel_decorators(dc *d, dp_node *v, dp_nodes *decos) {
    while (v->kind == E_CALL && v->l1.n == 1 && v->l2.n == 0 &&
           (v->l1.v[0]->kind == X_FUNC || v->l1.v[0]->kind == E_CALL || v->l1.v[0]->kind == X_GENERIC)) {
        dp_node *inner = v->l1.v[0];
        dp_node *probe = inner;
        while (probe->kind == E_CALL && probe->l1.n == 1 && probe->l2.n == 0)
            probe = probe->l1.v[0];
        int is_class_call = probe->kind == E_CALL && probe->a && probe->a->kind == X_BUILD_CLASS;
        int is_generic_def = probe->kind == X_GENERIC && probe->op != DC_GEN_ALIAS;
        if (probe->kind != X_FUNC && !is_class_call && !is_generic_def &&
            !(inner->kind == E_CALL && inner->a->kind == X_BUILD_CLASS))
            break;
        if (dc_add(d, decos, v->a) < 0)
            return NULL;
        v = inner;
    }
    return v;
}

/* Is `stored` the name `name` compiled in class `cls` (`__x` stored as
 * `_cls__x`: dp_unmangled)? */
static int mangled_in_class(const char *cls, const char *name, const char *stored) {
    const char *w = dp_unmangled(cls, stored);
    return w != stored && strcmp(w, name) == 0;
}

/* The name of the def that stores function `fn` into `target`, or NULL
 * when that store is no def: the same name, or in a class the name the
 * class mangles into the stored one. */
static const char *def_name(const dc *d, const dp_node *fn, const dp_node *target) {
    if (fn->kind != X_FUNC || target->kind != E_NAME || fn->cst->code == NULL || strcmp(target->s, "<lambda>") == 0)
        return NULL;
    const char *name = fn->cst->code->name;
    if (strcmp(name, target->s) == 0)
        return name;
    return mangled_in_class(dc_private_class(d), name, target->s) ? name : NULL;
}

/* The name of the class statement whose class (`__build_class__(body,
 * name, ...)`) is stored into `target`: its name, stored as written or
 * mangled, else the target's. */
static const char *class_name(const dc *d, const dp_node *call, const dp_node *target) {
    const dp_node *name = call->l1.n >= 2 ? call->l1.v[1] : NULL;
    if (name == NULL || !dc_is_const_kind(name, DP_CONST_STR) || !dc_is_identifier(name->cst->text))
        return target->s;
    return mangled_in_class(dc_private_class(d), name->cst->text, target->s) ? name->cst->text : target->s;
}

/* `import a.b.c` (no fromlist), not `from a.b.c import ...` */
static int plain_import(const dp_node *mod) {
    return mod->cst == NULL || mod->cst->kind == DP_CONST_NONE;
}

/* An `import` / `from ... import` statement for a store of an import value. */
static int store_import(dc *d, dp_node *target, dp_node *v, dp_nodes *out, int at) {
    if (target->kind != E_NAME)
        return 0;
    if (v->kind == X_IMPORT && v->op2 == 0) { /* import a.b.c / import a as b */
        dp_node *s = dc_stmt(d, S_IMPORT, at), *al = dc_node(d, E_ALIAS);
        if (s == NULL || al == NULL)
            return -1;
        al->s = v->s;
        size_t first = strcspn(v->s, ".");
        if (!(strlen(target->s) == first && strncmp(v->s, target->s, first) == 0) || v->op != 0) {
            al->b = target;
        }
        return (dc_add(d, &s->l1, al) < 0 || dc_add(d, out, s) < 0) ? -1 : 1;
    }
    if (v->kind == X_IMPORT && v->op2 == 1) { /* from-item, or import a.b as c */
        dp_node *mod = v->a;
        dp_node *al = dc_node(d, E_ALIAS);
        if (al == NULL)
            return -1;
        if (plain_import(mod)) {
            if (mod->s[v->op] != '\0') /* a chain stopped short of the module imported */
                return dc_fail(d, at, "import of %s bound to a part of it", mod->s);
            dp_node *s = dc_stmt(d, S_IMPORT, at);
            if (s == NULL)
                return -1;
            al->s = mod->s;
            al->b = target;
            return (dc_add(d, &s->l1, al) < 0 || dc_add(d, out, s) < 0) ? -1 : 1;
        }
        al->s = v->s;
        if (strcmp(v->s, target->s) != 0)
            al->b = target;
        if (mod->a == NULL) {
            dp_node *s = dc_stmt(d, S_IMPORTFROM, at);
            if (s == NULL)
                return -1;
            s->s = mod->s[0] ? mod->s : NULL;
            s->op = mod->op;
            mod->a = s;
            if (dc_add(d, out, s) < 0)
                return -1;
        }
        return dc_add(d, &mod->a->l1, al) < 0 ? -1 : 1;
    }
    return 0;
}

/* IMPORT_FROM of `name` from x (on top, it stays there): a from-item, or
 * for `import a.b.c as d` the next link of the chain that fetches a.b from
 * the package a, then a.b.c from that (op: how much of "a.b.c" the chain
 * has covered).  0 for any other operand. */
static int import_from(dc *d, const dp_instr *ins, dp_node *x, dc_stack *st) {
    if (x->kind != X_IMPORT)
        return 0;
    dp_node *mod = x->op2 == 0 ? x : x->a, *v = dc_node(d, X_IMPORT);
    if (v == NULL)
        return -1;
    v->op2 = 1;
    v->a = mod;
    v->s = ins->name;
    if (plain_import(mod)) {
        size_t at = x->op2 == 0 ? strcspn(mod->s, ".") : (size_t)x->op, len = strlen(ins->name);
        if (mod->s[at] != '.' || strncmp(mod->s + at + 1, ins->name, len) != 0 ||
            (mod->s[at + 1 + len] != '.' && mod->s[at + 1 + len] != '\0'))
            return 0;
        v->op = (int)(at + 1 + len);
    } else if (x->op2 != 0) {
        return 0; /* an item of a from-item */
    }
    return dc_push(d, st, v) < 0 ? -1 : 1;
}

/* After `a = b = v` a copy of v that goes on into an expression (torch <= 2.7
 * keeps a module's attribute so: `COPY 1; STORE a; COPY 1; STORE b; ...
 * CALL`) is read back from the last target: printing v there again would
 * evaluate it twice.  The name holds v until rebound (see protect_name). */
static int chain_value_read_back(dc *d, dc_stack *st, const dp_node *v, const dp_node *target) {
    dp_node *name = dc_name(d, target->s);
    if (name == NULL)
        return -1;
    for (int k = 0; k < st->n; k++)
        if (st->v[k] == v)
            st->v[k] = name;
    d->pending_chain = NULL;
    return 0;
}

/* Stores `v` into `target`: an assignment, augmented assignment, def, class,
 * import, unpacking slot or loop target. */
static int store(dc *d, dp_node *target, dp_node *v, dc_stack *st, dp_nodes *out, int at, int at_instr) {
    if (target == NULL || v == NULL)
        return -1;
    if (v->kind == X_SLOT) {
        dp_node *holder = v->a;
        if (v->op < 0 || v->op >= holder->l1.n)
            return dc_fail(d, at, "bad unpack slot");
        if (holder->op2 && v->op == holder->op2 - 1) {
            dp_node *s = dc_node(d, E_STARRED);
            if (s == NULL)
                return -1;
            s->a = target;
            target = s;
        }
        holder->l1.v[v->op] = target;
        /* earlier slots whose value was dropped (see IR_POP_TOP) name this
         * target too: it is stored again after them */
        for (int k = 0; k < v->op && target->kind == E_NAME; k++) {
            dp_node *t = target;
            if (holder->l1.v[k] == NULL || holder->l1.v[k]->kind != X_OPAQUE)
                continue;
            if (holder->op2 && k == holder->op2 - 1) {
                if ((t = dc_node(d, E_STARRED)) == NULL)
                    return -1;
                t->a = target;
            }
            holder->l1.v[k] = t;
        }
        return 0;
    }
    int r = store_import(d, target, v, out, at);
    if (r != 0)
        return r < 0 ? -1 : 0;
    if (d->pending_chain && d->pending_chain->b == v) {
        if (dc_add(d, &d->pending_chain->l1, target) < 0)
            return -1;
        if (!on_stack(st, v))
            d->pending_chain = NULL;
        else if (!chained_store_follows(d, at_instr + 1) && is_private_local(d, target, d->in[at_instr].op))
            return chain_value_read_back(d, st, v, target);
        return 0;
    }
    int walrus = target->kind == E_NAME && st->n > 0 && st->v[st->n - 1] == v && d->in[at_instr].op != IR_NOP &&
                 !chained_store_follows(d, at_instr + 1);
    /* a pending value must be computed before the stored one, unless that
     * has no side effects and goes to a variable nobody else sees */
    int quiet = is_private_local(d, target, d->in[at_instr].op) && (v->kind == E_NAME || v->kind == E_CONST);
    if (!walrus && !quiet && flush_before_store(d, st, &v, out, at) < 0)
        return -1;
    if (target->kind == E_NAME && protect_name(d, st, target->s, v, out, at) < 0)
        return -1;
    dp_nodes decos = {0};
    dp_node *core = v;
    if (v->kind == E_CALL && (core = peel_decorators(d, v, &decos)) == NULL)
        return -1;
    if (core->kind == X_GENERIC && (decos.n == 0 || core->op != DC_GEN_ALIAS)) {
        dp_node *def = target->kind == E_NAME ? dc_generic_stmt(d, core, target->s, at) : NULL;
        if (def == NULL)
            return target->kind == E_NAME ? -1 : dc_fail(d, at, "%s stored into something other than a name", core->s);
        def->l2 = decos;
        return dc_add(d, out, def);
    }
    const char *fname = def_name(d, core, target);
    if (fname || (core->kind == E_CALL && core->a && core->a->kind == X_BUILD_CLASS)) {
        dp_node *def = core->kind == X_FUNC ? dc_funcdef(d, core, fname, at)
                                            : dc_classdef(d, core, class_name(d, core, target), at);
        if (def == NULL)
            return -1;
        def->l2 = decos;
        return dc_add(d, out, def);
    }
    if (v->kind == X_FUNC) {
        if ((v = dc_lambda(d, v, at)) == NULL)
            return -1;
    }
    if (v->kind == E_BINOP && v->op2 && same_node(v->a, target)) {
        dp_node *s = dc_stmt(d, S_AUGASSIGN, at);
        if (s == NULL)
            return -1;
        s->a = target;
        s->op = v->op;
        s->b = v->b;
        return dc_add(d, out, s);
    }
    if (walrus) {
        /* `(n := v)`: the value stays on the stack for the enclosing expression */
        dp_node *named = dc_node(d, E_NAMED);
        if (named == NULL)
            return -1;
        named->s = target->s;
        named->a = v;
        st->v[st->n - 1] = named;
        return 0;
    }
    dp_node *s = dc_stmt(d, S_ASSIGN, at);
    if (s == NULL || dc_add(d, &s->l1, target) < 0)
        return -1;
    s->b = v;
    d->pending_chain = on_stack(st, v) ? s : NULL;
    return dc_add(d, out, s);
}

/* UNPACK_SEQUENCE / UNPACK_EX: the value goes to a tuple target whose
 * elements are filled by the stores that follow. */
static int unpack(dc *d, const dp_instr *ins, dc_stack *st, dp_nodes *out, int at) {
    int before = ins->op == IR_UNPACK_EX ? (ins->arg & 0xff) : ins->arg;
    int after = ins->op == IR_UNPACK_EX ? (ins->arg >> 8) : 0;
    int count = before + after + (ins->op == IR_UNPACK_EX);
    if (count > 65536)
        return dc_fail(d, at, "unpack count too large");
    dp_node *v = dc_pop(d, st, at);
    dp_node *tuple = dc_node(d, E_TUPLE);
    if (v == NULL || tuple == NULL)
        return -1;
    for (int k = 0; k < count; k++)
        if (dp_nodes_push(d->sh->ar, &tuple->l1, NULL) < 0)
            return dc_fail(d, at, "out of memory");
    if (ins->op == IR_UNPACK_EX)
        tuple->op2 = before + 1;
    if (v->kind == X_SLOT) {
        /* nested target: (a, (b, c)) = ... or for a, b in ... */
        v->a->l1.v[v->op] = tuple;
    } else {
        if (store(d, tuple, v, st, out, at, (int)(ins - d->in)) < 0)
            return -1;
    }
    for (int k = count - 1; k >= 0; k--) {
        dp_node *slot = dc_node(d, X_SLOT);
        if (slot == NULL)
            return -1;
        slot->a = tuple;
        slot->op = k;
        if (dc_push(d, st, slot) < 0)
            return -1;
    }
    return 0;
}

int dc_is_name_store(int op) {
    return op == IR_STORE_FAST || op == IR_STORE_NAME || op == IR_STORE_GLOBAL || op == IR_STORE_DEREF;
}

/* Ops a target's own expression (`obj.attr`, `f(x)[n - i - 1]`) may be
 * computed with: values only, no control flow, no store. */
static int is_target_operand_op(int op) {
    switch (op) {
    case IR_LOAD_FAST: case IR_LOAD_NAME: case IR_LOAD_GLOBAL: case IR_LOAD_DEREF: case IR_LOAD_CLASSDEREF:
    case IR_LOAD_CONST: case IR_LOAD_ATTR: case IR_LOAD_METHOD: case IR_PUSH_NULL: case IR_BINARY_OP:
    case IR_UNARY: case IR_COMPARE: case IR_IS: case IR_CONTAINS: case IR_BINARY_SUBSCR: case IR_BINARY_SLICE:
    case IR_BUILD_SLICE: case IR_BUILD_TUPLE: case IR_CALL:
        return 1;
    default:
        return 0;
    }
}

/* The end of the assignment target starting at j, the value to store on
 * top: a name, `obj.attr`, `obj[key]`, `obj[a:b]` (the object and key any
 * expression) or a nested unpacking of such targets; -1 if there is none.
 * The target's operands are counted by their stack effects: its store is
 * the first op that takes the value. */
static int target_end(const dc *d, int j, int depth) {
    int above = 0; /* values the target's expression has pushed above the value */
    for (int k = j; k < d->n && k < j + 64; k++) {
        int op = d->in[k].op;
        if ((above == 0 && dc_is_name_store(op)) || (above == 1 && op == IR_STORE_ATTR) ||
            (above == 2 && op == IR_STORE_SUBSCR) || (above == 3 && op == IR_STORE_SLICE))
            return k + 1;
        if (above == 0 && (op == IR_UNPACK_SEQUENCE || op == IR_UNPACK_EX) && depth <= 8) {
            int arg = d->in[k].arg;
            int count = op == IR_UNPACK_EX ? (arg & 0xff) + (arg >> 8) + 1 : arg;
            if (count > 64)
                return -1;
            for (k++; count > 0 && k >= 0; count--)
                k = target_end(d, k, depth + 1);
            return k;
        }
        dp_effect e;
        if (!is_target_operand_op(op) || dp_ir_effect(&d->in[k], &d->lay, 0, &e) < 0 || e.in > above)
            return -1;
        above += e.out - e.in;
    }
    return -1;
}

/* The run of SWAPs from i: the number of values it reverses (the top k
 * end up in the opposite order, nothing else moves), or 0.  3.8-3.10's
 * ROT_THREE; ROT_TWO lifts to SWAP 3; SWAP 2; SWAP 2, the same as SWAP 3. */
static int swap_run_reverses(const dc *d, int i, int *after) {
    int pos[3] = {0, 1, 2}, k = 0, j = i; /* pos[s]: the value now s slots below the top */
    for (; j < d->n && d->in[j].op == IR_SWAP && j < i + 6; j++) {
        int n = d->in[j].arg;
        if (n < 2 || n > 3)
            return 0;
        int t = pos[0];
        pos[0] = pos[n - 1];
        pos[n - 1] = t;
        k = n > k ? n : k;
    }
    for (int s = 0; s < 3; s++)
        if (pos[s] != (s < k ? k - 1 - s : s))
            return 0;
    *after = j;
    return k;
}

/* `a, b = x, y` (2 or 3 targets) compiles to `x; y; SWAP 2; STORE a;
 * STORE b` instead of building and unpacking a tuple.  Returns 1 when the
 * SWAP at i starts one (the stores then fill the target tuple; *next is
 * the first of them). */
static int swap_assign_fits(const dc *d, int i, int base, const dc_stack *st, int *after) {
    int k = d->in[i].op == IR_SWAP ? swap_run_reverses(d, i, after) : 0;
    if (k == 0 || st->n - base < k || *after >= d->n)
        return 0;
    /* exactly k targets must follow */
    for (int j = *after, t = 0; t < k; t++)
        if ((j = target_end(d, j, 0)) < 0)
            return 0;
    for (int q = 0; q < k; q++) {
        const dp_node *v = st->v[st->n - 1 - q];
        if (v->kind >= DP_NODE_KIND_COUNT)
            return 0;
    }
    return k;
}

static int swap_assign(dc *d, int i, int base, dc_stack *st, dp_nodes *out, int at, int *next) {
    int after = i + 1;
    int k = swap_assign_fits(d, i, base, st, &after);
    if (k == 0)
        return 0;
    dp_node *value = dc_node(d, E_TUPLE), *target = dc_node(d, E_TUPLE);
    if (value == NULL || target == NULL)
        return -1;
    for (int q = 0; q < k; q++)
        if (dc_add(d, &value->l1, st->v[st->n - k + q]) < 0 ||
            dp_nodes_push(d->sh->ar, &target->l1, NULL) < 0)
            return -1;
    st->n -= k;
    dp_node *s = dc_stmt(d, S_ASSIGN, at);
    if (s == NULL || dc_add(d, &s->l1, target) < 0 || dc_add(d, out, s) < 0)
        return -1;
    s->b = value;
    for (int q = k - 1; q >= 0; q--) {
        dp_node *slot = dc_node(d, X_SLOT);
        if (slot == NULL)
            return -1;
        slot->a = target;
        slot->op = q;
        if (dc_push(d, st, slot) < 0)
            return -1;
    }
    dc_seen(d, i, after);
    *next = after;
    return 1;
}

static dp_node *name_target(dc *d, const dp_instr *ins);

/* `coll.method(arg)`, or `coll[key] = arg` when method is NULL: LIST_EXTEND
 * and friends on a collection `depth` slots below the top that is not a
 * display being built (it lives in a temporary). */
static int mutate(dc *d, dc_stack *st, int depth, const char *method, dp_node *arg, dp_node *key,
                  dp_nodes *out, int at) {
    if (depth < 0 || depth >= st->n)
        return dc_fail(d, at, "collection operand missing");
    if (dc_flush_leftovers(d, st, 0, NULL, out, at) < 0)
        return -1;
    int k = st->n - 1 - depth;
    if (needs_temp(d, st->v[k]) && st->v[k]->kind != E_NAME && to_temp(d, st, k, out, at) < 0)
        return -1;
    dp_node *coll = st->v[k];
    if (method == NULL) {
        dp_node *t = dc_node(d, E_SUBSCR), *asg = dc_stmt(d, S_ASSIGN, at);
        if (t == NULL || asg == NULL || dc_add(d, &asg->l1, t) < 0)
            return -1;
        t->a = coll;
        t->b = key;
        asg->b = arg;
        return dc_add(d, out, asg);
    }
    dp_node *attr = dc_node(d, E_ATTR), *call = dc_node(d, E_CALL), *stmt = dc_stmt(d, S_EXPR, at);
    if (attr == NULL || call == NULL || stmt == NULL || dc_add(d, &call->l1, arg) < 0)
        return -1;
    attr->a = coll;
    attr->s = method;
    call->a = attr;
    stmt->a = call;
    return dc_add(d, out, stmt);
}

/* 3.11+ compiles `a, b = x, y` to `x; y; STORE b; STORE a` when it can
 * reorder the stores instead of swapping (static swaps): k stores in a row
 * taking k distinct values already on the stack are one assignment. */
static int static_swap_assign(dc *d, int i, int base, dc_stack *st, dp_nodes *out, int at, int *next) {
    int k = 0;
    while (i + k < d->n && dc_is_name_store(d->in[i + k].op) && k < 3 && k < st->n - base)
        k++;
    if (k < 2 || (i + k < d->n && dc_is_name_store(d->in[i + k].op) && k < st->n - base))
        return 0;
    for (int q = 0; q < k; q++) {
        const dp_node *v = st->v[st->n - 1 - q];
        if (v->kind >= DP_NODE_KIND_COUNT || (d->pending_chain && d->pending_chain->b == v))
            return 0;
        for (int r = 0; r < q; r++)
            if (st->v[st->n - 1 - r] == v)
                return 0;
    }
    /* CPython reorders stores only into plain locals, which nothing else
     * sees; stores into cells or globals (Dynamo's code) keep their order as
     * single stores (which also come after the values computed before them) */
    for (int q = 0; q < k; q++) {
        dp_node probe = {.kind = E_NAME, .s = d->in[i + q].name};
        if (!is_private_local(d, &probe, d->in[i + q].op))
            return 0;
    }
    /* a value pending below them was computed before them (as in store()) */
    int quiet = 1;
    for (int q = 0; q < k; q++)
        quiet &= st->v[st->n - 1 - q]->kind == E_NAME || st->v[st->n - 1 - q]->kind == E_CONST;
    if (!quiet && dc_flush_leftovers(d, st, k, NULL, out, at) < 0)
        return -1;
    dp_node *value = dc_node(d, E_TUPLE), *target = dc_node(d, E_TUPLE), *s = dc_stmt(d, S_ASSIGN, at);
    if (value == NULL || target == NULL || s == NULL)
        return -1;
    for (int q = 0; q < k; q++)
        if (dc_add(d, &value->l1, st->v[st->n - k + q]) < 0 ||
            dc_add(d, &target->l1, name_target(d, &d->in[i + k - 1 - q])) < 0)
            return -1;
    st->n -= k;
    s->b = value;
    if (dc_add(d, &s->l1, target) < 0 || dc_add(d, out, s) < 0)
        return -1;
    dc_seen(d, i, i + k);
    *next = i + k;
    return 1;
}

static dp_node *name_target(dc *d, const dp_instr *ins) {
    if (ins->op == IR_STORE_GLOBAL || ins->op == IR_DELETE_GLOBAL) {
        if (!d->is_module && dc_declare(d, &d->globals, ins->name) < 0)
            return NULL;
    } else if ((ins->op == IR_STORE_DEREF || ins->op == IR_DELETE_DEREF) && !d->is_class_body &&
               is_freevar(d, ins->name)) {
        if (dc_declare(d, &d->nonlocals, ins->name) < 0)
            return NULL;
    }
    return dc_name(d, ins->name);
}

static int add_simple(dc *d, dp_nodes *out, int kind, dp_node *a, int at) {
    dp_node *s = dc_stmt(d, kind, at);
    if (s == NULL)
        return -1;
    s->a = a;
    return dc_add(d, out, s);
}

static int add_delete(dc *d, dc_stack *st, dp_nodes *out, dp_node *target, int at, int op) {
    if (!is_private_local(d, target, op) && dc_flush_leftovers(d, st, 0, NULL, out, at) < 0)
        return -1;
    if (target->kind == E_NAME && protect_name(d, st, target->s, NULL, out, at) < 0)
        return -1;
    dp_node *s = dc_stmt(d, S_DELETE, at);
    if (s == NULL || dc_add(d, &s->l1, target) < 0)
        return -1;
    return dc_add(d, out, s);
}

/* A jump leaving the region: break, continue, or the region's own exit. */
int dc_jump_stmt(dc *d, int i, int target, int exit, dp_nodes *out, int *handled) {
    *handled = 1;
    /* only the innermost loop can be the target of break/continue; inside a
     * loop a jump to its exit (or where its breaks go on, when its exit ends
     * the enclosing region) is a break even where a region ends there too */
    dc_loop *lp = d->loop;
    if (lp && (target == lp->brk || target == lp->then) && target != lp->head)
        return dc_add(d, out, dc_stmt(d, S_BREAK, i));
    if (target == exit)
        return 0;
    if (lp && dc_is_loop_head(d, target))
        return dc_add(d, out, dc_stmt(d, S_CONTINUE, i));
    if (lp && dc_breaks_out(d, lp, target))
        return dc_add(d, out, dc_stmt(d, S_BREAK, i));
    *handled = 0;
    return 0;
}

/* Past the POP_TOP of a for loop's iterator at j (the unwinding of a
 * break or return): when a jump follows, is it a break of the innermost
 * loop?  One that is not (a break threaded past code the structure does
 * not know, an else the break skips) would be printed as a plain exit of
 * the region, as if the loop went on.  (A return unwinds on to its
 * RETURN_VALUE, through finally copies of any shape before 3.11.) */
static int leaves_loop(const dc *d, int j) {
    while (j < d->n && d->in[j].op == IR_NOP)
        j++;
    if (j >= d->n || d->in[j].op != IR_JUMP)
        return 1;
    const dc_loop *lp = d->loop;
    int t = d->in[j].target;
    return lp && lp->is_for && ((t == lp->brk && t != lp->head) || dc_breaks_out(d, lp, t));
}

/* A jump leaving the region for none of dc_jump_stmt's places: FAR_CONTINUE
 * where it reaches the loop's back edge (the `continue` is added),
 * FAR_GOES_ON where it goes on as the region does (to its exit, or its end
 * when it has none), 0 when neither (not structured), -1 on error. */
enum { FAR_CONTINUE = 1, FAR_GOES_ON = 2 };
int dc_far_jump_stmt(dc *d, int i, int target, int end, int exit, dp_nodes *out) {
    if (d->loop && dc_resolve_jumps(d, target) == d->loop->head)
        return dc_add(d, out, dc_stmt(d, S_CONTINUE, i)) < 0 ? -1 : FAR_CONTINUE;
    int to = exit >= 0 ? exit : end;
    if (target >= end && dc_continues_as(d, target, to)) {
        dc_skip_exit_copy_at(d, target, to);
        return FAR_GOES_ON;
    }
    return 0;
}


/* Is [from, to) code that falls-through execution never reaches (handler
 * blocks already structured, or code nothing jumps to)? */
static int skippable(const dc *d, int from, int to) {
    int j = from;
    while (j < to) {
        if (d->skip_to[j] > j) {
            j = d->skip_to[j];
            continue;
        }
        if (d->nref[j] > 0)
            return 0;
        j++;
    }
    return 1;
}

/* Is i the head of a 3.8-3.10 async for: `SETUP_FINALLY stop; GET_ANEXT`
 * with END_ASYNC_FOR at stop? */
int dc_is_legacy_async_for(const dc *d, int i) {
    const dp_instr *ins = &d->in[i];
    return ins->op == IR_SETUP_FINALLY && i + 1 < d->n && d->in[i + 1].op == IR_GET_ANEXT &&
           ins->target > i && ins->target < d->n && d->in[ins->target].op == IR_END_ASYNC_FOR;
}


/* past the line-number NOPs at i (not 3.13's TO_BOOL, which tests) */
int dc_past_line_nops(const dc *d, int i) {
    while (i < d->n && d->in[i].op == IR_NOP && d->in[i].arg2 == 0)
        i++;
    return i;
}

/* Does any jump in [from, to) land in [lo, hi)?  (A `continue` of a while
 * loop jumps back to the test; the loop's real back edge comes later.) */
int dc_jumps_into(const dc *d, int from, int to, int lo, int hi) {
    for (int j = from; j < to; j++)
        if (d->in[j].target >= lo && d->in[j].target < hi)
            return 1;
    return 0;
}

/* Does any jump in [from, to) land in the body of the loop [head, last]
 * past its head?  Not counting the 3.12+ cold handlers of tries in the
 * body: an except clause placed after the function jumps back to where its
 * try statement continues, inside the loop. */
static int jumps_into_body(dc *d, int from, int to, int head, int last) {
    for (int j = from; j < to; j++)
        if (d->in[j].target > head && d->in[j].target <= last && !dc_in_cold_handler(d, j, head, last + 1))
            return 1;
    return 0;
}

/* The last backward jump to `head` inside [head, end), or -1; a dead one,
 * like 3.8/3.9 leave after an if/else whose branches both jump, only when
 * no reached plain jump back closes the loop. */
int dc_back_edge(dc *d, int head, int end) {
    /* the jumps back to each instruction, chained in one pass (a scan per
     * jump target made the structurer quadratic): last_back[t] is the last
     * jump back to t, last_back[n + 1 + j] the one before jump j, or -1 */
    if (d->last_back == NULL && (d->last_back = dp_alloc_array(d->sh->ar, 2 * (size_t)d->n + 1, sizeof(int))) != NULL) {
        for (int t = 0; t < 2 * d->n + 1; t++)
            d->last_back[t] = -1;
        for (int j = 0; j < d->n; j++)
            if (dc_is_jump(d->in[j].op) && d->in[j].target >= 0 && d->in[j].target <= j) {
                d->last_back[d->n + 1 + j] = d->last_back[d->in[j].target];
                d->last_back[d->in[j].target] = j;
            }
    }
    /* (a jump already consumed is none: 3.12+ ends a cold with or except
     * handler, placed after the code, with a jump back to where the
     * statement continues.  Up to 3.10 a consumed jump back was consumed
     * by a walk that failed, a speculation over this loop: still the loop's) */
    int last = -1, last_reached = -1, legacy = d->lay.block_stack, try_reached = -1;
    if (d->last_back != NULL) {
        for (int j = d->last_back[head]; j >= 0 && last_reached < 0; j = d->last_back[d->n + 1 + j]) {
            if (j < end && legacy && d->reach[j] && try_reached < 0 && dc_legacy_inside_try(d, j))
                try_reached = j;
            if (j < end && (legacy || !d->seen[j]) && !dc_legacy_inside_try(d, j)) {
                last = last < 0 ? j : last;
                last_reached = d->reach[j] ? j : -1;
            }
        }
    } else { /* no memory for the chains: look inside */
        for (int j = head; j < end; j++) {
            if (dc_is_jump(d->in[j].op) && d->in[j].target == head && legacy && d->reach[j] &&
                dc_legacy_inside_try(d, j))
                try_reached = j;
            if (dc_is_jump(d->in[j].op) && d->in[j].target == head && (legacy || !d->seen[j]) &&
                !dc_legacy_inside_try(d, j)) {
                last = j;
                last_reached = d->reach[j] ? j : last_reached;
            }
        }
    }
    /* a dead jump stands for the loop's end only where no reached jump back
     * closes it: 3.8/3.9 end a body whose last statement is an assert
     * (raise) with `JUMP_ABSOLUTE head`, the assert's test jumping back.
     * A reached one is no end where code before it jumps further in, past
     * the block that starts right after it (a for-else ending the body,
     * whose break continues the loop: its exhausted FOR_ITER goes there),
     * nor where a continue out of an except clause past it says the body
     * goes on past it (it is a continue too, the dead jump the end). */
    if (last_reached >= 0 && d->in[last_reached].op == IR_JUMP &&
        !dc_jumps_into(d, head, last_reached, last_reached + 2, last + 1) &&
        !(try_reached > last_reached && last > try_reached))
        return last_reached;
    return last;
}

/* 3.12+: the last jump back to the loop head i, or to its line NOPs up to
 * `body`, in [i, end) that is not consumed and not in the handler code of a
 * try in the loop (a continue of an except clause), or -1.  (After
 * dc_back_edge, which builds d->last_back.) */
static int warm_back_edge(dc *d, int i, int body, int end) {
    int last = -1;
    for (int h = i; d->last_back != NULL && h <= body && h < end; h++)
        for (int j = d->last_back[h]; j >= 0; j = d->last_back[d->n + 1 + j])
            if (j > last && j < end && !d->seen[j] && d->in[j].op == IR_JUMP && !dc_in_cold_handler(d, j, i, j)) {
                last = j;
                break;
            }
    /* (that jump ends the body only if the tries whose except clauses
     * continue start before it: a try past it, reached by a jump over it,
     * is body too, and that jump back was an earlier `continue`) */
    for (int h = i; last >= 0 && h <= body && h < end; h++)
        for (int j = d->last_back[h]; j > last; j = d->last_back[d->n + 1 + j])
            if (j < end && dc_in_cold_handler(d, j, i, j) && !dc_in_cold_handler(d, j, i, last))
                return -1;
    return last;
}

/* 3.12+ places cold code at the function's end: after an async
 * comprehension's END_ASYNC_FOR, the rest of its statement, which then
 * jumps back to the end of the block the comprehension is in; after the
 * except clauses of a try whose body never completes, the rest of the
 * block, which jumps back to a loop's head.  A cold tail is straight-line
 * code that nothing else enters, followed through forward jumps to code
 * only they reach (and through the steps the walker was told to skip), up
 * to a jump to `end` (or to a copy of the code there), or a return or
 * raise; or, with `exit` (>= 0), up to a jump to exit, the loop's head.
 * Its pieces, in walking order, go to `t`. */
#define MAX_TAIL_PIECES 8
typedef struct cold_tail {
    int n;
    int start[MAX_TAIL_PIECES], last[MAX_TAIL_PIECES]; /* each piece: [start, last] */
    int stop; /* where the walk stops: the jump back, or past the return */
} cold_tail;

static int find_cold_tail(const dc *d, int from, int end, int exit, cold_tail *t) {
    t->n = 1;
    t->start[0] = from;
    for (int j = from, steps = 0; j < d->n && steps < 4096; j++, steps++) {
        const dp_instr *x = &d->in[j];
        int hop = d->skip_to[j] > j ? d->skip_to[j]
                  : x->op == IR_JUMP && x->target > j && x->target < d->n && d->nref[x->target] == 1 && x->target != end
                      ? x->target
                      : -1;
        if (hop > j) {
            if (t->n == MAX_TAIL_PIECES)
                return 0;
            t->last[t->n - 1] = j;
            t->start[t->n++] = hop;
            j = hop - 1;
            continue;
        }
        if (j > t->start[t->n - 1] && d->nref[j] > 0)
            return 0;
        if (x->op == IR_JUMP) {
            if (exit >= 0 ? x->target != exit : !dc_continues_as(d, end, x->target))
                return 0;
            t->last[t->n - 1] = j;
            t->stop = j;
            return 1;
        }
        if ((x->op == IR_RETURN_VALUE || x->op == IR_RAISE) && exit < 0) {
            t->last[t->n - 1] = j;
            t->stop = j + 1;
            return 1;
        }
        if (dc_is_jump(x->op) || dc_is_terminator(x->op) || dc_is_block_setup(x->op) || x->op == IR_FOR_ITER)
            return 0;
    }
    return 0;
}

/* Does a cold tail from `from` (the region ends at `end`) end in a jump to
 * target, a loop's head (3.12+: the rest of a loop body after a try)? */
int dc_cold_tail_jumps_to(const dc *d, int from, int end, int target) {
    cold_tail t;
    return target >= 0 && find_cold_tail(d, from, end, target, &t);
}

/* The walk of one region [start, end) of statements (dc_region): its
 * state, shared by the steps below, each of which takes the instruction at
 * w->i and says how the walk goes on. */
typedef struct walk {
    dc_stack *st;
    dp_nodes *out;
    int start, end, exit; /* the region, and where control goes when it falls off its end */
    /* the stack depth of the region's statements: a loop or with target
     * still to be bound (its slot on top) belongs to the region's first
     * statement, not below the region's statements.  (Counted in the base,
     * every instruction that leaves one value on the stack looked like a
     * statement start: a while loop's test started at its jump, and its
     * copy at the bottom was read into the body.) */
    int base;
    int i, stmt_start;
    /* region_end: the end before a cold tail; cold_resume: where the last
     * inlined comprehension or try went on (only there can a cold tail
     * start); after a try, a loop body's tail must jump back to its head */
    int region_end, cold_resume, cold_back;
    int left_clause;      /* the region's own except clause was left (POP_EXCEPT) */
    cold_tail tail;
    /* A try body ends where the exception table stops covering it, which
     * can be inside its last statement (a RETURN_VALUE cannot raise). */
    int finish, finish_h;
    int live;             /* can the walk's position be reached */
    /* A with block ends once the stack is back to what it was below its
     * __exit__ (a `return` inside nested withs pops the outer __exit__ too,
     * with the return value in its place: that is not the end yet). */
    dp_node *stop;
    int stop_base;
    dp_node **below;
    /* the with blocks the region is inside of: a statement of the region
     * that calls one's __exit__ leaves it (return, break, continue), so
     * only the unwinding of that statement can follow, not code of the
     * region, which would run inside the with in the printed form (kept
     * for shallow stacks only; 3.11+, whose unwinding dc_only_unwinds knows);
     * 3.8-3.10: the same for the values of the except blocks the region
     * is inside of, which a nested statement's POP_EXCEPT pops */
    int exits, excs;
    /* (the unwinding before a `return` pops iterators and leaves except
     * blocks with the return value in their place: not finished yet) */
    dp_node **start_stack;
} walk;

/* What a step says: not mine (the next step looks), the walk goes on at
 * w->i, the region ends here, or an error. */
enum { W_ON, W_NEXT, W_STOP, W_FAIL = -1 };

static dp_node **stack_prefix(dc *d, const dc_stack *st, int n) {
    dp_node **v = dp_alloc_array(d->sh->ar, (size_t)n, sizeof *v);
    if (v != NULL)
        memcpy(v, st->v, (size_t)n * sizeof *v);
    else
        dc_fail(d, -1, "out of memory");
    return v;
}

/* The walk's state at the region's start: the hidden inputs its caller
 * left in d (finish_stmt, finish_handler, stop_node) are taken and
 * cleared, so that nested regions do not see them. */
static int walk_begin(dc *d, walk *w, int start, int end, int exit, dc_stack *st, dp_nodes *out) {
    memset(w, 0, sizeof *w);
    w->st = st;
    w->out = out;
    w->start = w->i = w->stmt_start = start;
    w->end = end;
    w->exit = exit;
    w->base = st->n - (st->n > 0 && st->v[st->n - 1]->kind == X_SLOT);
    w->region_end = w->cold_resume = -1;
    w->cold_back = 0;
    w->finish = d->finish_stmt;
    w->finish_h = d->finish_handler;
    w->live = 1;
    w->stop = d->stop_node;
    w->stop_base = w->base;
    for (int k = 0; w->stop && k < st->n; k++)
        if (st->v[k] == w->stop)
            w->stop_base = k;
    d->finish_stmt = 0;
    d->finish_handler = -1;
    d->stop_node = NULL;
    if (w->stop && w->stop_base > 0 && (w->below = stack_prefix(d, st, w->stop_base)) == NULL)
        return -1;
    w->exits = w->base <= 64 && !d->lay.block_stack ? count_kind(st, X_WITH_EXIT) : 0;
    w->excs = w->base <= 64 && d->lay.block_stack ? count_kind(st, X_EXC) : 0;
    if (w->finish && w->base > 0 && (w->start_stack = stack_prefix(d, st, w->base)) == NULL)
        return -1;
    return 0;
}

/* The statement goes on in a cold tail: the rest of this region, walked
 * through its pieces (the skips lead there). */
static void walk_cold_tail(dc *d, walk *w) {
    if (w->i != w->cold_resume || w->i <= w->end || w->region_end >= 0 ||
        !find_cold_tail(d, w->i, w->end, w->cold_back ? w->exit : -1, &w->tail))
        return;
    cold_tail *t = &w->tail;
    w->region_end = w->end;
    w->end = t->stop;
    for (int k = 0; k + 1 < t->n; k++)
        if (d->skip_to[t->last[k]] <= t->last[k]) {
            dc_seen(d, t->last[k], t->last[k] + 1);
            dc_set(d, &d->skip_to[t->last[k]], t->start[k + 1]);
        }
    if (t->stop == t->last[t->n - 1]) /* (it stops at the jump back, not past a return) */
        dc_seen(d, t->stop, t->stop + 1);
}

/* Is there more of the region?  A try body (finish) may complete its
 * last statement past the end. */
static int walk_more(const dc *d, const walk *w) {
    const dc_stack *st = w->st;
    int i = w->i;
    return i < w->end || (w->finish && i < d->n &&
                          (st->n > w->base || !ends_stmt(d, i - 1) ||
                           (st->n > 0 && memcmp(st->v, w->start_stack, (size_t)st->n * sizeof *st->v) != 0)));
}

/* Code the walk steps over or reads as a jump: handler code to skip, a
 * duplicate of the code elsewhere, a copied exit, unreachable code. */
static int walk_skips(dc *d, walk *w) {
    int i = w->i, exit = w->exit, end = w->end;
    if (d->skip_to[i] > i) {
        w->i = d->skip_to[i];
        return W_NEXT;
    }
    if (d->nref[i] > 0)
        w->live = 1;
    int flat = w->st->n <= w->base;
    /* (3.8-3.10: a duplicate of a return with no place to join, the
     * return of a clause that leaves a try/finally, is that return:
     * walked as code of its own) */
    if (d->vjump[i] >= 0 && w->live && flat &&
        !(d->lay.block_stack && d->vjump[i] != end && d->vjump[i] != exit &&
          !dc_is_loop_exit(d, d->vjump[i]) && dc_return_tail_end(d, i) >= i)) {
        /* a duplicate of the code at vjump[i]: as if it jumped there */
        int handled;
        if (dc_jump_stmt(d, i, d->vjump[i], exit, w->out, &handled) < 0)
            return W_FAIL;
        if (!handled && d->vjump[i] != end && d->vjump[i] != exit && !dc_same_clause_end(d, exit, i, d->vjump[i]) &&
            !dc_same_clause_end(d, end, i, d->vjump[i]))
            return dc_fail(d, i, "duplicated code with no place to join");
        w->live = 0;
        w->i = i + 1;
        return W_NEXT;
    }
    /* 3.12+ copies a small exit with no line of its own (`POP_EXCEPT;
     * JUMP t` ending an except clause) into the branches that lead to
     * it: such a copy of the code where the region goes on runs as a
     * jump there does */
    int ec = w->live && flat && d->lay.copies_join_blocks ? dc_exit_copy_len(d, i, exit) : 0;
    if (ec > 0) {
        int handled;
        if (dc_jump_stmt(d, i, exit, exit, w->out, &handled) < 0)
            return W_FAIL;
        dc_seen(d, i, i + ec);
        w->live = 0;
        w->i = i + ec;
        return W_NEXT;
    }
    if ((!w->live || !d->reach[i]) && flat) {
        w->i = i + 1; /* unreachable: nothing jumps here */
        return W_NEXT;
    }
    return W_ON;
}

/* At a statement boundary: does the region end here (a try body's table
 * entries stop, a with block's __exit__ was called), or does code that
 * belongs after an enclosing statement follow? */
static int walk_statement_start(dc *d, walk *w) {
    dc_stack *st = w->st;
    int i = w->i;
    if (st->n > w->base)
        return W_ON;
    w->stmt_start = i;
    /* 3.12+: a try body (`finish`) ends where the exception table
     * stops protecting statements; its table entries can reach
     * further, over except clauses placed after the code that
     * follows the try */
    if (w->finish && i > w->start && d->lay.cold_handlers && !dc_within_try(d, i, w->finish_h) &&
        d->in[i].op != IR_NOP && (st->n == 0 || memcmp(st->v, w->start_stack, (size_t)st->n * sizeof *st->v) == 0))
        return W_STOP; /* (not with a return value in place of a with's __exit__: see start_stack) */
    /* a with block ends once __exit__ was called and its result popped */
    if (w->stop && st->n <= w->stop_base && !on_stack(st, w->stop) &&
        (st->n == 0 || memcmp(st->v, w->below, (size_t)st->n * sizeof *w->below) == 0))
        return W_STOP;
    if (w->excs > 0 && count_kind(st, X_EXC) < w->excs && !dc_only_unwinds_legacy(d, i))
        return dc_fail(d, i, "code after the try statement copied into an except clause");
    if (w->exits > 0 && (st->n == 0 || st->v[st->n - 1]->kind != X_OPAQUE) &&
        count_kind(st, X_WITH_EXIT) < w->exits && !dc_only_unwinds(d, i, w->end)) /* (X_OPAQUE: __exit__'s result, still to pop) */
        return dc_fail(d, i, "code after a with block's exit inside it");
    return W_ON;
}

/* Finally copies, and code that belongs to no statement of this region:
 * after the try body's protection, after the except clause's end. */
static int walk_copies(dc *d, walk *w) {
    dc_stack *st = w->st;
    int i = w->i, end = w->end, base = w->base;
    const dp_instr *ins = &d->in[i];
    /* 3.12+: a copy of the innermost finally body that falls through to
     * the code after it is the try body's normal exit: the body ends
     * here (try.c takes the copy), even where the exception table
     * covers code further on (an except clause placed later).  Code the
     * finally's own handler protects is still the body: the same code as
     * the finally body can end it, before the copy */
    int fin_h = d->fin_ops != NULL ? (int)(d->fin_ops - d->in) - 1 : -1;
    int cl = st->n <= base && d->lay.cold_handlers && !(fin_h >= 0 && dc_within_try(d, i, fin_h))
                 ? dc_copy_len(d, i, end, d->fin_ops, d->fin_len)
                 : 0;
    if (cl > 0 && dc_copy_falls_through(d, i + cl, end))
        return W_STOP;
    /* CPython inlines the finally body before every exit of the try body,
     * including between a return value and its RETURN_VALUE */
    int upto = w->finish ? d->n : end; /* (a try body's last return may cross its end) */
    int fin = dc_finally_copy_at(d, i, upto);
    if (fin > 0 && (st->n <= base || dc_unwinds_to_return(d, i + fin, upto))) {
        dc_take_any_finally_copy(d, i, upto);
        d->fin_copy_end = i + fin;
        w->i = i + fin;
        return W_NEXT;
    }
    /* a statement in a try body that the try's handler does not
     * protect is code after the try (3.12+ can stretch the body's
     * table entries over it to reach a cold handler): read into a
     * nested statement of the body, the handler would catch what it
     * raises.  Only the unwinding of a return, break or continue
     * leaves the protection early. */
    if (st->n <= base && d->open_try >= 0 && !d->lay.block_stack && ins->op != IR_NOP && d->reach[i] &&
        !dc_within_try(d, i, d->open_try) && !dc_only_unwinds(d, i, end))
        return dc_fail(d, i, "code after a try statement inside its body");
    /* 3.11+: past the POP_EXCEPT that ends the region's except clause
     * only its way out follows (a jump, a return of a constant, the
     * clauses it is nested in left too).  Code that computes is the
     * code after the try statement, placed there when no jump joins
     * it: read into the clause, it would run before the exception is
     * done with (a statement in the clause compiles to code before
     * its POP_EXCEPT, never after it). */
    if (!w->left_clause || st->n >= base || d->lay.block_stack)
        return W_ON;
    if (dc_enclosing_cleanup(d, i, end)) {
        dc_seen(d, i, i + 3); /* (that clause's own end binds and deletes it again) */
        w->i = i + 3;
        return W_NEXT;
    }
    if (ends_stmt(d, i - 1) && !dc_leaves_clause(ins->op) &&
        !(ins->op == IR_LOAD_FAST && i + 1 < end && d->in[i + 1].op == IR_RETURN_VALUE))
        return dc_fail(d, i, "code after the try read into its except clause");
    return W_ON;
}

/* The try at i goes on at next, past the region's end.  Code in between
 * that is seen already and none of the try's own cold handlers is no code
 * of the try: a join found there (3.12+ copies the code after a loop into
 * an except clause that breaks) structured it, and it will be again (an
 * enclosing if's jump over its else is seen already).  Returns -1 then,
 * or when the try's cold handlers lie there and its clauses do not join in
 * a cold tail that jumps back to the enclosing loop's head; 1 when they
 * do (the rest of the loop body, walked from next); else 0. */
static int past_region(dc *d, const walk *w, int i, int next) {
    int end = w->end, handlers = 0;
    if (!d->lay.copies_join_blocks || w->finish)
        return 0;
    for (int j = end; j < next && j < d->n; j++) {
        if (!d->seen[j] || d->in[j].op == IR_JUMP || d->in[j].op == IR_NOP)
            continue;
        if (!dc_in_cold_handler(d, j, i, end))
            return -1;
        handlers = 1;
    }
    if (next > end && d->loop != NULL && w->exit == d->loop->head && dc_cold_tail_jumps_to(d, next, end, w->exit))
        return 1;
    return handlers ? -1 : 0;
}

/* try, with and loop statements that start at i (3.11+ also a try
 * entered with values on the stack). */
static int walk_compound(dc *d, walk *w) {
    dc_stack *st = w->st;
    dp_nodes *out = w->out;
    int i = w->i, end = w->end, exit = w->exit, base = w->base, start = w->start, next = i + 1;
    const dp_instr *ins = &d->in[i];
    /* 3.11+: a try entered with values on the stack (dc_try) */
    if (st->n > base && !d->lay.block_stack && ins->op != IR_FOR_ITER) {
        int r = dc_try(d, i, end, exit, st, out, &next, 1);
        if (r < 0)
            return W_FAIL;
        if (r > 0) {
            w->live = d->region_live;
            w->i = next;
            return W_NEXT;
        }
    }
    /* constructs that start at a statement boundary */
    if (st->n <= base || (st->n > 0 && st->v[st->n - 1]->kind == X_ITER && ins->op == IR_FOR_ITER) ||
        ins->op == IR_GET_ANEXT || dc_is_legacy_async_for(d, i)) {
        int r = dc_try(d, i, end, exit, st, out, &next, 0);
        if (r < 0)
            return W_FAIL;
        if (r > 0) {
            int past = past_region(d, w, i, next);
            if (past < 0)
                return dc_fail(d, i, "try statement runs past its enclosing block"), W_FAIL;
            w->live = d->region_live; /* (the code after it can be reached only by a jump) */
            w->i = next;
            if (past > 0) {
                w->cold_resume = next;
                w->cold_back = 1;
            }
            return W_NEXT;
        }
        if ((ins->op == IR_GET_ANEXT && st->n > 0 && dc_handler_at(d, i) >= 0 &&
             d->in[dc_handler_at(d, i)].op == IR_END_ASYNC_FOR) ||
            (st->n > 0 && dc_is_legacy_async_for(d, i))) {
            if (dc_async_for_loop(d, i, end, st, out, &next) < 0)
                return W_FAIL;
            w->i = next;
            return W_NEXT;
        }
        /* (the body of a `while True:` starts at the loop's head: the
         * jumps back there are its continues, not another loop) */
        if (ins->op != IR_FOR_ITER && d->nref[i] > 0 && !(i == start && d->loop && d->loop->head == i)) {
            int last = dc_back_edge(d, i, end);
            /* (3.10+ `while True:` keeps a NOP for its line: a
             * `continue` jumps to it, the body's end past it; up to
             * 3.10 also where the only jumps to the NOP are continues
             * out of except clauses, which dc_back_edge leaves out, and
             * from 3.12 on where they come from except clauses placed
             * after the function: the jump back past the NOP still
             * closes the body) */
            if (ins->op == IR_NOP && (last >= 0 || (d->lay.block_stack && d->last_back != NULL && d->last_back[i] >= 0) ||
                                      (d->lay.cold_handlers && dc_cold_back_edge(d, i, end) >= 0))) {
                int body = dc_past_line_nops(d, i);
                for (int h = i + 1; h <= body && h < end; h++) {
                    int l2 = dc_back_edge(d, h, end);
                    last = l2 > last ? l2 : last;
                }
            }
            /* (3.12+: a `continue` in an except clause, placed after the
             * function, is no end of the body that reaches its own jump back) */
            if (last > i && d->lay.cold_handlers && dc_in_cold_handler(d, last, i, last)) {
                int warm = warm_back_edge(d, i, dc_past_line_nops(d, i), end);
                last = warm > i ? warm : last;
            }
            int E = dc_legacy_loop_end(d, i, last, end);
            if (E > i) {
                if (dc_while_true_to(d, i, E, st, out, &next) < 0)
                    return W_FAIL;
                w->i = next;
                return W_NEXT;
            }
            /* (3.8-3.10: a try or with opened here whose handler lies past
             * that jump does not end there: the jump is a `continue` of
             * the loop whose body starts with the try) */
            if (last > i && d->in[last].op == IR_JUMP && !jumps_into_body(d, last + 1, end, i, last) &&
                !(dc_is_block_setup(ins->op) && ins->target > last)) {
                int r = dc_while_without_bottom_test(d, i, last, end, exit, st, out, &next);
                if (r == 0)
                    r = dc_while_true(d, i, last, end, exit, st, out, &next);
                if (r < 0)
                    return W_FAIL;
                if (r == REST_OF_REGION)
                    w->live = d->region_live; /* it holds the rest of the region */
                w->i = next;
                return W_NEXT;
            }
            /* (d->last_back[i], built by dc_back_edge, is the last jump back here) */
            int cold = last < 0 && d->lay.cold_handlers && d->last_back != NULL && d->last_back[i] >= end
                           ? dc_cold_back_edge(d, i, end) : -1;
            if (cold > 0) {
                if (dc_while_true_cold(d, i, cold, end, st, out, &next) < 0)
                    return W_FAIL;
                w->i = next;
                return W_NEXT;
            }
        }
    }
    return W_ON;
}

/* Expressions: the stack machine (expr.c), inlined comprehensions, match
 * statements, chained comparisons, assignments made by stack shuffles,
 * the 3.8-3.10 block-stack ops. */
static int walk_expression(dc *d, walk *w) {
    dc_stack *st = w->st;
    dp_nodes *out = w->out;
    int i = w->i, end = w->end, base = w->base, stmt_start = w->stmt_start, next = i + 1;
    const dp_instr *ins = &d->in[i];
    dc_mark(d, i);
    /* (a try body's last return may unwind past its end, out of a try
     * nested in the clause) */
    if (dc_is_except_cleanup(d, i, w->finish ? d->n : end)) {
        dc_seen(d, i, i + 3);
        w->i = i + 3;
        return W_NEXT;
    }
    int after_swaps;
    if (swap_needs_temps(d, i) && ins->arg >= 2 && ins->arg <= st->n && !swap_assign_fits(d, i, base, st, &after_swaps)) {
        for (int k = st->n - ins->arg; k < st->n - 1; k++)
            if (needs_temp(d, st->v[k]) && st->v[k]->kind != E_NAME && temps_through(d, st, k, out, stmt_start) < 0)
                return W_FAIL;
    }
    int r = d->lay.inline_comprehensions ? dc_inline_comprehension(d, i, st, out, &next) : 0;
    if (r > 0) {
        w->cold_resume = next;
        w->cold_back = 0;
    }
    if (r == 0 && (r = dc_match(d, i, base, st, out, &next)) > 0) {
        dc_seen(d, i, next); /* match.c consumes the whole statement */
        w->live = d->region_live;
    }
    if (r == 0) /* (before the COPY that starts a 3.8-3.10 link) */
        r = dc_chain_compare(d, i, st, &next);
    if (r == 0 && ins->op == IR_COPY && copy_needs_temp(d, i, st) &&
        temps_through(d, st, st->n - ins->arg, out, stmt_start) < 0)
        return W_FAIL;
    if (r == 0)
        r = swap_assign(d, i, base, st, out, stmt_start, &next);
    if (r == 0)
        r = dc_expr_step(d, i, st);
    if (r == 0 && d->lay.block_stack) /* block-stack try/with (try_legacy.c) */
        r = dc_legacy_op(d, i, end, st, out, &next);
    if (r < 0)
        return W_FAIL;
    if (r > 0) {
        w->i = next;
        return W_NEXT;
    }
    return W_ON;
}

/* Stores, deletes, unpacking and imports: 1 if instruction i is one (its
 * statement added, *next where the walk goes on), 0 if not, -1 on error. */
static int store_stmt(dc *d, walk *w, int i, int *next) {
    const dp_instr *ins = &d->in[i];
    dc_stack *st = w->st;
    dp_nodes *out = w->out;
    int stmt_start = w->stmt_start, base = w->base;
    int r;
    dp_node *v, *t, *x;
    switch (ins->op) {
    case IR_STORE_NAME: case IR_STORE_FAST: case IR_STORE_GLOBAL: case IR_STORE_DEREF:
        if ((r = static_swap_assign(d, i, base, st, out, stmt_start, next)) != 0) {
            if (r < 0)
                return -1;
            break;
        }
        if ((v = dc_pop(d, st, i)) == NULL || store(d, name_target(d, ins), v, st, out, stmt_start, i) < 0)
            return -1;
        break;
    case IR_STORE_ATTR:
        if ((x = dc_pop(d, st, i)) == NULL || (v = dc_pop(d, st, i)) == NULL || (t = dc_node(d, E_ATTR)) == NULL)
            return -1;
        t->a = x;
        t->s = ins->name;
        if (store(d, t, v, st, out, stmt_start, i) < 0)
            return -1;
        break;
    case IR_STORE_SUBSCR: {
        dp_node *idx = dc_pop(d, st, i);
        if (idx == NULL || (x = dc_pop(d, st, i)) == NULL || (v = dc_pop(d, st, i)) == NULL ||
            (t = dc_node(d, E_SUBSCR)) == NULL)
            return -1;
        t->a = x;
        t->b = idx;
        if (store(d, t, v, st, out, stmt_start, i) < 0)
            return -1;
        break;
    }
    case IR_STORE_SLICE: {
        dp_node *hi = dc_pop(d, st, i), *lo = hi ? dc_pop(d, st, i) : NULL;
        dp_node *sl = dc_node(d, E_SLICE);
        if (lo == NULL || sl == NULL || (x = dc_pop(d, st, i)) == NULL || (v = dc_pop(d, st, i)) == NULL ||
            (t = dc_node(d, E_SUBSCR)) == NULL)
            return -1;
        sl->a = dc_is_const_kind(lo, DP_CONST_NONE) ? NULL : lo;
        sl->b = dc_is_const_kind(hi, DP_CONST_NONE) ? NULL : hi;
        t->a = x;
        t->b = sl;
        if (store(d, t, v, st, out, stmt_start, i) < 0)
            return -1;
        break;
    }
    case IR_DELETE_NAME: case IR_DELETE_FAST: case IR_DELETE_GLOBAL: case IR_DELETE_DEREF:
        if (add_delete(d, st, out, name_target(d, ins), stmt_start, ins->op) < 0)
            return -1;
        break;
    case IR_DELETE_ATTR:
        if ((x = dc_pop(d, st, i)) == NULL || (t = dc_node(d, E_ATTR)) == NULL)
            return -1;
        t->a = x;
        t->s = ins->name;
        if (add_delete(d, st, out, t, stmt_start, ins->op) < 0)
            return -1;
        break;
    case IR_DELETE_SUBSCR: {
        dp_node *idx = dc_pop(d, st, i);
        if (idx == NULL || (x = dc_pop(d, st, i)) == NULL || (t = dc_node(d, E_SUBSCR)) == NULL)
            return -1;
        t->a = x;
        t->b = idx;
        if (add_delete(d, st, out, t, stmt_start, ins->op) < 0)
            return -1;
        break;
    }
    case IR_UNPACK_SEQUENCE: case IR_UNPACK_EX:
        if (unpack(d, ins, st, out, stmt_start) < 0)
            return -1;
        break;
    case IR_IMPORT_FROM:
        if ((x = dc_top(d, st, 0, i)) == NULL)
            return -1;
        if ((r = import_from(d, ins, x, st)) < 0)
            return -1;
        if (r == 0)
            return dc_fail(d, i, "cannot structure %s here", dp_irop_name(ins->op));
        break;
    case IR_IMPORT_STAR: {
        if ((x = dc_pop(d, st, i)) == NULL)
            return -1;
        dp_node *s = dc_stmt(d, S_IMPORTFROM, stmt_start), *al = dc_node(d, E_ALIAS);
        if (s == NULL || al == NULL || x->kind != X_IMPORT)
            return -1;
        s->s = x->s[0] ? x->s : NULL;
        s->op = x->op;
        al->s = "*";
        if (dc_add(d, &s->l1, al) < 0 || dc_add(d, out, s) < 0)
            return -1;
        break;
    }
    default:
        return 0;
    }
    return 1;
}

/* After the POP_TOP at j - 1 of the innermost for loop's iterator: the end
 * (RETURN_VALUE) of a copy of the return that the loop's break goes to, or
 * -1.  A `return v` inside the loop computes v before it pops the iterator
 * (but a constant, loaded after it); a value computed after the POP_TOP is
 * the code after the loop, which CPython inlines into the break's jump
 * there when it is a small exit block: the statement is a `break`. */
static int break_to_return_copy(const dc *d, int j) {
    const dc_loop *lp = d->loop;
    while (j < d->n && d->in[j].op == IR_NOP)
        j++;
    if (lp == NULL || !lp->is_for || lp->brk < 0 || j >= d->n)
        return -1;
    int e = dc_return_tail_end(d, j);
    if (e <= j || (e == j + 1 && d->in[j].op == IR_LOAD_CONST) || !dc_continues_as(d, j, lp->brk))
        return -1;
    return e;
}

/* A value popped as a statement or added to a collection: 1 if instruction i is one (its
 * statement added, *next where the walk goes on), 0 if not, -1 on error. */
static int value_stmt(dc *d, walk *w, int i, int *next) {
    const dp_instr *ins = &d->in[i];
    dc_stack *st = w->st;
    dp_nodes *out = w->out;
    int stmt_start = w->stmt_start;
    dp_node *v, *x;
    switch (ins->op) {
    case IR_POP_TOP:
        if ((v = dc_pop(d, st, i)) == NULL)
            return -1;
        if (v->kind == X_ITER && !leaves_loop(d, i + 1)) {
            dc_fail(d, i, "a loop's iterator popped by no break or return");
            return -1;
        }
        int copy_end = v->kind == X_ITER ? break_to_return_copy(d, i + 1) : -1;
        if (copy_end >= 0) {
            if (dc_add(d, out, dc_stmt(d, S_BREAK, stmt_start)) < 0)
                return -1;
            dc_seen(d, i + 1, copy_end + 1);
            *next = copy_end + 1;
            w->live = 0;
            break;
        }
        if (v->kind == X_SLOT && v->a->l1.n > 1 && v->op >= 0 && v->op < v->a->l1.n) {
            /* 3.12+ drops a store that a later one in the same target
             * overwrites (`a, _, _ = t`): store() names the slot (a
             * single slot dropped is a `with` without `as`) */
            if ((v->a->l1.v[v->op] = dc_node(d, X_OPAQUE)) == NULL)
                return -1;
            break;
        }
        if (v->kind == E_CONST)
            break; /* (a constant's statement compiles to nothing: Dynamo pops one it pushed) */
        if (v->kind < DP_NODE_KIND_COUNT && dc_flush_leftovers(d, st, 0, NULL, out, stmt_start) < 0)
            return -1;
        if (v->kind < DP_NODE_KIND_COUNT && v->kind != E_NAME) {
            if (add_simple(d, out, S_EXPR, v, stmt_start) < 0)
                return -1;
        } else if (v->kind == E_NAME && !on_stack(st, v) && strncmp(v->s, "__temp_", 7) != 0) {
            if (add_simple(d, out, S_EXPR, v, stmt_start) < 0)
                return -1;
        }
        break;
    case IR_PRINT_EXPR:
        if ((v = dc_pop(d, st, i)) == NULL || add_simple(d, out, S_EXPR, v, stmt_start) < 0)
            return -1;
        break;
    case IR_LIST_EXTEND: case IR_SET_UPDATE: case IR_DICT_UPDATE: case IR_DICT_MERGE:
        /* a collection kept in a temporary: mutate it with a call */
        if ((v = dc_pop(d, st, i)) == NULL)
            return -1;
        if (mutate(d, st, ins->arg - 1, ins->op == IR_LIST_EXTEND ? "extend" : "update", v, NULL, out,
                   stmt_start) < 0)
            return -1;
        break;
    case IR_LIST_APPEND: case IR_SET_ADD: case IR_MAP_ADD: {
        /* the display below the value (and the key): 3.9+ builds a
         * dict of more than 15 items by MAP_ADD */
        int below = ins->op == IR_MAP_ADD ? 3 : 2;
        x = ins->arg == 1 && st->n >= below ? st->v[st->n - below] : NULL;
        int display = x && (ins->op == IR_MAP_ADD ? x->kind == E_DICT : x->kind == E_LIST || x->kind == E_SET);
        if (display && (x = dc_own_slot(d, st, st->n - below)) == NULL)
            return -1;
        if (display && ins->op == IR_MAP_ADD) {
            dp_node *val = dc_pop(d, st, i), *key = val ? dc_pop(d, st, i) : NULL;
            if (key == NULL || dc_add(d, &x->l1, key) < 0 || dc_add(d, &x->l2, val) < 0)
                return -1;
            break;
        }
        if (!is_comprehension_code(d) && !display) {
            dp_node *val = dc_pop(d, st, i), *key = NULL;
            if (val == NULL || (ins->op == IR_MAP_ADD && (key = dc_pop(d, st, i)) == NULL))
                return -1;
            if (mutate(d, st, ins->arg - 1, ins->op == IR_LIST_APPEND ? "append" : ins->op == IR_SET_ADD ? "add" : NULL,
                       val, key, out, stmt_start) < 0)
                return -1;
            break;
        }
        if (display) {
            /* building a display: [*a, b] */
            if ((v = dc_pop(d, st, i)) == NULL || dc_add(d, &x->l1, v) < 0)
                return -1;
            break;
        }
        dp_node *ap = dc_stmt(d, X_APPEND, stmt_start);
        if (ap == NULL || (v = dc_pop(d, st, i)) == NULL)
            return -1;
        if (ins->op == IR_MAP_ADD) {
            ap->b = v;
            if ((ap->a = dc_pop(d, st, i)) == NULL)
                return -1;
        } else {
            ap->a = v;
        }
        if (dc_add(d, out, ap) < 0)
            return -1;
        break;
    }
    default:
        return 0;
    }
    return 1;
}

/* return, raise, and the end of an except block: 1 if instruction i is one (its
 * statement added, *next where the walk goes on), 0 if not, -1 on error. */
static int exit_stmt(dc *d, walk *w, int i, int *next) {
    const dp_instr *ins = &d->in[i];
    dc_stack *st = w->st;
    dp_nodes *out = w->out;
    int stmt_start = w->stmt_start, base = w->base, exit = w->exit, end = w->end;
    dp_node *v;
    (void)next;
    switch (ins->op) {
    case IR_RETURN_VALUE: {
        /* values left below the returned one are still computed, in their
         * order (Dynamo's code returns over a list it built) */
        int left = 0;
        for (int k = base; k + 1 < st->n; k++)
            left |= needs_temp(d, st->v[k]);
        if (left && spill_pending(d, st, st->n, SIZE_MAX, NULL, out, stmt_start) < 0)
            return -1;
        if ((v = dc_pop(d, st, i)) == NULL)
            return -1;
        /* an async generator can only `return`, which returns None */
        if ((d->code->flags & DP_CO_ASYNC_GENERATOR) && dc_is_const_kind(v, DP_CONST_NONE))
            v = NULL;
        if (add_simple(d, out, S_RETURN, v, stmt_start) < 0)
            return -1;
        out->v[out->n - 1]->op2 = ins->arg2 == DP_RETURN_ARM; /* (see returned_ifexps) */
        st->n = base < st->n ? base : st->n;
        break;
    }
    case IR_RETURN_GENERATOR: /* the lifter drops the POP_TOP that follows */
    case IR_SETUP_ANNOTATIONS:
        break;
    case IR_RAISE: {
        dp_node *s = dc_stmt(d, S_RAISE, stmt_start);
        if (s == NULL)
            return -1;
        if (ins->arg >= 2 && (s->b = dc_pop(d, st, i)) == NULL)
            return -1;
        if (ins->arg >= 1 && (s->a = dc_pop(d, st, i)) == NULL)
            return -1;
        if (ins->arg == 1 && st->n == base && dc_is_assert_false(d, stmt_start, s)) {
            /* `assert False, m`: the test is folded away */
            static const dp_const false_const = {.kind = DP_CONST_FALSE};
            dp_node *m = s->a->kind == E_CALL ? s->a->l1.v[0] : NULL;
            s->kind = S_ASSERT;
            if ((s->a = dc_const(d, &false_const)) == NULL)
                return -1;
            s->b = m;
        }
        if (dc_add(d, out, s) < 0)
            return -1;
        break;
    }
    case IR_RERAISE: {
        /* 3.12+ copies the RERAISE ending a finally body into its
         * branches (and the code after the try into the same places of
         * the body's normal-path copy, which then matches no finally
         * body): not a `raise`, and a finally we cannot take apart */
        int to = exit >= 0 ? exit : end;
        if (st->n > 0 && st->v[st->n - 1]->kind == X_EXC && to > i && to < d->n &&
            d->in[to].op == IR_RERAISE && d->in[to].arg == ins->arg) {
            dc_fail(d, i, "finally body with its exit copied into a branch");
            return -1;
        }
        if ((v = dc_pop(d, st, i)) == NULL || add_simple(d, out, S_RAISE, NULL, stmt_start) < 0)
            return -1;
        break;
    }
    case IR_POP_EXCEPT:
        if (!d->lay.block_stack && !dc_only_unwinds(d, i + 1, end)) {
            dc_fail(d, i, "code after the try statement copied into an except clause");
            return -1;
        }
        if ((v = dc_pop(d, st, i)) == NULL)
            return -1;
        if (v->kind == X_PREV_EXC && st->n < base)
            w->left_clause = 1; /* the region's own except clause ends here */
        break;
    default:
        return 0;
    }
    return 1;
}

/* with, for, and the jumps: 1 if instruction i is one (its
 * statement added, *next where the walk goes on), 0 if not, -1 on error. */
static int flow_stmt(dc *d, walk *w, int i, int *next) {
    const dp_instr *ins = &d->in[i];
    dc_stack *st = w->st;
    dp_nodes *out = w->out;
    int stmt_start = w->stmt_start, exit = w->exit, end = w->end;
    int r;
    switch (ins->op) {
    case IR_BEFORE_WITH: case IR_BEFORE_ASYNC_WITH:
        if ((r = dc_with(d, i, end, st, out, next)) < 0)
            return -1;
        if (r == 1)
            w->live = 0;
        break;
    case IR_FOR_ITER:
        if ((r = dc_for_loop(d, i, end, exit, st, out, next)) < 0)
            return -1;
        if (r == REST_OF_REGION)
            w->live = d->region_live; /* its else holds the rest of the region */
        break;
    case IR_JUMP: {
        int handled;
        if (dc_jump_stmt(d, i, ins->target, exit, out, &handled) < 0)
            return -1;
        if (!handled) {
            if (ins->target > i && ins->target <= end && skippable(d, i + 1, ins->target)) {
                *next = ins->target; /* over handler code placed in between */
            } else if (ins->target == end) {
                *next = end; /* the region ends here */
            } else if (ins->target > i && (r = dc_far_jump_stmt(d, i, ins->target, end, exit, out)) != 0) {
                if (r < 0)
                    return -1;
                if (r == FAR_GOES_ON)
                    *next = end; /* the region ends here */
            } else {
                dc_fail(d, i, "unstructured jump to offset %d", ins->target < d->n ? d->in[ins->target].offset : -1);
                return -1;
            }
        }
        break;
    }
    case IR_POP_JUMP_IF_FALSE: case IR_POP_JUMP_IF_TRUE: case IR_POP_JUMP_IF_NONE:
    case IR_POP_JUMP_IF_NOT_NONE: case IR_JUMP_IF_FALSE_OR_POP: case IR_JUMP_IF_TRUE_OR_POP:
        d->cond_finishes = w->finish;
        if ((r = dc_cond(d, stmt_start, i, end, exit, st, out, next)) < 0)
            return -1;
        if (r == REST_OF_REGION)
            w->live = d->region_live; /* the statement holds the rest of the region */
        break;
    default:
        return 0;
    }
    return 1;
}

/* Anything else at i is a simple statement (or a jump). */
static int walk_statement(dc *d, walk *w) {
    int i = w->i, next = i + 1, r;
    const dp_instr *ins = &d->in[i];
    if ((r = store_stmt(d, w, i, &next)) == 0 && (r = value_stmt(d, w, i, &next)) == 0 &&
        (r = exit_stmt(d, w, i, &next)) == 0 && (r = flow_stmt(d, w, i, &next)) == 0)
        return dc_fail(d, i, "cannot structure %s here", dp_irop_name(ins->op));
    if (r < 0)
        return W_FAIL;
    if (dc_is_terminator(ins->op))
        w->live = 0;
    if (next <= i) /* a walk only moves forward: it always ends */
        return dc_fail(d, i, "structuring made no progress at %s", dp_irop_name(ins->op));
    w->i = next;
    return W_NEXT;
}

/* A for, with or match statement is made at its FOR_ITER, its with's
 * setup or its first pattern, after its iterable, manager or subject: its
 * offset is where that began, the statement's start (`at`), as any other
 * statement's is (folded_test.c places a statement by it). */
static void header_offset(dc *d, const dp_nodes *out, int n0, int at) {
    dp_node *s = n0 < out->n ? out->v[n0] : NULL;
    if (s != NULL && (s->kind == S_FOR || s->kind == S_WITH || s->kind == S_MATCH) && at >= 0 && at < d->n &&
        s->offset > d->in[at].offset)
        s->offset = d->in[at].offset;
}

/* The walk: at each instruction the steps in order, until one takes it. */
static int walk_region(dc *d, walk *w) {
    static int (*const steps[])(dc *, walk *) = {walk_skips, walk_statement_start, walk_copies, walk_compound,
                                                 walk_expression, walk_statement};
    for (;;) {
        walk_cold_tail(d, w);
        if (!walk_more(d, w))
            break;
        int r = W_ON, n0 = w->out->n;
        for (size_t k = 0; r == W_ON && k < sizeof steps / sizeof *steps; k++)
            r = steps[k](d, w);
        if (r == W_FAIL)
            return -1;
        if (r == W_NEXT)
            header_offset(d, w->out, n0, w->stmt_start);
        if (r == W_STOP)
            break;
    }
    d->region_jumps_on = w->region_end >= 0 && w->tail.stop < d->n && d->in[w->tail.stop].op == IR_JUMP &&
                         d->in[w->tail.stop].target == w->exit;
    if (w->region_end >= 0) {
        /* walked: the walks of enclosing blocks step over its pieces */
        for (int k = 0; k < w->tail.n; k++)
            if (d->skip_to[w->tail.start[k]] <= w->tail.start[k])
                dc_set(d, &d->skip_to[w->tail.start[k]], w->tail.last[k] + 1);
        w->i = w->region_end;
    }
    d->region_stop = w->i;
    d->region_live = w->live;
    return 0;
}

int dc_region(dc *d, int start, int end, int exit, dc_stack *st, dp_nodes *out) {
    if (dc_nest(d->sh, DP_MAX_NESTING * 4, "blocks and expressions") < 0) {
        dp_error_where(d->sh->err, d->code->qualname);
        return -1;
    }
    int saved_base = d->base;
    dp_node **saved_vals = d->base_vals;
    walk w;
    int rc = walk_begin(d, &w, start, end, exit, st, out);
    if (rc == 0) {
        d->base = w.base;
        /* (kept for shallow stacks only: a copy per region of a deep one
         * would cost memory in proportion to regions times depth) */
        d->base_vals = w.base > 0 && w.base <= 64 ? dp_alloc_array(d->sh->ar, (size_t)w.base, sizeof *d->base_vals)
                                                  : NULL;
        if (d->base_vals)
            memcpy(d->base_vals, st->v, (size_t)w.base * sizeof *d->base_vals);
        rc = walk_region(d, &w);
    }
    d->base = saved_base;
    d->base_vals = saved_vals;
    d->sh->depth--;
    return rc;
}

int dc_block(dc *d, int start, int end, dc_stack *st, dp_nodes *out) {
    return dc_region(d, start, end, -1, st, out);
}

dp_node *dc_value_region(dc *d, int start, int end, dc_stack *st) {
    int base = st->n;
    dp_nodes tmp = {0};
    if (dc_region(d, start, end, end, st, &tmp) < 0)
        return NULL;
    if (tmp.n != 0 || st->n != base + 1) {
        dc_fail(d, start, "expected one value from this expression");
        return NULL;
    }
    return dc_pop(d, st, start);
}
