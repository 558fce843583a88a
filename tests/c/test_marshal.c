/* dp_marshal_load against CPython: values of every type code and whole
 * modules written by CPython 3.8-3.13 (tests/c/marshal_vectors.inc, made by
 * tools/make_marshal_vectors.py with the expectations CPython reported),
 * then hand-made bad data that must fail with a clear message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "depyf.h"
#include "testlib.h"

/* Defined in disasm.c. */

typedef struct value_vector {
    const char *label;
    const uint8_t *data;
    size_t len;
    dp_const_kind kind;
    const char *repr; /* CPython's repr (big ints in hex, as the model keeps them) */
} value_vector;

typedef struct blob_hash {
    size_t len;
    uint64_t fnv1a;
} blob_hash;

typedef struct code_fields {
    const char *name, *qualname, *filename;
    int firstlineno, argcount, posonlyargcount, kwonlyargcount, stacksize, flags;
    const char *names, *varnames, *cellvars, *freevars; /* space-separated */
    size_t nconsts;
    blob_hash code, linetable, exctable;
} code_fields;

typedef struct module_vector {
    int py_minor;
    const uint8_t *data;
    size_t len;
    const code_fields *codes; /* the module's code objects, parents before children */
    size_t ncodes;
} module_vector;

#include "marshal_vectors.inc"

#define NVALUES (sizeof value_vectors / sizeof *value_vectors)
#define NMODULES (sizeof module_vectors / sizeof *module_vectors)

static uint64_t fnv1a(const uint8_t *p, size_t n) {
    uint64_t h = 0xCBF29CE484222325u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001B3u;
    return h;
}

/* Loads `len` bytes from a heap copy of exactly that size, so that the
 * sanitizer sees any read past the end. */
static int load_exact(dp_arena *a, const uint8_t *data, size_t len, int minor, dp_const **out,
                      dp_error *err) {
    uint8_t *copy = malloc(len ? len : 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, data, len);
    int rc = dp_marshal_load(a, copy, len, minor, out, err);
    free(copy);
    return rc;
}

static void test_every_value_matches_cpython_repr(void) {
    for (size_t i = 0; i < NVALUES; i++) {
        const value_vector *v = &value_vectors[i];
        for (int minor = 8; minor <= 13; minor++) {
            dp_arena a;
            dp_arena_init(&a);
            dp_error err;
            dp_error_init(&err);
            dp_const *c = NULL;
            int rc = load_exact(&a, v->data, v->len, minor, &c, &err);
            CHECK(rc == 0);
            if (rc != 0) {
                fprintf(stderr, "  %s: %s\n", v->label, err.msg);
                dp_arena_free(&a);
                continue;
            }
            CHECK(c->kind == v->kind);
            dp_buf b;
            dp_buf_init(&b);
            dp_const_repr(c, 1 << 20, &b);
            if (minor == 11)
                CHECK_STR(b.data, v->repr);
            else
                CHECK(b.data != NULL && strcmp(b.data, v->repr) == 0);
            dp_buf_free(&b);
            dp_arena_free(&a);
        }
    }
}

static const value_vector *value_named(const char *label) {
    for (size_t i = 0; i < NVALUES; i++)
        if (strcmp(value_vectors[i].label, label) == 0)
            return &value_vectors[i];
    return NULL;
}

/* TYPE_REF hands out the very object numbered earlier. */
static void test_refs_share_the_numbered_object(void) {
    const char *labels[] = {"refs shared tuple", "refs interned strings"};
    for (size_t l = 0; l < 2; l++) {
        const value_vector *v = value_named(labels[l]);
        CHECK(v != NULL);
        if (v == NULL)
            continue;
        dp_arena a;
        dp_arena_init(&a);
        dp_error err;
        dp_error_init(&err);
        dp_const *c;
        CHECK(dp_marshal_load(&a, v->data, v->len, 11, &c, &err) == 0);
        CHECK(c != NULL && c->kind == DP_CONST_TUPLE && c->n >= 2);
        for (size_t i = 1; c != NULL && i < c->n; i++)
            CHECK(c->items[i] == c->items[0]);
        dp_arena_free(&a);
    }
}

static int strs_equal(const dp_strs *s, const char *spaced) {
    const char *p = spaced;
    for (size_t i = 0; i < s->n; i++) {
        size_t n = strlen(s->v[i]);
        if (i > 0 && *p++ != ' ')
            return 0;
        if (strncmp(p, s->v[i], n) != 0)
            return 0;
        p += n;
    }
    return *p == '\0';
}

static int blob_equal(const uint8_t *p, size_t n, blob_hash want) {
    return n == want.len && fnv1a(p, n) == want.fnv1a;
}

static void check_code(const dp_code *co, const code_fields *f, int minor) {
    CHECK(co->py_minor == minor);
    CHECK_STR(co->name, f->name);
    CHECK_STR(co->qualname, f->qualname);
    CHECK_STR(co->filename, f->filename);
    CHECK(co->firstlineno == f->firstlineno);
    CHECK(co->argcount == f->argcount);
    CHECK(co->posonlyargcount == f->posonlyargcount);
    CHECK(co->kwonlyargcount == f->kwonlyargcount);
    CHECK(co->stacksize == f->stacksize);
    CHECK(co->flags == f->flags);
    CHECK(strs_equal(&co->names, f->names));
    CHECK(strs_equal(&co->varnames, f->varnames));
    CHECK(strs_equal(&co->cellvars, f->cellvars));
    CHECK(strs_equal(&co->freevars, f->freevars));
    CHECK(co->nconsts == f->nconsts);
    CHECK(blob_equal(co->code, co->codelen, f->code));
    CHECK(blob_equal(co->linetable, co->linetablelen, f->linetable));
    CHECK(blob_equal(co->exctable, co->exctablelen, f->exctable));
    CHECK((co->exctable != NULL) == (minor >= 11));
}

/* Parents before children, children in constant order: CPython's order. */
static void check_tree(const dp_code *co, const module_vector *m, size_t *next) {
    if (*next >= m->ncodes) {
        CHECK(!"more code objects than CPython reported");
        return;
    }
    check_code(co, &m->codes[(*next)++], m->py_minor);
    for (size_t i = 0; i < co->nconsts; i++)
        if (co->consts[i]->kind == DP_CONST_CODE)
            check_tree(co->consts[i]->code, m, next);
}

static void test_modules_match_cpython_code_objects(void) {
    CHECK(NMODULES == 6);
    for (size_t i = 0; i < NMODULES; i++) {
        const module_vector *m = &module_vectors[i];
        printf("    3.%d: %zu bytes, %zu code objects\n", m->py_minor, m->len, m->ncodes);
        dp_arena a;
        dp_arena_init(&a);
        dp_error err;
        dp_error_init(&err);
        dp_const *c = NULL;
        int rc = load_exact(&a, m->data, m->len, m->py_minor, &c, &err);
        CHECK(rc == 0);
        if (rc == 0 && c->kind == DP_CONST_CODE) {
            size_t seen = 0;
            check_tree(c->code, m, &seen);
            CHECK(seen == m->ncodes);
        } else {
            fprintf(stderr, "  3.%d: %s\n", m->py_minor, err.msg);
        }
        dp_arena_free(&a);
    }
}

/* Every proper prefix of a real module is an error, never a crash. */
static void test_every_truncation_fails_cleanly(void) {
    for (size_t i = 0; i < NMODULES; i++) {
        const module_vector *m = &module_vectors[i];
        int all_failed = 1;
        for (size_t len = 0; len < m->len; len++) {
            dp_arena a;
            dp_arena_init(&a);
            dp_error err;
            dp_error_init(&err);
            dp_const *c = NULL;
            if (load_exact(&a, m->data, len, m->py_minor, &c, &err) == 0 || !err.set ||
                strstr(err.msg, "truncated") == NULL || c != NULL) {
                all_failed = 0;
                fprintf(stderr, "  3.%d prefix of %zu bytes: [%s]\n", m->py_minor, len, err.msg);
            }
            dp_arena_free(&a);
        }
        CHECK(all_failed);
    }
}

/* Loads hand-made bytes; returns the error message ("" on success). */
static const char *load_msg(const void *data, size_t len, int minor, dp_const **out) {
    static dp_arena a;
    static dp_error err;
    dp_arena_free(&a);
    dp_arena_init(&a);
    dp_error_init(&err);
    dp_const *c = NULL;
    load_exact(&a, data, len, minor, &c, &err);
    if (out != NULL)
        *out = c;
    return err.msg;
}

#define LOAD_MSG(lit, minor) load_msg(lit, sizeof lit - 1, minor, NULL)
#define FAILS_WITH(lit, needle) CHECK(strstr(LOAD_MSG(lit, 11), needle) != NULL)

static void test_bad_data_fails_with_a_reason(void) {
    FAILS_WITH("", "truncated at byte 0");
    FAILS_WITH("?", "unknown type code 0x3f");
    FAILS_WITH("\x01", "unknown type code 0x01");
    FAILS_WITH("0", "NULL where an object was expected");
    FAILS_WITH("(\x01\x00\x00\x00" "0", "NULL where an item was expected");
    FAILS_WITH("{N0", "NULL where a dict value was expected");
    FAILS_WITH("r\x05\x00\x00\x00", "reference 5, but only 0 objects");
    FAILS_WITH("\xa8\x01\x00\x00\x00r\x00\x00\x00\x00", "still being built");
    FAILS_WITH("(\xff\xff\xff\xff", "negative size");
    FAILS_WITH("(\xff\xff\xff\x7f", "truncated");
    FAILS_WITH("s\xff\xff\xff\x7f", "truncated");
    FAILS_WITH("l\xff\xff\xff\x7f", "truncated");
    FAILS_WITH("l\x02\x00\x00\x00\x01\x00\x00\x00", "not normalized");
    FAILS_WITH("l\x01\x00\x00\x00\x01\x80", "int digit out of range");
    FAILS_WITH("u\x01\x00\x00\x00\xff", "not valid UTF-8");
    FAILS_WITH("u\x02\x00\x00\x00\xc0\x80", "not valid UTF-8");       /* overlong NUL */
    FAILS_WITH("u\x04\x00\x00\x00\xf4\x90\x80\x80", "not valid UTF-8"); /* > U+10FFFF */
    FAILS_WITH("f\x03" "abc", "not a number");
    FAILS_WITH("f\x04" "0x10", "not a number");
    CHECK(strstr(LOAD_MSG("N", 7), "3.7") != NULL);
    CHECK(strstr(LOAD_MSG("N", 14), "3.14") != NULL);
}

static void test_lone_surrogates_are_kept(void) {
    dp_const *c;
    CHECK_STR(load_msg("u\x03\x00\x00\x00\xed\xa0\x80", 8, 11, &c), "");
    CHECK(c != NULL && c->kind == DP_CONST_STR && c->len == 3 && memcmp(c->text, "\xed\xa0\x80", 3) == 0);
}

/* CPython reads the ASCII string types as Latin-1. */
static void test_ascii_types_read_as_latin1(void) {
    dp_const *c;
    CHECK_STR(load_msg("z\x02\xe9" "a", 4, 11, &c), "");
    CHECK(c != NULL && c->len == 3 && memcmp(c->text, "\xc3\xa9" "a", 3) == 0);
}

/* CPython lets a digit equal to the base (2**15) through; it carries. */
static void test_int_digit_equal_to_base_carries(void) {
    dp_const *c;
    CHECK_STR(load_msg("l\x01\x00\x00\x00\x00\x80", 7, 11, &c), "");
    CHECK(c != NULL && strcmp(c->text, "32768") == 0);
    /* -(2**60 - 1 + 2**15 * 2**60): five digits, the top one 2**15 */
    CHECK_STR(load_msg("l\xfb\xff\xff\xff\xff\x7f\xff\x7f\xff\x7f\xff\x7f\x00\x80", 15, 11, &c), "");
    CHECK(c != NULL && strcmp(c->text, "-0x8000fffffffffffffff") == 0);
}

static void test_nesting_is_limited(void) {
    enum { LIMIT = 200 };
    uint8_t buf[2 * (LIMIT + 1) + 1];
    for (int depth = LIMIT; depth <= LIMIT + 1; depth++) {
        size_t k = 0;
        for (int i = 0; i < depth; i++) {
            buf[k++] = ')';
            buf[k++] = 1;
        }
        buf[k++] = 'N';
        const char *msg = load_msg(buf, k, 11, NULL);
        if (depth == LIMIT)
            CHECK_STR(msg, "");
        else
            CHECK(strstr(msg, "nested more than 200 levels") != NULL);
    }
}

/* A 3.11 code object: argcount 1, no posonly/kwonly, stacksize 2, flags 3,
 * co_code b"\x97\x00" (RESUME 0), no consts or names, then the localsplus
 * names and kinds under test, filename/name/qualname, firstlineno 7 and
 * empty line and exception tables. */
#define CODE311_HEAD "c\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00" \
                     "s\x02\x00\x00\x00\x97\x00" ")\x00" ")\x00"
#define CODE311_TAIL "z\x04m.py" "z\x01g" "z\x03h.g" "\x07\x00\x00\x00" "s\x00\x00\x00\x00" "s\x00\x00\x00\x00"

/* localsplus a (argument), b (argument and cell), c (cell), d (free). */
static void test_localsplus_kinds_give_varnames_cellvars_freevars(void) {
    static const char data[] = CODE311_HEAD ")\x04z\x01" "az\x01" "bz\x01" "cz\x01" "d"
                               "s\x04\x00\x00\x00\x22\x66\x40\x80" CODE311_TAIL;
    dp_const *c;
    CHECK_STR(load_msg(data, sizeof data - 1, 11, &c), "");
    if (c == NULL)
        return;
    const dp_code *co = c->code;
    CHECK(strs_equal(&co->varnames, "a b"));
    CHECK(strs_equal(&co->cellvars, "b c"));
    CHECK(strs_equal(&co->freevars, "d"));
    CHECK_STR(co->qualname, "h.g");
    CHECK_STR(co->name, "g");
    CHECK(co->firstlineno == 7 && co->argcount == 1 && co->stacksize == 2 && co->flags == 3);
    CHECK(co->codelen == 2 && co->code[0] == 0x97);
}

static void test_localsplus_kinds_must_match_names(void) {
    static const char data[] = CODE311_HEAD ")\x01z\x01" "a" "s\x00\x00\x00\x00" CODE311_TAIL;
    CHECK(strstr(load_msg(data, sizeof data - 1, 11, NULL), "1 localsplus names but 0 kinds") != NULL);
}

static void test_code_fields_must_have_their_types(void) {
    /* co_names given as an int */
    static const char data[] = "c\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00"
                               "s\x02\x00\x00\x00\x97\x00" ")\x00" "i\x00\x00\x00\x00";
    CHECK(strstr(load_msg(data, sizeof data - 1, 11, NULL), "co_names is not a tuple") != NULL);
}

int main(void) {
    RUN(test_every_value_matches_cpython_repr);
    RUN(test_refs_share_the_numbered_object);
    RUN(test_modules_match_cpython_code_objects);
    RUN(test_every_truncation_fails_cleanly);
    RUN(test_bad_data_fails_with_a_reason);
    RUN(test_lone_surrogates_are_kept);
    RUN(test_ascii_types_read_as_latin1);
    RUN(test_int_digit_equal_to_base_carries);
    RUN(test_nesting_is_limited);
    RUN(test_localsplus_kinds_give_varnames_cellvars_freevars);
    RUN(test_localsplus_kinds_must_match_names);
    RUN(test_code_fields_must_have_their_types);
    load_msg("", 0, 11, NULL); /* frees the last arena */
    return TEST_REPORT();
}
