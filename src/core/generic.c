/* PEP 695 generics (3.12+).  `def f[T](...)`, `class C[T]: ...` and
 * `type A[T] = ...` compile to a hidden function `<generic parameters of
 * NAME>` that creates the type parameters (CALL_INTRINSIC_1/2), binds each
 * under its name, builds the function, class or alias inside, and is called
 * at once (with the function's .defaults and .kwdefaults, evaluated
 * outside).  Bounds, constraints, defaults and alias values are each a
 * lazily evaluated function of their own.  This file walks that hidden
 * function as the straight-line code the compiler makes and gives back an
 * X_GENERIC; anything else is refused, so the structurer's caller falls
 * back instead of printing something that behaves differently. */
#include <string.h>

#include "dc.h"

enum { I1_TYPEVAR = 7, I1_PARAMSPEC = 8, I1_TYPEVARTUPLE = 9, I1_SUBSCRIPT_GENERIC = 10, I1_TYPEALIAS = 11 };
enum { I2_TYPEVAR_WITH_BOUND = 2, I2_TYPEVAR_WITH_CONSTRAINTS = 3, I2_SET_FUNCTION_TYPE_PARAMS = 4,
       I2_SET_TYPEPARAM_DEFAULT = 5 };
enum { MAX_HIDDEN = 8 };

static const char PREFIX[] = "<generic parameters of ";

int dc_is_generic_scope(const dp_node *fn) {
    if (fn == NULL || fn->kind != X_FUNC || fn->cst == NULL || fn->cst->code == NULL)
        return 0;
    const char *n = fn->cst->code->name;
    size_t len = strlen(n);
    return strncmp(n, PREFIX, sizeof PREFIX - 1) == 0 && len > sizeof PREFIX && n[len - 1] == '>';
}

static int is_scope_code(const dp_instr *in) {
    return in->op == IR_LOAD_CONST && in->cst && in->cst->kind == DP_CONST_CODE && in->cst->code &&
           strncmp(in->cst->code->name, PREFIX, sizeof PREFIX - 1) == 0;
}

/* The compiler orders the arguments of the call with `SWAP 2` before making
 * the scope's function (two arguments), then moves the function below them
 * with `SWAP n` before the CALL. */
static int moves_scope_function(const dc *d, int i) {
    int j = i + 1;
    while (j < d->n && (d->in[j].op == IR_SWAP || d->in[j].op == IR_NOP))
        j++;
    if (j >= d->n || d->in[j].op != IR_CALL)
        return 0;
    int k = i - 1;
    while (k >= 0 && (d->in[k].op == IR_MAKE_FUNCTION || d->in[k].op == IR_SET_FUNCTION_ATTRIBUTE || d->in[k].op == IR_NOP))
        k--;
    return k >= 0 && k < i - 1 && is_scope_code(&d->in[k]);
}

int dc_generic_call_swap(const dc *d, int i) {
    if (moves_scope_function(d, i))
        return 1;
    int j;
    /* the scope's closure cells, its code, then the SWAP that moves it */
    for (j = i + 1; j < d->n && j < i + 16; j++) {
        int op = d->in[j].op;
        if (is_scope_code(&d->in[j])) {
            while (++j < d->n && (d->in[j].op == IR_MAKE_FUNCTION || d->in[j].op == IR_SET_FUNCTION_ATTRIBUTE ||
                                  d->in[j].op == IR_NOP))
                ;
            return j < d->n && d->in[j].op == IR_SWAP && moves_scope_function(d, j);
        }
        if (op != IR_NOP && op != IR_LOAD_CLOSURE && op != IR_LOAD_FAST && op != IR_LOAD_DEREF && op != IR_BUILD_TUPLE)
            return 0;
    }
    return 0;
}

typedef struct gen {
    dc *d;
    dc_stack st;
    char *name;                 /* NAME of `<generic parameters of NAME>` */
    dp_nodes params;            /* type parameters, in the order they were bound */
    const char *hname[MAX_HIDDEN]; /* the scope's hidden locals (.defaults, .type_params, ...) */
    dp_node *hval[MAX_HIDDEN];
    int nh;
} gen;

static dp_node *hidden(gen *g, const char *name) {
    for (int k = 0; k < g->nh; k++)
        if (strcmp(g->hname[k], name) == 0)
            return g->hval[k];
    return NULL;
}

static int set_hidden(gen *g, const char *name, dp_node *v, int at) {
    if (hidden(g, name) || g->nh == MAX_HIDDEN)
        return dc_fail(g->d, at, "%s bound twice in the type parameter scope", name);
    g->hname[g->nh] = name;
    g->hval[g->nh++] = v;
    return 0;
}

/* The code of a lazily evaluated bound, constraint tuple, default or alias
 * value: a function named `name` without parameters returning it. */
static const dp_code *lazy_code(dc *d, dp_node *fn, const char *name, int at) {
    const dp_code *code = fn && fn->kind == X_FUNC && fn->cst ? fn->cst->code : NULL;
    if (code == NULL || fn->a || fn->b || fn->c || strcmp(code->name, name) != 0 || code->argcount != 0 ||
        code->kwonlyargcount != 0 || (code->flags & (DP_CO_VARARGS | DP_CO_VARKEYWORDS))) {
        dc_fail(d, at, "the lazily evaluated part of %s is not a function of its own", name);
        return NULL;
    }
    return code;
}

static dp_node *lazy_value(dc *d, dp_node *fn, const char *name, int at) {
    if (lazy_code(d, fn, name, at) == NULL)
        return NULL;
    dp_node *lam = dc_lambda(d, fn, at);
    return lam ? lam->b : NULL;
}

/* A TypeVarTuple's default: `*v` is computed as v unpacked into one item
 * (`v; UNPACK_SEQUENCE 1; RETURN_VALUE`), anything else as a plain value. */
static dp_node *star_default(dc *d, dp_node *fn, const char *name, int at) {
    const dp_code *code = lazy_code(d, fn, name, at);
    dc sub;
    if (code == NULL || dc_setup(&sub, d->sh, code, d) < 0)
        return NULL;
    int end = sub.n;
    while (end > 0 && sub.in[end - 1].op == IR_NOP)
        end--;
    if (end < 2 || sub.in[end - 1].op != IR_RETURN_VALUE || sub.in[end - 2].op != IR_UNPACK_SEQUENCE ||
        sub.in[end - 2].arg != 1)
        return lazy_value(d, fn, name, at);
    dc_stack st = {0};
    for (int i = 0; i < end - 2; i++) {
        int r = dc_expr_step(&sub, i, &st);
        if (r <= 0) {
            if (r == 0)
                dc_fail(&sub, i, "%s in the default of %s", dp_irop_name(sub.in[i].op), name);
            return NULL;
        }
    }
    dp_node *star = st.n == 1 ? dc_node(d, E_STARRED) : NULL;
    if (star == NULL) {
        if (st.n != 1)
            dc_fail(&sub, end - 2, "the default of %s is not one value", name);
        return NULL;
    }
    star->a = st.v[0];
    return star;
}

/* Is `t` the tuple of all the type parameters bound, in order? */
static int is_params_tuple(const gen *g, const dp_node *t) {
    if (t == NULL || t->kind != E_TUPLE || t->l1.n != g->params.n || t->l1.n == 0)
        return 0;
    for (int k = 0; k < t->l1.n; k++)
        if (t->l1.v[k] != g->params.v[k])
            return 0;
    return 1;
}

static dp_node *new_param(gen *g, int kind, dp_node *name, int at) {
    if (!dc_is_const_kind(name, DP_CONST_STR)) {
        dc_fail(g->d, at, "type parameter name is not a string constant");
        return NULL;
    }
    dp_node *p = dc_node(g->d, E_TYPEPARAM);
    if (p) {
        p->s = name->cst->text;
        p->op = kind;
    }
    return p;
}

static int intrinsic_1(gen *g, int i) {
    dc *d = g->d;
    int arg = d->in[i].arg;
    dp_node *v = dc_pop(d, &g->st, i), *r = NULL;
    if (v == NULL)
        return -1;
    switch (arg) {
    case I1_TYPEVAR: r = new_param(g, 0, v, i); break;
    case I1_TYPEVARTUPLE: r = new_param(g, 1, v, i); break;
    case I1_PARAMSPEC: r = new_param(g, 2, v, i); break;
    case I1_SUBSCRIPT_GENERIC:
        if (!is_params_tuple(g, v))
            return dc_fail(d, i, "Generic base of something other than the type parameters");
        r = dc_node(d, X_GENERIC_BASE);
        break;
    case I1_TYPEALIAS:
        r = dc_typealias(d, v, &g->params, i);
        break;
    default:
        return dc_fail(d, i, "intrinsic %d in a type parameter scope", arg);
    }
    return dc_push(d, &g->st, r);
}

static int intrinsic_2(gen *g, int i) {
    dc *d = g->d;
    int arg = d->in[i].arg;
    dp_node *b = dc_pop(d, &g->st, i), *a = b ? dc_pop(d, &g->st, i) : NULL, *r = NULL;
    if (a == NULL)
        return -1;
    switch (arg) {
    case I2_TYPEVAR_WITH_BOUND: case I2_TYPEVAR_WITH_CONSTRAINTS: {
        if ((r = new_param(g, 0, a, i)) == NULL || (r->a = lazy_value(d, b, r->s, i)) == NULL)
            return -1;
        r->op2 = arg == I2_TYPEVAR_WITH_CONSTRAINTS;
        /* `T: (A, B)` reads as constraints: a bound must not look like that
         * (a tuple of constants is folded into one constant: a bound) */
        if (r->op2 ? r->a->kind != E_TUPLE || r->a->l1.n < 2 : r->a->kind == E_TUPLE)
            return dc_fail(d, i, "type parameter %s: %s", r->s,
                           r->op2 ? "constraints are not a tuple of two or more" : "bound is a tuple");
        break;
    }
    case I2_SET_TYPEPARAM_DEFAULT:
        if (a->kind != E_TYPEPARAM || a->b != NULL)
            return dc_fail(d, i, "default of something other than a type parameter");
        if ((a->b = a->op == 1 ? star_default(d, b, a->s, i) : lazy_value(d, b, a->s, i)) == NULL)
            return -1;
        r = a;
        break;
    case I2_SET_FUNCTION_TYPE_PARAMS:
        if (a->kind != X_FUNC || !is_params_tuple(g, b) || strcmp(a->cst->code->name, g->name) != 0)
            return dc_fail(d, i, "type parameters set on something other than %s", g->name);
        if ((r = dc_node(d, X_GENERIC)) == NULL)
            return -1;
        r->op = DC_GEN_DEF;
        r->s = g->name;
        r->a = a;
        r->l4 = g->params;
        break;
    default:
        return dc_fail(d, i, "intrinsic %d in a type parameter scope", arg);
    }
    return dc_push(d, &g->st, r);
}

/* STORE_FAST/STORE_DEREF: `COPY 1; STORE T` binds a new type parameter;
 * the hidden .type_params and .generic_base are kept for their loads. */
static int store(gen *g, int i) {
    dc *d = g->d;
    const char *name = d->in[i].name;
    dp_node *v = dc_pop(d, &g->st, i);
    if (v == NULL)
        return -1;
    if (name[0] == '.') {
        if ((strcmp(name, ".type_params") == 0 && !is_params_tuple(g, v)) ||
            (strcmp(name, ".generic_base") == 0 && v->kind != X_GENERIC_BASE))
            return dc_fail(d, i, "unexpected value stored in %s", name);
        return set_hidden(g, name, v, i);
    }
    if (v->kind != E_TYPEPARAM || strcmp(v->s, name) != 0 || g->st.n == 0 || g->st.v[g->st.n - 1] != v)
        return dc_fail(d, i, "store to %s in a type parameter scope", name);
    for (int k = 0; k < g->params.n; k++)
        if (g->params.v[k] == v || strcmp(g->params.v[k]->s, name) == 0)
            return dc_fail(d, i, "type parameter %s bound twice", name);
    return dc_add(d, &g->params, v);
}

/* The class made in the scope: `__build_class__(body, NAME, bases...,
 * Generic[*params], keywords...)`, without the Generic base. */
static dp_node *class_call(gen *g, dp_node *call, int at) {
    dc *d = g->d;
    if (!is_params_tuple(g, hidden(g, ".type_params")) || call->kind != E_CALL || call->a == NULL ||
        call->a->kind != X_BUILD_CLASS || call->l1.n < 3 || call->l1.v[0]->kind != X_FUNC ||
        strcmp(call->l1.v[0]->cst->code->name, g->name) != 0 || !dc_is_const_kind(call->l1.v[1], DP_CONST_STR) ||
        strcmp(call->l1.v[1]->cst->text, g->name) != 0 || call->l1.v[call->l1.n - 1]->kind != X_GENERIC_BASE) {
        dc_fail(d, at, "the type parameter scope of %s does not make a class of that name", g->name);
        return NULL;
    }
    dp_node *cls = dc_node(d, E_CALL), *r = dc_node(d, X_GENERIC);
    if (cls == NULL || r == NULL)
        return NULL;
    *cls = *call;
    cls->l1.n--;
    r->op = DC_GEN_CLASS;
    r->s = g->name;
    r->a = cls;
    r->l4 = g->params;
    return r;
}

/* One instruction of the scope; 1 at its RETURN_VALUE. */
static int step(gen *g, int i, dp_node **result) {
    dc *d = g->d;
    const dp_instr *in = &d->in[i];
    dp_node *v;
    switch (in->op) {
    case IR_CALL_INTRINSIC_1:
        return intrinsic_1(g, i);
    case IR_CALL_INTRINSIC_2:
        return intrinsic_2(g, i);
    case IR_STORE_FAST: case IR_STORE_DEREF:
        return store(g, i);
    case IR_LOAD_FAST: case IR_LOAD_DEREF: case IR_LOAD_CLOSURE:
        if (in->name[0] != '.')
            break;
        /* the cell itself (a closure's; 3.13 loads it with LOAD_FAST), not its value */
        if (in->op == IR_LOAD_CLOSURE || (in->op == IR_LOAD_FAST && dc_fast_load_is_cell(d, in->name)))
            return dc_push(d, &g->st, dc_cell(d, in->name));
        if ((v = hidden(g, in->name)) == NULL)
            return dc_fail(d, i, "%s read before it is bound", in->name);
        return dc_push(d, &g->st, v);
    case IR_LIST_APPEND: /* the Generic base after starred bases: `(*bases, base)` */
        if (in->arg != 1 || g->st.n < 2 || g->st.v[g->st.n - 1]->kind != X_GENERIC_BASE ||
            g->st.v[g->st.n - 2]->kind != E_LIST)
            break;
        v = dc_pop(d, &g->st, i);
        return dc_add(d, &g->st.v[g->st.n - 1]->l1, v);
    case IR_RETURN_VALUE:
        if ((v = dc_pop(d, &g->st, i)) == NULL)
            return -1;
        if (v->kind == E_CALL)
            v = class_call(g, v, i);
        else if (v->kind != X_GENERIC || strcmp(v->s, g->name) != 0)
            return dc_fail(d, i, "the type parameter scope of %s returns something else", g->name);
        *result = v;
        return v ? 1 : -1;
    default:
        break;
    }
    int r = dc_expr_step(d, i, &g->st);
    if (r == 0)
        return dc_fail(d, i, "%s in the type parameter scope of %s", dp_irop_name(in->op), g->name);
    return r < 0 ? -1 : 0;
}

dp_node *dc_generic(dc *outer, dp_node *fn, const dp_nodes *args, int at) {
    const dp_code *code = fn->cst->code;
    dc_shared *sh = outer->sh;
    if (fn->a || fn->b || fn->c || code->py_minor < 12) {
        dc_fail(outer, at, "malformed call of %s", code->name);
        return NULL;
    }
    if (dc_nest(sh, DP_MAX_NESTING, "code objects and blocks") < 0)
        return NULL;
    dp_node *result = NULL;
    dc sub;
    gen g = {.d = &sub};
    size_t len = strlen(code->name) - (sizeof PREFIX - 1) - 1;
    if ((g.name = dp_alloc(sh->ar, len + 1)) == NULL) {
        dp_fail(sh->err, -1, "out of memory");
        goto out;
    }
    memcpy(g.name, code->name + sizeof PREFIX - 1, len);
    g.name[len] = '\0';
    if (dc_setup(&sub, sh, code, outer) < 0 || (sub.path = dc_scope_path(outer, fn->op, code)) < 0)
        goto out;
    /* the arguments bind the hidden parameters .defaults and .kwdefaults */
    if (code->argcount != args->n || code->kwonlyargcount || (code->flags & (DP_CO_VARARGS | DP_CO_VARKEYWORDS)) ||
        (size_t)args->n > code->varnames.n) {
        dc_fail(outer, at, "%s called with %d arguments", code->name, args->n);
        goto out;
    }
    for (int k = 0; k < args->n; k++) {
        const char *p = code->varnames.v[k];
        if ((strcmp(p, ".defaults") != 0 && strcmp(p, ".kwdefaults") != 0) || set_hidden(&g, p, args->v[k], at) < 0) {
            dc_fail(outer, at, "%s has a parameter %s", code->name, p);
            goto out;
        }
    }
    int i = 0, r = 0;
    for (; i < sub.n && r == 0; i++)
        r = step(&g, i, &result);
    if (r < 0)
        goto out;
    /* all of it straight-line, every value consumed, nothing declared */
    if (r == 0 || g.st.n != 0 || sub.globals.n || sub.nonlocals.n) {
        dc_fail(&sub, i - 1, "the type parameter scope of %s is not in a known form", g.name);
        result = NULL;
        goto out;
    }
    for (; i < sub.n; i++)
        if (sub.reach[i] && sub.in[i].op != IR_NOP) {
            dc_fail(&sub, i, "code after the return of the type parameter scope");
            result = NULL;
            goto out;
        }
out:
    sh->depth--;
    return result;
}

dp_node *dc_typealias(dc *d, dp_node *t, const dp_nodes *params, int at) {
    int generic = params && params->n > 0;
    if (t->kind != E_TUPLE || t->l1.n != 3 || !dc_is_const_kind(t->l1.v[0], DP_CONST_STR) ||
        (generic ? t->l1.v[1]->kind != E_TUPLE || t->l1.v[1]->l1.n != params->n
                 : !dc_is_const_kind(t->l1.v[1], DP_CONST_NONE))) {
        dc_fail(d, at, "type alias from an unexpected tuple");
        return NULL;
    }
    for (int k = 0; generic && k < params->n; k++)
        if (t->l1.v[1]->l1.v[k] != params->v[k]) {
            dc_fail(d, at, "type alias with other type parameters than its scope binds");
            return NULL;
        }
    dp_node *r = dc_node(d, X_GENERIC);
    if (r == NULL)
        return NULL;
    r->op = DC_GEN_ALIAS;
    r->s = t->l1.v[0]->cst->text;
    if (generic)
        r->l4 = *params;
    r->a = lazy_value(d, t->l1.v[2], r->s, at);
    return r->a ? r : NULL;
}

dp_node *dc_generic_stmt(dc *d, dp_node *g, const char *name, int at) {
    if (strcmp(g->s, name) != 0) {
        dc_fail(d, at, "%s stored under the name %s", g->s, name);
        return NULL;
    }
    dp_node *s;
    if (g->op == DC_GEN_DEF)
        s = dc_funcdef(d, g->a, name, at);
    else if (g->op == DC_GEN_CLASS)
        s = dc_classdef(d, g->a, name, at);
    else if ((s = dc_stmt(d, S_TYPEALIAS, at)) != NULL) {
        s->s = name;
        s->a = g->a;
    }
    if (s)
        s->l4 = g->l4;
    return s;
}
