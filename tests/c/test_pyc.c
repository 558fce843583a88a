/* dp_read_pyc and dp_disasm on .pyc files written by CPython 3.8-3.13
 * (tests/c/pyc_vectors.inc, made by tools/make_marshal_vectors.py with the
 * opcode names CPython's dis lists), on damaged files, and on hand-made
 * code objects whose listing is worked out by hand. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "depyf.h"
#include "opcodes.h"
#include "testlib.h"

typedef struct pyc_vector {
    int py_minor;
    const uint8_t *data;
    size_t len;
    const char *opnames; /* "name: OP OP ...\n" per code object, as dis lists them */
} pyc_vector;

#include "pyc_vectors.inc"

#define NPYCS (sizeof pyc_vectors / sizeof *pyc_vectors)

/* Reads from a heap copy of exactly `len` bytes so that the sanitizer
 * catches reads past the end; on success also disassembles. */
static int read_exact(const uint8_t *data, size_t len, dp_buf *listing, dp_error *err, int *minor) {
    uint8_t *copy = malloc(len ? len : 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, data, len);
    dp_arena a;
    dp_arena_init(&a);
    dp_code *co = NULL;
    int rc = dp_read_pyc(&a, copy, len, &co, err);
    if (rc == 0 && minor != NULL)
        *minor = co->py_minor;
    if (rc == 0 && listing != NULL)
        rc = dp_disasm(co, listing, err);
    dp_arena_free(&a);
    free(copy);
    return rc;
}

/* An instruction line: line number (or blanks), " >>" or blanks, the
 * offset right-aligned in 5 columns, then the opname. */
static int instruction_name(const char *line, size_t len, const char **name, size_t *namelen) {
    if (len < 16 || (strncmp(line + 5, "   ", 3) != 0 && strncmp(line + 5, " >>", 3) != 0))
        return 0;
    for (int i = 0; i < 5; i++)
        if (!(line[i] == ' ' || line[i] == '-' || isdigit((unsigned char)line[i])))
            return 0;
    if (line[8] != ' ' || !isdigit((unsigned char)line[13]) || line[14] != ' ')
        return 0;
    *name = line + 15;
    *namelen = strcspn(*name, " \n");
    return 1;
}

/* "name: OP OP ...\n" per code object, read back from a listing. */
static void opnames_of_listing(const char *text, dp_buf *out) {
    int in_code = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        const char *name;
        size_t namelen;
        if (strncmp(p, "Disassembly of code object ", 27) == 0) {
            const char *n = strstr(p, "(name ");
            if (in_code)
                dp_buf_putc(out, '\n');
            in_code = 1;
            if (n != NULL && n < p + len)
                dp_buf_putn(out, n + 6, strcspn(n + 6, ")"));
            dp_buf_putc(out, ':');
        } else if (in_code && instruction_name(p, len, &name, &namelen)) {
            dp_buf_putc(out, ' ');
            dp_buf_putn(out, name, namelen);
        }
        p += len + (p[len] == '\n');
    }
    if (in_code)
        dp_buf_putc(out, '\n');
}

static void test_listing_names_the_instructions_dis_lists(void) {
    CHECK(NPYCS == 6);
    for (size_t i = 0; i < NPYCS; i++) {
        const pyc_vector *v = &pyc_vectors[i];
        dp_buf listing, names;
        dp_buf_init(&listing);
        dp_buf_init(&names);
        dp_error err;
        dp_error_init(&err);
        int minor = 0;
        int rc = read_exact(v->data, v->len, &listing, &err, &minor);
        CHECK(rc == 0);
        CHECK(minor == v->py_minor);
        if (rc == 0) {
            opnames_of_listing(listing.data, &names);
            CHECK_STR(names.data, v->opnames);
            /* the module has a jump long enough to need one */
            CHECK(strstr(listing.data, "EXTENDED_ARG") != NULL);
            CHECK((strstr(listing.data, "ExceptionTable:\n") != NULL) == (v->py_minor >= 11));
        } else {
            fprintf(stderr, "  3.%d: %s\n", v->py_minor, err.msg);
        }
        dp_buf_free(&listing);
        dp_buf_free(&names);
    }
}

static void test_every_truncation_fails_cleanly(void) {
    for (size_t i = 0; i < NPYCS; i++) {
        const pyc_vector *v = &pyc_vectors[i];
        int all_failed = 1;
        for (size_t len = 0; len < v->len; len++) {
            dp_error err;
            dp_error_init(&err);
            if (read_exact(v->data, len, NULL, &err, NULL) == 0 || !err.set || err.msg[0] == '\0')
                all_failed = 0;
        }
        CHECK(all_failed);
    }
}

/* A damaged byte: an error or a listing, never a crash.  Every eighth
 * position (a different one per version), with three kinds of damage in
 * turn, keeps the sanitizer run short. */
static void test_damaged_bytes_never_crash(void) {
    for (size_t i = 0; i < NPYCS; i++) {
        const pyc_vector *v = &pyc_vectors[i];
        uint8_t *copy = malloc(v->len);
        if (copy == NULL)
            return;
        int clean = 1;
        size_t listed = 0;
        static const uint8_t damage[] = {0xFF, 0x80, 0x01};
        for (size_t pos = 16 + i; pos < v->len; pos += 8) {
            memcpy(copy, v->data, v->len);
            copy[pos] ^= damage[pos / 8 % 3];
            dp_buf listing;
            dp_buf_init(&listing);
            dp_error err;
            dp_error_init(&err);
            int rc = read_exact(copy, v->len, &listing, &err, NULL);
            if (rc < 0 && !err.set)
                clean = 0;
            listed += rc == 0;
            dp_buf_free(&listing);
        }
        CHECK(clean);
        CHECK(listed > 0); /* damaged code bytes still disassemble */
        free(copy);
    }
}

static const char *pyc_msg(const uint8_t *data, size_t len) {
    static dp_error err;
    dp_error_init(&err);
    read_exact(data, len, NULL, &err, NULL);
    return err.msg;
}

static void with_header(uint8_t *buf, unsigned magic, uint32_t flags, const char *body, size_t n) {
    memset(buf, 0, 16);
    buf[0] = (uint8_t)magic;
    buf[1] = (uint8_t)(magic >> 8);
    buf[2] = '\r';
    buf[3] = '\n';
    for (int i = 0; i < 4; i++)
        buf[4 + i] = (uint8_t)(flags >> (8 * i));
    memcpy(buf + 16, body, n);
}

static void test_bad_headers_are_explained(void) {
    const pyc_vector *v = &pyc_vectors[0];
    uint8_t buf[4096];
    if (v->len > sizeof buf)
        return;
    memcpy(buf, v->data, v->len);
    buf[0] = 0x42, buf[1] = 0x0D; /* 3394: Python 3.7 */
    const char *msg = pyc_msg(buf, v->len);
    CHECK(strstr(msg, "3394") != NULL && strstr(msg, "3.8") != NULL && strstr(msg, "3.13") != NULL);
    memcpy(buf, v->data, v->len);
    buf[3] = 'x';
    CHECK(strstr(pyc_msg(buf, v->len), "\\r\\n") != NULL);
    memcpy(buf, v->data, v->len);
    buf[4] = 4;
    CHECK(strstr(pyc_msg(buf, v->len), "flags") != NULL);
    CHECK(strstr(pyc_msg(v->data, 10), "header") != NULL);
    with_header(buf, 3495, 0, "N", 1);
    CHECK(strstr(pyc_msg(buf, 17), "not a code object") != NULL);
}

/* PEP 552 hash-based files (flags 1 and 3) read like timestamped ones. */
static void test_hash_based_pycs_are_read(void) {
    const pyc_vector *v = &pyc_vectors[NPYCS - 1];
    uint8_t *buf = malloc(v->len);
    if (buf == NULL)
        return;
    for (uint8_t flags = 1; flags <= 3; flags += 2) {
        memcpy(buf, v->data, v->len);
        buf[4] = flags;
        CHECK_STR(pyc_msg(buf, v->len), "");
    }
    free(buf);
}

/* The opcode byte of `name` in 3.<minor>; 0 if the table lacks it. */
static uint8_t opbyte(int minor, dp_opname name) {
    const dp_optable *t = dp_optable_for(minor);
    for (int b = 0; t != NULL && b < 256; b++)
        if (t->op[b] == name)
            return (uint8_t)b;
    CHECK(!"opcode missing from table");
    return 0;
}

static dp_buf listing_text;
static dp_error listing_err;

/* The listing of `co`, or the error message. */
static const char *disasm_of(const dp_code *co) {
    dp_buf_free(&listing_text);
    dp_buf_init(&listing_text);
    dp_error_init(&listing_err);
    if (dp_disasm(co, &listing_text, &listing_err) < 0)
        return listing_err.msg;
    return listing_text.data;
}

/* 3.11: an inline cache skipped, a forward and a backward jump, lines from
 * the location table and one exception table entry. */
static void test_listing_of_a_311_function(void) {
    const int m = 11;
    uint8_t code[] = {
        opbyte(m, DPO_RESUME), 0,                                       /* 0 */
        opbyte(m, DPO_LOAD_FAST), 0,                                    /* 2 */
        opbyte(m, DPO_LOAD_FAST), 0,                                    /* 4 */
        opbyte(m, DPO_BINARY_OP), 0, 0, 0,                              /* 6, cache at 8 */
        opbyte(m, DPO_POP_JUMP_FORWARD_IF_FALSE), 2,                    /* 10: to 16 */
        opbyte(m, DPO_LOAD_CONST), 0,                                   /* 12 */
        opbyte(m, DPO_RETURN_VALUE), 0,                                 /* 14 */
        opbyte(m, DPO_JUMP_BACKWARD), 8,                                /* 16: to 2 */
    };
    /* 1 unit on line 5, 7 units on line 6 (columns 0-1), 1 unit back on 5 */
    static const uint8_t lines[] = {0xD0, 0, 1, 0xDE, 0, 1, 0xE8, 0x03};
    /* units 2-4 (offsets 4 to 8) -> unit 6 (offset 12), depth 1, lasti */
    static const uint8_t exc[] = {0x82, 0x03, 0x06, 0x03};
    static const char *varnames[] = {"x"};
    dp_arena a;
    dp_arena_init(&a);
    dp_code *co = dp_code_new(&a);
    dp_const *none = dp_const_new(&a, DP_CONST_NONE);
    co->py_minor = m;
    co->name = co->qualname = "f";
    co->filename = "t.py";
    co->firstlineno = 5;
    co->argcount = 1;
    co->stacksize = 2;
    co->flags = DP_CO_OPTIMIZED | DP_CO_NEWLOCALS;
    co->varnames = (dp_strs){varnames, 1};
    co->consts = &none;
    co->nconsts = 1;
    co->code = code;
    co->codelen = sizeof code;
    co->linetable = lines;
    co->linetablelen = sizeof lines;
    co->exctable = exc;
    co->exctablelen = sizeof exc;
    CHECK_STR(disasm_of(co),
              "Disassembly of code object f (name f), file \"t.py\", line 5:\n"
              "  Python 3.11; argcount 1, posonlyargcount 0, kwonlyargcount 0, stacksize 2\n"
              "  flags 0x00000003 (OPTIMIZED, NEWLOCALS)\n"
              "  varnames: x\n"
              "\n"
              "    5        0 RESUME                       0\n"
              "\n"
              "    6 >>     2 LOAD_FAST                    0 (x)\n"
              "             4 LOAD_FAST                    0 (x)\n"
              "             6 BINARY_OP                    0 (+)\n"
              "            10 POP_JUMP_FORWARD_IF_FALSE     2 (to 16)\n"
              "      >>    12 LOAD_CONST                   0 (None)\n"
              "            14 RETURN_VALUE\n"
              "\n"
              "    5 >>    16 JUMP_BACKWARD                8 (to 2)\n"
              "ExceptionTable:\n"
              "  4 to 8 -> 12 [1] lasti\n");
    dp_arena_free(&a);
}

/* EXTENDED_ARG supplies the high byte; jump arguments count bytes before
 * 3.10 and code units from 3.10 on. */
static void test_extended_arg_and_jump_units(void) {
    for (int m = 8; m <= 10; m++) {
        uint8_t code[] = {opbyte(m, DPO_EXTENDED_ARG), 1, opbyte(m, DPO_JUMP_ABSOLUTE), 4};
        dp_arena a;
        dp_arena_init(&a);
        dp_code *co = dp_code_new(&a);
        co->py_minor = m;
        co->code = code;
        co->codelen = sizeof code;
        const char *text = disasm_of(co);
        CHECK(strstr(text, "EXTENDED_ARG                 1\n") != NULL);
        CHECK(strstr(text, m < 10 ? "JUMP_ABSOLUTE              260 (to 260)\n"
                                  : "JUMP_ABSOLUTE              260 (to 520)\n") != NULL);
        dp_arena_free(&a);
    }
}

/* Nested code objects follow their parent; constants past the nesting
 * limit are refused rather than recursed into without end. */
static void test_nested_code_is_listed_and_bounded(void) {
    dp_arena a;
    dp_arena_init(&a);
    static const uint8_t code[] = {0, 0}; /* one instruction (CACHE) */
    dp_code *chain[DP_MAX_NESTING + 2];
    for (int i = 0; i < DP_MAX_NESTING + 2; i++) {
        chain[i] = dp_code_new(&a);
        chain[i]->py_minor = 11;
        chain[i]->code = code;
        chain[i]->codelen = sizeof code;
        chain[i]->name = chain[i]->qualname = i == 1 ? "inner" : "outer";
    }
    for (int i = 0; i + 1 < DP_MAX_NESTING + 2; i++) {
        dp_const *c = dp_const_new(&a, DP_CONST_CODE);
        c->code = chain[i + 1];
        chain[i]->consts = dp_alloc(&a, sizeof(dp_const *));
        chain[i]->consts[0] = c;
        chain[i]->nconsts = 1;
    }
    CHECK(strstr(disasm_of(chain[0]), "nested more than") != NULL);
    chain[1]->nconsts = 0;
    const char *text = disasm_of(chain[0]);
    CHECK(strstr(text, "(name outer)") != NULL && strstr(text, "\n\nDisassembly of code object inner") != NULL);
    dp_arena_free(&a);
}

int main(void) {
    RUN(test_listing_names_the_instructions_dis_lists);
    RUN(test_every_truncation_fails_cleanly);
    RUN(test_damaged_bytes_never_crash);
    RUN(test_bad_headers_are_explained);
    RUN(test_hash_based_pycs_are_read);
    RUN(test_listing_of_a_311_function);
    RUN(test_extended_arg_and_jump_units);
    RUN(test_nested_code_is_listed_and_bounded);
    dp_buf_free(&listing_text);
    return TEST_REPORT();
}
