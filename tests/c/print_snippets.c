/* Prints source snippets made by the printer, for tests/test_print_valid.py
 * to compile under every installed Python (3.8-3.13): constants with the
 * exact value each must fold to, f-strings with the text each must produce,
 * and programs that must compile.  Not a unit test (no test_ prefix): the
 * pytest builds and runs it.
 *
 * Each record is a header line `@@ KIND MIN_MINOR ARG` and then its source:
 *   F bits            x = <float>, must fold to the double with these bits
 *   C rebits:imbits   x = <complex>, likewise
 *   S hex / Y hex     x = <str> / <bytes>; hex of the UTF-8 (surrogatepass) / raw bytes
 *   E repr            an expression whose value's repr() is ARG (names: a=1, d={...})
 *   P check           a program that must compile; `check` names an extra test */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "print.h"

static dp_arena ar;

static void header(const char *kind, int minor, const char *arg) { printf("@@ %s %d %s\n", kind, minor, arg); }

static void print_const(const dp_const *c) {
    dp_buf b;
    dp_buf_init(&b);
    dp_print_const(&b, c);
    printf("x = %s\n", b.data ? b.data : "");
    dp_buf_free(&b);
}

static uint64_t bits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static void float_record(double v) {
    char arg[32];
    snprintf(arg, sizeof arg, "%016" PRIx64, bits(v));
    header("F", 8, arg);
    dp_const c = {.kind = DP_CONST_FLOAT, .f = v};
    print_const(&c);
}

static void complex_record(double re, double im) {
    char arg[48];
    snprintf(arg, sizeof arg, "%016" PRIx64 ":%016" PRIx64, bits(re), bits(im));
    header("C", 8, arg);
    dp_const c = {.kind = DP_CONST_COMPLEX, .f = re, .im = im};
    print_const(&c);
}

static void text_record(dp_const_kind kind, const char *s, size_t n) {
    char arg[1024] = "-";
    for (size_t i = 0; i < n && 2 * i + 2 < sizeof arg; i++)
        snprintf(arg + 2 * i, 3, "%02x", (unsigned char)s[i]);
    header(kind == DP_CONST_STR ? "S" : "Y", 8, arg);
    dp_const c = {.kind = kind, .text = s, .len = n};
    print_const(&c);
}

/* UTF-8 with surrogates encoded like any other code point (surrogatepass). */
static size_t utf8(char *o, uint32_t c) {
    if (c < 0x80)
        return o[0] = (char)c, 1;
    if (c < 0x800)
        return o[0] = (char)(0xC0 | c >> 6), o[1] = (char)(0x80 | (c & 0x3F)), 2;
    if (c < 0x10000)
        return o[0] = (char)(0xE0 | c >> 12), o[1] = (char)(0x80 | (c >> 6 & 0x3F)), o[2] = (char)(0x80 | (c & 0x3F)), 3;
    o[0] = (char)(0xF0 | c >> 18), o[1] = (char)(0x80 | (c >> 12 & 0x3F));
    o[2] = (char)(0x80 | (c >> 6 & 0x3F)), o[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

static void constants(void) {
    static const double specials[] = {0.0, -0.0, 1.0, -1.0, 0.1, 1e15, 1e16, 1e-5, 1e-4, 5e-324, 2.2250738585072014e-308,
                                      1.7976931348623157e308, 123456789012345678.0, 1.0 / 3};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        float_record(specials[i]);
    volatile double inf = HUGE_VAL;
    double nan_folded = inf - inf;
    float_record(inf);
    float_record(-inf);
    float_record(nan_folded);
    float_record(-nan_folded);
    uint64_t x = 0x2545F4914F6CDD1Du;
    for (int i = 0; i < 1500; i++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        uint64_t u = x * 0x2545F4914F6CDD1Du;
        double v;
        memcpy(&v, &u, sizeof v);
        if (!isnan(v))
            float_record(v);
    }

    const double parts[] = {0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 1e-300, inf, -inf, nan_folded};
    for (size_t i = 0; i < 10; i++)
        for (size_t j = 0; j < 10; j++)
            complex_record(parts[i], parts[j]);

    char s[64];
    for (uint32_t c = 0; c < 0x80; c++) {
        s[0] = 'a', s[1] = (char)c, s[2] = 'b';
        text_record(DP_CONST_STR, s, 3);
    }
    static const uint32_t cps[] = {0x80, 0x85, 0x9F, 0xA0, 0xA1, 0xAD, 0xE9, 0x34F, 0x61C, 0x1680, 0x200B, 0x200F,
                                   0x2028, 0x2029, 0x202E, 0x2066, 0x3000, 0x4E2D, 0xD800, 0xDBFF, 0xDC00, 0xDFFF,
                                   0xE000, 0xF8FF, 0xFEFF, 0xFFFD, 0xFFFE, 0xFFFF, 0x1F600, 0x1D173, 0xE0041,
                                   0xFFFFF, 0x10FFFF};
    for (size_t i = 0; i < sizeof cps / sizeof cps[0]; i++) {
        size_t n = utf8(s, 'x');
        n += utf8(s + n, cps[i]);
        text_record(DP_CONST_STR, s, n);
    }
    static const char *quoted[] = {"'", "\"", "'\"", "\\'", "{}", "\\N{DASH}"};
    for (size_t i = 0; i < sizeof quoted / sizeof quoted[0]; i++) {
        text_record(DP_CONST_STR, quoted[i], strlen(quoted[i]));
        text_record(DP_CONST_BYTES, quoted[i], strlen(quoted[i]));
    }
    char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (char)i;
    text_record(DP_CONST_BYTES, all, 128);
    text_record(DP_CONST_BYTES, all + 128, 128);
}

/* ---- AST builders for f-strings and programs ---- */

static dp_node *node(int kind) { return dp_node_new(&ar, kind); }

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

static dp_node *n2(int kind, dp_node *a, dp_node *b) {
    dp_node *n = node(kind);
    n->a = a;
    n->b = b;
    return n;
}

static dp_node *nm(const char *s) {
    dp_node *n = node(E_NAME);
    n->s = s;
    return n;
}

static dp_node *str(const char *s) {
    dp_const *c = dp_const_new(&ar, DP_CONST_STR);
    c->text = s;
    c->len = strlen(s);
    dp_node *n = node(E_CONST);
    n->cst = c;
    return n;
}

static dp_node *seq(int kind, dp_nodes l) {
    dp_node *n = node(kind);
    n->l1 = l;
    return n;
}

static dp_node *fmt(dp_node *v, int conv, dp_node *spec) {
    dp_node *n = n2(E_FORMATTED, v, spec);
    n->op = conv;
    return n;
}

static dp_node *call(dp_node *f, dp_nodes pos) {
    dp_node *n = n2(E_CALL, f, NULL);
    n->l1 = pos;
    return n;
}

static dp_node *attr(dp_node *a, const char *s) {
    dp_node *n = n2(E_ATTR, a, NULL);
    n->s = s;
    return n;
}

static dp_node *sub(dp_node *a, dp_node *i) { return n2(E_SUBSCR, a, i); }

static void expr_record(int minor, const char *want, const dp_node *e) {
    header("E", minor, want);
    dp_buf b;
    dp_error err;
    dp_printer p;
    dp_buf_init(&b);
    dp_error_init(&err);
    dp_printer_init(&p, &b, 4, &err);
    if (dp_print_expr(&p, e) < 0)
        printf("<print failed: %s>\n", err.msg);
    else
        printf("%s\n", b.data);
    dp_printer_free(&p);
    dp_buf_free(&b);
}

static void fstrings(void) {
    dp_node *k = sub(nm("d"), str("k")), *its = sub(nm("d"), str("it's"));
    expr_record(8, "'{v}'", seq(E_JOINEDSTR, L(str("{"), fmt(k, 0, NULL), str("}"))));
    expr_record(8, "'\"w\"'", seq(E_JOINEDSTR, L(str("\""), fmt(its, 0, NULL), str("\""))));
    expr_record(8, "\"'w' 'v'\"", seq(E_JOINEDSTR, L(fmt(its, 'r', NULL), str(" "), fmt(k, 'r', NULL))));
    dp_node *spec = seq(E_JOINEDSTR, L(str(">"), fmt(nm("a"), 0, NULL)));
    expr_record(8, "'v|'", seq(E_JOINEDSTR, L(fmt(k, 's', spec), str("|"))));
    dp_node *inner = seq(E_JOINEDSTR, L(fmt(k, 0, NULL), str("'")));
    expr_record(8, "\"<v'>\"", seq(E_JOINEDSTR, L(str("<"), fmt(inner, 0, NULL), str(">"))));
    dp_node *dict = node(E_DICT);
    dict->l1 = L(str("q"));
    dict->l2 = L(nm("a"));
    expr_record(8, "\"{'q': 1}\"", seq(E_JOINEDSTR, L(fmt(dict, 0, NULL))));
    expr_record(8, "'x\\n{}'", seq(E_JOINEDSTR, L(str("x\n{}"))));
    /* a backslash inside a field has no spelling before 3.12 */
    dp_node *join = call(attr(str("\n"), "join"), L(seq(E_LIST, L(str("p"), str("q")))));
    expr_record(12, "\"'p\\nq'\"", seq(E_JOINEDSTR, L(str("'"), fmt(join, 0, NULL), str("'"))));
}

static void program_record(int minor, const char *check, dp_nodes body) {
    header("P", minor, check);
    dp_buf b;
    dp_error err;
    dp_printer p;
    dp_buf_init(&b);
    dp_error_init(&err);
    dp_printer_init(&p, &b, 4, &err);
    if (dp_print_block(&p, &body, 0) < 0)
        printf("<print failed: %s>\n", err.msg);
    else
        fputs(b.data ? b.data : "", stdout);
    dp_printer_free(&p);
    dp_buf_free(&b);
}

static dp_node *body_stmt(int kind, dp_node *a, dp_nodes body) {
    dp_node *n = n2(kind, a, NULL);
    n->l1 = body;
    return n;
}

static void programs(void) {
    dp_node *pass = node(S_PASS);
    dp_node *tuple = seq(E_TUPLE, L(nm("a"), nm("b")));
    dp_node *with = body_stmt(S_WITH, NULL, L(pass));
    with->l1 = L(n2(E_WITHITEM, tuple, NULL));
    with->l2 = L(pass);
    program_record(8, "with_one_tuple_item", L(with));

    dp_node *ann = n2(S_ANNASSIGN, nm("x"), nm("int"));
    program_record(8, "annotation_not_simple", L(ann));

    dp_node *sl = n2(E_SLICE, NULL, NULL);
    dp_node *idx = sub(nm("a"), seq(E_TUPLE, L(sl, str("k"))));
    dp_node *star = sub(nm("a"), seq(E_TUPLE, L(n2(E_STARRED, nm("b"), NULL), nm("c"))));
    dp_node *one = sub(nm("a"), seq(E_TUPLE, L(n2(E_SLICE, nm("b"), NULL))));
    dp_node *unpack = n2(S_ASSIGN, NULL, nm("c"));
    unpack->l1 = L(seq(E_TUPLE, L(nm("a"))), seq(E_TUPLE, (dp_nodes){0}));
    dp_node *ret = n2(S_RETURN, seq(E_TUPLE, L(n2(E_STARRED, nm("a"), NULL), nm("b"))), NULL);
    dp_node *yld = n2(S_EXPR, n2(E_YIELD, seq(E_TUPLE, L(n2(E_STARRED, nm("a"), NULL), nm("b"))), NULL), NULL);
    dp_node *lam = n2(E_LAMBDA, NULL, n2(E_YIELD, NULL, NULL));
    dp_node *fn = body_stmt(S_FUNCTIONDEF, NULL, L(n2(S_EXPR, idx, NULL), n2(S_EXPR, star, NULL), n2(S_EXPR, one, NULL),
                                                   unpack, n2(S_EXPR, lam, NULL), yld, ret));
    fn->s = "f";
    fn->c = node(E_ARGUMENTS);
    fn->c->op2 = 1;
    fn->c->l2 = L(n2(E_ARG, NULL, NULL));
    fn->c->l2.v[0]->s = "k";
    program_record(8, "-", L(fn));

    dp_node *grp = body_stmt(S_EXCEPT, nm("E"), L(pass));
    dp_node *trystar = body_stmt(S_TRY, NULL, L(pass));
    trystar->l2 = L(grp);
    trystar->op = 1;
    program_record(11, "-", L(trystar));

    dp_node *cap = node(P_AS), *as = node(P_AS), *alt = node(P_OR), *val = node(P_VALUE), *sq = node(P_SEQUENCE);
    val->a = attr(nm("m"), "K");
    sq->l1 = L(cap, node(P_STAR));
    alt->l1 = L(val, sq);
    as->a = alt, as->s = "z";
    dp_node *cs = body_stmt(S_CASE, as, L(pass));
    program_record(10, "-", L(body_stmt(S_MATCH, nm("v"), L(cs))));
}

int main(void) {
    dp_arena_init(&ar);
    constants();
    fstrings();
    programs();
    dp_arena_free(&ar);
    return 0;
}
