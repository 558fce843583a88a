/* The AST's types (ast_check.c): a well-formed tree passes; a statement in
 * an expression's place, an expression in a body, an interpreter-only
 * value, a missing or unused field, an empty list entry and a tree past
 * the depth bound are each refused with a message. */
#include "ast.h"
#include "dc.h"
#include "testlib.h"

static dp_arena ar;
static dp_error err;

static dp_node *mk(int kind) { return dp_node_new(&ar, kind); }

static dp_node *name(const char *s) {
    dp_node *n = mk(E_NAME);
    n->s = s;
    return n;
}

static void push(dp_nodes *l, dp_node *n) { CHECK(dp_nodes_push(&ar, l, n) == 0); }

/* Checks `body` (one statement), expecting a message holding `want`, or
 * none when want is NULL. */
static void expect(dp_node *st, const char *want) {
    dp_nodes body = {0};
    push(&body, st);
    dp_error_init(&err);
    int r = dp_ast_check(&body, 1, 2000, &err);
    if (want == NULL) {
        CHECK(r == 0);
        if (r != 0)
            fprintf(stderr, "  refused: %s\n", err.msg);
    } else {
        CHECK(r < 0 && strstr(err.msg, want) != NULL);
        if (r == 0 || strstr(err.msg, want) == NULL)
            fprintf(stderr, "  want [%s], got [%s]\n", want, r < 0 ? err.msg : "(accepted)");
    }
}

/* if x: y = f(a, k=b) else: return [c for c in d] */
static dp_node *good_if(void) {
    dp_node *call = mk(E_CALL), *kw = mk(E_KEYWORD), *asg = mk(S_ASSIGN), *st = mk(S_IF);
    call->a = name("f");
    push(&call->l1, name("a"));
    kw->s = "k";
    kw->a = name("b");
    push(&call->l2, kw);
    push(&asg->l1, name("y"));
    asg->b = call;
    dp_node *comp = mk(E_LISTCOMP), *clause = mk(E_COMPREHENSION), *ret = mk(S_RETURN);
    comp->a = name("c");
    clause->a = name("c");
    clause->b = name("d");
    push(&comp->l1, clause);
    ret->a = comp;
    st->a = name("x");
    push(&st->l1, asg);
    push(&st->l2, ret);
    return st;
}

static void test_well_formed_tree_passes(void) {
    expect(good_if(), NULL);
    /* match p: case C(k=[a, *r]) if g: pass */
    dp_node *m = mk(S_MATCH), *c = mk(S_CASE), *cls = mk(P_CLASS), *kw = mk(E_KEYWORD), *seq = mk(P_SEQUENCE);
    dp_node *star = mk(P_STAR), *cap = mk(P_AS);
    cap->s = "a";
    star->s = "r";
    push(&seq->l1, cap);
    push(&seq->l1, star);
    kw->s = "k";
    kw->a = seq;
    cls->a = name("C");
    push(&cls->l2, kw);
    c->a = cls;
    c->b = name("g");
    push(&c->l1, mk(S_PASS));
    m->a = name("p");
    push(&m->l1, c);
    expect(m, NULL);
    /* x = {**a, 'k': b} (a dict's key may be absent) */
    dp_node *d = mk(E_DICT), *asg = mk(S_ASSIGN);
    push(&d->l1, NULL);
    push(&d->l2, name("a"));
    push(&d->l1, name("k"));
    push(&d->l2, name("b"));
    push(&asg->l1, name("x"));
    asg->b = d;
    expect(asg, NULL);
}

static void test_statement_in_expression_place(void) {
    dp_node *st = good_if();
    st->a = mk(S_PASS); /* if pass: */
    expect(st, "a statement (S_PASS) stands where an expression belongs");
    dp_node *e = mk(S_EXPR);
    e->a = good_if(); /* an if as an expression statement's value */
    expect(e, "a statement (S_IF) stands where an expression belongs");
}

static void test_expression_in_body(void) {
    dp_node *st = good_if();
    push(&st->l1, name("z"));
    expect(st, "an expression (E_NAME) stands where a statement belongs");
    expect(name("z"), "stands where a statement belongs");
}

static void test_pattern_and_expression_kept_apart(void) {
    dp_node *c = mk(S_CASE), *m = mk(S_MATCH);
    c->a = name("x"); /* case <expression>: a value pattern is P_VALUE */
    push(&c->l1, mk(S_PASS));
    m->a = name("p");
    push(&m->l1, c);
    expect(m, "an expression (E_NAME) stands where a pattern belongs");
    /* a call's keyword value is an expression, not a pattern */
    dp_node *call = mk(E_CALL), *kw = mk(E_KEYWORD), *e = mk(S_EXPR), *pat = mk(P_AS);
    pat->s = "a";
    kw->s = "k";
    kw->a = pat;
    call->a = name("f");
    push(&call->l2, kw);
    e->a = call;
    expect(e, "a pattern (P_AS) stands where an expression belongs");
}

static void test_interpreter_only_value(void) {
    dp_node *e = mk(S_EXPR);
    e->a = mk(X_NULL);
    expect(e, "an interpreter-only value");
}

static void test_missing_and_unused_fields(void) {
    dp_node *st = good_if();
    st->a = NULL;
    expect(st, "S_IF lacks its a");
    dp_node *r = mk(S_RETURN); /* a bare return is fine */
    expect(r, NULL);
    r->b = name("dropped"); /* a field the printer would not print */
    expect(r, "S_RETURN has a b it does not use");
    dp_node *p = mk(S_PASS);
    push(&p->l3, mk(S_PASS));
    expect(p, "S_PASS has a list l3 it does not use");
    dp_node *cmp = mk(E_COMPARE), *e = mk(S_EXPR);
    cmp->a = name("a");
    push(&cmp->l1, name("b")); /* no operators */
    e->a = cmp;
    expect(e, "without its operators");
}

static void test_empty_entries(void) {
    dp_node *t = mk(E_TUPLE), *e = mk(S_EXPR);
    push(&t->l1, name("a"));
    push(&t->l1, NULL); /* an unfilled unpack target */
    e->a = t;
    expect(e, "E_TUPLE has an empty entry in l1");
    dp_node *st = good_if();
    push(&st->l1, NULL);
    expect(st, "S_IF has an empty entry in l1");
}

static void test_depth_bound(void) {
    dp_node *e = mk(S_EXPR), *v = name("x");
    for (int k = 0; k < 3000; k++) {
        dp_node *u = mk(E_UNARY);
        u->a = v;
        v = u;
    }
    e->a = v;
    expect(e, "nested deeper than 2000 levels");
}

static void test_def_bodies_only_when_asked(void) {
    dp_node *def = mk(S_FUNCTIONDEF);
    def->s = "f";
    def->c = mk(E_ARGUMENTS);
    push(&def->l1, name("not_a_statement"));
    dp_nodes body = {0};
    push(&body, def);
    dp_error_init(&err);
    CHECK(dp_ast_check(&body, 0, 2000, &err) == 0); /* checked as its own code object */
    CHECK(dp_ast_check(&body, 1, 2000, &err) < 0);
}

int main(void) {
    dp_arena_init(&ar);
    RUN(test_well_formed_tree_passes);
    RUN(test_statement_in_expression_place);
    RUN(test_expression_in_body);
    RUN(test_pattern_and_expression_kept_apart);
    RUN(test_interpreter_only_value);
    RUN(test_missing_and_unused_fields);
    RUN(test_empty_entries);
    RUN(test_depth_bound);
    RUN(test_def_bodies_only_when_asked);
    dp_arena_free(&ar);
    return TEST_REPORT();
}
