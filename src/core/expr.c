/* The symbolic stack machine: every IR instruction that only computes a
 * value (or shuffles the stack) becomes an expression node. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dc.h"

int dc_fail(dc *d, int at, const char *fmt, ...) {
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int off = (at >= 0 && at < d->n) ? d->in[at].offset : -1;
    dp_error_where(d->sh->err, d->code->qualname);
    return dp_fail(d->sh->err, off, "%s", msg);
}

static int oom(dc *d) { return dp_fail(d->sh->err, -1, "out of memory"); }

dp_node *dc_node(dc *d, int kind) {
    dp_node *n = dp_node_new(d->sh->ar, kind);
    if (n == NULL)
        oom(d);
    return n;
}

int dc_add(dc *d, dp_nodes *l, dp_node *n) {
    if (n == NULL || dp_nodes_push(d->sh->ar, l, n) < 0)
        return n == NULL ? -1 : oom(d);
    return 0;
}

dp_node *dc_name(dc *d, const char *s) {
    dp_node *n = dc_node(d, E_NAME);
    if (n)
        n->s = s;
    return n;
}

dp_node *dc_const(dc *d, const dp_const *c) {
    dp_node *n = dc_node(d, E_CONST);
    if (n)
        n->cst = c;
    return n;
}

dp_node *dc_none(dc *d) {
    static const dp_const none = {.kind = DP_CONST_NONE};
    return dc_const(d, &none);
}

/* The cell of variable `name` itself, as LOAD_CLOSURE pushes it: Dynamo
 * passes closure tuples to helpers that build functions.  Python has no
 * syntax for a cell; `(lambda: name).__closure__[0]` is that cell (and
 * keeps `name` a cell variable of the recompiled code). */
dp_node *dc_cell(dc *d, const char *name) {
    static const dp_const zero = {.kind = DP_CONST_INT, .text = "0", .len = 1};
    dp_node *lam = dc_node(d, E_LAMBDA), *attr = dc_node(d, E_ATTR), *sub = dc_node(d, E_SUBSCR);
    if (lam == NULL || attr == NULL || sub == NULL || (lam->b = dc_name(d, name)) == NULL ||
        (sub->b = dc_const(d, &zero)) == NULL)
        return NULL;
    attr->a = lam;
    attr->s = "__closure__";
    sub->a = attr;
    return sub;
}


/* Index of a cell or free variable among cellvars then freevars, or -1. */
static long cell_index(const dp_code *c, const char *name) {
    for (size_t k = 0; k < c->cellvars.n; k++)
        if (strcmp(c->cellvars.v[k], name) == 0)
            return (long)k;
    for (size_t k = 0; k < c->freevars.n; k++)
        if (strcmp(c->freevars.v[k], name) == 0)
            return (long)(c->cellvars.n + k);
    return -1;
}

int dc_is_cell_var(const dp_code *c, const char *name) { return cell_index(c, name) >= 0; }

/* 3.13 loads a cell for a closure with LOAD_FAST (lay.cells_by_load_fast).
 * The same slot can also hold a plain value: an inlined comprehension
 * (3.12+) whose variable is a cell in one comprehension and a plain local
 * in another stores into it with STORE_FAST.  Only a slot no fast store or delete touches surely holds the
 * cell (Dynamo's code writes cells with STORE_DEREF).  The slots touched are
 * found in one pass over the code, on first use. */
int dc_fast_load_is_cell(dc *d, const char *name) {
    long k = d->lay.cells_by_load_fast ? cell_index(d->code, name) : -1;
    if (k < 0)
        return 0;
    if (d->cell_stored == NULL) {
        unsigned char *stored = dp_alloc_array(d->sh->ar, d->code->cellvars.n + d->code->freevars.n + 1, 1);
        if (stored == NULL)
            return 0; /* (out of memory, which the arena reports: the name, as it reads) */
        for (int j = 0; j < d->n; j++) {
            int op = d->in[j].op;
            long s = (op == IR_STORE_FAST || op == IR_DELETE_FAST || op == IR_LOAD_FAST_AND_CLEAR) && d->in[j].name
                         ? cell_index(d->code, d->in[j].name)
                         : -1;
            if (s >= 0)
                stored[s] = 1;
        }
        d->cell_stored = stored;
    }
    return !d->cell_stored[k];
}

int dc_is_cell(const dp_node *e) {
    return e != NULL && e->kind == E_SUBSCR && e->a && e->a->kind == E_ATTR && e->a->s &&
           strcmp(e->a->s, "__closure__") == 0 && e->a->a && e->a->a->kind == E_LAMBDA && e->a->a->a == NULL &&
           e->a->a->b && e->a->a->b->kind == E_NAME;
}

int dc_is_const_kind(const dp_node *e, int kind) {
    return e != NULL && e->kind == E_CONST && e->cst != NULL && (int)e->cst->kind == kind;
}

int dc_is_identifier_n(const char *s, size_t len) {
    static const char *const keywords[] = {
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
        "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
        "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
        "with", "yield"};
    if (s == NULL || len == 0 || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80))
            return 0;
    }
    for (size_t k = 0; k < sizeof keywords / sizeof *keywords; k++)
        if (strlen(keywords[k]) == len && memcmp(keywords[k], s, len) == 0)
            return 0;
    return 1;
}

int dc_is_identifier(const char *s) { return s != NULL && dc_is_identifier_n(s, strlen(s)); }

dp_node *dc_not(dc *d, dp_node *e) {
    if (e == NULL)
        return NULL;
    if (e->kind == E_UNARY && e->op == DP_UN_NOT)
        return e->a;
    if (e->kind == E_COMPARE && e->op2 == 1 && e->l1.n == 1) {
        /* a test made from POP_JUMP_IF_NONE: `is` and `is not` both fit */
        dp_node *c = dc_node(d, E_COMPARE);
        int *ops = dp_alloc(d->sh->ar, sizeof(int));
        if (c == NULL || ops == NULL)
            return NULL;
        *c = *e;
        c->ops = ops;
        ops[0] = e->ops[0] == DP_CMP_IS ? DP_CMP_IS_NOT : DP_CMP_IS;
        return c;
    }
    dp_node *n = dc_node(d, E_UNARY);
    if (n) {
        n->op = DP_UN_NOT;
        n->a = e;
    }
    return n;
}

/* Flattens `a and (b and c)` into one BoolOp, as the compiler does. */
dp_node *dc_boolop(dc *d, int is_or, dp_node *a, dp_node *b) {
    if (a == NULL || b == NULL)
        return NULL;
    dp_node *n = dc_node(d, E_BOOLOP);
    if (n == NULL)
        return NULL;
    n->op = is_or;
    dp_node *parts[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        dp_node *p = parts[k];
        if (p->kind == E_BOOLOP && p->op == is_or) {
            for (int j = 0; j < p->l1.n; j++)
                if (dc_add(d, &n->l1, p->l1.v[j]) < 0)
                    return NULL;
        } else if (dc_add(d, &n->l1, p) < 0) {
            return NULL;
        }
    }
    return n;
}

/* ---- stack ---- */

int dc_push(dc *d, dc_stack *st, dp_node *e) {
    if (e == NULL)
        return -1;
    if (st->n == st->cap) {
        int cap = st->cap ? st->cap * 2 : 16;
        if (cap > 1 << 20)
            return dc_fail(d, -1, "symbolic stack too deep");
        dp_node **v = dp_alloc_array(d->sh->ar, (size_t)cap, sizeof *v);
        if (v == NULL)
            return oom(d);
        if (st->n)
            memcpy(v, st->v, (size_t)st->n * sizeof *v);
        st->v = v;
        st->cap = cap;
    }
    st->v[st->n++] = e;
    return 0;
}

dp_node *dc_pop(dc *d, dc_stack *st, int at) {
    if (st->n <= 0) {
        dc_fail(d, at, "stack underflow at %s", at >= 0 && at < d->n ? dp_irop_name(d->in[at].op) : "?");
        return NULL;
    }
    return st->v[--st->n];
}

dp_node *dc_top(dc *d, dc_stack *st, int k, int at) {
    if (k < 0 || st->n <= k) {
        dc_fail(d, at, "stack underflow at %s", at >= 0 && at < d->n ? dp_irop_name(d->in[at].op) : "?");
        return NULL;
    }
    return st->v[st->n - 1 - k];
}

int dc_stack_copy(dc *d, dc_stack *dst, const dc_stack *src) {
    d->shared_seq = d->sh->ar->nodes;
    dst->n = 0;
    for (int k = 0; k < src->n; k++)
        if (dc_push(d, dst, src->v[k]) < 0)
            return -1;
    return 0;
}

/* The structurer walks the two ways of a branch on copies of the stack,
 * which hold the same nodes, and a speculation may be dropped: a display
 * built on (`[*a, *(b or [1])]` adds [1] to the display on one way) is
 * copied before it changes, unless it was made after the last copy. */
static int copy_list(dc *d, dp_nodes *l) {
    dp_nodes c = {0};
    for (int k = 0; k < l->n; k++)
        if (dp_nodes_push(d->sh->ar, &c, l->v[k]) < 0)
            return oom(d);
    *l = c;
    return 0;
}

dp_node *dc_own_slot(dc *d, dc_stack *st, int k) {
    dp_node *x = st->v[k], *c;
    if (x->seq > d->shared_seq)
        return x;
    if ((c = dc_node(d, x->kind)) == NULL)
        return NULL;
    size_t seq = c->seq;
    *c = *x;
    c->seq = seq;
    if (copy_list(d, &c->l1) < 0 || copy_list(d, &c->l2) < 0)
        return NULL;
    return st->v[k] = c;
}

/* ---- helpers for building values ---- */

static dp_node *seq_node(dc *d, int kind, dc_stack *st, int count, int at) {
    if (count < 0 || count > st->n) {
        dc_fail(d, at, "bad element count %d", count);
        return NULL;
    }
    dp_node *n = dc_node(d, kind);
    if (n == NULL)
        return NULL;
    int base = st->n - count;
    for (int k = 0; k < count; k++)
        if (dc_add(d, &n->l1, st->v[base + k]) < 0)
            return NULL;
    st->n = base;
    return n;
}

/* Elements of a constant tuple/frozenset as E_CONST nodes. */
static int add_const_items(dc *d, dp_nodes *l, const dp_const *c) {
    for (size_t k = 0; k < c->n; k++)
        if (dc_add(d, l, dc_const(d, c->items[k])) < 0)
            return -1;
    return 0;
}

/* LIST_EXTEND / SET_UPDATE: `coll` gains the items of `it` (unpacked). */
static int extend_display(dc *d, dp_node *coll, dp_node *it) {
    if (it->kind == E_CONST && it->cst &&
        (it->cst->kind == DP_CONST_TUPLE || it->cst->kind == DP_CONST_FROZENSET) &&
        coll->l1.n == 0)
        return add_const_items(d, &coll->l1, it->cst);
    dp_node *s = dc_node(d, E_STARRED);
    if (s == NULL)
        return -1;
    s->a = it;
    return dc_add(d, &coll->l1, s);
}

/* Whether key, a string, is among the first n keys of dict. */
static int has_key(const dp_node *dict, int n, const dp_node *key) {
    for (int k = 0; k < n; k++) {
        const dp_node *o = dict->l1.v[k];
        if (o && dc_is_const_kind(o, DP_CONST_STR) && strcmp(o->cst->text, key->cst->text) == 0)
            return 1;
    }
    return 0;
}

/* Whether the entries of a dict display read the same as keyword arguments
 * after those of `into` (NULL: none): every key a name, none repeated, and
 * `**x` entries only if `allow_star` (a literal's `**x` would override a
 * key where keywords raise).  Past a size, no: `**{...}` is right anyway. */
static int as_keywords(const dp_node *dict, const dp_node *into, int allow_star) {
    if (dict->l1.n > 256 || (into && into->l1.n > 256))
        return 0;
    for (int k = 0; k < dict->l1.n; k++) {
        const dp_node *key = dict->l1.v[k];
        if (key == NULL) {
            if (!allow_star)
                return 0;
            continue;
        }
        if (!dc_is_const_kind(key, DP_CONST_STR) || !dc_is_identifier(key->cst->text) || has_key(dict, k, key) ||
            (into && has_key(into, into->l1.n, key)))
            return 0;
    }
    return 1;
}

/* Does a literal dict added to a display's `dict` read as its items?  The
 * compiler gathers a display's items into chunks and adds each to the dict
 * it builds: after a `**x` entry, or after a full chunk (16 items and more:
 * a long display is cut), more items; anywhere else a literal is a `**{...}`
 * entry: {**{k: v}, ...} starts from an empty dict, {k: v, **{k2: v2}}
 * follows a chunk that could have taken k2.  `first`: the first of the
 * dicts BUILD_MAP_UNPACK (3.8) merges, which is its leading items. */
static int literal_is_items(const dp_node *dict, int first) {
    if (first)
        return 1;
    int run = 0; /* (the items since the last `**`, counted up to 16) */
    while (run < 16 && run < dict->l1.n && dict->l1.v[dict->l1.n - 1 - run] != NULL)
        run++;
    return dict->l1.n > 0 && (run == 0 || run >= 16);
}

/* DICT_UPDATE / DICT_MERGE: literal dicts merge where they are items
 * (literal_is_items; a call's keywords are gathered the same way), anything
 * else is **it.  Into a call's keyword arguments (`call`; the dict's op
 * records it) only a literal that reads as keywords merges. */
static int update_dict(dc *d, dp_node *dict, dp_node *it, int call, int first) {
    dict->op |= call;
    if (it->kind == E_DICT && it->op2 == 0 && literal_is_items(dict, first) && (!call || as_keywords(it, dict, 0))) {
        for (int k = 0; k < it->l1.n; k++) /* (a NULL key is a `**x` entry) */
            if (dp_nodes_push(d->sh->ar, &dict->l1, it->l1.v[k]) < 0 || dc_add(d, &dict->l2, it->l2.v[k]) < 0)
                return oom(d);
        return 0;
    }
    if (dp_nodes_push(d->sh->ar, &dict->l1, NULL) < 0)
        return oom(d);
    return dc_add(d, &dict->l2, it);
}

/* Pops the callable of a call.  With a slot pair, one slot is NULL (our
 * LOAD_METHOD also leaves NULL where the interpreter keeps the bound self);
 * when neither is, the second slot is a first argument: 3.11+ calls a
 * comprehension's function as `func, iterator; CALL 0`. */
static dp_node *callable_of(dc *d, dc_stack *st, int pair, int at, dp_node **first_arg) {
    *first_arg = NULL;
    if (!pair)
        return dc_pop(d, st, at);
    dp_node *x = dc_pop(d, st, at), *y = x ? dc_pop(d, st, at) : NULL;
    if (y == NULL)
        return NULL;
    if (x->kind == X_NULL)
        return y;
    if (y->kind == X_NULL)
        return x;
    *first_arg = x;
    return y;
}

/* Positional arguments from the tuple operand of CALL_FUNCTION_EX. */
static int add_ex_args(dc *d, dp_node *call, dp_node *args) {
    if (args->kind == E_TUPLE || (args->kind == E_LIST && args->op2 == 1)) {
        for (int k = 0; k < args->l1.n; k++)
            if (dc_add(d, &call->l1, args->l1.v[k]) < 0)
                return -1;
        return 0;
    }
    if (dc_is_const_kind(args, DP_CONST_TUPLE))
        return add_const_items(d, &call->l1, args->cst);
    dp_node *s = dc_node(d, E_STARRED);
    if (s == NULL)
        return -1;
    s->a = args;
    return dc_add(d, &call->l1, s);
}

/* Whether a call's positional arguments include a `*x`. */
static int has_starred(const dp_node *call) {
    for (int k = 0; k < call->l1.n; k++)
        if (call->l1.v[k]->kind == E_STARRED)
            return 1;
    return 0;
}

/* The mapping operand of CALL_FUNCTION_EX: a dict merged for the call
 * (op set) lists keywords and `**x`; a dict display passed whole is
 * flattened only when that reads the same: after a `*x`, or when the
 * arguments would take more than 30 stack slots (3.10+ passes them in a
 * dict then, a keyword counting two); elsewhere keywords compile to a call
 * with names, and 3.8's `g(**{...})` stays so. */
static int add_ex_kwargs(dc *d, dp_node *call, dp_node *kw) {
    int many = call->l1.n + 2 * kw->l1.n > 30;
    if (kw->kind == E_DICT && (kw->op || has_starred(call) || many) && as_keywords(kw, NULL, kw->op)) {
        for (int k = 0; k < kw->l1.n; k++) {
            dp_node *key = kw->l1.v[k];
            dp_node *e = dc_node(d, E_KEYWORD);
            if (e == NULL)
                return -1;
            e->a = kw->l2.v[k];
            if (key == NULL) {
                e->s = NULL;
            } else {
                e->s = key->cst->text;
            }
            if (dc_add(d, &call->l2, e) < 0)
                return -1;
        }
        return 0;
    }
    dp_node *e = dc_node(d, E_KEYWORD);
    if (e == NULL)
        return -1;
    e->a = kw;
    return dc_add(d, &call->l2, e);
}

static int is_code_named(const dp_node *fn, const char *name) {
    return fn && fn->kind == X_FUNC && fn->cst && fn->cst->code && strcmp(fn->cst->code->name, name) == 0;
}

static int is_comprehension(const dp_node *fn) {
    return is_code_named(fn, "<listcomp>") || is_code_named(fn, "<setcomp>") ||
           is_code_named(fn, "<dictcomp>") || is_code_named(fn, "<genexpr>");
}

static dp_node *make_call(dc *d, dc_stack *st, const dp_instr *ins, int at) {
    int nkw = (ins->cst && ins->cst->kind == DP_CONST_TUPLE) ? (int)ins->cst->n : 0;
    int nargs = ins->arg;
    if (nargs < nkw || nargs > st->n)
        return dc_fail(d, at, "bad call argument count"), NULL;
    /* (the names are printed as they are: bytes would not be text) */
    for (int k = 0; k < nkw; k++) {
        const dp_const *name = ins->cst->items[k];
        if (name->kind == DP_CONST_STR && dc_is_identifier(name->text))
            continue;
        if (name->at)
            return dc_fail(d, at, "keyword argument name %d of the call (the constant at byte %zu of the file) is "
                                  "not an identifier", k, name->at - 1), NULL;
        return dc_fail(d, at, "keyword argument name %d of the call is not an identifier", k), NULL;
    }
    int base = st->n - nargs;
    dp_node **vals = st->v ? st->v + base : NULL; /* NULL + 0 is undefined */
    st->n = base;
    dp_node *first = NULL;
    dp_node *fn = callable_of(d, st, ins->arg2 & DP_CALL_PAIR, at, &first);
    if (fn == NULL)
        return NULL;
    if (first && nargs == 0 && is_comprehension(fn))
        return dc_comprehension(d, fn, first->kind == X_ITER ? first->a : first, at);
    if (nkw == 0 && nargs == 1 && first == NULL && is_comprehension(fn))
        return dc_comprehension(d, fn, vals[0]->kind == X_ITER ? vals[0]->a : vals[0], at);
    if (fn->kind == X_WITH_EXIT)
        return dc_node(d, X_OPAQUE); /* the __exit__ call closing a with block */
    if (dc_is_generic_scope(fn)) {
        /* PEP 695: called with the .defaults and .kwdefaults of the function it makes */
        dp_nodes args = {0};
        if (nkw > 0)
            return dc_fail(d, at, "keyword arguments to a type parameter scope"), NULL;
        if (first && dc_add(d, &args, first) < 0)
            return NULL;
        for (int k = 0; k < nargs; k++)
            if (dc_add(d, &args, vals[k]) < 0)
                return NULL;
        return dc_generic(d, fn, &args, at);
    }
    dp_node *call = dc_node(d, E_CALL);
    if (call == NULL)
        return NULL;
    call->a = fn;
    if (first && dc_add(d, &call->l1, first) < 0)
        return NULL;
    for (int k = 0; k < nargs - nkw; k++)
        if (dc_add(d, &call->l1, vals[k]) < 0)
            return NULL;
    for (int k = 0; k < nkw; k++) {
        const dp_const *kn = ins->cst->items[k];
        dp_node *e = dc_node(d, E_KEYWORD);
        if (e == NULL)
            return NULL;
        e->s = kn->text;
        e->a = vals[nargs - nkw + k];
        if (dc_add(d, &call->l2, e) < 0)
            return NULL;
    }
    return call;
}

/* A `def` or `lambda` names its free variables, so a made function can be
 * printed as one only when its closure is the cells of those names, in
 * order, as the compiler builds it (lay.cells_by_load_fast: a cell loaded
 * with LOAD_FAST, read as the name). */
int dc_closure_is_cells(const dc *d, const dp_code *code, const dp_node *closure) {
    if (closure == NULL || closure->kind != E_TUPLE || closure->l1.n < 0 ||
        (size_t)closure->l1.n != code->freevars.n)
        return 0;
    for (int k = 0; k < closure->l1.n; k++) {
        const dp_node *e = closure->l1.v[k];
        const char *name = dc_is_cell(e) ? e->a->a->b->s
                           : e && e->kind == E_NAME && d->lay.cells_by_load_fast ? e->s : NULL;
        if (name == NULL || strcmp(name, code->freevars.v[k]) != 0)
            return 0;
    }
    return 1;
}

/* A function made with another closure (Dynamo's code passes the closure
 * of a resume function through lists), or used as a value rather than
 * stored by a def, has no def or lambda form; it is the call that makes the
 * same function from the same code object: `(lambda: 0).__class__` is the
 * function type and `(lambda: 0).__globals__` the globals MAKE_FUNCTION
 * uses, both read without looking up a name.  `closure` may be NULL (none).
 * The name and (3.11+) the qualified name come from the code object as with
 * MAKE_FUNCTION; before 3.11 MAKE_FUNCTION takes the qualified name from
 * the stack (lay.qualname_on_stack), and keyword defaults or annotations
 * would need statements: those fail. */
dp_node *dc_function_by_value(dc *d, dp_node *fn, dp_node *closure, int at) {
    static const dp_const none = {.kind = DP_CONST_NONE}, zero = {.kind = DP_CONST_INT, .text = "0", .len = 1};
    if (d->lay.qualname_on_stack || fn->b != NULL || fn->c != NULL)
        return dc_fail(d, at, "a function made as a value (no def or lambda makes it)"), NULL;
    dp_node *call = dc_node(d, E_CALL), *type = dc_node(d, E_ATTR), *globals = dc_node(d, E_ATTR);
    dp_node *lam1 = dc_node(d, E_LAMBDA), *lam2 = dc_node(d, E_LAMBDA);
    if (call == NULL || type == NULL || globals == NULL || lam1 == NULL || lam2 == NULL ||
        (lam1->b = dc_const(d, &zero)) == NULL || (lam2->b = dc_const(d, &zero)) == NULL)
        return NULL;
    type->a = lam1;
    type->s = "__class__";
    globals->a = lam2;
    globals->s = "__globals__";
    call->a = type;
    dp_node *args[5] = {dc_const(d, fn->cst), globals, dc_const(d, &none), fn->a ? fn->a : dc_const(d, &none),
                        closure ? closure : dc_const(d, &none)};
    for (int k = 0; k < 5; k++)
        if (args[k] == NULL || dc_add(d, &call->l1, args[k]) < 0)
            return NULL;
    return call;
}

static dp_node *make_function(dc *d, dc_stack *st, int flags, int at) {
    dp_node *code = dc_pop(d, st, at);
    if (code == NULL)
        return NULL;
    if (!dc_is_const_kind(code, DP_CONST_CODE))
        return dc_fail(d, at, "MAKE_FUNCTION without a code constant"), NULL;
    dp_node *fn = dc_node(d, X_FUNC), *closure = NULL;
    if (fn == NULL)
        return NULL;
    fn->cst = code->cst;
    fn->op = at;
    if (flags & DP_FN_CLOSURE && (closure = dc_pop(d, st, at)) == NULL)
        return NULL;
    if (flags & DP_FN_ANNOTATIONS && (fn->c = dc_pop(d, st, at)) == NULL)
        return NULL;
    if (flags & DP_FN_KWDEFAULTS && (fn->b = dc_pop(d, st, at)) == NULL)
        return NULL;
    if (flags & DP_FN_DEFAULTS && (fn->a = dc_pop(d, st, at)) == NULL)
        return NULL;
    if (closure && !dc_closure_is_cells(d, code->cst->code, closure))
        return dc_function_by_value(d, fn, closure, at);
    if (closure && dc_add(d, &fn->l1, closure) < 0)
        return NULL;
    /* (with function_attrs_after_make a lambda's defaults come after:
     * finish_made_function makes it a lambda once the structure is built) */
    if (strcmp(fn->cst->code->name, "<lambda>") == 0 && !d->lay.function_attrs_after_make)
        return dc_lambda(d, fn, at);
    return fn;
}

static dp_node *binop(dc *d, int kind, int op, dp_node *a, dp_node *b) {
    if (a == NULL || b == NULL)
        return NULL;
    dp_node *n = dc_node(d, kind);
    if (n) {
        n->op = op;
        n->a = a;
        n->b = b;
    }
    return n;
}

static dp_node *compare(dc *d, int op, dp_node *a, dp_node *b) {
    if (a == NULL || b == NULL)
        return NULL;
    dp_node *n = dc_node(d, E_COMPARE);
    if (n == NULL)
        return NULL;
    n->a = a;
    n->ops = dp_alloc(d->sh->ar, sizeof(int));
    if (n->ops == NULL)
        return oom(d), NULL;
    n->ops[0] = op;
    if (dc_add(d, &n->l1, b) < 0)
        return NULL;
    return n;
}

/* f-string parts: a format spec is always printed from an E_JOINEDSTR. */
static dp_node *as_joined(dc *d, dp_node *e) {
    if (e->kind == E_JOINEDSTR)
        return e;
    dp_node *j = dc_node(d, E_JOINEDSTR);
    if (j && dc_add(d, &j->l1, e) < 0)
        return NULL;
    return j;
}

static dp_node *format_value(dc *d, dc_stack *st, int arg, int at) {
    dp_node *spec = NULL;
    if (arg & DP_FMT_HAS_SPEC && (spec = dc_pop(d, st, at)) == NULL)
        return NULL;
    dp_node *v = dc_pop(d, st, at);
    if (v == NULL)
        return NULL;
    int conv = arg & DP_FMT_CONV_MASK;
    if (v->kind == X_CONVERTED) {
        conv = v->op;
        v = v->a;
    }
    dp_node *f = dc_node(d, E_FORMATTED);
    if (f == NULL)
        return NULL;
    static const int convs[4] = {0, 's', 'r', 'a'};
    f->op = convs[conv];
    f->a = v;
    if (spec && (f->b = as_joined(d, spec)) == NULL)
        return NULL;
    return as_joined(d, f);
}

/* The field {v!conv} that e is alone (no format spec), or NULL. */
static dp_node *lone_field(dp_node *e) {
    if (e->kind == E_JOINEDSTR && e->l1.n == 1)
        e = e->l1.v[0];
    return e->kind == E_FORMATTED && e->b == NULL ? e : NULL;
}

/* A piece `{x} if c else {y}` (each arm formatted alone, the same way):
 * the field {x if c else y}, whose FORMAT_VALUE 3.12+ copies into both
 * arms with the code after it.  Printed as it is, each arm would be a
 * nested f-string formatted once more.  Else p. */
static dp_node *hoist_field(dc *d, dp_node *p) {
    dp_node *x = p->kind == E_IFEXP ? lone_field(p->b) : NULL, *y = x ? lone_field(p->c) : NULL;
    if (y == NULL || x->op != y->op)
        return p;
    dp_node *e = dc_node(d, E_IFEXP), *f = dc_node(d, E_FORMATTED);
    if (e == NULL || f == NULL)
        return NULL;
    e->a = p->a;
    e->b = x->a;
    e->c = y->a;
    f->op = x->op;
    f->a = e;
    return f;
}

static dp_node *build_string(dc *d, dc_stack *st, int count, int at) {
    if (count < 0 || count > st->n)
        return dc_fail(d, at, "bad BUILD_STRING count"), NULL;
    dp_node *j = dc_node(d, E_JOINEDSTR);
    if (j == NULL)
        return NULL;
    int base = st->n - count;
    for (int k = 0; k < count; k++) {
        dp_node *p = hoist_field(d, st->v[base + k]);
        if (p == NULL)
            return NULL;
        if (p->kind == E_JOINEDSTR) {
            for (int q = 0; q < p->l1.n; q++)
                if (dc_add(d, &j->l1, p->l1.v[q]) < 0)
                    return NULL;
            continue;
        }
        if (p->kind != E_FORMATTED && !dc_is_const_kind(p, DP_CONST_STR)) {
            /* a piece kept elsewhere (a temporary before a return the
             * compiler copied into both arms of a conditional): a str,
             * which `{p}` gives back unchanged */
            dp_node *f = dc_node(d, E_FORMATTED);
            if (f == NULL)
                return NULL;
            f->a = p;
            p = f;
        }
        if (dc_add(d, &j->l1, p) < 0)
            return NULL;
    }
    st->n = base;
    return j;
}

/* An import level: a small non-negative int literal. */
static int small_int(const char *text) {
    int v = 0;
    for (const char *p = text; *p >= '0' && *p <= '9' && v < 1000000; p++)
        v = v * 10 + (*p - '0');
    return v;
}

/* The display at stack depth `depth` (1 = top) for LIST_EXTEND and friends,
 * to be added to: 1 with *x set (dc_own_slot), 0 if the value there is not
 * of kind1 or kind2, -1 on an error. */
static int display_at_depth(dc *d, dc_stack *st, int depth, int at, int kind1, int kind2, dp_node **x) {
    if ((*x = dc_top(d, st, depth - 1, at)) == NULL)
        return -1;
    if ((*x)->kind != kind1 && (*x)->kind != kind2)
        return 0;
    return (*x = dc_own_slot(d, st, st->n - depth)) == NULL ? -1 : 1;
}

void dc_seen(dc *d, int from, int to) {
    for (int k = from < 0 ? 0 : from; k < to && k < d->n; k++)
        dc_mark(d, k);
}

/* 3.13 converts a value to bool (TO_BOOL, or COMPARE_OP's bool bit: lift
 * marks both with arg2 = 1) before every test.  Where a test or `not`
 * follows, that changes nothing; where the bool itself is used, it is
 * `not not x` in source (which the compiler folds back into TO_BOOL). */
static int keeps_bool_conversion(const dc *d, int i) {
    int j = i + 1;
    while (j < d->n && d->in[j].op == IR_NOP && d->in[j].arg2 != DP_NOP_TO_BOOL)
        j++;
    if (j >= d->n)
        return 1;
    switch (d->in[j].op) {
    case IR_POP_JUMP_IF_FALSE: case IR_POP_JUMP_IF_TRUE:
        return 0;
    /* (JUMP_IF_*_OR_POP, rebuilt from COPY by normalize_boolops, lets the
     * converted value flow on: `not not a or b`) */
    case IR_UNARY:
        return d->in[j].arg != DP_UN_NOT;
    default:
        return 1;
    }
}

static dp_node *not_not(dc *d, dp_node *e) {
    dp_node *inner = dc_node(d, E_UNARY), *outer = dc_node(d, E_UNARY);
    if (e == NULL || inner == NULL || outer == NULL)
        return NULL;
    inner->op = outer->op = DP_UN_NOT;
    inner->a = e;
    outer->a = inner;
    return outer;
}

/* dc_expr_step's groups of instructions, each SW_NOT_MINE for the others. */
enum { SW_NOT_MINE = 0x10000 };

/* Loads and attributes (dc_expr_step): SW_NOT_MINE if not one of them. */
static int load_step(dc *d, int i, dc_stack *st) {
    const dp_instr *ins = &d->in[i];
    dp_node *a, *c, *n;
    switch (ins->op) {
    case IR_NOP:
        if (ins->arg2 == DP_NOP_TO_BOOL && keeps_bool_conversion(d, i)) {
            if ((a = dc_pop(d, st, i)) == NULL)
                return -1;
            return dc_push(d, st, not_not(d, a)) < 0 ? -1 : 1;
        }
        return 1;
    case IR_LOAD_CONST:
        return dc_push(d, st, dc_const(d, ins->cst)) < 0 ? -1 : 1;
    case IR_LOAD_CLOSURE:
        return dc_push(d, st, dc_cell(d, ins->name)) < 0 ? -1 : 1;
    case IR_LOAD_NAME: case IR_LOAD_GLOBAL: case IR_LOAD_FAST: case IR_LOAD_DEREF:
    case IR_LOAD_CLASSDEREF:
        if (ins->op == IR_LOAD_FAST && dc_fast_load_is_cell(d, ins->name))
            return dc_push(d, st, dc_cell(d, ins->name)) < 0 ? -1 : 1; /* 3.13 spells LOAD_CLOSURE so */
        if (ins->op == IR_LOAD_GLOBAL && !d->is_module) {
            /* needs `global x` when an enclosing function binds x */
            for (dc *o = d->outer; o; o = o->outer) {
                int bound = 0;
                for (size_t k = 0; k < o->code->varnames.n && !bound; k++)
                    bound = strcmp(o->code->varnames.v[k], ins->name) == 0;
                for (size_t k = 0; k < o->code->cellvars.n && !bound; k++)
                    bound = strcmp(o->code->cellvars.v[k], ins->name) == 0;
                if (bound && !o->is_class_body && !o->is_module) {
                    if (dc_declare(d, &d->globals, ins->name) < 0)
                        return -1;
                    break;
                }
            }
        }
        return dc_push(d, st, dc_name(d, ins->name)) < 0 ? -1 : 1;
    case IR_LOAD_FAST_AND_CLEAR:
        return dc_push(d, st, dc_node(d, X_OPAQUE)) < 0 ? -1 : 1;
    case IR_PUSH_NULL:
        return dc_push(d, st, dc_node(d, X_NULL)) < 0 ? -1 : 1;
    case IR_LOAD_BUILD_CLASS:
        return dc_push(d, st, dc_node(d, X_BUILD_CLASS)) < 0 ? -1 : 1;
    case IR_LOAD_ASSERTION_ERROR:
        return dc_push(d, st, dc_name(d, "AssertionError")) < 0 ? -1 : 1;
    case IR_LOAD_ATTR: case IR_LOAD_METHOD:
        if ((a = dc_pop(d, st, i)) == NULL || (n = dc_node(d, E_ATTR)) == NULL)
            return -1;
        n->a = a;
        n->s = ins->name;
        if (ins->op == IR_LOAD_METHOD) {
            /* [meth, NULL] on 3.13, [NULL, meth] before */
            if (d->lay.method_load_null_last)
                return (dc_push(d, st, n) < 0 || dc_push(d, st, dc_node(d, X_NULL)) < 0) ? -1 : 1;
            return (dc_push(d, st, dc_node(d, X_NULL)) < 0 || dc_push(d, st, n) < 0) ? -1 : 1;
        }
        return dc_push(d, st, n) < 0 ? -1 : 1;
    case IR_LOAD_SUPER_ATTR: {
        dp_node *self = dc_pop(d, st, i), *cls = self ? dc_pop(d, st, i) : NULL;
        dp_node *sup = cls ? dc_pop(d, st, i) : NULL;
        if (sup == NULL || (c = dc_node(d, E_CALL)) == NULL || (n = dc_node(d, E_ATTR)) == NULL)
            return -1;
        c->a = sup;
        if (ins->arg & 2 && (dc_add(d, &c->l1, cls) < 0 || dc_add(d, &c->l1, self) < 0))
            return -1;
        n->a = c;
        n->s = ins->name;
        if (dc_push(d, st, n) < 0)
            return -1;
        if (ins->arg & 1)
            return dc_push(d, st, dc_node(d, X_NULL)) < 0 ? -1 : 1;
        return 1;
    }
    default:
        return SW_NOT_MINE;
    }
}

/* Operators, subscripts, calls and functions (dc_expr_step): SW_NOT_MINE if not one of them. */
static int operator_step(dc *d, int i, dc_stack *st) {
    const dp_instr *ins = &d->in[i];
    dp_node *a, *b, *c, *n;
    switch (ins->op) {
    case IR_BINARY_OP:
        b = dc_pop(d, st, i);
        a = b ? dc_pop(d, st, i) : NULL;
        if ((n = binop(d, E_BINOP, ins->arg, a, b)) == NULL)
            return -1;
        n->op2 = ins->arg2; /* in-place: becomes an augmented assignment */
        return dc_push(d, st, n) < 0 ? -1 : 1;
    case IR_UNARY:
        if ((a = dc_pop(d, st, i)) == NULL)
            return -1;
        /* a value: `not not a` is a bool, so no simplification here */
        if ((n = dc_node(d, E_UNARY)) == NULL)
            return -1;
        n->op = ins->arg;
        n->a = a;
        return dc_push(d, st, n) < 0 ? -1 : 1;
    case IR_COMPARE: case IR_IS: case IR_CONTAINS: {
        int op = ins->arg;
        if (ins->op == IR_IS)
            op = ins->arg ? DP_CMP_IS_NOT : DP_CMP_IS;
        else if (ins->op == IR_CONTAINS)
            op = ins->arg ? DP_CMP_NOT_IN : DP_CMP_IN;
        b = dc_pop(d, st, i);
        a = b ? dc_pop(d, st, i) : NULL;
        /* `x in {1, 2}` is stored as a frozenset constant */
        if (b && ins->op == IR_CONTAINS && dc_is_const_kind(b, DP_CONST_FROZENSET) && b->cst->n) {
            dp_node *s = dc_node(d, E_SET);
            if (s == NULL || add_const_items(d, &s->l1, b->cst) < 0)
                return -1;
            b = s;
        }
        n = compare(d, op, a, b);
        if (n && ins->arg2 == DP_NOP_TO_BOOL && keeps_bool_conversion(d, i))
            n = not_not(d, n);
        return dc_push(d, st, n) < 0 ? -1 : 1;
    }
    case IR_BINARY_SUBSCR:
        b = dc_pop(d, st, i);
        a = b ? dc_pop(d, st, i) : NULL;
        return dc_push(d, st, binop(d, E_SUBSCR, 0, a, b)) < 0 ? -1 : 1;
    case IR_BINARY_SLICE:
        c = dc_pop(d, st, i);
        b = c ? dc_pop(d, st, i) : NULL;
        a = b ? dc_pop(d, st, i) : NULL;
        if (a == NULL || (n = dc_node(d, E_SLICE)) == NULL)
            return -1;
        n->a = dc_is_const_kind(b, DP_CONST_NONE) ? NULL : b;
        n->b = dc_is_const_kind(c, DP_CONST_NONE) ? NULL : c;
        return dc_push(d, st, binop(d, E_SUBSCR, 0, a, n)) < 0 ? -1 : 1;
    case IR_BUILD_SLICE: {
        dp_node *step = NULL;
        if (ins->arg == 3 && (step = dc_pop(d, st, i)) == NULL)
            return -1;
        b = dc_pop(d, st, i);
        a = b ? dc_pop(d, st, i) : NULL;
        if (a == NULL || (n = dc_node(d, E_SLICE)) == NULL)
            return -1;
        n->a = dc_is_const_kind(a, DP_CONST_NONE) ? NULL : a;
        n->b = dc_is_const_kind(b, DP_CONST_NONE) ? NULL : b;
        n->c = (step && !dc_is_const_kind(step, DP_CONST_NONE)) ? step : NULL;
        n->op = ins->arg == 3; /* keep `a[::None]`-style explicit step count */
        return dc_push(d, st, n) < 0 ? -1 : 1;
    }
    case IR_CALL:
        return dc_push(d, st, make_call(d, st, ins, i)) < 0 ? -1 : 1;
    case IR_CALL_EX: {
        dp_node *kw = NULL;
        if (ins->arg & 1 && (kw = dc_pop(d, st, i)) == NULL)
            return -1;
        dp_node *args = dc_pop(d, st, i), *first = NULL;
        dp_node *fn = args ? callable_of(d, st, ins->arg2 & DP_CALL_PAIR, i, &first) : NULL;
        if (fn == NULL || (n = dc_node(d, E_CALL)) == NULL)
            return -1;
        n->a = fn;
        if (add_ex_args(d, n, args) < 0 || (kw && add_ex_kwargs(d, n, kw) < 0))
            return -1;
        return dc_push(d, st, n) < 0 ? -1 : 1;
    }
    case IR_MAKE_FUNCTION:
        return dc_push(d, st, make_function(d, st, ins->arg, i)) < 0 ? -1 : 1;
    case IR_SET_FUNCTION_ATTRIBUTE:
        if ((a = dc_pop(d, st, i)) == NULL || (b = dc_pop(d, st, i)) == NULL)
            return -1;
        if (a->kind != X_FUNC)
            return dc_fail(d, i, "SET_FUNCTION_ATTRIBUTE on a non-function");
        if (ins->arg == DP_FN_DEFAULTS) a->a = b;
        else if (ins->arg == DP_FN_KWDEFAULTS) a->b = b;
        else if (ins->arg == DP_FN_ANNOTATIONS) a->c = b;
        else if (ins->arg == DP_FN_CLOSURE && !dc_closure_is_cells(d, a->cst->code, b))
            a = dc_function_by_value(d, a, b, i);
        else if (ins->arg == DP_FN_CLOSURE && dc_add(d, &a->l1, b) < 0)
            return -1;
        return dc_push(d, st, a) < 0 ? -1 : 1;
    default:
        return SW_NOT_MINE;
    }
}

/* Building values (dc_expr_step): SW_NOT_MINE if not one of them. */
static int build_step(dc *d, int i, dc_stack *st) {
    const dp_instr *ins = &d->in[i];
    dp_node *a, *b, *n;
    int r;
    switch (ins->op) {
    case IR_BUILD_TUPLE:
        /* a tuple of closure cells feeds MAKE_FUNCTION; any tuple works */
        return dc_push(d, st, seq_node(d, E_TUPLE, st, ins->arg, i)) < 0 ? -1 : 1;
    case IR_BUILD_LIST:
        return dc_push(d, st, seq_node(d, E_LIST, st, ins->arg, i)) < 0 ? -1 : 1;
    case IR_BUILD_SET:
        return dc_push(d, st, seq_node(d, E_SET, st, ins->arg, i)) < 0 ? -1 : 1;
    case IR_BUILD_MAP: {
        int cnt = ins->arg;
        if (cnt < 0 || 2 * cnt > st->n || (n = dc_node(d, E_DICT)) == NULL)
            return cnt < 0 || 2 * cnt > st->n ? dc_fail(d, i, "bad BUILD_MAP count") : -1;
        int base = st->n - 2 * cnt;
        for (int k = 0; k < cnt; k++)
            if (dc_add(d, &n->l1, st->v[base + 2 * k]) < 0 || dc_add(d, &n->l2, st->v[base + 2 * k + 1]) < 0)
                return -1;
        st->n = base;
        return dc_push(d, st, n) < 0 ? -1 : 1;
    }
    case IR_BUILD_CONST_KEY_MAP: {
        dp_node *keys = dc_pop(d, st, i);
        if (keys == NULL)
            return -1;
        if (!dc_is_const_kind(keys, DP_CONST_TUPLE) || (int)keys->cst->n != ins->arg || ins->arg > st->n)
            return dc_fail(d, i, "BUILD_CONST_KEY_MAP without a matching key tuple");
        if ((n = dc_node(d, E_DICT)) == NULL)
            return -1;
        int base = st->n - ins->arg;
        for (int k = 0; k < ins->arg; k++)
            if (dc_add(d, &n->l1, dc_const(d, keys->cst->items[k])) < 0 || dc_add(d, &n->l2, st->v[base + k]) < 0)
                return -1;
        st->n = base;
        return dc_push(d, st, n) < 0 ? -1 : 1;
    }
    case IR_BUILD_STRING:
        return dc_push(d, st, build_string(d, st, ins->arg, i)) < 0 ? -1 : 1;
    case IR_FORMAT_VALUE:
        return dc_push(d, st, format_value(d, st, ins->arg, i)) < 0 ? -1 : 1;
    case IR_CONVERT_VALUE:
        if ((a = dc_pop(d, st, i)) == NULL || (n = dc_node(d, X_CONVERTED)) == NULL)
            return -1;
        n->a = a;
        n->op = ins->arg & DP_FMT_CONV_MASK;
        return dc_push(d, st, n) < 0 ? -1 : 1;
    case IR_LIST_EXTEND: case IR_SET_UPDATE:
        /* a display being built; anything else (a list kept in a temporary)
         * is mutated by a statement, see stmt.c */
        if (ins->arg < 1)
            return dc_fail(d, i, "%s with depth %d", dp_irop_name(ins->op), ins->arg);
        if ((r = display_at_depth(d, st, ins->arg + 1, i, E_LIST, E_SET, &a)) <= 0)
            return r;
        if ((b = dc_pop(d, st, i)) == NULL)
            return -1;
        return extend_display(d, a, b) < 0 ? -1 : 1;
    case IR_DICT_UPDATE: case IR_DICT_MERGE:
        if (ins->arg < 1)
            return dc_fail(d, i, "%s with depth %d", dp_irop_name(ins->op), ins->arg);
        if ((r = display_at_depth(d, st, ins->arg + 1, i, E_DICT, E_DICT, &a)) <= 0)
            return r;
        if ((b = dc_pop(d, st, i)) == NULL)
            return -1;
        return update_dict(d, a, b, ins->op == IR_DICT_MERGE, 0) < 0 ? -1 : 1;
    case IR_LIST_TO_TUPLE:
        if ((a = dc_pop(d, st, i)) == NULL)
            return -1;
        if (a->kind == E_LIST) {
            dp_node *t = dc_node(d, E_TUPLE);
            if (t == NULL)
                return -1;
            t->l1 = a->l1;
            a = t;
        }
        return dc_push(d, st, a) < 0 ? -1 : 1;
    case IR_BUILD_UNPACK: {
        int kind = ins->arg2;
        int nk = (kind == 'L') ? E_LIST : (kind == 'S') ? E_SET : (kind == 'M' || kind == 'K') ? E_DICT : E_TUPLE;
        if (ins->arg < 0 || ins->arg > st->n || (n = dc_node(d, nk)) == NULL)
            return ins->arg < 0 || ins->arg > st->n ? dc_fail(d, i, "bad BUILD_*_UNPACK count") : -1;
        int base = st->n - ins->arg;
        for (int k = 0; k < ins->arg; k++) {
            dp_node *it = st->v[base + k];
            r = (nk == E_DICT) ? update_dict(d, n, it, kind == 'K', k == 0) : extend_display(d, n, it);
            if (r < 0)
                return -1;
        }
        st->n = base;
        return dc_push(d, st, n) < 0 ? -1 : 1;
    }
    default:
        return SW_NOT_MINE;
    }
}

/* Iterators, generators, stack shuffles and the rest (dc_expr_step): SW_NOT_MINE if not one of them. */
static int iter_step(dc *d, int i, dc_stack *st) {
    const dp_instr *ins = &d->in[i];
    dp_node *a, *b, *n;
    switch (ins->op) {
    case IR_GET_ITER: case IR_GET_YIELD_FROM_ITER: case IR_GET_AITER:
        if ((a = dc_pop(d, st, i)) == NULL || (n = dc_node(d, X_ITER)) == NULL)
            return -1;
        n->a = a;
        n->op = ins->op == IR_GET_YIELD_FROM_ITER;
        n->op2 = ins->op == IR_GET_AITER;
        return dc_push(d, st, n) < 0 ? -1 : 1;
    case IR_GET_AWAITABLE:
        if ((a = dc_pop(d, st, i)) == NULL)
            return -1;
        /* awaiting an async with's __aexit__, or an async comprehension's
         * coroutine: neither is an `await` in the source */
        if (a->kind == X_OPAQUE || ((a->kind == E_LISTCOMP || a->kind == E_SETCOMP || a->kind == E_DICTCOMP) && a->op2))
            return dc_push(d, st, a) < 0 ? -1 : 1;
        if ((n = dc_node(d, E_AWAIT)) == NULL)
            return -1;
        n->a = a;
        return dc_push(d, st, n) < 0 ? -1 : 1;
    case IR_YIELD_FROM:
        if ((a = dc_pop(d, st, i)) == NULL)
            return -1;
        if (a->kind == E_AWAIT || a->kind == X_OPAQUE ||
            ((a->kind == E_LISTCOMP || a->kind == E_SETCOMP || a->kind == E_DICTCOMP) && a->op2))
            return dc_push(d, st, a) < 0 ? -1 : 1;
        if ((n = dc_node(d, E_YIELD_FROM)) == NULL)
            return -1;
        n->a = a->kind == X_ITER ? a->a : a;
        return dc_push(d, st, n) < 0 ? -1 : 1;
    case IR_YIELD_VALUE:
        if ((a = dc_pop(d, st, i)) == NULL || (n = dc_node(d, E_YIELD)) == NULL)
            return -1;
        n->a = dc_is_const_kind(a, DP_CONST_NONE) ? NULL : a;
        return dc_push(d, st, n) < 0 ? -1 : 1;
    case IR_ASYNC_GEN_WRAP:
        return 1; /* value unchanged as far as the source is concerned */
    case IR_COPY:
        if ((a = dc_top(d, st, ins->arg - 1, i)) == NULL)
            return -1;
        return dc_push(d, st, a) < 0 ? -1 : 1;
    case IR_SWAP: {
        int k = ins->arg;
        if (k < 2 || k > st->n)
            return dc_fail(d, i, "bad SWAP %d", k);
        dp_node *t = st->v[st->n - 1];
        st->v[st->n - 1] = st->v[st->n - k];
        st->v[st->n - k] = t;
        return 1;
    }
    case IR_IMPORT_NAME:
        b = dc_pop(d, st, i);
        a = b ? dc_pop(d, st, i) : NULL;
        if (a == NULL || (n = dc_node(d, X_IMPORT)) == NULL)
            return -1;
        n->s = ins->name;
        n->op = (dc_is_const_kind(a, DP_CONST_INT) && a->cst->text) ? small_int(a->cst->text) : 0;
        n->cst = b->kind == E_CONST ? b->cst : NULL;
        return dc_push(d, st, n) < 0 ? -1 : 1;
    case IR_CALL_INTRINSIC_1:
        if (ins->arg == 11) { /* INTRINSIC_TYPEALIAS: `type X = v` (no type parameters) */
            if ((a = dc_pop(d, st, i)) == NULL)
                return -1;
            return dc_push(d, st, dc_typealias(d, a, NULL, i)) < 0 ? -1 : 1;
        }
        return dc_fail(d, i, "unsupported instruction %s", dp_irop_name(ins->op));
    case IR_CALL_INTRINSIC_2:
    case IR_LOAD_LOCALS:
        return dc_fail(d, i, "unsupported instruction %s", dp_irop_name(ins->op));
    default:
        return SW_NOT_MINE;
    }
}

int dc_expr_step(dc *d, int i, dc_stack *st) {
    dc_mark(d, i);
    int r = load_step(d, i, st);
    if (r == SW_NOT_MINE)
        r = operator_step(d, i, st);
    if (r == SW_NOT_MINE)
        r = build_step(d, i, st);
    if (r == SW_NOT_MINE)
        r = iter_step(d, i, st);
    return r == SW_NOT_MINE ? 0 : r;
}
