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
 * - the lasti value pushed for handlers is -1 (only tracebacks read it).
 */
#include <stdio.h>
#include <string.h>

#include "dc.h"

#define MAX_LEVELS 4     /* nested machines (3 static blocks each; CPython allows 20) */
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
    M_CELL_SAVED = 0x200, /* the same for a cell variable: nothing to restore */
    M_HANDLED = 0x400,    /* on statements: 3.8-3.10 bookkeeping only a flat machine needs */
    M_LEAVE = 0x800,      /* on a `break`: leaves a nested machine, so a flat one drops it */
    M_RET = 4,            /* on an X_OPAQUE: 3.8 CALL_FINALLY's return address, op = IR index */
};

/* An exception handler: a 3.11+ exception-table entry, or (3.9/3.10) the
 * SETUP_FINALLY/SETUP_WITH block on top of the block stack, whose handler
 * receives six values. */
typedef struct fb_exc {
    int target;         /* IR index of the handler */
    int depth;          /* stack values kept below what is pushed */
    int lasti;
    int six;            /* <= 3.10: [prev tb, prev value, prev type, tb, value, type] */
    int null;           /* <= 3.10: slot depth - 1 holds the NULL a failed call left (see lone_call) */
    int block;          /* the handler's block (3.8: one of its copies), -1 until reached */
    int same_target;    /* the next entry with this target, -1 */
} fb_exc;

/* One entry of a 3.9/3.10 block stack: a SETUP_* block (handler >= 0) or
 * the except-handler block of a running handler (handler == -1). */
typedef struct fb_setup {
    int handler, level;
} fb_setup;

/* What a stack slot holds at a block entry; SLOT_RET + i: a 3.8 return
 * address (END_FINALLY goes back to IR index i). */
enum { SLOT_VALUE, SLOT_NULL, SLOT_SAVED, SLOT_CELL_SAVED, SLOT_RET };

typedef struct fb_block {
    int start, end;     /* IR range */
    int exc;            /* exception-table entry covering it, or -1 */
    int reached;
    int depth, level;   /* entry stack depth, PUSH_EXC_INFO nesting */
    int *slots;         /* entry: SLOT_* per stack slot */
    int from_normal;    /* reached by a jump or fall-through */
    int id;             /* state number, -1 if unreachable */
    int pop_except;     /* ends with POP_EXCEPT: leaves a nested machine */
    int next;           /* the one block it continues to (jump, fall-through), else -1 */
    int escape;         /* ends a tidy-up re-raising into this level's escape clause */
    fb_setup *setups;   /* <= 3.10: the block stack at entry */
    int nsetups;
    int copy;           /* 3.8: next copy of these instructions for another entry, or -1 */
    dp_nodes body;
} fb_block;

typedef struct fb {
    dc *d;
    fb_block *b;
    int nb;
    int bcap;           /* room for copies of blocks (3.8 finally bodies), never moved */
    long copy_budget;   /* what copies may still cost (entry slots, open blocks, instructions) */
    int *block_of;      /* IR index -> block starting there, -1 */
    int *work;
    int nwork;
    int flat;           /* one machine for every level */
    int scope_body;     /* module or class body: `return` leaves the machine */
    const char *pfx;    /* "__" (or more underscores if the code uses such names) */
    int ntemps;
    int atoms;          /* slots [0, atoms) of st hold atoms (see flush) */
    const char **stack_names;
    int nstack_names;
    dp_nodes fixups;    /* E_CONST state numbers: op = block index, filled at the end */
    int numbered;       /* blocks have their state numbers */
    int *fwd;           /* block -> the block it forwards to (itself unless it only jumps) */
    int builtins_used;  /* the body starts with `import builtins as __builtins` */
    int *enter;         /* states that start a nested machine, being collected */
    int nenter;
    fb_exc *ex;         /* the handlers blocks refer to (fb_block.exc) */
    int nex, excap;
    int *ex_at;         /* IR index -> the first entry with that target, -1 */
    int block_stack;    /* <= 3.10: handlers come from SETUP_* blocks */
    int pending_used;   /* __pending / __pctx carry exceptions between levels */
    fb_setup *setups;   /* the block stack of the block being translated */
    int nsetups, setupcap;
    /* the block being translated */
    fb_block *cur;
    dc_stack st;
    int *dep;           /* expression depth per stack slot */
    int depcap;
    int hdepth;         /* slots [0, hdepth) must stay canonical (handler depth), or 0 */
    dp_nodes *out;
    int at;             /* current instruction, for statement positions */
    int exit_level;     /* level of the code after the current block */
    uint8_t *cleared;   /* entry slots of the current block already set to None */
    dp_nodes temps;     /* temporaries of the current block not yet set to None */
    const char *state_name;
} fb;

static int oom(fb *F) { return dp_fail(F->d->sh->err, -1, "out of memory"); }

static int fail(fb *F, int at, const char *what) { return dc_fail(F->d, at, "%s", what); }

/* ------------------------------------------------------------------ names */

static int starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static int name_clashes(const dp_strs *l, const char *pfx) {
    static const char *const ours[] = {"state", "stack_", "t", "exc", "esc", "builtins", "fn", "fast_", "handled",
                                       "pending", "pctx"};
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
    size_t len = strlen(F->pfx) + strlen(what) + 16;
    char *s = dp_alloc(F->d->sh->ar, len);
    if (s == NULL)
        return oom(F), NULL;
    if (n >= 0)
        snprintf(s, len, "%s%s%d", F->pfx, what, n);
    else
        snprintf(s, len, "%s%s", F->pfx, what);
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

/* The IR index a 3.8 return address (CALL_FINALLY) goes back to, or -1. */
static int ret_of(const dp_node *e) { return e->kind == X_OPAQUE && e->op2 == (MARK | M_RET) ? e->op : -1; }

/* A slot no variable holds: a NULL, or a return address known statically. */
static int no_var(const dp_node *e) { return e->kind == X_NULL || ret_of(e) >= 0; }

/* A fresh temporary of the current block (cleared when the block exits). */
static dp_node *temp(fb *F) {
    dp_node *t = marked_name(F, make_name(F, "t", ++F->ntemps), M_TEMP);
    if (t && F->cur && dc_add(F->d, &F->temps, t) < 0)
        return NULL;
    return t;
}

static dp_node *state_var(fb *F) {
    if (F->state_name == NULL && (F->state_name = make_name(F, "state", -1)) == NULL)
        return NULL;
    return marked_name(F, F->state_name, M_TEMP);
}

/* The canonical node of slot k at a block entry. */
static dp_node *canon(fb *F, int k, int flags) {
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
    dp_node *n = marked_name(F, F->stack_names[k], M_STACK | (flags & (M_SAVED | M_CELL_SAVED)));
    if (n)
        n->op = k;
    return n;
}

static int is_canon(const dp_node *e, int k) { return (mark_of(e) & M_KIND) == M_STACK && e->op == k; }

/* ------------------------------------------------------------------ atoms */

/* Reading an atom has no effect and gives the same value until it is used. */
static int is_atom(const dp_node *e) {
    if (e->kind == E_CONST || no_var(e) || mark_of(e))
        return 1;
    if (dc_is_generic_scope(e)) /* made of a constant and cells; called right away (generic.c) */
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

/* A cell pushed by LOAD_CLOSURE is a marked name while it may still feed
 * MAKE_FUNCTION's closure (which drops it: the nested def names its free
 * variables itself).  One left in the printed machine is used as a value
 * (Dynamo passes closure tuples to helpers): it becomes the cell itself,
 * `(lambda: v).__closure__[0]`, rewritten in place. */
static int cells_spelled(fb *F, dp_node *e, int depth) {
    if (e == NULL)
        return 0;
    if (depth > 400)
        return fail(F, F->at, "the state machine is nested too deeply");
    if ((mark_of(e) & M_KIND) == M_CELL) {
        if (e->op == 1) /* a 3.13 LOAD_FAST whose slot may hold a plain value: the name, as it reads */
            return 0;
        dp_node *cell = dc_cell(F->d, e->s);
        if (cell == NULL)
            return oom(F);
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
static dp_node *builtin(fb *F, const char *name) {
    dp_node *n = node(F, E_ATTR);
    if (n == NULL || (n->a = marked_name(F, make_name(F, "builtins", -1), M_TEMP)) == NULL)
        return NULL;
    n->s = name;
    F->builtins_used = 1;
    return n;
}

static dp_node *call(fb *F, const char *fn, dp_node *a1, dp_node *a2, dp_node *a3) {
    dp_node *c = node(F, E_CALL);
    if (c == NULL || (c->a = builtin(F, fn)) == NULL)
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

static dp_node *str_const(fb *F, const char *s) {
    dp_const *c = dp_const_new(F->d->sh->ar, DP_CONST_STR);
    if (c == NULL || (c->text = dp_strdup(F->d->sh->ar, s)) == NULL)
        return oom(F), NULL;
    c->len = strlen(s);
    return dc_const(F->d, c);
}

static dp_node *bool_const(fb *F, int v) {
    static const dp_const t = {.kind = DP_CONST_TRUE};
    static const dp_const f = {.kind = DP_CONST_FALSE};
    return dc_const(F->d, v ? &t : &f);
}

static dp_node *empty_tuple(fb *F) { return node(F, E_TUPLE); }

/* The state number of a block (after the forwarding of empty blocks). */
static int sid(const fb *F, int block) { return F->b[F->fwd[block]].id; }

/* `block`'s state number as a constant (filled in once blocks are numbered). */
static dp_node *state_ref(fb *F, int block) {
    if (F->numbered)
        return int_const(F, sid(F, block));
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
    case X_ITER: /* GET_ITER / GET_YIELD_FROM_ITER / GET_AITER used as a value */
        if (e->op2 && F->d->code->py_minor < 10) {
            dp_node *c = node(F, E_CALL);
            if (c == NULL || (c->a = attr(F, lower(F, e->a, depth + 1), "__aiter__")) == NULL)
                return NULL;
            return c;
        }
        return call(F, e->op2 ? "aiter" : "iter", lower(F, e->a, depth + 1), NULL, NULL);
    case X_CONVERTED: {
        static const char *const conv[4] = {"str", "str", "repr", "ascii"};
        return call(F, conv[e->op & 3], lower(F, e->a, depth + 1), NULL, NULL);
    }
    case X_ASSERTION:
        return builtin(F, "AssertionError");
    case E_BINOP:
        if (e->op2) { /* an in-place operator whose result is not stored back */
            static const char *const names[DP_BIN_COUNT] = {"iadd", "iand", "ifloordiv", "ilshift", "imatmul", "imul",
                                                            "imod", "ior", "ipow", "irshift", "isub", "itruediv",
                                                            "ixor"};
            if (e->op < 0 || e->op >= DP_BIN_COUNT)
                return fail(F, F->at, "bad in-place operator"), NULL;
            dp_node *op = attr(F, call(F, "__import__", str_const(F, "operator"), NULL, NULL), names[e->op]);
            dp_node *c = op ? node(F, E_CALL) : NULL;
            if (c == NULL)
                return NULL;
            c->a = op;
            if (dc_add(F->d, &c->l1, lower(F, e->a, depth + 1)) < 0 || dc_add(F->d, &c->l1, lower(F, e->b, depth + 1)) < 0)
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

/* The same target, read twice without effect in between (names and
 * attributes/subscripts of atoms): `t op= v` may replace `t = t op v`. */
static int same_target(const dp_node *a, const dp_node *b) {
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case E_NAME:
        return strcmp(a->s, b->s) == 0;
    case E_ATTR:
        return strcmp(a->s, b->s) == 0 && is_atom(a->a) && is_atom(b->a) && same_target(a->a, b->a);
    case E_SUBSCR:
        return is_atom(a->a) && is_atom(a->b) && same_target(a->a, b->a) && same_target(a->b, b->b);
    case E_CONST:
        return a->cst == b->cst;
    default:
        return 0;
    }
}

static dp_node *stmt(fb *F, int kind) { return dc_stmt(F->d, kind, F->at); }

static int emit_to(fb *F, dp_nodes *out, dp_node *s) { return dc_add(F->d, out, s); }

static int emit(fb *F, dp_node *s) { return emit_to(F, F->out, s); }

static dp_node *assign_stmt(fb *F, dp_node *target, dp_node *value) {
    if (value && value->kind == E_BINOP && value->op2 && target && same_target(target, value->a)) {
        dp_node *s = stmt(F, S_AUGASSIGN);
        if (s == NULL || (s->a = lower(F, target, 0)) == NULL || (s->b = lower(F, value->b, 0)) == NULL)
            return NULL;
        s->op = value->op;
        return s;
    }
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

/* A fast local of a module or class body (3.12+ inlined comprehensions):
 * no source name reaches it there, so it becomes one of our variables. */
static const char *fast_name(fb *F, const char *name) {
    size_t len = strlen(name) + 6;
    char *buf = dp_alloc(F->d->sh->ar, len);
    if (buf == NULL)
        return oom(F), NULL;
    snprintf(buf, len, "fast_%s", name);
    for (char *p = buf; *p; p++)
        if (*p == '.')
            *p = '_';
    return make_name(F, buf, -1);
}

static int is_fast(int op) {
    return op == IR_LOAD_FAST || op == IR_STORE_FAST || op == IR_DELETE_FAST || op == IR_LOAD_FAST_AND_CLEAR;
}

/* The name an instruction's variable has in the source. */
static const char *var_name(fb *F, const dp_instr *ins) {
    return F->scope_body && is_fast(ins->op) ? fast_name(F, ins->name) : ins->name;
}

/* The target of a name store/delete, declaring `global`/`nonlocal`. */
static dp_node *name_target(fb *F, const dp_instr *ins) {
    dc *d = F->d;
    if (F->scope_body && is_fast(ins->op)) {
        const char *name = var_name(F, ins);
        return name ? dc_name(d, name) : NULL;
    }
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
    if (v->kind == X_GENERIC) /* PEP 695 (generic.c) */
        return v->s;
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
    if (!dc_is_identifier(name))
        return dc_fail(F->d, F->at, "cannot define a function named %s", name);
    dp_node *def;
    if (v->kind == X_GENERIC) {
        /* 3.12.0-3.12.3 mangle every name compiled after a generic class in
         * the same scope (CPython gh-119395): the state machine's own names
         * (__state, __builtins, ...) would no longer be the ones set before */
        if (v->op == DC_GEN_CLASS && F->d->code->py_minor == 12)
            return dc_fail(F->d, F->at, "generic class %s in a state machine: 3.12 mangles the names after it "
                                        "(CPython gh-119395)", name);
        /* only a function's defaults come from outside its type parameter scope */
        dp_node *fn = v->op == DC_GEN_DEF ? v->a : NULL;
        if (fn && ((fn->a && (fn->a = lower(F, fn->a, 0)) == NULL) || (fn->b && (fn->b = lower(F, fn->b, 0)) == NULL)))
            return -1;
        def = dc_generic_stmt(F->d, v, name, F->at);
    } else if (v->kind == X_FUNC) {
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

/* A copy of code constant c named `name`. */
static const dp_const *renamed_code(fb *F, const dp_const *c, const char *name) {
    dp_code *code = dp_alloc(F->d->sh->ar, sizeof *code);
    dp_const *k = dp_const_new(F->d->sh->ar, DP_CONST_CODE);
    if (code == NULL || k == NULL)
        return oom(F), NULL;
    *code = *c->code;
    code->name = code->qualname = name;
    k->code = code;
    return k;
}

static int is_comprehension_code(const dp_code *c) {
    return strcmp(c->name, "<listcomp>") == 0 || strcmp(c->name, "<setcomp>") == 0 ||
           strcmp(c->name, "<dictcomp>") == 0 || strcmp(c->name, "<genexpr>") == 0;
}

/* A lambda or comprehension whose code has no expression form becomes a
 * def under a fresh name; returns that name.  A comprehension's argument
 * `.0` (the iterator it is called with) is no identifier: it becomes
 * `__iter`. */
static dp_node *def_renamed(fb *F, dp_node *fn) {
    const char *name = make_name(F, "fn", ++F->ntemps);
    dp_node *copy = node(F, X_FUNC);
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
            return oom(F), NULL;
        memcpy(v, code->varnames.v, code->varnames.n * sizeof *v);
        v[0] = "__iter";
        code->varnames.v = v;
    }
    copy->cst = k;
    if (emit_def(F, copy, name) < 0)
        return NULL;
    return marked_name(F, name, M_TEMP);
}

/* Does the comprehension `fn` have an expression form?  Bytecode no
 * compiler wrote (a generator's code under a comprehension's name) has
 * none: it is then called as a def. */
static int comprehension_has_form(fb *F, dp_node *fn) {
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

/* Evaluates every pending value in slots [0, upto), bottom first.  Slots
 * below F->atoms hold atoms already (translate lowers the mark to the
 * deepest slot each instruction may change): flushing at every store of a
 * deep stack costs what was pushed since, not the depth. */
static int flush(fb *F, int upto) {
    if (upto > F->st.n)
        upto = F->st.n;
    for (int p = F->atoms < upto ? F->atoms : upto; p < upto; p++) {
        if (is_atom(F->st.v[p]))
            continue;
        dp_node *t = spill(F, F->st.v[p]);
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
static void lower_atoms(fb *F, int low) {
    if (low < F->atoms)
        F->atoms = low < 0 ? 0 : low;
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
        if (no_var(v) || is_canon(v, k))
            continue;
        for (int p = upto; p < F->st.n; p++) {
            dp_node *w = F->st.v[p];
            if (is_canon(w, k)) {
                dp_node *t = temp(F);
                if (t == NULL || dc_add(F->d, &tg->l1, t) < 0 || dc_add(F->d, &vals->l1, w) < 0)
                    return -1;
                t->op2 |= w->op2 & (M_SAVED | M_CELL_SAVED);
                F->st.v[p] = t;
            }
        }
        dp_node *c = canon(F, k, mark_of(v));
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

/* The block starting at instruction i, -1 if none does. */
static int block_at(fb *F, int i) {
    int k = i >= 0 && i < F->d->n ? F->block_of[i] : -1;
    return k >= 0 && F->b[k].start == i ? k : -1;
}

/* The handler entry (target, depth, six, null) whose handler is `block` (-1:
 * any block, or not reached yet), added if new. */
static int exc_entry(fb *F, int target, int depth, int lasti, int six, int null, int block) {
    if (target < 0 || target >= F->d->n)
        return fail(F, -1, "exception handler out of range");
    int k = F->ex_at[target];
    for (; k >= 0; k = F->ex[k].same_target)
        if (F->ex[k].depth == depth && F->ex[k].lasti == lasti && F->ex[k].six == six && F->ex[k].null == null &&
            (block < 0 || F->ex[k].block == block))
            return k;
    if (F->nex == F->excap) {
        int cap = F->excap ? F->excap * 2 : 16;
        fb_exc *v = dp_alloc_array(F->d->sh->ar, (size_t)cap, sizeof *v);
        if (v == NULL)
            return oom(F);
        if (F->nex)
            memcpy(v, F->ex, (size_t)F->nex * sizeof *v);
        F->ex = v;
        F->excap = cap;
    }
    F->ex[F->nex] = (fb_exc){target, depth, lasti, six, null, block, F->ex_at[target]};
    F->ex_at[target] = F->nex;
    return F->nex++;
}

static int push_setup(fb *F, int handler, int level) {
    if (F->nsetups == F->setupcap) {
        int cap = F->setupcap ? F->setupcap * 2 : 8;
        if (cap > 1024)
            return fail(F, F->at, "blocks nested too deeply");
        fb_setup *v = dp_alloc_array(F->d->sh->ar, (size_t)cap, sizeof *v);
        if (v == NULL)
            return oom(F);
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
static int handled_stmt(fb *F, dp_nodes *out, int n, dp_node *value) {
    dp_node *s = node(F, S_ASSIGN);
    if (s == NULL || value == NULL || dc_add(F->d, &s->l1, dc_name(F->d, make_name(F, "handled", n))) < 0)
        return -1;
    s->b = value;
    s->op2 = MARK | M_HANDLED;
    return emit_to(F, out, s);
}

/* How many handlers are running (except-handler blocks on the block stack). */
static int running_handlers(const fb *F) {
    int n = 0;
    for (int k = 0; k < F->nsetups; k++)
        n += F->setups[k].handler < 0;
    return n;
}

static int no_var_kind(int kind) { return kind == SLOT_NULL || kind >= SLOT_RET; }

static int slot_kind(const dp_node *v) {
    if (v->kind == X_NULL)
        return SLOT_NULL;
    if (ret_of(v) >= 0)
        return SLOT_RET + ret_of(v);
    int m = mark_of(v);
    return (m & M_CELL_SAVED) ? SLOT_CELL_SAVED : (m & M_SAVED) ? SLOT_SAVED : SLOT_VALUE;
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
        if (slot_kind(st->v[k]) != b->slots[k])
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
        return fail(F, F->b[bi].start, "blocks copied too often for their different entry stacks");
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
static int reach(fb *F, int bi, const dc_stack *st, int level, int normal, int at) {
    if (bi < 0)
        return fail(F, at, "control flows past the end of the code");
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
            while (k < st->n && slot_kind(st->v[k]) == F->b[bi].slots[k])
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
        return oom(F);
    for (int k = 0; k < st->n; k++)
        b->slots[k] = slot_kind(st->v[k]);
    if (F->nsetups) {
        if ((b->setups = dp_alloc_array(F->d->sh->ar, (size_t)F->nsetups, sizeof *b->setups)) == NULL)
            return oom(F);
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
static int clear_dead(fb *F, dp_nodes *out, const dp_node *keep, int consume) {
    dp_node *s = node(F, S_ASSIGN);
    if (s == NULL)
        return -1;
    int budget = READS_BUDGET; /* for the whole call: it asks temps x stack slots questions */
    for (int k = F->st.n; k < F->cur->depth; k++) {
        if (no_var_kind(F->cur->slots[k]) || F->cleared[k])
            continue;
        dp_node *c = canon(F, k, 0);
        if (c == NULL || reads_name(keep, c->s, &budget))
            continue;
        int live = 0;
        for (int p = 0; p < F->st.n && !live; p++)
            live = is_canon(F->st.v[p], k);
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
    return emit_to(F, out, s);
}

/* Ends the block with a jump to `bi` carrying the current stack; returns
 * the block (or copy) jumped to. */
static int jump_to(fb *F, int bi, dp_nodes *out) {
    if (transfer(F, F->st.n, out) < 0 || clear_dead(F, out, NULL, 0) < 0 ||
        (bi = reach(F, bi, &F->st, F->exit_level, 1, F->at)) < 0)
        return -1;
    return emit_to(F, out, goto_stmt(F, bi)) < 0 ? -1 : bi;
}

/* The block's single exit. */
static int continue_to(fb *F, int bi) {
    if ((bi = jump_to(F, bi, F->out)) < 0)
        return -1;
    F->cur->next = bi;
    return 0;
}

static int reads_slot(fb *F, const dp_node *e, int k) {
    const dp_node *c = canon(F, k, 0);
    int budget = READS_BUDGET;
    return c == NULL || reads_name(e, c->s, &budget);
}

static int on_stack(const fb *F, int k) {
    for (int p = 0; p < F->st.n; p++)
        if (is_canon(F->st.v[p], k))
            return 1;
    return 0;
}

/* `__stack_k = None` now, for an entry slot whose value the bytecode has
 * just dropped (unless `keep` still reads it). */
static int clear_now(fb *F, int k, const dp_node *keep) {
    if (k < 0 || k >= F->cur->depth || no_var_kind(F->cur->slots[k]) || F->cleared[k] || on_stack(F, k) ||
        reads_slot(F, keep, k))
        return 0;
    dp_node *s = node(F, S_ASSIGN);
    if (s == NULL || dc_add(F->d, &s->l1, canon(F, k, 0)) < 0 || (s->b = dc_none(F->d)) == NULL)
        return -1;
    F->cleared[k] = 1;
    return emit(F, s);
}

/* if <cond>: <stack for yes>; __state = yes  else: <stack for no>; __state = no
 * Both branches see the stack minus `drop_yes` / `drop_no` top values. */
static int branch(fb *F, dp_node *cond, int yes, int drop_yes, int no, int drop_no) {
    int common = F->st.n - (drop_yes > drop_no ? drop_yes : drop_no), early = 1;
    for (int k = 0; k < common && early; k++) /* slots both sides keep: stored once, first */
        if (!is_canon(F->st.v[k], k) && !no_var(F->st.v[k]))
            early = !reads_slot(F, cond, k);
    if (early && transfer(F, common, F->out) < 0)
        return -1;
    if (clear_dead(F, F->out, cond, 1) < 0) /* dead on both sides: cleared once, first */
        return -1;
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

/* Values consumed by an instruction that expr.c turns into an expression
 * (irop.c's count), 0 for the others. */
static int npop(const dp_instr *in) {
    switch (in->op) {
    case IR_NOP: case IR_LOAD_ATTR: case IR_LOAD_METHOD: case IR_UNARY: case IR_CONVERT_VALUE: case IR_LIST_TO_TUPLE:
    case IR_CALL_INTRINSIC_1: case IR_GET_ITER: case IR_GET_YIELD_FROM_ITER: case IR_GET_AWAITABLE: case IR_YIELD_FROM:
    case IR_YIELD_VALUE: case IR_BINARY_OP: case IR_COMPARE: case IR_IS: case IR_CONTAINS: case IR_BINARY_SUBSCR:
    case IR_SET_FUNCTION_ATTRIBUTE: case IR_LOAD_SUPER_ATTR: case IR_BINARY_SLICE: case IR_BUILD_SLICE:
    case IR_BUILD_TUPLE: case IR_BUILD_LIST: case IR_BUILD_SET: case IR_BUILD_STRING: case IR_BUILD_UNPACK:
    case IR_BUILD_MAP: case IR_BUILD_CONST_KEY_MAP: case IR_CALL: case IR_CALL_EX: case IR_FORMAT_VALUE: {
        dp_effect e;
        return dp_ir_effect(in, 11, 0, &e) < 0 ? 0 : e.in;
    }
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

/* Decides what the function value on top becomes, once it is complete
 * (3.13 sets defaults after MAKE_FUNCTION): a lambda, a comprehension (its
 * call follows), a def statement now, or a def at the store that follows. */
static int settle_function(fb *F, int next) {
    dp_node *fn = top(F, 0);
    if (fn == NULL || fn->kind != X_FUNC)
        return 0;
    const dp_code *code = fn->cst->code;
    if (is_comprehension_code(code)) {
        int r = comprehension_has_form(F, fn);
        if (r != 0)
            return r < 0 ? -1 : 0; /* called right away */
        dp_node *def;
        if (flush(F, F->st.n - 1) < 0 || (def = def_renamed(F, fn)) == NULL)
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
        if ((fn->a && (fn->a = lower(F, fn->a, 0)) == NULL) || (fn->b && (fn->b = lower(F, fn->b, 0)) == NULL) ||
            (fn->c && (fn->c = lower(F, fn->c, 0)) == NULL))
            return -1;
        dc_spec sp;
        dc_spec_begin(F->d, &sp);
        dp_node *lam = dc_lambda(F->d, fn, F->at);
        if (!dc_spec_end(F->d, &sp, lam ? 0 : -1)) {
            if (F->d->sh->ar->failed || flush(F, F->st.n - 1) < 0 || (lam = def_renamed(F, fn)) == NULL)
                return -1;
            F->dep[F->st.n - 1] = 0;
        }
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
        if (no_var_kind(want) ? slot_kind(v) != want : !is_canon(v, k)) {
            if (no_var_kind(want) || no_var(v))
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

/* An f-string part that became a plain value (a spilled temporary) is
 * printed as {value}: format(s, '') of a str s is s. */
static int fstring_parts(fb *F, int count) {
    if (count < 0 || count > F->st.n)
        return fail(F, F->at, "bad f-string part count");
    for (int p = F->st.n - count; p < F->st.n; p++) {
        dp_node *v = F->st.v[p];
        if (v->kind == E_JOINEDSTR || dc_is_const_kind(v, DP_CONST_STR))
            continue;
        dp_node *j = node(F, E_JOINEDSTR), *f = node(F, E_FORMATTED);
        if (j == NULL || f == NULL || dc_add(F->d, &j->l1, f) < 0)
            return -1;
        f->a = v;
        F->st.v[p] = j;
    }
    return 0;
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
    /* (the SWAPs around a call of a type parameter scope keep the order in
     * which its arguments were computed) */
    for (int p = lo; p < F->st.n && !need && !(ins->op == IR_SWAP && dc_generic_call_swap(F->d, i)); p++)
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
    if (h == NULL || (h->a = builtin(F, type)) == NULL || dc_add(F->d, &h->l1, body) < 0)
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
    if (dc_is_cell_var(F->d->code, ins->name)) {
        /* the comprehension's closures capture a fresh cell, which source
         * outside a comprehension cannot make: the variable keeps its last
         * value instead of being restored */
        t->op2 |= M_CELL_SAVED;
        return emit_assign(F, t, dc_none(F->d)) < 0 ? -1 : push(F, t, 0);
    }
    dp_node *one = tuple_of(F, dc_name(F->d, var_name(F, ins)), NULL);
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
    if (mark_of(v) & M_CELL_SAVED)
        return 0;
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
    dp_node *a = node(F, E_ALIAS);
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
    dp_node *s = stmt(F, S_IMPORTFROM);
    if (s == NULL)
        return -1;
    s->s = d->in[i].name[0] ? d->in[i].name : NULL;
    s->op = (int)level;
    if (level == 0 && s->s == NULL)
        return 0;
    if (n == 0) {
        if (dc_add(F->d, &s->l1, alias(F, "*", NULL)) < 0 || emit(F, s) < 0)
            return -1;
        return 1;
    }
    for (int k = 0; k < n; k++) {
        const dp_instr *st = &d->in[i + 2 + 2 * k];
        if (name_target(F, st) == NULL || dc_add(F->d, &s->l1, alias(F, names->items[k]->text, st->name)) < 0)
            return -1;
    }
    return emit(F, s) < 0 ? -1 : 2 * n + 1;
}

/* IMPORT_NAME: an import statement when the instructions that follow make
 * one, else __import__(...).  *skip receives the instructions consumed. */
static int import_name(fb *F, int i, int *skip) {
    const dc *d = F->d;
    const dp_instr *ins = &d->in[i];
    dp_node *fromlist = pop(F), *level = fromlist ? pop(F) : NULL;
    if (level == NULL || flush(F, F->st.n) < 0)
        return -1;
    long lv = small_int(level);
    const dp_instr *nx = i + 1 < F->cur->end ? &d->in[i + 1] : NULL;
    if (lv == 0 && dc_is_const_kind(fromlist, DP_CONST_NONE) && nx && is_store(nx->op)) {
        size_t first = strcspn(ins->name, ".");
        int plain = strlen(nx->name) == first && strncmp(nx->name, ins->name, first) == 0;
        if (plain || is_simple_module(ins->name)) {
            dp_node *s = stmt(F, S_IMPORT);
            if (s == NULL || name_target(F, nx) == NULL ||
                dc_add(F->d, &s->l1, alias(F, ins->name, plain ? NULL : nx->name)) < 0)
                return -1;
            *skip = 1;
            return emit(F, s);
        }
    }
    if (lv >= 0 && dc_is_const_kind(fromlist, DP_CONST_TUPLE) && fromlist->cst->n > 0) {
        int used = from_import(F, i, fromlist->cst, lv);
        if (used != 0) {
            *skip = used;
            return used < 0 ? -1 : 0;
        }
    }
    dp_node *c = call(F, "__import__", str_const(F, ins->name), call(F, "globals", NULL, NULL, NULL),
                      d->code->flags & DP_CO_OPTIMIZED ? dc_none(F->d) : call(F, "locals", NULL, NULL, NULL));
    if (c == NULL || dc_add(F->d, &c->l1, fromlist) < 0 || dc_add(F->d, &c->l1, level) < 0)
        return -1;
    return push(F, c, 1);
}

/* ------------------------------------------------------------------ pattern matching */

static dp_node *capture(fb *F, dp_node *name) {
    dp_node *p = name ? node(F, P_AS) : NULL;
    if (p)
        p->s = name->s;
    return p;
}

static dp_node *match_case(fb *F, dp_node *pattern, dp_node *body) {
    dp_node *c = node(F, S_CASE);
    if (c == NULL || pattern == NULL || dc_add(F->d, &c->l1, body) < 0)
        return NULL;
    c->a = pattern;
    return c;
}

/* match subject: case <pattern>: t = yes  case _: t = no; pushes t. */
static int match_test(fb *F, dp_node *subject, dp_node *pattern, dp_node *yes, dp_node *no) {
    dp_node *m = stmt(F, S_MATCH), *t = temp(F), *wild = node(F, P_AS);
    if (m == NULL || t == NULL || wild == NULL || (m->a = lower(F, subject, 0)) == NULL)
        return -1;
    if (dc_add(F->d, &m->l1, match_case(F, pattern, assign_stmt(F, t, yes))) < 0 ||
        dc_add(F->d, &m->l1, match_case(F, wild, assign_stmt(F, t, no))) < 0 || emit(F, m) < 0)
        return -1;
    return push(F, t, 0);
}

/* A mapping-pattern key: a literal or a dotted name. */
static int is_key_expr(const dp_node *e) {
    if (e->kind == E_CONST)
        return e->cst->kind != DP_CONST_TUPLE && e->cst->kind != DP_CONST_FROZENSET && e->cst->kind != DP_CONST_CODE &&
               e->cst->kind != DP_CONST_OTHER && e->cst->kind != DP_CONST_OBJECT;
    while (e->kind == E_ATTR)
        e = e->a;
    return e->kind == E_NAME && !mark_of(e) && e != NULL;
}

/* 3.10 COPY_DICT_WITHOUT_KEYS: [s, keys] -> [s, rest], as CPython does it:
 *     rest = {**s}
 *     for k in keys: del rest[k]                                          */
static int copy_dict_without_keys(fb *F) {
    dp_node *keys = pop(F);
    if (keys == NULL || top(F, 0) == NULL || flush(F, F->st.n) < 0 || (keys = spill(F, keys)) == NULL)
        return -1;
    dp_node *rest = temp(F), *k = temp(F), *copy = node(F, E_DICT), *loop = stmt(F, S_FOR);
    dp_node *del = stmt(F, S_DELETE), *item = node(F, E_SUBSCR);
    if (rest == NULL || k == NULL || copy == NULL || loop == NULL || del == NULL || item == NULL ||
        dp_nodes_push(F->d->sh->ar, &copy->l1, NULL) < 0 || dc_add(F->d, &copy->l2, top(F, 0)) < 0 ||
        emit_assign(F, rest, copy) < 0)
        return -1;
    item->a = rest;
    item->b = k;
    loop->a = k;
    loop->b = keys;
    if (dc_add(F->d, &del->l1, item) < 0 || emit_to(F, &loop->l1, del) < 0 || emit(F, loop) < 0)
        return -1;
    return push(F, rest, 0);
}

static int match_op(fb *F, const dp_instr *ins) {
    if (ins->op == IR_MATCH_KEYS) {
        dp_node *keys = top(F, 0);
        if (keys == NULL || top(F, 1) == NULL)
            return -1;
        if (dc_is_const_kind(keys, DP_CONST_TUPLE) == 0 && keys->kind == E_TUPLE)
            for (int k = 0; k < keys->l1.n; k++)
                if (!is_key_expr(keys->l1.v[k]))
                    return fail(F, F->at, "MATCH_KEYS with a key that is no literal or dotted name");
        dp_node *orig = keys;
        if (flush(F, F->st.n) < 0)
            return -1;
        keys = orig;
        /* the pattern names the keys again: literals or dotted names */
        dp_node *pat = node(F, P_MAPPING), *vals = node(F, E_TUPLE);
        if (pat == NULL || vals == NULL)
            return -1;
        if (dc_is_const_kind(keys, DP_CONST_TUPLE)) {
            for (size_t k = 0; k < keys->cst->n; k++)
                if (dc_add(F->d, &pat->l1, dc_const(F->d, keys->cst->items[k])) < 0)
                    return -1;
        } else if (keys->kind == E_TUPLE) {
            pat->l1 = keys->l1;
        } else {
            return fail(F, F->at, "MATCH_KEYS with keys that are not a tuple");
        }
        for (int k = 0; k < pat->l1.n; k++) {
            dp_node *v = temp(F);
            if (!is_key_expr(pat->l1.v[k]))
                return fail(F, F->at, "MATCH_KEYS with a key that is no literal or dotted name");
            if (v == NULL || dc_add(F->d, &pat->l2, capture(F, v)) < 0 || dc_add(F->d, &vals->l1, v) < 0)
                return -1;
        }
        return match_test(F, top(F, 1), pat, vals, dc_none(F->d));
    }
    if (ins->op == IR_MATCH_CLASS) {
        dp_node *names = pop(F), *cls = names ? pop(F) : NULL, *subj = cls ? pop(F) : NULL;
        if (subj == NULL || flush(F, F->st.n) < 0)
            return -1;
        if (!dc_is_const_kind(names, DP_CONST_TUPLE))
            return fail(F, F->at, "MATCH_CLASS without constant attribute names");
        if ((subj = spill(F, subj)) == NULL || (cls = spill(F, cls)) == NULL)
            return -1;
        if (cls->kind != E_NAME) { /* a class pattern needs a name */
            dp_node *t = temp(F);
            if (emit_assign(F, t, cls) < 0)
                return -1;
            cls = t;
        }
        dp_node *pat = node(F, P_CLASS), *vals = node(F, E_TUPLE);
        if (pat == NULL || vals == NULL)
            return -1;
        pat->a = cls;
        for (int k = 0; k < ins->arg + (int)names->cst->n; k++) {
            dp_node *v = temp(F), *p = capture(F, v);
            if (v == NULL || p == NULL || dc_add(F->d, &vals->l1, v) < 0)
                return -1;
            if (k < ins->arg) {
                if (dc_add(F->d, &pat->l1, p) < 0)
                    return -1;
                continue;
            }
            dp_node *kw = node(F, E_KEYWORD);
            const dp_const *nm = names->cst->items[k - ins->arg];
            if (kw == NULL || nm->kind != DP_CONST_STR || !dc_is_identifier(nm->text))
                return kw == NULL ? -1 : fail(F, F->at, "MATCH_CLASS attribute name is not an identifier");
            kw->s = nm->text;
            kw->a = p;
            if (dc_add(F->d, &pat->l2, kw) < 0)
                return -1;
        }
        return match_test(F, subj, pat, vals, dc_none(F->d));
    }
    dp_node *s = top(F, 0);
    if (s == NULL || flush(F, F->st.n) < 0)
        return -1;
    s = top(F, 0);
    if (ins->op == IR_GET_LEN)
        return push(F, call(F, "len", s, NULL, NULL), 1);
    dp_node *pat = node(F, ins->op == IR_MATCH_MAPPING ? P_MAPPING : P_SEQUENCE);
    if (pat == NULL)
        return -1;
    if (ins->op == IR_MATCH_SEQUENCE && dc_add(F->d, &pat->l1, node(F, P_STAR)) < 0)
        return -1;
    return match_test(F, s, pat, bool_const(F, 1), bool_const(F, 0));
}

/* ------------------------------------------------------------------ with, exceptions, async */

/* BEFORE_WITH / BEFORE_ASYNC_WITH: [mgr] -> [mgr.__exit__, mgr.__enter__()]. */
static int before_with(fb *F, int async) {
    dp_node *mgr = pop(F);
    if (mgr == NULL || flush(F, F->st.n) < 0 || (mgr = spill(F, mgr)) == NULL)
        return -1;
    dp_node *exit = temp(F);
    if (emit_assign(F, exit, attr(F, mgr, async ? "__aexit__" : "__exit__")) < 0 || push(F, exit, 0) < 0)
        return -1;
    dp_node *enter = node(F, E_CALL);
    if (enter == NULL || (enter->a = attr(F, mgr, async ? "__aenter__" : "__enter__")) == NULL)
        return -1;
    return push(F, enter, 1);
}

/* WITH_EXCEPT_START: [exit, lasti, prev, exc] -> [..., exit(type(exc), exc, exc.__traceback__)]. */
static int with_except_start(fb *F) {
    int old = F->block_stack; /* <= 3.10: [exit, 3 saved, tb, value, type] */
    if (top(F, old ? 6 : 3) == NULL || flush(F, F->st.n) < 0)
        return -1;
    dp_node *exc = top(F, old ? 1 : 0), *exit = top(F, old ? 6 : 3);
    dp_node *c = node(F, E_CALL);
    if (c == NULL || exit->kind == X_NULL || exc->kind == X_NULL)
        return c == NULL ? -1 : fail(F, F->at, "WITH_EXCEPT_START on a NULL");
    c->a = exit;
    dp_node *type = old ? top(F, 0) : call(F, "type", exc, NULL, NULL);
    dp_node *tb = old ? top(F, 2) : attr(F, exc, "__traceback__");
    if (dc_add(F->d, &c->l1, type) < 0 || dc_add(F->d, &c->l1, exc) < 0 || dc_add(F->d, &c->l1, tb) < 0)
        return -1;
    return push(F, c, 1);
}

/* raise exc [from cause].  An exception raised from one of our variables
 * is dropped from it as it propagates (try: raise v  finally: v = None):
 * kept, it would tie the exception's traceback to this frame in a cycle. */
static int emit_raise(fb *F, dp_node *exc, dp_node *cause, dp_nodes *out) {
    dp_node *s = stmt(F, S_RAISE);
    if (s == NULL || (exc && (s->a = lower(F, exc, 0)) == NULL) || (cause && (s->b = lower(F, cause, 0)) == NULL))
        return -1;
    if (exc == NULL || !mark_of(exc))
        return emit_to(F, out, s);
    dp_node *tr = stmt(F, S_TRY), *clear = node(F, S_ASSIGN), *var = dc_name(F->d, exc->s);
    if (tr == NULL || clear == NULL || var == NULL || dc_add(F->d, &tr->l1, s) < 0 ||
        dc_add(F->d, &clear->l1, var) < 0 || (clear->b = dc_none(F->d)) == NULL || dc_add(F->d, &tr->l4, clear) < 0)
        return -1;
    return emit_to(F, out, tr);
}

/* END_ASYNC_FOR: [aiter, exc]: the loop ends on StopAsyncIteration, anything
 * else propagates. */
static int end_async_for(fb *F) {
    dp_node *exc = pop(F), *test = exc;
    int handlers = running_handlers(F);
    if (exc != NULL && F->block_stack) { /* <= 3.10: [aiter, 3 saved, tb, value, type] under a handler block */
        if (F->nsetups == 0 || F->setups[F->nsetups - 1].handler >= 0)
            return fail(F, F->at, "END_ASYNC_FOR outside an exception handler");
        F->nsetups--;
        exc = pop(F);
        for (int q = 0; q < 4; q++)
            if (exc == NULL || pop(F) == NULL)
                return -1;
    }
    dp_node *it = exc ? pop(F) : NULL;
    if (it == NULL || flush(F, F->st.n) < 0 || (exc = spill(F, exc)) == NULL || (test = spill(F, test)) == NULL)
        return -1;
    dp_node *s = stmt(F, S_IF);
    const char *check = F->block_stack ? "issubclass" : "isinstance";
    if (s == NULL || (s->a = dc_not(F->d, call(F, check, test, builtin(F, "StopAsyncIteration"), NULL))) == NULL)
        return -1;
    if (emit_raise(F, exc, NULL, &s->l1) < 0 || emit(F, s) < 0)
        return -1;
    return F->block_stack ? handled_stmt(F, F->out, handlers, dc_none(F->d)) : 0; /* the handler is over */
}

static int aiter_call(fb *F, const char *builtin, const char *method, dp_node *v) {
    if (F->d->code->py_minor >= 10)
        return push(F, call(F, builtin, v, NULL, NULL), 1);
    dp_node *c = node(F, E_CALL);
    if (c == NULL || (c->a = attr(F, v, method)) == NULL)
        return -1;
    return push(F, c, 1);
}

/* GET_ANEXT: [aiter] -> [aiter, awaitable of the next item]. */
static int get_anext(fb *F) {
    if (top(F, 0) == NULL || flush(F, F->st.n) < 0)
        return -1;
    if (aiter_call(F, "anext", "__anext__", top(F, 0)) < 0)
        return -1;
    dp_node *aw = node(F, E_AWAIT);
    if (aw == NULL)
        return -1;
    aw->a = F->st.v[F->st.n - 1];
    F->st.v[F->st.n - 1] = aw;
    return 0;
}

/* `if '__annotations__' not in locals(): __annotations__ = {}` */
static int setup_annotations(fb *F) {
    dp_node *s = stmt(F, S_IF), *name = dc_name(F->d, "__annotations__");
    if (s == NULL || name == NULL)
        return -1;
    if ((s->a = compare(F, str_const(F, "__annotations__"), DP_CMP_NOT_IN, call(F, "locals", NULL, NULL, NULL))) == NULL ||
        emit_to(F, &s->l1, assign_stmt(F, name, node(F, E_DICT))) < 0)
        return -1;
    return emit(F, s);
}

/* LIST_APPEND / SET_ADD / MAP_ADD / LIST_EXTEND / SET_UPDATE / DICT_UPDATE /
 * DICT_MERGE on a collection below the top. */
static int collection_op(fb *F, const dp_instr *ins) {
    int op = ins->op;
    int into_display = ins->arg == 1 && F->st.n >= 2 && !is_atom(F->st.v[F->st.n - 2]);
    if (into_display) {
        int k = F->st.v[F->st.n - 2]->kind;
        into_display = ((op == IR_LIST_EXTEND && k == E_LIST) || (op == IR_SET_UPDATE && k == E_SET) ||
                        ((op == IR_DICT_UPDATE || op == IR_DICT_MERGE) && k == E_DICT));
    }
    if (ins->arg == 1 && (op == IR_LIST_APPEND || op == IR_SET_ADD || op == IR_MAP_ADD) &&
        F->st.n >= 2 + (op == IR_MAP_ADD)) {
        dp_node *disp = F->st.v[F->st.n - 2 - (op == IR_MAP_ADD)];
        int k = op == IR_LIST_APPEND ? E_LIST : op == IR_SET_ADD ? E_SET : E_DICT;
        if (!is_atom(disp) && disp->kind == k && !(k == E_DICT && disp->op2)) { /* [a, *b, c] still being built */
            int dv = 0;
            for (int q = 1; q <= 1 + (op == IR_MAP_ADD); q++)
                if (F->dep[F->st.n - q] > dv)
                    dv = F->dep[F->st.n - q];
            dp_node *v = pop(F), *key = op == IR_MAP_ADD ? pop(F) : NULL;
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
    dp_node *v = pop(F), *k = NULL;
    if (v == NULL || (op == IR_MAP_ADD && (k = pop(F)) == NULL))
        return -1;
    if (ins->arg < 1 || ins->arg > F->st.n)
        return dc_fail(F->d, F->at, "bad collection depth %d", ins->arg);
    if (flush(F, F->st.n) < 0)
        return -1;
    dp_node *coll = F->st.v[F->st.n - ins->arg];
    if (coll->kind == X_NULL)
        return fail(F, F->at, "collection operation on a NULL");
    if (op == IR_MAP_ADD) {
        if (!is_atom(v) && (k = spill(F, k)) == NULL)
            return -1;
        dp_node *t = node(F, E_SUBSCR);
        if (t == NULL)
            return -1;
        t->a = coll;
        t->b = k;
        return emit_assign(F, t, v);
    }
    const char *m = op == IR_LIST_APPEND ? "append" : op == IR_SET_ADD ? "add" : op == IR_LIST_EXTEND ? "extend"
                                                                                                      : "update";
    dp_node *c = node(F, E_CALL);
    if (c == NULL || (c->a = attr(F, coll, m)) == NULL || dc_add(F->d, &c->l1, v) < 0)
        return -1;
    return emit_expr(F, c);
}

/* STORE_ATTR / STORE_SUBSCR / STORE_SLICE / DELETE_ATTR / DELETE_SUBSCR. */
static int store_or_delete(fb *F, const dp_instr *ins) {
    int del = ins->op == IR_DELETE_ATTR || ins->op == IR_DELETE_SUBSCR;
    dp_node *t, *hi = NULL, *lo = NULL, *idx = NULL, *obj, *v = NULL;
    if (ins->op == IR_STORE_SLICE && ((hi = pop(F)) == NULL || (lo = pop(F)) == NULL))
        return -1;
    if ((ins->op == IR_STORE_SUBSCR || ins->op == IR_DELETE_SUBSCR) && (idx = pop(F)) == NULL)
        return -1;
    if ((obj = pop(F)) == NULL || (!del && (v = pop(F)) == NULL) || flush(F, F->st.n) < 0)
        return -1;
    if (ins->op == IR_STORE_ATTR || ins->op == IR_DELETE_ATTR) {
        t = attr(F, obj, ins->name);
    } else {
        t = node(F, E_SUBSCR);
        if (t == NULL)
            return -1;
        t->a = obj;
        t->b = idx;
        if (ins->op == IR_STORE_SLICE) {
            if ((t->b = node(F, E_SLICE)) == NULL)
                return -1;
            t->b->a = dc_is_const_kind(lo, DP_CONST_NONE) ? NULL : lo;
            t->b->b = dc_is_const_kind(hi, DP_CONST_NONE) ? NULL : hi;
        }
    }
    if (t == NULL || (t = lower(F, t, 0)) == NULL)
        return -1;
    if (del) {
        dp_node *s = stmt(F, S_DELETE);
        if (s == NULL || dc_add(F->d, &s->l1, t) < 0)
            return -1;
        return emit(F, s);
    }
    if (def_name(v) && (v = spill(F, v)) == NULL)
        return -1;
    return emit_assign(F, t, v);
}

/* ------------------------------------------------------------------ one block */

static dp_node *cond_test(fb *F, int op, dp_node *v) {
    if (op == IR_POP_JUMP_IF_NONE || op == IR_POP_JUMP_IF_NOT_NONE)
        return compare(F, v, op == IR_POP_JUMP_IF_NONE ? DP_CMP_IS : DP_CMP_IS_NOT, dc_none(F->d));
    return v;
}

/* The values below a conditional jump's test were computed before it: into
 * their slots now, or into temporaries when the test reads those slots. */
static int below_test(fb *F, const dp_node *test) {
    for (int k = 0; k < F->st.n; k++)
        if (!is_canon(F->st.v[k], k) && !no_var(F->st.v[k]) && reads_slot(F, test, k))
            return flush(F, F->st.n);
    return transfer(F, F->st.n, F->out);
}

/* FOR_ITER: try: __stack_n = next(it)  except StopIteration: (exhausted). */
static int for_iter(fb *F, int i) {
    const dp_instr *ins = &F->d->in[i];
    if (top(F, 0) == NULL || transfer(F, F->st.n, F->out) < 0)
        return -1;
    int n = F->st.n;
    dp_node *it = F->st.v[n - 1], *tr = stmt(F, S_TRY), *slot = canon(F, n, 0), *exh = stmt(F, S_EXCEPT);
    if (tr == NULL || slot == NULL || exh == NULL || (exh->a = builtin(F, "StopIteration")) == NULL)
        return -1;
    if (it->kind == X_NULL)
        return fail(F, i, "FOR_ITER on a NULL");
    if (emit_to(F, &tr->l1, assign_stmt(F, slot, call(F, "next", it, NULL, NULL))) < 0 || push(F, slot, 0) < 0 ||
        jump_to(F, block_at(F, i + 1), &tr->l1) < 0)
        return -1;
    F->st.n = n - 1;
    if (jump_to(F, block_at(F, ins->target), &exh->l1) < 0 || dc_add(F->d, &tr->l2, exh) < 0)
        return -1;
    return emit(F, tr);
}

/* The handler is over after instruction i (which ends the block): the code
 * after it runs one level out. */
static int leave_handler(fb *F, int i) {
    if (transfer(F, F->st.n, F->out) < 0)
        return -1;
    int level = F->cur->level - 1;
    if (level < 0) {
        F->flat = 1;
        level = 0;
    }
    F->cur->pop_except = 1;
    int next = -1;
    if (clear_dead(F, F->out, NULL, 1) < 0 || (next = reach(F, block_at(F, i + 1), &F->st, level, 1, i)) < 0)
        return -1;
    F->cur->next = next;
    return emit(F, goto_stmt(F, next));
}

/* Leaves the block at POP_EXCEPT: the code after it runs one level out. */
static int pop_except(fb *F, int i) {
    if (F->block_stack) { /* <= 3.10: ends the except-handler block, pops the saved exception */
        int n = running_handlers(F);
        if (F->nsetups == 0 || F->setups[F->nsetups - 1].handler >= 0)
            return fail(F, i, "POP_EXCEPT outside an exception handler");
        F->nsetups--;
        for (int q = 0; q < 2; q++)
            if (pop(F) == NULL)
                return -1;
        if (handled_stmt(F, F->out, n, dc_none(F->d)) < 0)
            return -1;
    }
    return pop(F) == NULL ? -1 : leave_handler(F, i);
}

/* RETURN_VALUE; a module or class body leaves the machine instead. */
static int return_value(fb *F) {
    dp_node *v = pop(F);
    if (v == NULL || flush(F, F->st.n) < 0)
        return -1;
    if (!F->scope_body) {
        dp_node *s = stmt(F, S_RETURN);
        if (s == NULL)
            return -1;
        /* an async generator can only say `return` */
        if ((F->d->code->flags & DP_CO_ASYNC_GENERATOR) && dc_is_const_kind(v, DP_CONST_NONE))
            return emit(F, s);
        if ((s->a = lower(F, v, 0)) == NULL)
            return -1;
        return emit(F, s);
    }
    if (F->cur->level > 0)
        F->flat = 1; /* one loop to leave */
    if (!is_atom(v) && emit_expr(F, v) < 0)
        return -1;
    return emit(F, stmt(F, S_BREAK));
}

/* ------------------------------------------------------------------ 3.8 finally blocks */

/* CPython 3.8 enters a finally block three ways, told apart by the top of
 * the stack: NULL (BEGIN_FINALLY: the try body ended), a return address
 * (CALL_FINALLY: a return, break or continue leaves the try, and the
 * finally block goes back there) or, under an except-handler block, the six
 * values of an exception.  Each way in is another entry stack, so reach()
 * gives each its own copy of the finally body's blocks (3.9's compiler
 * copies them too), and END_FINALLY, POP_FINALLY and WITH_CLEANUP_* know
 * statically which way they were entered: NULL and return addresses are
 * held by no variable, any other value there is an exception's type. */

static dp_node *ret_node(fb *F, int target) {
    dp_node *n = node(F, X_OPAQUE);
    if (n) {
        n->op = target;
        n->op2 = MARK | M_RET;
    }
    return n;
}

static int push_null(fb *F) {
    dp_node *n = node(F, X_NULL);
    return n ? push(F, n, 0) : -1;
}

/* `break` out of the nested machine of a handler that ends here (a flat
 * machine drops it, see unflatten). */
static dp_node *leave_stmt(fb *F) {
    dp_node *s = node(F, S_BREAK);
    if (s)
        s->op2 = MARK | M_LEAVE;
    return s;
}

/* The except-handler block on top of the block stack ends (the handler of
 * an exception the finally block dropped). */
static int end_handler_block(fb *F, int i, dp_nodes *out) {
    if (F->nsetups == 0 || F->setups[F->nsetups - 1].handler >= 0)
        return fail(F, i, "an exception's values outside its handler");
    int n = running_handlers(F);
    F->nsetups--;
    return handled_stmt(F, out, n, dc_none(F->d));
}

/* END_FINALLY: NULL goes on, a return address goes back, an exception
 * [tb, value, type] is raised again. */
static int end_finally(fb *F, int i) {
    dp_node *v = pop(F), *value;
    if (v == NULL)
        return -1;
    if (v->kind == X_NULL || ret_of(v) >= 0)
        return continue_to(F, block_at(F, v->kind == X_NULL ? i + 1 : ret_of(v)));
    if (v->kind == E_CONST) /* hand-made code: no exception type, maybe a byte offset */
        return fail(F, i, "END_FINALLY on a constant");
    if ((value = pop(F)) == NULL || pop(F) == NULL || flush(F, F->st.n) < 0 || clear_dead(F, F->out, value, 1) < 0)
        return -1;
    if (no_var(value))
        return fail(F, i, "END_FINALLY raising a NULL");
    return emit_raise(F, value, NULL, F->out);
}

/* POP_FINALLY preserve_tos: drops what entered the finally block from under
 * the value on top (if preserved); dropping an exception ends its handler. */
static int pop_finally(fb *F, int i) {
    dp_node *keep = NULL, *v;
    if (flush(F, F->st.n) < 0 || (F->d->in[i].arg && (keep = pop(F)) == NULL) || (v = pop(F)) == NULL)
        return -1;
    int exc = !no_var(v);
    for (int q = 0; exc && q < 5; q++)
        if (pop(F) == NULL)
            return -1;
    if ((exc && end_handler_block(F, i, F->out) < 0) || (keep && push(F, keep, 0) < 0))
        return -1;
    return exc ? leave_handler(F, i) : continue_to(F, block_at(F, i + 1));
}

/* WITH_CLEANUP_START calls __exit__, found below what entered the block:
 *   [exit, NULL] -> [NULL, None, exit(None, None, None)]
 *   [exit, 3 saved, tb, value, type]
 *       -> [3 saved, NULL, tb, value, type, type, exit(type, value, tb)] */
static int with_cleanup_start(fb *F, int i) {
    dp_node *v = top(F, 0);
    if (v == NULL || flush(F, F->st.n) < 0)
        return -1;
    int n = F->st.n, exc = !no_var(v), below = exc ? 7 : 2;
    if (ret_of(v) >= 0 || n < below || no_var(F->st.v[n - below]))
        return fail(F, i, "WITH_CLEANUP_START without a with block's values");
    dp_node *c = node(F, E_CALL);
    if (c == NULL)
        return -1;
    c->a = F->st.v[n - below];
    for (int k = 0; k < 3; k++)
        if (dc_add(F->d, &c->l1, exc ? F->st.v[n - 1 - k] : dc_none(F->d)) < 0)
            return -1;
    dp_node *res = spill(F, c); /* __exit__ runs now */
    if (res == NULL)
        return -1;
    if (!exc) {
        F->st.n = n - 2;
        return (push_null(F) < 0 || push(F, dc_none(F->d), 0) < 0) ? -1 : push(F, res, 0);
    }
    for (int k = n - 7; k < n - 4; k++) {
        F->st.v[k] = F->st.v[k + 1];
        F->dep[k] = 0;
    }
    if ((F->st.v[n - 4] = node(F, X_NULL)) == NULL)
        return -1;
    F->dep[n - 4] = 0;
    return (push(F, v, 0) < 0) ? -1 : push(F, res, 0);
}

/* WITH_CLEANUP_FINISH: [.., exc, result] -> [..]; when exc is an exception
 * and __exit__ returned true, the exception is swallowed: its handler ends,
 * the stack is cut below its 3 saved values and NULL pushed. */
static int with_cleanup_finish(fb *F, int i) {
    dp_node *res = pop(F), *exc = res ? pop(F) : NULL;
    if (exc == NULL || flush(F, F->st.n) < 0)
        return -1;
    int next = block_at(F, i + 1);
    if (dc_is_const_kind(exc, DP_CONST_NONE))
        return (!is_atom(res) && emit_expr(F, res) < 0) ? -1 : continue_to(F, next);
    int n = F->st.n, exit_level = F->exit_level;
    if (n < 7)
        return fail(F, i, "WITH_CLEANUP_FINISH without an exception's values");
    dp_node *s = stmt(F, S_IF);
    dc_stack saved = {0};
    if (s == NULL || clear_dead(F, F->out, res, 1) < 0 || (s->a = lower(F, res, 0)) == NULL ||
        dc_stack_copy(F->d, &saved, &F->st) < 0)
        return -1;
    F->st.n = n - 7;
    if ((F->exit_level = F->cur->level - 1) < 0) {
        F->flat = 1;
        F->exit_level = 0;
    }
    if (end_handler_block(F, i, &s->l1) < 0 || push_null(F) < 0 || jump_to(F, next, &s->l1) < 0 ||
        emit_to(F, &s->l1, leave_stmt(F)) < 0)
        return -1;
    F->nsetups++;
    F->exit_level = exit_level;
    if (dc_stack_copy(F->d, &F->st, &saved) < 0 || jump_to(F, next, &s->l2) < 0)
        return -1;
    return emit(F, s);
}

static int unsupported(fb *F, int i) {
    return dc_fail(F->d, i, "%s is not supported by the state-machine fallback yet", dp_irop_name(F->d->in[i].op));
}

/* Translates instruction i.  Returns 1 when it ends the block, 0 to go on
 * at *next, -1 on error. */
static int instr(fb *F, int i, int *next) {
    dc *d = F->d;
    const dp_instr *ins = &d->in[i];
    dp_node *v, *w;
    int skip = 0, r;
    F->at = i;
    switch (ins->op) {
    case IR_NOP:
        if (ins->arg2 != DP_NOP_TO_BOOL)
            return 0;
        break; /* 3.13 TO_BOOL whose bool is used: `not not x` (expr.c) */
    case IR_RETURN_GENERATOR: case IR_STOPITERATION_ERROR:
        return 0;
    case IR_ASYNC_GEN_WRAP:
        return top(F, 0) ? 0 : -1;
    case IR_LOAD_CLOSURE:
        return push(F, marked_name(F, ins->name, M_CELL), 0);
    case IR_LOAD_FAST:
        if (dc_is_cell_var(d->code, ins->name)) { /* 3.13 spells LOAD_CLOSURE so: the cell itself */
            dp_node *cell = marked_name(F, ins->name, M_CELL);
            if (cell != NULL)
                cell->op = !dc_fast_load_is_cell(d, ins->name); /* see cells_spelled */
            return push(F, cell, 0);
        }
        if (F->scope_body)
            return push(F, name_target(F, ins), 0);
        break;
    case IR_LOAD_FAST_AND_CLEAR:
        return save_local(F, ins);
    case IR_LOAD_LOCALS:
        return push(F, call(F, "locals", NULL, NULL, NULL), 1);
    case IR_LOAD_ASSERTION_ERROR:
        return push(F, builtin(F, "AssertionError"), 1);
    case IR_UNARY:
        if (ins->arg == DP_UN_NOT)
            return unary_not(F);
        break;
    case IR_COPY: case IR_SWAP:
        return shuffle(F, i);
    case IR_BUILD_STRING:
        if (fstring_parts(F, ins->arg) < 0)
            return -1;
        break;
    case IR_FORMAT_VALUE:
        if ((ins->arg & DP_FMT_HAS_SPEC) && fstring_parts(F, 1) < 0)
            return -1;
        break;
    case IR_LIST_TO_TUPLE:
        if ((v = top(F, 0)) == NULL)
            return -1;
        if (v->kind != E_LIST || is_atom(v)) {
            F->st.v[F->st.n - 1] = call(F, "tuple", v, NULL, NULL);
            F->dep[F->st.n - 1]++;
            return F->st.v[F->st.n - 1] ? 0 : -1;
        }
        break;
    case IR_MAKE_FUNCTION:
        return make_function(F, ins);
    case IR_POP_TOP:
        if ((v = pop(F)) == NULL || is_atom(v))
            return v == NULL ? -1 : (mark_of(v) & M_KIND) == M_STACK ? clear_now(F, v->op, NULL) : 0;
        if (flush(F, F->st.n) < 0)
            return -1;
        return def_name(v) ? (spill(F, v) ? 0 : -1) : emit_expr(F, v);
    case IR_PRINT_EXPR: {
        if ((v = pop(F)) == NULL || flush(F, F->st.n) < 0)
            return -1;
        dp_node *hook = node(F, E_CALL);
        if (hook == NULL || (hook->a = attr(F, call(F, "__import__", str_const(F, "sys"), NULL, NULL), "displayhook")) == NULL ||
            dc_add(d, &hook->l1, v) < 0)
            return -1;
        return emit_expr(F, hook);
    }
    case IR_STORE_NAME: case IR_STORE_FAST: case IR_STORE_GLOBAL: case IR_STORE_DEREF:
        return store_name(F, ins);
    case IR_STORE_ATTR: case IR_STORE_SUBSCR: case IR_STORE_SLICE: case IR_DELETE_ATTR: case IR_DELETE_SUBSCR:
        return store_or_delete(F, ins);
    case IR_DELETE_NAME: case IR_DELETE_FAST: case IR_DELETE_GLOBAL: case IR_DELETE_DEREF: {
        dp_node *s = stmt(F, S_DELETE);
        if (s == NULL || flush(F, F->st.n) < 0 || dc_add(d, &s->l1, name_target(F, ins)) < 0)
            return -1;
        return emit(F, s);
    }
    case IR_UNPACK_SEQUENCE: case IR_UNPACK_EX:
        r = unpack(F, i, &skip);
        *next = i + 1 + skip;
        return r;
    case IR_IMPORT_NAME:
        r = import_name(F, i, &skip);
        *next = i + 1 + skip;
        return r;
    case IR_IMPORT_FROM:
        if (top(F, 0) == NULL || flush(F, F->st.n) < 0)
            return -1;
        return push(F, attr(F, top(F, 0), ins->name), 1);
    case IR_SETUP_ANNOTATIONS:
        return flush(F, F->st.n) < 0 ? -1 : setup_annotations(F);
    case IR_LIST_APPEND: case IR_SET_ADD: case IR_MAP_ADD: case IR_LIST_EXTEND: case IR_SET_UPDATE:
    case IR_DICT_UPDATE: case IR_DICT_MERGE:
        return collection_op(F, ins);
    case IR_CHECK_EXC_MATCH: /* <= 3.10 tests the exception's type */
        if ((w = pop(F)) == NULL || top(F, 0) == NULL || flush(F, F->st.n) < 0)
            return -1;
        return push(F, call(F, F->block_stack ? "issubclass" : "isinstance", top(F, 0), w, NULL), 1);
    case IR_PUSH_EXC_INFO:
        if ((v = pop(F)) == NULL || push(F, dc_none(d), 0) < 0)
            return -1;
        return push(F, v, 0);
    case IR_POP_EXCEPT:
        return pop_except(F, i) < 0 ? -1 : 1;
    case IR_SETUP_FINALLY: case IR_SETUP_ASYNC_WITH: /* <= 3.10 (SETUP_ASYNC_WITH keeps the awaited value above) */
        if (!F->block_stack)
            return unsupported(F, i);
        return push_setup(F, ins->target, F->st.n - (ins->op == IR_SETUP_ASYNC_WITH));
    case IR_SETUP_WITH: /* <= 3.10: BEFORE_WITH, with the block level below __enter__'s result */
        if (!F->block_stack)
            return unsupported(F, i);
        return before_with(F, 0) < 0 ? -1 : push_setup(F, ins->target, F->st.n - 1);
    case IR_POP_BLOCK:
        if (!F->block_stack || F->nsetups == 0 || F->setups[F->nsetups - 1].handler < 0)
            return fail(F, i, "POP_BLOCK without a SETUP block");
        F->nsetups--;
        return 0;
    case IR_WITH_EXCEPT_START:
        return with_except_start(F);
    case IR_BEGIN_FINALLY:
        return push_null(F);
    case IR_CALL_FINALLY:
        return (push(F, ret_node(F, i + 1), 0) < 0 || continue_to(F, block_at(F, ins->target)) < 0) ? -1 : 1;
    case IR_END_FINALLY:
        return end_finally(F, i) < 0 ? -1 : 1;
    case IR_POP_FINALLY:
        return pop_finally(F, i) < 0 ? -1 : 1;
    case IR_WITH_CLEANUP_START:
        return with_cleanup_start(F, i);
    case IR_WITH_CLEANUP_FINISH:
        return with_cleanup_finish(F, i) < 0 ? -1 : 1;
    case IR_BEFORE_WITH: case IR_BEFORE_ASYNC_WITH:
        return before_with(F, ins->op == IR_BEFORE_ASYNC_WITH);
    case IR_GET_AITER:
        if ((r = expr_step(F, i)) != 0) /* the structurer may know it (an async comprehension's iterable) */
            return r < 0 ? -1 : 0;
        if ((v = pop(F)) == NULL)
            return -1;
        return aiter_call(F, "aiter", "__aiter__", v);
    case IR_GET_ANEXT:
        return get_anext(F);
    case IR_END_ASYNC_FOR:
        return end_async_for(F);
    case IR_MATCH_MAPPING: case IR_MATCH_SEQUENCE: case IR_MATCH_KEYS: case IR_MATCH_CLASS: case IR_GET_LEN:
        return match_op(F, ins);
    case IR_COPY_DICT_WITHOUT_KEYS:
        return copy_dict_without_keys(F);
    case IR_RETURN_VALUE:
        return return_value(F) < 0 ? -1 : 1;
    case IR_RAISE: {
        dp_node *cause = NULL, *exc = NULL;
        if (ins->arg < 0 || ins->arg > 2)
            return dc_fail(d, i, "bad RAISE_VARARGS %d", ins->arg);
        if ((ins->arg >= 2 && (cause = pop(F)) == NULL) || (ins->arg >= 1 && (exc = pop(F)) == NULL) ||
            flush(F, F->st.n) < 0)
            return -1;
        if (clear_dead(F, F->out, exc, 1) < 0 || (cause && clear_dead(F, F->out, cause, 1) < 0))
            return -1;
        if (ins->arg == 0 && F->block_stack && running_handlers(F) > 0) { /* the handled exception */
            exc = marked_name(F, make_name(F, "handled", running_handlers(F)), M_TEMP);
            if (emit_raise(F, exc, cause, F->out) < 0)
                return -1;
            F->out->v[F->out->n - 1]->op2 = MARK | M_HANDLED;
            return 1;
        }
        return emit_raise(F, exc, cause, F->out) < 0 ? -1 : 1;
    }
    case IR_RERAISE: /* <= 3.10 pops (type, value, traceback) and raises the value */
        if ((v = pop(F)) == NULL || (F->block_stack && ((v = pop(F)) == NULL || pop(F) == NULL)) ||
            flush(F, F->st.n) < 0 || clear_dead(F, F->out, v, 1) < 0)
            return -1;
        return emit_raise(F, v, NULL, F->out) < 0 ? -1 : 1;
    case IR_JUMP:
        return continue_to(F, block_at(F, ins->target)) < 0 ? -1 : 1;
    case IR_POP_JUMP_IF_FALSE: case IR_POP_JUMP_IF_TRUE: case IR_POP_JUMP_IF_NONE: case IR_POP_JUMP_IF_NOT_NONE: {
        if ((v = pop(F)) == NULL || below_test(F, v) < 0)
            return -1;
        int tgt = block_at(F, ins->target), fall = block_at(F, i + 1);
        int on_false = ins->op == IR_POP_JUMP_IF_FALSE;
        return branch(F, cond_test(F, ins->op, v), on_false ? fall : tgt, 0, on_false ? tgt : fall, 0) < 0 ? -1 : 1;
    }
    case IR_JUMP_IF_FALSE_OR_POP: case IR_JUMP_IF_TRUE_OR_POP: {
        if (top(F, 0) == NULL || transfer(F, F->st.n, F->out) < 0)
            return -1;
        int tgt = block_at(F, ins->target), fall = block_at(F, i + 1);
        v = top(F, 0);
        if (ins->op == IR_JUMP_IF_FALSE_OR_POP)
            return branch(F, v, fall, 1, tgt, 0) < 0 ? -1 : 1;
        return branch(F, v, tgt, 0, fall, 1) < 0 ? -1 : 1;
    }
    case IR_FOR_ITER:
        return for_iter(F, i) < 0 ? -1 : 1;
    default:
        break;
    }
    r = expr_step(F, i);
    if (r == 0)
        return unsupported(F, i);
    if (r < 0)
        return -1;
    if (ins->op == IR_CALL)
        return settle_class(F, i + 1);
    return 0;
}

/* The entry stack of a block: __stack_k variables (and NULLs). */
static int entry_stack(fb *F, fb_block *b) {
    F->st.n = 0;
    for (int k = 0; k < b->depth; k++) {
        static const int flags[] = {0, 0, M_SAVED, M_SAVED | M_CELL_SAVED};
        int kind = b->slots[k];
        dp_node *v = kind == SLOT_NULL ? node(F, X_NULL) : kind >= SLOT_RET ? ret_node(F, kind - SLOT_RET)
                                                                              : canon(F, k, flags[kind]);
        if (push(F, v, 0) < 0)
            return -1;
    }
    return 0;
}

/* (a block made only of instructions that cannot raise has no exception
 * edge: POP_EXCEPT and the COPY before it sit inside the ranges of the
 * enclosing handler, one level out) */
static int block_can_raise(const fb *F, const fb_block *b) {
    for (int i = b->start; i < b->end; i++)
        if (dp_can_raise(F->d->in[i].op))
            return 1;
    return 0;
}

/* Block b's exceptions go to handler block h (-1: error), a copy of the
 * handler of b's entry that other blocks may not share (3.8). */
static int bind_handler(fb *F, fb_block *b, int h) {
    if (h < 0)
        return -1;
    const fb_exc *e = &F->ex[b->exc];
    if (e->block == h)
        return 0;
    if (e->block < 0) {
        F->ex[b->exc].block = h;
        return 0;
    }
    return (b->exc = exc_entry(F, e->target, e->depth, e->lasti, e->six, e->null, h)) < 0 ? -1 : 0;
}

/* <= 3.10: the call that starts block b after NOPs, when no other instruction
 * of the block can raise, else -1.  Dynamo's code calls values it carried
 * into a with's try/finally from below the block's level (no compiler
 * does): the handler of such a block is entered on the stack that call
 * leaves. */
static int lone_call(const fb *F, const fb_block *b) {
    int c = b->start;
    while (c < b->end && F->d->in[c].op == IR_NOP)
        c++;
    if (c == b->end || F->d->in[c].op != IR_CALL)
        return -1;
    for (int i = c + 1; i < b->end; i++)
        if (dp_can_raise(F->d->in[i].op))
            return -1;
    return c;
}

/* The handler of block b is reached with the stack cut to the entry's depth,
 * then lasti (if asked) and the exception. */
static int reach_handler(fb *F, fb_block *b, int setup) {
    const fb_exc *e = &F->ex[b->exc];
    /* damaged code can ask for a negative depth, or more than is on the stack */
    if (e->depth < 0 || e->depth > b->depth || e->depth > F->st.n)
        return dc_fail(F->d, b->start, "exception handler expects %d stack values, %d there", e->depth,
                       e->depth > b->depth ? b->depth : F->st.n);
    dc_stack st = {0};
    if (dc_stack_copy(F->d, &st, &F->st) < 0)
        return -1;
    st.n = e->depth;
    if (e->null && (st.v[e->depth - 1] = node(F, X_NULL)) == NULL)
        return -1;
    for (int k = 0; k < (e->six ? 6 : 1 + (e->lasti != 0)); k++)
        if (dc_push(F->d, &st, dc_none(F->d)) < 0)
            return -1;
    if (!e->six)
        return bind_handler(F, b, reach(F, block_at(F, e->target), &st, b->level, 0, b->start));
    /* the unwinding pops the blocks above the SETUP and the SETUP itself, and
     * the handler runs under an except-handler block */
    fb_setup *mine = F->setups, *theirs = dp_alloc_array(F->d->sh->ar, (size_t)setup + 1, sizeof *theirs);
    int n = F->nsetups, cap = F->setupcap;
    if (theirs == NULL)
        return oom(F);
    memcpy(theirs, mine, (size_t)setup * sizeof *theirs);
    theirs[setup] = (fb_setup){-1, e->depth};
    F->setups = theirs;
    F->nsetups = F->setupcap = setup + 1;
    int r = reach(F, block_at(F, e->target), &st, running_handlers(F), 0, b->start);
    F->setups = mine;
    F->nsetups = n;
    F->setupcap = cap;
    return bind_handler(F, b, r);
}

static int translate(fb *F, int bi) {
    fb_block *b = &F->b[bi];
    dc *d = F->d;
    F->cur = b;
    F->out = &b->body;
    F->temps.n = 0;
    F->exit_level = b->level + (d->in[b->end - 1].op == IR_PUSH_EXC_INFO);
    if (entry_stack(F, b) < 0)
        return -1;
    if (b->depth && (F->cleared = dp_alloc(d->sh->ar, (size_t)b->depth)) == NULL)
        return oom(F);
    F->nsetups = 0;
    for (int k = 0; k < b->nsetups; k++)
        if (push_setup(F, b->setups[k].handler, b->setups[k].level) < 0)
            return -1;
    int setup = F->nsetups - 1; /* <= 3.10: the innermost SETUP_* block handles exceptions */
    while (setup >= 0 && F->setups[setup].handler < 0)
        setup--;
    if (F->block_stack && setup >= 0) {
        /* (CPython unwinds from what a lone call left, its NULL result on top) */
        int level = F->setups[setup].level, c = lone_call(F, b), left = c < 0 ? level : b->depth - npop(&d->in[c]);
        int null = left >= 0 && left < level;
        if ((b->exc = exc_entry(F, F->setups[setup].handler, null ? left + 1 : level, 0, 1, null, -1)) < 0)
            return -1;
    }
    F->hdepth = 0;
    if (b->exc >= 0 && !block_can_raise(F, b))
        b->exc = -1;
    if (b->exc >= 0) {
        if (reach_handler(F, b, setup) < 0)
            return -1;
        F->hdepth = F->ex[b->exc].depth - F->ex[b->exc].null;
    }
    int fn_pending = 0;
    F->atoms = 0;
    for (int i = b->start; i < b->end;) {
        int next = i + 1;
        dp_effect e;
        /* (the values i takes may change; the instructions a handler
         * consumes with i, stores of unpacked or imported values, work
         * above what i leaves) */
        lower_atoms(F, dp_ir_effect(&d->in[i], d->code->py_minor, 0, &e) < 0 ? 0 : F->st.n - e.in);
        int r = instr(F, i, &next);
        lower_atoms(F, F->st.n);
        if (r < 0)
            return -1;
        if (r > 0)
            return 0;
        if (d->in[i].op == IR_MAKE_FUNCTION)
            fn_pending = 1;
        if (fn_pending && (next >= b->end || d->in[next].op != IR_SET_FUNCTION_ATTRIBUTE)) {
            fn_pending = 0;
            lower_atoms(F, F->st.n - 1);
            if (settle_function(F, next) < 0)
                return -1;
        }
        if (keep_handler_slots(F) < 0)
            return -1;
        i = next;
    }
    F->at = b->end - 1;
    return continue_to(F, block_at(F, b->end));
}

/* ------------------------------------------------------------------ blocks */

/* The blocks are the graph's (cfg.h), with room after them for the copies
 * 3.8's finally bodies need; from 3.11 each takes the handler of its
 * exception-table entry (3.8-3.10 blocks follow the block stack as the
 * machine walks them: see translate). */
static int take_blocks(fb *F, const dp_cfg *g) {
    dc *d = F->d;
    dp_arena *ar = d->sh->ar;
    int *entry = dp_alloc_array(ar, (size_t)g->nexc + 1, sizeof *entry);
    F->ex_at = dp_alloc_array(ar, (size_t)d->n + 1, sizeof *F->ex_at);
    if (entry == NULL || F->ex_at == NULL)
        return oom(F);
    for (int i = 0; i < d->n; i++)
        F->ex_at[i] = -1;
    for (int r = 0; r < g->nexc; r++) {
        const dp_exc_region *e = &g->exc[r];
        entry[r] = e->setup >= 0 ? -1 : exc_entry(F, e->target, e->depth, e->lasti, 0, 0, -1);
        if (e->setup < 0 && entry[r] < 0)
            return -1;
    }
    F->nb = g->nb;
    /* 3.8 copies the blocks of finally bodies: a few times each at most in
     * compiler output, and never more than this */
    F->bcap = F->nb + (d->code->py_minor == 8 ? 3 * F->nb + 256 : 0);
    F->copy_budget = 16L * d->n + 4096;
    F->block_of = g->block_of;
    F->b = dp_alloc_array(ar, (size_t)F->bcap, sizeof *F->b);
    F->work = dp_alloc_array(ar, (size_t)F->bcap, sizeof *F->work);
    if (F->b == NULL || F->work == NULL)
        return oom(F);
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
        return compare(F, state_var(F), DP_CMP_EQ, int_const(F, ids[0]));
    dp_node *t = node(F, E_TUPLE);
    if (t == NULL)
        return NULL;
    for (int k = 0; k < n; k++)
        if (dc_add(F->d, &t->l1, int_const(F, ids[k])) < 0)
            return NULL;
    return compare(F, state_var(F), DP_CMP_IN, t);
}

/* `__stack_k = value` */
static int set_slot(fb *F, dp_nodes *out, int k, dp_node *value) {
    dp_node *s = node(F, S_ASSIGN), *c = canon(F, k, 0);
    if (s == NULL || c == NULL || value == NULL || dc_add(F->d, &s->l1, c) < 0)
        return -1;
    s->b = value;
    return emit_to(F, out, s);
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
        if (set_slot(F, out, k++, attr(F, dc_name(d, exc_var), "__traceback__")) < 0 ||
            set_slot(F, out, k++, dc_name(d, exc_var)) < 0 ||
            set_slot(F, out, k, call(F, "type", dc_name(d, exc_var), NULL, NULL)) < 0)
            return -1;
        if (F->flat ? handled_stmt(F, out, F->b[h].level, dc_name(d, exc_var)) < 0
                    : enter_state(F, h) < 0) /* the handler runs in this except clause */
            return -1;
        return emit_to(F, out, goto_stmt(F, h));
    }
    if (x->lasti && set_slot(F, out, k++, int_const(F, -1)) < 0)
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
                if (emit_to(F, out, b->body.v[q]) < 0)
                    return -1;
            if (c == r)
                break;
        }
        const fb_block *R = &F->b[r];
        if (R->exc >= 0 && (F->flat || R->level == level))
            return route_to(F, level, R->exc, exc_var, out, budget - 1, in_escape);
        if (R->exc >= 0) { /* an outer level's escape clause catches it */
            F->b[r].escape = 1;
            if (emit_to(F, out, goto_stmt(F, r)) < 0)
                return -1;
        }
        return emit_raise(F, NULL, NULL, out);
    }
    fb_block *hb = &F->b[h];
    if (is_transition(F, hb)) { /* PUSH_EXC_INFO: [exc] -> [previous exception, exc] */
        if (in_escape)
            return fail(F, hb->start, "exception re-raised into a handler of another level");
        if (set_slot(F, out, k++, dc_none(d)) < 0)
            return -1;
        h = F->block_of[hb->end];
        if (enter_state(F, h) < 0)
            return -1;
    }
    if (set_slot(F, out, k, dc_name(d, exc_var)) < 0)
        return -1;
    return emit_to(F, out, goto_stmt(F, h));
}

/* The if/elif chain of an except clause: blocks[0..n) (with handlers) are
 * the states whose exception it routes; anything else propagates. */
static int route(fb *F, int level, const int *blocks, int n, const char *exc_var, int in_escape, dp_nodes *out) {
    dc *d = F->d;
    int ngroups = 2 * F->nex; /* by entry, and whether the block raised in a nested handler */
    int *count = dp_alloc_array(d->sh->ar, (size_t)ngroups + 1, sizeof(int));
    int *first = dp_alloc_array(d->sh->ar, (size_t)ngroups + 1, sizeof(int));
    int *ids = dp_alloc_array(d->sh->ar, (size_t)n + 1, sizeof(int));
    if (count == NULL || ids == NULL || first == NULL)
        return oom(F);
    for (int k = 0; k < n; k++)
        count[2 * F->b[blocks[k]].exc + (F->b[blocks[k]].level > level)]++;
    for (int e = 0, at = 0; e < ngroups; e++) {
        first[e] = at;
        at += count[e];
        count[e] = 0;
    }
    for (int k = 0; k < n; k++) {
        const fb_block *b = &F->b[blocks[k]];
        int g = 2 * b->exc + (b->level > level);
        ids[first[g] + count[g]++] = b->id;
    }
    dp_nodes chain = {0}; /* else-branch of the if built so far */
    if (emit_raise(F, NULL, NULL, &chain) < 0)
        return -1;
    for (int g = ngroups - 1; g >= 0; g--) {
        if (count[g] == 0)
            continue;
        dp_node *s = node(F, S_IF);
        if (s == NULL || (s->a = state_is(F, ids + first[g], count[g])) == NULL)
            return -1;
        if (g & 1) { /* re-raised here by the escape clause: the __context__ it had */
            dp_node *ctx = node(F, S_ASSIGN), *clear = node(F, S_ASSIGN);
            if (ctx == NULL || clear == NULL || dc_add(d, &ctx->l1, attr(F, dc_name(d, exc_var), "__context__")) < 0 ||
                (ctx->b = dc_name(d, make_name(F, "pctx", -1))) == NULL || emit_to(F, &s->l1, ctx) < 0 ||
                dc_add(d, &clear->l1, dc_name(d, make_name(F, "pctx", -1))) < 0 ||
                (clear->b = dc_none(d)) == NULL || emit_to(F, &s->l1, clear) < 0)
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
        if (emit_to(F, out, chain.v[k]) < 0)
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
    dp_node *s = node(F, S_IF);
    if (s == NULL || (s->a = state_is(F, F->enter + from, m)) == NULL || machine(F, level + 1, &s->l1) < 0)
        return -1;
    return emit_to(F, out, s);
}

static dp_node *except_all(fb *F, const char *name) {
    dp_node *ex = node(F, S_EXCEPT);
    if (ex == NULL || (ex->a = builtin(F, "BaseException")) == NULL)
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
    dp_node *s = node(F, S_IF), *p = marked_name(F, make_name(F, "pending", -1), M_TEMP);
    if (s == NULL || p == NULL || (s->a = compare(F, p, DP_CMP_IS_NOT, dc_none(F->d))) == NULL ||
        emit_raise(F, p, NULL, &s->l1) < 0)
        return -1;
    F->pending_used = 1;
    return emit_to(F, out, s);
}

/* try: <body>  except BaseException as __esc<level>: keep it for the
 * raisers[0..n), re-raise anything else. */
static int escape_to_pending(fb *F, int level, const int *raisers, int n, dp_nodes *body) {
    dc *d = F->d;
    int *ids = dp_alloc_array(d->sh->ar, (size_t)n + 1, sizeof(int));
    const char *esc = make_name(F, "esc", level);
    dp_node *tr = node(F, S_TRY), *ex = except_all(F, esc), *s = node(F, S_IF);
    dp_node *keep = node(F, S_ASSIGN), *ctx = node(F, S_ASSIGN);
    if (ids == NULL || tr == NULL || ex == NULL || s == NULL || keep == NULL || ctx == NULL)
        return -1;
    for (int k = 0; k < n; k++)
        ids[k] = F->b[raisers[k]].id;
    if ((s->a = state_is(F, ids, n)) == NULL ||
        dc_add(d, &keep->l1, dc_name(d, make_name(F, "pending", -1))) < 0 || (keep->b = dc_name(d, esc)) == NULL ||
        dc_add(d, &ctx->l1, dc_name(d, make_name(F, "pctx", -1))) < 0 ||
        (ctx->b = attr(F, dc_name(d, esc), "__context__")) == NULL || dc_add(d, &s->l1, keep) < 0 ||
        dc_add(d, &s->l1, ctx) < 0 || emit_raise(F, NULL, NULL, &s->l2) < 0 || dc_add(d, &ex->l1, s) < 0 ||
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
        if (st->op2 == (MARK | M_LEAVE) && F->flat)
            continue;
        if (st->op2 == (MARK | M_HANDLED) && !F->flat) {
            if (st->kind == S_ASSIGN)
                continue;
            if ((st = node(F, S_RAISE)) == NULL) /* bare */
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
    if (d->sh->limit_hit || ++d->sh->depth > DP_MAX_NESTING * 4) {
        d->sh->depth -= !d->sh->limit_hit;
        d->sh->limit_hit = 1;
        return fail(F, -1, "exception handlers nested too deeply");
    }
    int *raisers = dp_alloc_array(d->sh->ar, (size_t)F->nb + 1, sizeof(int));
    if (raisers == NULL)
        return oom(F);
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
        if (!F->flat && b->pop_except && level > 0 && dc_add(d, &s->l1, node(F, S_BREAK)) < 0)
            return -1;
        if (dc_add(d, &body, s) < 0)
            return -1;
    }
    if (nraisers > 0) {
        const char *name = make_name(F, "exc", level);
        dp_node *tr = node(F, S_TRY), *ex = except_all(F, name);
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
        const char *name = make_name(F, "esc", level);
        dp_node *tr = node(F, S_TRY), *ex = except_all(F, name);
        if (tr == NULL || ex == NULL || route(F, level, raisers, nesc, name, 1, &ex->l1) < 0 ||
            dc_add(d, &tr->l2, ex) < 0)
            return -1;
        tr->l1 = body;
        body = (dp_nodes){0};
        if (dc_add(d, &body, tr) < 0)
            return -1;
    }
    dp_node *loop = node(F, S_WHILE);
    if (loop == NULL || (loop->a = bool_const(F, 1)) == NULL)
        return -1;
    loop->l1 = body;
    d->sh->depth--;
    return emit_to(F, out, loop);
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
        return oom(F);
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
    if (is_comprehension_code(d->code))
        return dc_fail(d, -1, "no expression form for %s", d->code->name);
    fb F = {0};
    F.d = d;
    F.scope_body = (d->code->flags & DP_CO_OPTIMIZED) == 0;
    F.block_stack = d->code->py_minor <= 10;
    dp_cfg g;
    if (dp_cfg_build(d->sh->ar, &d->f, &g, d->sh->err) < 0 || pick_prefix(&F) < 0 || take_blocks(&F, &g) < 0)
        return -1;
    dc_stack empty = {0};
    if (reach(&F, 0, &empty, 0, 1, 0) < 0)
        return -1;
    for (int w = 0; w < F.nwork; w++) /* in discovery order: each block once */
        if (translate(&F, F.work[w]) < 0)
            return -1;
    if (forward_empty_blocks(&F) < 0)
        return -1;
    int ids = 0;
    for (int k = 0; k < F.nb; k++)
        if (F.b[k].reached && F.fwd[k] == k)
            F.b[k].id = ids++;
    for (int k = 0; k < F.fixups.n; k++) {
        dp_node *c = F.fixups.v[k];
        dp_node *v = int_const(&F, sid(&F, c->op));
        if (v == NULL)
            return -1;
        c->cst = v->cst;
        c->op = 0;
    }
    F.numbered = 1;
    check_nesting(&F);
    if ((F.enter = dp_alloc_array(d->sh->ar, (size_t)F.nb + 1, sizeof(int))) == NULL)
        return oom(&F);
    dp_node *note = node(&F, S_COMMENT), *init = node(&F, S_ASSIGN);
    if (note == NULL || init == NULL || dc_add(d, &init->l1, state_var(&F)) < 0 || (init->b = int_const(&F, sid(&F, 0))) == NULL)
        return -1;
    char text[400];
    snprintf(text, sizeof text, "depyf: %s%s%s%s;\n"
             "this is an equivalent state machine over the bytecode's blocks%s",
             d->refused ? "the structured form failed validation" : "no structured form was found",
             d->why[0] ? " (" : "", d->why, d->why[0] ? ")" : "",
             F.flat ? "\n(exception handlers run outside their except clause)" : "");
    if ((note->s = dp_strdup(d->sh->ar, text)) == NULL)
        return oom(&F);
    dp_nodes loop = {0};
    if (machine(&F, 0, &loop) < 0 || dc_add(d, out, note) < 0 || cells_spelled(&F, loop.v[0], 0) < 0)
        return -1;
    if (F.builtins_used) {
        dp_node *imp = node(&F, S_IMPORT), *al = node(&F, E_ALIAS);
        if (imp == NULL || al == NULL || (al->b = dc_name(d, make_name(&F, "builtins", -1))) == NULL ||
            dc_add(d, &imp->l1, al) < 0 || dc_add(d, out, imp) < 0)
            return -1;
        al->s = "builtins";
    }
    if (F.pending_used) {
        dp_node *p = node(&F, S_ASSIGN);
        if (p == NULL || dc_add(d, &p->l1, dc_name(d, make_name(&F, "pending", -1))) < 0 ||
            dc_add(d, &p->l1, dc_name(d, make_name(&F, "pctx", -1))) < 0 || (p->b = dc_none(d)) == NULL ||
            dc_add(d, out, p) < 0)
            return -1;
    }
    return (dc_add(d, out, init) < 0 || dc_add(d, out, loop.v[0]) < 0) ? -1 : 0;
}
