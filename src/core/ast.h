/* The output AST: one generic node type whose fields are used per kind as
 * documented below.  Nodes live in the decompilation's arena. */
#ifndef DEPYF_AST_H
#define DEPYF_AST_H

#include "arena.h"
#include "code.h"
#include "error.h"
#include "ir.h"

typedef struct dp_node dp_node;

typedef struct dp_nodes {
    dp_node **v;
    int n, cap;
} dp_nodes;

typedef enum dp_node_kind {
    /* ---- expressions ---- */
    E_NAME,       /* s = identifier */
    E_CONST,      /* cst (any constant, including tuples/frozensets of constants) */
    E_ATTR,       /* a.s */
    E_SUBSCR,     /* a[b] (b may be E_SLICE or an E_TUPLE holding slices) */
    E_SLICE,      /* a:b:c, each may be NULL */
    E_CALL,       /* a(l1..., l2...): l1 = positional args (E_STARRED for *x),
                     l2 = E_KEYWORD nodes (s = name, or NULL for **x; a = value) */
    E_KEYWORD,
    E_BINOP,      /* a op b; op = dp_binop */
    E_UNARY,      /* op a; op = dp_unop */
    E_BOOLOP,     /* l1[0] and/or l1[1] ...; op = 0 for and, 1 for or */
    E_COMPARE,    /* a ops[i] l1[i] ...; l2 unused; the operators are in `ops` */
    E_IFEXP,      /* b if a else c */
    E_NAMED,      /* (s := a) */
    E_LAMBDA,     /* lambda <args>: body; a = E_ARGUMENTS node, b = body expression */
    E_TUPLE, E_LIST, E_SET, /* l1 = elements (E_STARRED for *x) */
    E_DICT,       /* l1 = keys (NULL entry for **value), l2 = values; op = 1: a call's keyword
                     arguments (DICT_MERGE / BUILD_MAP_UNPACK_WITH_CALL) */
    E_STARRED,    /* *a */
    E_JOINEDSTR,  /* f-string; l1 = parts: E_CONST str or E_FORMATTED */
    E_FORMATTED,  /* {a!conv:spec}; op = conversion (0, 's', 'r', 'a'); b = spec (E_JOINEDSTR) or NULL */
    E_LISTCOMP, E_SETCOMP, E_GENEXP, /* a = element; l1 = E_COMPREHENSION clauses */
    E_DICTCOMP,   /* a = key, b = value; l1 = clauses */
    E_COMPREHENSION, /* for a in b if l1...; op = 1 for async */
    E_YIELD,      /* yield a (a may be NULL) */
    E_YIELD_FROM, /* yield from a */
    E_AWAIT,      /* await a */
    E_RAW,        /* s = verbatim text (used for things with no Python spelling, always commented) */
    E_TYPEPARAM,  /* PEP 695 type parameter s; op = 0 (T), 1 (*Ts) or 2 (**P); a = bound, or with
                     op2 = 1 the E_TUPLE of constraints; b = default (3.13) */

    /* ---- statements (`line` = source line of the first instruction, or -1) ---- */
    S_EXPR,       /* a */
    S_ASSIGN,     /* l1 = targets (a = b = value), b = value */
    S_AUGASSIGN,  /* a op= b; op = dp_binop */
    S_ANNASSIGN,  /* a: b = c (c may be NULL); op = 1 when the target is a simple name */
    S_DELETE,     /* del l1 */
    S_PASS, S_BREAK, S_CONTINUE,
    S_RETURN,     /* return a (a may be NULL); op2 = 1: a conditional expression's arm (DP_RETURN_ARM) */
    S_RAISE,      /* raise a from b (both may be NULL) */
    S_GLOBAL, S_NONLOCAL, /* l1 = E_NAME nodes */
    S_IMPORT,     /* l1 = E_ALIAS nodes */
    S_IMPORTFROM, /* from s import l1 (E_ALIAS); op = level; s may be NULL for `from . import x` */
    E_ALIAS,      /* s as b->s (b NULL when no alias) ; s = "*" for star import */
    S_IF,         /* if a: l1 else: l2 (l2 may hold a single S_IF, printed as elif) */
    S_WHILE,      /* while a: l1 else: l2 */
    S_FOR,        /* for a in b: l1 else: l2; op = 1 for async */
    S_TRY,        /* try: l1, handlers l2 (S_EXCEPT), else l3, finally l4; op = 1 for except* */
    S_EXCEPT,     /* except a as s: l1 (a NULL = bare except) */
    S_WITH,       /* with l1 (E_WITHITEM): l2; op = 1 for async */
    E_WITHITEM,   /* a as b (b may be NULL) */
    S_FUNCTIONDEF,/* def s[l4](c): l1; l2 = decorators; b = return annotation; op = 1 for async;
                     c = E_ARGUMENTS; l4 = E_TYPEPARAM nodes (PEP 695) */
    E_ARGUMENTS,  /* l1 = E_ARG positional (first `op` are positional-only), l2 = E_ARG kw-only,
                     a = E_ARG *vararg or NULL, b = E_ARG **kwarg or NULL.
                     op2 = 1 when a bare `*` is needed (kw-only without vararg) */
    E_ARG,        /* s = name, a = annotation, b = default */
    S_CLASSDEF,   /* class s[l4](l3 bases and E_KEYWORD): l1; l2 = decorators; l4 as for S_FUNCTIONDEF */
    S_TYPEALIAS,  /* type s[l4] = a */
    S_ASSERT,     /* assert a, b */
    S_MATCH,      /* match a: l1 (S_CASE) */
    S_CASE,       /* case a if b: l1 */
    P_VALUE,      /* a */
    P_SINGLETON,  /* cst (None/True/False) */
    P_SEQUENCE,   /* [l1] */
    P_MAPPING,    /* {l1[i] (keys, exprs): l2[i] (patterns), **s} */
    P_CLASS,      /* a(l1 positional patterns, l2 = E_KEYWORD (s = attr, a = pattern)) */
    P_STAR,       /* *s (s NULL means *_) */
    P_AS,         /* a as s (a NULL: capture pattern s, or `_` wildcard when s is NULL) */
    P_OR,         /* l1[0] | l1[1] | ... */
    S_COMMENT,    /* # s (may hold several lines); op = 1: lines of code printed verbatim */
    S_BLOCK,      /* l1 spliced in place (structuring helper; printer flattens it) */
    DP_NODE_KIND_COUNT
} dp_node_kind;

/* What the fallback (fallback.h) marks on the nodes it makes; all zero on
 * every other node. */
typedef struct dp_fb_mark {
    unsigned char var;     /* E_NAME: FB_TEMP, FB_STACK or FB_CELL, an atom (reading it has no
                              effect and it cannot change before it is used); 0: not the fallback's */
    unsigned char saved;   /* E_NAME: FB_SAVED_VALUE or FB_SAVED_CELL, what 3.12's
                              LOAD_FAST_AND_CLEAR saved: (value,) or () when unbound */
    unsigned char handled; /* statement: 3.8-3.10 bookkeeping only a flat machine needs */
    unsigned char leave;   /* S_BREAK: leaves a nested machine, so a flat one drops it */
    unsigned char ret;     /* X_OPAQUE: a 3.8 return address (CALL_FINALLY), op = the IR index */
} dp_fb_mark;

struct dp_node {
    int kind;          /* dp_node_kind */
    int op, op2;
    dp_fb_mark fb;
    int line;          /* source line for statements, -1 if unknown */
    int offset;        /* bytecode offset of a statement's first instruction (in the code object
                          the statement is of), -1 if none */
    unsigned char nested; /* a statement of a nested code object (its offset is not one of the
                             top-level code's: the line map leaves it out) */
    const char *s;
    const dp_const *cst;
    dp_node *a, *b, *c;
    dp_nodes l1, l2, l3, l4;
    int *ops;          /* E_COMPARE: dp_cmpop for each comparator */
    size_t seq;        /* creation order in its arena: later nodes were built later */
};

/* The AST's types (ast_check.c): what a node kind is, one DP_CLS_* bit (0
 * for the structurer's interpreter-only values, which are never printed).
 * The helper classes are parts only one parent kind holds. */
enum {
    DP_CLS_EXPR = 1 << 0,
    DP_CLS_STMT = 1 << 1,
    DP_CLS_PATTERN = 1 << 2,
    DP_CLS_KEYWORD = 1 << 3,       /* E_KEYWORD: of a call or a class's bases */
    DP_CLS_COMPREHENSION = 1 << 4, /* E_COMPREHENSION: a for clause */
    DP_CLS_FORMATTED = 1 << 5,     /* E_FORMATTED: in an f-string */
    DP_CLS_TYPEPARAM = 1 << 6,
    DP_CLS_ALIAS = 1 << 7,         /* E_ALIAS: of an import */
    DP_CLS_WITHITEM = 1 << 8,
    DP_CLS_ARGUMENTS = 1 << 9,     /* E_ARGUMENTS: of a def or lambda */
    DP_CLS_ARG = 1 << 10,
    DP_CLS_HANDLER = 1 << 11,      /* S_EXCEPT: of a try */
    DP_CLS_CASE = 1 << 12,         /* S_CASE: of a match */
    DP_CLS_KEYWORD_PATTERN = 1 << 13, /* E_KEYWORD of a class pattern: its value is a pattern */
};
unsigned dp_node_class(int kind);
/* A node of a statement list: a statement, an except clause or a case. */
static inline int dp_in_body(const dp_node *n) {
    return n != NULL && (dp_node_class(n->kind) & (DP_CLS_STMT | DP_CLS_HANDLER | DP_CLS_CASE)) != 0;
}

/* Checks that `body` is statements whose every field holds what its kind
 * allows (ast_check.c): no interpreter-only value, no statement where an
 * expression goes, no field set that the printer would not print.  The
 * bodies of defs and classes are checked only with `into_defs` (they are
 * checked as their own code objects are decompiled).  Returns -1 with a
 * message in `err`, or past `max_depth` levels. */
int dp_ast_check(const dp_nodes *body, int into_defs, int max_depth, dp_error *err);

dp_node *dp_node_new(dp_arena *ar, int kind);
/* Appends; returns -1 on out-of-memory. */
int dp_nodes_push(dp_arena *ar, dp_nodes *l, dp_node *n);

#endif
