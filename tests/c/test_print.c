/* The printer: hand-built ASTs against the exact source text expected
 * (precedence, f-string quoting, statements, patterns, line tracking,
 * bounded nesting). */
#include <stdarg.h>
#include <string.h>

#include "print.h"
#include "testlib.h"

static dp_arena ar;

/* ---- AST builders ---- */

static dp_node *node(int kind) { return dp_node_new(&ar, kind); }

/* A list from NULL-terminated arguments. */
static dp_nodes ls(dp_node *first, ...) {
    dp_nodes l = {0};
    va_list ap;
    va_start(ap, first);
    for (dp_node *n = first; n != NULL; n = va_arg(ap, dp_node *))
        dp_nodes_push(&ar, &l, n);
    va_end(ap);
    return l;
}
#define L(...) ls(__VA_ARGS__, (dp_node *)NULL)
static const dp_nodes NONE_ = {0};

static dp_node *nm(const char *s) {
    dp_node *n = node(E_NAME);
    n->s = s;
    return n;
}

static dp_node *cst(dp_const *c) {
    dp_node *n = node(E_CONST);
    n->cst = c;
    return n;
}

static dp_const *int_const(const char *text) {
    dp_const *c = dp_const_new(&ar, DP_CONST_INT);
    c->text = text;
    c->len = strlen(text);
    return c;
}

static dp_node *kint(const char *text) { return cst(int_const(text)); }

static dp_node *kfloat(double f) {
    dp_const *c = dp_const_new(&ar, DP_CONST_FLOAT);
    c->f = f;
    return cst(c);
}

static dp_node *kstr(const char *s) {
    dp_const *c = dp_const_new(&ar, DP_CONST_STR);
    c->text = s;
    c->len = strlen(s);
    return cst(c);
}

static dp_node *kone(dp_const_kind kind) { return cst(dp_const_new(&ar, kind)); }

/* A tuple or frozenset constant of small ints. */
static dp_node *kseq(dp_const_kind kind, const char *a, const char *b) {
    dp_const *c = dp_const_new(&ar, kind);
    c->items = dp_alloc_array(&ar, 2, sizeof *c->items);
    c->items[0] = int_const(a);
    c->items[1] = int_const(b);
    c->n = 2;
    return cst(c);
}

static dp_node *n2(int kind, dp_node *a, dp_node *b) {
    dp_node *n = node(kind);
    n->a = a;
    n->b = b;
    return n;
}

static dp_node *bin(dp_node *a, int op, dp_node *b) {
    dp_node *n = n2(E_BINOP, a, b);
    n->op = op;
    return n;
}

static dp_node *un(int op, dp_node *a) {
    dp_node *n = n2(E_UNARY, a, NULL);
    n->op = op;
    return n;
}

static dp_node *boolop(int op, dp_nodes vals) {
    dp_node *n = node(E_BOOLOP);
    n->op = op;
    n->l1 = vals;
    return n;
}

static dp_node *cmp(dp_node *a, int op, dp_node *b) {
    dp_node *n = n2(E_COMPARE, a, NULL);
    n->l1 = L(b);
    n->ops = dp_alloc(&ar, sizeof *n->ops);
    n->ops[0] = op;
    return n;
}

static dp_node *cmp2(dp_node *a, int op1, dp_node *b, int op2, dp_node *c) {
    dp_node *n = cmp(a, op1, b);
    dp_nodes_push(&ar, &n->l1, c);
    int *ops = dp_alloc_array(&ar, 2, sizeof *ops);
    ops[0] = op1, ops[1] = op2;
    n->ops = ops;
    return n;
}

static dp_node *ifexp(dp_node *body, dp_node *test, dp_node *orelse) {
    dp_node *n = n2(E_IFEXP, test, body);
    n->c = orelse;
    return n;
}

static dp_node *seq(int kind, dp_nodes l) {
    dp_node *n = node(kind);
    n->l1 = l;
    return n;
}

static dp_node *call(dp_node *f, dp_nodes pos, dp_nodes kw) {
    dp_node *n = n2(E_CALL, f, NULL);
    n->l1 = pos;
    n->l2 = kw;
    return n;
}

static dp_node *kw(const char *s, dp_node *v) {
    dp_node *n = n2(E_KEYWORD, v, NULL);
    n->s = s;
    return n;
}

static dp_node *attr(dp_node *a, const char *s) {
    dp_node *n = n2(E_ATTR, a, NULL);
    n->s = s;
    return n;
}

static dp_node *slc(dp_node *lo, dp_node *hi, dp_node *step) {
    dp_node *n = n2(E_SLICE, lo, hi);
    n->c = step;
    return n;
}

static dp_node *named(const char *s, dp_node *v) {
    dp_node *n = n2(E_NAMED, v, NULL);
    n->s = s;
    return n;
}

static dp_node *arg(const char *s, dp_node *ann, dp_node *dflt) {
    dp_node *n = n2(E_ARG, ann, dflt);
    n->s = s;
    return n;
}

static dp_node *arguments(dp_nodes pos, int posonly, dp_node *star, dp_nodes kwonly, dp_node *dstar) {
    dp_node *n = n2(E_ARGUMENTS, star, dstar);
    n->l1 = pos;
    n->l2 = kwonly;
    n->op = posonly;
    return n;
}

static dp_node *comp(dp_node *target, dp_node *iter, dp_nodes ifs, int async) {
    dp_node *n = n2(E_COMPREHENSION, target, iter);
    n->l1 = ifs;
    n->op = async;
    return n;
}

static dp_node *fmt(dp_node *v, int conv, dp_node *spec) {
    dp_node *n = n2(E_FORMATTED, v, spec);
    n->op = conv;
    return n;
}

/* ---- statements ---- */

static dp_node *s1(int kind, dp_node *a) { return n2(kind, a, NULL); }

static dp_node *assign(dp_node *target, dp_node *value) {
    dp_node *n = n2(S_ASSIGN, NULL, value);
    n->l1 = L(target);
    return n;
}

static dp_node *body_stmt(int kind, dp_node *a, dp_nodes body, dp_nodes orelse) {
    dp_node *n = n2(kind, a, NULL);
    n->l1 = body;
    n->l2 = orelse;
    return n;
}

static dp_node *comment(const char *s) {
    dp_node *n = node(S_COMMENT);
    n->s = s;
    return n;
}

static dp_node *def(const char *name, dp_node *params, dp_nodes body) {
    dp_node *n = node(S_FUNCTIONDEF);
    n->s = name;
    n->c = params ? params : arguments(NONE_, 0, NULL, NONE_, NULL);
    n->l1 = body;
    return n;
}

static dp_node *pass(void) { return node(S_PASS); }

/* ---- printing ---- */

static const char *result(int rc, dp_buf *b, const dp_error *err) {
    const char *s;
    if (rc == 0)
        s = dp_strdup(&ar, b->data ? b->data : "");
    else {
        char msg[sizeof err->msg + 8];
        snprintf(msg, sizeof msg, "ERROR: %s", err->msg);
        s = dp_strdup(&ar, msg);
    }
    dp_buf_free(b);
    return s;
}

/* An expression printed for source that must compile under 3.<py_minor>. */
static const char *ex_for(const dp_node *e, int py_minor) {
    dp_buf b;
    dp_error err;
    dp_printer p;
    dp_buf_init(&b);
    dp_error_init(&err);
    dp_printer_init(&p, &b, 4, &err);
    p.py_minor = py_minor;
    const char *r = result(dp_print_expr(&p, e), &b, &err);
    dp_printer_free(&p);
    return r;
}

static const char *ex(const dp_node *e) { return ex_for(e, 0); }

static const char *src(dp_nodes body) {
    dp_buf b;
    dp_error err;
    dp_printer p;
    dp_buf_init(&b);
    dp_error_init(&err);
    dp_printer_init(&p, &b, 4, &err);
    const char *r = result(dp_print_block(&p, &body, 0), &b, &err);
    dp_printer_free(&p);
    return r;
}

#define A nm("a")
#define B nm("b")
#define C nm("c")
#define D nm("d")

/* ---- tests ---- */

static void test_binary_precedence(void) {
    CHECK_STR(ex(bin(bin(A, DP_BIN_ADD, B), DP_BIN_MUL, C)), "(a + b) * c");
    CHECK_STR(ex(bin(A, DP_BIN_ADD, bin(B, DP_BIN_MUL, C))), "a + b * c");
    CHECK_STR(ex(bin(A, DP_BIN_SUB, bin(B, DP_BIN_SUB, C))), "a - (b - c)");
    CHECK_STR(ex(bin(bin(A, DP_BIN_SUB, B), DP_BIN_SUB, C)), "a - b - c");
    CHECK_STR(ex(bin(bin(A, DP_BIN_MUL, B), DP_BIN_ADD, bin(C, DP_BIN_FLOORDIV, D))), "a * b + c // d");
    CHECK_STR(ex(bin(bin(A, DP_BIN_OR, B), DP_BIN_AND, C)), "(a | b) & c");
    CHECK_STR(ex(bin(A, DP_BIN_XOR, bin(B, DP_BIN_LSHIFT, C))), "a ^ b << c");
    CHECK_STR(ex(bin(A, DP_BIN_MATMUL, bin(B, DP_BIN_MOD, C))), "a @ (b % c)");
}

static void test_power_and_unary(void) {
    CHECK_STR(ex(un(DP_UN_NEG, bin(A, DP_BIN_POW, B))), "-a ** b");
    CHECK_STR(ex(bin(un(DP_UN_NEG, A), DP_BIN_POW, B)), "(-a) ** b");
    CHECK_STR(ex(bin(A, DP_BIN_POW, un(DP_UN_NEG, B))), "a ** -b");
    CHECK_STR(ex(bin(A, DP_BIN_POW, bin(B, DP_BIN_POW, C))), "a ** b ** c");
    CHECK_STR(ex(bin(bin(A, DP_BIN_POW, B), DP_BIN_POW, C)), "(a ** b) ** c");
    CHECK_STR(ex(un(DP_UN_NEG, bin(A, DP_BIN_ADD, B))), "-(a + b)");
    CHECK_STR(ex(un(DP_UN_NEG, un(DP_UN_NEG, A))), "-(-a)");
    CHECK_STR(ex(un(DP_UN_INVERT, un(DP_UN_NEG, A))), "~-a");
    CHECK_STR(ex(un(DP_UN_NEG, kint("-1"))), "-(-1)");
    CHECK_STR(ex(bin(kint("-1"), DP_BIN_POW, kint("2"))), "(-1) ** 2");
    CHECK_STR(ex(bin(kint("2"), DP_BIN_POW, kint("-1"))), "2 ** -1");
    CHECK_STR(ex(bin(kfloat(-0.5), DP_BIN_POW, kint("2"))), "(-0.5) ** 2");
    CHECK_STR(ex(bin(A, DP_BIN_SUB, kint("-1"))), "a - -1");
    dp_node *aw = n2(E_AWAIT, A, NULL);
    CHECK_STR(ex(bin(aw, DP_BIN_POW, kint("2"))), "await a ** 2");
    CHECK_STR(ex(n2(E_AWAIT, bin(A, DP_BIN_ADD, B), NULL)), "await (a + b)");
    CHECK_STR(ex(un(DP_UN_NEG, aw)), "-await a");
}

static void test_boolean_and_comparison(void) {
    CHECK_STR(ex(un(DP_UN_NOT, boolop(0, L(A, B)))), "not (a and b)");
    CHECK_STR(ex(boolop(0, L(un(DP_UN_NOT, A), B))), "not a and b");
    CHECK_STR(ex(boolop(1, L(A, boolop(0, L(B, C))))), "a or b and c");
    CHECK_STR(ex(boolop(0, L(boolop(1, L(A, B)), C))), "(a or b) and c");
    CHECK_STR(ex(boolop(0, L(boolop(0, L(A, B)), C))), "(a and b) and c");
    CHECK_STR(ex(boolop(0, L(A, B, C))), "a and b and c");
    CHECK_STR(ex(cmp2(A, DP_CMP_LT, B, DP_CMP_LE, C)), "a < b <= c");
    CHECK_STR(ex(cmp(cmp(A, DP_CMP_LT, B), DP_CMP_LT, C)), "(a < b) < c");
    CHECK_STR(ex(un(DP_UN_NOT, cmp(A, DP_CMP_EQ, B))), "not a == b");
    CHECK_STR(ex(cmp(A, DP_CMP_EQ, un(DP_UN_NOT, B))), "a == (not b)");
    CHECK_STR(ex(cmp(A, DP_CMP_IS_NOT, kone(DP_CONST_NONE))), "a is not None");
    CHECK_STR(ex(cmp(bin(A, DP_BIN_OR, B), DP_CMP_NOT_IN, C)), "a | b not in c");
    /* x in {1, 2} compiles the set display to this frozenset constant */
    CHECK_STR(ex(cmp(A, DP_CMP_IN, kseq(DP_CONST_FROZENSET, "1", "2"))), "a in {1, 2}");
    CHECK_STR(ex(cmp(A, DP_CMP_EQ, kseq(DP_CONST_FROZENSET, "1", "2"))), "a == frozenset({1, 2})");
}

static void test_conditional_lambda_walrus_yield(void) {
    CHECK_STR(ex(call(ifexp(A, B, C), L(D), NONE_)), "(a if b else c)(d)");
    CHECK_STR(ex(ifexp(A, B, ifexp(C, D, A))), "a if b else c if d else a");
    CHECK_STR(ex(ifexp(ifexp(A, B, C), D, A)), "(a if b else c) if d else a");
    dp_node *lam = n2(E_LAMBDA, NULL, kint("1"));
    CHECK_STR(ex(call(lam, NONE_, NONE_)), "(lambda: 1)()");
    CHECK_STR(ex(ifexp(lam, A, B)), "(lambda: 1) if a else b");
    CHECK_STR(ex(n2(E_LAMBDA, NULL, ifexp(A, B, C))), "lambda: a if b else c");
    CHECK_STR(ex(n2(E_LAMBDA, arguments(NONE_, 0, NULL, NONE_, NULL), seq(E_TUPLE, L(A, B)))), "lambda: (a, b)");
    dp_node *params = arguments(L(arg("x", NULL, NULL), arg("y", nm("int"), kint("1"))), 1, arg("args", NULL, NULL),
                                L(arg("z", NULL, NULL)), arg("kw", NULL, NULL));
    CHECK_STR(ex(n2(E_LAMBDA, params, nm("x"))), "lambda x, /, y=1, *args, z, **kw: x");
    CHECK_STR(ex(n2(E_LAMBDA, arguments(NONE_, 0, NULL, L(arg("k", NULL, NULL)), NULL), nm("k"))), "lambda *, k: k");
    CHECK_STR(ex(named("y", call(nm("f"), L(A), NONE_))), "(y := f(a))");
    CHECK_STR(ex(call(nm("f"), L(named("x", kint("1"))), NONE_)), "f((x := 1))");
    dp_node *y = n2(E_YIELD, NULL, NULL);
    CHECK_STR(ex(y), "yield");
    CHECK_STR(ex(call(nm("f"), L(y), NONE_)), "f((yield))");
    CHECK_STR(ex(bin(n2(E_YIELD, A, NULL), DP_BIN_ADD, kint("1"))), "(yield a) + 1");
    CHECK_STR(ex(n2(E_YIELD, seq(E_TUPLE, L(A, B)), NULL)), "yield a, b");
    CHECK_STR(ex(n2(E_AWAIT, n2(E_YIELD_FROM, A, NULL), NULL)), "await (yield from a)");
}

static void test_primaries(void) {
    CHECK_STR(ex(attr(kint("1"), "real")), "(1).real");
    CHECK_STR(ex(attr(kint("-1"), "real")), "(-1).real");
    CHECK_STR(ex(attr(kfloat(1.5), "real")), "1.5.real");
    CHECK_STR(ex(attr(kstr("-"), "join")), "'-'.join");
    CHECK_STR(ex(attr(bin(A, DP_BIN_ADD, B), "c")), "(a + b).c");
    CHECK_STR(ex(call(attr(call(A, NONE_, NONE_), "b"), NONE_, NONE_)), "a().b()");
    dp_node *starred = n2(E_STARRED, A, NULL), *dstar = kw(NULL, B);
    CHECK_STR(ex(call(nm("f"), L(kint("1"), starred), L(kw("k", kint("2")), dstar))), "f(1, *a, k=2, **b)");
    CHECK_STR(ex(call(nm("f"), NONE_, L(kw("key", n2(E_LAMBDA, NULL, A))))), "f(key=lambda: a)");
    CHECK_STR(ex(call(nm("f"), L(n2(E_STARRED, bin(A, DP_BIN_ADD, B), NULL)), NONE_)), "f(*(a + b))");
    dp_node *gen = seq(E_GENEXP, L(comp(nm("x"), nm("y"), NONE_, 0)));
    gen->a = nm("x");
    CHECK_STR(ex(call(nm("f"), L(gen), NONE_)), "f(x for x in y)");
    CHECK_STR(ex(call(nm("f"), L(gen, A), NONE_)), "f((x for x in y), a)");
}

static void test_subscripts_and_slices(void) {
    CHECK_STR(ex(n2(E_SUBSCR, A, B)), "a[b]");
    CHECK_STR(ex(n2(E_SUBSCR, A, slc(B, C, NULL))), "a[b:c]");
    CHECK_STR(ex(n2(E_SUBSCR, A, slc(NULL, NULL, kint("2")))), "a[::2]");
    CHECK_STR(ex(n2(E_SUBSCR, A, slc(kone(DP_CONST_NONE), kint("2"), NULL))), "a[:2]");
    CHECK_STR(ex(n2(E_SUBSCR, A, slc(NULL, NULL, kone(DP_CONST_NONE)))), "a[::None]");
    CHECK_STR(ex(n2(E_SUBSCR, A, slc(ifexp(B, C, D), NULL, NULL))), "a[b if c else d:]");
    CHECK_STR(ex(n2(E_SUBSCR, A, seq(E_TUPLE, L(slc(NULL, NULL, NULL), kint("0"))))), "a[:, 0]");
    CHECK_STR(ex(n2(E_SUBSCR, A, seq(E_TUPLE, L(slc(kint("1"), NULL, NULL))))), "a[1:,]");
    CHECK_STR(ex(n2(E_SUBSCR, D, seq(E_TUPLE, L(A, B)))), "d[a, b]");
    CHECK_STR(ex(n2(E_SUBSCR, D, seq(E_TUPLE, L(n2(E_STARRED, A, NULL), B)))), "d[(*a, b)]");
    CHECK_STR(ex(n2(E_SUBSCR, D, seq(E_TUPLE, NONE_))), "d[()]");
    CHECK_STR(ex(n2(E_SUBSCR, D, seq(E_TUPLE, L(A)))), "d[(a,)]");
    CHECK_STR(ex(n2(E_SUBSCR, D, kseq(DP_CONST_TUPLE, "1", "2"))), "d[1, 2]");
    CHECK_STR(ex(slc(A, NULL, NULL)), "slice(a, None, None)");
}

static void test_displays_and_comprehensions(void) {
    CHECK_STR(ex(seq(E_TUPLE, NONE_)), "()");
    CHECK_STR(ex(seq(E_TUPLE, L(A))), "(a,)");
    CHECK_STR(ex(seq(E_TUPLE, L(A, B))), "a, b");
    CHECK_STR(ex(call(nm("f"), L(seq(E_TUPLE, L(A, B))), NONE_)), "f((a, b))");
    CHECK_STR(ex(seq(E_LIST, L(A, n2(E_STARRED, B, NULL)))), "[a, *b]");
    CHECK_STR(ex(seq(E_SET, L(A))), "{a}");
    CHECK_STR(ex(seq(E_SET, NONE_)), "set()");
    dp_node *d = node(E_DICT);
    d->l1 = L(A, kstr("k"));
    d->l2 = L(B, n2(E_LAMBDA, NULL, C));
    dp_nodes_push(&ar, &d->l1, NULL);
    dp_nodes_push(&ar, &d->l2, D);
    CHECK_STR(ex(d), "{a: b, 'k': lambda: c, **d}");
    dp_node *lc = seq(E_LISTCOMP, L(comp(seq(E_TUPLE, L(A, B)), C, L(A, boolop(1, L(B, C))), 0),
                                    comp(D, ifexp(A, B, C), NONE_, 1)));
    lc->a = bin(A, DP_BIN_ADD, B);
    CHECK_STR(ex(lc), "[a + b for a, b in c if a if b or c async for d in (a if b else c)]");
    dp_node *dc = seq(E_DICTCOMP, L(comp(A, B, NONE_, 0)));
    dc->a = A, dc->b = n2(E_LAMBDA, NULL, A);
    CHECK_STR(ex(dc), "{a: (lambda: a) for a in b}");
    dp_node *sc = seq(E_SETCOMP, L(comp(A, kseq(DP_CONST_FROZENSET, "1", "2"), NONE_, 0)));
    sc->a = A;
    CHECK_STR(ex(sc), "{a for a in {1, 2}}");
}

static void test_fstrings(void) {
    dp_node *plain = seq(E_JOINEDSTR, L(kstr("a{b}")));
    CHECK_STR(ex(plain), "f'a{{b}}'");
    dp_node *spec = seq(E_JOINEDSTR, L(kstr(">"), fmt(nm("w"), 0, NULL)));
    CHECK_STR(ex(seq(E_JOINEDSTR, L(kstr("x="), fmt(nm("x"), 'r', spec)))), "f'x={x!r:>{w}}'");
    CHECK_STR(ex(fmt(A, 's', NULL)), "f'{a!s}'");
    dp_node *key = n2(E_SUBSCR, D, kstr("k"));
    CHECK_STR(ex(seq(E_JOINEDSTR, L(fmt(key, 0, NULL), kstr("'")))), "f\"{d['k']}'\"");
    /* an inner string holding both quotes fits only in triple quotes */
    CHECK_STR(ex(seq(E_JOINEDSTR, L(fmt(n2(E_SUBSCR, D, kstr("it's")), 0, NULL)))), "f'''{d[\"it's\"]}'''");
    dp_node *inner = seq(E_JOINEDSTR, L(fmt(A, 0, NULL)));
    CHECK_STR(ex(seq(E_JOINEDSTR, L(fmt(inner, 0, NULL)))), "f'{f\"{a}\"}'");
    dp_node *dict = node(E_DICT);
    dict->l1 = L(kint("1"));
    dict->l2 = L(kint("2"));
    CHECK_STR(ex(seq(E_JOINEDSTR, L(fmt(dict, 0, NULL)))), "f'{ {1: 2} }'");
    CHECK_STR(ex(seq(E_JOINEDSTR, L(fmt(seq(E_TUPLE, L(A, B)), 0, NULL)))), "f'{(a, b)}'");
    /* no f-string spelling before 3.12 (3.11 compiles `"%s\n" % x` to this):
     * format() calls compute the same string; 3.12+ takes any field (PEP 701) */
    dp_node *join = call(attr(kstr("\n"), "join"), L(A), NONE_);
    dp_node *joined = seq(E_JOINEDSTR, L(kstr("it's"), fmt(join, 0, NULL)));
    CHECK_STR(ex(joined), "(\"it's\" + format('\\n'.join(a)))");
    /* (fields all of a %-format's kind: that %-format) */
    CHECK_STR(ex_for(seq(E_JOINEDSTR, L(fmt(join, 'r', seq(E_JOINEDSTR, L(kstr(">4")))))), 11), "('%4r' % ('\\n'.join(a),))");
    CHECK_STR(ex_for(seq(E_JOINEDSTR, L(kstr("5%"), fmt(join, 's', seq(E_JOINEDSTR, L(kstr("3.0")))), fmt(A, 'a', NULL))), 11),
              "('5%%%-3.0s%a' % ('\\n'.join(a), a))");
    CHECK_STR(ex_for(seq(E_JOINEDSTR, L(fmt(join, 'r', seq(E_JOINEDSTR, L(kstr("<4")))))), 11), "(format(repr('\\n'.join(a)), f'<4'))");
    CHECK_STR(ex_for(joined, 12), "f\"it's{'\\n'.join(a)}\"");
    CHECK_STR(ex(fmt(A, 'x', NULL)), "ERROR: bad f-string conversion 120");
}

static void test_simple_statements(void) {
    dp_node *multi = n2(S_ASSIGN, NULL, n2(E_YIELD, A, NULL));
    multi->l1 = L(nm("x"), seq(E_TUPLE, L(A, B)));
    dp_node *aug = n2(S_AUGASSIGN, attr(nm("self"), "n"), kint("1"));
    aug->op = DP_BIN_FLOORDIV;
    dp_node *ann_simple = n2(S_ANNASSIGN, nm("x"), nm("int"));
    ann_simple->op = 1;
    ann_simple->c = seq(E_TUPLE, L(A, B));
    dp_node *ann_paren = n2(S_ANNASSIGN, nm("y"), nm("str"));
    dp_node *del = node(S_DELETE);
    del->l1 = L(A, n2(E_SUBSCR, B, kint("0")));
    dp_node *raise = n2(S_RAISE, call(nm("E"), NONE_, NONE_), A);
    dp_node *glob = node(S_GLOBAL);
    glob->l1 = L(A, B);
    dp_node *assert_ = n2(S_ASSERT, seq(E_TUPLE, L(A, B)), kstr("m"));
    CHECK_STR(src(L(multi, aug, ann_simple, ann_paren, del, raise, glob, assert_)),
              "x = a, b = yield a\n"
              "self.n //= 1\n"
              "x: int = (a, b)\n"
              "(y): str\n"
              "del a, b[0]\n"
              "raise E() from a\n"
              "global a, b\n"
              "assert (a, b), 'm'\n");
    CHECK_STR(src(L(assign(seq(E_TUPLE, L(A, B)), seq(E_TUPLE, L(B, A))), assign(A, kseq(DP_CONST_TUPLE, "1", "2")),
                    s1(S_RETURN, seq(E_TUPLE, L(n2(E_STARRED, A, NULL), B))), s1(S_RETURN, n2(E_YIELD, NULL, NULL)),
                    s1(S_RETURN, NULL), node(S_BREAK), node(S_CONTINUE), s1(S_EXPR, n2(E_YIELD, A, NULL)))),
              "a, b = b, a\na = (1, 2)\nreturn *a, b\nreturn (yield)\nreturn\nbreak\ncontinue\nyield a\n");
}

static void test_imports(void) {
    dp_node *alias = node(E_ALIAS), *aliased = node(E_ALIAS), *star = node(E_ALIAS);
    alias->s = "a.b";
    alias->b = nm("c");
    aliased->s = "x";
    star->s = "*";
    dp_node *imp = node(S_IMPORT), *rel = node(S_IMPORTFROM), *dot = node(S_IMPORTFROM), *all = node(S_IMPORTFROM);
    imp->l1 = L(alias, aliased);
    rel->op = 2, rel->s = "m", rel->l1 = L(alias);
    dot->op = 1, dot->l1 = L(aliased);
    all->s = "os.path", all->l1 = L(star);
    CHECK_STR(src(L(imp, rel, dot, all)),
              "import a.b as c, x\nfrom ..m import a.b as c\nfrom . import x\nfrom os.path import *\n");
}

static void test_if_elif_else(void) {
    dp_node *inner = body_stmt(S_IF, B, L(s1(S_EXPR, call(nm("g"), NONE_, NONE_))), L(pass()));
    dp_node *outer = body_stmt(S_IF, A, L(s1(S_EXPR, call(nm("f"), NONE_, NONE_))), L(inner));
    CHECK_STR(src(L(outer)), "if a:\n    f()\nelif b:\n    g()\nelse:\n    pass\n");
    /* an else holding an if and more is not an elif */
    dp_node *not_elif = body_stmt(S_IF, A, NONE_, L(body_stmt(S_IF, B, NONE_, NONE_), pass()));
    CHECK_STR(src(L(not_elif)), "if a:\n    pass\nelse:\n    if b:\n        pass\n    pass\n");
    dp_node *wrapped = body_stmt(S_IF, A, NONE_, L(seq(S_BLOCK, L(body_stmt(S_IF, B, NONE_, NONE_)))));
    CHECK_STR(src(L(wrapped)), "if a:\n    pass\nelif b:\n    pass\n");
    CHECK_STR(src(L(body_stmt(S_IF, named("x", A), L(s1(S_RETURN, nm("x"))), NONE_))),
              "if (x := a):\n    return x\n");
}

static void test_loops(void) {
    dp_node *w = body_stmt(S_WHILE, kone(DP_CONST_TRUE), L(node(S_BREAK)), L(pass()));
    dp_node *f = body_stmt(S_FOR, seq(E_TUPLE, L(A, B)), L(node(S_CONTINUE)), L(s1(S_EXPR, C)));
    f->b = call(nm("zip"), L(C, D), NONE_);
    dp_node *af = body_stmt(S_FOR, A, NONE_, NONE_);
    af->b = seq(E_TUPLE, L(kint("1"), B));
    af->op = 1;
    dp_node *fs = body_stmt(S_FOR, A, NONE_, NONE_);
    fs->b = kseq(DP_CONST_FROZENSET, "1", "2");
    CHECK_STR(src(L(w, f, af, fs)),
              "while True:\n    break\nelse:\n    pass\n"
              "for a, b in zip(c, d):\n    continue\nelse:\n    c\n"
              "async for a in (1, b):\n    pass\n"
              "for a in {1, 2}:\n    pass\n");
}

static void test_try(void) {
    dp_node *h1 = body_stmt(S_EXCEPT, seq(E_TUPLE, L(nm("E"), nm("F"))), L(pass()), NONE_);
    h1->s = "e";
    dp_node *h2 = body_stmt(S_EXCEPT, NULL, L(node(S_BREAK)), NONE_);
    dp_node *t = body_stmt(S_TRY, NULL, L(s1(S_EXPR, call(nm("f"), NONE_, NONE_))), L(h1, h2));
    t->l3 = L(s1(S_EXPR, A));
    t->l4 = L(s1(S_EXPR, B));
    CHECK_STR(src(L(t)),
              "try:\n    f()\nexcept (E, F) as e:\n    pass\nexcept:\n    break\nelse:\n    a\nfinally:\n    b\n");
    dp_node *group = body_stmt(S_EXCEPT, nm("E"), NONE_, NONE_);
    dp_node *ts = body_stmt(S_TRY, NULL, NONE_, L(group));
    ts->op = 1;
    CHECK_STR(src(L(ts)), "try:\n    pass\nexcept* E:\n    pass\n");
    dp_node *tf = body_stmt(S_TRY, NULL, NONE_, NONE_);
    tf->l4 = L(pass());
    CHECK_STR(src(L(tf)), "try:\n    pass\nfinally:\n    pass\n");
    CHECK_STR(src(L(body_stmt(S_TRY, NULL, NONE_, NONE_))), "ERROR: try without except or finally");
}

static void test_with(void) {
    dp_node *i1 = n2(E_WITHITEM, call(nm("open"), L(A), NONE_), nm("f"));
    dp_node *i2 = n2(E_WITHITEM, B, seq(E_TUPLE, L(C, D)));
    dp_node *w = body_stmt(S_WITH, NULL, L(i1, i2), NONE_);
    w->l1 = L(i1, i2);
    w->l2 = L(pass());
    dp_node *aw = body_stmt(S_WITH, NULL, L(n2(E_WITHITEM, A, NULL)), NONE_);
    aw->op = 1;
    /* `with (a, b):` is two context managers from 3.9 on */
    dp_node *tw = body_stmt(S_WITH, NULL, L(n2(E_WITHITEM, seq(E_TUPLE, L(A, B)), NULL)), NONE_);
    CHECK_STR(src(L(w, aw, tw)),
              "with open(a) as f, b as (c, d):\n    pass\n"
              "async with a:\n    pass\n"
              "with ((a, b)):\n    pass\n");
}

static void test_functions_and_classes(void) {
    dp_node *params = arguments(L(arg("a", NULL, NULL), arg("b", nm("int"), kint("1"))), 1,
                                arg("args", nm("str"), NULL), L(arg("k", NULL, kstr("x"))), arg("kw", NULL, NULL));
    dp_node *f = def("f", params, L(s1(S_RETURN, A)));
    f->l2 = L(nm("staticmethod"), call(attr(nm("functools"), "wraps"), L(nm("g")), NONE_));
    f->b = seq(E_LIST, L(nm("int")));
    f->op = 1;
    CHECK_STR(src(L(f)),
              "@staticmethod\n@functools.wraps(g)\n"
              "async def f(a, /, b: int = 1, *args: str, k='x', **kw) -> [int]:\n    return a\n");
    dp_node *bare_star = arguments(NONE_, 0, NULL, L(arg("k", NULL, NULL)), NULL);
    CHECK_STR(src(L(def("g", bare_star, NONE_))), "def g(*, k):\n    pass\n");
    dp_node *cls = node(S_CLASSDEF);
    cls->s = "C";
    cls->l3 = L(B, n2(E_STARRED, nm("bases"), NULL), kw("metaclass", nm("M")), kw(NULL, nm("opts")));
    cls->l2 = L(nm("dataclass"));
    cls->l1 = L(s1(S_EXPR, kstr("doc")), def("m", arguments(L(arg("self", NULL, NULL)), 0, NULL, NONE_, NULL), NONE_),
                def("n", NULL, NONE_), assign(nm("x"), kint("1")));
    dp_node *plain = node(S_CLASSDEF);
    plain->s = "D";
    CHECK_STR(src(L(assign(A, kint("1")), cls, plain)),
              "a = 1\n\n\n"
              "@dataclass\nclass C(b, *bases, metaclass=M, **opts):\n"
              "    \"\"\"doc\"\"\"\n\n"
              "    def m(self):\n        pass\n\n"
              "    def n():\n        pass\n\n"
              "    x = 1\n\n\n"
              "class D:\n    pass\n");
}

/* Names the compiler mangled print as written in their class's body (not
 * in its header, nor as keywords or outside it). */
static void test_private_names(void) {
    CHECK_STR(dp_unmangled("A", "_A__x"), "__x");
    CHECK_STR(dp_unmangled("__A", "_A__x"), "__x");
    CHECK_STR(dp_unmangled("A", "_A__x__"), "_A__x__");
    CHECK_STR(dp_unmangled("A", "_A__"), "_A__");
    CHECK_STR(dp_unmangled("A", "_A__a.b"), "_A__a.b");
    CHECK_STR(dp_unmangled("A", "_B__x"), "_B__x");
    CHECK_STR(dp_unmangled("AB", "_A__x"), "_A__x");
    CHECK_STR(dp_unmangled("__", "___x"), "___x");
    CHECK_STR(dp_unmangled(NULL, "_A__x"), "_A__x");
    dp_node *self = arg("self", NULL, NULL), *p = arg("_A__p", NULL, NULL);
    dp_node *body = assign(attr(nm("self"), "_A__x"), call(nm("_A__f"), L(nm("_A__p")), L(kw("_A__k", nm("_B__y")))));
    dp_node *cls = node(S_CLASSDEF);
    cls->s = "_A";
    cls->l2 = L(nm("_A__deco"));
    cls->l3 = L(nm("_A__base"));
    cls->l1 = L(assign(nm("_A__n"), kint("1")), def("m", arguments(L(self, p), 0, NULL, NONE_, NULL), L(body)));
    CHECK_STR(src(L(cls, assign(nm("_A__n"), kint("2")))),
              "@_A__deco\nclass _A(_A__base):\n"
              "    __n = 1\n\n"
              "    def m(self, __p):\n        self.__x = __f(__p, _A__k=_B__y)\n\n\n"
              "_A__n = 2\n");
}

static void test_docstrings(void) {
    const char *doc = "Summary.\n\n    Details: \"quoted\", caf\xc3\xa9\n    ";
    CHECK_STR(src(L(def("f", NULL, L(s1(S_EXPR, kstr(doc)))))),
              "def f():\n    \"\"\"Summary.\n\n    Details: \"quoted\", caf\xc3\xa9\n    \"\"\"\n");
    /* text that needs an escape keeps the repr() spelling */
    CHECK_STR(src(L(s1(S_EXPR, kstr("a\\b")))), "'a\\\\b'\n");
    CHECK_STR(src(L(s1(S_EXPR, kstr("say \"\"\"")))), "'say \"\"\"'\n");
    CHECK_STR(src(L(s1(S_EXPR, kstr("ends \"")))), "'ends \"'\n");
    CHECK_STR(src(L(s1(S_EXPR, kstr("a\rb")))), "'a\\rb'\n");
    CHECK_STR(src(L(s1(S_EXPR, kstr("\xe2\x80\xae")))), "'\\u202e'\n");
    CHECK_STR(src(L(s1(S_EXPR, kstr("")))), "''\n");
}

static void test_blocks_comments_and_pass(void) {
    dp_node *blk = seq(S_BLOCK, L(s1(S_EXPR, A), seq(S_BLOCK, L(s1(S_EXPR, B)))));
    CHECK_STR(src(L(body_stmt(S_WHILE, A, L(blk, seq(S_BLOCK, NONE_)), NONE_))), "while a:\n    a\n    b\n");
    CHECK_STR(src(L(body_stmt(S_WHILE, A, L(seq(S_BLOCK, NONE_)), NONE_))), "while a:\n    pass\n");
    /* comments alone are no body */
    CHECK_STR(src(L(body_stmt(S_WHILE, A, L(comment("first\n\nthird\r\nfourth")), NONE_))),
              "while a:\n    # first\n    #\n    # third\n    # fourth\n    pass\n");
    CHECK_STR(src(NONE_), "");
}

static dp_node *pat(int kind) { return node(kind); }

static dp_node *capture(const char *s) {
    dp_node *p = pat(P_AS);
    p->s = s;
    return p;
}

static void test_match_patterns(void) {
    dp_node *val = pat(P_VALUE);
    val->a = attr(nm("Color"), "RED");
    dp_node *neg = pat(P_VALUE);
    neg->a = kint("-1");
    dp_node *single = pat(P_SINGLETON);
    single->cst = kone(DP_CONST_NONE)->cst;
    dp_node *star = pat(P_STAR), *star_ = pat(P_STAR);
    star->s = "rest";
    dp_node *sq = pat(P_SEQUENCE);
    sq->l1 = L(capture("x"), capture(NULL), star, star_);
    dp_node *or_ = pat(P_OR);
    or_->l1 = L(val, neg, single);
    dp_node *as = pat(P_AS);
    as->a = or_, as->s = "v";
    dp_node *map = pat(P_MAPPING);
    map->l1 = L(kstr("k"), attr(nm("m"), "K"));
    map->l2 = L(as, sq);
    map->s = "others";
    dp_node *cls = pat(P_CLASS);
    cls->a = attr(nm("ast"), "Name");
    dp_node *nested_as = pat(P_AS);
    nested_as->a = capture("y"), nested_as->s = "z";
    dp_node *alt = pat(P_OR);
    alt->l1 = L(nested_as, sq);
    cls->l1 = L(alt);
    cls->l2 = L(kw("id", capture("i")));
    dp_node *c1 = body_stmt(S_CASE, map, L(pass()), NONE_);
    dp_node *c2 = body_stmt(S_CASE, cls, L(pass()), NONE_);
    c2->b = cmp(nm("i"), DP_CMP_GT, kint("0"));
    dp_node *c3 = body_stmt(S_CASE, capture(NULL), NONE_, NONE_);
    dp_node *m = body_stmt(S_MATCH, seq(E_TUPLE, L(A, B)), L(c1, c2, c3), NONE_);
    CHECK_STR(src(L(m)),
              "match a, b:\n"
              "    case {'k': Color.RED | -1 | None as v, m.K: [x, _, *rest, *_], **others}:\n"
              "        pass\n"
              "    case ast.Name((y as z) | [x, _, *rest, *_], id=i) if i > 0:\n"
              "        pass\n"
              "    case _:\n"
              "        pass\n");
}

static int lines[16], nlines;

static void record(void *ctx, const dp_node *st, int line) {
    (void)ctx;
    if (nlines < 16)
        lines[nlines++] = st->kind * 1000 + line;
}

/* on_stmt reports the output line each statement starts on. */
static void test_statement_lines(void) {
    dp_node *g = def("g", NULL, L(s1(S_RETURN, NULL)));
    g->l2 = L(nm("deco"));
    dp_node *h = body_stmt(S_EXCEPT, NULL, L(pass()), NONE_);
    dp_node *t = body_stmt(S_TRY, NULL, L(s1(S_EXPR, A)), L(h));
    dp_nodes body = L(comment("x\ny"), t, g, s1(S_EXPR, B));
    dp_buf b;
    dp_error err;
    dp_printer p;
    dp_buf_init(&b);
    dp_error_init(&err);
    dp_printer_init(&p, &b, 2, &err);
    dp_buf_puts(&b, "header\n");
    p.line = 2;
    p.on_stmt = record;
    nlines = 0;
    CHECK(dp_print_block(&p, &body, 1) == 0);
    CHECK_STR(b.data, "header\n  # x\n  # y\n  try:\n    a\n  except:\n    pass\n\n  @deco\n  def g():\n"
                      "    return\n\n  b\n");
    int want[] = {S_COMMENT * 1000 + 2, S_TRY * 1000 + 4, S_EXPR * 1000 + 5, S_EXCEPT * 1000 + 6,
                  S_PASS * 1000 + 7, S_FUNCTIONDEF * 1000 + 9, S_RETURN * 1000 + 11, S_EXPR * 1000 + 13};
    CHECK(nlines == 8);
    for (int i = 0; i < 8 && i < nlines; i++)
        CHECK(lines[i] == want[i]);
    CHECK(p.line == 14);
    dp_buf_free(&b);
}

/* Hostile nesting fails cleanly; long flat chains are not nesting. */
static void test_depth_bounds(void) {
    dp_node *deep = A;
    for (int i = 0; i < 2000; i++)
        deep = un(DP_UN_NOT, deep);
    CHECK(strncmp(ex(deep), "ERROR: expression or block nested deeper", 40) == 0);
    dp_node *calls = A;
    for (int i = 0; i < 2000; i++)
        calls = call(calls, NONE_, NONE_);
    CHECK(strncmp(ex(calls), "ERROR:", 6) == 0);
    dp_node *sum = A;
    for (int i = 0; i < 5000; i++)
        sum = bin(sum, i % 2 ? DP_BIN_ADD : DP_BIN_SUB, B);
    const char *s = ex(sum);
    CHECK(strncmp(s, "a - b + b - b", 13) == 0 && strlen(s) == 1 + 5000 * 4);
    dp_node *chain = pass();
    for (int i = 0; i < 3000; i++)
        chain = body_stmt(S_IF, A, NONE_, L(chain));
    s = src(L(chain));
    CHECK(strncmp(s, "if a:\n    pass\nelif a:\n", 22) == 0);
    dp_node *nest = pass();
    for (int i = 0; i < 1000; i++)
        nest = body_stmt(S_WHILE, A, L(nest), NONE_);
    CHECK(strncmp(src(L(nest)), "ERROR:", 6) == 0);
}

static void test_malformed_nodes_fail(void) {
    char want[64];
    snprintf(want, sizeof want, "ERROR: node kind %d is not an expression", S_PASS);
    CHECK_STR(ex(node(S_PASS)), want);
    CHECK_STR(src(L(s1(S_EXPR, NULL))), "ERROR: missing expression in AST");
    CHECK_STR(ex(bin(A, 99, B)), "ERROR: bad binary operator 99");
    CHECK_STR(src(L(nm("x"))), "ERROR: node kind 0 is not a statement");
}

int main(void) {
    dp_arena_init(&ar);
    RUN(test_binary_precedence);
    RUN(test_power_and_unary);
    RUN(test_boolean_and_comparison);
    RUN(test_conditional_lambda_walrus_yield);
    RUN(test_primaries);
    RUN(test_subscripts_and_slices);
    RUN(test_displays_and_comprehensions);
    RUN(test_fstrings);
    RUN(test_simple_statements);
    RUN(test_imports);
    RUN(test_if_elif_else);
    RUN(test_loops);
    RUN(test_try);
    RUN(test_with);
    RUN(test_functions_and_classes);
    RUN(test_docstrings);
    RUN(test_blocks_comments_and_pass);
    RUN(test_match_patterns);
    RUN(test_private_names);
    RUN(test_statement_lines);
    RUN(test_depth_bounds);
    RUN(test_malformed_nodes_fail);
    dp_arena_free(&ar);
    return TEST_REPORT();
}
