/* Translation validation (issue 11): does a recompiled decompilation do what
 * the original bytecode does?
 *
 * Both code objects are lifted to the IR and run side by side as a product
 * symbolic execution.  Values are terms, hash-consed so that equality is id
 * equality: constants (by value: -0.0 is not 0.0; code objects by name and
 * signature), NULL, "unbound", cells by name, `a is b` of two terms, fresh
 * variables, and EV(n, k), the k-th result of the n-th observable operation.
 * Loads, stores and deletes of fast locals, stack shuffles, jumps, `is`,
 * constant loads and the 3.8-3.10 block bookkeeping are pure: each side just
 * updates its own stack and locals, so where a value lives (stack slot,
 * local, temporary) does not matter, only which value it is.  Everything
 * else is an event: both sides must perform the same events in the same
 * order, with the same operation, arguments, names and input terms, and
 * branch on the same term with successors paired by polarity (so `if not
 * c: A else: B` and `if c: B else: A` agree).
 *
 * After every event and at branches, the pair of positions is a sync point:
 * its state is generalized into a "shape" (each distinct term of the
 * original's stack and locals becomes a class; each candidate slot names the
 * class of its value, or is opaque when the original holds no such value;
 * NULL, unbound, constants and 3.8 finally return addresses stay literal).
 * A pair met again with the same literal pattern is covered when its stored
 * shape is at most as specific; otherwise the meet of the two shapes is
 * explored again (a few times at most).  An opaque value used by an event or
 * branch makes the pair "not equivalent": a dead temporary is fine, a used
 * one is not.
 *
 * Exceptions: at every operation that can raise, both sides' handlers (3.11+
 * exception table, 3.8-3.10 symbolic block stack) must agree: both none, or
 * a pair explored with the stack cut to the handler's depth and the same
 * exception terms pushed on both sides.
 *
 * Bounds: pairs, steps and terms are limited; past a limit, on bytecode the
 * checker does not model or on malformed input the answer is -1 ("could not
 * check"), never a hang or a crash. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "equiv.h"
#include "print.h"
#include "ir.h"

#define MAX_BLOCKS 24        /* CPython allows 20 */
#define STACK_MARGIN 64
#define MAX_EXPLORE 8        /* explorations of one pair before giving up */
#define WIDEN_AFTER 4        /* shapes stored at one place of the original before stack constants generalize */
#define MAX_TERMS (1 << 22)  /* per explored pair */
#define MAX_DEEP 8           /* nesting of lambdas/comprehensions compared in full */
#define EQ_ARENA_LIMIT ((size_t)1 << 29)

enum { T_NULL, T_UNBOUND, T_OPAQUE, T_LASTI, T_CONST, T_CELL, T_GLOBAL, T_VAR, T_EV, T_IS, T_RET, T_NOT, T_LIST_METHOD, T_SLICE, T_NEW };
/* c of a T_EV term: what is known of the value's type (until a sync point
 * generalizes it) */
enum { EV_ANY, EV_LIST };
/* c of a T_VAR: a known truth (1 true, 2 false), and VAR_LIST when it is a
 * list built here.  A class code (shapes) is its number << CB_SHIFT, with
 * the truth in bits 0-1, unboundness in bits 2-3 and CB_LIST. */
enum { VAR_LIST = 4, CB_LIST = 16, CB_SHIFT = 5 };
/* shape codes of literal values (class ids are >= 0) */
/* (below C_LIST_METHOD: 3 codes per class of A, its list's extend and
 * append methods and its negation, see shape_of) */
enum { C_NULL = -1, C_OPAQUE = -3, C_RET = -16, C_CONST = -(1 << 26), C_GLOBAL = -(1 << 28), C_LIST_METHOD = -(1 << 30) };
enum { B_SETUP, B_HANDLER };
enum { EXC_TYPE = 100, EXC_VALUE, EXC_TB, PREV_TYPE, PREV_VALUE, PREV_TB };

typedef struct term {
    int32_t kind, a, b, c;
} term;

typedef struct blk {
    int32_t type, handler, level;
} blk;

typedef struct sstate {
    int32_t pc, sp, nb;
    int32_t *stack, *loc;
    blk blocks[MAX_BLOCKS];
} sstate;

typedef struct side {
    const dp_code *code;
    dp_irfunc f;
    int32_t *slot;    /* per instruction: local slot of a fast op, or -1 */
    int32_t *tcst;    /* per instruction: term of its constant (or cell), or -1 */
    int32_t *handler; /* per instruction (3.11+): exception table entry, or -1 */
    uint8_t *ran;     /* per instruction: reached by the exploration */
    int32_t *npat;    /* per instruction (original): shapes stored there */
    int nloc, cap;
    const char **slotname;
} side;

typedef struct ventry {
    int32_t pc[2], sp[2], nb[2];
    int32_t *val;
    blk *blk;
    uint64_t key;
    int32_t next;
    int32_t explored;
    int32_t queued;
} ventry;

typedef struct cent {
    uint64_t h;
    const dp_const *c;
    int32_t term;
} cent;

typedef struct eq {
    dp_arena ar;
    side s[2];
    dp_layout lay; /* the layout facts of both sides' Python (set once both are lifted) */
    int stable_globals; /* DP_EQ_STABLE_GLOBALS */
    term *t;
    int32_t nt, capt, persist;
    int32_t *ht;        /* hash-cons table: term ids, -1 empty */
    uint32_t *hgen;     /* generation of each entry (0 = persistent) */
    int32_t hcap, hused;
    uint32_t gen;
    int32_t null_t, unbound_t, opaque_t, lasti_t, none_t, empty_tuple_t;
    int32_t fn_type_t, fn_globals_t; /* (fold_function_type's terms) */
    cent *ct;
    int32_t ccap, nconst;
    int32_t *const_term; /* const id -> term */
    const dp_const **const_ptr; /* const id -> the constant */
    int32_t cidcap;
    int32_t nev;
    int32_t nnew[2]; /* empty containers each side made since its states were instantiated */
    /* generalization scratch, indexed by term id */
    int32_t *stamp, *cls;
    int32_t scap, cur_stamp;
    ventry *v;
    int32_t nv, capv;
    int32_t *vh;
    int32_t vhcap;
    int32_t *work;
    int32_t nwork, capwork;
    sstate tmp[2][6];
    int32_t *pos[2]; /* scratch: stack positions an event reads */
    int32_t *sval, *smeet; /* scratch shapes */
    int32_t capsval, capsmeet;
    long steps, max_steps;
    int32_t pairs, max_pairs;
    int widen;          /* shape_of generalizes the constants on the stacks too */
    int verdict; /* 1 so far equivalent, 0 not, -1 could not check */
    char *why;
    size_t whylen;
    int depth;
    const dp_named_consts *named; /* the candidate's named constants, or NULL */
} eq;

static int verdict(eq *E, int v, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int verdict(eq *E, int v, const char *fmt, ...) {
    if (E->verdict == 1) {
        E->verdict = v;
        if (E->why && E->whylen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(E->why, E->whylen, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}
#define CANT(...) verdict(E, -1, __VA_ARGS__)
#define NEQ(...) verdict(E, 0, __VA_ARGS__)

static void *grow(eq *E, void *p, int32_t *cap, int32_t need, size_t size) {
    if (need <= *cap)
        return p;
    long long c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    if (c > INT32_MAX / 2 || (size_t)c > ((size_t)1 << 40) / size) {
        CANT("out of memory");
        return NULL;
    }
    void *q = realloc(p, (size_t)c * size);
    if (q == NULL) {
        CANT("out of memory");
        return NULL;
    }
    *cap = (int32_t)c;
    return q;
}

/* ------------------------------------------------------------------ terms */

static uint64_t mix(uint64_t h, uint64_t x) {
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static int32_t new_term(eq *E, int32_t kind, int32_t a, int32_t b, int32_t c) {
    if (E->nt - E->persist > MAX_TERMS)
        return CANT("too many values");
    term *t = grow(E, E->t, &E->capt, E->nt + 1, sizeof *t);
    if (t == NULL)
        return -1;
    E->t = t;
    t[E->nt] = (term){kind, a, b, c};
    return E->nt++;
}

static int rehash(eq *E, int32_t cap) {
    int32_t live = 0;
    for (int32_t k = 0; k < E->hcap; k++)
        live += E->ht[k] >= 0 && (E->hgen[k] == 0 || E->hgen[k] == E->gen);
    while (cap < 4 * live + 1024) {
        if (cap > (1 << 28))
            return CANT("too many values");
        cap = cap ? cap * 2 : 1024;
    }
    int32_t *ht = malloc((size_t)cap * sizeof *ht);
    uint32_t *hg = malloc((size_t)cap * sizeof *hg);
    if (ht == NULL || hg == NULL) {
        free(ht);
        free(hg);
        return CANT("out of memory");
    }
    for (int32_t k = 0; k < cap; k++)
        ht[k] = -1;
    E->hused = 0;
    for (int32_t k = 0; k < E->hcap; k++) {
        if (E->ht[k] < 0 || (E->hgen[k] != 0 && E->hgen[k] != E->gen))
            continue;
        const term *t = &E->t[E->ht[k]];
        uint64_t h = mix(mix(mix(mix(0, (uint64_t)t->kind), (uint64_t)t->a), (uint64_t)t->b), (uint64_t)t->c);
        int32_t i = (int32_t)(h & (uint64_t)(cap - 1));
        while (ht[i] >= 0)
            i = (i + 1) & (cap - 1);
        ht[i] = E->ht[k];
        hg[i] = E->hgen[k];
        E->hused++;
    }
    free(E->ht);
    free(E->hgen);
    E->ht = ht;
    E->hgen = hg;
    E->hcap = cap;
    return 0;
}

/* The one term (kind, a, b, c); persistent ones are made before any pair is
 * explored, the others live until the next pair. */
static int32_t cons(eq *E, int32_t kind, int32_t a, int32_t b, int32_t c) {
    if (E->hused * 2 >= E->hcap && rehash(E, 0) < 0)
        return -1;
    uint64_t h = mix(mix(mix(mix(0, (uint64_t)kind), (uint64_t)a), (uint64_t)b), (uint64_t)c);
    int32_t i = (int32_t)(h & (uint64_t)(E->hcap - 1));
    for (;; i = (i + 1) & (E->hcap - 1)) {
        int32_t id = E->ht[i];
        if (id < 0 || (E->hgen[i] != 0 && E->hgen[i] != E->gen))
            break;
        const term *t = &E->t[id];
        if (t->kind == kind && t->a == a && t->b == b && t->c == c)
            return id;
    }
    int32_t id = new_term(E, kind, a, b, c);
    if (id < 0)
        return -1;
    if (E->ht[i] < 0)
        E->hused++;
    E->ht[i] = id;
    E->hgen[i] = E->gen;
    return id;
}

/* ------------------------------------------------------------------ constants */

static int is_deep_code(const dp_code *c) { return c->name[0] == '<' && strcmp(c->name, "<module>") != 0; }

static uint64_t const_hash(const dp_const *c, int depth) {
    uint64_t h = mix(0, (uint64_t)c->kind);
    if (depth > 50)
        return h;
    switch (c->kind) {
    case DP_CONST_INT: case DP_CONST_STR: case DP_CONST_BYTES: case DP_CONST_OTHER: case DP_CONST_OBJECT:
        for (size_t k = 0; k < c->len && c->text; k++)
            h = mix(h, (unsigned char)c->text[k]);
        return mix(h, c->len);
    case DP_CONST_FLOAT: case DP_CONST_COMPLEX: {
        uint64_t a, b;
        memcpy(&a, &c->f, sizeof a);
        memcpy(&b, &c->im, sizeof b);
        return mix(mix(h, a), c->kind == DP_CONST_COMPLEX ? b : 0);
    }
    case DP_CONST_TUPLE: case DP_CONST_FROZENSET:
        for (size_t k = 0; k < c->n; k++)
            h = mix(h, const_hash(c->items[k], depth + 1));
        return mix(h, c->n);
    case DP_CONST_CODE:
        for (const char *p = c->code->name; p && *p; p++)
            h = mix(h, (unsigned char)*p);
        return h;
    default:
        return h;
    }
}

static int code_sig_same(const dp_code *a, const dp_code *b) {
    int mask = DP_CO_VARARGS | DP_CO_VARKEYWORDS | DP_CO_GENERATOR | DP_CO_COROUTINE | DP_CO_ITERABLE_COROUTINE |
               DP_CO_ASYNC_GENERATOR;
    return strcmp(a->name, b->name) == 0 && a->argcount == b->argcount && a->posonlyargcount == b->posonlyargcount &&
           a->kwonlyargcount == b->kwonlyargcount && (a->flags & mask) == (b->flags & mask);
}

static int const_same(const dp_const *a, const dp_const *b, int depth);

/* Frozensets of the same items, whatever their order: a set's order
 * depends on the order it was built in, and the output lists the items in
 * the original's order, which the compiler may build into another (the
 * verdict depended on the hash seed).  Only where the order cannot show
 * (`x in {...}`) or is the hash seed's (see same_input): iterating the set
 * would show it.  Each
 * item of `a` is matched with a distinct item of `b`; past MAX_SET_MATCH
 * items only the same order is recognized (a set that large is rare). */
#define MAX_SET_MATCH 512
static int set_same(const dp_const *a, const dp_const *b, int depth) {
    if (a->kind != DP_CONST_FROZENSET || b->kind != DP_CONST_FROZENSET || a->n != b->n)
        return 0;
    int same_order = 1;
    for (size_t k = 0; k < a->n && same_order; k++)
        same_order = const_same(a->items[k], b->items[k], depth + 1);
    if (same_order || a->n > MAX_SET_MATCH)
        return same_order;
    unsigned char used[MAX_SET_MATCH] = {0};
    for (size_t k = 0; k < a->n; k++) {
        size_t q = 0;
        while (q < b->n && (used[q] || !const_same(a->items[k], b->items[q], depth + 1)))
            q++;
        if (q == b->n)
            return 0;
        used[q] = 1;
    }
    return 1;
}

static int const_same(const dp_const *a, const dp_const *b, int depth) {
    if (a->kind != b->kind || depth > 50)
        return 0;
    switch (a->kind) {
    case DP_CONST_INT: case DP_CONST_STR: case DP_CONST_BYTES: case DP_CONST_OTHER: case DP_CONST_OBJECT:
        return a->len == b->len && (a->len == 0 || memcmp(a->text, b->text, a->len) == 0);
    case DP_CONST_FLOAT: case DP_CONST_COMPLEX:
        return memcmp(&a->f, &b->f, sizeof a->f) == 0 &&
               (a->kind == DP_CONST_FLOAT || memcmp(&a->im, &b->im, sizeof a->im) == 0);
    case DP_CONST_TUPLE: case DP_CONST_FROZENSET:
        if (a->n != b->n)
            return 0;
        for (size_t k = 0; k < a->n; k++)
            if (!const_same(a->items[k], b->items[k], depth + 1))
                return 0;
        return 1;
    case DP_CONST_CODE:
        return code_sig_same(a->code, b->code);
    default:
        return 1;
    }
}

/* The persistent term of a constant (equal constants: one term). */
static int32_t const_term(eq *E, const dp_const *c) {
    if (c == NULL)
        return CANT("missing constant");
    if (E->nconst * 2 >= E->ccap) {
        int32_t cap = E->ccap ? E->ccap * 2 : 64;
        cent *n = calloc((size_t)cap, sizeof *n);
        if (n == NULL)
            return CANT("out of memory");
        for (int32_t k = 0; k < E->ccap; k++)
            if (E->ct[k].c) {
                int32_t i = (int32_t)(E->ct[k].h & (uint64_t)(cap - 1));
                while (n[i].c)
                    i = (i + 1) & (cap - 1);
                n[i] = E->ct[k];
            }
        free(E->ct);
        E->ct = n;
        E->ccap = cap;
    }
    uint64_t h = const_hash(c, 0);
    int32_t i = (int32_t)(h & (uint64_t)(E->ccap - 1));
    for (; E->ct[i].c; i = (i + 1) & (E->ccap - 1))
        if (E->ct[i].h == h && const_same(E->ct[i].c, c, 0))
            return E->ct[i].term;
    int32_t id = E->nconst;
    int32_t t = cons(E, T_CONST, id, 0, 0);
    int32_t cap = E->cidcap;
    int32_t *m = grow(E, E->const_term, &cap, E->nconst + 1, sizeof *m);
    if (m != NULL)
        E->const_term = m;
    cap = E->cidcap;
    const dp_const **pm = m ? grow(E, (void *)E->const_ptr, &cap, E->nconst + 1, sizeof *pm) : NULL;
    if (pm != NULL)
        E->const_ptr = pm;
    if (t < 0 || m == NULL || pm == NULL)
        return -1;
    E->cidcap = cap;
    E->const_term[id] = t;
    E->const_ptr[id] = c;
    E->nconst++;
    E->ct[i] = (cent){h, c, t};
    return t;
}

/* A term of `kind` (T_CELL, T_GLOBAL) for the variable `name`: a persistent term keyed
 * by the name's text. */
static int32_t named_term(eq *E, int kind, const char *name) {
    dp_const *c = dp_const_new(&E->ar, DP_CONST_STR);
    if (c == NULL)
        return CANT("out of memory");
    c->text = name ? name : "";
    c->len = strlen(c->text);
    int32_t ct = const_term(E, c);
    return ct < 0 ? -1 : cons(E, kind, E->t[ct].a, 0, 0);
}

/* Whether reads of the global `name` give one value throughout a run: with stable_globals
 * every global (the caller vouches for it), and always the names Dynamo binds for its
 * transformed code (compiled graphs, resume functions, imported modules, builtins dicts).
 * Dynamo sets those before the code runs and never rebinds them while it runs, and no
 * other code uses them; so `depyf.decompile` of Dynamo's code may move such a read (torch
 * 2.13 loads a graph's function before its profiler calls, and the call reads it after). */
static int stable_global(const eq *E, const char *name) {
    static const char *const dynamo[] = {"__compiled_fn_", "__resume_at_", "__import_", "__builtins_dict___"};
    if (E->stable_globals || (name && name[0] == '(')) /* (fold_function_type's terms) */
        return 1;
    for (size_t i = 0; name && i < sizeof dynamo / sizeof *dynamo; i++)
        if (strncmp(name, dynamo[i], strlen(dynamo[i])) == 0)
            return 1;
    return 0;
}

/* Truth of a constant, -1 when not known without running code. */
static int const_truth(const dp_const *c) {
    switch (c->kind) {
    case DP_CONST_NONE: case DP_CONST_FALSE: return 0;
    case DP_CONST_TRUE: case DP_CONST_ELLIPSIS: case DP_CONST_CODE: return 1;
    case DP_CONST_INT: return !(c->len == 1 && c->text[0] == '0');
    case DP_CONST_FLOAT: return c->f != 0.0;
    case DP_CONST_COMPLEX: return c->f != 0.0 || c->im != 0.0;
    case DP_CONST_STR: case DP_CONST_BYTES: return c->len != 0;
    case DP_CONST_TUPLE: case DP_CONST_FROZENSET: return c->n != 0;
    default: return -1;
    }
}

static const dp_const *const_of(eq *E, int32_t t) {
    return E->t[t].kind == T_CONST ? E->const_ptr[E->t[t].a] : NULL;
}

/* ------------------------------------------------------------------ sides */

static uint64_t str_hash(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

typedef struct namemap {
    const char **name;
    int32_t *slot;
    int32_t cap;
} namemap;

/* Slot of `name` in the map, added as slot *n if new; -1 on error. */
static int32_t name_slot(eq *E, namemap *m, const char *name, int32_t *n) {
    if (name == NULL)
        return CANT("fast local without a name");
    for (int32_t i = (int32_t)(str_hash(name) & (uint64_t)(m->cap - 1));; i = (i + 1) & (m->cap - 1)) {
        if (m->name[i] == NULL) {
            m->name[i] = name;
            m->slot[i] = (*n)++;
            return m->slot[i];
        }
        if (strcmp(m->name[i], name) == 0)
            return m->slot[i];
    }
}

static int is_fast_op(int op) {
    return op == IR_LOAD_FAST || op == IR_STORE_FAST || op == IR_DELETE_FAST || op == IR_LOAD_FAST_AND_CLEAR;
}

static int in_strs(const dp_strs *s, const char *name) {
    for (size_t k = 0; k < s->n; k++)
        if (s->v[k] && name && strcmp(s->v[k], name) == 0)
            return 1;
    return 0;
}

static int build_map(eq *E, side *S, namemap *m) {
    if ((int64_t)S->code->varnames.n + S->f.n > (1 << 26))
        return CANT("too many locals");
    m->cap = 16;
    while (m->cap < 2 * ((int64_t)S->code->varnames.n + S->f.n) + 2 && m->cap < (1 << 28))
        m->cap *= 2;
    m->name = dp_alloc_array(&E->ar, (size_t)m->cap, sizeof *m->name);
    m->slot = dp_alloc_array(&E->ar, (size_t)m->cap, sizeof *m->slot);
    if (m->name == NULL || m->slot == NULL)
        return CANT("out of memory");
    int32_t n = 0;
    for (size_t k = 0; k < S->code->varnames.n; k++)
        if (name_slot(E, m, S->code->varnames.v[k], &n) < 0)
            return -1;
    for (int32_t i = 0; i < S->f.n; i++) {
        const dp_instr *x = &S->f.ins[i];
        S->slot[i] = -1;
        if (!is_fast_op(x->op))
            continue;
        if (x->op == IR_LOAD_FAST && (in_strs(&S->code->cellvars, x->name) || in_strs(&S->code->freevars, x->name)))
            continue; /* 3.13 spells LOAD_CLOSURE so */
        if ((S->slot[i] = name_slot(E, m, x->name, &n)) < 0)
            return -1;
    }
    S->nloc = n;
    S->slotname = dp_alloc_array(&E->ar, (size_t)n + 1, sizeof *S->slotname);
    if (S->slotname == NULL)
        return CANT("out of memory");
    for (int32_t k = 0; k < m->cap; k++)
        if (m->name[k])
            S->slotname[m->slot[k]] = m->name[k];
    return 0;
}

/* Lifts one side and precomputes its per-instruction tables. */
/* The printer's names of constants with no literal form are those constants
 * (a name it made, read as a global: no code can rebind it first, as the
 * printed source never assigns it). */
static void load_named_consts(eq *E, dp_irfunc *f) {
    const size_t plen = sizeof DP_NONLITERAL_PREFIX - 1;
    for (int32_t i = 0; E->named && i < f->n; i++) {
        dp_instr *x = &f->ins[i];
        if ((x->op != IR_LOAD_GLOBAL && x->op != IR_LOAD_NAME) || x->name == NULL ||
            strncmp(x->name, DP_NONLITERAL_PREFIX, plen) != 0)
            continue;
        size_t k = 0;
        const char *d = x->name + plen;
        if (*d == '\0' || (*d == '0' && d[1] != '\0'))
            continue;
        for (; *d >= '0' && *d <= '9' && k <= E->named->n; d++)
            k = k * 10 + (size_t)(*d - '0');
        if (*d != '\0' || k >= E->named->n)
            continue;
        x->op = IR_LOAD_CONST;
        x->cst = E->named->v[k];
        x->name = NULL;
    }
}

static int setup_side(eq *E, int s, const dp_code *code, namemap *m) {
    side *S = &E->s[s];
    dp_error err;
    dp_error_init(&err);
    S->code = code;
    if (dp_lift(&E->ar, code, &S->f, &err) < 0)
        return CANT("%s: %s", s ? "recompiled code" : "original code", err.msg);
    if (s == 1)
        load_named_consts(E, &S->f);
    int32_t n = S->f.n;
    S->slot = dp_alloc_array(&E->ar, (size_t)n + 1, sizeof *S->slot);
    S->tcst = dp_alloc_array(&E->ar, (size_t)n + 1, sizeof *S->tcst);
    S->handler = dp_alloc_array(&E->ar, (size_t)n + 1, sizeof *S->handler);
    S->ran = dp_alloc_array(&E->ar, (size_t)n + 1, sizeof *S->ran);
    S->npat = dp_alloc_array(&E->ar, (size_t)n + 1, sizeof *S->npat);
    if (S->slot == NULL || S->tcst == NULL || S->handler == NULL || S->ran == NULL || S->npat == NULL)
        return CANT("out of memory");
    if (build_map(E, S, m) < 0)
        return -1;
    long long cap = (long long)(code->stacksize > 0 ? code->stacksize : 0) + STACK_MARGIN;
    if (cap > (1 << 20))
        return CANT("stack too deep");
    S->cap = (int)cap;
    for (int32_t i = 0; i < n; i++) {
        const dp_instr *x = &S->f.ins[i];
        S->tcst[i] = -1;
        if (x->target < -1 || x->target >= n)
            return CANT("jump target out of range");
        if (x->op == IR_LOAD_CLOSURE || (x->op == IR_LOAD_FAST && S->slot[i] < 0))
            S->tcst[i] = named_term(E, T_CELL, x->name);
        else if (x->op == IR_LOAD_GLOBAL && s == 0 && x->name && x->name[0] == '(')
            return CANT("a global named %s", x->name);
        else if (x->op == IR_LOAD_GLOBAL && stable_global(E, x->name))
            S->tcst[i] = named_term(E, T_GLOBAL, x->name);
        else if (x->cst)
            S->tcst[i] = const_term(E, x->cst);
        if (E->verdict != 1)
            return -1;
    }
    int r = dp_exc_cover(&E->ar, &S->f, S->handler); /* (the first entry covering each instruction) */
    if (r < 0)
        return r == -1 ? CANT("out of memory") : CANT("bad exception table entry");
    return 0;
}

/* Same parameters, kinds, cells and free variables.  Other locals are
 * compared by the values they hold (see used_locals_kept). */
static int same_signature(eq *E, const dp_code *a, const dp_code *b) {
    if (!code_sig_same(a, b))
        return NEQ("signature or kind (generator, coroutine) differs");
    long long nargs = (long long)a->argcount + a->kwonlyargcount + !!(a->flags & DP_CO_VARARGS) +
                      !!(a->flags & DP_CO_VARKEYWORDS);
    if (nargs > (long long)a->varnames.n || nargs > (long long)b->varnames.n)
        return CANT("argument counts do not match co_varnames");
    for (long long k = 0; k < nargs; k++)
        if (strcmp(a->varnames.v[k], b->varnames.v[k]) != 0)
            return NEQ("parameter %lld is %s, not %s", k, b->varnames.v[k], a->varnames.v[k]);
    const dp_strs *la[2] = {&a->cellvars, &a->freevars}, *lb[2] = {&b->cellvars, &b->freevars};
    for (int l = 0; l < 2; l++) {
        if (la[l]->n != lb[l]->n)
            return NEQ("%s differ", l ? "free variables" : "cell variables");
        for (size_t k = 0; k < la[l]->n; k++)
            if (!in_strs(lb[l], la[l]->v[k]))
                return NEQ("%s %s is missing", l ? "free variable" : "cell variable", la[l]->v[k]);
    }
    return 0;
}

/* ------------------------------------------------------------------ states and shapes */

static int state_init(eq *E, int s, sstate *st) {
    st->stack = dp_alloc_array(&E->ar, (size_t)E->s[s].cap + 1, sizeof *st->stack);
    st->loc = dp_alloc_array(&E->ar, (size_t)E->s[s].nloc + 1, sizeof *st->loc);
    return st->stack && st->loc ? 0 : CANT("out of memory");
}

static void state_copy(eq *E, int s, sstate *dst, const sstate *src) {
    dst->pc = src->pc;
    dst->sp = src->sp;
    dst->nb = src->nb;
    memcpy(dst->stack, src->stack, (size_t)src->sp * sizeof *dst->stack);
    memcpy(dst->loc, src->loc, (size_t)E->s[s].nloc * sizeof *dst->loc);
    memcpy(dst->blocks, src->blocks, (size_t)src->nb * sizeof *dst->blocks);
}

static int push(eq *E, int s, sstate *st, int32_t t) {
    if (t < 0)
        return -1;
    if (st->sp >= E->s[s].cap)
        return CANT("stack overflow at offset %d", E->s[s].f.ins[st->pc].offset);
    st->stack[st->sp++] = t;
    return 0;
}

static int32_t pop(eq *E, int s, sstate *st) {
    if (st->sp <= 0)
        return CANT("stack underflow at offset %d", E->s[s].f.ins[st->pc].offset);
    return st->stack[--st->sp];
}

static int need(eq *E, int s, const sstate *st, long long k) {
    if (k < 0 || st->sp < k)
        return CANT("stack underflow at offset %d", E->s[s].f.ins[st->pc].offset);
    return 0;
}

/* Literal shape code of a term, or 1 when it generalizes to a class.
 * Constants stay literal on the stack only (3.8 with blocks test for None
 * there); in locals they generalize, or every constant a loop or a try body
 * stores would make a shape of its own.  A stable global (one value per
 * name) stays literal everywhere. */
static int32_t literal(eq *E, int32_t t, int is_loc) {
    const term *x = &E->t[t];
    switch (x->kind) {
    case T_NULL: return C_NULL;
    case T_OPAQUE: return C_OPAQUE;
    case T_RET: return C_RET - x->a;
    case T_CONST: return is_loc ? 1 : C_CONST - x->a;
    case T_GLOBAL: return C_GLOBAL - x->a; /* one value per name: never generalized */
    default: return 1;
    }
}

/* A list built here (its type cannot be another). */
static int is_list(const eq *E, int32_t t) {
    const term *x = &E->t[t];
    return (x->kind == T_EV && x->c == EV_LIST) || (x->kind == T_VAR && (x->c & VAR_LIST)) ||
           (x->kind == T_NEW && x->a == IR_BUILD_LIST);
}

/* The bits a class carries: whether it is unbound (1) or maybe unbound
 * (2), and a known truth (1 true, 2 false). */
static int32_t class_bits(eq *E, int32_t t) {
    const term *x = &E->t[t];
    if (x->kind == T_UNBOUND)
        return 1 << 2;
    if (x->kind == T_EV || x->kind == T_NEW)
        return is_list(E, t) ? CB_LIST : 0;
    return x->kind == T_VAR ? (x->b << 2) | (x->c & 3) | (x->c & VAR_LIST ? CB_LIST : 0) : 0;
}

static int scratch(eq *E) {
    if (E->nt > E->scap) {
        int32_t cap = E->scap;
        int32_t *st = grow(E, E->stamp, &cap, E->nt, sizeof *st);
        if (st == NULL)
            return -1;
        E->stamp = st;
        memset(st + E->scap, 0, (size_t)(cap - E->scap) * sizeof *st);
        cap = E->scap;
        int32_t *cl = grow(E, E->cls, &cap, E->nt, sizeof *cl);
        if (cl == NULL)
            return -1;
        E->cls = cl;
        E->scap = cap;
    }
    E->cur_stamp++;
    return 0;
}

static int on_stack(const sstate *st, int32_t t) {
    for (int32_t k = 0; k < st->sp; k++)
        if (st->stack[k] == t)
            return 1;
    return 0;
}

/* The shape of a pair of states into `val` (A stack, A locals, B stack,
 * B locals): classes by first occurrence in A, B slots by A's class.
 * Constants on the stacks stay literal, unless E->widen: then A's become
 * classes like any value (and B's where A has them), which forgets only
 * what they are: `x is not None and 2` in 13 arguments made 2^13 shapes. */
static int shape_of(eq *E, const sstate *A, const sstate *B, int32_t *val) {
    if (scratch(E) < 0)
        return -1;
    int32_t ncls = 0, k = 0;
    const sstate *st[2] = {A, B};
    for (int s = 0; s < 2; s++) {
        int32_t n = st[s]->sp + E->s[s].nloc;
        for (int32_t p = 0; p < n; p++) {
            int is_loc = p >= st[s]->sp;
            int32_t t = is_loc ? st[s]->loc[p - st[s]->sp] : st[s]->stack[p];
            int32_t lit = literal(E, t, is_loc || (E->widen && s == 0));
            /* a constant B keeps on the stack where A keeps it in a local
             * (generalized there) takes A's class: the same value; where A
             * has it on the stack too, at the same place, it stays literal
             * as A's does */
            if (lit != 1 && !(s == 1 && !is_loc && E->t[t].kind == T_CONST && E->stamp[t] == E->cur_stamp &&
                              (E->widen || !(p < A->sp && A->stack[p] == t))))
                val[k++] = lit;
            else if (E->stamp[t] == E->cur_stamp)
                val[k++] = E->cls[t];
            else if (s == 1 && is_loc && E->t[t].kind == T_CONST && on_stack(A, t))
                val[k++] = C_CONST - E->t[t].a; /* a temporary of a constant A keeps on its stack: that constant */
            else if (s == 1 && E->t[t].kind == T_LIST_METHOD && E->stamp[E->t[t].a] == E->cur_stamp)
                val[k++] = C_LIST_METHOD - 3 * (E->cls[E->t[t].a] >> CB_SHIFT) - E->t[t].b; /* A value's method */
            else if (s == 1 && E->t[t].kind == T_NOT && E->stamp[E->t[t].a] == E->cur_stamp)
                val[k++] = C_LIST_METHOD - 3 * (E->cls[E->t[t].a] >> CB_SHIFT) - 2; /* `not in` of A's `in` */
            else if (s == 0) {
                E->stamp[t] = E->cur_stamp;
                val[k++] = E->cls[t] = (ncls++ << CB_SHIFT) | class_bits(E, t);
            } else
                val[k++] = C_OPAQUE;
        }
    }
    return 0;
}

static uint64_t shape_key(const int32_t *pc, const int32_t *sp, const int32_t *nb, const blk *b, const int32_t *val,
                          int32_t nval) {
    uint64_t h = 0;
    for (int s = 0; s < 2; s++)
        h = mix(mix(mix(h, (uint64_t)pc[s]), (uint64_t)sp[s]), (uint64_t)nb[s]);
    for (int32_t k = 0; k < nb[0] + nb[1]; k++)
        h = mix(mix(mix(h, (uint64_t)b[k].type), (uint64_t)b[k].handler), (uint64_t)b[k].level);
    for (int32_t k = 0; k < nval; k++)
        h = mix(h, (uint64_t)(val[k] >= 0 || val[k] == C_OPAQUE ? 1 : val[k]));
    return h;
}

/* Meet of a stored shape with a new shape `s` of the same literal
 * pattern, into `m`: classes equal in both stay; B slots keep a class only
 * where both shapes agree; a truth known in both stays known.  Pairs
 * (stored class, new class) get the meet's classes by first occurrence:
 * the first pair of each stored class in an array, the rare others (a
 * stored class split in two) searched in a list. */
static int meet(eq *E, const ventry *v, const int32_t *s, int32_t *m) {
    int32_t na = v->sp[0] + E->s[0].nloc, nval = na + v->sp[1] + E->s[1].nloc;
    int32_t *first = malloc(((size_t)na + 1) * 5 * sizeof *first);
    if (first == NULL)
        return CANT("out of memory");
    int32_t *fs = first, *fm = first + na + 1, *extra = first + 2 * ((size_t)na + 1), nextra = 0, np = 0;
    for (int32_t k = 0; k <= na; k++)
        fs[k] = -1;
    for (int32_t k = 0; k < nval; k++) {
        const int32_t a = v->val[k], b = s[k];
        if (a < 0 || b < 0) {
            m[k] = a == b ? a : (a < 0 && a != C_OPAQUE ? a : C_OPAQUE);
            continue;
        }
        int32_t tc = a >> CB_SHIFT, found = -1;
        if (tc > na) {
            free(first);
            return CANT("bad shape");
        }
        if (fs[tc] == b)
            found = fm[tc];
        else
            for (int32_t q = 0; q < nextra && found < 0; q++)
                if (extra[3 * q] == a && extra[3 * q + 1] == b)
                    found = extra[3 * q + 2];
        if (found < 0 && k < na) {
            int32_t ua = (a >> 2) & 3, ub = (b >> 2) & 3;
            found = (np++ << CB_SHIFT) | ((ua == ub ? ua : 2) << 2) | ((a & 3) == (b & 3) ? (a & 3) : 0) | (a & b & CB_LIST);
            if (fs[tc] < 0) {
                fs[tc] = b;
                fm[tc] = found;
            } else {
                extra[3 * nextra] = a;
                extra[3 * nextra + 1] = b;
                extra[3 * nextra + 2] = found;
                nextra++;
            }
        }
        m[k] = found < 0 ? C_OPAQUE : found;
    }
    free(first);
    return 0;
}

static int same_pattern(const ventry *v, const int32_t *pc, const int32_t *sp, const int32_t *nb, const blk *b,
                        const int32_t *val, int32_t nval) {
    for (int s = 0; s < 2; s++)
        if (v->pc[s] != pc[s] || v->sp[s] != sp[s] || v->nb[s] != nb[s])
            return 0;
    if (memcmp(v->blk, b, (size_t)(nb[0] + nb[1]) * sizeof *b) != 0)
        return 0;
    for (int32_t k = 0; k < nval; k++) {
        int32_t x = v->val[k], y = val[k];
        int lx = x < 0 && x != C_OPAQUE, ly = y < 0 && y != C_OPAQUE;
        if (lx != ly || (lx && x != y))
            return 0;
    }
    return 1;
}

/* Pairs wait in a heap ordered by position in the original, then in the
 * output: where paths meet after forward branches, every path is merged
 * into the pair's shape before it is explored, rather than exploring it
 * again for every path that arrives (a run of `if`s would exhaust the
 * explorations of the pairs after it). */
static int work_before(const eq *E, int32_t a, int32_t b) {
    const ventry *x = &E->v[a], *y = &E->v[b];
    return x->pc[0] != y->pc[0] ? x->pc[0] < y->pc[0] : x->pc[1] < y->pc[1];
}

static int queue(eq *E, int32_t vi) {
    if (E->v[vi].queued)
        return 0;
    if (++E->pairs > E->max_pairs)
        return CANT("too many states (%d)", E->max_pairs);
    if (++E->v[vi].explored > MAX_EXPLORE)
        return CANT("a loop whose values do not settle");
    int32_t *w = grow(E, E->work, &E->capwork, E->nwork + 1, sizeof *w);
    if (w == NULL)
        return -1;
    E->work = w;
    int32_t k = E->nwork++;
    for (; k > 0 && work_before(E, vi, w[(k - 1) / 2]); k = (k - 1) / 2)
        w[k] = w[(k - 1) / 2];
    w[k] = vi;
    E->v[vi].queued = 1;
    return 0;
}

/* The pair explored next: the first in program order. */
static int32_t unqueue(eq *E) {
    int32_t *w = E->work, top = w[0], last = w[--E->nwork], k = 0;
    for (;;) {
        int32_t c = 2 * k + 1;
        if (c >= E->nwork)
            break;
        if (c + 1 < E->nwork && work_before(E, w[c + 1], w[c]))
            c++;
        if (!work_before(E, w[c], last))
            break;
        w[k] = w[c];
        k = c;
    }
    w[k] = last;
    return top;
}

static int vtable_insert(eq *E, int32_t vi) {
    if (E->nv * 2 >= E->vhcap) {
        int32_t cap = E->vhcap ? E->vhcap * 2 : 256;
        int32_t *h = malloc((size_t)cap * sizeof *h);
        if (h == NULL)
            return CANT("out of memory");
        for (int32_t k = 0; k < cap; k++)
            h[k] = -1;
        free(E->vh);
        E->vh = h;
        E->vhcap = cap;
        for (int32_t k = 0; k < E->nv; k++)
            if (k != vi)
                E->v[k].next = -1;
        for (int32_t k = 0; k < E->nv; k++) {
            int32_t i = (int32_t)(E->v[k].key & (uint64_t)(cap - 1));
            E->v[k].next = E->vh[i];
            E->vh[i] = k;
        }
        return 0;
    }
    int32_t i = (int32_t)(E->v[vi].key & (uint64_t)(E->vhcap - 1));
    E->v[vi].next = E->vh[i];
    E->vh[i] = vi;
    return 0;
}

/* Meets a shape with the stored shape of its pattern: 0 when that covers
 * it (or it was widened and queued again), 1 when there is none. */
static int lookup_shape(eq *E, const int32_t *pc, const int32_t *sp, const int32_t *nb, const blk *b,
                        const int32_t *val, int32_t nval, uint64_t key) {
    for (int32_t vi = E->vh[key & (uint64_t)(E->vhcap - 1)]; vi >= 0; vi = E->v[vi].next) {
        ventry *v = &E->v[vi];
        if (v->key != key || !same_pattern(v, pc, sp, nb, b, val, nval))
            continue;
        int32_t *m = grow(E, E->smeet, &E->capsmeet, nval + 1, sizeof *m);
        if (m == NULL)
            return -1;
        E->smeet = m;
        if (meet(E, v, val, m) < 0)
            return -1;
        if (memcmp(m, v->val, (size_t)nval * sizeof *m) == 0)
            return 0; /* covered */
        memcpy(v->val, m, (size_t)nval * sizeof *m);
        return queue(E, vi);
    }
    return 1;
}

/* Records that states A (at A->pc) and B (at B->pc) must be explored
 * together, unless a stored shape already covers them. */
static int enqueue(eq *E, const sstate *A, const sstate *B) {
    if (E->verdict != 1)
        return -1;
    int32_t pc[2] = {A->pc, B->pc}, sp[2] = {A->sp, B->sp}, nb[2] = {A->nb, B->nb};
    int32_t nval = A->sp + E->s[0].nloc + B->sp + E->s[1].nloc;
    blk b[2 * MAX_BLOCKS];
    int32_t *val = grow(E, E->sval, &E->capsval, nval + 1, sizeof *val);
    if (val == NULL)
        return -1;
    E->sval = val;
    memcpy(b, A->blocks, (size_t)A->nb * sizeof *b);
    memcpy(b + A->nb, B->blocks, (size_t)B->nb * sizeof *b);
    /* past WIDEN_AFTER shapes at this place of the original, the shape
     * with the stack constants generalized: a covering shape then stops
     * paths that differ only in constants from multiplying */
    int32_t *npat = &E->s[0].npat[pc[0]];
    uint64_t key = 0;
    for (E->widen = 0; E->widen < 2; E->widen++) {
        if (E->widen && *npat < WIDEN_AFTER)
            break;
        if (shape_of(E, A, B, val) < 0)
            return -1;
        key = shape_key(pc, sp, nb, b, val, nval);
        int r = E->vhcap ? lookup_shape(E, pc, sp, nb, b, val, nval, key) : 1;
        if (r <= 0) {
            E->widen = 0;
            return r;
        }
    }
    E->widen = 0;
    ++*npat;
    ventry *nv = grow(E, E->v, &E->capv, E->nv + 1, sizeof *nv);
    if (nv == NULL)
        return -1;
    int32_t *kept = dp_alloc_array(&E->ar, (size_t)nval + 1, sizeof *kept);
    blk *kb = dp_alloc_array(&E->ar, (size_t)(A->nb + B->nb) + 1, sizeof *kb);
    if (kept == NULL || kb == NULL)
        return CANT("out of memory");
    memcpy(kept, val, (size_t)nval * sizeof *kept);
    memcpy(kb, b, (size_t)(A->nb + B->nb) * sizeof *kb);
    val = kept;
    E->v = nv;
    E->v[E->nv] = (ventry){{pc[0], pc[1]}, {sp[0], sp[1]}, {nb[0], nb[1]}, val, kb, key, -1, 0, 0};
    int32_t vi = E->nv++;
    if (vtable_insert(E, vi) < 0)
        return -1;
    return queue(E, vi);
}

/* The states of stored shape vi, with fresh variables for its classes. */
static int instantiate(eq *E, int32_t vi, sstate *A, sstate *B) {
    const ventry *v = &E->v[vi];
    E->gen++;
    E->nt = E->persist;
    E->nev = 0;
    E->nnew[0] = E->nnew[1] = 0;
    int32_t ncls = 0, nval = v->sp[0] + E->s[0].nloc + v->sp[1] + E->s[1].nloc;
    for (int32_t k = 0; k < nval; k++)
        if ((v->val[k] >> CB_SHIFT) >= ncls)
            ncls = (v->val[k] >> CB_SHIFT) + 1;
    int32_t base = E->nt;
    for (int32_t c = 0; c < ncls; c++)
        if (new_term(E, T_VAR, c, 0, 0) < 0)
            return -1;
    for (int32_t k = 0; k < nval; k++)
        if (v->val[k] >= 0) {
            E->t[base + (v->val[k] >> CB_SHIFT)].b = (v->val[k] >> 2) & 3;
            E->t[base + (v->val[k] >> CB_SHIFT)].c = (v->val[k] & 3) | (v->val[k] & CB_LIST ? VAR_LIST : 0);
        }
    sstate *st[2] = {A, B};
    int32_t k = 0;
    for (int s = 0; s < 2; s++) {
        st[s]->pc = v->pc[s];
        st[s]->sp = v->sp[s];
        st[s]->nb = v->nb[s];
        memcpy(st[s]->blocks, v->blk + (s ? v->nb[0] : 0), (size_t)v->nb[s] * sizeof(blk));
        int32_t n = v->sp[s] + E->s[s].nloc;
        for (int32_t p = 0; p < n; p++, k++) {
            int32_t c = v->val[k], t;
            if (c >= 0) t = ((c >> 2) & 3) == 1 ? E->unbound_t : base + (c >> CB_SHIFT);
            else if (c == C_NULL) t = E->null_t;
            else if (c == C_OPAQUE) t = E->opaque_t;
            else if (c <= C_LIST_METHOD && (C_LIST_METHOD - c) % 3 == 2) t = cons(E, T_NOT, base + (C_LIST_METHOD - c) / 3, 0, 0);
            else if (c <= C_LIST_METHOD) t = cons(E, T_LIST_METHOD, base + (C_LIST_METHOD - c) / 3, (C_LIST_METHOD - c) % 3, 0);
            else if (c <= C_GLOBAL) t = cons(E, T_GLOBAL, C_GLOBAL - c, 0, 0);
            else if (c <= C_CONST) t = E->const_term[C_CONST - c];
            else t = cons(E, T_RET, C_RET - c, s, 0);
            if (t < 0)
                return -1;
            if (p < v->sp[s]) st[s]->stack[p] = t;
            else st[s]->loc[p - v->sp[s]] = t;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ pure steps */

static int is_cond_jump(int op) { return dp_is_cond_jump(op) && op != IR_FOR_ITER; }

/* A conditional jump on a constant: taken or not without running code. */
static int const_jump(eq *E, int s, sstate *st, const dp_instr *x) {
    const term *t = &E->t[st->stack[st->sp - 1]];
    const dp_const *c = const_of(E, st->stack[st->sp - 1]);
    int none_test = x->op == IR_POP_JUMP_IF_NONE || x->op == IR_POP_JUMP_IF_NOT_NONE, truth;
    if (t->kind == T_VAR && (t->c & 3) && !none_test)
        truth = (t->c & 3) == 1; /* tested before on this path: the compiler threads such jumps */
    else if (c == NULL)
        return 0;
    else if (none_test)
        truth = c->kind == DP_CONST_NONE;
    else if ((truth = const_truth(c)) < 0)
        return 0;
    int jump = (x->op == IR_POP_JUMP_IF_TRUE || x->op == IR_POP_JUMP_IF_NONE || x->op == IR_JUMP_IF_TRUE_OR_POP)
                   ? truth
                   : !truth;
    if (x->op == IR_POP_JUMP_IF_NOT_NONE)
        jump = !truth;
    int keep = jump && (x->op == IR_JUMP_IF_FALSE_OR_POP || x->op == IR_JUMP_IF_TRUE_OR_POP);
    if (!keep)
        st->sp--;
    st->pc = jump ? x->target : st->pc + 1;
    (void)E;
    (void)s;
    return 1;
}

static int push_block(eq *E, sstate *st, int32_t type, int32_t handler, int32_t level) {
    if (st->nb >= MAX_BLOCKS)
        return CANT("blocks nested too deeply");
    st->blocks[st->nb++] = (blk){type, handler, level};
    return 0;
}

/* 3.8 POP_FINALLY: drops what entered a finally block (NULL, a return
 * address, or an exception with its handler block) from under the value
 * kept on top, if any. */
static int pop_finally(eq *E, int s, sstate *st, const dp_instr *x) {
    int32_t keep = -1, v;
    if (x->arg && (keep = pop(E, s, st)) < 0)
        return -1;
    if ((v = pop(E, s, st)) < 0)
        return -1;
    if (E->t[v].kind != T_NULL && E->t[v].kind != T_RET) {
        if (need(E, s, st, 5) < 0)
            return -1;
        if (st->nb == 0 || st->blocks[st->nb - 1].type != B_HANDLER)
            return CANT("POP_FINALLY outside an exception handler");
        st->nb--;
        st->sp -= 5;
    }
    if (keep >= 0 && push(E, s, st, keep) < 0)
        return -1;
    st->pc++;
    return 1;
}

/* Unbound, or unbound on some path to here (T_VAR with b = 2). */
static int maybe_unbound(const eq *E, int32_t t) {
    return t == E->unbound_t || (E->t[t].kind == T_VAR && E->t[t].b == 2);
}

/* Executes the instruction at st->pc if it is pure: 1 done, 0 it is an
 * observable operation (st unchanged), -1 error. */

/* pure_step's groups of instructions: SW_NOT_MINE for another group's,
 * SW_BREAK for a pure step done (pure_step moves on). */
enum { SW_NOT_MINE = 0x10000, SW_BREAK };


/* A tuple built of constants is the constant tuple: CPython's peephole pass
 * folds `LOAD_CONST a; LOAD_CONST b; BUILD_TUPLE 2` into `LOAD_CONST (a, b)`,
 * but 3.8 and 3.9 skip the pass for code whose line table has a large step
 * (a module whose text spans other lines than the original's).  0 (an
 * observable build) when an item is not a constant. */
#define MAX_FOLDED_TUPLE 256
static int folded_tuple(eq *E, int s, sstate *st, int n) {
    if (n > MAX_FOLDED_TUPLE || st->sp < n)
        return 0;
    for (int k = 0; k < n; k++)
        if (const_of(E, st->stack[st->sp - n + k]) == NULL)
            return 0;
    dp_const *c = dp_alloc(&E->ar, sizeof *c);
    dp_const **items = dp_alloc_array(&E->ar, (size_t)n, sizeof *items);
    if (c == NULL || items == NULL)
        return CANT("out of memory");
    memset(c, 0, sizeof *c);
    for (int k = 0; k < n; k++)
        items[k] = (dp_const *)const_of(E, st->stack[st->sp - n + k]);
    c->kind = DP_CONST_TUPLE;
    c->items = items;
    c->n = (size_t)n;
    int32_t t = const_term(E, c);
    if (t < 0)
        return -1;
    st->sp -= n;
    if (push(E, s, st, t) < 0)
        return -1;
    return SW_BREAK;
}

/* Loads, stores and stack shuffles (pure_step): SW_NOT_MINE for the others. */
static int pure_value(eq *E, int s, sstate *st) {
    side *S = &E->s[s];
    const dp_instr *x = &S->f.ins[st->pc];
    int32_t t;
    switch (x->op) {
    case IR_NOP:
        if (x->arg2 == DP_NOP_TO_BOOL)
            return 0;
        return SW_BREAK;
    case IR_RETURN_GENERATOR:
        return SW_BREAK;
    case IR_LOAD_GLOBAL: /* a stable global: one term for the whole run */
        if (!stable_global(E, x->name))
            return 0;
        if (push(E, s, st, S->tcst[st->pc]) < 0)
            return -1;
        return SW_BREAK;
    case IR_LOAD_CONST: case IR_LOAD_CLOSURE:
        if (push(E, s, st, S->tcst[st->pc]) < 0)
            return -1;
        return SW_BREAK;
    case IR_BUILD_SLICE: /* a slice object runs no code: the slice of its bounds */
        if ((x->arg != 2 && x->arg != 3) || need(E, s, st, x->arg) < 0)
            return x->arg != 2 && x->arg != 3 ? CANT("bad BUILD_SLICE") : -1;
        t = cons(E, T_SLICE, st->stack[st->sp - x->arg], st->stack[st->sp - x->arg + 1],
                 x->arg == 3 ? st->stack[st->sp - 1] : E->none_t);
        st->sp -= x->arg;
        if (t < 0 || push(E, s, st, t) < 0)
            return -1;
        return SW_BREAK;
    case IR_BUILD_LIST: case IR_BUILD_MAP: case IR_BUILD_SET:
        /* an empty container runs no code: the k-th one made on one side is
         * the k-th on the other, whenever each was made */
        if (x->arg != 0)
            return 0;
        if ((t = cons(E, T_NEW, x->op, E->nnew[s]++, 0)) < 0 || push(E, s, st, t) < 0)
            return -1;
        return SW_BREAK;
    case IR_BUILD_TUPLE: /* `()` is the constant the compiler folds it to */
        if (x->arg != 0)
            return folded_tuple(E, s, st, x->arg);
        if (push(E, s, st, E->empty_tuple_t) < 0)
            return -1;
        return SW_BREAK;
    case IR_LOAD_FAST:
        if (S->slot[st->pc] < 0) {
            if (push(E, s, st, S->tcst[st->pc]) < 0)
                return -1;
            return SW_BREAK;
        }
        if (maybe_unbound(E, t = st->loc[S->slot[st->pc]]))
            return 0;
        if (push(E, s, st, t) < 0)
            return -1;
        return SW_BREAK;
    case IR_STORE_FAST:
        if ((t = pop(E, s, st)) < 0)
            return -1;
        st->loc[S->slot[st->pc]] = t;
        return SW_BREAK;
    case IR_DELETE_FAST:
        if (maybe_unbound(E, st->loc[S->slot[st->pc]]))
            return 0;
        st->loc[S->slot[st->pc]] = E->unbound_t;
        return SW_BREAK;
    case IR_LOAD_FAST_AND_CLEAR:
        if (push(E, s, st, st->loc[S->slot[st->pc]]) < 0)
            return -1;
        st->loc[S->slot[st->pc]] = E->unbound_t;
        return SW_BREAK;
    case IR_POP_TOP:
        if (pop(E, s, st) < 0)
            return -1;
        return SW_BREAK;
    case IR_COPY:
        if (x->arg < 1 || need(E, s, st, x->arg) < 0 || push(E, s, st, st->stack[st->sp - x->arg]) < 0)
            return x->arg < 1 ? CANT("bad COPY") : -1;
        return SW_BREAK;
    case IR_SWAP:
        if (x->arg < 2 || need(E, s, st, x->arg) < 0)
            return x->arg < 2 ? CANT("bad SWAP") : -1;
        t = st->stack[st->sp - 1];
        st->stack[st->sp - 1] = st->stack[st->sp - x->arg];
        st->stack[st->sp - x->arg] = t;
        return SW_BREAK;
    case IR_PUSH_NULL: case IR_BEGIN_FINALLY:
        if (push(E, s, st, E->null_t) < 0)
            return -1;
        return SW_BREAK;
    case IR_JUMP:
        st->pc = x->target;
        return 1;
    default:
        return SW_NOT_MINE;
    }
}

/* Identity tests, method loads, jumps and the block stack (pure_step): SW_NOT_MINE for the others. */
static int pure_flow(eq *E, int s, sstate *st) {
    side *S = &E->s[s];
    const dp_instr *x = &S->f.ins[st->pc];
    int32_t t, u;
    switch (x->op) {
    case IR_IS:
        if ((u = pop(E, s, st)) < 0 || (t = pop(E, s, st)) < 0 || push(E, s, st, cons(E, T_IS, t, u, x->arg != 0)) < 0)
            return -1;
        return SW_BREAK;
    case IR_LOAD_METHOD: { /* `lst.extend`, `lst.append` of a list built here: no lookup runs code */
        int32_t obj = st->sp > 0 ? st->stack[st->sp - 1] : -1;
        int append = x->name != NULL && strcmp(x->name, "append") == 0;
        if (obj < 0 || !is_list(E, obj) || x->name == NULL || (!append && strcmp(x->name, "extend") != 0))
            return 0;
        st->sp--;
        int32_t m = cons(E, T_LIST_METHOD, obj, append, 0);
        if (m < 0 || push(E, s, st, E->lay.method_load_null_last ? m : E->null_t) < 0 ||
            push(E, s, st, E->lay.method_load_null_last ? E->null_t : m) < 0)
            return -1;
        return SW_BREAK;
    }
    case IR_POP_JUMP_IF_FALSE: case IR_POP_JUMP_IF_TRUE: case IR_POP_JUMP_IF_NONE: case IR_POP_JUMP_IF_NOT_NONE:
    case IR_JUMP_IF_FALSE_OR_POP: case IR_JUMP_IF_TRUE_OR_POP:
        if (need(E, s, st, 1) < 0)
            return -1;
        return const_jump(E, s, st, x);
    case IR_SETUP_FINALLY: case IR_SETUP_ASYNC_WITH:
        if (!E->lay.block_stack || need(E, s, st, x->op == IR_SETUP_ASYNC_WITH) < 0)
            return !E->lay.block_stack ? CANT("SETUP_FINALLY in 3.11+ code") : -1;
        if (push_block(E, st, B_SETUP, x->target, st->sp - (x->op == IR_SETUP_ASYNC_WITH)) < 0)
            return -1;
        return SW_BREAK;
    case IR_POP_BLOCK:
        if (st->nb == 0)
            return CANT("POP_BLOCK without a block");
        st->nb--;
        return SW_BREAK;
    case IR_CALL_FINALLY:
        if (push(E, s, st, cons(E, T_RET, st->pc + 1, s, 0)) < 0)
            return -1;
        st->pc = x->target;
        return 1;
    case IR_END_FINALLY:
        if (need(E, s, st, 1) < 0)
            return -1;
        t = st->stack[st->sp - 1];
        if (E->t[t].kind == T_NULL) {
            st->sp--;
            return SW_BREAK;
        }
        if (E->t[t].kind == T_RET) {
            st->sp--;
            if (E->t[t].a < 0 || E->t[t].a >= S->f.n)
                return CANT("bad finally return address");
            st->pc = E->t[t].a;
            return 1;
        }
        return 0;
    case IR_POP_FINALLY:
        return pop_finally(E, s, st, x);
    default:
        return SW_NOT_MINE;
    }
}

static int pure_step(eq *E, int s, sstate *st) {
    E->s[s].ran[st->pc] = 1;
    int res = pure_value(E, s, st);
    if (res == SW_NOT_MINE)
        res = pure_flow(E, s, st);
    if (res == SW_NOT_MINE)
        return 0; /* (an observable operation) */
    if (res != SW_BREAK)
        return res;
    st->pc++;
    return 1;
}

enum { OB_OBSERVE, OB_DIVERGE, OB_ERROR };

/* Runs side s until an observable operation (or a cycle of pure steps). */
static int run(eq *E, int s, sstate *st) {
    int32_t n = E->s[s].f.n;
    for (long k = 0;; k++) {
        if (++E->steps > E->max_steps)
            return CANT("too many steps"), OB_ERROR;
        if (k > 2L * n + 16)
            return OB_DIVERGE;
        if (st->pc < 0 || st->pc >= n)
            return CANT("%s code runs off its end", s ? "recompiled" : "original"), OB_ERROR;
        int r = pure_step(E, s, st);
        if (r < 0 || E->verdict != 1)
            return OB_ERROR;
        if (r == 0)
            return OB_OBSERVE;
    }
}

/* ------------------------------------------------------------------ exceptions */

static int32_t ev(eq *E, int32_t n, int32_t k) { return cons(E, T_EV, n, k, 0); }

static long long popped(const eq *E, const dp_instr *x);

/* Sends an exception raised at st->pc to its handler: exc[0..2] = type,
 * value, traceback before 3.11 (then prev[0..2] is the exception being
 * handled, saved under them), exc[0] = the exception from 3.11 on.
 * Returns 1 with st at the handler, 0 when the exception leaves the code. */
static int raise_to(eq *E, int s, sstate *st, const int32_t *exc, const int32_t *prev) {
    side *S = &E->s[s];
    if (!E->lay.block_stack) {
        int32_t h = S->handler[st->pc];
        if (h < 0)
            return 0;
        const dp_exc_entry *e = &S->f.exc[h];
        if (need(E, s, st, e->depth) < 0)
            return -1;
        st->sp = e->depth;
        if ((e->lasti && push(E, s, st, E->lasti_t) < 0) || push(E, s, st, exc[0]) < 0)
            return -1;
        st->pc = e->target;
        return 1;
    }
    /* CPython unwinds from the stack the raising instruction leaves: what it
     * popped is gone, a call's result is NULL in its place.  Compiled code
     * never pops below a block's level, where the stack before the
     * instruction tells the same; Dynamo's does (a call of values it
     * carried into a with's try/finally). */
    const dp_instr *x = &S->f.ins[st->pc];
    long long left = st->sp - popped(E, x);
    while (st->nb > 0) {
        blk b = st->blocks[--st->nb];
        if (b.level <= left) {
            if (need(E, s, st, b.level) < 0)
                return -1;
            st->sp = b.level;
        } else if (b.type == B_SETUP && x->op == IR_CALL && left >= 0) {
            st->sp = (int32_t)left;
            if (push(E, s, st, E->null_t) < 0)
                return -1;
        } else {
            return CANT("an exception at offset %d with the stack below its block's level", x->offset);
        }
        left = st->sp;
        if (b.type == B_HANDLER)
            continue;
        if (push_block(E, st, B_HANDLER, -1, st->sp) < 0)
            return -1;
        for (int k = 2; k >= 0; k--)
            if (push(E, s, st, prev[k]) < 0)
                return -1;
        for (int k = 2; k >= 0; k--)
            if (push(E, s, st, exc[k]) < 0)
                return -1;
        st->pc = b.handler;
        return 1;
    }
    return 0;
}

/* Both sides raise at their current instruction (states before it ran):
 * their handlers must correspond. */
static int raise_both(eq *E, const sstate *A, const sstate *B, const int32_t *excA, const int32_t *excB,
                      int32_t n) {
    sstate *ta = &E->tmp[0][5], *tb = &E->tmp[1][5];
    int32_t prev[3];
    for (int k = 0; k < 3; k++)
        if ((prev[k] = ev(E, n, PREV_TYPE + k)) < 0)
            return -1;
    state_copy(E, 0, ta, A);
    state_copy(E, 1, tb, B);
    int ra = raise_to(E, 0, ta, excA, prev), rb = raise_to(E, 1, tb, excB, prev);
    if (ra < 0 || rb < 0)
        return -1;
    if (ra != rb)
        return NEQ("an exception at offset %d %s, at offset %d %s", E->s[0].f.ins[A->pc].offset,
                   ra ? "is handled" : "leaves the function", E->s[1].f.ins[B->pc].offset,
                   rb ? "is handled" : "leaves the function");
    return ra ? enqueue(E, ta, tb) : 0;
}

/* An operation at A->pc / B->pc that raises a new exception (if it can). */
static int may_raise(eq *E, const sstate *A, const sstate *B, int32_t n) {
    int has = E->lay.block_stack ? (A->nb || B->nb) : (E->s[0].handler[A->pc] >= 0 || E->s[1].handler[B->pc] >= 0);
    if (!has)
        return 0;
    int32_t exc[3];
    for (int k = 0; k < 3; k++)
        if ((exc[k] = ev(E, n, EXC_TYPE + k)) < 0)
            return -1;
    return raise_both(E, A, B, exc, exc, n);
}

/* ------------------------------------------------------------------ events */

/* Stack effect of an ordinary event: it reads the top `pops + peek`
 * values, removes `pops` of them and pushes `pushes` results (irop.c's
 * effect, its kept inputs peeked at).  -1 for operations handled elsewhere
 * (stack shuffles, locals, jumps, the block stack) or unknown. */
static int arity(const eq *E, const dp_instr *x, long long *pops, long long *peek, long long *pushes) {
    *peek = 0;
    *pushes = 0;
    switch (x->op) {
    case IR_LOAD_CONST: case IR_LOAD_FAST: case IR_LOAD_CLOSURE: case IR_LOAD_FAST_AND_CLEAR: case IR_STORE_FAST:
    case IR_DELETE_FAST: case IR_PUSH_NULL: case IR_IS: case IR_LIST_APPEND: case IR_SET_ADD: case IR_MAP_ADD:
    case IR_LIST_EXTEND: case IR_SET_UPDATE: case IR_DICT_UPDATE: case IR_DICT_MERGE: case IR_POP_TOP: case IR_COPY:
    case IR_SWAP: case IR_RETURN_GENERATOR: case IR_WITH_EXCEPT_START:
        return -1;
    case IR_END_FINALLY: /* (3.8: what the checker models of it) */
        *pops = 3;
        return 0;
    case IR_END_ASYNC_FOR:
        if (E->lay.block_stack) { /* (the handler's values are the block stack's) */
            *pops = 0;
            *peek = 1;
            return 0;
        }
        break;
    default:
        break;
    }
    int flags = dp_op_info(x->op)->flags;
    if ((flags & DP_IRF_JUMP && x->op != IR_FOR_ITER) || (flags & DP_IRF_BLOCK && x->op != IR_SETUP_WITH))
        return -1;
    dp_effect e;
    if (dp_ir_effect(x, &E->lay, 0, &e) < 0)
        return -1;
    *pops = e.in - e.keep;
    *peek = e.keep;
    *pushes = e.out - e.keep;
    return 0;
}

/* How many values an instruction that raises has popped (3.8-3.10); those
 * of an operation the checker does not model are not counted. */
static long long popped(const eq *E, const dp_instr *x) {
    long long pops, peek, pushes;
    switch (x->op) {
    case IR_LIST_APPEND: case IR_SET_ADD: case IR_LIST_EXTEND: case IR_SET_UPDATE: case IR_DICT_UPDATE:
    case IR_DICT_MERGE: case IR_WITH_CLEANUP_START:
        return 1;
    case IR_MAP_ADD: case IR_WITH_CLEANUP_FINISH:
        return 2;
    default:
        return arity(E, x, &pops, &peek, &pushes) < 0 ? 0 : pops;
    }
}

/* Net stack need and effect of an instruction allowed inside an argument
 * of a call folded by fold_list_calls: straight-line expression code only
 * (no jump, store other than a local, yield, block or handler operation).
 * 0 when allowed. */
static int arg_effect(const eq *E, const dp_instr *x, long long *need_n, long long *delta) {
    long long pops, peek, pushes;
    if (x->target >= 0)
        return -1;
    switch (x->op) {
    case IR_NOP:
        *need_n = x->arg2 == DP_NOP_TO_BOOL; *delta = 0; return 0;
    case IR_LOAD_CONST: case IR_LOAD_FAST: case IR_LOAD_CLOSURE: case IR_PUSH_NULL:
        *need_n = 0; *delta = 1; return 0;
    case IR_STORE_FAST: case IR_POP_TOP:
        *need_n = 1; *delta = -1; return 0;
    case IR_COPY:
        *need_n = x->arg; *delta = 1; return x->arg >= 1 ? 0 : -1;
    case IR_SWAP:
        *need_n = x->arg; *delta = 0; return x->arg >= 2 ? 0 : -1;
    case IR_LIST_APPEND: case IR_SET_ADD: case IR_LIST_EXTEND: case IR_SET_UPDATE: case IR_DICT_UPDATE:
    case IR_DICT_MERGE:
        *need_n = (long long)x->arg + 1; *delta = -1; return x->arg >= 1 ? 0 : -1;
    case IR_MAP_ADD:
        *need_n = (long long)x->arg + 2; *delta = -2; return x->arg >= 1 ? 0 : -1;
    case IR_LOAD_NAME: case IR_LOAD_GLOBAL: case IR_LOAD_DEREF: case IR_LOAD_CLASSDEREF: case IR_LOAD_ATTR:
    case IR_LOAD_METHOD: case IR_LOAD_SUPER_ATTR: case IR_UNARY: case IR_BINARY_OP: case IR_COMPARE:
    case IR_CONTAINS: case IR_IS: case IR_BINARY_SUBSCR: case IR_BINARY_SLICE: case IR_BUILD_SLICE:
    case IR_CALL: case IR_CALL_EX: case IR_MAKE_FUNCTION: case IR_SET_FUNCTION_ATTRIBUTE:
    case IR_CALL_INTRINSIC_1: case IR_CALL_INTRINSIC_2: case IR_BUILD_TUPLE: case IR_BUILD_LIST:
    case IR_BUILD_SET: case IR_BUILD_MAP: case IR_BUILD_CONST_KEY_MAP: case IR_BUILD_STRING: case IR_BUILD_UNPACK:
    case IR_LIST_TO_TUPLE: case IR_FORMAT_VALUE: case IR_CONVERT_VALUE:
        if (x->op == IR_IS) {
            pops = 2; peek = 0; pushes = 1;
        } else if (arity(E, x, &pops, &peek, &pushes) < 0) {
            return -1;
        }
        *need_n = pops + peek; *delta = pushes - pops; return 0;
    default:
        return -1;
    }
}

/* S->ran as scratch: 1 where a jump or an exception handler enters. */
static uint8_t *mark_entered(side *S) {
    uint8_t *entered = S->ran;
    memset(entered, 0, (size_t)S->f.n + 1);
    for (int32_t i = 0; i < S->f.n; i++)
        if (S->f.ins[i].target >= 0)
            entered[S->f.ins[i].target] = 1;
    for (int32_t k = 0; k < S->f.nexc; k++)
        entered[S->f.exc[k].target] = 1;
    return entered;
}

/* 3.10+ compiles a call with many positional arguments as
 *   BUILD_LIST 0; (arg; LIST_APPEND 1)...; LIST_TO_TUPLE; CALL_EX 0
 * where other code (Dynamo's, an older compiler's) says CALL n.  The list is
 * fresh and never escapes: each argument is straight-line code that only
 * touches the values it pushed itself (the list sits below them), nothing
 * jumps into the run, and one exception handler covers it all (its depth
 * lies below the list, so a raise discards list and arguments alike).  Then
 * the appends run no code and the call receives the same values in the same
 * order: the run is rewritten to CALL n with the list operations as NOPs. */
static void fold_list_calls(eq *E, side *S) {
    int32_t n = S->f.n;
    dp_instr *ins = S->f.ins;
    uint8_t *entered = mark_entered(S);
    for (int32_t i = 0; i < n; i++) {
        if (ins[i].op != IR_BUILD_LIST || ins[i].arg != 0)
            continue;
        long long d = 0, need_n = 0, delta = 0;
        int32_t nargs = 0, j;
        for (j = i + 1; j < n; j++) {
            const dp_instr *x = &ins[j];
            if (entered[j] || S->handler[j] != S->handler[i])
                break;
            if (x->op == IR_LIST_APPEND && x->arg == d) { /* onto our list */
                if (d != 1)
                    break;
                nargs++;
                d = 0;
                continue;
            }
            if (x->op == IR_LIST_TO_TUPLE && d == 0)
                break;
            if (arg_effect(E, x, &need_n, &delta) < 0 || need_n > d)
                break;
            d += delta;
        }
        if (j + 1 >= n || ins[j].op != IR_LIST_TO_TUPLE || d != 0 || ins[j + 1].op != IR_CALL_EX ||
            (ins[j + 1].arg & 1) || entered[j + 1] || S->handler[j + 1] != S->handler[i])
            continue;
        d = 0;
        for (int32_t k = i; k <= j; k++) {
            if (k == i || k == j || (ins[k].op == IR_LIST_APPEND && ins[k].arg == d && d == 1)) {
                ins[k].op = IR_NOP;
                ins[k].arg = ins[k].arg2 = 0;
                d = 0;
                continue;
            }
            arg_effect(E, &ins[k], &need_n, &delta);
            d += delta;
        }
        ins[j + 1].op = IR_CALL;
        ins[j + 1].arg = nargs;
        ins[j + 1].arg2 &= DP_CALL_PAIR;
        ins[j + 1].cst = NULL;
    }
    memset(entered, 0, (size_t)n + 1);
}

/* x becomes `op` on `name` with no argument (the folds' rewrites). */
static void rewrite(dp_instr *x, int op, const char *name) {
    x->op = op;
    x->arg = x->arg2 = 0;
    x->cst = NULL;
    x->name = name;
}

/* The output spells a cell itself (LOAD_CLOSURE: Dynamo hands closure tuples
 * to the helpers that build its functions) as `(lambda: v).__closure__[0]`:
 *   <cell v>; BUILD_TUPLE 1; LOAD_CONST <lambda code>; MAKE_FUNCTION closure
 *   (3.13: MAKE_FUNCTION; SET_FUNCTION_ATTRIBUTE closure); LOAD_ATTR
 *   __closure__; LOAD_CONST 0; BINARY_SUBSCR
 * The new function's closure is the one-cell tuple just built, so the result
 * is that cell, whatever the lambda would do if called (it never is): the
 * run is the cell load followed by NOPs.  Nothing may jump into the run. */
static int is_cell_load(const side *S, int32_t i) {
    const dp_instr *x = &S->f.ins[i];
    return x->op == IR_LOAD_CLOSURE || (x->op == IR_LOAD_FAST && S->slot[i] < 0);
}

static void fold_cell_idioms(side *S) {
    int32_t n = S->f.n;
    dp_instr *ins = S->f.ins;
    uint8_t *entered = mark_entered(S);
    for (int32_t i = 0; i < n; i++) {
        if (!is_cell_load(S, i))
            continue;
        int32_t at[8], m = 0;
        for (int32_t j = i + 1; j < n && m < 8; j++) {
            if (entered[j] || S->handler[j] != S->handler[i])
                break;
            if (ins[j].op != IR_NOP)
                at[m++] = j;
        }
        if (m < 6)
            continue;
        const dp_instr *t = &ins[at[0]], *c = &ins[at[1]], *f = &ins[at[2]];
        int k = 3;
        if (t->op != IR_BUILD_TUPLE || t->arg != 1 || c->op != IR_LOAD_CONST || c->cst == NULL ||
            c->cst->kind != DP_CONST_CODE || c->cst->code == NULL || strcmp(c->cst->code->name, "<lambda>") != 0 ||
            f->op != IR_MAKE_FUNCTION)
            continue;
        if (f->arg == 0 && ins[at[k]].op == IR_SET_FUNCTION_ATTRIBUTE && ins[at[k]].arg == DP_FN_CLOSURE)
            k++;
        else if (f->arg != DP_FN_CLOSURE)
            continue;
        if (k + 2 >= m || ins[at[k]].op != IR_LOAD_ATTR || ins[at[k]].name == NULL ||
            strcmp(ins[at[k]].name, "__closure__") != 0 || ins[at[k + 1]].op != IR_LOAD_CONST ||
            ins[at[k + 1]].cst == NULL || ins[at[k + 1]].cst->kind != DP_CONST_INT || ins[at[k + 1]].cst->text == NULL ||
            strcmp(ins[at[k + 1]].cst->text, "0") != 0 || ins[at[k + 2]].op != IR_BINARY_SUBSCR)
            continue;
        for (int q = 0; q <= k + 2; q++)
            rewrite(&ins[at[q]], IR_NOP, NULL);
    }
    memset(entered, 0, (size_t)n + 1);
}

/* The output makes a function that no def can write (dc_function_by_value)
 * as a call of the function type, `(lambda: 0).__class__(code,
 * (lambda: 0).__globals__, None, defaults, closure)`.  Any lambda's class is
 * the function type and its globals are the frame's, which MAKE_FUNCTION
 * uses: the runs
 *   LOAD_CONST <lambda code>; MAKE_FUNCTION 0; LOAD_METHOD __class__
 *   LOAD_CONST <lambda code>; MAKE_FUNCTION 0; LOAD_ATTR __globals__
 * become loads of two terms no real global can be ("(...)" is no
 * identifier; the original may not name such a global, setup_side), and
 * function_by_value_call matches the call with the original's
 * MAKE_FUNCTION.  Nothing may jump into a run.  Candidate side only. */
static const char FN_TYPE[] = "(lambda: 0).__class__", FN_GLOBALS[] = "(lambda: 0).__globals__";

static void fold_function_type(eq *E, side *S) {
    int32_t n = S->f.n;
    dp_instr *ins = S->f.ins;
    uint8_t *entered = mark_entered(S);
    for (int32_t i = 0; i + 2 < n; i++) {
        dp_instr *c = &ins[i], *f = &ins[i + 1], *a = &ins[i + 2];
        if (c->op != IR_LOAD_CONST || c->cst == NULL || c->cst->kind != DP_CONST_CODE || c->cst->code == NULL ||
            strcmp(c->cst->code->name, "<lambda>") != 0 || f->op != IR_MAKE_FUNCTION || f->arg != 0 ||
            entered[i + 1] || entered[i + 2] || S->handler[i + 1] != S->handler[i] ||
            S->handler[i + 2] != S->handler[i] || a->name == NULL)
            continue;
        int method = a->op == IR_LOAD_METHOD && strcmp(a->name, "__class__") == 0;
        int globals = a->op == IR_LOAD_ATTR && strcmp(a->name, "__globals__") == 0;
        if (!method && !globals)
            continue;
        /* LOAD_METHOD of an attribute: [NULL, attr] ([attr, NULL] from 3.13 on) */
        dp_instr *load = method && E->lay.method_load_null_last ? f : a;
        dp_instr *null = method ? (E->lay.method_load_null_last ? a : f) : NULL;
        rewrite(c, IR_NOP, NULL);
        if (null)
            rewrite(null, IR_PUSH_NULL, NULL);
        else
            rewrite(f, IR_NOP, NULL);
        rewrite(load, IR_LOAD_GLOBAL, method ? FN_TYPE : FN_GLOBALS);
        S->tcst[load - ins] = method ? E->fn_type_t : E->fn_globals_t;
        S->tcst[i] = -1;
        i += 2;
    }
    memset(entered, 0, (size_t)n + 1);
}

/* Stack positions an event reads: the top `pops + peek` values, or, for the
 * operations that reach below their operands, those slots. */
static int inputs(eq *E, int s, const sstate *st, const dp_instr *x, int32_t *pos, int32_t max) {
    long long pops, peek, pushes, a = x->arg, sp = st->sp;
    int32_t n = 0;
    switch (x->op) {
    case IR_LIST_APPEND: case IR_SET_ADD: case IR_LIST_EXTEND: case IR_SET_UPDATE: case IR_DICT_UPDATE:
    case IR_DICT_MERGE:
        if (a < 1 || need(E, s, st, a + 1) < 0)
            return a < 1 ? CANT("bad collection depth") : -1;
        pos[n++] = (int32_t)(sp - 1 - a);
        pos[n++] = (int32_t)(sp - 1);
        return n;
    case IR_MAP_ADD:
        if (a < 1 || need(E, s, st, a + 2) < 0)
            return a < 1 ? CANT("bad collection depth") : -1;
        pos[n++] = (int32_t)(sp - 2 - a);
        pos[n++] = (int32_t)(sp - 2);
        pos[n++] = (int32_t)(sp - 1);
        return n;
    case IR_WITH_EXCEPT_START: {
        int below = E->lay.block_stack ? 7 : 4;
        if (need(E, s, st, below) < 0)
            return -1;
        pos[n++] = (int32_t)(sp - below);
        for (int k = 1; k <= (E->lay.block_stack ? 3 : 1); k++)
            pos[n++] = (int32_t)(sp - k);
        return n;
    }
    case IR_WITH_CLEANUP_START: {
        if (need(E, s, st, 2) < 0)
            return -1;
        int exc = E->t[st->stack[sp - 1]].kind != T_NULL;
        if (exc && need(E, s, st, 7) < 0)
            return -1;
        pos[n++] = (int32_t)(sp - (exc ? 7 : 2));
        for (int k = 1; exc && k <= 3; k++)
            pos[n++] = (int32_t)(sp - k);
        return n;
    }
    case IR_WITH_CLEANUP_FINISH:
        if (need(E, s, st, 2) < 0)
            return -1;
        pos[n++] = (int32_t)(sp - 2);
        pos[n++] = (int32_t)(sp - 1);
        return n;
    case IR_LOAD_FAST: case IR_DELETE_FAST: /* of an unbound local */
        return 0;
    }
    if (arity(E, x, &pops, &peek, &pushes) < 0)
        return CANT("%s is not modelled by the checker", dp_irop_name(x->op));
    if (pops + peek > max)
        return CANT("%s takes too many values", dp_irop_name(x->op));
    if (need(E, s, st, pops + peek) < 0)
        return -1;
    for (long long k = sp - pops - peek; k < sp; k++)
        pos[n++] = (int32_t)k;
    if ((x->op == IR_CALL || x->op == IR_CALL_EX) && (x->arg2 & DP_CALL_PAIR) && n >= 2) {
        /* [NULL, f] and [f, NULL] (3.13) call f as a plain callable does */
        int k = st->stack[pos[0]] == E->null_t ? 0 : st->stack[pos[1]] == E->null_t ? 1 : -1;
        if (k >= 0) {
            memmove(pos + k, pos + k + 1, (size_t)(n - k - 1) * sizeof *pos);
            n--;
        }
    }
    return n;
}

static int same_name(const char *a, const char *b) {
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

/* LOAD_METHOD is LOAD_ATTR with a NULL beside the attribute (see apply):
 * 3.11 compiles `m.f()` either way depending on whether the module imports
 * `m` at top level. */
static int op_class(int op) { return op == IR_LOAD_METHOD ? IR_LOAD_ATTR : op; }

/* Same operation with the same arguments (jump targets aside; whether a
 * call's callable is a slot pair is seen on its inputs). */
/* Operations on a collection below their operands: the argument is that
 * depth, and the collection itself is one of the inputs compared. */
static int depth_operand(int op) {
    return op == IR_LIST_APPEND || op == IR_SET_ADD || op == IR_MAP_ADD || op == IR_LIST_EXTEND ||
           op == IR_SET_UPDATE || op == IR_DICT_UPDATE || op == IR_DICT_MERGE;
}

static int same_op(eq *E, const sstate *A, const sstate *B) {
    const dp_instr *a = &E->s[0].f.ins[A->pc], *b = &E->s[1].f.ins[B->pc];
    /* (hints for the structurer, not semantics: a call's NULL pair, a
     * 3.12+ return of a constant left unfused, DP_RETURN_ARM) */
    int32_t mask = a->op == IR_CALL || a->op == IR_CALL_EX ? ~DP_CALL_PAIR
                   : a->op == IR_RETURN_VALUE               ? ~DP_RETURN_ARM
                                                            : ~0;
    if (op_class(a->op) != op_class(b->op) || (a->arg2 & mask) != (b->arg2 & mask) || !same_name(a->name, b->name))
        return 0;
    /* the argument of a named operation is the name's index (co_names,
     * locals), which differs with the order names are first used */
    int named = a->name != NULL && a->op != IR_LOAD_SUPER_ATTR;
    if (a->target < 0 && !named && a->op != IR_RERAISE && a->op != IR_FOR_ITER && a->op != IR_CONTAINS &&
        !depth_operand(a->op) && a->arg != b->arg)
        return 0;
    return E->s[0].tcst[A->pc] == E->s[1].tcst[B->pc];
}

/* Results of an ordinary event, the same terms on both sides. */
static int apply(eq *E, int s, sstate *st, const dp_instr *x, int32_t n) {
    long long pops, peek, pushes;
    switch (x->op) {
    case IR_LIST_APPEND: case IR_SET_ADD: case IR_LIST_EXTEND: case IR_SET_UPDATE: case IR_DICT_UPDATE:
    case IR_DICT_MERGE:
        st->sp -= 1;
        return 0;
    case IR_MAP_ADD:
        st->sp -= 2;
        return 0;
    case IR_WITH_EXCEPT_START:
        return push(E, s, st, ev(E, n, 0));
    case IR_CONTAINS: /* `not in` is the negation of `in` (branches on either agree) */
        st->sp -= 2;
        return push(E, s, st, x->arg ? cons(E, T_NOT, ev(E, n, 0), 0, 0) : ev(E, n, 0));
    case IR_BUILD_LIST: /* [x1..xn] -> [list] */
        if (x->arg < 0 || x->arg > st->sp)
            return CANT("bad BUILD_LIST");
        st->sp -= x->arg;
        return push(E, s, st, cons(E, T_EV, n, 0, EV_LIST));
    case IR_BINARY_SUBSCR: { /* a slice of a list is a list */
        int32_t c = is_list(E, st->stack[st->sp - 2]) && E->t[st->stack[st->sp - 1]].kind == T_SLICE ? EV_LIST : EV_ANY;
        st->sp -= 2;
        return push(E, s, st, cons(E, T_EV, n, 0, c));
    }
    case IR_BINARY_SLICE: { /* 3.12+: [a, lo, hi] */
        int32_t c = is_list(E, st->stack[st->sp - 3]) ? EV_LIST : EV_ANY;
        st->sp -= 3;
        return push(E, s, st, cons(E, T_EV, n, 0, c));
    }
    case IR_LOAD_METHOD: /* [obj] -> [NULL, attr] ([attr, NULL] from 3.13 on) */
        st->sp--;
        if (push(E, s, st, E->lay.method_load_null_last ? ev(E, n, 0) : E->null_t) < 0)
            return -1;
        return push(E, s, st, E->lay.method_load_null_last ? E->null_t : ev(E, n, 0));
    case IR_PUSH_EXC_INFO: {
        int32_t exc = st->stack[--st->sp];
        return push(E, s, st, ev(E, n, 0)) < 0 ? -1 : push(E, s, st, exc);
    }
    case IR_POP_EXCEPT:
        if (E->lay.block_stack) {
            if (st->nb == 0 || st->blocks[st->nb - 1].type != B_HANDLER)
                return CANT("POP_EXCEPT outside an exception handler");
            st->nb--;
        }
        break;
    case IR_WITH_CLEANUP_START: {
        /* [exit, NULL] -> [NULL, None, res];
         * [exit, 3 saved, tb, value, type] -> [3 saved, NULL, tb, value, type, type, res] */
        int32_t top = st->stack[st->sp - 1];
        if (E->t[top].kind == T_NULL) {
            st->sp -= 2;
            return (push(E, s, st, E->null_t) < 0 || push(E, s, st, E->none_t) < 0) ? -1 : push(E, s, st, ev(E, n, 0));
        }
        int32_t *v = st->stack + st->sp - 7;
        memmove(v, v + 1, 3 * sizeof *v);
        v[3] = E->null_t;
        if (st->nb == 0 || st->blocks[st->nb - 1].type != B_HANDLER || st->blocks[st->nb - 1].level < 1)
            return CANT("WITH_CLEANUP_START outside an exception handler");
        st->blocks[st->nb - 1].level--;
        return push(E, s, st, top) < 0 ? -1 : push(E, s, st, ev(E, n, 0));
    }
    }
    if (arity(E, x, &pops, &peek, &pushes) < 0)
        return CANT("%s is not modelled by the checker", dp_irop_name(x->op));
    st->sp -= (int32_t)pops;
    for (long long k = 0; k < pushes; k++)
        if (push(E, s, st, ev(E, n, (int32_t)k)) < 0)
            return -1;
    if (x->op == IR_SETUP_WITH) {
        if (!E->lay.block_stack)
            return CANT("SETUP_WITH in 3.11+ code");
        return push_block(E, st, B_SETUP, x->target, st->sp - 1);
    }
    return 0;
}

/* The exception an instruction re-raises: from 3.11 the value on top,
 * before it (type, value, traceback) from the top down. */
static void reraised(eq *E, const sstate *st, int32_t *exc) {
    int k3 = E->lay.block_stack ? 3 : 1;
    for (int k = 0; k < k3; k++)
        exc[k] = st->stack[st->sp - 1 - k];
}

static void know(eq *E, int s, sstate *st, int32_t t, int32_t known);

/* LOAD_FAST or DELETE_FAST of a local that is unbound (both raise) or
 * maybe unbound (both raise, or go on with the local now known bound). */
static int unbound_access(eq *E, sstate *A, sstate *B, int32_t n) {
    int32_t ta = A->loc[E->s[0].slot[A->pc]], tb = B->loc[E->s[1].slot[B->pc]], exc[3];
    if (ta != tb)
        return NEQ("offsets %d and %d: locals bound on different paths", E->s[0].f.ins[A->pc].offset,
                   E->s[1].f.ins[B->pc].offset);
    for (int k = 0; k < 3; k++)
        if ((exc[k] = ev(E, n, EXC_TYPE + k)) < 0)
            return -1;
    if (raise_both(E, A, B, exc, exc, n) < 0)
        return -1;
    if (ta == E->unbound_t)
        return 1;
    int32_t bound = new_term(E, T_VAR, -1, 0, E->t[ta].c);
    if (bound < 0)
        return -1;
    know(E, 0, A, ta, bound);
    know(E, 1, B, ta, bound);
    int del = E->s[0].f.ins[A->pc].op == IR_DELETE_FAST;
    if (del) {
        A->loc[E->s[0].slot[A->pc]] = E->unbound_t;
        B->loc[E->s[1].slot[B->pc]] = E->unbound_t;
    } else if (push(E, 0, A, bound) < 0 || push(E, 1, B, bound) < 0) {
        return -1;
    }
    A->pc++, B->pc++;
    return enqueue(E, A, B) < 0 ? -1 : 1;
}

/* Ends an event whose control flow is special; 1 if handled. */
static int control(eq *E, sstate *A, sstate *B, int32_t n) {
    const dp_instr *xa = &E->s[0].f.ins[A->pc], *xb = &E->s[1].f.ins[B->pc];
    int32_t ea[3] = {0}, eb[3] = {0};
    sstate *ya = &E->tmp[0][1], *yb = &E->tmp[1][1];
    switch (xa->op) {
    case IR_RETURN_VALUE:
        return 1;
    case IR_LOAD_FAST: case IR_DELETE_FAST:
        return unbound_access(E, A, B, n);
    case IR_RAISE:
        for (int k = 0; k < 3; k++)
            if ((ea[k] = eb[k] = ev(E, n, EXC_TYPE + k)) < 0)
                return -1;
        return raise_both(E, A, B, ea, eb, n) < 0 ? -1 : 1;
    case IR_RERAISE: case IR_END_FINALLY:
        reraised(E, A, ea);
        reraised(E, B, eb);
        return raise_both(E, A, B, ea, eb, n) < 0 ? -1 : 1;
    case IR_FOR_ITER:
        if (may_raise(E, A, B, n) < 0)
            return -1;
        state_copy(E, 0, ya, A);
        state_copy(E, 1, yb, B);
        ya->sp--, yb->sp--;
        ya->pc = xa->target, yb->pc = xb->target;
        A->pc++, B->pc++;
        if (push(E, 0, A, ev(E, n, 0)) < 0 || push(E, 1, B, ev(E, n, 0)) < 0)
            return -1;
        return (enqueue(E, ya, yb) < 0 || enqueue(E, A, B) < 0) ? -1 : 1;
    case IR_END_ASYNC_FOR:
        if (need(E, 0, A, E->lay.block_stack ? 3 : 2) < 0 || need(E, 1, B, E->lay.block_stack ? 3 : 2) < 0)
            return -1;
        reraised(E, A, ea);
        reraised(E, B, eb);
        if (raise_both(E, A, B, ea, eb, n) < 0)
            return -1;
        if (E->lay.block_stack) { /* StopAsyncIteration: the handler block ends, the iterator goes */
            sstate *st[2] = {A, B};
            for (int s = 0; s < 2; s++) {
                if (st[s]->nb == 0 || st[s]->blocks[st[s]->nb - 1].type != B_HANDLER)
                    return CANT("END_ASYNC_FOR outside an exception handler");
                if (need(E, s, st[s], st[s]->blocks[--st[s]->nb].level) < 0)
                    return -1;
                st[s]->sp = st[s]->blocks[st[s]->nb].level;
                if (pop(E, s, st[s]) < 0)
                    return -1;
            }
        } else {
            A->sp -= 2, B->sp -= 2;
        }
        A->pc++, B->pc++;
        return enqueue(E, A, B) < 0 ? -1 : 1;
    case IR_WITH_CLEANUP_FINISH: {
        int na = A->stack[A->sp - 2] == E->none_t, nb = B->stack[B->sp - 2] == E->none_t;
        if (na != nb)
            return NEQ("offsets %d and %d: a with block's exit differs", xa->offset, xb->offset);
        if (!na && may_raise(E, A, B, n) < 0) /* the truth of __exit__'s result */
            return -1;
        A->sp -= 2, B->sp -= 2;
        A->pc++, B->pc++;
        if (!na) { /* __exit__ returned true: the exception is swallowed */
            state_copy(E, 0, ya, A);
            state_copy(E, 1, yb, B);
            sstate *st[2] = {ya, yb};
            for (int s = 0; s < 2; s++) {
                if (st[s]->nb == 0 || st[s]->blocks[st[s]->nb - 1].type != B_HANDLER)
                    return CANT("WITH_CLEANUP_FINISH outside an exception handler");
                if (need(E, s, st[s], st[s]->blocks[--st[s]->nb].level) < 0)
                    return -1;
                st[s]->sp = st[s]->blocks[st[s]->nb].level;
                if (push(E, s, st[s], E->null_t) < 0)
                    return -1;
            }
            if (enqueue(E, ya, yb) < 0)
                return -1;
        }
        return enqueue(E, A, B) < 0 ? -1 : 1;
    }
    default:
        return 0;
    }
}

/* The original's LIST_LIST_METHOD (LIST_APPEND) against the output's
 * `lst.extend(it)` (`lst.append(v)`), the method of a list built here (see
 * pure_step): 1 done, 0 not this case. */
static int list_method_call(eq *E, sstate *A, sstate *B) {
    const dp_instr *xa = &E->s[0].f.ins[A->pc], *xb = &E->s[1].f.ins[B->pc];
    int pair = (xb->arg2 & DP_CALL_PAIR) != 0, below = pair ? 3 : 2;
    if ((xa->op != IR_LIST_EXTEND && xa->op != IR_LIST_APPEND) || xb->op != IR_CALL || xb->arg != 1 ||
        xb->cst != NULL || xa->arg < 1 || A->sp < xa->arg + 1 || B->sp < below)
        return 0;
    int32_t m = B->stack[B->sp - 2], other = pair ? B->stack[B->sp - 3] : E->null_t;
    if (E->t[m].kind != T_LIST_METHOD) {
        int32_t t = m;
        m = other, other = t;
    }
    if (E->t[m].kind != T_LIST_METHOD || E->t[m].b != (xa->op == IR_LIST_APPEND) || other != E->null_t ||
        E->t[m].a != A->stack[A->sp - 1 - xa->arg] ||
        B->stack[B->sp - 1] != A->stack[A->sp - 1] || B->stack[B->sp - 1] == E->opaque_t)
        return 0;
    int32_t n = E->nev++;
    if (may_raise(E, A, B, n) < 0)
        return -1;
    A->sp -= 1;
    B->sp -= below;
    if (push(E, 1, B, E->none_t) < 0) /* list.extend returns None */
        return -1;
    A->pc++, B->pc++;
    return enqueue(E, A, B) < 0 ? -1 : 1;
}

/* The candidate calls the function type (fold_function_type) where the
 * original runs MAKE_FUNCTION (3.13: MAKE_FUNCTION and SET_FUNCTION_ATTRIBUTE
 * for each part): the same code, the frame's globals, its own name, the
 * same defaults and closure (None where the original has none) make the
 * same function.  Keyword defaults and annotations have no place in the
 * call.  0 when not this case. */
static int function_by_value_call(eq *E, sstate *A, sstate *B) {
    const side *SA = &E->s[0];
    const dp_instr *xa = &SA->f.ins[A->pc], *xb = &E->s[1].f.ins[B->pc];
    if (xa->op != IR_MAKE_FUNCTION || xb->op != IR_CALL || xb->arg != 5 || xb->cst != NULL ||
        !(xb->arg2 & DP_CALL_PAIR) || B->sp < 7 || A->sp < 1)
        return 0;
    int32_t callee = B->stack[B->sp - 7], other = B->stack[B->sp - 6];
    if (E->t[callee].kind == T_NULL) {
        int32_t t = callee;
        callee = other, other = t;
    }
    const int32_t *arg = &B->stack[B->sp - 5];
    if (callee != E->fn_type_t || other != E->null_t || arg[1] != E->fn_globals_t || arg[2] != E->none_t ||
        arg[0] != A->stack[A->sp - 1] || arg[0] == E->opaque_t)
        return 0;
    /* the parts below the code, nearest first: MAKE_FUNCTION's flags from the
     * closure down, or the SET_FUNCTION_ATTRIBUTEs that follow it (3.13) */
    int32_t parts[4], flags[4], np = 0, sets = 0;
    if (xa->arg != 0) {
        static const int32_t order[4] = {DP_FN_CLOSURE, DP_FN_ANNOTATIONS, DP_FN_KWDEFAULTS, DP_FN_DEFAULTS};
        for (int k = 0; k < 4; k++)
            if (xa->arg & order[k])
                flags[np++] = order[k];
    } else {
        while (np < 4 && A->pc + 1 + sets < SA->f.n && SA->f.ins[A->pc + 1 + sets].op == IR_SET_FUNCTION_ATTRIBUTE)
            flags[np++] = SA->f.ins[A->pc + 1 + sets++].arg;
        if (A->pc + 1 + sets < SA->f.n && SA->f.ins[A->pc + 1 + sets].op == IR_SET_FUNCTION_ATTRIBUTE)
            return 0;
    }
    if (A->sp < 1 + np)
        return 0;
    int32_t defaults = E->none_t, closure = E->none_t;
    for (int k = 0; k < np; k++) {
        parts[k] = A->stack[A->sp - 2 - k];
        if (flags[k] == DP_FN_CLOSURE && closure == E->none_t)
            closure = parts[k];
        else if (flags[k] == DP_FN_DEFAULTS && defaults == E->none_t)
            defaults = parts[k];
        else
            return 0;
        if (parts[k] == E->none_t) /* (MAKE_FUNCTION would take None for a part) */
            return 0;
    }
    if (arg[3] != defaults || arg[4] != closure)
        return 0;
    int32_t n = E->nev++;
    if (may_raise(E, A, B, n) < 0)
        return -1;
    int32_t made = ev(E, n, 0);
    if (made < 0)
        return -1;
    A->sp -= 1 + np;
    B->sp -= 7;
    if (push(E, 0, A, made) < 0 || push(E, 1, B, made) < 0)
        return -1;
    A->pc += 1 + sets, B->pc++;
    return enqueue(E, A, B) < 0 ? -1 : 1;
}

/* Two frozenset constants of the same items (see set_same). */
static int same_set(eq *E, int32_t ta, int32_t tb) {
    const dp_const *a = const_of(E, ta), *b = const_of(E, tb);
    return a && b && set_same(a, b, 0);
}

/* Whether a constant's hash comes from the hash seed: a str or bytes, or a
 * tuple or frozenset holding one (their hashes mix their items'). */
static int seeded_hash(const dp_const *c, int depth) {
    if (c->kind == DP_CONST_STR || c->kind == DP_CONST_BYTES)
        return 1;
    if ((c->kind != DP_CONST_TUPLE && c->kind != DP_CONST_FROZENSET) || depth > 8)
        return 0;
    for (size_t k = 0; k < c->n; k++)
        if (seeded_hash(c->items[k], depth + 1))
            return 1;
    return 0;
}

/* A frozenset constant whose every item hashes by the seed (strings, bytes,
 * tuples holding them: `{('text', 'plain'), ...}`): its order changes from
 * one run of the original to the next (no program can count on it) and the
 * same items in another order are the same set.  The order of ints, floats
 * or tuples of them is CPython's fixed behaviour and stays compared. */
static int seeded_order(eq *E, int32_t t) {
    const dp_const *c = const_of(E, t);
    if (c == NULL || c->kind != DP_CONST_FROZENSET)
        return 0;
    for (size_t k = 0; k < c->n; k++)
        if (!seeded_hash(c->items[k], 0))
            return 0;
    return 1;
}

/* Inputs of an event that are the same value: the same term, or the same
 * set where its order cannot show (`x in {...}`) or is the hash seed's. */
static int same_input(eq *E, const dp_instr *x, int k, int32_t ta, int32_t tb) {
    return ta == tb || (((x->op == IR_CONTAINS && k == 1) || seeded_order(E, ta)) && same_set(E, ta, tb));
}

/* Both sides are at an observable operation that is no branch. */
static int event(eq *E, sstate *A, sstate *B) {
    const dp_instr *xa = &E->s[0].f.ins[A->pc], *xb = &E->s[1].f.ins[B->pc];
    int r = list_method_call(E, A, B);
    if (r == 0)
        r = function_by_value_call(E, A, B);
    if (r != 0)
        return r < 0 ? -1 : 0;
    if (!same_op(E, A, B))
        return NEQ("offset %d: %s%s%s, but offset %d: %s%s%s", xa->offset, dp_irop_name(xa->op),
                   xa->name ? " " : "", xa->name ? xa->name : "", xb->offset, dp_irop_name(xb->op),
                   xb->name ? " " : "", xb->name ? xb->name : "");
    int32_t *pa = E->pos[0], *pb = E->pos[1];
    int na = inputs(E, 0, A, xa, pa, E->s[0].cap), nb = inputs(E, 1, B, xb, pb, E->s[1].cap);
    if (na < 0 || nb < 0)
        return -1;
    if (na != nb)
        return NEQ("offsets %d and %d: %s on different stacks", xa->offset, xb->offset, dp_irop_name(xa->op));
    for (int k = 0; k < na; k++) {
        int32_t ta = A->stack[pa[k]], tb = B->stack[pb[k]];
        if (tb == E->opaque_t)
            return NEQ("offset %d: %s uses a value the original does not have here", xb->offset,
                       dp_irop_name(xb->op));
        if (!same_input(E, xa, k, ta, tb))
            return NEQ("offset %d: %s on other values than at offset %d", xb->offset, dp_irop_name(xb->op),
                       xa->offset);
    }
    int32_t n = E->nev++;
    r = control(E, A, B, n);
    if (r != 0)
        return r < 0 ? -1 : 0;
    if (dp_can_raise(xa->op) && may_raise(E, A, B, n) < 0)
        return -1;
    if (apply(E, 0, A, xa, n) < 0 || apply(E, 1, B, xb, n) < 0)
        return -1;
    A->pc++, B->pc++;
    return enqueue(E, A, B);
}

/* ------------------------------------------------------------------ branches and the product */

/* The successors of a conditional jump: `yes` where the tested term is
 * true, `no` where it is false; *cond = that term (`x is None` for the
 * None tests, `is` rather than `is not`). */
static int successors(eq *E, int s, const sstate *st, sstate *yes, sstate *no, int32_t *cond) {
    const dp_instr *x = &E->s[s].f.ins[st->pc];
    state_copy(E, s, yes, st);
    state_copy(E, s, no, st);
    int32_t c = st->stack[st->sp - 1];
    int keep_yes = 0, keep_no = 0, yes_jumps = 0;
    switch (x->op) {
    case IR_POP_JUMP_IF_FALSE: break;
    case IR_POP_JUMP_IF_TRUE: yes_jumps = 1; break;
    case IR_POP_JUMP_IF_NONE: c = cons(E, T_IS, c, E->none_t, 0); yes_jumps = 1; break;
    case IR_POP_JUMP_IF_NOT_NONE: c = cons(E, T_IS, c, E->none_t, 0); break;
    case IR_JUMP_IF_FALSE_OR_POP: keep_no = 1; break;
    case IR_JUMP_IF_TRUE_OR_POP: keep_yes = 1; yes_jumps = 1; break;
    default: return CANT("not a branch");
    }
    if (c < 0)
        return -1;
    yes->sp -= !keep_yes;
    no->sp -= !keep_no;
    yes->pc = yes_jumps ? x->target : st->pc + 1;
    no->pc = yes_jumps ? st->pc + 1 : x->target;
    if ((E->t[c].kind == T_IS && E->t[c].c) || E->t[c].kind == T_NOT) { /* `is not`, `not in`: the other way round */
        sstate tmp = *yes;
        *yes = *no;
        *no = tmp;
        c = E->t[c].kind == T_NOT ? E->t[c].a : cons(E, T_IS, E->t[c].a, E->t[c].b, 0);
    }
    *cond = c;
    return c < 0 ? -1 : 0;
}

/* After a branch on `t`, its truth is known: `t` becomes `known` (the same
 * value, with a truth a later test of it need not repeat). */
static void know(eq *E, int s, sstate *st, int32_t t, int32_t known) {
    for (int32_t k = 0; k < st->sp; k++)
        if (st->stack[k] == t)
            st->stack[k] = known;
    for (int32_t k = 0; k < E->s[s].nloc; k++)
        if (st->loc[k] == t)
            st->loc[k] = known;
}

static int branch(eq *E, const sstate *A, const sstate *B) {
    sstate *ya = &E->tmp[0][1], *na = &E->tmp[0][2], *yb = &E->tmp[1][1], *nb = &E->tmp[1][2];
    int32_t ca, cb;
    if (successors(E, 0, A, ya, na, &ca) < 0 || successors(E, 1, B, yb, nb, &cb) < 0)
        return -1;
    const dp_instr *xa = &E->s[0].f.ins[A->pc], *xb = &E->s[1].f.ins[B->pc];
    if (cb == E->opaque_t || ca != cb)
        return NEQ("offsets %d and %d test different values", xa->offset, xb->offset);
    int k = E->t[ca].kind;
    if (k == T_VAR || k == T_EV || k == T_IS) {
        int32_t ty = new_term(E, T_VAR, -1, 0, 1), tn = new_term(E, T_VAR, -1, 0, 2);
        if (ty < 0 || tn < 0)
            return -1;
        know(E, 0, ya, ca, ty);
        know(E, 1, yb, ca, ty);
        know(E, 0, na, ca, tn);
        know(E, 1, nb, ca, tn);
    }
    return (enqueue(E, ya, yb) < 0 || enqueue(E, na, nb) < 0) ? -1 : 0;
}

/* Explores one pair of states from their shape to the next sync point. */
static int explore(eq *E, int32_t vi) {
    sstate *A = &E->tmp[0][0], *B = &E->tmp[1][0];
    E->v[vi].queued = 0;
    if (instantiate(E, vi, A, B) < 0)
        return -1;
    int ra = run(E, 0, A), rb = run(E, 1, B);
    if (ra == OB_ERROR || rb == OB_ERROR)
        return -1;
    if (ra == OB_DIVERGE || rb == OB_DIVERGE) {
        if (ra == rb)
            return 0;
        return NEQ("the %s loops forever without effect where the other does not",
                   ra == OB_DIVERGE ? "original" : "recompiled code");
    }
    int ja = is_cond_jump(E->s[0].f.ins[A->pc].op), jb = is_cond_jump(E->s[1].f.ins[B->pc].op);
    if (ja && jb)
        return branch(E, A, B);
    if (ja != jb) {
        const dp_instr *xa = &E->s[0].f.ins[A->pc], *xb = &E->s[1].f.ins[B->pc];
        return NEQ("offset %d: %s, but offset %d: %s", xa->offset, dp_irop_name(xa->op), xb->offset,
                   dp_irop_name(xb->op));
    }
    return event(E, A, B);
}

/* Every local the original's reachable instructions use is a local of the
 * candidate too, so that a reader of the output finds the variables of the
 * bytecode.  Locals it never touches (Dynamo keeps the user function's
 * co_varnames in its transformed code, and dead code may name others) may
 * be missing.  After the exploration, which marks what it ran. */
static int used_locals_kept(eq *E, const dp_code *b) {
    const side *S = &E->s[0];
    for (int32_t i = 0; i < S->f.n; i++)
        if (S->ran[i] && S->slot[i] >= 0 && !in_strs(&b->varnames, S->slotname[S->slot[i]]))
            return NEQ("local %s is missing", S->slotname[S->slot[i]]);
    return 0;
}

static int setup(eq *E, const dp_code *a, const dp_code *b) {
    namemap m[2];
    if (a->py_minor != b->py_minor) /* (not a layout fact: two Pythons' code is not compared) */
        return CANT("different Python versions");
    if (same_signature(E, a, b) < 0 || rehash(E, 0) < 0)
        return -1;
    dp_const *none = dp_const_new(&E->ar, DP_CONST_NONE), *empty = dp_const_new(&E->ar, DP_CONST_TUPLE);
    if (none == NULL || empty == NULL)
        return CANT("out of memory");
    if ((E->null_t = cons(E, T_NULL, 0, 0, 0)) < 0 || (E->unbound_t = cons(E, T_UNBOUND, 0, 0, 0)) < 0 ||
        (E->opaque_t = cons(E, T_OPAQUE, 0, 0, 0)) < 0 || (E->lasti_t = cons(E, T_LASTI, 0, 0, 0)) < 0 ||
        (E->none_t = const_term(E, none)) < 0 || (E->empty_tuple_t = const_term(E, empty)) < 0 ||
        (E->fn_type_t = named_term(E, T_GLOBAL, FN_TYPE)) < 0 || (E->fn_globals_t = named_term(E, T_GLOBAL, FN_GLOBALS)) < 0)
        return -1;
    if (setup_side(E, 0, a, &m[0]) < 0 || setup_side(E, 1, b, &m[1]) < 0)
        return -1;
    E->lay = E->s[0].f.lay; /* (the same as side 1's: the same Python) */
    fold_list_calls(E, &E->s[0]);
    fold_list_calls(E, &E->s[1]);
    fold_cell_idioms(&E->s[0]);
    fold_cell_idioms(&E->s[1]);
    fold_function_type(E, &E->s[1]);
    for (int s = 0; s < 2; s++) {
        for (int k = 0; k < 6; k++)
            if (state_init(E, s, &E->tmp[s][k]) < 0)
                return -1;
        if ((E->pos[s] = dp_alloc_array(&E->ar, (size_t)E->s[s].cap + 8, sizeof(int32_t))) == NULL)
            return CANT("out of memory");
    }
    long long nargs = (long long)a->argcount + a->kwonlyargcount + !!(a->flags & DP_CO_VARARGS) +
                      !!(a->flags & DP_CO_VARKEYWORDS);
    if (nargs > E->s[0].nloc || nargs > E->s[1].nloc)
        return CANT("repeated names in co_varnames");
    sstate *A = &E->tmp[0][0], *B = &E->tmp[1][0];
    A->pc = B->pc = A->sp = B->sp = A->nb = B->nb = 0;
    for (int s = 0; s < 2; s++)
        for (int32_t k = 0; k < E->s[s].nloc; k++)
            E->tmp[s][0].loc[k] = E->unbound_t;
    for (long long k = 0; k < nargs; k++) {
        int32_t t = new_term(E, T_VAR, (int32_t)k, 0, 0);
        if (t < 0)
            return -1;
        A->loc[k] = B->loc[k] = t; /* parameters come first, in the same order */
    }
    E->persist = E->nt;
    E->gen = 1;
    long long size = (long long)E->s[0].f.n + E->s[1].f.n;
    E->max_pairs = (int32_t)(size * 8 + 256 > INT32_MAX / 2 ? INT32_MAX / 2 : size * 8 + 256);
    E->max_steps = (long)(size * 400 + 100000);
    return enqueue(E, A, B);
}

static int equiv_depth(const dp_code *orig, const dp_code *cand, int flags, const dp_named_consts *named, char *why,
                       size_t whylen, int depth);

/* Whether the candidate reads c by a name the printer gave it (then the
 * two loads were matched as the same constant). */
static int is_named(const eq *E, const dp_const *c) {
    for (size_t k = 0; E->named && k < E->named->n; k++)
        if (E->named->v[k] == c)
            return 1;
    return 0;
}

/* Lambdas and comprehensions are compared in full (they are never
 * validated on their own); other nested code objects by name. */
static int deep_nested(eq *E, const dp_code *a, const dp_code *b) {
    if (E->depth >= MAX_DEEP)
        return 0;
    for (size_t k = 0; k < a->nconsts; k++) {
        const dp_const *c = a->consts[k];
        if (c->kind != DP_CONST_CODE || !is_deep_code(c->code) || is_named(E, c))
            continue;
        int nth = 0;
        for (size_t q = 0; q < k; q++)
            nth += a->consts[q]->kind == DP_CONST_CODE && strcmp(a->consts[q]->code->name, c->code->name) == 0 &&
                   !is_named(E, a->consts[q]);
        const dp_code *other = NULL;
        for (size_t q = 0; q < b->nconsts && other == NULL; q++)
            if (b->consts[q]->kind == DP_CONST_CODE && strcmp(b->consts[q]->code->name, c->code->name) == 0 &&
                nth-- == 0)
                other = b->consts[q]->code;
        if (other == NULL)
            return NEQ("%s is missing", c->code->name);
        char sub[300];
        int r = equiv_depth(c->code, other, E->stable_globals, E->named, sub, sizeof sub, E->depth + 1);
        if (r != 1)
            return verdict(E, r, "in %s: %s", c->code->name, sub);
    }
    return 0;
}

static int equiv_depth(const dp_code *orig, const dp_code *cand, int flags, const dp_named_consts *named, char *why,
                       size_t whylen, int depth) {
    eq *E = calloc(1, sizeof *E);
    if (E == NULL) {
        if (why && whylen)
            snprintf(why, whylen, "out of memory");
        return -1;
    }
    dp_arena_init(&E->ar);
    E->ar.limit = EQ_ARENA_LIMIT;
    E->verdict = 1;
    E->why = why;
    E->whylen = whylen;
    E->depth = depth;
    E->named = named;
    E->stable_globals = flags & DP_EQ_STABLE_GLOBALS;
    if (why && whylen)
        why[0] = '\0';
    if (setup(E, orig, cand) == 0)
        while (E->nwork > 0 && E->verdict == 1)
            if (explore(E, unqueue(E)) < 0 && E->verdict == 1)
                CANT("internal error");
    if (E->verdict == 1 && E->ar.failed)
        CANT("out of memory");
    if (E->verdict == 1)
        used_locals_kept(E, cand);
    if (E->verdict == 1)
        deep_nested(E, orig, cand);
    int r = E->verdict;
    free(E->t);
    free(E->ht);
    free(E->hgen);
    free(E->ct);
    free(E->const_term);
    free((void *)E->const_ptr);
    free(E->stamp);
    free(E->cls);
    free(E->v);
    free(E->vh);
    free(E->work);
    free(E->sval);
    free(E->smeet);
    dp_arena_free(&E->ar);
    free(E);
    return r;
}

int dp_equivalent(const dp_code *orig, const dp_code *cand, int flags, char *why, size_t whylen) {
    if (orig == NULL || cand == NULL) {
        if (why && whylen)
            snprintf(why, whylen, "no code");
        return -1;
    }
    return equiv_depth(orig, cand, flags, NULL, why, whylen, 0);
}

int dp_equivalent_named(const dp_code *orig, const dp_code *cand, int flags, const dp_named_consts *named, char *why,
                        size_t whylen) {
    if (orig == NULL || cand == NULL) {
        if (why && whylen)
            snprintf(why, whylen, "no code");
        return -1;
    }
    return equiv_depth(orig, cand, flags, named, why, whylen, 0);
}
