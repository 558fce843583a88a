/* The always-correct fallback.  When structuring fails (bytecode that no
 * compiler wrote: Dynamo's transformed code, hand-made or obfuscated code),
 * the whole code object becomes a state machine over its basic blocks:
 *
 *     __state = 0
 *     while True:
 *         try:
 *             if __state == 0:
 *                 ...
 *                 __state = 2
 *             if __state == 1:
 *                 ...
 *         except BaseException as __exc0:
 *             <send the exception to the handler of the block that raised>
 *
 * Stack slot k crossing a block boundary lives in `__stack_k`; inside a block
 * expr.c's symbolic stack builds expressions.  Every value is evaluated in
 * the order the bytecode evaluated it: values built by pushes and pops are
 * evaluated in stack order, so before a statement the values still pending
 * below its operands are spilled into temporaries (`__t1 = ...`), and COPY,
 * SWAP and too deep expressions spill too.
 *
 * Exceptions follow the 3.11+ exception table.  A handler runs inside the
 * `except` clause that caught its exception: the code after PUSH_EXC_INFO is
 * a nested state machine in that clause, left by `break` at POP_EXCEPT, so
 * sys.exc_info() and implicit exception chaining are those of the bytecode.
 * When handlers cannot be nested so (PUSH_EXC_INFO reached without an
 * exception, inconsistent nesting), one flat machine runs everything and
 * sys.exc_info() inside handlers is not the handled exception.
 *
 * Known differences from the bytecode, all outside results and exception
 * types of well-formed programs:
 * - a re-raise (RERAISE) is `raise exc`: the traceback gains an entry, and
 *   __context__ is set when another exception is being handled around it;
 * - `with` looks up __enter__/__exit__ as attributes (AttributeError instead
 *   of TypeError for an object that is no context manager); CHECK_EXC_MATCH
 *   is isinstance(); IMPORT_FROM outside `from m import a` is an attribute
 *   access; builtins (iter, next, isinstance, type, ...) are used by name;
 * - temporaries keep values alive longer and are visible to locals(); a
 *   function or class made but not stored under its own name is still bound
 *   to that name by its `def`/`class` statement;
 * - the lasti value pushed for handlers is -1 (only tracebacks read it).
 */
#include <stdio.h>
#include <string.h>

#include "dc.h"

#define MAX_EXPR_DEPTH 40 /* deeper expressions are spilled: the printer and compiler stay shallow */

/* E_NAME nodes made here carry a mark in op2: the value is an atom (reading
 * it has no effect and it cannot change before it is used). */
enum {
    MARK = 0x46420000,
    MARK_MASK = 0x7fff0000,
    M_TEMP = 1,   /* a temporary assigned once per run of its block */
    M_STACK = 2,  /* __stack_<op>: a slot at the block's entry */
    M_CELL = 3,   /* LOAD_CLOSURE: the cell itself, only used by MAKE_FUNCTION */
    M_KIND = 0xff,
    M_SAVED = 0x100, /* 3.12 LOAD_FAST_AND_CLEAR: (value,) or () when unbound */
};

/* What a stack slot holds at a block entry. */
enum { SLOT_VALUE, SLOT_NULL, SLOT_SAVED };

typedef struct fb_block {
    int start, end;     /* IR range */
    int exc;            /* exception-table entry covering it, or -1 */
    int reached, done;
    int depth, level;   /* entry stack depth, PUSH_EXC_INFO nesting */
    uint8_t *slots;     /* entry: SLOT_* per stack slot */
    int from_normal;    /* reached by a jump or fall-through */
    int id;             /* state number, -1 if unreachable */
    int pop_except;     /* ends with POP_EXCEPT: leaves a nested machine */
    int succ_of_push;   /* the block after a PUSH_EXC_INFO block */
    dp_nodes body;
} fb_block;

typedef struct fb {
    dc *d;
    fb_block *b;
    int nb;
    int *block_of;      /* IR index -> block starting there, -1 */
    int *work;
    int nwork;
    int flat;           /* one machine for every level */
    int maxlevel;
    int scope_body;     /* module or class body: `return` leaves the machine */
    const char *pfx;    /* "__" (or more underscores if the code uses such names) */
    int ntemps;
    const char **stack_names;
    int nstack_names;
    dp_nodes fixups;    /* E_CONST state numbers: op = block index, filled at the end */
    /* the block being translated */
    fb_block *cur;
    dc_stack st;
    int *dep;           /* expression depth per stack slot */
    int depcap;
    int hdepth;         /* slots [0, hdepth) must stay canonical (handler depth), or 0 */
    dp_nodes *out;
    int at;             /* current instruction, for statement positions */
} fb;

static int oom(fb *F) { return dp_fail(F->d->sh->err, -1, "out of memory"); }

static int fail(fb *F, int at, const char *what) { return dc_fail(F->d, at, "%s", what); }

/* ------------------------------------------------------------------ names */

static int starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static int name_clashes(const dp_strs *l, const char *pfx) {
    static const char *const ours[] = {"state", "stack_", "t", "exc"};
    char buf[64];
    for (size_t k = 0; k < l->n; k++) {
        if (l->v[k] == NULL)
            continue;
        for (size_t q = 0; q < sizeof ours / sizeof *ours; q++) {
            snprintf(buf, sizeof buf, "%s%s", pfx, ours[q]);
            if (starts_with(l->v[k], buf))
                return 1;
        }
    }
    return 0;
}

/* A prefix for our variables that no name of the code object starts with. */
static int pick_prefix(fb *F) {
    static const char *const pfx[] = {"__", "___", "____", "_____", "__dp_", "__dp__"};
    const dp_code *c = F->d->code;
    for (size_t k = 0; k < sizeof pfx / sizeof *pfx; k++) {
        if (!name_clashes(&c->varnames, pfx[k]) && !name_clashes(&c->names, pfx[k]) &&
            !name_clashes(&c->cellvars, pfx[k]) && !name_clashes(&c->freevars, pfx[k])) {
            F->pfx = pfx[k];
            return 0;
        }
    }
    return fail(F, -1, "no free name for the state machine's variables");
}

static const char *make_name(fb *F, const char *what, int n) {
    char buf[64];
    if (n >= 0)
        snprintf(buf, sizeof buf, "%s%s%d", F->pfx, what, n);
    else
        snprintf(buf, sizeof buf, "%s%s", F->pfx, what);
    char *s = dp_strdup(F->d->sh->ar, buf);
    if (s == NULL)
        oom(F);
    return s;
}

static dp_node *marked_name(fb *F, const char *s, int mark) {
    dp_node *n = s ? dc_name(F->d, s) : NULL;
    if (n)
        n->op2 = MARK | mark;
    return n;
}

static int mark_of(const dp_node *e) {
    return (e->kind == E_NAME && (e->op2 & MARK_MASK) == MARK) ? (e->op2 & ~MARK_MASK) : 0;
}

static dp_node *temp(fb *F) { return marked_name(F, make_name(F, "t", ++F->ntemps), M_TEMP); }

static dp_node *state_var(fb *F) { return marked_name(F, make_name(F, "state", -1), M_TEMP); }

/* The canonical node of slot k at a block entry. */
static dp_node *canon(fb *F, int k, int saved) {
    if (k >= F->nstack_names) {
        int cap = F->nstack_names ? F->nstack_names * 2 : 16;
        while (cap <= k)
            cap *= 2;
        const char **v = dp_alloc_array(F->d->sh->ar, (size_t)cap, sizeof *v);
        if (v == NULL)
            return oom(F), NULL;
        if (F->nstack_names)
            memcpy(v, F->stack_names, (size_t)F->nstack_names * sizeof *v);
        F->stack_names = v;
        F->nstack_names = cap;
    }
    if (F->stack_names[k] == NULL && (F->stack_names[k] = make_name(F, "stack_", k)) == NULL)
        return NULL;
    dp_node *n = marked_name(F, F->stack_names[k], M_STACK | (saved ? M_SAVED : 0));
    if (n)
        n->op = k;
    return n;
}

static int is_canon(const dp_node *e, int k) { return (mark_of(e) & M_KIND) == M_STACK && e->op == k; }

/* ------------------------------------------------------------------ atoms */

/* Reading an atom has no effect and gives the same value until it is used. */
static int is_atom(const dp_node *e) {
    if (e->kind == E_CONST || e->kind == X_NULL || mark_of(e))
        return 1;
    if (e->kind == E_TUPLE) { /* a closure tuple of cells */
        for (int k = 0; k < e->l1.n; k++)
            if ((mark_of(e->l1.v[k]) & M_KIND) != M_CELL)
                return 0;
        return 1;
    }
    return 0;
}

static dp_node *node(fb *F, int kind) { return dc_node(F->d, kind); }

static dp_node *call(fb *F, const char *fn, dp_node *a1, dp_node *a2, dp_node *a3) {
    dp_node *c = node(F, E_CALL);
    if (c == NULL || (c->a = dc_name(F->d, fn)) == NULL)
        return NULL;
    dp_node *args[3] = {a1, a2, a3};
    for (int k = 0; k < 3 && args[k]; k++)
        if (dc_add(F->d, &c->l1, args[k]) < 0)
            return NULL;
    return c;
}

static dp_node *attr(fb *F, dp_node *obj, const char *name) {
    dp_node *n = obj ? node(F, E_ATTR) : NULL;
    if (n) {
        n->a = obj;
        n->s = name;
    }
    return n;
}

static dp_node *compare(fb *F, dp_node *a, int op, dp_node *b) {
    dp_node *c = (a && b) ? node(F, E_COMPARE) : NULL;
    if (c == NULL)
        return NULL;
    if ((c->ops = dp_alloc(F->d->sh->ar, sizeof(int))) == NULL)
        return oom(F), NULL;
    c->a = a;
    c->ops[0] = op;
    return dc_add(F->d, &c->l1, b) < 0 ? NULL : c;
}

static dp_node *int_const(fb *F, long v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    dp_const *c = dp_const_new(F->d->sh->ar, DP_CONST_INT);
    if (c == NULL || (c->text = dp_strdup(F->d->sh->ar, buf)) == NULL)
        return oom(F), NULL;
    c->len = strlen(c->text);
    return dc_const(F->d, c);
}

static dp_node *bool_const(fb *F, int v) {
    static const dp_const t = {DP_CONST_TRUE, NULL, 0, 0, 0, NULL, 0, NULL};
    static const dp_const f = {DP_CONST_FALSE, NULL, 0, 0, 0, NULL, 0, NULL};
    return dc_const(F->d, v ? &t : &f);
}

static dp_node *empty_tuple(fb *F) { return node(F, E_TUPLE); }

/* A state number, filled once the reachable blocks are numbered. */
static dp_node *state_ref(fb *F, int block) {
    dp_node *n = node(F, E_CONST);
    if (n == NULL || dc_add(F->d, &F->fixups, n) < 0)
        return NULL;
    n->op = block;
    return n;
}

/* ------------------------------------------------------------------ lowering */

/* Turns the stack machine's internal nodes inside an expression into
 * Python; fails on values that have no spelling (NULL, ...). */
static dp_node *lower(fb *F, dp_node *e, int depth) {
    if (e == NULL)
        return NULL;
    if (depth > 1000)
        return fail(F, F->at, "expression nested too deeply"), NULL;
    switch (e->kind) {
    case X_ITER: /* GET_ITER / GET_YIELD_FROM_ITER used as a value */
        return call(F, "iter", lower(F, e->a, depth + 1), NULL, NULL);
    case X_CONVERTED: {
        static const char *const conv[4] = {"str", "str", "repr", "ascii"};
        return call(F, conv[e->op & 3], lower(F, e->a, depth + 1), NULL, NULL);
    }
    case X_ASSERTION:
        return dc_name(F->d, "AssertionError");
    default:
        break;
    }
    if (e->kind >= DP_NODE_KIND_COUNT) {
        const char *what = e->kind == X_NULL ? "a NULL stack entry" : e->kind == X_FUNC ? "a function before its definition"
                                                                                          : "an interpreter-internal value";
        dc_fail(F->d, F->at, "%s is used as a value", what);
        return NULL;
    }
    dp_node **kids[3] = {&e->a, &e->b, &e->c};
    for (int k = 0; k < 3; k++)
        if (*kids[k] && (*kids[k] = lower(F, *kids[k], depth + 1)) == NULL)
            return NULL;
    dp_nodes *lists[4] = {&e->l1, &e->l2, &e->l3, &e->l4};
    for (int l = 0; l < 4; l++)
        for (int k = 0; k < lists[l]->n; k++)
            if (lists[l]->v[k] && (lists[l]->v[k] = lower(F, lists[l]->v[k], depth + 1)) == NULL)
                return NULL;
    return e;
}

/* ------------------------------------------------------------------ statements */

static dp_node *stmt(fb *F, int kind) { return dc_stmt(F->d, kind, F->at); }

static int emit_to(fb *F, dp_nodes *out, dp_node *s) { return dc_add(F->d, out, s); }

static int emit(fb *F, dp_node *s) { return emit_to(F, F->out, s); }

static dp_node *assign_stmt(fb *F, dp_node *target, dp_node *value) {
    dp_node *s = stmt(F, S_ASSIGN);
    if (s == NULL || target == NULL || dc_add(F->d, &s->l1, target) < 0 || (s->b = lower(F, value, 0)) == NULL)
        return NULL;
    return s;
}

static int emit_assign(fb *F, dp_node *target, dp_node *value) { return emit(F, assign_stmt(F, target, value)); }

static int emit_expr(fb *F, dp_node *value) {
    dp_node *s = stmt(F, S_EXPR);
    if (s == NULL || (s->a = lower(F, value, 0)) == NULL)
        return -1;
    return emit(F, s);
}

/* `__state = <block>` */
static dp_node *goto_stmt(fb *F, int block) {
    dp_node *s = node(F, S_ASSIGN);
    if (s == NULL || dc_add(F->d, &s->l1, state_var(F)) < 0 || (s->b = state_ref(F, block)) == NULL)
        return NULL;
    return s;
}

static int declare(fb *F, dp_nodes *decls, const char *name) {
    for (int k = 0; k < decls->n; k++)
        if (strcmp(decls->v[k]->s, name) == 0)
            return 0;
    return dc_add(F->d, decls, dc_name(F->d, name));
}

/* The target of a name store/delete, declaring `global`/`nonlocal`. */
static dp_node *name_target(fb *F, const dp_instr *ins) {
    dc *d = F->d;
    if ((ins->op == IR_STORE_GLOBAL || ins->op == IR_DELETE_GLOBAL) && !d->is_module) {
        if (declare(F, &d->globals, ins->name) < 0)
            return NULL;
    } else if ((ins->op == IR_STORE_DEREF || ins->op == IR_DELETE_DEREF) && !d->is_class_body) {
        for (size_t k = 0; k < d->code->freevars.n; k++)
            if (strcmp(d->code->freevars.v[k], ins->name) == 0 && declare(F, &d->nonlocals, ins->name) < 0)
                return NULL;
    }
    return dc_name(d, ins->name);
}

/* ------------------------------------------------------------------ functions and classes */

static int is_identifier(const char *s) {
    if (s == NULL || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (unsigned char)*s >= 0x80))
        return 0;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              (unsigned char)*s >= 0x80))
            return 0;
    return 1;
}

static int is_class_call(const dp_node *v) {
    return v->kind == E_CALL && v->a && v->a->kind == X_BUILD_CLASS && v->l1.n >= 2 && v->l1.v[0]->kind == X_FUNC &&
           dc_is_const_kind(v->l1.v[1], DP_CONST_STR);
}

/* The name a `def`/`class` statement for v would bind (v: a made function or
 * class, possibly wrapped in decorator calls), or NULL. */
static const char *def_name(const dp_node *v) {
    while (v->kind == E_CALL && v->l1.n == 1 && v->l2.n == 0 && v->a && v->a->kind != X_BUILD_CLASS)
        v = v->l1.v[0];
    if (v->kind == X_FUNC && v->cst && v->cst->code)
        return v->cst->code->name;
    if (is_class_call(v))
        return v->l1.v[1]->cst->text;
    return NULL;
}

/* Emits the `def`/`class` statement (decorators included) for v. */
static int emit_def(fb *F, dp_node *v, const char *name) {
    dp_nodes decos = {0};
    while (v->kind == E_CALL && v->l1.n == 1 && v->l2.n == 0 && v->a && v->a->kind != X_BUILD_CLASS) {
        if (dc_add(F->d, &decos, lower(F, v->a, 0)) < 0)
            return -1;
        v = v->l1.v[0];
    }
    if (!is_identifier(name))
        return dc_fail(F->d, F->at, "cannot define a function named %s", name);
    dp_node *def;
    if (v->kind == X_FUNC) {
        if ((v->a && (v->a = lower(F, v->a, 0)) == NULL) || (v->b && (v->b = lower(F, v->b, 0)) == NULL) ||
            (v->c && (v->c = lower(F, v->c, 0)) == NULL))
            return -1;
        def = dc_funcdef(F->d, v, name, F->at);
    } else {
        for (int k = 2; k < v->l1.n; k++)
            if ((v->l1.v[k] = lower(F, v->l1.v[k], 0)) == NULL)
                return -1;
        for (int k = 0; k < v->l2.n; k++)
            if ((v->l2.v[k] = lower(F, v->l2.v[k], 0)) == NULL)
                return -1;
        def = dc_classdef(F->d, v, name, F->at);
    }
    if (def == NULL)
        return -1;
    def->l2 = decos;
    return emit(F, def);
}

/* ------------------------------------------------------------------ the stack */

static int ensure_dep(fb *F) {
    if (F->st.n <= F->depcap)
        return 0;
    int cap = F->depcap ? F->depcap * 2 : 16;
    while (cap < F->st.n)
        cap *= 2;
    int *v = dp_alloc_array(F->d->sh->ar, (size_t)cap, sizeof *v);
    if (v == NULL)
        return oom(F);
    if (F->depcap)
        memcpy(v, F->dep, (size_t)F->depcap * sizeof *v);
    F->dep = v;
    F->depcap = cap;
    return 0;
}

static int push(fb *F, dp_node *e, int depth) {
    if (dc_push(F->d, &F->st, e) < 0 || ensure_dep(F) < 0)
        return -1;
    F->dep[F->st.n - 1] = depth;
    return 0;
}

static dp_node *pop(fb *F) { return dc_pop(F->d, &F->st, F->at); }

static dp_node *top(fb *F, int k) { return dc_top(F->d, &F->st, k, F->at); }

/* Evaluates v into an atom now. */
static dp_node *spill(fb *F, dp_node *v) {
    if (is_atom(v))
        return v;
    const char *name = def_name(v);
    dp_node *t = temp(F);
    if (name) { /* a function or class value: its def statement binds its name */
        if (emit_def(F, v, name) < 0 || emit_assign(F, t, dc_name(F->d, name)) < 0)
            return NULL;
        return t;
    }
    return emit_assign(F, t, v) < 0 ? NULL : t;
}

/* Evaluates every pending value in slots [0, upto), bottom first. */
static int flush(fb *F, int upto) {
    for (int p = 0; p < upto && p < F->st.n; p++) {
        if (is_atom(F->st.v[p]))
            continue;
        dp_node *t = spill(F, F->st.v[p]);
        if (t == NULL)
            return -1;
        F->st.v[p] = t;
        F->dep[p] = 0;
    }
    return 0;
}

/* Stores slots [0, upto) into their __stack_k variables (one parallel
 * assignment: every value is read before any variable changes); slots above
 * that read a variable being overwritten get a temporary first. */
static int transfer(fb *F, int upto, dp_nodes *out) {
    if (upto < F->st.n && flush(F, F->st.n) < 0)
        return -1;
    dp_node *tg = node(F, E_TUPLE), *vals = node(F, E_TUPLE);
    if (tg == NULL || vals == NULL)
        return -1;
    for (int k = 0; k < upto; k++) {
        dp_node *v = F->st.v[k];
        if (v->kind == X_NULL || is_canon(v, k))
            continue;
        for (int p = upto; p < F->st.n; p++) {
            dp_node *w = F->st.v[p];
            if (is_canon(w, k)) {
                dp_node *t = temp(F);
                if (t == NULL || dc_add(F->d, &tg->l1, t) < 0 || dc_add(F->d, &vals->l1, w) < 0)
                    return -1;
                t->op2 |= w->op2 & M_SAVED;
                F->st.v[p] = t;
            }
        }
        dp_node *c = canon(F, k, (mark_of(v) & M_SAVED) != 0);
        if (c == NULL || dc_add(F->d, &tg->l1, c) < 0 || dc_add(F->d, &vals->l1, v) < 0)
            return -1;
        F->st.v[k] = c;
        F->dep[k] = 0;
    }
    if (tg->l1.n == 0)
        return 0;
    dp_node *s = tg->l1.n == 1 ? assign_stmt(F, tg->l1.v[0], vals->l1.v[0]) : assign_stmt(F, tg, vals);
    return emit_to(F, out, s);
}

/* ------------------------------------------------------------------ blocks and edges */

static int block_at(fb *F, int i) { return i >= 0 && i < F->d->n ? F->block_of[i] : -1; }

/* A block is reached with stack `st` (slot kinds taken from its nodes). */
static int reach(fb *F, int bi, const dc_stack *st, int level, int normal, int at) {
    if (bi < 0)
        return fail(F, at, "control flows past the end of the code");
    fb_block *b = &F->b[bi];
    b->from_normal |= normal;
    if (!b->reached) {
        b->reached = 1;
        b->depth = st->n;
        b->level = level;
        if (st->n && (b->slots = dp_alloc(F->d->sh->ar, (size_t)st->n)) == NULL)
            return oom(F);
        for (int k = 0; k < st->n; k++)
            b->slots[k] = st->v[k]->kind == X_NULL ? SLOT_NULL : (mark_of(st->v[k]) & M_SAVED) ? SLOT_SAVED : SLOT_VALUE;
        F->work[F->nwork++] = bi;
        return 0;
    }
    if (b->depth != st->n)
        return dc_fail(F->d, b->start, "stack depth %d here, %d on another path", st->n, b->depth);
    for (int k = 0; k < st->n; k++) {
        int kind = st->v[k]->kind == X_NULL ? SLOT_NULL : (mark_of(st->v[k]) & M_SAVED) ? SLOT_SAVED : SLOT_VALUE;
        if (kind != b->slots[k])
            return dc_fail(F->d, b->start, "stack slot %d holds different kinds of values on different paths", k);
    }
    if (b->level != level)
        F->flat = 1;
    return 0;
}

/* Ends the block with a jump to `bi` carrying the current stack. */
static int jump_to(fb *F, int bi, dp_nodes *out) {
    if (transfer(F, F->st.n, out) < 0 || reach(F, bi, &F->st, F->cur->level, 1, F->at) < 0)
        return -1;
    return emit_to(F, out, goto_stmt(F, bi));
}

/* if <cond>: <stack for yes>; __state = yes  else: <stack for no>; __state = no
 * Both branches see the stack minus `drop_yes` / `drop_no` top values. */
static int branch(fb *F, dp_node *cond, int yes, int drop_yes, int no, int drop_no) {
    dp_node *s = stmt(F, S_IF);
    if (s == NULL || (s->a = lower(F, cond, 0)) == NULL)
        return -1;
    int n = F->st.n;
    dc_stack saved = {0};
    if (dc_stack_copy(F->d, &saved, &F->st) < 0)
        return -1;
    F->st.n = n - drop_yes;
    if (jump_to(F, yes, &s->l1) < 0 || dc_stack_copy(F->d, &F->st, &saved) < 0)
        return -1;
    F->st.n = n - drop_no;
    if (jump_to(F, no, &s->l2) < 0)
        return -1;
    return emit(F, s);
}

/* ------------------------------------------------------------------ instructions */

static int is_store(int op) {
    return op == IR_STORE_NAME || op == IR_STORE_FAST || op == IR_STORE_GLOBAL || op == IR_STORE_DEREF;
}

/* Values consumed by an instruction that expr.c turns into an expression. */
static int npop(const dp_instr *in) {
    int pair = (in->arg2 & DP_CALL_PAIR) != 0;
    switch (in->op) {
    case IR_LOAD_ATTR: case IR_LOAD_METHOD: case IR_UNARY: case IR_CONVERT_VALUE: case IR_LIST_TO_TUPLE:
    case IR_GET_ITER: case IR_GET_YIELD_FROM_ITER: case IR_GET_AWAITABLE: case IR_YIELD_FROM: case IR_YIELD_VALUE:
        return 1;
    case IR_BINARY_OP: case IR_COMPARE: case IR_IS: case IR_CONTAINS: case IR_BINARY_SUBSCR:
    case IR_SET_FUNCTION_ATTRIBUTE:
        return 2;
    case IR_LOAD_SUPER_ATTR: case IR_BINARY_SLICE:
        return 3;
    case IR_BUILD_SLICE: case IR_BUILD_TUPLE: case IR_BUILD_LIST: case IR_BUILD_SET: case IR_BUILD_STRING:
    case IR_BUILD_UNPACK:
        return in->arg;
    case IR_BUILD_MAP:
        return 2 * in->arg;
    case IR_BUILD_CONST_KEY_MAP:
        return in->arg + 1;
    case IR_CALL:
        return in->arg + 1 + pair;
    case IR_CALL_EX:
        return 2 + (in->arg & 1) + pair;
    case IR_FORMAT_VALUE:
        return 1 + ((in->arg & DP_FMT_HAS_SPEC) != 0);
    default:
        return 0;
    }
}

/* The next instructions of the block store the function value on top (made
 * by the instruction before `j`), possibly through decorator calls, under
 * `name`: then the def statement can wait for that store. */
static int stored_as(fb *F, int j, const char *name) {
    const dc *d = F->d;
    for (; j < F->cur->end; j++) {
        const dp_instr *x = &d->in[j];
        if (x->op == IR_NOP)
            continue;
        if (is_store(x->op))
            return strcmp(x->name, name) == 0;
        int pair = (x->arg2 & DP_CALL_PAIR) != 0;
        if (x->op == IR_CALL && x->cst == NULL && x->arg == !pair)
            continue; /* deco(fn) */
        return 0;
    }
    return 0;
}

static int is_comprehension_code(const dp_code *c) {
    return strcmp(c->name, "<listcomp>") == 0 || strcmp(c->name, "<setcomp>") == 0 ||
           strcmp(c->name, "<dictcomp>") == 0 || strcmp(c->name, "<genexpr>") == 0;
}

/* Decides what the function value on top becomes, once it is complete
 * (3.13 sets defaults after MAKE_FUNCTION): a lambda, a comprehension (its
 * call follows), a def statement now, or a def at the store that follows. */
static int settle_function(fb *F, int next) {
    dp_node *fn = top(F, 0);
    if (fn == NULL || fn->kind != X_FUNC)
        return 0;
    const dp_code *code = fn->cst->code;
    if (is_comprehension_code(code))
        return 0;
    if (F->st.n >= 2 && F->st.v[F->st.n - 2]->kind == X_BUILD_CLASS)
        return 0; /* a class body, for the __build_class__ call */
    if (strcmp(code->name, "<lambda>") == 0) {
        if ((fn->a && (fn->a = lower(F, fn->a, 0)) == NULL) || (fn->b && (fn->b = lower(F, fn->b, 0)) == NULL) ||
            (fn->c && (fn->c = lower(F, fn->c, 0)) == NULL))
            return -1;
        dp_node *lam = dc_lambda(F->d, fn, F->at);
        if (lam == NULL)
            return -1;
        F->st.v[F->st.n - 1] = lam;
        return 0;
    }
    if (stored_as(F, next, code->name))
        return 0;
    if (flush(F, F->st.n - 1) < 0)
        return -1;
    dp_node *t = spill(F, fn);
    if (t == NULL)
        return -1;
    F->st.v[F->st.n - 1] = t;
    F->dep[F->st.n - 1] = 0;
    return 0;
}

/* A class made by __build_class__: kept for the store under its name. */
static int settle_class(fb *F, int next) {
    dp_node *v = top(F, 0);
    if (v == NULL || !is_class_call(v) || stored_as(F, next, v->l1.v[1]->cst->text))
        return v == NULL ? -1 : 0;
    if (flush(F, F->st.n) < 0)
        return -1;
    F->dep[F->st.n - 1] = 0;
    return 0;
}

static int make_function(fb *F, const dp_instr *ins) {
    dp_node *code = pop(F);
    if (code == NULL)
        return -1;
    if (!dc_is_const_kind(code, DP_CONST_CODE) || code->cst->code == NULL)
        return fail(F, F->at, "MAKE_FUNCTION without a code constant");
    dp_node *fn = node(F, X_FUNC);
    if (fn == NULL)
        return -1;
    fn->cst = code->cst;
    int depth = 0;
    dp_node **parts[4] = {NULL, &fn->c, &fn->b, &fn->a};
    static const int flags[4] = {DP_FN_CLOSURE, DP_FN_ANNOTATIONS, DP_FN_KWDEFAULTS, DP_FN_DEFAULTS};
    for (int k = 0; k < 4; k++) {
        if (!(ins->arg & flags[k]))
            continue;
        if (F->st.n > 0 && F->dep[F->st.n - 1] > depth)
            depth = F->dep[F->st.n - 1];
        dp_node *v = pop(F);
        if (v == NULL)
            return -1;
        if (parts[k])
            *parts[k] = v;
    }
    return push(F, fn, depth + 1);
}

/* Slots [0, hdepth) must hold what the handler expects at any moment. */
static int keep_handler_slots(fb *F) {
    if (F->hdepth == 0)
        return 0;
    if (F->st.n < F->hdepth)
        return fail(F, F->at, "stack shallower than its exception handler expects");
    for (int k = 0; k < F->hdepth; k++) {
        dp_node *v = F->st.v[k];
        int want = F->cur->slots[k];
        if (want == SLOT_NULL ? v->kind != X_NULL : !is_canon(v, k)) {
            if (want == SLOT_NULL || v->kind == X_NULL)
                return fail(F, F->at, "a NULL moves under an exception handler's stack");
            return transfer(F, F->hdepth, F->out);
        }
    }
    return 0;
}

/* Runs an instruction that builds an expression (expr.c). 1 if handled. */
static int expr_step(fb *F, int i) {
    const dp_instr *ins = &F->d->in[i];
    int n = npop(ins);
    if (n > F->st.n)
        return dc_fail(F->d, i, "stack underflow at %s", dp_irop_name(ins->op));
    int depth = 0;
    for (int k = F->st.n - n; k < F->st.n; k++)
        if (F->dep[k] > depth)
            depth = F->dep[k];
    int base = F->st.n - n;
    int r = dc_expr_step(F->d, i, &F->st);
    if (r <= 0)
        return r;
    if (ensure_dep(F) < 0)
        return -1;
    for (int k = base; k < F->st.n; k++)
        F->dep[k] = depth + 1;
    if (F->st.n > 0 && F->dep[F->st.n - 1] > MAX_EXPR_DEPTH && flush(F, F->st.n) < 0)
        return -1;
    return 1;
}

/* `not x` (expr.c folds `not not x` to x, which drops the bool()). */
static int unary_not(fb *F) {
    int depth = F->st.n ? F->dep[F->st.n - 1] : 0;
    dp_node *a = pop(F), *n = a ? node(F, E_UNARY) : NULL;
    if (n == NULL)
        return -1;
    n->op = DP_UN_NOT;
    n->a = a;
    return push(F, n, depth + 1);
}

/* COPY / SWAP: values that change places or are read twice are evaluated
 * first. */
static int shuffle(fb *F, int i) {
    const dp_instr *ins = &F->d->in[i];
    int k = ins->arg;
    if (k < 1 || k > F->st.n || (ins->op == IR_SWAP && k < 2))
        return dc_fail(F->d, i, "bad %s %d", dp_irop_name(ins->op), k);
    int lo = F->st.n - k, need = 0;
    for (int p = lo; p < F->st.n && !need; p++)
        need = !is_atom(F->st.v[p]);
    if (need && flush(F, ins->op == IR_COPY ? lo + 1 : F->st.n) < 0)
        return -1;
    if (ins->op == IR_COPY)
        return push(F, F->st.v[lo], F->dep[lo]);
    dp_node *t = F->st.v[F->st.n - 1];
    int td = F->dep[F->st.n - 1];
    F->st.v[F->st.n - 1] = F->st.v[lo];
    F->dep[F->st.n - 1] = F->dep[lo];
    F->st.v[lo] = t;
    F->dep[lo] = td;
    return 0;
}

static dp_node *tuple_of(fb *F, dp_node *a, dp_node *b) {
    dp_node *t = node(F, E_TUPLE);
    if (t == NULL || dc_add(F->d, &t->l1, a) < 0 || (b && dc_add(F->d, &t->l1, b) < 0))
        return NULL;
    return t;
}

static dp_node *except_clause(fb *F, const char *type, const char *as, dp_node *body) {
    dp_node *h = stmt(F, S_EXCEPT);
    if (h == NULL || (h->a = dc_name(F->d, type)) == NULL || dc_add(F->d, &h->l1, body) < 0)
        return NULL;
    h->s = as;
    return h;
}

/* 3.12+ LOAD_FAST_AND_CLEAR x (inlined comprehensions save x):
 *     try: t = (x,)  except NameError: t = ()
 * and the STORE_FAST that restores x from it. */
static int save_local(fb *F, const dp_instr *ins) {
    if (flush(F, F->st.n) < 0)
        return -1;
    dp_node *t = temp(F), *tr = stmt(F, S_TRY);
    if (t == NULL || tr == NULL)
        return -1;
    t->op2 |= M_SAVED;
    dp_node *one = tuple_of(F, dc_name(F->d, ins->name), NULL);
    dp_node *none = empty_tuple(F);
    if (one == NULL || none == NULL || emit_to(F, &tr->l1, assign_stmt(F, t, one)) < 0 ||
        emit_to(F, &tr->l2, except_clause(F, "NameError", NULL, assign_stmt(F, t, none))) < 0 || emit(F, tr) < 0)
        return -1;
    return push(F, t, 0);
}

static int restore_local(fb *F, const dp_instr *ins, dp_node *saved) {
    dp_node *ifs = stmt(F, S_IF), *tr = stmt(F, S_TRY), *del = stmt(F, S_DELETE);
    dp_node *sub = node(F, E_SUBSCR);
    if (ifs == NULL || tr == NULL || del == NULL || sub == NULL)
        return -1;
    ifs->a = saved;
    sub->a = saved;
    if ((sub->b = int_const(F, 0)) == NULL || emit_to(F, &ifs->l1, assign_stmt(F, name_target(F, ins), sub)) < 0)
        return -1;
    if (dc_add(F->d, &del->l1, name_target(F, ins)) < 0 || emit_to(F, &tr->l1, del) < 0 ||
        emit_to(F, &tr->l2, except_clause(F, "NameError", NULL, stmt(F, S_PASS))) < 0 ||
        emit_to(F, &ifs->l2, tr) < 0)
        return -1;
    return emit(F, ifs);
}

/* STORE_NAME/FAST/GLOBAL/DEREF. */
static int store_name(fb *F, const dp_instr *ins) {
    dp_node *v = pop(F);
    if (v == NULL || flush(F, F->st.n) < 0)
        return -1;
    if (mark_of(v) & M_SAVED)
        return restore_local(F, ins, v);
    if (F->d->is_class_body && strcmp(ins->name, "__classcell__") == 0)
        return 0; /* the class statement makes its own __class__ cell */
    const char *name = def_name(v);
    if (name && strcmp(name, ins->name) == 0) {
        if (name_target(F, ins) == NULL)
            return -1;
        return emit_def(F, v, name);
    }
    if (name && (v = spill(F, v)) == NULL)
        return -1;
    return emit_assign(F, name_target(F, ins), v);
}

/* UNPACK_SEQUENCE / UNPACK_EX: `a, b = v` when simple name stores follow,
 * else into temporaries. *skip receives the stores consumed. */
static int unpack(fb *F, int i, int *skip) {
    const dp_instr *ins = &F->d->in[i];
    int before = ins->op == IR_UNPACK_EX ? (ins->arg & 0xff) : ins->arg;
    int after = ins->op == IR_UNPACK_EX ? (ins->arg >> 8) : 0;
    int star = ins->op == IR_UNPACK_EX;
    int count = before + after + star;
    if (count > 65536)
        return fail(F, i, "unpack count too large");
    dp_node *v = pop(F), *tg = node(F, E_TUPLE);
    if (v == NULL || tg == NULL || flush(F, F->st.n) < 0)
        return -1;
    int direct = i + count < F->cur->end;
    for (int k = 1; k <= count && direct; k++)
        direct = is_store(F->d->in[i + k].op);
    for (int k = 0; k < count; k++) {
        dp_node *t = direct ? name_target(F, &F->d->in[i + 1 + k]) : temp(F);
        if (t == NULL)
            return -1;
        if (star && k == before) {
            dp_node *s = node(F, E_STARRED);
            if (s == NULL)
                return -1;
            s->a = t;
            if (dc_add(F->d, &tg->l1, s) < 0)
                return -1;
        } else if (dc_add(F->d, &tg->l1, t) < 0) {
            return -1;
        }
    }
    if (count == 1 && !star) {
        /* `a, = v`: keep the one-element tuple target */
    }
    if (emit_assign(F, tg, v) < 0)
        return -1;
    if (direct) {
        *skip = count;
        return 0;
    }
    for (int k = count - 1; k >= 0; k--) {
        dp_node *t = tg->l1.v[k];
        if (t->kind == E_STARRED)
            t = t->a;
        if (push(F, t, 0) < 0)
            return -1;
    }
    return 0;
}

