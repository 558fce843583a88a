/* The AST's types (ast.h): what each node kind is (a statement, an
 * expression, a pattern or one of the helper nodes that only one parent
 * kind holds) and what each of its fields may hold.  The node struct is one
 * generic shape, so C cannot say that an if's body holds statements or a
 * call's arguments expressions; this table says it once, and dp_ast_check
 * enforces it on every tree before it is printed, so a structure that put
 * a statement where an expression goes (or kept an interpreter-only value,
 * or left a field set that the printer would ignore) is refused, never
 * printed as something else. */
#include "ast.h"

#include "error.h"

/* The classes, short names for the table */
#define EX DP_CLS_EXPR
#define ST DP_CLS_STMT
#define PA DP_CLS_PATTERN
#define KW DP_CLS_KEYWORD
#define CO DP_CLS_COMPREHENSION
#define FO DP_CLS_FORMATTED
#define TP DP_CLS_TYPEPARAM
#define AL DP_CLS_ALIAS
#define WI DP_CLS_WITHITEM
#define AR DP_CLS_ARGUMENTS
#define AG DP_CLS_ARG
#define HA DP_CLS_HANDLER
#define CA DP_CLS_CASE
#define KP DP_CLS_KEYWORD_PATTERN

/* For a, b and c, OPT marks a field that may be NULL; every other field
 * with an empty class set must be NULL (a, b, c) or empty (lists). */
#define OPT 0x8000u

typedef struct schema {
    const char *name;
    unsigned cls;     /* what the node is */
    unsigned f[7];    /* what each field may hold: a, b, c, l1, l2, l3, l4 */
} schema;

static const schema SCHEMA[DP_NODE_KIND_COUNT] = {
    [E_NAME] = {"E_NAME", EX, {0}},
    [E_CONST] = {"E_CONST", EX, {0}},
    [E_ATTR] = {"E_ATTR", EX, {EX}},
    [E_SUBSCR] = {"E_SUBSCR", EX, {EX, EX}},
    [E_SLICE] = {"E_SLICE", EX, {EX | OPT, EX | OPT, EX | OPT}}, /* (outside a subscript: slice(a, b, c)) */
    [E_CALL] = {"E_CALL", EX, {EX, 0, 0, EX, KW}},
    [E_KEYWORD] = {"E_KEYWORD", KW, {EX}},
    [E_BINOP] = {"E_BINOP", EX, {EX, EX}},
    [E_UNARY] = {"E_UNARY", EX, {EX}},
    [E_BOOLOP] = {"E_BOOLOP", EX, {0, 0, 0, EX}},
    [E_COMPARE] = {"E_COMPARE", EX, {EX, 0, 0, EX}},
    [E_IFEXP] = {"E_IFEXP", EX, {EX, EX, EX}},
    [E_NAMED] = {"E_NAMED", EX, {EX}},
    [E_LAMBDA] = {"E_LAMBDA", EX, {AR | OPT, EX}},
    [E_TUPLE] = {"E_TUPLE", EX, {0, 0, 0, EX}},
    [E_LIST] = {"E_LIST", EX, {0, 0, 0, EX}},
    [E_SET] = {"E_SET", EX, {0, 0, 0, EX}},
    [E_DICT] = {"E_DICT", EX, {0, 0, 0, EX, EX}}, /* (a NULL key: **value; see check) */
    [E_STARRED] = {"E_STARRED", EX, {EX}},
    [E_JOINEDSTR] = {"E_JOINEDSTR", EX, {0, 0, 0, EX | FO}},
    [E_FORMATTED] = {"E_FORMATTED", FO, {EX, EX | OPT}},
    [E_LISTCOMP] = {"E_LISTCOMP", EX, {EX, 0, 0, CO}},
    [E_SETCOMP] = {"E_SETCOMP", EX, {EX, 0, 0, CO}},
    [E_GENEXP] = {"E_GENEXP", EX, {EX, 0, 0, CO}},
    [E_DICTCOMP] = {"E_DICTCOMP", EX, {EX, EX, 0, CO}},
    [E_COMPREHENSION] = {"E_COMPREHENSION", CO, {EX, EX, 0, EX}},
    [E_YIELD] = {"E_YIELD", EX, {EX | OPT}},
    [E_YIELD_FROM] = {"E_YIELD_FROM", EX, {EX}},
    [E_AWAIT] = {"E_AWAIT", EX, {EX}},
    [E_RAW] = {"E_RAW", EX, {0}},
    [E_TYPEPARAM] = {"E_TYPEPARAM", TP, {EX | OPT, EX | OPT}},
    [S_EXPR] = {"S_EXPR", ST, {EX}},
    [S_ASSIGN] = {"S_ASSIGN", ST, {0, EX, 0, EX}},
    [S_AUGASSIGN] = {"S_AUGASSIGN", ST, {EX, EX}},
    [S_ANNASSIGN] = {"S_ANNASSIGN", ST, {EX, EX, EX | OPT}},
    [S_DELETE] = {"S_DELETE", ST, {0, 0, 0, EX}},
    [S_PASS] = {"S_PASS", ST, {0}},
    [S_BREAK] = {"S_BREAK", ST, {0}},
    [S_CONTINUE] = {"S_CONTINUE", ST, {0}},
    [S_RETURN] = {"S_RETURN", ST, {EX | OPT}},
    [S_RAISE] = {"S_RAISE", ST, {EX | OPT, EX | OPT}},
    [S_GLOBAL] = {"S_GLOBAL", ST, {0, 0, 0, EX}},
    [S_NONLOCAL] = {"S_NONLOCAL", ST, {0, 0, 0, EX}},
    [S_IMPORT] = {"S_IMPORT", ST, {0, 0, 0, AL}},
    [S_IMPORTFROM] = {"S_IMPORTFROM", ST, {0, 0, 0, AL}},
    [E_ALIAS] = {"E_ALIAS", AL, {0, EX | OPT}},
    [S_IF] = {"S_IF", ST, {EX, 0, 0, ST, ST}},
    [S_WHILE] = {"S_WHILE", ST, {EX, 0, 0, ST, ST}},
    [S_FOR] = {"S_FOR", ST, {EX, EX, 0, ST, ST}},
    [S_TRY] = {"S_TRY", ST, {0, 0, 0, ST, HA, ST, ST}},
    [S_EXCEPT] = {"S_EXCEPT", HA, {EX | OPT, 0, 0, ST}},
    [S_WITH] = {"S_WITH", ST, {0, 0, 0, WI, ST}},
    [E_WITHITEM] = {"E_WITHITEM", WI, {EX, EX | OPT}},
    [S_FUNCTIONDEF] = {"S_FUNCTIONDEF", ST, {0, EX | OPT, AR, ST, EX, 0, TP}},
    [E_ARGUMENTS] = {"E_ARGUMENTS", AR, {AG | OPT, AG | OPT, 0, AG, AG}},
    [E_ARG] = {"E_ARG", AG, {EX | OPT, EX | OPT}},
    [S_CLASSDEF] = {"S_CLASSDEF", ST, {0, 0, 0, ST, EX, EX | KW, TP}},
    [S_TYPEALIAS] = {"S_TYPEALIAS", ST, {EX, 0, 0, 0, 0, 0, TP}},
    [S_ASSERT] = {"S_ASSERT", ST, {EX, EX | OPT}},
    [S_MATCH] = {"S_MATCH", ST, {EX, 0, 0, CA}},
    [S_CASE] = {"S_CASE", CA, {PA, EX | OPT, 0, ST}},
    [P_VALUE] = {"P_VALUE", PA, {EX}},
    [P_SINGLETON] = {"P_SINGLETON", PA, {0}},
    [P_SEQUENCE] = {"P_SEQUENCE", PA, {0, 0, 0, PA}},
    [P_MAPPING] = {"P_MAPPING", PA, {0, 0, 0, EX, PA}},
    [P_CLASS] = {"P_CLASS", PA, {EX, 0, 0, PA, KP}},
    [P_STAR] = {"P_STAR", PA, {0}},
    [P_AS] = {"P_AS", PA, {PA | OPT}},
    [P_OR] = {"P_OR", PA, {0, 0, 0, PA}},
    [S_COMMENT] = {"S_COMMENT", ST, {0}},
    [S_BLOCK] = {"S_BLOCK", ST, {0, 0, 0, ST}},
};

unsigned dp_node_class(int kind) {
    return kind >= 0 && kind < DP_NODE_KIND_COUNT ? SCHEMA[kind].cls : 0;
}

static const char *kind_name(int kind) {
    return kind >= 0 && kind < DP_NODE_KIND_COUNT && SCHEMA[kind].name ? SCHEMA[kind].name : "?";
}

typedef struct checker {
    dp_error *err;
    int max_depth;
    int into_defs; /* check the bodies of defs and classes too */
} checker;

static int node(checker *c, const dp_node *n, unsigned want, int depth);

static const char *class_name(unsigned cls) {
    return cls & EX ? "an expression" : cls & ST ? "a statement" : cls & PA ? "a pattern" : "a part of a larger node";
}

static int field(checker *c, const dp_node *parent, const char *name, const dp_node *n, unsigned want,
                 int depth) {
    if (n == NULL) {
        if (want == 0 || (want & OPT))
            return 0;
        return dp_fail(c->err, parent->offset, "%s lacks its %s", kind_name(parent->kind), name);
    }
    if (want == 0)
        return dp_fail(c->err, parent->offset, "%s has a %s it does not use", kind_name(parent->kind), name);
    return node(c, n, want & ~OPT, depth + 1);
}

static int list(checker *c, const dp_node *parent, int which, const dp_nodes *l, unsigned want, int depth) {
    if (l->n == 0)
        return 0;
    if (want == 0 || l->v == NULL || l->n < 0)
        return dp_fail(c->err, parent->offset, "%s has a list l%d it does not use", kind_name(parent->kind), which);
    /* a definition's body was checked when its code object was */
    if (which == 1 && !c->into_defs && (parent->kind == S_FUNCTIONDEF || parent->kind == S_CLASSDEF))
        return 0;
    for (int k = 0; k < l->n; k++) {
        const dp_node *e = l->v[k];
        /* (only a dict's keys may be absent: `**value`) */
        if (e == NULL && parent->kind == E_DICT && which == 1)
            continue;
        if (e == NULL)
            return dp_fail(c->err, parent->offset, "%s has an empty entry in l%d", kind_name(parent->kind), which);
        if (node(c, e, want, depth + 1) < 0)
            return -1;
    }
    return 0;
}

static int node(checker *c, const dp_node *n, unsigned want, int depth) {
    if (depth > c->max_depth)
        return dp_fail(c->err, n->offset, "statements or expressions nested deeper than %d levels", c->max_depth);
    /* a keyword of a class pattern holds a pattern: `C(x=[a, b])` */
    int kw_pattern = (want & KP) && n->kind == E_KEYWORD;
    unsigned cls = kw_pattern ? KP : dp_node_class(n->kind);
    if (cls == 0)
        return dp_fail(c->err, n->offset, "an interpreter-only value (node kind %d) was kept in the structure",
                       n->kind);
    if (!(cls & want))
        return dp_fail(c->err, n->offset, "%s (%s) stands where %s belongs", class_name(cls), kind_name(n->kind),
                       class_name(want));
    const schema *s = &SCHEMA[n->kind];
    if (n->kind == E_COMPARE && n->l1.n > 0 && n->ops == NULL)
        return dp_fail(c->err, n->offset, "a comparison without its operators");
    return field(c, n, "a", n->a, kw_pattern ? PA : s->f[0], depth) < 0 ||
                   field(c, n, "b", n->b, s->f[1], depth) < 0 || field(c, n, "c", n->c, s->f[2], depth) < 0 ||
                   list(c, n, 1, &n->l1, s->f[3], depth) < 0 || list(c, n, 2, &n->l2, s->f[4], depth) < 0 ||
                   list(c, n, 3, &n->l3, s->f[5], depth) < 0 || list(c, n, 4, &n->l4, s->f[6], depth) < 0
               ? -1
               : 0;
}

int dp_ast_check(const dp_nodes *body, int into_defs, int max_depth, dp_error *err) {
    checker c = {err, max_depth, into_defs};
    for (int k = 0; k < body->n; k++) {
        if (body->v[k] == NULL)
            return dp_fail(err, -1, "an empty statement in a body");
        if (node(&c, body->v[k], ST, 0) < 0)
            return -1;
    }
    return 0;
}
