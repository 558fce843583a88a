/* The state machine's translation of one block (fallback.c): each
 * instruction as statements over the block's symbolic stack. */
#include <stdio.h>
#include <string.h>

#include "fallback.h"

/* ------------------------------------------------------------------ instructions */

static int is_store(int op) {
    return op == IR_STORE_NAME || op == IR_STORE_FAST || op == IR_STORE_GLOBAL || op == IR_STORE_DEREF;
}

/* Values consumed by an instruction that expr.c turns into an expression
 * (irop.c's count), 0 for the others. */
int fb_npop(const dp_instr *in) {
    switch (in->op) {
    case IR_NOP: case IR_LOAD_ATTR: case IR_LOAD_METHOD: case IR_UNARY: case IR_CONVERT_VALUE: case IR_LIST_TO_TUPLE:
    case IR_CALL_INTRINSIC_1: case IR_GET_ITER: case IR_GET_YIELD_FROM_ITER: case IR_GET_AWAITABLE: case IR_YIELD_FROM:
    case IR_YIELD_VALUE: case IR_BINARY_OP: case IR_COMPARE: case IR_IS: case IR_CONTAINS: case IR_BINARY_SUBSCR:
    case IR_SET_FUNCTION_ATTRIBUTE: case IR_LOAD_SUPER_ATTR: case IR_BINARY_SLICE: case IR_BUILD_SLICE:
    case IR_BUILD_TUPLE: case IR_BUILD_LIST: case IR_BUILD_SET: case IR_BUILD_STRING: case IR_BUILD_UNPACK:
    case IR_BUILD_MAP: case IR_BUILD_CONST_KEY_MAP: case IR_CALL: case IR_CALL_EX: case IR_FORMAT_VALUE: {
        static const dp_layout any = {0}; /* (these ops' effects are the same in every layout) */
        dp_effect e;
        return dp_ir_effect(in, &any, 0, &e) < 0 ? 0 : e.in;
    }
    default:
        return 0;
    }
}

/* The next instructions of the block store the function value on fb_top (made
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

/* Decides what the function value on top becomes, once it is complete
 * (3.13 sets defaults after MAKE_FUNCTION): a lambda, a comprehension (its
 * call follows), a def statement now, or a def at the store that follows. */
int fb_settle_function(fb *F, int next) {
    dp_node *fn = fb_top(F, 0);
    if (fn == NULL || fn->kind != X_FUNC)
        return 0;
    const dp_code *code = fn->cst->code;
    if (fb_is_comprehension_code(code)) {
        int r = fb_comprehension_has_form(F, fn);
        if (r != 0)
            return r < 0 ? -1 : 0; /* called right away */
        dp_node *def;
        if (fb_flush(F, F->st.n - 1) < 0 || (def = fb_def_renamed(F, fn)) == NULL)
            return -1;
        F->st.v[F->st.n - 1] = def;
        F->dep[F->st.n - 1] = 0;
        return 0;
    }
    if (dc_is_generic_scope(fn))
        return 0; /* called right away */
    if (next + 1 < F->cur->end && F->d->in[next].op == IR_BUILD_TUPLE && F->d->in[next + 1].op == IR_CALL_INTRINSIC_1 &&
        F->d->in[next + 1].arg == 11)
        return 0; /* the value of `type X = ...` (INTRINSIC_TYPEALIAS) */
    const dp_node *below = F->st.n >= 2 ? F->st.v[F->st.n - 2] : NULL;
    if (below && below->kind == X_NULL && F->st.n >= 3) /* 3.13: [__build_class__, NULL, body] */
        below = F->st.v[F->st.n - 3];
    if (below && below->kind == X_BUILD_CLASS)
        return 0; /* a class body, for the __build_class__ call */
    if (strcmp(code->name, "<lambda>") == 0) {
        if ((fn->a && (fn->a = fb_lower(F, fn->a, 0)) == NULL) || (fn->b && (fn->b = fb_lower(F, fn->b, 0)) == NULL) ||
            (fn->c && (fn->c = fb_lower(F, fn->c, 0)) == NULL))
            return -1;
        dc_spec sp;
        dc_spec_begin(F->d, &sp);
        dp_node *lam = dc_lambda(F->d, fn, F->at);
        if (!dc_spec_end(F->d, &sp, lam ? 0 : -1)) {
            if (F->d->sh->ar->failed || fb_flush(F, F->st.n - 1) < 0 || (lam = fb_def_renamed(F, fn)) == NULL)
                return -1;
            F->dep[F->st.n - 1] = 0;
        }
        F->st.v[F->st.n - 1] = lam;
        return 0;
    }
    if (stored_as(F, next, code->name))
        return 0;
    if (fb_flush(F, F->st.n - 1) < 0)
        return -1;
    dp_node *t = fb_spill(F, fn);
    if (t == NULL)
        return -1;
    F->st.v[F->st.n - 1] = t;
    F->dep[F->st.n - 1] = 0;
    return 0;
}

/* A class made by __build_class__: kept for the store under its name. */
int fb_settle_class(fb *F, int next) {
    dp_node *v = fb_top(F, 0);
    if (v == NULL || !fb_is_class_call(v) || stored_as(F, next, v->l1.v[1]->cst->text))
        return v == NULL ? -1 : 0;
    if (fb_flush(F, F->st.n) < 0)
        return -1;
    F->dep[F->st.n - 1] = 0;
    return 0;
}

/* The closure the compiler builds: LOAD_CLOSURE of each free variable, in
 * order (see dc_closure_is_cells). */
static int closure_is_cells(const dp_code *code, const dp_node *closure) {
    if (closure->kind != E_TUPLE || closure->l1.n < 0 || (size_t)closure->l1.n != code->freevars.n)
        return 0;
    for (int k = 0; k < closure->l1.n; k++) {
        const dp_node *e = closure->l1.v[k];
        if (fb_var_of(e) != FB_CELL || strcmp(e->s, code->freevars.v[k]) != 0)
            return 0;
    }
    return 1;
}

int fb_make_function(fb *F, const dp_instr *ins) {
    dp_node *code = fb_pop(F);
    if (code == NULL)
        return -1;
    if (!dc_is_const_kind(code, DP_CONST_CODE) || code->cst->code == NULL)
        return fb_fail(F, F->at, "MAKE_FUNCTION without a code constant");
    dp_node *fn = fb_node(F, X_FUNC);
    if (fn == NULL)
        return -1;
    fn->cst = code->cst;
    fn->op = F->at;
    int depth = 0;
    dp_node *closure = NULL;
    dp_node **parts[4] = {&closure, &fn->c, &fn->b, &fn->a};
    static const int flags[4] = {DP_FN_CLOSURE, DP_FN_ANNOTATIONS, DP_FN_KWDEFAULTS, DP_FN_DEFAULTS};
    for (int k = 0; k < 4; k++) {
        if (!(ins->arg & flags[k]))
            continue;
        if (F->st.n > 0 && F->dep[F->st.n - 1] > depth)
            depth = F->dep[F->st.n - 1];
        dp_node *v = fb_pop(F);
        if (v == NULL)
            return -1;
        *parts[k] = v;
    }
    if (closure && !closure_is_cells(fn->cst->code, closure) &&
        (fn = dc_function_by_value(F->d, fn, closure, F->at)) == NULL)
        return -1;
    if (closure && fn->kind == X_FUNC && dc_add(F->d, &fn->l1, closure) < 0)
        return -1;
    return fb_push(F, fn, depth + 1);
}

/* Slots [0, hdepth) must hold what the handler expects at any moment. */
int fb_keep_handler_slots(fb *F) {
    if (F->hdepth == 0)
        return 0;
    if (F->st.n < F->hdepth)
        return fb_fail(F, F->at, "stack shallower than its exception handler expects");
    for (int k = 0; k < F->hdepth; k++) {
        dp_node *v = F->st.v[k];
        int want = F->cur->slots[k];
        if (fb_no_var_kind(want) ? fb_slot_kind(v) != want : !fb_is_canon(v, k)) {
            if (fb_no_var_kind(want) || fb_no_var(v))
                return fb_fail(F, F->at, "a NULL moves under an exception handler's stack");
            return fb_transfer(F, F->hdepth, F->out);
        }
    }
    return 0;
}

/* Runs an instruction that builds an expression (expr.c). 1 if handled. */
int fb_expr_step(fb *F, int i) {
    const dp_instr *ins = &F->d->in[i];
    int n = fb_npop(ins);
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
    if (fb_ensure_dep(F) < 0)
        return -1;
    for (int k = base; k < F->st.n; k++)
        F->dep[k] = depth + 1;
    if (F->st.n > 0 && F->dep[F->st.n - 1] > MAX_EXPR_DEPTH && fb_flush(F, F->st.n) < 0)
        return -1;
    return 1;
}

/* An f-string part that became a plain value (a spilled temporary) is
 * printed as {value}: format(s, '') of a str s is s. */
int fb_fstring_parts(fb *F, int count) {
    if (count < 0 || count > F->st.n)
        return fb_fail(F, F->at, "bad f-string part count");
    for (int p = F->st.n - count; p < F->st.n; p++) {
        dp_node *v = F->st.v[p];
        if (v->kind == E_JOINEDSTR || dc_is_const_kind(v, DP_CONST_STR))
            continue;
        dp_node *j = fb_node(F, E_JOINEDSTR), *f = fb_node(F, E_FORMATTED);
        if (j == NULL || f == NULL || dc_add(F->d, &j->l1, f) < 0)
            return -1;
        f->a = v;
        F->st.v[p] = j;
    }
    return 0;
}

/* `not x` (expr.c folds `not not x` to x, which drops the bool()). */
int fb_unary_not(fb *F) {
    int depth = F->st.n ? F->dep[F->st.n - 1] : 0;
    dp_node *a = fb_pop(F), *n = a ? fb_node(F, E_UNARY) : NULL;
    if (n == NULL)
        return -1;
    n->op = DP_UN_NOT;
    n->a = a;
    return fb_push(F, n, depth + 1);
}

/* COPY / SWAP: values that change places or are read twice are evaluated
 * first. */
int fb_shuffle(fb *F, int i) {
    const dp_instr *ins = &F->d->in[i];
    int k = ins->arg;
    if (k < 1 || k > F->st.n || (ins->op == IR_SWAP && k < 2))
        return dc_fail(F->d, i, "bad %s %d", dp_irop_name(ins->op), k);
    int lo = F->st.n - k, need = 0;
    /* (the SWAPs around a call of a type parameter scope keep the order in
     * which its arguments were computed) */
    for (int p = lo; p < F->st.n && !need && !(ins->op == IR_SWAP && dc_generic_call_swap(F->d, i)); p++)
        need = !fb_is_atom(F->st.v[p]);
    if (need && fb_flush(F, ins->op == IR_COPY ? lo + 1 : F->st.n) < 0)
        return -1;
    if (ins->op == IR_COPY)
        return fb_push(F, F->st.v[lo], F->dep[lo]);
    dp_node *t = F->st.v[F->st.n - 1];
    int td = F->dep[F->st.n - 1];
    F->st.v[F->st.n - 1] = F->st.v[lo];
    F->dep[F->st.n - 1] = F->dep[lo];
    F->st.v[lo] = t;
    F->dep[lo] = td;
    return 0;
}

static dp_node *tuple_of(fb *F, dp_node *a, dp_node *b) {
    dp_node *t = fb_node(F, E_TUPLE);
    if (t == NULL || dc_add(F->d, &t->l1, a) < 0 || (b && dc_add(F->d, &t->l1, b) < 0))
        return NULL;
    return t;
}

static dp_node *except_clause(fb *F, const char *type, const char *as, dp_node *body) {
    dp_node *h = fb_stmt(F, S_EXCEPT);
    if (h == NULL || (h->a = fb_builtin(F, type)) == NULL || dc_add(F->d, &h->l1, body) < 0)
        return NULL;
    h->s = as;
    return h;
}

/* 3.12+ LOAD_FAST_AND_CLEAR x (inlined comprehensions save x):
 *     try: t = (x,)  except NameError: t = ()
 * and the STORE_FAST that restores x from it. */
int fb_save_local(fb *F, const dp_instr *ins) {
    if (fb_flush(F, F->st.n) < 0)
        return -1;
    dp_node *t = fb_temp(F), *tr = fb_stmt(F, S_TRY);
    if (t == NULL || tr == NULL)
        return -1;
    t->fb.saved = FB_SAVED_VALUE;
    if (dc_is_cell_var(F->d->code, ins->name)) {
        /* the comprehension's closures capture a fresh cell, which source
         * outside a comprehension cannot make: the variable keeps its last
         * value instead of being restored */
        t->fb.saved = FB_SAVED_CELL;
        return fb_emit_assign(F, t, dc_none(F->d)) < 0 ? -1 : fb_push(F, t, 0);
    }
    dp_node *one = tuple_of(F, dc_name(F->d, fb_var_name(F, ins)), NULL);
    dp_node *none = fb_empty_tuple(F);
    if (one == NULL || none == NULL || fb_emit_to(F, &tr->l1, fb_assign_stmt(F, t, one)) < 0 ||
        fb_emit_to(F, &tr->l2, except_clause(F, "NameError", NULL, fb_assign_stmt(F, t, none))) < 0 || fb_emit(F, tr) < 0)
        return -1;
    return fb_push(F, t, 0);
}

static int restore_local(fb *F, const dp_instr *ins, dp_node *saved) {
    dp_node *ifs = fb_stmt(F, S_IF), *tr = fb_stmt(F, S_TRY), *del = fb_stmt(F, S_DELETE);
    dp_node *sub = fb_node(F, E_SUBSCR);
    if (ifs == NULL || tr == NULL || del == NULL || sub == NULL)
        return -1;
    ifs->a = saved;
    sub->a = saved;
    if ((sub->b = fb_int_const(F, 0)) == NULL || fb_emit_to(F, &ifs->l1, fb_assign_stmt(F, fb_name_target(F, ins), sub)) < 0)
        return -1;
    if (dc_add(F->d, &del->l1, fb_name_target(F, ins)) < 0 || fb_emit_to(F, &tr->l1, del) < 0 ||
        fb_emit_to(F, &tr->l2, except_clause(F, "NameError", NULL, fb_stmt(F, S_PASS))) < 0 ||
        fb_emit_to(F, &ifs->l2, tr) < 0)
        return -1;
    return fb_emit(F, ifs);
}

/* STORE_NAME/FAST/GLOBAL/DEREF. */
int fb_store_name(fb *F, const dp_instr *ins) {
    dp_node *v = fb_pop(F);
    if (v == NULL || fb_flush(F, F->st.n) < 0)
        return -1;
    if (fb_saved_of(v) == FB_SAVED_CELL)
        return 0;
    if (fb_saved_of(v) == FB_SAVED_VALUE)
        return restore_local(F, ins, v);
    if (F->d->is_class_body && strcmp(ins->name, "__classcell__") == 0)
        return 0; /* the class statement makes its own __class__ cell */
    const char *name = fb_def_name(v);
    if (name && strcmp(name, ins->name) == 0) {
        if (fb_name_target(F, ins) == NULL)
            return -1;
        return fb_emit_def(F, v, name);
    }
    if (name && (v = fb_spill(F, v)) == NULL)
        return -1;
    return fb_emit_assign(F, fb_name_target(F, ins), v);
}

/* UNPACK_SEQUENCE / UNPACK_EX: `a, b = v` when simple name stores follow,
 * else into temporaries. *skip receives the stores consumed. */
int fb_unpack(fb *F, int i, int *skip) {
    const dp_instr *ins = &F->d->in[i];
    int before = ins->op == IR_UNPACK_EX ? (ins->arg & 0xff) : ins->arg;
    int after = ins->op == IR_UNPACK_EX ? (ins->arg >> 8) : 0;
    int star = ins->op == IR_UNPACK_EX;
    int count = before + after + star;
    if (count > 65536)
        return fb_fail(F, i, "unpack count too large");
    dp_node *v = fb_pop(F), *tg = fb_node(F, E_TUPLE);
    if (v == NULL || tg == NULL || fb_flush(F, F->st.n) < 0)
        return -1;
    int direct = i + count < F->cur->end;
    for (int k = 1; k <= count && direct; k++)
        direct = is_store(F->d->in[i + k].op);
    for (int k = 0; k < count; k++) {
        dp_node *t = direct ? fb_name_target(F, &F->d->in[i + 1 + k]) : fb_temp(F);
        if (t == NULL)
            return -1;
        if (star && k == before) {
            dp_node *s = fb_node(F, E_STARRED);
            if (s == NULL)
                return -1;
            s->a = t;
            if (dc_add(F->d, &tg->l1, s) < 0)
                return -1;
        } else if (dc_add(F->d, &tg->l1, t) < 0) {
            return -1;
        }
    }
    if (fb_emit_assign(F, tg, v) < 0)
        return -1;
    if (direct) {
        *skip = count;
        return 0;
    }
    for (int k = count - 1; k >= 0; k--) {
        dp_node *t = tg->l1.v[k];
        if (t->kind == E_STARRED)
            t = t->a;
        if (fb_push(F, t, 0) < 0)
            return -1;
    }
    return 0;
}

static int is_simple_module(const char *m) { return strchr(m, '.') == NULL; }

/* A non-negative int constant below 10^6, or -1. */
static long small_int(const dp_node *e) {
    if (!dc_is_const_kind(e, DP_CONST_INT) || e->cst->text == NULL)
        return -1;
    long v = 0;
    const char *p = e->cst->text;
    if (*p == '\0')
        return -1;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || v > 100000)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}

static dp_node *alias(fb *F, const char *name, const char *as) {
    dp_node *a = fb_node(F, E_ALIAS);
    if (a == NULL)
        return NULL;
    a->s = name;
    if (as && strcmp(as, name) != 0 && (a->b = dc_name(F->d, as)) == NULL)
        return NULL;
    return a;
}

/* `from m import a as b, ...`: IMPORT_FROM + store pairs for exactly the
 * names of the fromlist, then POP_TOP.  Returns the instructions used. */
static int from_import(fb *F, int i, const dp_const *names, long level) {
    const dc *d = F->d;
    int n = (int)names->n, end = F->cur->end;
    if (n == 1 && names->items[0]->kind == DP_CONST_STR && strcmp(names->items[0]->text, "*") == 0) {
        if (i + 1 >= end || d->in[i + 1].op != IR_IMPORT_STAR)
            return 0;
        n = 0;
    } else {
        if (i + 2 * n + 1 >= end || d->in[i + 2 * n + 1].op != IR_POP_TOP)
            return 0;
        for (int k = 0; k < n; k++) {
            const dp_instr *x = &d->in[i + 1 + 2 * k];
            if (names->items[k]->kind != DP_CONST_STR || x->op != IR_IMPORT_FROM ||
                strcmp(x->name, names->items[k]->text) != 0 || !is_store(d->in[i + 2 + 2 * k].op))
                return 0;
        }
    }
    dp_node *s = fb_stmt(F, S_IMPORTFROM);
    if (s == NULL)
        return -1;
    s->s = d->in[i].name[0] ? d->in[i].name : NULL;
    s->op = (int)level;
    if (level == 0 && s->s == NULL)
        return 0;
    if (n == 0) {
        if (dc_add(F->d, &s->l1, alias(F, "*", NULL)) < 0 || fb_emit(F, s) < 0)
            return -1;
        return 1;
    }
    for (int k = 0; k < n; k++) {
        const dp_instr *st = &d->in[i + 2 + 2 * k];
        if (fb_name_target(F, st) == NULL || dc_add(F->d, &s->l1, alias(F, names->items[k]->text, st->name)) < 0)
            return -1;
    }
    return fb_emit(F, s) < 0 ? -1 : 2 * n + 1;
}

/* IMPORT_NAME: an import statement when the instructions that follow make
 * one, else __import__(...).  *skip receives the instructions consumed. */
int fb_import_name(fb *F, int i, int *skip) {
    const dc *d = F->d;
    const dp_instr *ins = &d->in[i];
    dp_node *fromlist = fb_pop(F), *level = fromlist ? fb_pop(F) : NULL;
    if (level == NULL || fb_flush(F, F->st.n) < 0)
        return -1;
    long lv = small_int(level);
    const dp_instr *nx = i + 1 < F->cur->end ? &d->in[i + 1] : NULL;
    if (lv == 0 && dc_is_const_kind(fromlist, DP_CONST_NONE) && nx && is_store(nx->op)) {
        size_t first = strcspn(ins->name, ".");
        int plain = strlen(nx->name) == first && strncmp(nx->name, ins->name, first) == 0;
        if (plain || is_simple_module(ins->name)) {
            dp_node *s = fb_stmt(F, S_IMPORT);
            if (s == NULL || fb_name_target(F, nx) == NULL ||
                dc_add(F->d, &s->l1, alias(F, ins->name, plain ? NULL : nx->name)) < 0)
                return -1;
            *skip = 1;
            return fb_emit(F, s);
        }
    }
    if (lv >= 0 && dc_is_const_kind(fromlist, DP_CONST_TUPLE) && fromlist->cst->n > 0) {
        int used = from_import(F, i, fromlist->cst, lv);
        if (used != 0) {
            *skip = used;
            return used < 0 ? -1 : 0;
        }
    }
    dp_node *c = fb_call(F, "__import__", fb_str_const(F, ins->name), fb_call(F, "globals", NULL, NULL, NULL),
                      d->code->flags & DP_CO_OPTIMIZED ? dc_none(F->d) : fb_call(F, "locals", NULL, NULL, NULL));
    if (c == NULL || dc_add(F->d, &c->l1, fromlist) < 0 || dc_add(F->d, &c->l1, level) < 0)
        return -1;
    return fb_push(F, c, 1);
}

/* ------------------------------------------------------------------ pattern matching */

static dp_node *capture(fb *F, dp_node *name) {
    dp_node *p = name ? fb_node(F, P_AS) : NULL;
    if (p)
        p->s = name->s;
    return p;
}

static dp_node *match_case(fb *F, dp_node *pattern, dp_node *body) {
    dp_node *c = fb_node(F, S_CASE);
    if (c == NULL || pattern == NULL || dc_add(F->d, &c->l1, body) < 0)
        return NULL;
    c->a = pattern;
    return c;
}

/* match subject: case <pattern>: t = yes  case _: t = no; pushes t. */
static int match_test(fb *F, dp_node *subject, dp_node *pattern, dp_node *yes, dp_node *no) {
    dp_node *m = fb_stmt(F, S_MATCH), *t = fb_temp(F), *wild = fb_node(F, P_AS);
    if (m == NULL || t == NULL || wild == NULL || (m->a = fb_lower(F, subject, 0)) == NULL)
        return -1;
    if (dc_add(F->d, &m->l1, match_case(F, pattern, fb_assign_stmt(F, t, yes))) < 0 ||
        dc_add(F->d, &m->l1, match_case(F, wild, fb_assign_stmt(F, t, no))) < 0 || fb_emit(F, m) < 0)
        return -1;
    return fb_push(F, t, 0);
}

/* A mapping-pattern key: a literal or a dotted name. */
static int is_key_expr(const dp_node *e) {
    if (e->kind == E_CONST)
        return e->cst->kind != DP_CONST_TUPLE && e->cst->kind != DP_CONST_FROZENSET && e->cst->kind != DP_CONST_CODE &&
               e->cst->kind != DP_CONST_OTHER && e->cst->kind != DP_CONST_OBJECT;
    while (e->kind == E_ATTR)
        e = e->a;
    return e->kind == E_NAME && !fb_var_of(e) && e != NULL;
}

/* 3.10 COPY_DICT_WITHOUT_KEYS: [s, keys] -> [s, rest], as CPython does it:
 *     rest = {**s}
 *     for k in keys: del rest[k]                                          */
int fb_copy_dict_without_keys(fb *F) {
    dp_node *keys = fb_pop(F);
    if (keys == NULL || fb_top(F, 0) == NULL || fb_flush(F, F->st.n) < 0 || (keys = fb_spill(F, keys)) == NULL)
        return -1;
    dp_node *rest = fb_temp(F), *k = fb_temp(F), *copy = fb_node(F, E_DICT), *loop = fb_stmt(F, S_FOR);
    dp_node *del = fb_stmt(F, S_DELETE), *item = fb_node(F, E_SUBSCR);
    if (rest == NULL || k == NULL || copy == NULL || loop == NULL || del == NULL || item == NULL ||
        dp_nodes_push(F->d->sh->ar, &copy->l1, NULL) < 0 || dc_add(F->d, &copy->l2, fb_top(F, 0)) < 0 ||
        fb_emit_assign(F, rest, copy) < 0)
        return -1;
    item->a = rest;
    item->b = k;
    loop->a = k;
    loop->b = keys;
    if (dc_add(F->d, &del->l1, item) < 0 || fb_emit_to(F, &loop->l1, del) < 0 || fb_emit(F, loop) < 0)
        return -1;
    return fb_push(F, rest, 0);
}

int fb_match_op(fb *F, const dp_instr *ins) {
    if (ins->op == IR_MATCH_KEYS) {
        dp_node *keys = fb_top(F, 0);
        if (keys == NULL || fb_top(F, 1) == NULL)
            return -1;
        if (dc_is_const_kind(keys, DP_CONST_TUPLE) == 0 && keys->kind == E_TUPLE)
            for (int k = 0; k < keys->l1.n; k++)
                if (!is_key_expr(keys->l1.v[k]))
                    return fb_fail(F, F->at, "MATCH_KEYS with a key that is no literal or dotted name");
        dp_node *orig = keys;
        if (fb_flush(F, F->st.n) < 0)
            return -1;
        keys = orig;
        /* the pattern names the keys again: literals or dotted names */
        dp_node *pat = fb_node(F, P_MAPPING), *vals = fb_node(F, E_TUPLE);
        if (pat == NULL || vals == NULL)
            return -1;
        if (dc_is_const_kind(keys, DP_CONST_TUPLE)) {
            for (size_t k = 0; k < keys->cst->n; k++)
                if (dc_add(F->d, &pat->l1, dc_const(F->d, keys->cst->items[k])) < 0)
                    return -1;
        } else if (keys->kind == E_TUPLE) {
            pat->l1 = keys->l1;
        } else {
            return fb_fail(F, F->at, "MATCH_KEYS with keys that are not a tuple");
        }
        for (int k = 0; k < pat->l1.n; k++) {
            dp_node *v = fb_temp(F);
            if (!is_key_expr(pat->l1.v[k]))
                return fb_fail(F, F->at, "MATCH_KEYS with a key that is no literal or dotted name");
            if (v == NULL || dc_add(F->d, &pat->l2, capture(F, v)) < 0 || dc_add(F->d, &vals->l1, v) < 0)
                return -1;
        }
        return match_test(F, fb_top(F, 1), pat, vals, dc_none(F->d));
    }
    if (ins->op == IR_MATCH_CLASS) {
        dp_node *names = fb_pop(F), *cls = names ? fb_pop(F) : NULL, *subj = cls ? fb_pop(F) : NULL;
        if (subj == NULL || fb_flush(F, F->st.n) < 0)
            return -1;
        if (!dc_is_const_kind(names, DP_CONST_TUPLE))
            return fb_fail(F, F->at, "MATCH_CLASS without constant attribute names");
        if ((subj = fb_spill(F, subj)) == NULL || (cls = fb_spill(F, cls)) == NULL)
            return -1;
        if (cls->kind != E_NAME) { /* a class pattern needs a name */
            dp_node *t = fb_temp(F);
            if (fb_emit_assign(F, t, cls) < 0)
                return -1;
            cls = t;
        }
        dp_node *pat = fb_node(F, P_CLASS), *vals = fb_node(F, E_TUPLE);
        if (pat == NULL || vals == NULL)
            return -1;
        pat->a = cls;
        for (int k = 0; k < ins->arg + (int)names->cst->n; k++) {
            dp_node *v = fb_temp(F), *p = capture(F, v);
            if (v == NULL || p == NULL || dc_add(F->d, &vals->l1, v) < 0)
                return -1;
            if (k < ins->arg) {
                if (dc_add(F->d, &pat->l1, p) < 0)
                    return -1;
                continue;
            }
            dp_node *kw = fb_node(F, E_KEYWORD);
            const dp_const *nm = names->cst->items[k - ins->arg];
            if (kw == NULL || nm->kind != DP_CONST_STR || !dc_is_identifier(nm->text))
                return kw == NULL ? -1 : fb_fail(F, F->at, "MATCH_CLASS attribute name is not an identifier");
            kw->s = nm->text;
            kw->a = p;
            if (dc_add(F->d, &pat->l2, kw) < 0)
                return -1;
        }
        return match_test(F, subj, pat, vals, dc_none(F->d));
    }
    dp_node *s = fb_top(F, 0);
    if (s == NULL || fb_flush(F, F->st.n) < 0)
        return -1;
    s = fb_top(F, 0);
    if (ins->op == IR_GET_LEN)
        return fb_push(F, fb_call(F, "len", s, NULL, NULL), 1);
    dp_node *pat = fb_node(F, ins->op == IR_MATCH_MAPPING ? P_MAPPING : P_SEQUENCE);
    if (pat == NULL)
        return -1;
    if (ins->op == IR_MATCH_SEQUENCE && dc_add(F->d, &pat->l1, fb_node(F, P_STAR)) < 0)
        return -1;
    return match_test(F, s, pat, fb_bool_const(F, 1), fb_bool_const(F, 0));
}

/* ------------------------------------------------------------------ with, exceptions, async */

/* BEFORE_WITH / BEFORE_ASYNC_WITH: [mgr] -> [mgr.__exit__, mgr.__enter__()]. */
int fb_before_with(fb *F, int async) {
    dp_node *mgr = fb_pop(F);
    if (mgr == NULL || fb_flush(F, F->st.n) < 0 || (mgr = fb_spill(F, mgr)) == NULL)
        return -1;
    dp_node *exit = fb_temp(F);
    if (fb_emit_assign(F, exit, fb_attr(F, mgr, async ? "__aexit__" : "__exit__")) < 0 || fb_push(F, exit, 0) < 0)
        return -1;
    dp_node *enter = fb_node(F, E_CALL);
    if (enter == NULL || (enter->a = fb_attr(F, mgr, async ? "__aenter__" : "__enter__")) == NULL)
        return -1;
    return fb_push(F, enter, 1);
}

/* WITH_EXCEPT_START: [exit, lasti, prev, exc] -> [..., exit(type(exc), exc, exc.__traceback__)]. */
int fb_with_except_start(fb *F) {
    int old = F->block_stack; /* <= 3.10: [exit, 3 saved, tb, value, type] */
    if (fb_top(F, old ? 6 : 3) == NULL || fb_flush(F, F->st.n) < 0)
        return -1;
    dp_node *exc = fb_top(F, old ? 1 : 0), *exit = fb_top(F, old ? 6 : 3);
    dp_node *c = fb_node(F, E_CALL);
    if (c == NULL || exit->kind == X_NULL || exc->kind == X_NULL)
        return c == NULL ? -1 : fb_fail(F, F->at, "WITH_EXCEPT_START on a NULL");
    c->a = exit;
    dp_node *type = old ? fb_top(F, 0) : fb_call(F, "type", exc, NULL, NULL);
    dp_node *tb = old ? fb_top(F, 2) : fb_attr(F, exc, "__traceback__");
    if (dc_add(F->d, &c->l1, type) < 0 || dc_add(F->d, &c->l1, exc) < 0 || dc_add(F->d, &c->l1, tb) < 0)
        return -1;
    return fb_push(F, c, 1);
}

/* raise exc [from cause].  An exception raised from one of our variables
 * is dropped from it as it propagates (try: raise v  finally: v = None):
 * kept, it would tie the exception's traceback to this frame in a cycle. */
int fb_emit_raise(fb *F, dp_node *exc, dp_node *cause, dp_nodes *out) {
    dp_node *s = fb_stmt(F, S_RAISE);
    if (s == NULL || (exc && (s->a = fb_lower(F, exc, 0)) == NULL) || (cause && (s->b = fb_lower(F, cause, 0)) == NULL))
        return -1;
    if (exc == NULL || !fb_var_of(exc))
        return fb_emit_to(F, out, s);
    dp_node *tr = fb_stmt(F, S_TRY), *clear = fb_node(F, S_ASSIGN), *var = dc_name(F->d, exc->s);
    if (tr == NULL || clear == NULL || var == NULL || dc_add(F->d, &tr->l1, s) < 0 ||
        dc_add(F->d, &clear->l1, var) < 0 || (clear->b = dc_none(F->d)) == NULL || dc_add(F->d, &tr->l4, clear) < 0)
        return -1;
    return fb_emit_to(F, out, tr);
}

/* END_ASYNC_FOR: [aiter, exc]: the loop ends on StopAsyncIteration, anything
 * else propagates. */
int fb_end_async_for(fb *F) {
    dp_node *exc = fb_pop(F), *test = exc;
    int handlers = fb_running_handlers(F);
    if (exc != NULL && F->block_stack) { /* <= 3.10: [aiter, 3 saved, tb, value, type] under a handler block */
        if (F->nsetups == 0 || F->setups[F->nsetups - 1].handler >= 0)
            return fb_fail(F, F->at, "END_ASYNC_FOR outside an exception handler");
        F->nsetups--;
        exc = fb_pop(F);
        for (int q = 0; q < 4; q++)
            if (exc == NULL || fb_pop(F) == NULL)
                return -1;
    }
    dp_node *it = exc ? fb_pop(F) : NULL;
    if (it == NULL || fb_flush(F, F->st.n) < 0 || (exc = fb_spill(F, exc)) == NULL || (test = fb_spill(F, test)) == NULL)
        return -1;
    dp_node *s = fb_stmt(F, S_IF);
    const char *check = F->block_stack ? "issubclass" : "isinstance";
    if (s == NULL || (s->a = dc_not(F->d, fb_call(F, check, test, fb_builtin(F, "StopAsyncIteration"), NULL))) == NULL)
        return -1;
    if (fb_emit_raise(F, exc, NULL, &s->l1) < 0 || fb_emit(F, s) < 0)
        return -1;
    return F->block_stack ? fb_handled_stmt(F, F->out, handlers, dc_none(F->d)) : 0; /* the handler is over */
}

int fb_aiter_call(fb *F, const char *builtin, const char *method, dp_node *v) {
    /* (output language: the builtins aiter() and anext() are new in 3.10) */
    if (F->d->code->py_minor >= 10)
        return fb_push(F, fb_call(F, builtin, v, NULL, NULL), 1);
    dp_node *c = fb_node(F, E_CALL);
    if (c == NULL || (c->a = fb_attr(F, v, method)) == NULL)
        return -1;
    return fb_push(F, c, 1);
}

/* GET_ANEXT: [aiter] -> [aiter, awaitable of the next item]. */
int fb_get_anext(fb *F) {
    if (fb_top(F, 0) == NULL || fb_flush(F, F->st.n) < 0)
        return -1;
    if (fb_aiter_call(F, "anext", "__anext__", fb_top(F, 0)) < 0)
        return -1;
    dp_node *aw = fb_node(F, E_AWAIT);
    if (aw == NULL)
        return -1;
    aw->a = F->st.v[F->st.n - 1];
    F->st.v[F->st.n - 1] = aw;
    return 0;
}

/* `if '__annotations__' not in locals(): __annotations__ = {}` */
int fb_setup_annotations(fb *F) {
    dp_node *s = fb_stmt(F, S_IF), *name = dc_name(F->d, "__annotations__");
    if (s == NULL || name == NULL)
        return -1;
    if ((s->a = fb_compare(F, fb_str_const(F, "__annotations__"), DP_CMP_NOT_IN, fb_call(F, "locals", NULL, NULL, NULL))) == NULL ||
        fb_emit_to(F, &s->l1, fb_assign_stmt(F, name, fb_node(F, E_DICT))) < 0)
        return -1;
    return fb_emit(F, s);
}

/* LIST_APPEND / SET_ADD / MAP_ADD / LIST_EXTEND / SET_UPDATE / DICT_UPDATE /
 * DICT_MERGE on a collection below the top. */
int fb_collection_op(fb *F, const dp_instr *ins) {
    int op = ins->op;
    int into_display = ins->arg == 1 && F->st.n >= 2 && !fb_is_atom(F->st.v[F->st.n - 2]);
    if (into_display) {
        int k = F->st.v[F->st.n - 2]->kind;
        into_display = ((op == IR_LIST_EXTEND && k == E_LIST) || (op == IR_SET_UPDATE && k == E_SET) ||
                        ((op == IR_DICT_UPDATE || op == IR_DICT_MERGE) && k == E_DICT));
    }
    if (ins->arg == 1 && (op == IR_LIST_APPEND || op == IR_SET_ADD || op == IR_MAP_ADD) &&
        F->st.n >= 2 + (op == IR_MAP_ADD)) {
        dp_node *disp = F->st.v[F->st.n - 2 - (op == IR_MAP_ADD)];
        int k = op == IR_LIST_APPEND ? E_LIST : op == IR_SET_ADD ? E_SET : E_DICT;
        if (!fb_is_atom(disp) && disp->kind == k && !(k == E_DICT && disp->op2)) { /* [a, *b, c] still being built */
            int dv = 0;
            for (int q = 1; q <= 1 + (op == IR_MAP_ADD); q++)
                if (F->dep[F->st.n - q] > dv)
                    dv = F->dep[F->st.n - q];
            dp_node *v = fb_pop(F), *key = op == IR_MAP_ADD ? fb_pop(F) : NULL;
            if (v == NULL || (op == IR_MAP_ADD && key == NULL))
                return -1;
            if (op == IR_MAP_ADD ? (dc_add(F->d, &disp->l1, key) < 0 || dc_add(F->d, &disp->l2, v) < 0)
                                 : dc_add(F->d, &disp->l1, v) < 0)
                return -1;
            if (dv + 1 > F->dep[F->st.n - 1])
                F->dep[F->st.n - 1] = dv + 1;
            return 0;
        }
    }
    if (into_display) { /* [*a, *b] / {**a, **b} still being built */
        int dv = F->dep[F->st.n - 1], dc = F->dep[F->st.n - 2];
        if (dc_expr_step(F->d, F->at, &F->st) < 0)
            return -1;
        F->dep[F->st.n - 1] = (dv + 1 > dc) ? dv + 1 : dc;
        return 0;
    }
    dp_node *v = fb_pop(F), *k = NULL;
    if (v == NULL || (op == IR_MAP_ADD && (k = fb_pop(F)) == NULL))
        return -1;
    if (ins->arg < 1 || ins->arg > F->st.n)
        return dc_fail(F->d, F->at, "bad collection depth %d", ins->arg);
    if (fb_flush(F, F->st.n) < 0)
        return -1;
    dp_node *coll = F->st.v[F->st.n - ins->arg];
    if (coll->kind == X_NULL)
        return fb_fail(F, F->at, "collection operation on a NULL");
    if (op == IR_MAP_ADD) {
        if (!fb_is_atom(v) && (k = fb_spill(F, k)) == NULL)
            return -1;
        dp_node *t = fb_node(F, E_SUBSCR);
        if (t == NULL)
            return -1;
        t->a = coll;
        t->b = k;
        return fb_emit_assign(F, t, v);
    }
    const char *m = op == IR_LIST_APPEND ? "append" : op == IR_SET_ADD ? "add" : op == IR_LIST_EXTEND ? "extend"
                                                                                                      : "update";
    dp_node *c = fb_node(F, E_CALL);
    if (c == NULL || (c->a = fb_attr(F, coll, m)) == NULL || dc_add(F->d, &c->l1, v) < 0)
        return -1;
    return fb_emit_expr(F, c);
}

/* STORE_ATTR / STORE_SUBSCR / STORE_SLICE / DELETE_ATTR / DELETE_SUBSCR. */
int fb_store_or_delete(fb *F, const dp_instr *ins) {
    int del = ins->op == IR_DELETE_ATTR || ins->op == IR_DELETE_SUBSCR;
    dp_node *t, *hi = NULL, *lo = NULL, *idx = NULL, *obj, *v = NULL;
    if (ins->op == IR_STORE_SLICE && ((hi = fb_pop(F)) == NULL || (lo = fb_pop(F)) == NULL))
        return -1;
    if ((ins->op == IR_STORE_SUBSCR || ins->op == IR_DELETE_SUBSCR) && (idx = fb_pop(F)) == NULL)
        return -1;
    if ((obj = fb_pop(F)) == NULL || (!del && (v = fb_pop(F)) == NULL) || fb_flush(F, F->st.n) < 0)
        return -1;
    if (ins->op == IR_STORE_ATTR || ins->op == IR_DELETE_ATTR) {
        t = fb_attr(F, obj, ins->name);
    } else {
        t = fb_node(F, E_SUBSCR);
        if (t == NULL)
            return -1;
        t->a = obj;
        t->b = idx;
        if (ins->op == IR_STORE_SLICE) {
            if ((t->b = fb_node(F, E_SLICE)) == NULL)
                return -1;
            t->b->a = dc_is_const_kind(lo, DP_CONST_NONE) ? NULL : lo;
            t->b->b = dc_is_const_kind(hi, DP_CONST_NONE) ? NULL : hi;
        }
    }
    if (t == NULL || (t = fb_lower(F, t, 0)) == NULL)
        return -1;
    if (del) {
        dp_node *s = fb_stmt(F, S_DELETE);
        if (s == NULL || dc_add(F->d, &s->l1, t) < 0)
            return -1;
        return fb_emit(F, s);
    }
    if (fb_def_name(v) && (v = fb_spill(F, v)) == NULL)
        return -1;
    return fb_emit_assign(F, t, v);
}

/* ------------------------------------------------------------------ one block */

dp_node *fb_cond_test(fb *F, int op, dp_node *v) {
    if (op == IR_POP_JUMP_IF_NONE || op == IR_POP_JUMP_IF_NOT_NONE)
        return fb_compare(F, v, op == IR_POP_JUMP_IF_NONE ? DP_CMP_IS : DP_CMP_IS_NOT, dc_none(F->d));
    return v;
}

/* The values below a conditional jump's test were computed before it: into
 * their slots now, or into temporaries when the test reads those slots. */
int fb_below_test(fb *F, const dp_node *test) {
    for (int k = 0; k < F->st.n; k++)
        if (!fb_is_canon(F->st.v[k], k) && !fb_no_var(F->st.v[k]) && fb_reads_slot(F, test, k))
            return fb_flush(F, F->st.n);
    return fb_transfer(F, F->st.n, F->out);
}

/* FOR_ITER: try: __stack_n = next(it)  except StopIteration: (exhausted). */
int fb_for_iter(fb *F, int i) {
    const dp_instr *ins = &F->d->in[i];
    if (fb_top(F, 0) == NULL || fb_transfer(F, F->st.n, F->out) < 0)
        return -1;
    int n = F->st.n;
    dp_node *it = F->st.v[n - 1], *tr = fb_stmt(F, S_TRY), *slot = fb_canon(F, n, 0), *exh = fb_stmt(F, S_EXCEPT);
    if (tr == NULL || slot == NULL || exh == NULL || (exh->a = fb_builtin(F, "StopIteration")) == NULL)
        return -1;
    if (it->kind == X_NULL)
        return fb_fail(F, i, "FOR_ITER on a NULL");
    if (fb_emit_to(F, &tr->l1, fb_assign_stmt(F, slot, fb_call(F, "next", it, NULL, NULL))) < 0 || fb_push(F, slot, 0) < 0 ||
        fb_jump_to(F, fb_block_at(F, i + 1), &tr->l1) < 0)
        return -1;
    F->st.n = n - 1;
    if (fb_jump_to(F, fb_block_at(F, ins->target), &exh->l1) < 0 || dc_add(F->d, &tr->l2, exh) < 0)
        return -1;
    return fb_emit(F, tr);
}

/* The handler is over after instruction i (which ends the block): the code
 * after it runs one level out. */
int fb_leave_handler(fb *F, int i) {
    if (fb_transfer(F, F->st.n, F->out) < 0)
        return -1;
    int level = F->cur->level - 1;
    if (level < 0) {
        F->flat = 1;
        level = 0;
    }
    F->cur->pop_except = 1;
    int next = -1;
    if (fb_clear_dead(F, F->out, NULL, 1) < 0 || (next = fb_reach(F, fb_block_at(F, i + 1), &F->st, level, 1, i)) < 0)
        return -1;
    F->cur->next = next;
    return fb_emit(F, fb_goto_stmt(F, next));
}

/* Leaves the block at POP_EXCEPT: the code after it runs one level out. */
int fb_pop_except(fb *F, int i) {
    if (F->block_stack) { /* <= 3.10: ends the except-handler block, pops the saved exception */
        int n = fb_running_handlers(F);
        if (F->nsetups == 0 || F->setups[F->nsetups - 1].handler >= 0)
            return fb_fail(F, i, "POP_EXCEPT outside an exception handler");
        F->nsetups--;
        for (int q = 0; q < 2; q++)
            if (fb_pop(F) == NULL)
                return -1;
        if (fb_handled_stmt(F, F->out, n, dc_none(F->d)) < 0)
            return -1;
    }
    if (F->star && fb_star_leave(F) < 0)
        return -1;
    return fb_pop(F) == NULL ? -1 : fb_leave_handler(F, i);
}

/* RETURN_VALUE; a module or class body leaves the machine instead. */
int fb_return_value(fb *F) {
    dp_node *v = fb_pop(F);
    if (v == NULL || fb_flush(F, F->st.n) < 0)
        return -1;
    if (!F->scope_body) {
        dp_node *s = fb_stmt(F, S_RETURN);
        if (s == NULL)
            return -1;
        /* an async generator can only say `return` */
        if ((F->d->code->flags & DP_CO_ASYNC_GENERATOR) && dc_is_const_kind(v, DP_CONST_NONE))
            return fb_emit(F, s);
        if ((s->a = fb_lower(F, v, 0)) == NULL)
            return -1;
        return fb_emit(F, s);
    }
    if (F->cur->level > 0)
        F->flat = 1; /* one loop to leave */
    if (!fb_is_atom(v) && fb_emit_expr(F, v) < 0)
        return -1;
    return fb_emit(F, fb_stmt(F, S_BREAK));
}
