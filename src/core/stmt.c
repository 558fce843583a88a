/* Statements and control flow: the linear walk over a region of IR, stores
 * and simple statements, conditionals (if/elif/else, ternaries, and/or,
 * assert, break/continue) and loops (for, while). try/with are in try.c. */
#include <stdio.h>
#include <string.h>

#include "dc.h"

/* A speculation that fails must leave no trace: the error, the try
 * statements it structured, a pending chained assignment, temporaries. */
void dc_spec_begin(dc *d, dc_spec *s) {
    s->saved = *d->sh->err;
    s->pending_chain = d->pending_chain;
    s->ntemps = d->sh->ntemps;
    s->nopened = d->nopened;
}

int dc_spec_end(dc *d, dc_spec *s, int result) {
    if (result >= 0 && !d->sh->err->set)
        return 1;
    *d->sh->err = s->saved;
    d->pending_chain = s->pending_chain;
    d->sh->ntemps = s->ntemps;
    while (d->nopened > s->nopened)
        d->handlers[d->opened_log[--d->nopened]].opened = 0;
    return 0;
}

int dc_open_handler(dc *d, dc_handler *h) {
    if (h->opened)
        return 0;
    if (d->nopened == d->capopened) {
        int cap = d->capopened ? d->capopened * 2 : 16;
        int *log = dp_alloc_array(d->sh->ar, (size_t)cap, sizeof *log);
        if (log == NULL)
            return dc_fail(d, h->at, "out of memory");
        if (d->nopened)
            memcpy(log, d->opened_log, (size_t)d->nopened * sizeof *log);
        d->opened_log = log;
        d->capopened = cap;
    }
    d->opened_log[d->nopened++] = (int)(h - d->handlers);
    h->opened = 1;
    return 0;
}

dp_node *dc_stmt(dc *d, int kind, int at) {
    dp_node *n = dc_node(d, kind);
    if (n && at >= 0 && at < d->n) {
        n->line = d->in[at].line;
        /* the line map covers the top-level code object only: offsets of
         * nested code objects would collide with its own */
        if (d->outer == NULL)
            n->offset = d->in[at].offset;
    }
    return n;
}

int dc_same_instr(const dp_instr *a, const dp_instr *b) {
    return a->op == b->op && a->arg == b->arg && a->cst == b->cst &&
           (a->name == b->name || (a->name != NULL && b->name != NULL && strcmp(a->name, b->name) == 0));
}

int dc_is_block_setup(int op) {
    return op == IR_SETUP_FINALLY || op == IR_SETUP_WITH || op == IR_SETUP_ASYNC_WITH;
}

int dc_is_pop_jump(int op) { return dp_is_pop_jump(op); }

/* (FOR_ITER is a loop's, CALL_FINALLY 3.8's finally machinery) */
int dc_is_jump(int op) { return dp_is_jump(op) && op != IR_FOR_ITER && op != IR_CALL_FINALLY; }

static int is_terminator(int op) { return !dp_falls_through(op); }

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

static int is_cond_jump(int op) { return dc_is_jump(op) && op != IR_JUMP; }

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
static int flush_leftovers(dc *d, dc_stack *st, int operands, const dp_node *value, dp_nodes *out, int at) {
    return spill_pending(d, st, st->n - operands, SIZE_MAX, value, out, at);
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

static int same_stack(const dc_stack *a, const dc_stack *b) {
    return a->n == b->n && (a->n == 0 || memcmp(a->v, b->v, (size_t)a->n * sizeof *a->v) == 0);
}

/* After a SWAP the stack no longer lists values in the order they were
 * computed, which printing (and flush_leftovers) relies on: the earlier
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

static int declare(dc *d, dp_nodes *decls, const char *name) {
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

static int is_plain_def(const dp_node *fn, const dp_node *target) {
    return fn->kind == X_FUNC && target->kind == E_NAME && fn->cst->code &&
           strcmp(fn->cst->code->name, target->s) == 0 && strcmp(target->s, "<lambda>") != 0;
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
    if (!walrus && !quiet && flush_leftovers(d, st, 0, v, out, at) < 0)
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
    if (is_plain_def(core, target) || (core->kind == E_CALL && core->a && core->a->kind == X_BUILD_CLASS)) {
        dp_node *def = core->kind == X_FUNC ? dc_funcdef(d, core, target->s, at) : dc_classdef(d, core, target->s, at);
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

static int is_simple_load(int op) {
    return op == IR_LOAD_FAST || op == IR_LOAD_NAME || op == IR_LOAD_GLOBAL || op == IR_LOAD_DEREF ||
           op == IR_LOAD_CONST || op == IR_LOAD_ATTR;
}

static int is_name_store(int op) {
    return op == IR_STORE_FAST || op == IR_STORE_NAME || op == IR_STORE_GLOBAL || op == IR_STORE_DEREF;
}

/* The end of the assignment target starting at j: a name, `obj.attr`,
 * `obj[key]` or a nested unpacking of such targets; -1 if there is none. */
static int target_end(const dc *d, int j, int depth) {
    int loads = 0;
    while (j + loads < d->n && loads < 4 && is_simple_load(d->in[j + loads].op))
        loads++;
    int op = j + loads < d->n ? d->in[j + loads].op : IR_NOP;
    if ((loads == 0 && is_name_store(op)) || (loads >= 1 && op == IR_STORE_ATTR) ||
        (loads >= 2 && op == IR_STORE_SUBSCR))
        return j + loads + 1;
    if (loads > 0 || (op != IR_UNPACK_SEQUENCE && op != IR_UNPACK_EX) || depth > 8)
        return -1;
    int arg = d->in[j].arg;
    int count = op == IR_UNPACK_EX ? (arg & 0xff) + (arg >> 8) + 1 : arg;
    if (count > 64)
        return -1;
    for (j++; count > 0 && j >= 0; count--)
        j = target_end(d, j, depth + 1);
    return j;
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
static int swap_assign(dc *d, int i, int base, dc_stack *st, dp_nodes *out, int at, int *next) {
    int after = i + 1;
    int k = d->in[i].op == IR_SWAP ? swap_run_reverses(d, i, &after) : 0;
    if (k == 0 || st->n - base < k || after >= d->n)
        return 0;
    /* exactly k targets must follow */
    for (int j = after, t = 0; t < k; t++)
        if ((j = target_end(d, j, 0)) < 0)
            return 0;
    for (int q = 0; q < k; q++) {
        const dp_node *v = st->v[st->n - 1 - q];
        if (v->kind >= DP_NODE_KIND_COUNT)
            return 0;
    }
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
    if (flush_leftovers(d, st, 0, NULL, out, at) < 0)
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
    while (i + k < d->n && is_name_store(d->in[i + k].op) && k < 3 && k < st->n - base)
        k++;
    if (k < 2 || (i + k < d->n && is_name_store(d->in[i + k].op) && k < st->n - base))
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
    if (!quiet && flush_leftovers(d, st, k, NULL, out, at) < 0)
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
        if (!d->is_module && declare(d, &d->globals, ins->name) < 0)
            return NULL;
    } else if ((ins->op == IR_STORE_DEREF || ins->op == IR_DELETE_DEREF) && !d->is_class_body &&
               is_freevar(d, ins->name)) {
        if (declare(d, &d->nonlocals, ins->name) < 0)
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
    if (!is_private_local(d, target, op) && flush_leftovers(d, st, 0, NULL, out, at) < 0)
        return -1;
    if (target->kind == E_NAME && protect_name(d, st, target->s, NULL, out, at) < 0)
        return -1;
    dp_node *s = dc_stmt(d, S_DELETE, at);
    if (s == NULL || dc_add(d, &s->l1, target) < 0)
        return -1;
    return dc_add(d, out, s);
}

/* `e = None; del e` closes every `except ... as e` body: not source. */
static int is_except_cleanup(const dc *d, int i, int end) {
    return d->except_name && i + 2 < end && d->in[i].op == IR_LOAD_CONST && d->in[i].cst &&
           d->in[i].cst->kind == DP_CONST_NONE &&
           (d->in[i + 1].op == IR_STORE_FAST || d->in[i + 1].op == IR_STORE_NAME || d->in[i + 1].op == IR_STORE_DEREF) &&
           (d->in[i + 2].op == IR_DELETE_FAST || d->in[i + 2].op == IR_DELETE_NAME || d->in[i + 2].op == IR_DELETE_DEREF) &&
           strcmp(d->in[i + 1].name, d->except_name) == 0 && strcmp(d->in[i + 2].name, d->except_name) == 0;
}

/* The length of the exit block at t (straight code ending in a return,
 * at most 8 instructions), or 0. */
static int exit_block_len(const dc *d, int t) {
    for (int k = 0; k < 8 && t + k < d->n; k++) {
        const dp_instr *a = &d->in[t + k];
        if (a->op == IR_RETURN_VALUE)
            return k + 1;
        if (a->target >= 0 || a->op == IR_RAISE || a->op == IR_RERAISE)
            return 0;
    }
    return 0;
}

int dc_same_continuation(const dc *d, int t, int c) {
    if (t == c)
        return 1;
    if (t < 0 || c < 0 || t >= d->n || c >= d->n)
        return 0;
    if (d->in[c].op == IR_JUMP && d->in[c].target == t)
        return 1;
    int len = exit_block_len(d, c);
    if (len == 0 || exit_block_len(d, t) != len)
        return 0;
    for (int k = 0; k < len; k++)
        if (!dc_same_instr(&d->in[t + k], &d->in[c + k]) || dc_handler_at(d, t + k) != dc_handler_at(d, c + k))
            return 0;
    return 1;
}

/* Does the finally body [base, base + len) leave at k for its end (the
 * handler's RERAISE at base + len): a JUMP there, or from 3.12 on a copy of
 * that RERAISE (same argument, same handler)? */
static int fin_exit(const dc *d, int base, int len, int k) {
    const dp_instr *x = &d->in[base + k], *end = &d->in[base + len];
    if (x->op == IR_JUMP)
        return x->target == base + len;
    return x->op == IR_RERAISE && end->op == IR_RERAISE && x->arg == end->arg &&
           dc_handler_at(d, base + k) == dc_handler_at(d, base + len);
}

/* The longest finally body whose copies are recognized (the walk keeps a
 * place per instruction of the body, on the stack). */
enum { MAX_COPY_LEN = 4096 };
/* The most exits of a body a walk reports (dc_copy_exits). */
enum { MAX_COPY_EXITS = 256 };

/* The first instruction from i on that is no NOP. */
static int past_nops(const dc *d, int i) {
    while (i >= 0 && i < d->n && d->in[i].op == IR_NOP)
        i++;
    return i;
}

/* Is the body's instruction k, held at p in the copy, one of its exits?
 * (Where the copy reraises too, the RERAISE is a nested try's own: at the
 * body's top level the copy has no exception to reraise.) */
static int copy_exit(const dc *d, int base, int len, const dp_instr *ops, int k, int p) {
    return fin_exit(d, base, len, k) && !(ops[k].op == IR_RERAISE && dc_same_instr(&d->in[p], &ops[k]));
}

/* 3.11+: the handler block of a try nested in a finally body, from its
 * PUSH_EXC_INFO at p to the end of its cleanup (`COPY 3; POP_EXCEPT;
 * RERAISE 1`, placed last), or -1. */
static int handler_block_end(const dc *d, int p) {
    if (p < 0 || p >= d->n || d->in[p].op != IR_PUSH_EXC_INFO)
        return -1;
    int c = dc_handler_at(d, p);
    if (c <= p || c + 2 >= d->n || d->in[c].op != IR_COPY || d->in[c + 1].op != IR_POP_EXCEPT ||
        d->in[c + 2].op != IR_RERAISE)
        return -1;
    return c + 3;
}

/* 3.11+: does the JUMP at j only step over handler blocks (placed inline in
 * the handler's copy of a finally body, from 3.12 on after the function in
 * the others)? */
static int jumps_over_handlers(const dc *d, int j) {
    int t = d->in[j].target, p = j + 1;
    while (p < t && p > j)
        p = handler_block_end(d, p);
    return t > j + 1 && p == t;
}

/* Does the finally body `ops` leave its handler at k for a return of its
 * own (`SWAP 2; POP_TOP; SWAP 2; POP_EXCEPT`, the value on top, before
 * RETURN_VALUE)?  Its copies, with no exception to drop, return at once. */
static int unwinds_finally(const dp_instr *ops, int k, int len) {
    return k + 4 < len && ops[k].op == IR_SWAP && ops[k].arg == 2 && ops[k + 1].op == IR_POP_TOP &&
           ops[k + 2].op == IR_SWAP && ops[k + 2].arg == 2 && ops[k + 3].op == IR_POP_EXCEPT &&
           ops[k + 4].op == IR_RETURN_VALUE;
}

/* The nested handlers of a finally body matched with those of a copy: the
 * copy's can be placed after the function (3.12+), the body's inline in the
 * handler or after its code (3.11+); each pair is walked as the body is,
 * instruction by instruction. */
enum { MAX_COPY_HANDLERS = 16 };
typedef struct {
    int n, top;                       /* top: the copy's handler where the body's is the finally's cleanup */
    int body[MAX_COPY_HANDLERS];      /* a nested handler of the body (its PUSH_EXC_INFO) */
    int copy[MAX_COPY_HANDLERS];      /* the copy's handler for it */
    int copy_end[MAX_COPY_HANDLERS];  /* where the copy's handler block ends, once walked; else -1 */
} copy_handlers;

/* Pairs the body's handler hb with the copy's hc (1), or 0 where a pairing
 * contradicts another: the copy runs its code under the same handlers. */
static int pair_handlers(copy_handlers *ch, int base, int span, int clean, int hb, int hc) {
    if (hb == clean) {
        if (ch->top == -2)
            ch->top = hc;
        return ch->top == hc;
    }
    if (hb <= base || hb >= base + span || hc == ch->top)
        return 0;
    for (int x = 0; x < ch->n; x++)
        if (ch->body[x] == hb || ch->copy[x] == hc)
            return ch->body[x] == hb && ch->copy[x] == hc;
    if (ch->n == MAX_COPY_HANDLERS)
        return 0;
    ch->body[ch->n] = hb;
    ch->copy[ch->n] = hc;
    ch->copy_end[ch->n++] = -1;
    return 1;
}

/* Clears a copy walk's places (at: none, gone: no) from *ready up to upto. */
static void clear_upto(int *at, unsigned char *gone, int *ready, int upto) {
    for (; *ready < upto; (*ready)++) {
        at[*ready] = -1;
        gone[*ready] = 0;
    }
}

/* dc_copy_len; the body's exits (indices into ops) go to ks[0..*nks):
 * at most MAX_COPY_EXITS + 1 of them, the last one included; the copy's
 * handler blocks placed apart to ch (may be NULL). */
static int copy_walk(const dc *d, int i, int end, const dp_instr *ops, int len, int *ks, int *nks,
                     copy_handlers *ch_out) {
    *nks = 0;
    if (ops == NULL || len <= 0 || len > MAX_COPY_LEN || i < 0 || i >= end || end > d->n)
        return 0;
    int base = (int)(ops - d->in);
    if (base < 0 || base + len >= d->n)
        return 0;
    /* 3.11+ places the handlers of tries nested in the body after their try
     * or after the body's code (in the handler's copy), 3.12+ after the
     * function (in the others): the body and its handlers span [base, clean) */
    int cold = d->code->py_minor >= 11;
    /* (the body follows its handler's PUSH_EXC_INFO, protected by clean) */
    int clean = base > 0 && d->in[base - 1].op == IR_PUSH_EXC_INFO ? dc_handler_at(d, base - 1) : dc_handler_at(d, base + len);
    int span = cold && clean > base + len ? clean - base : len;
    if (span > MAX_COPY_LEN)
        return 0;
    copy_handlers ch = {.n = 0, .top = -2};
    /* Walk both in step.  Where the body leaves for its end, the copy goes
     * on to the code after it, C: a JUMP there, or a copy of C's code when
     * that returns (CPython copies such exits into each jump to them);
     * where the body leaves last, the copy falls into C.  NOPs do nothing:
     * either side can have them where the other has none (3.12+ places
     * an await's CLEANUP_THROW, a NOP here, inline in the handler and
     * after the function in the copy).  at[k]: where the copy holds the
     * body's instruction k (-1: in a handler block placed apart);
     * gone[k]: a jump over such blocks, which the copy has no need of. */
    int at[MAX_COPY_LEN];
    unsigned char gone[MAX_COPY_LEN];
    int ready = 0; /* at and gone are set below it (as the walk goes: most walks fail early) */
    int k = 0, p = i;
    for (; k < len; k++) {
        clear_upto(at, gone, &ready, k + 4 < span ? k + 4 : span);
        if (ops[k].op == IR_NOP) {
            at[k] = p;
            if (p < end && d->in[p].op == IR_NOP) /* (both have it: a handler's start, say) */
                p++;
            continue;
        }
        while (p < end && d->in[p].op == IR_NOP && d->nref[p] == 0)
            p++;
        if (p >= end)
            return 0;
        if (cold && ops[k].op == IR_PUSH_EXC_INFO && d->in[p].op != IR_PUSH_EXC_INFO) {
            int e = handler_block_end(d, base + k);
            if (e < 0 || e > base + len)
                return 0;
            clear_upto(at, gone, &ready, e - base);
            k = e - base - 1; /* (walked with the copy's handler below) */
            continue;
        }
        at[k] = p;
        if (copy_exit(d, base, len, ops, k, p)) {
            if (*nks == MAX_COPY_EXITS + 1)
                return 0;
            ks[(*nks)++] = k;
            /* (the body's last exits, one after another, are all where the
             * copy falls into C: the ends of branches there) */
            int rest = k + 1;
            while (cold && rest < len && (ops[rest].op == IR_NOP || fin_exit(d, base, len, rest)))
                rest++;
            if (k == len - 1 || rest == len)
                break;
            int m = d->in[p].op == IR_JUMP ? 1 : exit_block_len(d, p);
            if (m == 0 || p + m > end)
                return 0;
            p += m;
            continue;
        }
        if (cold && ops[k].op == IR_JUMP && d->in[p].op != IR_JUMP && jumps_over_handlers(d, base + k)) {
            gone[k] = 1;
            continue;
        }
        if (cold && unwinds_finally(ops, k, len) && d->in[p].op == IR_RETURN_VALUE) {
            for (int u = 0; u < 4; u++)
                gone[k + u] = 1;
            k += 3; /* (the return value goes on past the handled exception) */
            continue;
        }
        if (!dc_same_instr(&d->in[p], &ops[k]))
            return 0;
        p++;
    }
    clear_upto(at, gone, &ready, span);
    int c = p;
    /* (a line's NOP that nothing jumps to can end the copy: the exits
     * copied in go on past it) */
    while (c < end && d->in[c].op == IR_NOP && d->nref[c] == 0)
        c++;
    /* the copy's handler blocks: each as the body's, the exits aside;
     * pairing the handlers of the code walked finds them, and walking them
     * the handlers of their code (nested there, inline in both) */
    int walked = 0;
    for (int round = 0; cold && round <= MAX_COPY_HANDLERS; round++) {
        for (int kk = 0; kk < span; kk++) {
            int q = at[kk];
            /* (an instruction the body's table leaves out cannot raise:
             * a jump, say; no handler of the copy's matters there) */
            if (q < 0 || ops[kk].op == IR_NOP || gone[kk] || kk == len || dc_handler_at(d, base + kk) < 0 ||
                copy_exit(d, base, len, ops, kk, q))
                continue;
            if (!pair_handlers(&ch, base, span, clean, dc_handler_at(d, base + kk), dc_handler_at(d, q)))
                return 0;
        }
        if (walked == ch.n)
            break;
        for (; walked < ch.n; walked++) {
            int hb = ch.body[walked], q = ch.copy[walked], eb = handler_block_end(d, hb);
            if (at[hb - base] >= 0 || eb < 0)
                continue; /* (walked already, or part of a block: see below) */
            for (int b = hb - base; b < eb - base; b++) {
                if (ops[b].op == IR_NOP) {
                    at[b] = q;
                    if (q < d->n && d->in[q].op == IR_NOP)
                        q++;
                    continue;
                }
                while (q < d->n && d->in[q].op == IR_NOP && d->nref[q] == 0)
                    q++;
                if (q >= d->n)
                    return 0;
                at[b] = q;
                if (copy_exit(d, base, len, ops, b, q)) {
                    int m = d->in[q].op == IR_JUMP ? 1 : exit_block_len(d, q);
                    if (m == 0 || !dc_same_continuation(d, d->in[q].op == IR_JUMP ? d->in[q].target : q, c))
                        return 0;
                    q += m;
                    continue;
                }
                if (!dc_same_instr(&d->in[q], &ops[b]))
                    return 0;
                q++;
            }
            ch.copy_end[walked] = q;
        }
    }
    /* each handler paired is where the copy holds the body's */
    for (int x = 0; x < ch.n; x++)
        if (at[ch.body[x] - base] < 0 || past_nops(d, at[ch.body[x] - base]) != past_nops(d, ch.copy[x]))
            return 0;
    /* the exits go on as C does; jumps inside keep their places */
    for (int kk = 0; kk < span; kk++) {
        const dp_instr *b = &ops[kk];
        int q = at[kk];
        if (b->op == IR_NOP || q < 0 || (kk >= k && kk < len) || kk == len)
            continue;
        if (copy_exit(d, base, len, ops, kk, q)) {
            if (!dc_same_continuation(d, d->in[q].op == IR_JUMP ? d->in[q].target : q, c))
                return 0;
            continue;
        }
        if (!dc_is_jump(b->op))
            continue;
        int t = b->target - base;
        if (t < 0 || t > span)
            return 0;
        int from = gone[kk] ? q : d->in[q].target;
        int same_place = t < span && at[t] >= 0 && past_nops(d, from) == past_nops(d, at[t]);
        if (gone[kk] && !same_place)
            return 0;
        if (t == len || (t < len && fin_exit(d, base, len, t))) {
            if (!dc_same_continuation(d, d->in[q].target, c) && !same_place)
                return 0;
        } else if (!same_place) {
            return 0;
        }
    }
    if (ch_out != NULL)
        *ch_out = ch;
    return c - i;
}

int dc_copy_len(const dc *d, int i, int end, const dp_instr *ops, int len) {
    int ks[MAX_COPY_EXITS + 1], nks;
    return copy_walk(d, i, end, ops, len, ks, &nks, NULL);
}

int dc_copy_exits(const dc *d, int i, int end, const dp_instr *ops, int len, int *ks, int max) {
    int all[MAX_COPY_EXITS + 1], n;
    if (copy_walk(d, i, end, ops, len, all, &n, NULL) <= 0)
        return -1;
    for (int x = 0; x < n && x < max; x++)
        ks[x] = all[x];
    return n < max ? n : max;
}

void dc_unthread_copy(dc *d, int i, int len) {
    int c = i + len;
    for (int j = i; j < c; j++) {
        dp_instr *x = &d->f.ins[j];
        int t = x->target;
        if (!dc_is_jump(x->op) || t == c || (t >= i && t < c) || !dc_same_continuation(d, t, c))
            continue;
        d->nref[t]--;
        d->nref[c]++;
        x->target = c;
        /* the copied exit, now unreachable, is no code to structure */
        int m = exit_block_len(d, t);
        if (m > 0 && d->nref[t] == 0 && t > 0 && is_terminator(d->in[t - 1].op))
            dc_seen(d, t, t + m);
    }
}

int dc_take_copy(dc *d, int i, int end, const dp_instr *ops, int len) {
    int ks[MAX_COPY_EXITS + 1], nks;
    copy_handlers ch;
    int cl = copy_walk(d, i, end, ops, len, ks, &nks, &ch);
    if (cl <= 0)
        return cl;
    dc_unthread_copy(d, i, cl);
    dc_seen(d, i, i + cl);
    /* the copy's handler blocks placed apart are that copy too: their
     * exits join the code after it */
    for (int x = 0; x < ch.n; x++) {
        int e = ch.copy_end[x];
        for (int j = ch.copy[x]; e >= 0 && j < e; j++) {
            dp_instr *y = &d->f.ins[j];
            int t = y->target;
            if (dc_is_jump(y->op) && (t < ch.copy[x] || t >= e) && (t < i || t >= i + cl) && t != i + cl &&
                dc_same_continuation(d, t, i + cl)) {
                d->nref[t]--;
                d->nref[i + cl]++;
                y->target = i + cl;
            }
        }
        if (e >= 0) {
            dc_seen(d, ch.copy[x], e);
            d->skip_to[ch.copy[x]] = e;
        }
    }
    return cl;
}

/* A copy of an enclosing finally body starting at i (CPython inlines the
 * finally block before every exit of the try body): its length, or 0. */
static int any_finally_copy(const dc *d, int i, int end) {
    int len = dc_copy_len(d, i, end, d->fin_ops, d->fin_len);
    for (int k = d->nfin_outer - 1; len == 0 && k >= 0; k--)
        len = dc_copy_len(d, i, end, d->fin_outer[k].ops, d->fin_outer[k].len);
    return len;
}

/* Takes the copy that any_finally_copy finds at i. */
static void take_any_finally_copy(dc *d, int i, int end) {
    int len = dc_take_copy(d, i, end, d->fin_ops, d->fin_len);
    for (int k = d->nfin_outer - 1; len == 0 && k >= 0; k--)
        len = dc_take_copy(d, i, end, d->fin_outer[k].ops, d->fin_outer[k].len);
}

/* From j on, only the unwinding of enclosing blocks (loop iterators,
 * with blocks, async ones awaiting __aexit__, except blocks, finally
 * copies) comes before a return. */
static int unwinds_to_return(const dc *d, int j, int end) {
    for (int steps = 0; j < d->n && steps < 64; steps++) {
        int op = d->in[j].op, fin = any_finally_copy(d, j, end);
        if (fin > 0) {
            j += fin;
            continue;
        }
        if (op == IR_RETURN_VALUE)
            return 1;
        if (op != IR_SWAP && op != IR_POP_TOP && op != IR_POP_EXCEPT && op != IR_NOP && op != IR_LOAD_CONST &&
            op != IR_CALL && op != IR_STORE_FAST && op != IR_STORE_NAME && op != IR_DELETE_FAST &&
            op != IR_DELETE_NAME && !(op == IR_GET_AWAITABLE && d->in[j].arg == 2) && op != IR_YIELD_FROM)
            return 0;
        j++;
    }
    return 0;
}

/* A finally copy at i that stands where a statement ends or on the way out
 * of a return: its length, or 0. */
static int finally_copy_at(const dc *d, int i, int end) {
    int len = any_finally_copy(d, i, end);
    if (len == 0)
        return 0;
    int after = i + len;
    if (after >= end)
        return len;
    int op = d->in[after].op;
    if (op == IR_RETURN_VALUE || op == IR_JUMP || op == IR_SWAP || op == IR_POP_TOP || op == IR_LOAD_CONST ||
        op == IR_NOP || unwinds_to_return(d, after, end))
        return len;
    return 0;
}

/* 3.11+: the code after a POP_EXCEPT runs once the handler is left.  A
 * clause's own return, break or continue puts there only the unwinding of
 * the blocks it leaves (finally copies, with exits, iterators) before its
 * RETURN_VALUE or JUMP, its value computed before the POP_EXCEPT (but
 * locals and constants, or a tuple of them, loaded after it, 3.12+).  Other code there is a
 * copy of what follows the try statement (CPython inlines small exit blocks
 * into the jumps to them): printed inside the clause it would run with the
 * exception still handled (sys.exc_info(), the __context__ of what it
 * raises, what a bare raise raises).  The same holds after a with's
 * __exit__ called by a nested statement (see dc_region). */
static int only_unwinds(const dc *d, int j, int end) {
    if (is_except_cleanup(d, j, end))
        j += 3;
    for (int steps = 0; j < d->n && steps < 64; steps++) {
        if (d->vjump[j] >= 0)
            return 1; /* a copy taken for a jump to the code after the try */
        int op = d->in[j].op, fin = any_finally_copy(d, j, d->n);
        if (fin > 0) {
            j += fin;
            continue;
        }
        if (op == IR_RETURN_VALUE || op == IR_JUMP)
            return 1;
        if (op == IR_LOAD_FAST || op == IR_LOAD_CONST) {
            int k = j; /* (a tuple of them: the compiler copies `return a, b` too) */
            while (k < d->n && (d->in[k].op == IR_LOAD_FAST || d->in[k].op == IR_LOAD_CONST ||
                                (d->in[k].op == IR_BUILD_TUPLE && k > j)))
                k++;
            if (k < d->n && d->in[k].op == IR_RETURN_VALUE)
                return 1; /* the return value */
            if (op == IR_LOAD_FAST)
                return 0;
        } else if (op != IR_SWAP && op != IR_POP_TOP && op != IR_POP_EXCEPT && op != IR_NOP && op != IR_CALL &&
                   op != IR_GET_AWAITABLE && op != IR_YIELD_FROM && op != IR_STORE_FAST && op != IR_STORE_NAME &&
                   op != IR_DELETE_FAST && op != IR_DELETE_NAME) {
            return 0;
        }
        j++;
    }
    return 0;
}

/* Does the code at `after` (past a finally copy) go on with the next
 * statement, rather than return, raise or jump away? */
static int copy_falls_through(const dc *d, int after, int end) {
    while (after < d->n && d->in[after].op == IR_NOP)
        after++;
    if (after >= d->n)
        return 0;
    int op = d->in[after].op;
    return !is_terminator(op) && !unwinds_to_return(d, after, end);
}

/* Where control reaching i goes: past NOPs and unconditional jumps (a
 * jump to a loop's back edge is a `continue`).  Bounded: a cycle of jumps
 * is an endless loop, whose place is where the walk stopped. */
static int resolve_jumps(const dc *d, int i) {
    for (int steps = 0; steps < 64 && i >= 0 && i < d->n; steps++) {
        if (d->in[i].op == IR_NOP)
            i++;
        else if (d->in[i].op == IR_JUMP && d->in[i].target >= 0)
            i = d->in[i].target;
        else
            break;
    }
    return i;
}

/* The RETURN_VALUE ending a tail at k that only computes a return value
 * (no jump, nothing that raises past or sets up a handler), or -1. */
static int return_tail_end(const dc *d, int k) {
    for (int e = k; e < d->n && e < k + 64; e++) {
        int op = d->in[e].op;
        if (op == IR_RETURN_VALUE)
            return e;
        if (dc_is_jump(op) || is_terminator(op) || dc_is_block_setup(op) || op == IR_POP_BLOCK ||
            op == IR_POP_EXCEPT || op == IR_FOR_ITER)
            return -1;
    }
    return -1;
}

/* Does control reaching a go on exactly as control reaching b does: the
 * same place once jumps are followed, or copies of one `return` tail
 * (3.10+ duplicates small exit blocks into the jumps leading there, 3.10
 * with the exit of the with they leave)? */
static int continues_as(const dc *d, int a, int b) {
    a = resolve_jumps(d, a);
    b = resolve_jumps(d, b);
    if (a == b)
        return 1;
    if (a < 0 || b < 0 || a >= d->n || b >= d->n)
        return 0;
    int e = return_tail_end(d, a);
    if (e < 0 && d->code->py_minor <= 10)
        e = dc_legacy_exit_end(d, a); /* (a copy of a with's exit ending in a return) */
    if (e < 0 || b + (e - a) >= d->n)
        return 0;
    for (int k = 0; k <= e - a; k++)
        if (!dc_same_instr(&d->in[a + k], &d->in[b + k]) || dc_handler_at(d, a + k) != dc_handler_at(d, b + k))
            return 0;
    return 1;
}

/* A jump to t goes on as the region does at `to` (continues_as): when t
 * is a 3.10 copy of the exit of a with, that copy is no code of its own
 * (the exit at `to` is walked where the region goes on). */
static void skip_exit_copy_at(dc *d, int t, int to) {
    int e = d->code->py_minor <= 10 && t != to ? dc_legacy_exit_end(d, t) : -1;
    if (e > t) {
        dc_seen(d, t, e + 1);
        d->skip_to[t] = e + 1;
    }
}

/* Does a jump to target leave loop lp as its `break` does?  Either it
 * lands where control goes on once the loop is done (the compiler threads
 * a break past a jump that follows the loop), or the loop ends its region
 * and the jump goes where the region goes on (a for-else ending a loop
 * body: the break skips the else and continues the outer loop). */
static int breaks_out(const dc *d, const dc_loop *lp, int target) {
    if (target == lp->head || resolve_jumps(d, target) == resolve_jumps(d, lp->head))
        return 0;
    return continues_as(d, target, lp->brk) || (lp->then >= 0 && continues_as(d, target, lp->then));
}

/* Is `n = None; del n` at i the end of an enclosing `except ... as n`
 * clause, copied into the way out of a clause nested in it? */
static int enclosing_cleanup(const dc *d, int i, int end) {
    if (i + 2 >= end || d->in[i].op != IR_LOAD_CONST || d->in[i].cst == NULL || d->in[i].cst->kind != DP_CONST_NONE ||
        !(d->in[i + 1].op >= IR_STORE_NAME && d->in[i + 1].op <= IR_STORE_DEREF) ||
        !(d->in[i + 2].op >= IR_DELETE_NAME && d->in[i + 2].op <= IR_DELETE_DEREF) ||
        d->in[i + 1].name == NULL || d->in[i + 2].name == NULL || strcmp(d->in[i + 1].name, d->in[i + 2].name) != 0)
        return 0;
    for (const dc_names *n = d->except_names; n != NULL; n = n->up)
        if (strcmp(n->name, d->in[i + 1].name) == 0)
            return 1;
    return 0;
}

/* Can op start the way out of an except clause once its POP_EXCEPT ran?
 * (a jump, `return <const>`, leaving an enclosing clause or a loop's
 * iterator, a with's exit called with constants and awaited below a return
 * value swapped to the top; the walk lets `return <local>` pass too, a
 * copy of the code after the try that cold_join did not take: read in the
 * clause, it loads the same value) */
static int leaves_clause(int op) {
    return op == IR_JUMP || op == IR_LOAD_CONST || op == IR_RETURN_VALUE || op == IR_POP_EXCEPT || op == IR_POP_TOP ||
           op == IR_NOP || op == IR_RERAISE || op == IR_GET_AWAITABLE || op == IR_YIELD_FROM || op == IR_SWAP;
}

/* The length of the code at i when it is a copy of the code at `exit` that
 * leaves an except clause, `POP_EXCEPT [e = None; del e] JUMP t`: protected
 * by the same handlers, jumping to the same place, nothing jumping into the
 * copy (nor the two overlapping); else 0. */
static int exit_copy_len(const dc *d, int i, int exit) {
    int len = i + 1 < d->n && d->in[i + 1].op == IR_LOAD_CONST ? 5 : 2;
    if (exit < 0 || exit + len > d->n || i + len > d->n || (exit < i + len && i < exit + len) ||
        d->in[i].op != IR_POP_EXCEPT || d->in[i + len - 1].op != IR_JUMP ||
        d->in[i + len - 1].target != d->in[exit + len - 1].target)
        return 0;
    if (len == 5 && !(d->in[i + 2].op >= IR_STORE_NAME && d->in[i + 2].op <= IR_STORE_DEREF &&
                      d->in[i + 3].op >= IR_DELETE_NAME && d->in[i + 3].op <= IR_DELETE_DEREF))
        return 0;
    for (int k = 0; k < len; k++)
        if (!dc_same_instr(&d->in[i + k], &d->in[exit + k]) || dc_handler_at(d, i + k) != dc_handler_at(d, exit + k) ||
            (k > 0 && d->nref[i + k] > 0) || d->skip_to[i + k] > i + k)
            return 0;
    return len;
}

/* Does control at x go on as at i, a duplicate of the code at t that ends
 * an except clause (cold_join)?  So it does where x leaves the except
 * block as i did (`POP_EXCEPT`, `e = None; del e`) before a duplicate of
 * that code too: both branches of an if ending the clause, say. */
static int same_clause_end(const dc *d, int x, int i, int t) {
    int u = 0; /* the length of the unwinding before i */
    while (u < 4 && i - u - 1 >= 0 && d->in[i - u - 1].op != IR_POP_EXCEPT)
        u++;
    if (u == 4 || i - u - 1 < 0)
        return 0;
    u++;
    if (u != 1 && !(u == 4 && is_except_cleanup(d, i - 3, i)))
        return 0;
    if (x < 0 || x + u >= d->n || d->vjump[x + u] != t)
        return 0;
    for (int k = 0; k < u; k++)
        if (!dc_same_instr(&d->in[x + k], &d->in[i - u + k]) || dc_handler_at(d, x + k) != dc_handler_at(d, i - u + k))
            return 0;
    return 1;
}

/* A jump leaving the region: break, continue, or the region's own exit. */
static int jump_stmt(dc *d, int i, int target, int exit, dp_nodes *out, int *handled) {
    *handled = 1;
    /* only the innermost loop can be the target of break/continue; inside a
     * loop a jump to its exit is a break even where a region ends there too */
    dc_loop *lp = d->loop;
    if (lp && target == lp->brk && target != lp->head)
        return dc_add(d, out, dc_stmt(d, S_BREAK, i));
    if (target == exit)
        return 0;
    if (lp && dc_is_loop_head(d, target))
        return dc_add(d, out, dc_stmt(d, S_CONTINUE, i));
    if (lp && breaks_out(d, lp, target))
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
    return lp && lp->is_for && ((t == lp->brk && t != lp->head) || breaks_out(d, lp, t));
}

/* A jump leaving the region for none of jump_stmt's places: FAR_CONTINUE
 * where it reaches the loop's back edge (the `continue` is added),
 * FAR_GOES_ON where it goes on as the region does (to its exit, or its end
 * when it has none), 0 when neither (not structured), -1 on error. */
enum { FAR_CONTINUE = 1, FAR_GOES_ON = 2 };
static int far_jump_stmt(dc *d, int i, int target, int end, int exit, dp_nodes *out) {
    if (d->loop && resolve_jumps(d, target) == d->loop->head)
        return dc_add(d, out, dc_stmt(d, S_CONTINUE, i)) < 0 ? -1 : FAR_CONTINUE;
    int to = exit >= 0 ? exit : end;
    if (target >= end && continues_as(d, target, to)) {
        skip_exit_copy_at(d, target, to);
        return FAR_GOES_ON;
    }
    return 0;
}

static int find_loop_exit(dc *d, int from, int to, int after);

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
/* dc_cond's result when the statement it built holds the rest of the
 * region, whose end is then reachable only as that statement's is. */
enum { REST_OF_REGION = 2 };
static int for_loop(dc *d, int i, int end, int exit, dc_stack *st, dp_nodes *out, int *next);
static int is_assert_false(const dc *d, int start, const dp_node *s);
static int while_true(dc *d, int i, int last, int end, int exit, dc_stack *st, dp_nodes *out, int *next);
static int legacy_loop_end(const dc *d, int i, int last, int end);
static int while_true_to(dc *d, int i, int E, dc_stack *st, dp_nodes *out, int *next);
static int while_true_cold(dc *d, int i, int cold, int end, dc_stack *st, dp_nodes *out);
/* Is i the head of a 3.8-3.10 async for: `SETUP_FINALLY stop; GET_ANEXT`
 * with END_ASYNC_FOR at stop? */
static int is_legacy_async_for(const dc *d, int i) {
    const dp_instr *ins = &d->in[i];
    return ins->op == IR_SETUP_FINALLY && i + 1 < d->n && d->in[i + 1].op == IR_GET_ANEXT &&
           ins->target > i && ins->target < d->n && d->in[ins->target].op == IR_END_ASYNC_FOR;
}

static int async_for_loop(dc *d, int i, int end, dc_stack *st, dp_nodes *out, int *next);
static int while_without_bottom_test(dc *d, int i, int last, int end, int exit, dc_stack *st, dp_nodes *out,
                                     int *next);

/* past the line-number NOPs at i (not 3.13's TO_BOOL, which tests) */
static int past_line_nops(const dc *d, int i) {
    while (i < d->n && d->in[i].op == IR_NOP && d->in[i].arg2 == 0)
        i++;
    return i;
}

/* Does any jump in [from, to) land in [lo, hi)?  (A `continue` of a while
 * loop jumps back to the test; the loop's real back edge comes later.) */
static int jumps_into(const dc *d, int from, int to, int lo, int hi) {
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
static int back_edge(dc *d, int head, int end) {
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
    int last = -1, last_reached = -1, legacy = d->code->py_minor <= 10, try_reached = -1;
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
        !jumps_into(d, head, last_reached, last_reached + 2, last + 1) &&
        !(try_reached > last_reached && last > try_reached))
        return last_reached;
    return last;
}

/* 3.12+: the last jump back to the loop head i, or to its line NOPs up to
 * `body`, in [i, end) that is not consumed and not in the handler code of a
 * try in the loop (a continue of an except clause), or -1.  (After
 * back_edge, which builds d->last_back.) */
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
 * jumps back to the end of the block the comprehension is in.  A cold tail
 * is straight-line code that nothing else enters, followed through forward
 * jumps to code only they reach (and through the steps the walker was told
 * to skip), up to a jump to `end` (or to a copy of the code there), or a
 * return or raise.  Its pieces, in walking order, go to `t`. */
#define MAX_TAIL_PIECES 8
typedef struct cold_tail {
    int n;
    int start[MAX_TAIL_PIECES], last[MAX_TAIL_PIECES]; /* each piece: [start, last] */
    int stop; /* where the walk stops: the jump back, or past the return */
} cold_tail;

static int find_cold_tail(const dc *d, int from, int end, cold_tail *t) {
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
            if (!continues_as(d, end, x->target))
                return 0;
            t->last[t->n - 1] = j;
            t->stop = j;
            return 1;
        }
        if (x->op == IR_RETURN_VALUE || x->op == IR_RAISE) {
            t->last[t->n - 1] = j;
            t->stop = j + 1;
            return 1;
        }
        if (dc_is_jump(x->op) || is_terminator(x->op) || dc_is_block_setup(x->op) || x->op == IR_FOR_ITER)
            return 0;
    }
    return 0;
}

/* Is instruction i in the body of the try whose handler is at h (3.12+)?
 * It is protected by h, or by a handler whose code h protects in turn (a
 * nested try or with); code that a later try protects is not.  With h
 * unknown (-1): protected at all. */
static int within_try(const dc *d, int i, int h) {
    int c = dc_handler_at(d, i);
    for (int depth = 0; h >= 0 && c >= 0 && c != h && depth < 32; depth++)
        c = c < d->n ? dc_handler_at(d, c) : -1;
    return h < 0 ? c >= 0 : c == h;
}

int dc_region(dc *d, int start, int end, int exit, dc_stack *st, dp_nodes *out) {
    if (d->sh->limit_hit || ++d->sh->depth > DP_MAX_NESTING * 4) {
        d->sh->depth -= !d->sh->limit_hit;
        d->sh->limit_hit = 1;
        return dc_fail(d, start, "statements nested too deeply");
    }
    /* a loop or with target still to be bound (its slot on top) belongs to
     * the region's first statement, not below the region's statements.
     * (Counted in the base, every instruction that leaves one value on the
     * stack looked like a statement start: a while loop's test started at
     * its jump, and its copy at the bottom was read into the body.) */
    int base = st->n - (st->n > 0 && st->v[st->n - 1]->kind == X_SLOT), stmt_start = start;
    /* region_end: the end before a cold tail; comp_resume: where the last
     * inlined comprehension went on (only there can a cold tail start) */
    int i = start, region_end = -1, comp_resume = -1, left_clause = 0;
    cold_tail tail = {0};
    int rc = 0;
    int saved_base = d->base;
    dp_node **saved_vals = d->base_vals;
    d->base = base;
    /* (kept for shallow stacks only: a copy per region of a deep one would
     * cost memory in proportion to regions times depth) */
    d->base_vals = base > 0 && base <= 64 ? dp_alloc_array(d->sh->ar, (size_t)base, sizeof *d->base_vals) : NULL;
    if (d->base_vals)
        memcpy(d->base_vals, st->v, (size_t)base * sizeof *d->base_vals);
    /* A try body ends where the exception table stops covering it, which
     * can be inside its last statement (a RETURN_VALUE cannot raise). */
    int finish = d->finish_stmt, finish_h = d->finish_handler, live = 1;
    /* A with block ends once the stack is back to what it was below its
     * __exit__ (a `return` inside nested withs pops the outer __exit__ too,
     * with the return value in its place: that is not the end yet). */
    dp_node *stop = d->stop_node;
    int stop_base = base;
    for (int k = 0; stop && k < st->n; k++)
        if (st->v[k] == stop)
            stop_base = k;
    dp_node **below = NULL;
    if (stop && stop_base > 0) {
        if ((below = dp_alloc_array(d->sh->ar, (size_t)stop_base, sizeof *below)) == NULL) {
            d->sh->depth--;
            return dc_fail(d, start, "out of memory");
        }
        memcpy(below, st->v, (size_t)stop_base * sizeof *below);
    }
    d->finish_stmt = 0;
    d->finish_handler = -1;
    d->stop_node = NULL;
    /* the with blocks the region is inside of: a statement of the region
     * that calls one's __exit__ leaves it (return, break, continue), so
     * only the unwinding of that statement can follow, not code of the
     * region, which would run inside the with in the printed form (kept
     * for shallow stacks only, like base_vals; 3.11+, whose unwinding
     * only_unwinds knows) */
    int exits = base <= 64 && d->code->py_minor >= 11 ? count_kind(st, X_WITH_EXIT) : 0;
    /* (3.8-3.10: the same for the values of the except blocks the region
     * is inside of, which a nested statement's POP_EXCEPT pops) */
    int excs = base <= 64 && d->code->py_minor <= 10 ? count_kind(st, X_EXC) : 0;
    /* (the unwinding before a `return` pops iterators and leaves except
     * blocks with the return value in their place: not finished yet) */
    dp_node **start_stack = NULL;
    if (finish && base > 0) {
        if ((start_stack = dp_alloc_array(d->sh->ar, (size_t)base, sizeof *start_stack)) == NULL) {
            d->sh->depth--;
            return dc_fail(d, start, "out of memory");
        }
        memcpy(start_stack, st->v, (size_t)base * sizeof *start_stack);
    }
    for (;;) {
        if (i == comp_resume && i > end && region_end < 0 && find_cold_tail(d, i, end, &tail)) {
            /* the statement goes on in a cold tail: the rest of this
             * region, walked through its pieces (the skips lead there) */
            region_end = end;
            end = tail.stop;
            for (int k = 0; k + 1 < tail.n; k++)
                if (d->skip_to[tail.last[k]] <= tail.last[k]) {
                    dc_seen(d, tail.last[k], tail.last[k] + 1);
                    d->skip_to[tail.last[k]] = tail.start[k + 1];
                }
            if (tail.stop == tail.last[tail.n - 1]) /* (it stops at the jump back, not past a return) */
                dc_seen(d, tail.stop, tail.stop + 1);
        }
        if (!(i < end || (finish && i < d->n &&
                          (st->n > base || !ends_stmt(d, i - 1) ||
                           (st->n > 0 && memcmp(st->v, start_stack, (size_t)st->n * sizeof *st->v) != 0)))))
            break;
        const dp_instr *ins = &d->in[i];
        int next = i + 1;
        if (d->skip_to[i] > i) {
            i = d->skip_to[i];
            continue;
        }
        if (d->nref[i] > 0)
            live = 1;
        /* (3.8-3.10: a duplicate of a return with no place to join, the
         * return of a clause that leaves a try/finally, is that return:
         * walked as code of its own) */
        if (d->vjump[i] >= 0 && live && st->n <= base &&
            !(d->code->py_minor <= 10 && d->vjump[i] != end && d->vjump[i] != exit &&
              !dc_is_loop_exit(d, d->vjump[i]) && return_tail_end(d, i) >= i)) {
            /* a duplicate of the code at vjump[i]: as if it jumped there */
            int handled;
            if (jump_stmt(d, i, d->vjump[i], exit, out, &handled) < 0)
                goto fail;
            if (!handled && d->vjump[i] != end && d->vjump[i] != exit && !same_clause_end(d, exit, i, d->vjump[i]) &&
                !same_clause_end(d, end, i, d->vjump[i])) {
                dc_fail(d, i, "duplicated code with no place to join");
                goto fail;
            }
            live = 0;
            i = next;
            continue;
        }
        /* 3.12+ copies a small exit with no line of its own (`POP_EXCEPT;
         * JUMP t` ending an except clause) into the branches that lead to
         * it: such a copy of the code where the region goes on runs as a
         * jump there does */
        int ec = live && st->n <= base && d->code->py_minor >= 12 ? exit_copy_len(d, i, exit) : 0;
        if (ec > 0) {
            int handled;
            if (jump_stmt(d, i, exit, exit, out, &handled) < 0)
                goto fail;
            dc_seen(d, i, i + ec);
            live = 0;
            i += ec;
            continue;
        }
        if ((!live || !d->reach[i]) && st->n <= base) {
            i++; /* unreachable: nothing jumps here */
            continue;
        }
        if (st->n <= base) {
            stmt_start = i;
            /* 3.12+: a try body (`finish`) ends where the exception table
             * stops protecting statements; its table entries can reach
             * further, over except clauses placed after the code that
             * follows the try */
            if (finish && i > start && d->code->py_minor >= 12 && !within_try(d, i, finish_h) && ins->op != IR_NOP &&
                (st->n == 0 || memcmp(st->v, start_stack, (size_t)st->n * sizeof *st->v) == 0))
                break; /* (not with a return value in place of a with's __exit__: see start_stack) */
            /* a with block ends once __exit__ was called and its result popped */
            if (stop && st->n <= stop_base && !on_stack(st, stop) &&
                (st->n == 0 || memcmp(st->v, below, (size_t)st->n * sizeof *below) == 0))
                break;
            if (excs > 0 && count_kind(st, X_EXC) < excs && !dc_only_unwinds_legacy(d, i)) {
                dc_fail(d, i, "code after the try statement copied into an except clause");
                goto fail;
            }
            if (exits > 0 && (st->n == 0 || st->v[st->n - 1]->kind != X_OPAQUE) && count_kind(st, X_WITH_EXIT) < exits &&
                !only_unwinds(d, i, end)) { /* (X_OPAQUE: __exit__'s result, still to pop) */
                dc_fail(d, i, "code after a with block's exit inside it");
                goto fail;
            }
        }
        /* 3.12+: a copy of the innermost finally body that falls through to
         * the code after it is the try body's normal exit: the body ends
         * here (try.c takes the copy), even where the exception table
         * covers code further on (an except clause placed later) */
        int cl = st->n <= base && d->code->py_minor >= 12 ? dc_copy_len(d, i, end, d->fin_ops, d->fin_len) : 0;
        if (cl > 0 && copy_falls_through(d, i + cl, end))
            break;
        /* CPython inlines the finally body before every exit of the try body,
         * including between a return value and its RETURN_VALUE */
        int fin = finally_copy_at(d, i, finish ? d->n : end); /* (a try body's last return may cross its end) */
        if (fin > 0 && (st->n <= base || unwinds_to_return(d, i + fin, end))) {
            take_any_finally_copy(d, i, finish ? d->n : end);
            d->fin_copy_end = i + fin;
            i += fin;
            continue;
        }
        /* a statement in a try body that the try's handler does not
         * protect is code after the try (3.12+ can stretch the body's
         * table entries over it to reach a cold handler): read into a
         * nested statement of the body, the handler would catch what it
         * raises.  Only the unwinding of a return, break or continue
         * leaves the protection early. */
        if (st->n <= base && d->open_try >= 0 && d->code->py_minor >= 11 && ins->op != IR_NOP && d->reach[i] &&
            !within_try(d, i, d->open_try) && !only_unwinds(d, i, end)) {
            dc_fail(d, i, "code after a try statement inside its body");
            goto fail;
        }
        /* 3.11+: past the POP_EXCEPT that ends the region's except clause
         * only its way out follows (a jump, a return of a constant, the
         * clauses it is nested in left too).  Code that computes is the
         * code after the try statement, placed there when no jump joins
         * it: read into the clause, it would run before the exception is
         * done with (a statement in the clause compiles to code before
         * its POP_EXCEPT, never after it). */
        if (left_clause && st->n < base && d->code->py_minor >= 11 && enclosing_cleanup(d, i, end)) {
            dc_seen(d, i, i + 3); /* (that clause's own end binds and deletes it again) */
            i += 3;
            continue;
        }
        if (left_clause && st->n < base && d->code->py_minor >= 11 && ends_stmt(d, i - 1) && !leaves_clause(ins->op) &&
            !(ins->op == IR_LOAD_FAST && i + 1 < end && d->in[i + 1].op == IR_RETURN_VALUE)) {
            dc_fail(d, i, "code after the try read into its except clause");
            goto fail;
        }
        /* 3.11+: a try entered with values on the stack (dc_try) */
        if (st->n > base && d->code->py_minor >= 11 && ins->op != IR_FOR_ITER) {
            int r = dc_try(d, i, end, exit, st, out, &next, 1);
            if (r < 0)
                goto fail;
            if (r > 0) {
                live = d->region_live;
                i = next;
                continue;
            }
        }
        /* constructs that start at a statement boundary */
        if (st->n <= base || (st->n > 0 && st->v[st->n - 1]->kind == X_ITER && ins->op == IR_FOR_ITER) ||
            ins->op == IR_GET_ANEXT || is_legacy_async_for(d, i)) {
            int r = dc_try(d, i, end, exit, st, out, &next, 0);
            if (r < 0)
                goto fail;
            if (r > 0) {
                /* code after the region is not the try's own: a join found
                 * there (3.12+ copies the code after a loop into an except
                 * clause that breaks) structured it, and it will be again
                 * (an enclosing if's jump over its else is seen already) */
                for (int j = end; d->code->py_minor >= 12 && !finish && j < next && j < d->n; j++)
                    if (d->seen[j] && d->in[j].op != IR_JUMP && d->in[j].op != IR_NOP) {
                        dc_fail(d, i, "try statement runs past its enclosing block");
                        goto fail;
                    }
                live = d->region_live; /* (the code after it can be reached only by a jump) */
                i = next;
                continue;
            }
            if ((ins->op == IR_GET_ANEXT && st->n > 0 && dc_handler_at(d, i) >= 0 &&
                 d->in[dc_handler_at(d, i)].op == IR_END_ASYNC_FOR) ||
                (st->n > 0 && is_legacy_async_for(d, i))) {
                if (async_for_loop(d, i, end, st, out, &next) < 0)
                    goto fail;
                i = next;
                continue;
            }
            /* (the body of a `while True:` starts at the loop's head: the
             * jumps back there are its continues, not another loop) */
            if (ins->op != IR_FOR_ITER && d->nref[i] > 0 && !(i == start && d->loop && d->loop->head == i)) {
                int last = back_edge(d, i, end);
                /* (3.10+ `while True:` keeps a NOP for its line: a
                 * `continue` jumps to it, the body's end past it; up to
                 * 3.10 also where the only jumps to the NOP are continues
                 * out of except clauses, which back_edge leaves out: the
                 * jump back past the NOP still closes the body) */
                if (ins->op == IR_NOP &&
                    (last >= 0 || (d->code->py_minor <= 10 && d->last_back != NULL && d->last_back[i] >= 0))) {
                    int body = past_line_nops(d, i);
                    for (int h = i + 1; h <= body && h < end; h++) {
                        int l2 = back_edge(d, h, end);
                        last = l2 > last ? l2 : last;
                    }
                }
                /* (3.12+: a `continue` in an except clause, placed after the
                 * function, is no end of the body that reaches its own jump back) */
                if (last > i && d->code->py_minor >= 12 && dc_in_cold_handler(d, last, i, last)) {
                    int warm = warm_back_edge(d, i, past_line_nops(d, i), end);
                    last = warm > i ? warm : last;
                }
                int E = legacy_loop_end(d, i, last, end);
                if (E > i) {
                    if (while_true_to(d, i, E, st, out, &next) < 0)
                        goto fail;
                    i = next;
                    continue;
                }
                /* (3.8-3.10: a try or with opened here whose handler lies past
                 * that jump does not end there: the jump is a `continue` of
                 * the loop whose body starts with the try) */
                if (last > i && d->in[last].op == IR_JUMP && !jumps_into_body(d, last + 1, end, i, last) &&
                    !(dc_is_block_setup(ins->op) && ins->target > last)) {
                    int r = while_without_bottom_test(d, i, last, end, exit, st, out, &next);
                    if (r == 0)
                        r = while_true(d, i, last, end, exit, st, out, &next);
                    if (r < 0)
                        goto fail;
                    if (r == REST_OF_REGION)
                        live = d->region_live; /* it holds the rest of the region */
                    i = next;
                    continue;
                }
                /* (d->last_back[i], built by back_edge, is the last jump back here) */
                int cold = last < 0 && d->code->py_minor >= 12 && d->last_back != NULL && d->last_back[i] >= end
                               ? dc_cold_back_edge(d, i, end) : -1;
                if (cold > 0) {
                    if (while_true_cold(d, i, cold, end, st, out) < 0)
                        goto fail;
                    i = end;
                    continue;
                }
            }
        }
        d->seen[i] = 1;
        if (is_except_cleanup(d, i, end)) {
            dc_seen(d, i, i + 3);
            i += 3;
            continue;
        }
        if (swap_needs_temps(d, i) && ins->arg >= 2 && ins->arg <= st->n) {
            for (int k = st->n - ins->arg; k < st->n - 1; k++)
                if (needs_temp(d, st->v[k]) && st->v[k]->kind != E_NAME && temps_through(d, st, k, out, stmt_start) < 0)
                    goto fail;
        }
        int r = d->code->py_minor >= 12 ? dc_inline_comprehension(d, i, st, out, &next) : 0;
        if (r > 0)
            comp_resume = next;
        if (r == 0 && (r = dc_match(d, i, base, st, out, &next)) > 0) {
            dc_seen(d, i, next); /* match.c consumes the whole statement */
            live = d->region_live;
        }
        if (r == 0) /* (before the COPY that starts a 3.8-3.10 link) */
            r = dc_chain_compare(d, i, st, &next);
        if (r == 0 && ins->op == IR_COPY && copy_needs_temp(d, i, st) &&
            temps_through(d, st, st->n - ins->arg, out, stmt_start) < 0)
            goto fail;
        if (r == 0)
            r = swap_assign(d, i, base, st, out, stmt_start, &next);
        if (r == 0)
            r = dc_expr_step(d, i, st);
        if (r == 0 && d->code->py_minor <= 10) /* block-stack try/with (try_legacy.c) */
            r = dc_legacy_op(d, i, end, st, out, &next);
        if (r < 0)
            goto fail;
        if (r > 0) {
            i = next;
            continue;
        }
        dp_node *v, *t, *x;
        switch (ins->op) {
        case IR_STORE_NAME: case IR_STORE_FAST: case IR_STORE_GLOBAL: case IR_STORE_DEREF:
            if ((r = static_swap_assign(d, i, base, st, out, stmt_start, &next)) != 0) {
                if (r < 0)
                    goto fail;
                break;
            }
            if ((v = dc_pop(d, st, i)) == NULL || store(d, name_target(d, ins), v, st, out, stmt_start, i) < 0)
                goto fail;
            break;
        case IR_STORE_ATTR:
            if ((x = dc_pop(d, st, i)) == NULL || (v = dc_pop(d, st, i)) == NULL || (t = dc_node(d, E_ATTR)) == NULL)
                goto fail;
            t->a = x;
            t->s = ins->name;
            if (store(d, t, v, st, out, stmt_start, i) < 0)
                goto fail;
            break;
        case IR_STORE_SUBSCR: {
            dp_node *idx = dc_pop(d, st, i);
            if (idx == NULL || (x = dc_pop(d, st, i)) == NULL || (v = dc_pop(d, st, i)) == NULL ||
                (t = dc_node(d, E_SUBSCR)) == NULL)
                goto fail;
            t->a = x;
            t->b = idx;
            if (store(d, t, v, st, out, stmt_start, i) < 0)
                goto fail;
            break;
        }
        case IR_STORE_SLICE: {
            dp_node *hi = dc_pop(d, st, i), *lo = hi ? dc_pop(d, st, i) : NULL;
            dp_node *sl = dc_node(d, E_SLICE);
            if (lo == NULL || sl == NULL || (x = dc_pop(d, st, i)) == NULL || (v = dc_pop(d, st, i)) == NULL ||
                (t = dc_node(d, E_SUBSCR)) == NULL)
                goto fail;
            sl->a = dc_is_const_kind(lo, DP_CONST_NONE) ? NULL : lo;
            sl->b = dc_is_const_kind(hi, DP_CONST_NONE) ? NULL : hi;
            t->a = x;
            t->b = sl;
            if (store(d, t, v, st, out, stmt_start, i) < 0)
                goto fail;
            break;
        }
        case IR_DELETE_NAME: case IR_DELETE_FAST: case IR_DELETE_GLOBAL: case IR_DELETE_DEREF:
            if (add_delete(d, st, out, name_target(d, ins), stmt_start, ins->op) < 0)
                goto fail;
            break;
        case IR_DELETE_ATTR:
            if ((x = dc_pop(d, st, i)) == NULL || (t = dc_node(d, E_ATTR)) == NULL)
                goto fail;
            t->a = x;
            t->s = ins->name;
            if (add_delete(d, st, out, t, stmt_start, ins->op) < 0)
                goto fail;
            break;
        case IR_DELETE_SUBSCR: {
            dp_node *idx = dc_pop(d, st, i);
            if (idx == NULL || (x = dc_pop(d, st, i)) == NULL || (t = dc_node(d, E_SUBSCR)) == NULL)
                goto fail;
            t->a = x;
            t->b = idx;
            if (add_delete(d, st, out, t, stmt_start, ins->op) < 0)
                goto fail;
            break;
        }
        case IR_UNPACK_SEQUENCE: case IR_UNPACK_EX:
            if (unpack(d, ins, st, out, stmt_start) < 0)
                goto fail;
            break;
        case IR_IMPORT_FROM:
            if ((x = dc_top(d, st, 0, i)) == NULL)
                goto fail;
            if ((r = import_from(d, ins, x, st)) < 0)
                goto fail;
            if (r == 0)
                goto unsupported;
            break;
        case IR_IMPORT_STAR: {
            if ((x = dc_pop(d, st, i)) == NULL)
                goto fail;
            dp_node *s = dc_stmt(d, S_IMPORTFROM, stmt_start), *al = dc_node(d, E_ALIAS);
            if (s == NULL || al == NULL || x->kind != X_IMPORT)
                goto fail;
            s->s = x->s[0] ? x->s : NULL;
            s->op = x->op;
            al->s = "*";
            if (dc_add(d, &s->l1, al) < 0 || dc_add(d, out, s) < 0)
                goto fail;
            break;
        }
        case IR_POP_TOP:
            if ((v = dc_pop(d, st, i)) == NULL)
                goto fail;
            if (v->kind == X_ITER && !leaves_loop(d, i + 1)) {
                dc_fail(d, i, "a loop's iterator popped by no break or return");
                goto fail;
            }
            if (v->kind == X_SLOT && v->a->l1.n > 1 && v->op >= 0 && v->op < v->a->l1.n) {
                /* 3.12+ drops a store that a later one in the same target
                 * overwrites (`a, _, _ = t`): store() names the slot (a
                 * single slot dropped is a `with` without `as`) */
                if ((v->a->l1.v[v->op] = dc_node(d, X_OPAQUE)) == NULL)
                    goto fail;
                break;
            }
            if (v->kind == E_CONST)
                break; /* (a constant's statement compiles to nothing: Dynamo pops one it pushed) */
            if (v->kind < DP_NODE_KIND_COUNT && flush_leftovers(d, st, 0, NULL, out, stmt_start) < 0)
                goto fail;
            if (v->kind < DP_NODE_KIND_COUNT && v->kind != E_NAME) {
                if (add_simple(d, out, S_EXPR, v, stmt_start) < 0)
                    goto fail;
            } else if (v->kind == E_NAME && !on_stack(st, v) && strncmp(v->s, "__temp_", 7) != 0) {
                if (add_simple(d, out, S_EXPR, v, stmt_start) < 0)
                    goto fail;
            }
            break;
        case IR_PRINT_EXPR:
            if ((v = dc_pop(d, st, i)) == NULL || add_simple(d, out, S_EXPR, v, stmt_start) < 0)
                goto fail;
            break;
        case IR_LIST_EXTEND: case IR_SET_UPDATE: case IR_DICT_UPDATE: case IR_DICT_MERGE:
            /* a collection kept in a temporary: mutate it with a call */
            if ((v = dc_pop(d, st, i)) == NULL)
                goto fail;
            if (mutate(d, st, ins->arg - 1, ins->op == IR_LIST_EXTEND ? "extend" : "update", v, NULL, out,
                       stmt_start) < 0)
                goto fail;
            break;
        case IR_LIST_APPEND: case IR_SET_ADD: case IR_MAP_ADD: {
            /* the display below the value (and the key): 3.9+ builds a
             * dict of more than 15 items by MAP_ADD */
            int below = ins->op == IR_MAP_ADD ? 3 : 2;
            x = ins->arg == 1 && st->n >= below ? st->v[st->n - below] : NULL;
            int display = x && (ins->op == IR_MAP_ADD ? x->kind == E_DICT : x->kind == E_LIST || x->kind == E_SET);
            if (display && ins->op == IR_MAP_ADD) {
                dp_node *val = dc_pop(d, st, i), *key = val ? dc_pop(d, st, i) : NULL;
                if (key == NULL || dc_add(d, &x->l1, key) < 0 || dc_add(d, &x->l2, val) < 0)
                    goto fail;
                break;
            }
            if (!is_comprehension_code(d) && !display) {
                dp_node *val = dc_pop(d, st, i), *key = NULL;
                if (val == NULL || (ins->op == IR_MAP_ADD && (key = dc_pop(d, st, i)) == NULL))
                    goto fail;
                if (mutate(d, st, ins->arg - 1, ins->op == IR_LIST_APPEND ? "append" : ins->op == IR_SET_ADD ? "add" : NULL,
                           val, key, out, stmt_start) < 0)
                    goto fail;
                break;
            }
            if (display) {
                /* building a display: [*a, b] */
                if ((v = dc_pop(d, st, i)) == NULL || dc_add(d, &x->l1, v) < 0)
                    goto fail;
                break;
            }
            dp_node *ap = dc_stmt(d, X_APPEND, stmt_start);
            if (ap == NULL || (v = dc_pop(d, st, i)) == NULL)
                goto fail;
            if (ins->op == IR_MAP_ADD) {
                ap->b = v;
                if ((ap->a = dc_pop(d, st, i)) == NULL)
                    goto fail;
            } else {
                ap->a = v;
            }
            if (dc_add(d, out, ap) < 0)
                goto fail;
            break;
        }
        case IR_RETURN_VALUE: {
            /* values left below the returned one are still computed, in their
             * order (Dynamo's code returns over a list it built) */
            int left = 0;
            for (int k = base; k + 1 < st->n; k++)
                left |= needs_temp(d, st->v[k]);
            if (left && spill_pending(d, st, st->n, SIZE_MAX, NULL, out, stmt_start) < 0)
                goto fail;
            if ((v = dc_pop(d, st, i)) == NULL)
                goto fail;
            /* an async generator can only `return`, which returns None */
            if ((d->code->flags & DP_CO_ASYNC_GENERATOR) && dc_is_const_kind(v, DP_CONST_NONE))
                v = NULL;
            if (add_simple(d, out, S_RETURN, v, stmt_start) < 0)
                goto fail;
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
                goto fail;
            if (ins->arg >= 2 && (s->b = dc_pop(d, st, i)) == NULL)
                goto fail;
            if (ins->arg >= 1 && (s->a = dc_pop(d, st, i)) == NULL)
                goto fail;
            if (ins->arg == 1 && st->n == base && is_assert_false(d, stmt_start, s)) {
                /* `assert False, m`: the test is folded away */
                static const dp_const false_const = {.kind = DP_CONST_FALSE};
                dp_node *m = s->a->kind == E_CALL ? s->a->l1.v[0] : NULL;
                s->kind = S_ASSERT;
                if ((s->a = dc_const(d, &false_const)) == NULL)
                    goto fail;
                s->b = m;
            }
            if (dc_add(d, out, s) < 0)
                goto fail;
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
                goto fail;
            }
            if ((v = dc_pop(d, st, i)) == NULL || add_simple(d, out, S_RAISE, NULL, stmt_start) < 0)
                goto fail;
            break;
        }
        case IR_POP_EXCEPT:
            if (d->code->py_minor >= 11 && !only_unwinds(d, i + 1, end)) {
                dc_fail(d, i, "code after the try statement copied into an except clause");
                goto fail;
            }
            if ((v = dc_pop(d, st, i)) == NULL)
                goto fail;
            if (v->kind == X_PREV_EXC && st->n < base)
                left_clause = 1; /* the region's own except clause ends here */
            break;
        case IR_BEFORE_WITH: case IR_BEFORE_ASYNC_WITH:
            if ((r = dc_with(d, i, end, st, out, &next)) < 0)
                goto fail;
            if (r == 1)
                live = 0;
            break;
        case IR_FOR_ITER:
            if ((r = for_loop(d, i, end, exit, st, out, &next)) < 0)
                goto fail;
            if (r == REST_OF_REGION)
                live = d->region_live; /* its else holds the rest of the region */
            break;
        case IR_JUMP: {
            int handled;
            if (jump_stmt(d, i, ins->target, exit, out, &handled) < 0)
                goto fail;
            if (!handled) {
                if (ins->target > i && ins->target <= end && skippable(d, i + 1, ins->target)) {
                    next = ins->target; /* over handler code placed in between */
                } else if (ins->target == end) {
                    next = end; /* the region ends here */
                } else if (ins->target > i && (r = far_jump_stmt(d, i, ins->target, end, exit, out)) != 0) {
                    if (r < 0)
                        goto fail;
                    if (r == FAR_GOES_ON)
                        next = end; /* the region ends here */
                } else {
                    dc_fail(d, i, "unstructured jump to offset %d", ins->target < d->n ? d->in[ins->target].offset : -1);
                    goto fail;
                }
            }
            break;
        }
        case IR_POP_JUMP_IF_FALSE: case IR_POP_JUMP_IF_TRUE: case IR_POP_JUMP_IF_NONE:
        case IR_POP_JUMP_IF_NOT_NONE: case IR_JUMP_IF_FALSE_OR_POP: case IR_JUMP_IF_TRUE_OR_POP:
            d->cond_finishes = finish;
            if ((r = dc_cond(d, stmt_start, i, end, exit, st, out, &next)) < 0)
                goto fail;
            if (r == REST_OF_REGION)
                live = d->region_live; /* the statement holds the rest of the region */
            break;
        default:
        unsupported:
            dc_fail(d, i, "cannot structure %s here", dp_irop_name(ins->op));
            goto fail;
        }
        if (is_terminator(ins->op))
            live = 0;
        if (next <= i) { /* a walk only moves forward: it always ends */
            dc_fail(d, i, "structuring made no progress at %s", dp_irop_name(ins->op));
            goto fail;
        }
        i = next;
    }
    if (region_end >= 0) {
        /* walked: the walks of enclosing blocks step over its pieces */
        for (int k = 0; k < tail.n; k++)
            if (d->skip_to[tail.start[k]] <= tail.start[k])
                d->skip_to[tail.start[k]] = tail.last[k] + 1;
        i = region_end;
    }
    d->region_stop = i;
    d->region_live = live;
    goto done;
fail:
    rc = -1;
done:
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

/* ------------------------------------------------------------------ */
/* Loops                                                                */

/* Do the jump at j and its target lie in one except clause or finally
 * body (both protected by that handler's cleanup block: `COPY 3;
 * POP_EXCEPT; RERAISE 1`, or `e = None; del e; RERAISE 1` in an `except ...
 * as e` body) that does not hold the loop at `head`?  3.12+ places a loop's
 * last jump back in an except clause after the function: the clause's own
 * jumps past it leave no loop. */
static int within_handler(const dc *d, int head, int j, int target) {
    int c = d->code->py_minor >= 11 && target < d->n ? dc_handler_at(d, j) : -1;
    if (c < 0 || c + 2 >= d->n || dc_handler_at(d, target) != c || dc_handler_at(d, head) == c)
        return 0;
    const dp_instr *x = &d->in[c];
    return (x[0].op == IR_COPY && x[1].op == IR_POP_EXCEPT && x[2].op == IR_RERAISE) ||
           (c + 3 < d->n && x[0].op == IR_LOAD_CONST && is_name_store(x[1].op) && x[2].op >= IR_DELETE_NAME &&
            x[2].op <= IR_DELETE_DEREF && x[3].op == IR_RERAISE);
}

/* Where `break` jumps: the largest forward jump target beyond `after` found
 * in [from, to), or `after` when no jump leaves the loop. */
static int find_loop_exit(dc *d, int from, int to, int after) {
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
static int jumps_as(const dc *d, int from, int to, int exit, int after) {
    for (int j = from; j < to; j++) {
        int t = d->in[j].target;
        if (dc_is_jump(d->in[j].op) && (t < from - 1 || t >= to) && continues_as(d, t, exit) &&
            !continues_as(d, t, after))
            return 1;
    }
    return 0;
}

/* The copy at `at` of the code a region [from, end) goes on with, reached
 * only from that region (a loop's exit), is no code of its own: the
 * statements that follow skip it. */
static void skip_exit_copy(dc *d, int from, int end, int at) {
    int e = return_tail_end(d, at);
    if (e < 0 || (at > 0 && d->reach[at - 1] && !is_terminator(d->in[at - 1].op)))
        return;
    for (int j = 0; j < d->n; j++)
        if (d->reach[j] && d->in[j].target == at && (j < from || j >= end))
            return;
    d->skip_to[at] = e + 1;
}

/* A loop's else [from, end), its breaks going to end.  (An else that
 * returns leaves the stack it unwound behind: the loop goes on with the
 * one its breaks leave.) */
static int loop_else(dc *d, int from, int end, dc_stack *st, dp_nodes *out) {
    dc_stack els = {0};
    if (dc_stack_copy(d, &els, st) < 0 || dc_region(d, from, end, end, &els, out) < 0)
        return -1;
    return d->region_live && dc_stack_copy(d, st, &els) < 0 ? -1 : 0;
}

static int loop_body(dc *d, dc_loop *lp, int start, int end, dc_stack *st, dp_nodes *out) {
    lp->up = d->loop;
    d->loop = lp;
    int r = dc_region(d, start, end, lp->head, st, out);
    d->loop = lp->up;
    return r;
}

static int for_loop(dc *d, int i, int end, int exit, dc_stack *st, dp_nodes *out, int *next) {
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
        if (!continues_as(d, done_at, exit >= 0 ? exit : end))
            return dc_fail(d, i, "for loop exits past its enclosing block");
        body_end = end;
    }
    if (body_end - 1 > i && d->in[body_end - 1].op == IR_JUMP && d->in[body_end - 1].target == i)
        d->seen[--body_end] = 1;
    else if (body_end < done_at)
        return dc_fail(d, i, "for loop body runs past its enclosing block");
    int brk = find_loop_exit(d, i + 1, body_end, done_at);
    if (brk > end)
        brk = done_at;
    int then = -1;
    if (brk == done_at && done_at < end && exit >= 0 && jumps_as(d, i + 1, body_end, exit, done_at)) {
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
    if (loop_body(d, &lp, i + 1, body_end, &body_st, &s->l1) < 0)
        return -1;
    /* without a jump back, falling off the body leaves the loop: the
     * compiler dropped the jump of a final `break` */
    if (d->region_live && body_end == done_at && dc_add(d, &s->l1, dc_stmt(d, S_BREAK, body_end - 1)) < 0)
        return -1;
    if ((s->a = holder->l1.v[0]) == NULL)
        return dc_fail(d, i, "for loop without a target");
    if (dc_pop(d, st, i) == NULL) /* the exhausted iterator is gone */
        return -1;
    if (brk > done_at && loop_else(d, done_at, brk, st, &s->l2) < 0)
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
static int async_for_loop(dc *d, int i, int end, dc_stack *st, dp_nodes *out, int *next) {
    int legacy = is_legacy_async_for(d, i);
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
        int tail = stop + 1 + (d->in[stop + 1].op == IR_JUMP ? 1 : exit_block_len(d, stop + 1));
        dc_seen(d, cold, tail);
        d->skip_to[cold] = tail;
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
        d->skip_to[cold] = stop + 1;
    } else {
        if (body_end - 1 > body && d->in[body_end - 1].op == IR_JUMP && d->in[body_end - 1].target == i)
            body_end--;
        dc_seen(d, body_end, stop + 1);
    }
    dc_seen(d, i, body);
    int brk = find_loop_exit(d, body, body_end, after);
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
    if (loop_body(d, &lp, body, body_end, &body_st, &s->l1) < 0)
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
static int nothing_runs(const dc *d, int from, int to) {
    for (int j = from; j < to; j++)
        if ((d->in[j].op != IR_NOP || d->nref[j] > 0) && d->reach[j])
            return 0;
    return 1;
}

static int while_true(dc *d, int i, int last, int end, int exit, dc_stack *st, dp_nodes *out, int *next) {
    int brk = dc_cold_loop_exit(d, i, last, find_loop_exit(d, i, last, last + 1));
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
    int body_end = brk > last + 1 && jumps_into(d, i, last, last + 1, brk) ? brk : last;
    /* (the same, the loop ending the body of an enclosing loop: its
     * breaks go to that loop's head) */
    if (brk == last + 1 && brk < end && d->loop && exit == d->loop->head && jumps_into(d, i, last, last + 1, end) &&
        jumps_as(d, i, last, exit, brk)) {
        body_end = brk = lp.brk = end;
        lp.then = exit;
    }
    /* (the loop ends its region: a jump to where the region goes on, a
     * 3.12+ break threaded to an enclosing loop's head, is a break too) */
    int ends_region = lp.then < 0 && brk == last + 1 && brk <= end && nothing_runs(d, brk, end) && exit >= 0;
    if (ends_region)
        lp.then = exit;
    if (body_end == last)
        dc_seen(d, last, last + 1);
    if (loop_body(d, &lp, i, body_end, st, &s->l1) < 0)
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
    int from = d->code->py_minor >= 11 && d->region_stop > last + 1 ? d->region_stop : last + 1;
    if (body_end == last && brk > from && dc_region(d, from, brk, brk, st, &s->l2) < 0)
        return -1;
    *next = brk > from ? brk : from;
    return dc_add(d, out, s);
}

/* `while True:` at i (3.10: the NOP kept for its line; a test there is
 * a `while cond:`, cond_while's) whose last jump back, past `last` (what
 * back_edge found, or -1), is a `continue` in an except clause: the jump
 * back that would close the body is gone (3.8/3.9 leave it when dead in
 * most shapes, not after a return), the body never falling through, or it
 * is a `break` falling into the loop's exit.  The body ends at the first E past those jumps, within the
 * region ending at `end`, that is the end of a statement (E - 1 does not
 * fall through, or a jump lands at E), splits no statement of the body
 * (each block opened in it is closed with its handler before E), from
 * which only breaks leave (its jumps past E go to E), and into which no
 * code outside jumps.  A later end would read the same: code past E is
 * reached from the body by breaks only.  The end, or -1. */
static int legacy_loop_end(const dc *d, int i, int last, int end) {
    int lastj = -1;
    for (int j = d->last_back ? d->last_back[i] : -1; j >= 0; j = d->last_back[d->n + 1 + j])
        lastj = j > lastj ? j : lastj;
    if (d->code->py_minor > 10 || lastj <= last || lastj >= end || !dc_legacy_inside_try(d, lastj) ||
        (d->code->py_minor == 10 && d->in[i].op != IR_NOP))
        return -1;
    for (int E = lastj + 1, tries = 0; E <= end && E <= d->n && tries < 64; E++) {
        if (!is_terminator(d->in[E - 1].op) && d->reach[E - 1] && (E >= d->n || d->nref[E] == 0))
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

/* The `while True:` of legacy_loop_end: its body [i, E), its breaks to E. */
static int while_true_to(dc *d, int i, int E, dc_stack *st, dp_nodes *out, int *next) {
    dp_node *s = dc_stmt(d, S_WHILE, i);
    static const dp_const true_const = {.kind = DP_CONST_TRUE};
    if (s == NULL || (s->a = dc_const(d, &true_const)) == NULL)
        return -1;
    dc_loop lp = {i, E, 0, NULL, -1};
    if (loop_body(d, &lp, i, E, st, &s->l1) < 0)
        return -1;
    /* falling into E is a break (where the code does not fall there, the
     * walk may still think it might, after a try whose parts all leave, or
     * drop a last `return None` as if it ended the function: a break is
     * the way out there too) */
    int falls = !is_terminator(d->in[E - 1].op) && d->reach[E - 1];
    if ((falls || (d->region_live && dc_can_complete(&s->l1, 0))) && dc_add(d, &s->l1, dc_stmt(d, S_BREAK, E - 1)) < 0)
        return -1;
    *next = E;
    return dc_add(d, out, s);
}

/* 3.12+ `while True:` ending the region [i, end) whose only jump back, at
 * `cold`, is cold code after the function, reached from the except clauses
 * of a try in the body: its body is the rest of the region (and the
 * clauses the try takes), from which no break leaves. */
static int while_true_cold(dc *d, int i, int cold, int end, dc_stack *st, dp_nodes *out) {
    if (find_loop_exit(d, i, end, end) != end || dc_cold_loop_exit(d, i, end, cold + 1) != cold + 1)
        return dc_fail(d, i, "loop with its jump back after the function and a break");
    dp_node *s = dc_stmt(d, S_WHILE, i);
    static const dp_const true_const = {.kind = DP_CONST_TRUE};
    if (s == NULL || (s->a = dc_const(d, &true_const)) == NULL)
        return -1;
    dc_loop lp = {i, -1, 0, NULL, -1};
    dc_seen(d, cold, cold + 1);
    d->skip_to[cold] = cold + 1; /* (the walk past the handler steps over it) */
    if (loop_body(d, &lp, i, end, st, &s->l1) < 0)
        return -1;
    return dc_add(d, out, s);
}

/* ------------------------------------------------------------------ */
/* Conditions                                                           */

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
    int r = d->code->py_minor >= 12 ? dc_inline_comprehension(d, q, st, NULL, next) : 0;
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
    dc_stack tmp = {0};
    if (dc_stack_copy(d, &tmp, st) < 0)
        return -1;
    int base = tmp.n;
    dc_spec sp;
    dc_spec_begin(d, &sp);
    int q = p, ok = 0;
    while (q < end) {
        int op = d->in[q].op;
        if (is_cond_jump(op)) {
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
    if (!dc_spec_end(d, &sp, ok ? 0 : -1) || !ok)
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
    int e = return_tail_end(d, a);
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

static void retarget(dc *d, seg *g, int to) {
    dp_instr *j = &d->f.ins[g->jump];
    int old = j->target;
    d->nref[old]--;
    d->nref[to]++;
    j->target = to;
    g->target = to;
    /* a copy of a return tail nothing reaches any more is no code of its
     * own (NOPs before it: code erased as dead, a chain's cleanup) */
    int p = old - 1;
    while (p >= 0 && d->in[p].op == IR_NOP && d->nref[p] == 0)
        p--;
    int e = d->nref[old] == 0 && p >= 0 && is_terminator(d->in[p].op) ? return_tail_end(d, old) : -1;
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
                 (same_exit(d, s[m].target, past_line_nops(d, B)) || falls_to(d, B, s[m].target)))
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
        if (same_exit(d, t, F) || t == B || same_exit(d, t, past_line_nops(d, B)) || falls_to(d, B, t))
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
        if (is_cond_jump(x->op) && is_cond_jump(y->op))
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
    int brk = find_loop_exit(d, B, bottom, F);
    if (brk > end)
        brk = F;
    dc_loop lp = {s[0].start, brk, 0, NULL, -1};
    if (brk == F && F < end && exit >= 0 && jumps_as(d, B, bottom, exit, F)) {
        lp.brk = end; /* a break that skips [F, end): the else */
        lp.then = exit;
    }
    dc_seen(d, bottom, last + 1); /* the test repeated at the bottom */
    for (int j = last + 1; j < F; j++)
        if (d->in[j].op == IR_POP_TOP || d->in[j].op == IR_JUMP)
            d->seen[j] = 1; /* a chained comparison's cleanup */
    if (loop_body(d, &lp, B, bottom, st, &w->l1) < 0)
        return -1;
    if (lp.then >= 0) {
        if (loop_else(d, F, end, st, &w->l2) < 0)
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
    if (d->code->py_minor < 12 || F <= B || F > end || !is_terminator(d->in[F - 1].op))
        return 0;
    back_edge(d, B, d->n); /* (builds d->last_back) */
    int c = -1;
    for (int j = d->last_back != NULL ? d->last_back[B] : -1; j >= 0 && c < 0; j = d->last_back[d->n + 1 + j])
        if (j - len > F && !d->seen[j] && d->in[j].op == IR_JUMP)
            c = j;
    if (c < 0 || !is_terminator(d->in[c - len - 1].op))
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
    if (flush_leftovers(d, st, 0, NULL, out, stmt_start) < 0)
        return -1;
    dp_node *w = dc_stmt(d, S_WHILE, s0);
    if (w == NULL || (w->a = parse_cond(d, s, 0, k - 1, B, F)) == NULL)
        return -1;
    dc_seen(d, C, c + 2);
    d->skip_to[C] = c + 2; /* (the walk past the clauses steps over it) */
    dc_loop lp = {C, brk, 0, NULL, -1};
    if (loop_body(d, &lp, B, F, st, &w->l1) < 0)
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
        !(d->code->py_minor <= 8 && x->op == IR_LOAD_GLOBAL && x->name && strcmp(x->name, "AssertionError") == 0 &&
          known))
        return -1;
    for (int j = i + 1; j < d->n && d->nref[j] == 0; j++) {
        int op = d->in[j].op;
        if (op == IR_RAISE)
            return d->in[j].arg == 1 ? j : -1;
        if (dc_is_jump(op) || is_terminator(op) || op == IR_FOR_ITER || dc_is_block_setup(op))
            return -1;
    }
    return -1;
}

/* Is `raise` statement s, which starts at `start`, the failing side of an
 * assert with no test (3.9+: it loads AssertionError with
 * LOAD_ASSERTION_ERROR)? */
static int is_assert_false(const dc *d, int start, const dp_node *s) {
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
        if (back_edge(d, s[m].start, d->n) >= s[m].start) /* (3.10/3.11 `while a and b: pass`: */
            cut = m;                                          /* the bottom test jumps back to the NOP) */
    int j = back_edge(d, B, d->n);
    if (cut == k && j > B && is_cond_jump(d->in[j].op)) {
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
        d->seen[s[m].jump] = 1;
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
    if (F >= i || exit < 0 || !continues_as(d, F, exit) || d->code->py_minor > 9)
        return 0;
    for (int j = last + 1; j < end; j++)
        if (d->reach[j] && d->in[j].op != IR_NOP)
            return 0;
    return 1;
}

static int while_without_bottom_test(dc *d, int i, int last, int end, int exit, dc_stack *st, dp_nodes *out,
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
        (F == last + 1 && d->code->py_minor > 9))
        return 0;
    /* (an exit past the region's end is where the region goes on: the
     * loop ends an if's branch, which jumps over the else) */
    int stop = F < i ? last + 1 : F;
    if (F > end) {
        if (!continues_as(d, F, end))
            return 0;
        stop = end;
    }
    /* a loop ending its region whose breaks go where the region goes on:
     * [stop, end) is its else */
    int then = F > i && stop < end && exit >= 0 && jumps_as(d, B, last, exit, stop) ? exit : -1;
    /* (a jump out past that exit is a `break` of a `while ... else`, or
     * threaded through it: the `while True:` form covers those) */
    for (int j = B; F == last + 1 && j < last; j++)
        if (d->in[j].target > F && !(then >= 0 && continues_as(d, d->in[j].target, then)))
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
    if (loop_body(d, &lp, B, stop, st, &w->l1) < 0)
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
        if (loop_else(d, stop, end, st, &w->l2) < 0)
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

/* 3.10+ copies a short exit (`CALL; RETURN_VALUE`) into both arms of a
 * conditional expression: `return f(a if c else b)` compiles to `f; c; jump
 * to F if not c; a; CALL; RETURN; F: b; CALL; RETURN`.  With values of this
 * statement below the test (`f`), `if c: return f(a)` would evaluate them
 * after the test: when both arms are one value followed by the same tail,
 * the value is the conditional expression and the walk goes on with the
 * else arm's copy of the tail.  0 when the arms are not so. */
static int ifexp_shared_tail(dc *d, dp_node *cond, int B, int F, int end, dc_stack *st, int *next) {
    if (st->n <= d->base || F - 1 <= B || d->in[F - 1].op != IR_RETURN_VALUE)
        return 0;
    int F2 = F;
    while (F2 < end && d->in[F2].op != IR_RETURN_VALUE && !dc_is_jump(d->in[F2].op) &&
           (F2 == F || d->nref[F2] == 0))
        F2++;
    if (F2 >= end || d->in[F2].op != IR_RETURN_VALUE || (F2 > F && d->nref[F2] != 0))
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
            (a = dc_value_region(d, B, F - L, &t1)) != NULL && same_stack(&t1, st))
            b = dc_value_region(d, F, F2 - L, &t2);
        if (b && !same_stack(&t2, st))
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
        dp_node *right = left ? dc_value_region(d, B, F, st) : NULL;
        if (right == NULL)
            return -1;
        *next = F;
        return dc_push(d, st, dc_boolop(d, is_or, left, right));
    }
    /* the failing side of an assert: after the jump, the assert being the
     * last statement before F; or at F, which nothing else reaches, the code
     * after the assert coming next (3.12+ loops: the jump back to the head) */
    int fail = -1, raise = assert_fail(d, B, stmt_start), pass = F, cont = F;
    if (raise >= 0 && raise < F && F <= end && nothing_runs(d, raise + 1, F)) {
        fail = B;
    } else if (raise >= 0 && (F < i || F > end) && F == exit && nothing_runs(d, raise + 1, end)) {
        fail = B; /* passing goes where the region flows: the loop head, the if's end */
        cont = end;
    } else if (F > B && F < d->n && (raise = assert_fail(d, F, stmt_start)) >= 0 &&
               (is_terminator(d->in[F - 1].op) || d->in[F - 1].op == IR_JUMP)) {
        int refs = 0;
        for (int m = 0; m < k; m++)
            refs += s[m].target == F;
        if (refs == d->nref[F]) {
            fail = F;
            pass = cont = B;
        }
    }
    /* from here on the jump makes a statement: values left below it go to
     * temporaries first (see flush_leftovers) */
    if (F < i || fail >= 0 || F > end) {
        if (flush_leftovers(d, st, 0, NULL, out, stmt_start) < 0)
            return -1;
    }
    if (fail >= 0) {
        if (assert_stmt(d, s, k, stmt_start, fail, raise, pass, pass == F ? B : F, st, out) < 0)
            return -1;
        if (fail == F) /* the walk steps over the failing side when it gets there */
            d->skip_to[F] = raise + 1;
        *next = cont;
        return 1;
    }
    if (F < i) {
        /* a backward conditional jump: `if cond: continue` in a loop */
        dp_node *c = parse_cond(d, s, 0, k - 1, F, B);
        int handled;
        dp_nodes body = {0};
        if (c == NULL || jump_stmt(d, i, F, exit, &body, &handled) < 0)
            return -1;
        if (!handled)
            return dc_fail(d, s[k - 1].jump, "unstructured backward jump");
        /* the region ends by jumping back there: `if cond: <up to that
         * jump>` then the jump, which CPython threaded the if's jump
         * through, when the if falls into it (tried: the rest may not be
         * one block) */
        if (exit != F && end - 1 > B && end <= d->n && d->in[end - 1].op == IR_JUMP && d->in[end - 1].target == F) {
            dc_spec sp;
            dc_stack saved = {0};
            dp_node *ifs = dc_stmt(d, S_IF, stmt_start);
            if (ifs == NULL || dc_stack_copy(d, &saved, st) < 0 || (ifs->a = parse_cond(d, s, 0, k - 1, B, F)) == NULL)
                return -1;
            dc_spec_begin(d, &sp);
            int r = dc_region(d, B, end - 1, end - 1, st, &ifs->l1);
            /* (the if falls into the jump: a dead one is no way out of it) */
            if (dc_spec_end(d, &sp, r) && d->region_stop == end - 1 && d->region_live) {
                *next = end - 1;
                return dc_add(d, out, ifs);
            }
            if (dc_stack_copy(d, st, &saved) < 0)
                return -1;
        }
        if (exit == F) {
            /* the region loops back anyway: `if not cond: rest` */
            dp_node *ifs = dc_stmt(d, S_IF, stmt_start);
            if (ifs == NULL || (ifs->a = parse_cond(d, s, 0, k - 1, B, F)) == NULL)
                return -1;
            if (dc_region(d, B, end, exit, st, &ifs->l1) < 0)
                return -1;
            *next = end;
            return dc_add(d, out, ifs) < 0 ? -1 : REST_OF_REGION;
        }
        dp_node *ifs = dc_stmt(d, S_IF, stmt_start);
        if (ifs == NULL)
            return -1;
        ifs->a = c;
        ifs->l1 = body;
        *next = B;
        return dc_add(d, out, ifs);
    }
    if (F > d->n)
        return dc_fail(d, i, "jump out of range");
    /* the last statement of a try body can end past the protected range
     * (its RETURN_VALUE cannot raise): `if c: return x` falls to F there;
     * with a constant x the whole branch is past it (B == end, 3.11: F is
     * the JUMP_FORWARD over the handler) */
    if (finishes && F > end && F < d->n && B <= end && (d->in[F - 1].op == IR_RETURN_VALUE || d->in[F - 1].op == IR_RAISE)) {
        int inside = 1;
        for (int j = end; j < F && inside; j++)
            inside = d->in[j].op != IR_PUSH_EXC_INFO && !(d->nref[j] > 0 && j > B);
        if (inside)
            end = F;
    }
    int far_exit = -1;
    if (F > end) {
        int handled;
        dp_nodes body = {0};
        /* (a copy of the `return <const>` the region exits to is that exit) */
        if (jump_stmt(d, i, same_exit(d, F, exit) ? exit : F, exit, &body, &handled) < 0)
            return -1;
        if (!handled) {
            int r = far_jump_stmt(d, i, F, end, exit, &body);
            if (r < 0)
                return -1;
            if (r == 0)
                return dc_fail(d, i, "conditional jump past its enclosing block");
            handled = 1;
        }
        if (handled && body.n > 0) {
            dp_node *ifs = dc_stmt(d, S_IF, stmt_start);
            if (ifs == NULL || (ifs->a = parse_cond(d, s, 0, k - 1, F, B)) == NULL)
                return -1;
            ifs->l1 = body;
            *next = B;
            return dc_add(d, out, ifs);
        }
        /* jumps to where this region flows anyway (its exit: the operands
         * jumping there are read as going to its end) */
        for (int m = 0; handled && m < k; m++)
            if (s[m].target == F)
                s[m].target = end;
        F = end;
        far_exit = exit; /* where the then-part goes on too */
    }
    /* 3.12+ has no backward conditional jump: `if c: rest` ending a loop
     * body compiles to `c; jump to rest if c; JUMP head` just like `if not
     * c: continue; rest`.  Where `not c` is a test the AST optimizer folds
     * (`not (a in b)`), only the first spelling recompiles the same. */
    if (d->loop && exit == d->loop->head && exit != d->loop->brk && F > B && F <= end) {
        int j = B;
        while (j < F && d->in[j].op == IR_NOP)
            j++;
        dp_node *cont = NULL;
        if (j == F - 1 && d->in[j].op == IR_JUMP && d->in[j].target == exit &&
            (cont = parse_cond(d, s, 0, k - 1, B, F)) == NULL)
            return -1;
        if (cont && folded_nots(cont) > 0) {
            dp_node *ifs = dc_stmt(d, S_IF, stmt_start);
            if (ifs == NULL || (ifs->a = parse_cond(d, s, 0, k - 1, F, B)) == NULL)
                return -1;
            dc_seen(d, B, F);
            if (dc_region(d, F, end, exit, st, &ifs->l1) < 0)
                return -1;
            *next = end;
            return dc_add(d, out, ifs) < 0 ? -1 : REST_OF_REGION;
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
        (is_cond_jump(d->in[last].op) || (d->in[last].op == IR_JUMP && d->code->py_minor >= 12))) {
        if (flush_leftovers(d, st, 0, NULL, out, stmt_start) < 0)
            return -1;
        int test_end = d->in[last].op == IR_JUMP ? last : last + 1;
        int r = cond_while(d, s, k, test_end, last, end, exit, st, out, next);
        if (r != 0)
            return r < 0 ? -1 : r == REST_OF_REGION ? REST_OF_REGION : 0;
    }
    if (d->code->py_minor >= 12 && F > B && F <= end && is_terminator(d->in[F - 1].op)) {
        int r = cold_cond_while(d, s, k, stmt_start, end, st, out, next);
        if (r != 0)
            return r < 0 ? -1 : 0;
    }
    dp_node *cond = parse_cond(d, s, 0, k - 1, B, F);
    if (cond == NULL)
        return -1;
    /* then-part [B, then_end), else-part [F, J) when the then-part jumps over it */
    int then_end = F, J = F, J_exit = -1;
    if (F - 1 >= B && d->in[F - 1].op == IR_JUMP && d->in[F - 1].target > F) {
        int t = d->in[F - 1].target;
        int is_break = d->loop && t == d->loop->brk;
        int is_continue = d->loop && t == d->loop->head;
        /* (past the region's end it must be where the region goes on:
         * else the jump is a statement of the then-part) */
        if (!is_break && (!is_continue || t == exit) && (t <= end || continues_as(d, t, exit >= 0 ? exit : end))) {
            if (t > end)
                skip_exit_copy_at(d, t, exit >= 0 ? exit : end);
            then_end = F - 1;
            J = t > end ? end : t;
            J_exit = t > end && exit >= 0 ? exit : J; /* where both branches go on */
            d->seen[F - 1] = 1;
        }
    }
    /* (3.12+ threads the jump out of a nested if to the end of a then-part
     * ending in `continue` or `break` on to the join past the else) */
    int leaves_loop = F - 1 >= B && d->in[F - 1].op == IR_JUMP && d->loop &&
                      (d->in[F - 1].target == d->loop->head || d->in[F - 1].target == d->loop->brk);
    if (J == F && (leaves_loop || (F - 1 >= B && (d->in[F - 1].op == IR_RERAISE || d->in[F - 1].op == IR_RETURN_VALUE ||
                                                  d->in[F - 1].op == IR_RAISE)))) {
        /* the then-part ends in code that never falls through (a try's
         * cleanup block, a return, an assert's failing side, a continue or
         * break): if it jumps past F, [F, J) is the else */
        int vj = 0, to_f = 0;
        for (int j = B; j < F; j++) {
            int op = d->in[j].op;
            int t = op == IR_JUMP || (is_cond_jump(op) && op != IR_JUMP_IF_FALSE_OR_POP && op != IR_JUMP_IF_TRUE_OR_POP)
                        ? d->in[j].target : -1;
            if (t > F && t <= end && t > J && !(d->loop && (t == d->loop->brk || t == d->loop->head)))
                J = t;
            /* (a try's clause going where the region goes on past its
             * end: the rest of the region is the else) */
            else if (t > end && end > J && continues_as(d, t, exit >= 0 ? exit : end) &&
                     !(d->loop && (t == d->loop->brk || t == d->loop->head))) {
                J = end;
                J_exit = exit >= 0 ? exit : end; /* (where the then-part goes on too) */
            }
            else if (d->vjump[j] >= 0 && d->vjump[j] == (exit >= 0 ? exit : end))
                vj = 1;
            to_f |= d->in[j].target == F; /* (any jump: the then-part goes on there) */
        }
        /* (or, where it jumps nowhere past F nor to F, a duplicate of the
         * code there: 3.12+ copies the return after a try into its except
         * clauses) */
        if (J == F && vj && !to_f && end > F) {
            J = end;
            J_exit = exit >= 0 ? exit : end;
        }
    }
    /* the then-part jumps to where the region goes on, from outside it (3.12+:
     * an except clause's exit, `POP_EXCEPT; JUMP` back to the code after the
     * try, copied into each branch), or it ends with a loop whose breaks go
     * there (threaded past the if's end to an enclosing loop's head): the
     * rest of the region is the else, and the statement falls off the
     * region only as the else does.  (Not when the then-part jumps into it.) */
    int rest = 0, ends_in_loop = F - 1 > B && d->in[F - 1].op == IR_JUMP && d->in[F - 1].target >= B &&
                                 d->in[F - 1].target < F - 1;
    for (int j = B; ends_in_loop && j < F - 1; j++)
        if (d->in[j].op == IR_JUMP && d->in[j].target == exit)
            ends_in_loop = 2;
    if (J == F && F < end && exit >= 0 && (exit < B || exit > end) && F - 1 >= B && d->in[F - 1].op == IR_JUMP &&
        ((d->in[F - 1].target == exit && !(d->loop && (exit == d->loop->head || exit == d->loop->brk))) ||
         (ends_in_loop == 2 && !(d->loop && exit == d->loop->brk))) &&
        !jumps_into(d, B, F, F, end)) {
        J = end;
        J_exit = exit;
        rest = 1;
    }
    /* a conditional expression leaves one value from each branch */
    if (J > F) {
        dc_spec sp;
        dc_spec_begin(d, &sp);
        dc_stack t1 = {0}, t2 = {0};
        dp_node *a = NULL, *b = NULL;
        /* (a branch that is no value leaves its loops as they were: a jump
         * back marked seen would hide the loop from the statement walk) */
        char *seen = dp_alloc(d->sh->ar, (size_t)(J - B));
        if (seen == NULL)
            return dc_fail(d, B, "out of memory");
        memcpy(seen, d->seen + B, (size_t)(J - B));
        if (dc_stack_copy(d, &t1, st) == 0 && dc_stack_copy(d, &t2, st) == 0) {
            a = dc_value_region(d, B, then_end, &t1);
            b = a ? dc_value_region(d, F, J, &t2) : NULL;
        }
        for (int j = B; !b && j < J; j++)
            if (dc_is_jump(d->in[j].op) && d->in[j].target >= 0 && d->in[j].target <= j)
                d->seen[j] = seen[j - B];
        if (dc_spec_end(d, &sp, b ? 0 : -1)) {
            dp_node *e = dc_node(d, E_IFEXP);
            if (e == NULL)
                return -1;
            e->a = cond;
            e->b = a;
            e->c = b;
            *next = J;
            return dc_push(d, st, e);
        }
    }
    if (J == F) {
        int r = ifexp_shared_tail(d, cond, B, F, end, st, next);
        if (r != 0)
            return r < 0 ? -1 : 0;
    }
    if (flush_leftovers(d, st, 0, NULL, out, stmt_start) < 0)
        return -1;
    dp_node *ifs = dc_stmt(d, S_IF, stmt_start);
    if (ifs == NULL)
        return -1;
    ifs->a = cond;
    dc_stack t1 = {0};
    if (dc_stack_copy(d, &t1, st) < 0)
        return -1;
    if (J > F && J_exit < 0)
        J_exit = J;
    /* (J_exit is set where the then-part jumps on past the region's end,
     * also with no else between: J == F == end) */
    if (dc_region(d, B, then_end, J > F || J_exit >= 0 ? J_exit : far_exit >= 0 ? far_exit : F, &t1, &ifs->l1) < 0)
        return -1;
    if (d->region_live && !same_stack(&t1, st))
        return dc_fail(d, B, "a value flows out of the branch");
    dc_stack before = {0};
    if (dc_stack_copy(d, &before, st) < 0)
        return -1;
    if (J > F && dc_region(d, F, J, J_exit, st, &ifs->l2) < 0)
        return -1;
    if (J > F && d->region_live && !same_stack(st, &before))
        return dc_fail(d, F, "a value flows out of the branch");
    /* (an else that never falls through, a `return` out of an except
     * clause, may have popped what the code after the if still holds) */
    if (J > F && !d->region_live && dc_stack_copy(d, st, &before) < 0)
        return -1;
    *next = J;
    if (dc_add(d, out, ifs) < 0)
        return -1;
    return rest ? REST_OF_REGION : 0;
}
