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
 * Exceptions follow the 3.11+ exception table, or the 3.8-3.10 block stack
 * (SETUP_FINALLY/SETUP_WITH/POP_BLOCK; for 3.8's finally blocks see
 * "3.8 finally blocks" below).  From 3.11 on, a
 * handler runs inside the `except` clause that caught its exception: the
 * code after PUSH_EXC_INFO is a nested state machine in that clause, left by
 * `break` at POP_EXCEPT, so sys.exc_info(), bare `raise` and implicit
 * exception chaining are those of the bytecode.  The compiler's tidy-ups
 * that only re-raise (`e = None; del e; RERAISE`, `COPY 3; POP_EXCEPT;
 * RERAISE`) run in that clause too and end in a bare `raise`, which keeps
 * __context__ as RERAISE does; one leaving its level is caught by an outer
 * `except` ("escape" clause) that routes it on.  When handlers cannot be
 * nested so (PUSH_EXC_INFO reached without an exception, inconsistent or
 * too deep nesting; 3.9/3.10, whose handlers are left by implicit
 * unwinding), one flat machine runs everything: sys.exc_info() inside
 * handlers is then not the handled exception (a bare `raise` still re-raises
 * it: 3.9/3.10 keep it in `__handled<n>`).
 *
 * Values dropped by the bytecode are dropped here too (`__stack_k = None`,
 * temporaries cleared at block exits, `try: raise v finally: v = None`), so
 * objects are finalized where the bytecode frees them and no exception keeps
 * its frame alive through a variable.  Builtins are reached through `import
 * builtins as __builtins`: no local or global of the code can shadow them.
 *
 * Known differences from the bytecode, outside results and exception types
 * of well-formed programs:
 * - other re-raises are `raise exc`: the traceback gains an entry, and
 *   __context__ is set when another exception is being handled around it;
 * - `with` looks up __enter__/__exit__ as attributes (AttributeError instead
 *   of TypeError for an object that is no context manager); CHECK_EXC_MATCH
 *   is isinstance(); IMPORT_FROM outside `from m import a` is an attribute
 *   access;
 * - temporaries are visible to locals(); a function or class made but not
 *   stored under its own name is still bound to that name by its def/class;
 * - 3.12+ inlined comprehensions over a cell variable leave it holding its
 *   last value (their closures need a fresh cell only a comprehension makes);
 * - the lasti value pushed for handlers is -1 (only tracebacks read it);
 * - inside an except* clause sys.exc_info(), and so the __context__ of an
 *   exception raised there, is the group caught, not the part matched
 *   (fallback_star.c).
 */
#include <stdio.h>
#include <string.h>

#include "fallback.h"


int fb_oom(fb *F) { return dp_fail(F->d->sh->err, -1, "out of memory"); }

int fb_fail(fb *F, int at, const char *what) { return dc_fail(F->d, at, "%s", what); }

/* ------------------------------------------------------------------ names */

static int starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static int name_clashes(const dp_strs *l, const char *pfx) {
    static const char *const ours[] = {"state", "stack_", "t", "exc", "esc", "builtins", "fn", "fast_", "handled",
                                       "pending", "pctx", "egh", "star_"};
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
    return fb_fail(F, -1, "no free name for the state machine's variables");
}

const char *fb_make_name(fb *F, const char *what, int n) {
    size_t len = strlen(F->pfx) + strlen(what) + 16;
    char *s = dp_alloc(F->d->sh->ar, len);
    if (s == NULL)
        return fb_oom(F), NULL;
    if (n >= 0)
        snprintf(s, len, "%s%s%d", F->pfx, what, n);
    else
        snprintf(s, len, "%s%s", F->pfx, what);
    return s;
}

dp_node *fb_marked_name(fb *F, const char *s, int var) {
    dp_node *n = s ? dc_name(F->d, s) : NULL;
    if (n)
        n->fb.var = (unsigned char)var;
    return n;
}

/* FB_TEMP, FB_STACK or FB_CELL for a name the fallback made, else 0. */
int fb_var_of(const dp_node *e) { return e->kind == E_NAME ? e->fb.var : 0; }

/* FB_SAVED_VALUE or FB_SAVED_CELL for a name holding what LOAD_FAST_AND_CLEAR saved, else 0. */
int fb_saved_of(const dp_node *e) { return e->kind == E_NAME ? e->fb.saved : 0; }

/* The IR index a 3.8 return address (CALL_FINALLY) goes back to, or -1. */
int fb_ret_of(const dp_node *e) { return e->kind == X_OPAQUE && e->fb.ret ? e->op : -1; }

/* A slot no variable holds: a NULL, or a return address known statically. */
int fb_no_var(const dp_node *e) { return e->kind == X_NULL || fb_ret_of(e) >= 0; }

/* A fresh temporary of the current block (cleared when the block exits). */
dp_node *fb_temp(fb *F) {
    dp_node *t = fb_marked_name(F, fb_make_name(F, "t", ++F->ntemps), FB_TEMP);
    if (t && F->cur && dc_add(F->d, &F->temps, t) < 0)
        return NULL;
    return t;
}

static dp_node *state_var(fb *F) {
    if (F->state_name == NULL && (F->state_name = fb_make_name(F, "state", -1)) == NULL)
        return NULL;
    return fb_marked_name(F, F->state_name, FB_TEMP);
}

/* The canonical node of slot k at a block entry. */
dp_node *fb_canon(fb *F, int k, int saved) {
    if (k >= F->nstack_names) {
        int cap = F->nstack_names ? F->nstack_names * 2 : 16;
        while (cap <= k)
            cap *= 2;
        const char **v = dp_alloc_array(F->d->sh->ar, (size_t)cap, sizeof *v);
        if (v == NULL)
            return fb_oom(F), NULL;
        if (F->nstack_names)
            memcpy(v, F->stack_names, (size_t)F->nstack_names * sizeof *v);
        F->stack_names = v;
        F->nstack_names = cap;
    }
    if (F->stack_names[k] == NULL && (F->stack_names[k] = fb_make_name(F, "stack_", k)) == NULL)
        return NULL;
    dp_node *n = fb_marked_name(F, F->stack_names[k], FB_STACK);
    if (n) {
        n->op = k;
        n->fb.saved = (unsigned char)saved;
    }
    return n;
}

int fb_is_canon(const dp_node *e, int k) { return fb_var_of(e) == FB_STACK && e->op == k; }

/* ------------------------------------------------------------------ atoms */

/* Reading an atom has no effect and gives the same value until it is used. */
int fb_is_atom(const dp_node *e) {
    if (e->kind == E_CONST || fb_no_var(e) || fb_var_of(e))
        return 1;
    if (dc_is_generic_scope(e)) /* made of a constant and cells; called right away (generic.c) */
        return 1;
    if (e->kind == E_TUPLE) { /* a closure tuple of cells */
        for (int k = 0; k < e->l1.n; k++)
            if (fb_var_of(e->l1.v[k]) != FB_CELL)
                return 0;
        return 1;
    }
    return 0;
}

dp_node *fb_node(fb *F, int kind) { return dc_node(F->d, kind); }

/* A cell pushed by LOAD_CLOSURE is a marked name while it may still feed
 * MAKE_FUNCTION's closure (which drops it: the nested def names its free
 * variables itself).  One left in the printed machine is used as a value
 * (Dynamo passes closure tuples to helpers): it becomes the cell itself,
 * `(lambda: v).__closure__[0]`, rewritten in place. */
static int cells_spelled(fb *F, dp_node *e, int depth) {
    if (e == NULL)
        return 0;
    if (depth > 400)
        return fb_fail(F, F->at, "the state machine is nested too deeply");
    if (fb_var_of(e) == FB_CELL) {
        if (e->op == 1) /* a 3.13 LOAD_FAST whose slot may hold a plain value: the name, as it reads */
            return 0;
        dp_node *cell = dc_cell(F->d, e->s);
        if (cell == NULL)
            return fb_oom(F);
        *e = *cell;
        return 0;
    }
    dp_node *kids[3] = {e->a, e->b, e->c};
    for (int k = 0; k < 3; k++)
        if (cells_spelled(F, kids[k], depth + 1) < 0)
            return -1;
    dp_nodes *lists[4] = {&e->l1, &e->l2, &e->l3, &e->l4};
    for (int l = 0; l < 4; l++)
        for (int k = 0; k < lists[l]->n; k++)
            if (cells_spelled(F, lists[l]->v[k], depth + 1) < 0)
                return -1;
    return 0;
}

/* A builtin by a name no global or local of the code can shadow:
 * __builtins.<name>, after `import builtins as __builtins`. */
dp_node *fb_builtin(fb *F, const char *name) {
    dp_node *n = fb_node(F, E_ATTR);
    if (n == NULL || (n->a = fb_marked_name(F, fb_make_name(F, "builtins", -1), FB_TEMP)) == NULL)
        return NULL;
    n->s = name;
    F->builtins_used = 1;
    return n;
}

dp_node *fb_call(fb *F, const char *fn, dp_node *a1, dp_node *a2, dp_node *a3) {
    return fb_call_of(F, fb_builtin(F, fn), a1, a2, a3);
}

dp_node *fb_call_of(fb *F, dp_node *callee, dp_node *a1, dp_node *a2, dp_node *a3) {
    dp_node *c = callee ? fb_node(F, E_CALL) : NULL;
    if (c == NULL)
        return NULL;
    c->a = callee;
    dp_node *args[3] = {a1, a2, a3};
    for (int k = 0; k < 3 && args[k]; k++)
        if (dc_add(F->d, &c->l1, args[k]) < 0)
            return NULL;
    return c;
}

dp_node *fb_attr(fb *F, dp_node *obj, const char *name) {
    dp_node *n = obj ? fb_node(F, E_ATTR) : NULL;
    if (n) {
        n->a = obj;
        n->s = name;
    }
    return n;
}

dp_node *fb_compare(fb *F, dp_node *a, int op, dp_node *b) {
    dp_node *c = (a && b) ? fb_node(F, E_COMPARE) : NULL;
    if (c == NULL)
        return NULL;
    if ((c->ops = dp_alloc(F->d->sh->ar, sizeof(int))) == NULL)
        return fb_oom(F), NULL;
    c->a = a;
    c->ops[0] = op;
    return dc_add(F->d, &c->l1, b) < 0 ? NULL : c;
}

dp_node *fb_int_const(fb *F, long v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    dp_const *c = dp_const_new(F->d->sh->ar, DP_CONST_INT);
    if (c == NULL || (c->text = dp_strdup(F->d->sh->ar, buf)) == NULL)
        return fb_oom(F), NULL;
    c->len = strlen(c->text);
    return dc_const(F->d, c);
}

dp_node *fb_str_const(fb *F, const char *s) {
    dp_const *c = dp_const_new(F->d->sh->ar, DP_CONST_STR);
    if (c == NULL || (c->text = dp_strdup(F->d->sh->ar, s)) == NULL)
        return fb_oom(F), NULL;
    c->len = strlen(s);
    return dc_const(F->d, c);
}

dp_node *fb_bool_const(fb *F, int v) {
    static const dp_const t = {.kind = DP_CONST_TRUE};
    static const dp_const f = {.kind = DP_CONST_FALSE};
    return dc_const(F->d, v ? &t : &f);
}

dp_node *fb_empty_tuple(fb *F) { return fb_node(F, E_TUPLE); }

/* The state number of a block (after the forwarding of empty blocks). */
static int sid(const fb *F, int block) { return F->b[F->fwd[block]].id; }

/* `block`'s state number as a constant (filled in once blocks are numbered). */
static dp_node *state_ref(fb *F, int block) {
    if (F->numbered)
        return fb_int_const(F, sid(F, block));
    dp_node *n = fb_node(F, E_CONST);
    if (n == NULL || dc_add(F->d, &F->fixups, n) < 0)
        return NULL;
    n->op = block;
    return n;
}

/* ------------------------------------------------------------------ lowering */

/* Turns the stack machine's internal nodes inside an expression into
 * Python; fails on values that have no spelling (NULL, ...). */
dp_node *fb_lower(fb *F, dp_node *e, int depth) {
    if (e == NULL)
        return NULL;
    if (depth > 1000)
        return fb_fail(F, F->at, "expression nested too deeply"), NULL;
    switch (e->kind) {
    case X_ITER: /* GET_ITER / GET_YIELD_FROM_ITER / GET_AITER used as a value */
        /* (output language: the builtin aiter() is new in 3.10) */
        if (e->op2 && F->d->code->py_minor < 10) {
            dp_node *c = fb_node(F, E_CALL);
            if (c == NULL || (c->a = fb_attr(F, fb_lower(F, e->a, depth + 1), "__aiter__")) == NULL)
                return NULL;
            return c;
        }
        return fb_call(F, e->op2 ? "aiter" : "iter", fb_lower(F, e->a, depth + 1), NULL, NULL);
    case X_CONVERTED: {
        static const char *const conv[4] = {"str", "str", "repr", "ascii"};
        return fb_call(F, conv[e->op & 3], fb_lower(F, e->a, depth + 1), NULL, NULL);
    }
    case X_ASSERTION:
        return fb_builtin(F, "AssertionError");
    case X_FUNC: /* made and used as a value, never bound by a def (Dynamo's code, 3.11+) */
        if (!F->d->lay.qualname_on_stack && e->cst && e->cst->code && strcmp(e->cst->code->name, "<lambda>") != 0) {
            dp_node *made = dc_function_by_value(F->d, e, e->l1.n > 0 ? e->l1.v[0] : NULL, F->at);
            return made ? fb_lower(F, made, depth + 1) : NULL;
        }
        break;
    case E_BINOP:
        if (e->op2) { /* an in-place operator whose result is not stored back */
            static const char *const names[DP_BIN_COUNT] = {"iadd", "iand", "ifloordiv", "ilshift", "imatmul", "imul",
                                                            "imod", "ior", "ipow", "irshift", "isub", "itruediv",
                                                            "ixor"};
            if (e->op < 0 || e->op >= DP_BIN_COUNT)
                return fb_fail(F, F->at, "bad in-place operator"), NULL;
            dp_node *op = fb_attr(F, fb_call(F, "__import__", fb_str_const(F, "operator"), NULL, NULL), names[e->op]);
            dp_node *c = op ? fb_node(F, E_CALL) : NULL;
            if (c == NULL)
                return NULL;
            c->a = op;
            if (dc_add(F->d, &c->l1, fb_lower(F, e->a, depth + 1)) < 0 || dc_add(F->d, &c->l1, fb_lower(F, e->b, depth + 1)) < 0)
                return NULL;
            return c;
        }
        break;
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
        if (*kids[k] && (*kids[k] = fb_lower(F, *kids[k], depth + 1)) == NULL)
            return NULL;
    dp_nodes *lists[4] = {&e->l1, &e->l2, &e->l3, &e->l4};
    for (int l = 0; l < 4; l++)
        for (int k = 0; k < lists[l]->n; k++)
            if (lists[l]->v[k] && (lists[l]->v[k] = fb_lower(F, lists[l]->v[k], depth + 1)) == NULL)
                return NULL;
    return e;
}

/* ------------------------------------------------------------------ statements */

/* The same target, read twice without effect in between (names and
 * attributes/subscripts of atoms): `t op= v` may replace `t = t op v`. */
static int same_target(const dp_node *a, const dp_node *b) {
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case E_NAME:
        return strcmp(a->s, b->s) == 0;
    case E_ATTR:
        return strcmp(a->s, b->s) == 0 && fb_is_atom(a->a) && fb_is_atom(b->a) && same_target(a->a, b->a);
    case E_SUBSCR:
        return fb_is_atom(a->a) && fb_is_atom(a->b) && same_target(a->a, b->a) && same_target(a->b, b->b);
    case E_CONST:
        return a->cst == b->cst;
    default:
        return 0;
    }
}

dp_node *fb_stmt(fb *F, int kind) { return dc_stmt(F->d, kind, F->at); }

int fb_emit_to(fb *F, dp_nodes *out, dp_node *s) { return dc_add(F->d, out, s); }

int fb_emit(fb *F, dp_node *s) { return fb_emit_to(F, F->out, s); }

dp_node *fb_assign_stmt(fb *F, dp_node *target, dp_node *value) {
    if (value && value->kind == E_BINOP && value->op2 && target && same_target(target, value->a)) {
        dp_node *s = fb_stmt(F, S_AUGASSIGN);
        if (s == NULL || (s->a = fb_lower(F, target, 0)) == NULL || (s->b = fb_lower(F, value->b, 0)) == NULL)
            return NULL;
        s->op = value->op;
        return s;
    }
    dp_node *s = fb_stmt(F, S_ASSIGN);
    if (s == NULL || target == NULL || dc_add(F->d, &s->l1, target) < 0 || (s->b = fb_lower(F, value, 0)) == NULL)
        return NULL;
    return s;
}

int fb_emit_assign(fb *F, dp_node *target, dp_node *value) { return fb_emit(F, fb_assign_stmt(F, target, value)); }

int fb_emit_expr(fb *F, dp_node *value) {
    dp_node *s = fb_stmt(F, S_EXPR);
    if (s == NULL || (s->a = fb_lower(F, value, 0)) == NULL)
        return -1;
    return fb_emit(F, s);
}

/* `__state = <block>` */
dp_node *fb_goto_stmt(fb *F, int block) {
    dp_node *s = fb_node(F, S_ASSIGN);
    if (s == NULL || dc_add(F->d, &s->l1, state_var(F)) < 0 || (s->b = state_ref(F, block)) == NULL)
        return NULL;
    return s;
}

/* A fast local of a module or class body (3.12+ inlined comprehensions):
 * no source name reaches it there, so it becomes one of our variables. */
static const char *fast_name(fb *F, const char *name) {
    size_t len = strlen(name) + 6;
    char *buf = dp_alloc(F->d->sh->ar, len);
    if (buf == NULL)
        return fb_oom(F), NULL;
    snprintf(buf, len, "fast_%s", name);
    for (char *p = buf; *p; p++)
        if (*p == '.')
            *p = '_';
    return fb_make_name(F, buf, -1);
}

static int is_fast(int op) {
    return op == IR_LOAD_FAST || op == IR_STORE_FAST || op == IR_DELETE_FAST || op == IR_LOAD_FAST_AND_CLEAR;
}

/* The name an instruction's variable has in the source. */
const char *fb_var_name(fb *F, const dp_instr *ins) {
    return F->scope_body && is_fast(ins->op) ? fast_name(F, ins->name) : ins->name;
}

/* The target of a name store/delete, declaring `global`/`nonlocal`. */
dp_node *fb_name_target(fb *F, const dp_instr *ins) {
    dc *d = F->d;
    if (F->scope_body && is_fast(ins->op)) {
        const char *name = fb_var_name(F, ins);
        return name ? dc_name(d, name) : NULL;
    }
    if ((ins->op == IR_STORE_GLOBAL || ins->op == IR_DELETE_GLOBAL) && !d->is_module) {
        if (dc_declare(d, &d->globals, ins->name) < 0)
            return NULL;
    } else if ((ins->op == IR_STORE_DEREF || ins->op == IR_DELETE_DEREF) && !d->is_class_body) {
        for (size_t k = 0; k < d->code->freevars.n; k++)
            if (strcmp(d->code->freevars.v[k], ins->name) == 0 && dc_declare(d, &d->nonlocals, ins->name) < 0)
                return NULL;
    }
    return dc_name(d, ins->name);
}

/* ------------------------------------------------------------------ functions and classes */

int fb_is_class_call(const dp_node *v) {
    return v->kind == E_CALL && v->a && v->a->kind == X_BUILD_CLASS && v->l1.n >= 2 && v->l1.v[0]->kind == X_FUNC &&
           dc_is_const_kind(v->l1.v[1], DP_CONST_STR);
}

/* The name a `def`/`class` statement for v would bind (v: a made function or
 * class, possibly wrapped in decorator calls), or NULL. */
const char *fb_def_name(const dp_node *v) {
    while (v->kind == E_CALL && v->l1.n == 1 && v->l2.n == 0 && v->a && v->a->kind != X_BUILD_CLASS)
        v = v->l1.v[0];
    if (v->kind == X_FUNC && v->cst && v->cst->code)
        return v->cst->code->name;
    if (v->kind == X_GENERIC) /* PEP 695 (generic.c) */
        return v->s;
    if (fb_is_class_call(v))
        return v->l1.v[1]->cst->text;
    return NULL;
}

/* Emits the `def`/`class` statement (decorators included) for v. */
int fb_emit_def(fb *F, dp_node *v, const char *name) {
    dp_nodes decos = {0};
    while (v->kind == E_CALL && v->l1.n == 1 && v->l2.n == 0 && v->a && v->a->kind != X_BUILD_CLASS) {
        if (dc_add(F->d, &decos, fb_lower(F, v->a, 0)) < 0)
            return -1;
        v = v->l1.v[0];
    }
    if (!dc_is_identifier(name))
        return dc_fail(F->d, F->at, "cannot define a function named %s", name);
    dp_node *def;
    if (v->kind == X_GENERIC) {
        /* 3.12.0-3.12.3 mangle every name compiled after a generic class in
         * the same scope (CPython gh-119395): the state machine's own names
         * (__state, __builtins, ...) would no longer be the ones set before:
         * the output's compiler, an output-language difference) */
        if (v->op == DC_GEN_CLASS && F->d->code->py_minor == 12)
            return dc_fail(F->d, F->at, "generic class %s in a state machine: 3.12 mangles the names after it "
                                        "(CPython gh-119395)", name);
        /* only a function's defaults come from outside its type parameter scope */
        dp_node *fn = v->op == DC_GEN_DEF ? v->a : NULL;
        if (fn && ((fn->a && (fn->a = fb_lower(F, fn->a, 0)) == NULL) || (fn->b && (fn->b = fb_lower(F, fn->b, 0)) == NULL)))
            return -1;
        def = dc_generic_stmt(F->d, v, name, F->at);
    } else if (v->kind == X_FUNC) {
        if ((v->a && (v->a = fb_lower(F, v->a, 0)) == NULL) || (v->b && (v->b = fb_lower(F, v->b, 0)) == NULL) ||
            (v->c && (v->c = fb_lower(F, v->c, 0)) == NULL))
            return -1;
        def = dc_funcdef(F->d, v, name, F->at);
    } else {
        for (int k = 2; k < v->l1.n; k++)
            if ((v->l1.v[k] = fb_lower(F, v->l1.v[k], 0)) == NULL)
                return -1;
        for (int k = 0; k < v->l2.n; k++)
            if ((v->l2.v[k] = fb_lower(F, v->l2.v[k], 0)) == NULL)
                return -1;
        def = dc_classdef(F->d, v, name, F->at);
    }
    if (def == NULL)
        return -1;
    def->l2 = decos;
    return fb_emit(F, def);
}

/* A copy of code constant c named `name`. */
static const dp_const *renamed_code(fb *F, const dp_const *c, const char *name) {
    dp_code *code = dp_alloc(F->d->sh->ar, sizeof *code);
    dp_const *k = dp_const_new(F->d->sh->ar, DP_CONST_CODE);
    if (code == NULL || k == NULL)
        return fb_oom(F), NULL;
    *code = *c->code;
    code->name = code->qualname = name;
    k->code = code;
    return k;
}

int fb_is_comprehension_code(const dp_code *c) {
    return strcmp(c->name, "<listcomp>") == 0 || strcmp(c->name, "<setcomp>") == 0 ||
           strcmp(c->name, "<dictcomp>") == 0 || strcmp(c->name, "<genexpr>") == 0;
}

/* A lambda or comprehension whose code has no expression form becomes a
 * def under a fresh name; returns that name.  A comprehension's argument
 * `.0` (the iterator it is called with) is no identifier: it becomes
 * `__iter`. */
dp_node *fb_def_renamed(fb *F, dp_node *fn) {
    const char *name = fb_make_name(F, "fn", ++F->ntemps);
    dp_node *copy = fb_node(F, X_FUNC);
    if (name == NULL || copy == NULL)
        return NULL;
    *copy = *fn;
    const dp_const *k = renamed_code(F, fn->cst, name);
    if (k == NULL)
        return NULL;
    dp_code *code = k->code;
    if (code->varnames.n > 0 && strcmp(code->varnames.v[0], ".0") == 0) {
        const char **v = dp_alloc_array(F->d->sh->ar, code->varnames.n, sizeof *v);
        if (v == NULL)
            return fb_oom(F), NULL;
        memcpy(v, code->varnames.v, code->varnames.n * sizeof *v);
        v[0] = "__iter";
        code->varnames.v = v;
    }
    copy->cst = k;
    if (fb_emit_def(F, copy, name) < 0)
        return NULL;
    return fb_marked_name(F, name, FB_TEMP);
}

/* Does the comprehension `fn` have an expression form?  Bytecode no
 * compiler wrote (a generator's code under a comprehension's name) has
 * none: it is then called as a def. */
int fb_comprehension_has_form(fb *F, dp_node *fn) {
    dp_node *iter = dc_name(F->d, "__iter");
    if (iter == NULL)
        return -1;
    dc_spec sp;
    dc_spec_begin(F->d, &sp);
    dp_node *comp = dc_comprehension(F->d, fn, iter, F->at);
    int ok = dc_spec_end(F->d, &sp, comp ? 0 : -1);
    return F->d->sh->ar->failed ? -1 : ok;
}

/* ------------------------------------------------------------------ the stack */

int fb_ensure_dep(fb *F) {
    if (F->st.n <= F->depcap)
        return 0;
    int cap = F->depcap ? F->depcap * 2 : 16;
    while (cap < F->st.n)
        cap *= 2;
    int *v = dp_alloc_array(F->d->sh->ar, (size_t)cap, sizeof *v);
    if (v == NULL)
        return fb_oom(F);
    if (F->depcap)
        memcpy(v, F->dep, (size_t)F->depcap * sizeof *v);
    F->dep = v;
    F->depcap = cap;
    return 0;
}

int fb_push(fb *F, dp_node *e, int depth) {
    if (dc_push(F->d, &F->st, e) < 0 || fb_ensure_dep(F) < 0)
        return -1;
    F->dep[F->st.n - 1] = depth;
    return 0;
}

dp_node *fb_pop(fb *F) { return dc_pop(F->d, &F->st, F->at); }

dp_node *fb_top(fb *F, int k) { return dc_top(F->d, &F->st, k, F->at); }

/* Does the code bind or read `name` anywhere (so that a def may bind it)? */
static int code_has_name(const dp_code *c, const char *name) {
    const dp_strs *lists[4] = {&c->varnames, &c->cellvars, &c->freevars, &c->names};
    for (int l = 0; l < 4; l++)
        for (size_t k = 0; k < lists[l]->n; k++)
            if (strcmp(lists[l]->v[k], name) == 0)
                return 1;
    return 0;
}

/* Evaluates v into an atom now. */
dp_node *fb_spill(fb *F, dp_node *v) {
    if (fb_is_atom(v))
        return v;
    const char *name = fb_def_name(v);
    dp_node *t = fb_temp(F);
    /* In Dynamo's code (stable globals), a function the code never names (its
     * resume functions, 3.11+) is made from its own code object (fb_lower): a def
     * would add a local and compile another code object, where Dynamo keys its
     * caches on the code object.  Elsewhere the def shows the function's source,
     * unless no def can bind its name (a generator expression's `<genexpr>`). */
    if (name && v->kind == X_FUNC && !F->d->lay.qualname_on_stack &&
        (!dc_is_identifier(name) || (F->d->sh->opt->stable_globals && !code_has_name(F->d->code, name))))
        name = NULL;
    if (name) { /* a function or class value: its def statement binds its name */
        if (fb_emit_def(F, v, name) < 0 || fb_emit_assign(F, t, dc_name(F->d, name)) < 0)
            return NULL;
        return t;
    }
    return fb_emit_assign(F, t, v) < 0 ? NULL : t;
}

/* Evaluates every pending value in slots [0, upto), bottom first.  Slots
 * below F->atoms hold atoms already (translate lowers the mark to the
 * deepest slot each instruction may change): flushing at every store of a
 * deep stack costs what was pushed since, not the depth. */
int fb_flush(fb *F, int upto) {
    if (upto > F->st.n)
        upto = F->st.n;
    for (int p = F->atoms < upto ? F->atoms : upto; p < upto; p++) {
        if (fb_is_atom(F->st.v[p]))
            continue;
        dp_node *t = fb_spill(F, F->st.v[p]);
        if (t == NULL)
            return -1;
        F->st.v[p] = t;
        F->dep[p] = 0;
    }
    if (upto > F->atoms)
        F->atoms = upto;
    return 0;
}

/* Before an instruction (or settle_function) that may change the slots
 * from `low` up: the atoms mark comes down to it. */
void fb_lower_atoms(fb *F, int low) {
    if (low < F->atoms)
        F->atoms = low < 0 ? 0 : low;
}

/* Stores slots [0, upto) into their __stack_k variables (one parallel
 * assignment: every value is read before any variable changes); slots above
 * that read a variable being overwritten get a temporary first. */
int fb_transfer(fb *F, int upto, dp_nodes *out) {
    if (upto < F->st.n && fb_flush(F, F->st.n) < 0)
        return -1;
    dp_node *tg = fb_node(F, E_TUPLE), *vals = fb_node(F, E_TUPLE);
    if (tg == NULL || vals == NULL)
        return -1;
    for (int k = 0; k < upto; k++) {
        dp_node *v = F->st.v[k];
        if (fb_no_var(v) || fb_is_canon(v, k))
            continue;
        for (int p = upto; p < F->st.n; p++) {
            dp_node *w = F->st.v[p];
            if (fb_is_canon(w, k)) {
                dp_node *t = fb_temp(F);
                if (t == NULL || dc_add(F->d, &tg->l1, t) < 0 || dc_add(F->d, &vals->l1, w) < 0)
                    return -1;
                t->fb.saved = w->fb.saved;
                F->st.v[p] = t;
            }
        }
        dp_node *c = fb_canon(F, k, fb_saved_of(v));
        if (c == NULL || dc_add(F->d, &tg->l1, c) < 0 || dc_add(F->d, &vals->l1, v) < 0)
            return -1;
        F->st.v[k] = c;
        F->dep[k] = 0;
    }
    if (tg->l1.n == 0)
        return 0;
    dp_node *s = tg->l1.n == 1 ? fb_assign_stmt(F, tg->l1.v[0], vals->l1.v[0]) : fb_assign_stmt(F, tg, vals);
    return fb_emit_to(F, out, s);
}

/* ------------------------------------------------------------------ blocks and edges */

/* The block starting at instruction i, -1 if none does. */
int fb_block_at(fb *F, int i) {
    int k = i >= 0 && i < F->d->n ? F->block_of[i] : -1;
    return k >= 0 && F->b[k].start == i ? k : -1;
}

/* The handler entry (target, depth, six, null) whose handler is `block` (-1:
 * any block, or not reached yet), added if new. */
int fb_exc_entry(fb *F, int target, int depth, int lasti, int six, int null, int block) {
    if (target < 0 || target >= F->d->n)
        return fb_fail(F, -1, "exception handler out of range");
    int k = F->ex_at[target];
    for (; k >= 0; k = F->ex[k].same_target)
        if (F->ex[k].depth == depth && F->ex[k].lasti == lasti && F->ex[k].six == six && F->ex[k].null == null &&
            (block < 0 || F->ex[k].block == block))
            return k;
    if (F->nex == F->excap) {
        int cap = F->excap ? F->excap * 2 : 16;
        fb_exc *v = dp_alloc_array(F->d->sh->ar, (size_t)cap, sizeof *v);
        if (v == NULL)
            return fb_oom(F);
        if (F->nex)
            memcpy(v, F->ex, (size_t)F->nex * sizeof *v);
        F->ex = v;
        F->excap = cap;
    }
    F->ex[F->nex] = (fb_exc){target, depth, lasti, six, null, block, F->ex_at[target]};
    F->ex_at[target] = F->nex;
    return F->nex++;
}

int fb_push_setup(fb *F, int handler, int level) {
    if (F->nsetups == F->setupcap) {
        int cap = F->setupcap ? F->setupcap * 2 : 8;
        if (cap > 1024)
            return fb_fail(F, F->at, "blocks nested too deeply");
        fb_setup *v = dp_alloc_array(F->d->sh->ar, (size_t)cap, sizeof *v);
        if (v == NULL)
            return fb_oom(F);
        if (F->nsetups)
            memcpy(v, F->setups, (size_t)F->nsetups * sizeof *v);
        F->setups = v;
        F->setupcap = cap;
    }
    F->setups[F->nsetups++] = (fb_setup){handler, level};
    return 0;
}

/* 3.9/3.10 flat machines keep the exception of the n-th running handler in
 * __handled<n> for RAISE_VARARGS 0 (elsewhere a bare `raise` finds it in
 * the except clause).  Statements marked so are dropped from nested
 * machines (see unflatten). */
int fb_handled_stmt(fb *F, dp_nodes *out, int n, dp_node *value) {
    dp_node *s = fb_node(F, S_ASSIGN);
    if (s == NULL || value == NULL || dc_add(F->d, &s->l1, dc_name(F->d, fb_make_name(F, "handled", n))) < 0)
        return -1;
    s->b = value;
    s->fb.handled = 1;
    return fb_emit_to(F, out, s);
}

/* How many handlers are running (except-handler blocks on the block stack). */
int fb_running_handlers(const fb *F) {
    int n = 0;
    for (int k = 0; k < F->nsetups; k++)
        n += F->setups[k].handler < 0;
    return n;
}

int fb_no_var_kind(int kind) { return kind == SLOT_NULL || kind >= SLOT_RET; }

int fb_slot_kind(const dp_node *v) {
    if (v->kind == X_NULL)
        return SLOT_NULL;
    if (fb_ret_of(v) >= 0)
        return SLOT_RET + fb_ret_of(v);
    int saved = fb_saved_of(v);
    return saved == FB_SAVED_CELL ? SLOT_CELL_SAVED : saved == FB_SAVED_VALUE ? SLOT_SAVED : SLOT_VALUE;
}

/* How block b's entry differs from stack st under the open blocks
 * F->setups: 0 (it does not), 1 (other blocks), 2 (depth), 3 (slot kinds). */
static int entry_differs(const fb *F, const fb_block *b, const dc_stack *st) {
    int same = b->nsetups == F->nsetups;
    for (int k = 0; k < b->nsetups && same; k++)
        same = b->setups[k].handler == F->setups[k].handler && b->setups[k].level == F->setups[k].level;
    if (!same)
        return 1;
    if (b->depth != st->n)
        return 2;
    for (int k = 0; k < st->n; k++)
        if (fb_slot_kind(st->v[k]) != b->slots[k])
            return 3;
    return 0;
}

/* 3.8 enters the blocks of a finally body with different stacks (see "3.8
 * finally blocks"): each entry gets a copy of them.  Copies stay few in
 * compiler output; a stack growing around a loop would make one per turn,
 * so their number and size are bounded. */
static int copy_block(fb *F, int bi, const dc_stack *st) {
    F->copy_budget -= (long)st->n + F->nsetups + (F->b[bi].end - F->b[bi].start);
    if (F->nb == F->bcap || F->copy_budget < 0)
        return fb_fail(F, F->b[bi].start, "blocks copied too often for their different entry stacks");
    fb_block *c = &F->b[F->nb];
    c->start = F->b[bi].start;
    c->end = F->b[bi].end;
    c->exc = -1; /* block-stack code: translate finds its handler */
    c->id = c->next = c->copy = -1;
    for (int k = bi;; k = F->b[k].copy)
        if (F->b[k].copy < 0) {
            F->b[k].copy = F->nb;
            break;
        }
    return F->nb++;
}

/* A block is reached with stack `st` (slot kinds taken from its nodes).
 * Returns the block (or copy of it) that runs. */
int fb_reach(fb *F, int bi, const dc_stack *st, int level, int normal, int at) {
    if (bi < 0)
        return fb_fail(F, at, "control flows past the end of the code");
    if (F->b[bi].reached) {
        int why = entry_differs(F, &F->b[bi], st), c = bi;
        while (c >= 0 && entry_differs(F, &F->b[c], st))
            c = F->b[c].copy;
        if (c < 0 && F->bcap == F->nb) {
            int start = F->b[bi].start;
            if (why == 1)
                return dc_fail(F->d, start, "different try/with blocks are open on different paths");
            if (why == 2)
                return dc_fail(F->d, start, "stack depth %d here, %d on another path", st->n, F->b[bi].depth);
            int k = 0;
            while (k < st->n && fb_slot_kind(st->v[k]) == F->b[bi].slots[k])
                k++;
            return dc_fail(F->d, start, "stack slot %d holds different kinds of values on different paths", k);
        }
        if (c >= 0) {
            F->b[c].from_normal |= normal;
            if (F->b[c].level != level)
                F->flat = 1;
            return c;
        }
        if ((bi = copy_block(F, bi, st)) < 0)
            return -1;
    }
    fb_block *b = &F->b[bi];
    b->from_normal |= normal;
    b->reached = 1;
    b->depth = st->n;
    b->level = level;
    if (st->n && (b->slots = dp_alloc_array(F->d->sh->ar, (size_t)st->n, sizeof *b->slots)) == NULL)
        return fb_oom(F);
    for (int k = 0; k < st->n; k++)
        b->slots[k] = fb_slot_kind(st->v[k]);
    if (F->nsetups) {
        if ((b->setups = dp_alloc_array(F->d->sh->ar, (size_t)F->nsetups, sizeof *b->setups)) == NULL)
            return fb_oom(F);
        memcpy(b->setups, F->setups, (size_t)F->nsetups * sizeof *b->setups);
    }
    b->nsetups = F->nsetups;
    F->work[F->nwork++] = bi;
    return bi;
}

/* Nodes one question about a block's reads may visit.  Expressions share
 * subtrees (COPY, DUP_TOP), so a walk can meet the same node exponentially
 * often; past the budget the answer is "reads", which only keeps a variable
 * alive longer. */
#define READS_BUDGET 20000

/* Does expression e read the variable `name`? (1 when too deep or too
 * costly to tell; *budget counts visits down) */
static int reads_name_within(const dp_node *e, const char *name, int depth, int *budget) {
    if (e == NULL)
        return 0;
    if (depth > 200 || --*budget < 0)
        return 1;
    if (e->kind == E_NAME && e->s && strcmp(e->s, name) == 0)
        return 1;
    const dp_node *kids[3] = {e->a, e->b, e->c};
    for (int q = 0; q < 3; q++)
        if (reads_name_within(kids[q], name, depth + 1, budget))
            return 1;
    const dp_nodes *lists[4] = {&e->l1, &e->l2, &e->l3, &e->l4};
    for (int l = 0; l < 4; l++)
        for (int q = 0; q < lists[l]->n; q++)
            if (reads_name_within(lists[l]->v[q], name, depth + 1, budget))
                return 1;
    return 0;
}

static int reads_name(const dp_node *e, const char *name, int *budget) {
    return reads_name_within(e, name, 0, budget);
}

/* `__stack_k = __t1 = ... = None` for the entry slots and temporaries of the
 * block that are dead here (not on the stack, not read by `keep`): the
 * bytecode has dropped those references (an exception kept in a variable
 * would also keep its traceback, and so this frame, alive). */
int fb_clear_dead(fb *F, dp_nodes *out, const dp_node *keep, int consume) {
    dp_node *s = fb_node(F, S_ASSIGN);
    if (s == NULL)
        return -1;
    int budget = READS_BUDGET; /* for the whole call: it asks temps x stack slots questions */
    for (int k = F->st.n; k < F->cur->depth; k++) {
        if (fb_no_var_kind(F->cur->slots[k]) || F->cleared[k])
            continue;
        dp_node *c = fb_canon(F, k, 0);
        if (c == NULL || reads_name(keep, c->s, &budget))
            continue;
        int live = 0;
        for (int p = 0; p < F->st.n && !live; p++)
            live = fb_is_canon(F->st.v[p], k);
        if (live)
            continue;
        if (dc_add(F->d, &s->l1, c) < 0)
            return -1;
        F->cleared[k] |= consume;
    }
    int kept = 0;
    for (int q = 0; q < F->temps.n; q++) {
        dp_node *t = F->temps.v[q];
        int live = reads_name(keep, t->s, &budget);
        for (int p = 0; p < F->st.n && !live; p++)
            live = reads_name(F->st.v[p], t->s, &budget);
        if (!live && dc_add(F->d, &s->l1, dc_name(F->d, t->s)) < 0)
            return -1;
        if (consume && live)
            F->temps.v[kept++] = t;
    }
    if (consume)
        F->temps.n = kept;
    if (s->l1.n == 0)
        return 0;
    s->b = dc_none(F->d);
    return fb_emit_to(F, out, s);
}

/* Ends the block with a jump to `bi` carrying the current stack; returns
 * the block (or copy) jumped to. */
int fb_jump_to(fb *F, int bi, dp_nodes *out) {
    if (fb_transfer(F, F->st.n, out) < 0 || fb_clear_dead(F, out, NULL, 0) < 0 ||
        (bi = fb_reach(F, bi, &F->st, F->exit_level, 1, F->at)) < 0)
        return -1;
    return fb_emit_to(F, out, fb_goto_stmt(F, bi)) < 0 ? -1 : bi;
}

/* The block's single exit. */
int fb_continue_to(fb *F, int bi) {
    if ((bi = fb_jump_to(F, bi, F->out)) < 0)
        return -1;
    F->cur->next = bi;
    return 0;
}

int fb_reads_slot(fb *F, const dp_node *e, int k) {
    const dp_node *c = fb_canon(F, k, 0);
    int budget = READS_BUDGET;
    return c == NULL || reads_name(e, c->s, &budget);
}

static int on_stack(const fb *F, int k) {
    for (int p = 0; p < F->st.n; p++)
        if (fb_is_canon(F->st.v[p], k))
            return 1;
    return 0;
}

/* `__stack_k = None` now, for an entry slot whose value the bytecode has
 * just dropped (unless `keep` still reads it). */
int fb_clear_now(fb *F, int k, const dp_node *keep) {
    if (k < 0 || k >= F->cur->depth || fb_no_var_kind(F->cur->slots[k]) || F->cleared[k] || on_stack(F, k) ||
        fb_reads_slot(F, keep, k))
        return 0;
    dp_node *s = fb_node(F, S_ASSIGN);
    if (s == NULL || dc_add(F->d, &s->l1, fb_canon(F, k, 0)) < 0 || (s->b = dc_none(F->d)) == NULL)
        return -1;
    F->cleared[k] = 1;
    return fb_emit(F, s);
}

/* if <cond>: <stack for yes>; __state = yes  else: <stack for no>; __state = no
 * Both branches see the stack minus `drop_yes` / `drop_no` top values. */
int fb_branch(fb *F, dp_node *cond, int yes, int drop_yes, int no, int drop_no) {
    int common = F->st.n - (drop_yes > drop_no ? drop_yes : drop_no), early = 1;
    for (int k = 0; k < common && early; k++) /* slots both sides keep: stored once, first */
        if (!fb_is_canon(F->st.v[k], k) && !fb_no_var(F->st.v[k]))
            early = !fb_reads_slot(F, cond, k);
    if (early && fb_transfer(F, common, F->out) < 0)
        return -1;
    if (fb_clear_dead(F, F->out, cond, 1) < 0) /* dead on both sides: cleared once, first */
        return -1;
    dp_node *s = fb_stmt(F, S_IF);
    if (s == NULL || (s->a = fb_lower(F, cond, 0)) == NULL)
        return -1;
    int n = F->st.n;
    dc_stack saved = {0};
    if (dc_stack_copy(F->d, &saved, &F->st) < 0)
        return -1;
    F->st.n = n - drop_yes;
    if (fb_jump_to(F, yes, &s->l1) < 0 || dc_stack_copy(F->d, &F->st, &saved) < 0)
        return -1;
    F->st.n = n - drop_no;
    if (fb_jump_to(F, no, &s->l2) < 0)
        return -1;
    return fb_emit(F, s);
}

/* ------------------------------------------------------------------ blocks */

/* The blocks are the graph's (cfg.h), with room after them for the copies
 * 3.8's finally bodies need.  Each takes the handler of its region: an
 * exception-table entry, or (3.9/3.10) the SETUP_* block whose handler gets
 * six values above the region's depth.  3.8's blocks follow the block stack
 * as the machine walks them, and a region whose depth differs between
 * paths gets none here (see fb_translate). */
static int take_blocks(fb *F, const dp_cfg *g) {
    dc *d = F->d;
    dp_arena *ar = d->sh->ar;
    int *entry = dp_alloc_array(ar, (size_t)g->nexc + 1, sizeof *entry);
    F->ex_at = dp_alloc_array(ar, (size_t)d->n + 1, sizeof *F->ex_at);
    if (entry == NULL || F->ex_at == NULL)
        return fb_oom(F);
    for (int i = 0; i < d->n; i++)
        F->ex_at[i] = -1;
    for (int r = 0; r < g->nexc; r++) {
        const dp_exc_region *e = &g->exc[r];
        int six = e->setup >= 0;
        if (six && (F->walk_setups || e->depth < 0))
            entry[r] = -1;
        else if ((entry[r] = fb_exc_entry(F, e->target, e->depth, e->lasti, six, 0, -1)) < 0)
            return -1;
    }
    F->g = g;
    F->nb = g->nb;
    /* 3.8 copies the blocks of finally bodies: a few times each at most in
     * compiler output, and never more than this */
    F->bcap = F->nb + (d->lay.finally_subroutine ? 3 * F->nb + 256 : 0);
    F->copy_budget = 16L * d->n + 4096;
    F->block_of = g->block_of;
    F->b = dp_alloc_array(ar, (size_t)F->bcap, sizeof *F->b);
    F->work = dp_alloc_array(ar, (size_t)F->bcap, sizeof *F->work);
    if (F->b == NULL || F->work == NULL)
        return fb_oom(F);
    for (int k = 0; k < g->nb; k++) {
        fb_block *b = &F->b[k];
        b->start = g->b[k].start;
        b->end = g->b[k].end;
        b->exc = g->b[k].exc >= 0 ? entry[g->b[k].exc] : -1;
        b->id = b->next = b->copy = -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ the machine */

static int is_transition(const fb *F, const fb_block *b) {
    return !F->flat && F->d->in[b->start].op == IR_PUSH_EXC_INFO;
}

static int in_machine(const fb *F, const fb_block *b, int level) {
    return b->id >= 0 && (F->flat || b->level == level) && !is_transition(F, b);
}

static dp_node *state_is(fb *F, const int *ids, int n) {
    if (n == 1)
        return fb_compare(F, state_var(F), DP_CMP_EQ, fb_int_const(F, ids[0]));
    dp_node *t = fb_node(F, E_TUPLE);
    if (t == NULL)
        return NULL;
    for (int k = 0; k < n; k++)
        if (dc_add(F->d, &t->l1, fb_int_const(F, ids[k])) < 0)
            return NULL;
    return fb_compare(F, state_var(F), DP_CMP_IN, t);
}

/* `__stack_k = value` */
static int set_slot(fb *F, dp_nodes *out, int k, dp_node *value) {
    dp_node *s = fb_node(F, S_ASSIGN), *c = fb_canon(F, k, 0);
    if (s == NULL || c == NULL || value == NULL || dc_add(F->d, &s->l1, c) < 0)
        return -1;
    s->b = value;
    return fb_emit_to(F, out, s);
}

static int machine(fb *F, int level, dp_nodes *out);

/* A handler that only tidies up and re-raises its exception X (the code
 * CPython puts after `except ... as e` bodies and after handlers:
 * `e = None; del e; RERAISE` / `COPY 3; POP_EXCEPT; RERAISE`): blocks in a
 * row from t whose instructions never read X, the last one re-raising it.
 * Returns that last block, or -1.  Run inside the except clause that caught
 * X and ended by a bare `raise`, it re-raises X exactly (RERAISE keeps
 * __context__, `raise X` would not). */
static int glue_end(const fb *F, int t) {
    enum { OTHER, EXC };
    uint8_t tag[64];
    const fb_block *b = &F->b[t];
    int n = b->depth;
    if (n < 1 || n > 48 || F->d->in[b->start].op == IR_PUSH_EXC_INFO)
        return -1;
    memset(tag, OTHER, sizeof tag);
    tag[n - 1] = EXC;
    for (int cur = t, steps = 0; steps < 8; steps++) {
        b = &F->b[cur];
        for (int i = b->start; i < b->end; i++) {
            const dp_instr *x = &F->d->in[i];
            switch (x->op) {
            case IR_NOP: case IR_DELETE_FAST: case IR_DELETE_NAME: case IR_DELETE_DEREF: case IR_DELETE_GLOBAL:
                break;
            case IR_LOAD_CONST:
                if (n == 64)
                    return -1;
                tag[n++] = OTHER;
                break;
            case IR_STORE_FAST: case IR_STORE_NAME: case IR_STORE_DEREF: case IR_STORE_GLOBAL: case IR_POP_TOP:
            case IR_POP_EXCEPT:
                if (n < 1 || tag[n - 1] == EXC)
                    return -1;
                n--;
                break;
            case IR_COPY:
                if (x->arg < 1 || x->arg > n || tag[n - x->arg] == EXC || n == 64)
                    return -1;
                tag[n] = tag[n - x->arg];
                n++;
                break;
            case IR_SWAP: {
                if (x->arg < 2 || x->arg > n)
                    return -1;
                uint8_t v = tag[n - 1];
                tag[n - 1] = tag[n - x->arg];
                tag[n - x->arg] = v;
                break;
            }
            case IR_RERAISE:
                return (i == b->end - 1 && n >= 1 && tag[n - 1] == EXC && b->reached) ? cur : -1;
            default:
                return -1;
            }
        }
        if (b->next < 0 || !F->b[b->next].reached)
            return -1;
        cur = b->next;
    }
    return -1;
}

static int route_to(fb *F, int level, int entry, const char *exc_var, dp_nodes *out, int budget, int in_escape);

/* Block h starts the nested machine this except clause runs. */
static int enter_state(fb *F, int h) {
    for (int q = 0; q < F->nenter; q++)
        if (F->enter[q] == sid(F, h))
            return 0;
    F->enter[F->nenter++] = sid(F, h);
    return 0;
}

static int handler_of(const fb *F, int entry) {
    return F->ex[entry].block >= 0 ? F->ex[entry].block : F->block_of[F->ex[entry].target];
}

/* Can the exception re-raised by glue block r be routed inline from a
 * clause of `level`?  (A handler entering a nested machine can only be
 * reached from the clause that owns that machine.) */
static int glue_ok(const fb *F, int r, int level, int in_escape, int budget) {
    const fb_block *R = &F->b[r];
    if (R->exc < 0)
        return 1;
    int h = handler_of(F, R->exc);
    int rlevel = F->flat ? level : R->level;
    if (!F->flat && F->d->in[F->b[h].start].op == IR_PUSH_EXC_INFO)
        return rlevel == level && !in_escape;
    if (rlevel == level && budget > 0) {
        int r2 = glue_end(F, h);
        return r2 < 0 || glue_ok(F, r2, level, in_escape, budget - 1);
    }
    return 1;
}

/* The statements that send the exception in `exc_var` to the handler of
 * exception-table entry `entry`. */
static int route_to(fb *F, int level, int entry, const char *exc_var, dp_nodes *out, int budget, int in_escape) {
    dc *d = F->d;
    const fb_exc *x = &F->ex[entry];
    int h = handler_of(F, entry), k = x->depth;
    if (x->six) { /* <= 3.10: (prev tb, value, type) and (tb, value, type), under an except-handler block */
        for (int q = 0; q < 3; q++)
            if (set_slot(F, out, k++, dc_none(d)) < 0)
                return -1;
        if (set_slot(F, out, k++, fb_attr(F, dc_name(d, exc_var), "__traceback__")) < 0 ||
            set_slot(F, out, k++, dc_name(d, exc_var)) < 0 ||
            set_slot(F, out, k, fb_call(F, "type", dc_name(d, exc_var), NULL, NULL)) < 0)
            return -1;
        if (F->flat ? fb_handled_stmt(F, out, F->b[h].level, dc_name(d, exc_var)) < 0
                    : enter_state(F, h) < 0) /* the handler runs in this except clause */
            return -1;
        return fb_emit_to(F, out, fb_goto_stmt(F, h));
    }
    if (x->lasti && set_slot(F, out, k++, fb_int_const(F, -1)) < 0)
        return -1;
    int r = budget > 0 && !x->six ? glue_end(F, h) : -1;
    if (r >= 0 && glue_ok(F, r, level, in_escape, budget - 1)) {
        /* run the tidy-up here, then re-raise the exception being handled */
        if (set_slot(F, out, k, dc_none(d)) < 0)
            return -1;
        for (int c = h;; c = F->b[c].next) {
            const fb_block *b = &F->b[c];
            int n = b->body.n - 1; /* without the final raise or jump */
            for (int q = 0; q < n; q++)
                if (fb_emit_to(F, out, b->body.v[q]) < 0)
                    return -1;
            if (c == r)
                break;
        }
        const fb_block *R = &F->b[r];
        if (R->exc >= 0 && (F->flat || R->level == level))
            return route_to(F, level, R->exc, exc_var, out, budget - 1, in_escape);
        if (R->exc >= 0) { /* an outer level's escape clause catches it */
            F->b[r].escape = 1;
            if (fb_emit_to(F, out, fb_goto_stmt(F, r)) < 0)
                return -1;
        }
        return fb_emit_raise(F, NULL, NULL, out);
    }
    fb_block *hb = &F->b[h];
    if (is_transition(F, hb)) { /* PUSH_EXC_INFO: [exc] -> [previous exception, exc] */
        if (in_escape)
            return fb_fail(F, hb->start, "exception re-raised into a handler of another level");
        if (set_slot(F, out, k++, dc_none(d)) < 0)
            return -1;
        h = F->block_of[hb->end];
        if (enter_state(F, h) < 0)
            return -1;
    }
    if (set_slot(F, out, k, dc_name(d, exc_var)) < 0)
        return -1;
    return fb_emit_to(F, out, fb_goto_stmt(F, h));
}

/* Was block b's exception re-raised by the escape clause of this level
 * (3.9/3.10, nested machines: it left a handler's machine, see
 * inject_pending), with its __context__ kept in __pctx?  In a flat machine
 * every block raises where it runs. */
static int raised_late(const fb *F, const fb_block *b, int level) { return !F->flat && b->level > level; }

/* The if/elif chain of an except clause: blocks[0..n) (with handlers) are
 * the states whose exception it routes; anything else propagates. */
static int route(fb *F, int level, const int *blocks, int n, const char *exc_var, int in_escape, dp_nodes *out) {
    dc *d = F->d;
    int ngroups = 2 * F->nex; /* by entry, and whether the block raised in a nested handler */
    int *count = dp_alloc_array(d->sh->ar, (size_t)ngroups + 1, sizeof(int));
    int *first = dp_alloc_array(d->sh->ar, (size_t)ngroups + 1, sizeof(int));
    int *ids = dp_alloc_array(d->sh->ar, (size_t)n + 1, sizeof(int));
    if (count == NULL || ids == NULL || first == NULL)
        return fb_oom(F);
    for (int k = 0; k < n; k++)
        count[2 * F->b[blocks[k]].exc + raised_late(F, &F->b[blocks[k]], level)]++;
    for (int e = 0, at = 0; e < ngroups; e++) {
        first[e] = at;
        at += count[e];
        count[e] = 0;
    }
    for (int k = 0; k < n; k++) {
        const fb_block *b = &F->b[blocks[k]];
        int g = 2 * b->exc + raised_late(F, b, level);
        ids[first[g] + count[g]++] = b->id;
    }
    dp_nodes chain = {0}; /* else-branch of the if built so far */
    if (fb_emit_raise(F, NULL, NULL, &chain) < 0)
        return -1;
    for (int g = ngroups - 1; g >= 0; g--) {
        if (count[g] == 0)
            continue;
        dp_node *s = fb_node(F, S_IF);
        if (s == NULL || (s->a = state_is(F, ids + first[g], count[g])) == NULL)
            return -1;
        if (g & 1) { /* re-raised here by the escape clause: the __context__ it had */
            dp_node *ctx = fb_node(F, S_ASSIGN), *clear = fb_node(F, S_ASSIGN);
            if (ctx == NULL || clear == NULL || dc_add(d, &ctx->l1, fb_attr(F, dc_name(d, exc_var), "__context__")) < 0 ||
                (ctx->b = dc_name(d, fb_make_name(F, "pctx", -1))) == NULL || fb_emit_to(F, &s->l1, ctx) < 0 ||
                dc_add(d, &clear->l1, dc_name(d, fb_make_name(F, "pctx", -1))) < 0 ||
                (clear->b = dc_none(d)) == NULL || fb_emit_to(F, &s->l1, clear) < 0)
                return -1;
        }
        if (route_to(F, level, g / 2, exc_var, &s->l1, 8, in_escape) < 0)
            return -1;
        s->l2 = chain;
        chain = (dp_nodes){0};
        if (dc_add(d, &chain, s) < 0)
            return -1;
    }
    for (int k = 0; k < chain.n; k++)
        if (fb_emit_to(F, out, chain.v[k]) < 0)
            return -1;
    return 0;
}

/* After routing: when the handler entered a nested machine (PUSH_EXC_INFO),
 * run it here, inside the except clause, where sys.exc_info() is the
 * handled exception as between PUSH_EXC_INFO and POP_EXCEPT. */
static int nested_machine(fb *F, int level, int from, dp_nodes *out) {
    int m = F->nenter - from;
    F->nenter = from;
    if (m == 0)
        return 0;
    dp_node *s = fb_node(F, S_IF);
    if (s == NULL || (s->a = state_is(F, F->enter + from, m)) == NULL || machine(F, level + 1, &s->l1) < 0)
        return -1;
    return fb_emit_to(F, out, s);
}

static dp_node *except_all(fb *F, const char *name) {
    dp_node *ex = fb_node(F, S_EXCEPT);
    if (ex == NULL || (ex->a = fb_builtin(F, "BaseException")) == NULL)
        return NULL;
    ex->s = name;
    return ex;
}

/* 3.9/3.10: an exception leaving a handler for an outer try unwinds the
 * handler implicitly; it leaves the nested machine, is caught by this
 * level's escape clause (which keeps it in __pending) and raised again at
 * the top of this level's try, so that its handler runs in an except clause
 * of its own: */
static int inject_pending(fb *F, dp_nodes *out) {
    dp_node *s = fb_node(F, S_IF), *p = fb_marked_name(F, fb_make_name(F, "pending", -1), FB_TEMP);
    if (s == NULL || p == NULL || (s->a = fb_compare(F, p, DP_CMP_IS_NOT, dc_none(F->d))) == NULL ||
        fb_emit_raise(F, p, NULL, &s->l1) < 0)
        return -1;
    F->pending_used = 1;
    return fb_emit_to(F, out, s);
}

/* try: <body>  except BaseException as __esc<level>: keep it for the
 * raisers[0..n), re-raise anything else. */
static int escape_to_pending(fb *F, int level, const int *raisers, int n, dp_nodes *body) {
    dc *d = F->d;
    int *ids = dp_alloc_array(d->sh->ar, (size_t)n + 1, sizeof(int));
    const char *esc = fb_make_name(F, "esc", level);
    dp_node *tr = fb_node(F, S_TRY), *ex = except_all(F, esc), *s = fb_node(F, S_IF);
    dp_node *keep = fb_node(F, S_ASSIGN), *ctx = fb_node(F, S_ASSIGN);
    if (ids == NULL || tr == NULL || ex == NULL || s == NULL || keep == NULL || ctx == NULL)
        return -1;
    for (int k = 0; k < n; k++)
        ids[k] = F->b[raisers[k]].id;
    if ((s->a = state_is(F, ids, n)) == NULL ||
        dc_add(d, &keep->l1, dc_name(d, fb_make_name(F, "pending", -1))) < 0 || (keep->b = dc_name(d, esc)) == NULL ||
        dc_add(d, &ctx->l1, dc_name(d, fb_make_name(F, "pctx", -1))) < 0 ||
        (ctx->b = fb_attr(F, dc_name(d, esc), "__context__")) == NULL || dc_add(d, &s->l1, keep) < 0 ||
        dc_add(d, &s->l1, ctx) < 0 || fb_emit_raise(F, NULL, NULL, &s->l2) < 0 || dc_add(d, &ex->l1, s) < 0 ||
        dc_add(d, &tr->l2, ex) < 0)
        return -1;
    tr->l1 = *body;
    *body = (dp_nodes){0};
    return dc_add(d, body, tr);
}

/* A block's statements for its machine: in a nested machine the handler
 * bookkeeping of flat ones goes, and a re-raise of the handled exception is
 * a bare `raise`; a flat machine drops the `break` that leaves a nested one
 * (also in the branches of an if: WITH_CLEANUP_FINISH). */
static int unflatten(fb *F, const dp_nodes *body, dp_nodes *out) {
    if (!F->block_stack) {
        *out = *body;
        return 0;
    }
    for (int k = 0; k < body->n; k++) {
        dp_node *st = body->v[k];
        if (st->fb.leave && F->flat)
            continue;
        if (st->fb.handled && !F->flat) {
            if (st->kind == S_ASSIGN)
                continue;
            if ((st = fb_node(F, S_RAISE)) == NULL) /* bare */
                return -1;
        }
        if (st->kind == S_IF) {
            dp_nodes yes = {0}, no = {0};
            if (unflatten(F, &st->l1, &yes) < 0 || unflatten(F, &st->l2, &no) < 0)
                return -1;
            st->l1 = yes;
            st->l2 = no;
        }
        if (dc_add(F->d, out, st) < 0)
            return -1;
    }
    return 0;
}

/* while True:
 *     [try:]                       exceptions re-raised by nested handlers
 *         [try:]                   when a block here has a handler
 *             if __state == k: <block k> ...
 *         [except BaseException as __exc<level>: <route>]
 *     [except BaseException as __esc<level>: <route the re-raise>] */
static int machine(fb *F, int level, dp_nodes *out) {
    dc *d = F->d;
    if (dc_nest(d->sh, DP_MAX_NESTING * 4, "exception handlers and blocks") < 0)
        return -1;
    int *raisers = dp_alloc_array(d->sh->ar, (size_t)F->nb + 1, sizeof(int));
    if (raisers == NULL)
        return fb_oom(F);
    dp_nodes body = {0};
    int nraisers = 0, nlate = 0;
    for (int k = 0; k < F->nb; k++) { /* 3.9/3.10: handled one level below the handler's level */
        const fb_block *b = &F->b[k];
        if (F->block_stack && !F->flat && b->id >= 0 && b->level > level && b->exc >= 0 &&
            F->b[handler_of(F, b->exc)].level == level + 1)
            raisers[nraisers++] = k, nlate++;
    }
    if (nlate > 0 && inject_pending(F, &body) < 0)
        return -1;
    for (int k = 0; k < F->nb; k++) {
        fb_block *b = &F->b[k];
        if (!in_machine(F, b, level))
            continue;
        if (b->exc >= 0 && (!F->block_stack || F->flat || F->b[handler_of(F, b->exc)].level == level + 1))
            raisers[nraisers++] = k;
        dp_node *s = dc_stmt(d, S_IF, b->start);
        if (s == NULL || (s->a = state_is(F, &b->id, 1)) == NULL || unflatten(F, &b->body, &s->l1) < 0)
            return -1;
        if (!F->flat && b->pop_except && level > 0 && dc_add(d, &s->l1, fb_node(F, S_BREAK)) < 0)
            return -1;
        if (dc_add(d, &body, s) < 0)
            return -1;
    }
    if (nraisers > 0) {
        const char *name = fb_make_name(F, "exc", level);
        dp_node *tr = fb_node(F, S_TRY), *ex = except_all(F, name);
        int from = F->nenter;
        if (tr == NULL || ex == NULL || route(F, level, raisers, nraisers, name, 0, &ex->l1) < 0 ||
            nested_machine(F, level, from, &ex->l1) < 0 || dc_add(d, &tr->l2, ex) < 0)
            return -1;
        tr->l1 = body;
        body = (dp_nodes){0};
        if (dc_add(d, &body, tr) < 0)
            return -1;
    }
    if (nlate > 0 && escape_to_pending(F, level, raisers, nlate, &body) < 0)
        return -1;
    int nesc = 0;
    for (int k = 0; k < F->nb; k++)
        if (F->b[k].escape && F->b[k].level == level && F->b[k].reached)
            raisers[nesc++] = k;
    if (nesc > 0) {
        const char *name = fb_make_name(F, "esc", level);
        dp_node *tr = fb_node(F, S_TRY), *ex = except_all(F, name);
        if (tr == NULL || ex == NULL || route(F, level, raisers, nesc, name, 1, &ex->l1) < 0 ||
            dc_add(d, &tr->l2, ex) < 0)
            return -1;
        tr->l1 = body;
        body = (dp_nodes){0};
        if (dc_add(d, &body, tr) < 0)
            return -1;
    }
    dp_node *loop = fb_node(F, S_WHILE);
    if (loop == NULL || (loop->a = fb_bool_const(F, 1)) == NULL)
        return -1;
    loop->l1 = body;
    d->sh->depth--;
    return fb_emit_to(F, out, loop);
}

/* The block a block's body only jumps to, or -1. */
static int goto_target(const fb_block *b) {
    if (b->body.n != 1 || b->pop_except)
        return -1;
    const dp_node *s = b->body.v[0];
    if (s->kind != S_ASSIGN || s->b == NULL || s->b->kind != E_CONST || s->b->cst != NULL)
        return -1;
    return s->b->op;
}

/* Blocks that only jump elsewhere get no state of their own. */
static int forward_empty_blocks(fb *F) {
    F->fwd = dp_alloc_array(F->d->sh->ar, (size_t)F->nb, sizeof(int));
    if (F->fwd == NULL)
        return fb_oom(F);
    for (int k = 0; k < F->nb; k++) {
        int cur = k;
        for (int steps = 0; steps < 64; steps++) {
            const fb_block *b = &F->b[cur];
            int t = goto_target(b);
            if (t < 0 || t == k || F->d->in[b->start].op == IR_PUSH_EXC_INFO || F->b[t].level != b->level)
                break;
            cur = t;
        }
        F->fwd[k] = cur;
    }
    return 0;
}

/* Nested machines need every handler that starts with PUSH_EXC_INFO to be
 * entered only through an exception, at a bounded depth. */
static void check_nesting(fb *F) {
    for (int k = 0; k < F->nb && !F->flat; k++) {
        const fb_block *b = &F->b[k];
        if (b->id < 0)
            continue;
        if (b->level > MAX_LEVELS || (F->d->in[b->start].op == IR_PUSH_EXC_INFO && b->from_normal))
            F->flat = 1;
    }
    for (int k = 0; k < F->nex && !F->flat; k++) { /* 3.8-3.10 handlers start a level */
        if (F->ex[k].block < 0) /* no block raises into it */
            continue;
        const fb_block *h = &F->b[F->ex[k].block];
        if (F->ex[k].six && h->from_normal)
            F->flat = 1;
    }
}

int dc_fallback(dc *d, dp_nodes *out) {
    /* the structurer may have rewritten the IR while trying: start afresh */
    dp_irfunc f;
    if (dp_lift(d->sh->ar, d->code, &f, d->sh->err) < 0)
        return -1;
    d->f = f;
    d->in = f.ins;
    d->n = f.n;
    if (d->n == 0)
        return dc_fail(d, -1, "empty code");
    if (fb_is_comprehension_code(d->code))
        return dc_fail(d, -1, "no expression form for %s", d->code->name);
    fb F = {0};
    F.d = d;
    F.scope_body = (d->code->flags & DP_CO_OPTIMIZED) == 0;
    F.block_stack = d->lay.block_stack;
    F.walk_setups = d->lay.finally_subroutine;
    F.star = fb_uses_star(d);
    F.egh_max = -1;
    dp_cfg g;
    if (dp_cfg_build(d->sh->ar, &d->f, &g, d->sh->err) < 0 || pick_prefix(&F) < 0 || take_blocks(&F, &g) < 0)
        return -1;
    dc_stack empty = {0};
    if (fb_reach(&F, 0, &empty, 0, 1, 0) < 0)
        return -1;
    for (int w = 0; w < F.nwork; w++) /* in discovery order: each block once */
        if (fb_translate(&F, F.work[w]) < 0)
            return -1;
    if (forward_empty_blocks(&F) < 0)
        return -1;
    int ids = 0;
    for (int k = 0; k < F.nb; k++)
        if (F.b[k].reached && F.fwd[k] == k)
            F.b[k].id = ids++;
    for (int k = 0; k < F.fixups.n; k++) {
        dp_node *c = F.fixups.v[k];
        dp_node *v = fb_int_const(&F, sid(&F, c->op));
        if (v == NULL)
            return -1;
        c->cst = v->cst;
        c->op = 0;
    }
    F.numbered = 1;
    check_nesting(&F);
    if ((F.enter = dp_alloc_array(d->sh->ar, (size_t)F.nb + 1, sizeof(int))) == NULL)
        return fb_oom(&F);
    dp_node *note = fb_node(&F, S_COMMENT), *init = fb_node(&F, S_ASSIGN);
    if (note == NULL || init == NULL || dc_add(d, &init->l1, state_var(&F)) < 0 || (init->b = fb_int_const(&F, sid(&F, 0))) == NULL)
        return -1;
    char text[520];
    snprintf(text, sizeof text, "depyf: %s%s%s%s;\n"
             "this is an equivalent state machine over the bytecode's blocks%s%s",
             d->refused ? "the structured form failed validation" : "no structured form was found",
             d->why[0] ? " (" : "", d->why, d->why[0] ? ")" : "",
             F.flat ? "\n(exception handlers run outside their except clause)" : "",
             /* (the one difference of the except* helpers, fallback_star.c) */
             F.star ? "\n(inside an except* clause, sys.exc_info() is the whole group caught, not the part it matched)"
                    : "");
    if ((note->s = dp_strdup(d->sh->ar, text)) == NULL)
        return fb_oom(&F);
    dp_nodes loop = {0};
    if (machine(&F, 0, &loop) < 0 || dc_add(d, out, note) < 0 || cells_spelled(&F, loop.v[0], 0) < 0)
        return -1;
    if (F.builtins_used) {
        dp_node *imp = fb_node(&F, S_IMPORT), *al = fb_node(&F, E_ALIAS);
        if (imp == NULL || al == NULL || (al->b = dc_name(d, fb_make_name(&F, "builtins", -1))) == NULL ||
            dc_add(d, &imp->l1, al) < 0 || dc_add(d, out, imp) < 0)
            return -1;
        al->s = "builtins";
    }
    if (F.star && fb_star_prologue(&F, out) < 0)
        return -1;
    if (F.pending_used) {
        dp_node *p = fb_node(&F, S_ASSIGN);
        if (p == NULL || dc_add(d, &p->l1, dc_name(d, fb_make_name(&F, "pending", -1))) < 0 ||
            dc_add(d, &p->l1, dc_name(d, fb_make_name(&F, "pctx", -1))) < 0 || (p->b = dc_none(d)) == NULL ||
            dc_add(d, out, p) < 0)
            return -1;
    }
    return (dc_add(d, out, init) < 0 || dc_add(d, out, loop.v[0]) < 0) ? -1 : 0;
}
