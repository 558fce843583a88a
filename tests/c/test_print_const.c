/* dp_print_const: every constant kind spelled as Python source that
 * evaluates (after constant folding) to the very same value. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"
#include "testlib.h"

static dp_arena ar;

static dp_const *k(dp_const_kind kind) { return dp_const_new(&ar, kind); }

static dp_const *k_float(double f) {
    dp_const *c = k(DP_CONST_FLOAT);
    c->f = f;
    return c;
}

static dp_const *k_complex(double re, double im) {
    dp_const *c = k(DP_CONST_COMPLEX);
    c->f = re;
    c->im = im;
    return c;
}

static dp_const *k_text(dp_const_kind kind, const char *s, size_t n) {
    dp_const *c = k(kind);
    c->text = dp_strndup(&ar, s, n);
    c->len = n;
    return c;
}

static dp_const *k_str(const char *s) { return k_text(DP_CONST_STR, s, strlen(s)); }

static dp_const *k_seq(dp_const_kind kind, size_t n, dp_const **items) {
    dp_const *c = k(kind);
    c->items = dp_alloc_array(&ar, n ? n : 1, sizeof *c->items);
    for (size_t i = 0; i < n; i++)
        c->items[i] = items[i];
    c->n = n;
    return c;
}

static const char *show(const dp_const *c) {
    dp_buf b;
    dp_buf_init(&b);
    dp_print_const(&b, c);
    const char *s = dp_strdup(&ar, b.data ? b.data : "");
    dp_buf_free(&b);
    return s;
}

static const char *fl(double f) { return show(k_float(f)); }

static void test_singletons_and_ints(void) {
    CHECK_STR(show(k(DP_CONST_NONE)), "None");
    CHECK_STR(show(k(DP_CONST_TRUE)), "True");
    CHECK_STR(show(k(DP_CONST_FALSE)), "False");
    CHECK_STR(show(k(DP_CONST_ELLIPSIS)), "...");
    CHECK_STR(show(k_text(DP_CONST_INT, "-123456789012345678901234567890", 31)),
              "-123456789012345678901234567890");
}

/* The exact text Python's repr() gives. */
static void test_float_repr_matches_python(void) {
    CHECK_STR(fl(0.0), "0.0");
    CHECK_STR(fl(-0.0), "-0.0");
    CHECK_STR(fl(1.0), "1.0");
    CHECK_STR(fl(0.1), "0.1");
    CHECK_STR(fl(1.0 / 3), "0.3333333333333333");
    CHECK_STR(fl(2.0 / 3), "0.6666666666666666");
    CHECK_STR(fl(-2.5), "-2.5");
    CHECK_STR(fl(123.0), "123.0");
    CHECK_STR(fl(0.0001), "0.0001");
    CHECK_STR(fl(0.00001), "1e-05");
    CHECK_STR(fl(1.5e-7), "1.5e-07");
    CHECK_STR(fl(1e15), "1000000000000000.0");
    CHECK_STR(fl(1e16), "1e+16");
    CHECK_STR(fl(1.25e16), "1.25e+16");
    CHECK_STR(fl(1e22), "1e+22");
    CHECK_STR(fl(123456789012345678.0), "1.2345678901234568e+17");
    CHECK_STR(fl(5e-324), "5e-324");
    CHECK_STR(fl(1.7976931348623157e308), "1.7976931348623157e+308");
    CHECK_STR(fl(9007199254740993.0), "9007199254740992.0");
}

static void test_float_specials_fold(void) {
    CHECK_STR(fl(HUGE_VAL), "1e309");
    CHECK_STR(fl(-HUGE_VAL), "-1e309");
    volatile double inf = HUGE_VAL;
    double folded = inf - inf; /* the nan `1e309 - 1e309` folds to here */
    CHECK_STR(fl(folded), "(1e309 - 1e309)");
    CHECK_STR(fl(-folded), "-(1e309 - 1e309)");
}

/* Every printed float reads back bit for bit and stays a float. */
static void test_float_round_trip_many(void) {
    uint64_t x = 0x9E3779B97F4A7C15u;
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double v;
        uint64_t bits = i % 2 ? x : (x >> 12) | 0x3FF0000000000000u; /* also plain magnitudes */
        memcpy(&v, &bits, sizeof v);
        if (isnan(v) || isinf(v))
            continue;
        const char *s = fl(v);
        double back = strtod(s, NULL);
        if (memcmp(&back, &v, sizeof v) != 0 || strpbrk(s, ".e") == NULL) {
            if (bad++ < 5)
                fprintf(stderr, "float %a printed as %s\n", v, s);
        }
    }
    CHECK(bad == 0);
}

static void test_complex_spellings(void) {
    CHECK_STR(show(k_complex(0.0, 1.0)), "1j");
    CHECK_STR(show(k_complex(0.0, 2.5)), "2.5j");
    CHECK_STR(show(k_complex(1.0, 2.0)), "(1+2j)");
    CHECK_STR(show(k_complex(1.5, -0.5)), "(1.5-0.5j)");
    CHECK_STR(show(k_complex(0.0, -1.0)), "(0-1j)");
    CHECK_STR(show(k_complex(-0.0, -1.0)), "(-0.0-1j)");
    CHECK_STR(show(k_complex(-1.0, 2.0)), "(-1+2j)");
    CHECK_STR(show(k_complex(-0.0, 2.0)), "-(0-2j)");
    CHECK_STR(show(k_complex(-1.0, 0.0)), "(-1-0j)");
    CHECK_STR(show(k_complex(-0.0, 0.0)), "(-0.0-0j)");
    CHECK_STR(show(k_complex(0.0, -0.0)), "-(-0.0-0j)");
    CHECK_STR(show(k_complex(3.0, -0.0)), "-(-3-0j)");
    CHECK_STR(show(k_complex(-0.0, -0.0)), "-0j");
    CHECK_STR(show(k_complex(-3.0, -0.0)), "-(3+0j)");
    CHECK_STR(show(k_complex(1.0, HUGE_VAL)), "(1+1e309j)");
    CHECK_STR(show(k_complex(-HUGE_VAL, -HUGE_VAL)), "(-1e309-1e309j)");
    volatile double inf = HUGE_VAL;
    CHECK_STR(show(k_complex(1.0, inf - inf)), "complex(1.0, (1e309 - 1e309))");
}

static void test_str_quotes_and_escapes(void) {
    CHECK_STR(show(k_str("abc")), "'abc'");
    CHECK_STR(show(k_str("")), "''");
    CHECK_STR(show(k_str("it's")), "\"it's\"");
    CHECK_STR(show(k_str("say \"hi\"")), "'say \"hi\"'");
    CHECK_STR(show(k_str("both ' and \"")), "'both \\' and \"'");
    CHECK_STR(show(k_str("a\\b\n\r\t")), "'a\\\\b\\n\\r\\t'");
    CHECK_STR(show(k_text(DP_CONST_STR, "\0\x01\x1b\x7f", 4)), "'\\x00\\x01\\x1b\\x7f'");
    CHECK_STR(show(k_str("{x}")), "'{x}'");
}

static void test_str_non_ascii(void) {
    CHECK_STR(show(k_str("caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80")), "'caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80'");
    CHECK_STR(show(k_str("\xc2\x85")), "'\\x85'");             /* C1 control */
    CHECK_STR(show(k_str("\xc2\xa0")), "'\\xa0'");             /* no-break space */
    CHECK_STR(show(k_str("\xe2\x80\xa8")), "'\\u2028'");       /* line separator */
    CHECK_STR(show(k_str("\xe2\x80\x8b")), "'\\u200b'");       /* zero-width space */
    CHECK_STR(show(k_str("\xe2\x80\xae")), "'\\u202e'");       /* bidi override */
    CHECK_STR(show(k_str("\xef\xbb\xbf")), "'\\ufeff'");       /* BOM */
    CHECK_STR(show(k_str("\xed\xa0\x80\xed\xbf\xbf")), "'\\ud800\\udfff'"); /* lone surrogates */
    CHECK_STR(show(k_str("\xf3\xa0\x81\x81")), "'\\U000e0041'"); /* tag character */
    CHECK_STR(show(k_str("\xff")), "'\\xff'");                 /* not UTF-8 at all */
}

static void test_bytes(void) {
    CHECK_STR(show(k_text(DP_CONST_BYTES, "ab\0\xff\n'", 6)), "b\"ab\\x00\\xff\\n'\"");
    CHECK_STR(show(k_text(DP_CONST_BYTES, "", 0)), "b''");
    CHECK_STR(show(k_text(DP_CONST_BYTES, "\\", 1)), "b'\\\\'");
}

static void test_tuples_and_frozensets(void) {
    dp_const *one = k_text(DP_CONST_INT, "1", 1), *two = k_str("2");
    dp_const *pair[] = {one, two};
    CHECK_STR(show(k_seq(DP_CONST_TUPLE, 0, NULL)), "()");
    CHECK_STR(show(k_seq(DP_CONST_TUPLE, 1, pair)), "(1,)");
    CHECK_STR(show(k_seq(DP_CONST_TUPLE, 2, pair)), "(1, '2')");
    dp_const *nested[] = {k_seq(DP_CONST_TUPLE, 1, pair), k_complex(1, 2), k_float(-0.0)};
    CHECK_STR(show(k_seq(DP_CONST_TUPLE, 3, nested)), "((1,), (1+2j), -0.0)");
    CHECK_STR(show(k_seq(DP_CONST_FROZENSET, 0, NULL)), "frozenset()");
    CHECK_STR(show(k_seq(DP_CONST_FROZENSET, 2, pair)), "frozenset({1, '2'})");
}

static void test_code_and_other(void) {
    dp_const *other = k_text(DP_CONST_OTHER, "torch.float32", 13);
    CHECK_STR(show(other), "torch.float32");
    dp_const *code = k(DP_CONST_CODE);
    code->code = dp_code_new(&ar);
    code->code->name = code->code->qualname = "f.<locals>.g";
    code->code->filename = "m.py";
    code->code->firstlineno = 3;
    CHECK_STR(show(code), "<code object f.<locals>.g, file \"m.py\", line 3>");
}

int main(void) {
    dp_arena_init(&ar);
    RUN(test_singletons_and_ints);
    RUN(test_float_repr_matches_python);
    RUN(test_float_specials_fold);
    RUN(test_float_round_trip_many);
    RUN(test_complex_spellings);
    RUN(test_str_quotes_and_escapes);
    RUN(test_str_non_ascii);
    RUN(test_bytes);
    RUN(test_tuples_and_frozensets);
    RUN(test_code_and_other);
    dp_arena_free(&ar);
    return TEST_REPORT();
}
