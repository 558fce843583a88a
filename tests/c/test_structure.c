/* The structurer end to end (code model -> IR -> AST -> source): functions
 * compiled by CPython 3.11+ (tests/c/structure_vectors.inc, made by
 * tools/make_structure_vectors.py from snippets whose decompiled source
 * recompiles to identical bytecode) must print exactly that source; and the
 * same code objects with damaged bytecode or exception tables must either
 * decompile or fail with a message, never crash, hang or leak. */
#define _POSIX_C_SOURCE 200809L /* alarm(), sigaction() */

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "depyf.h"
#include "opcodes.h"
#include "testlib.h"

typedef struct structure_vector {
    const char *label;
    int py_minor;
    const uint8_t *data;
    size_t len;
    const char *source; /* what depyf printed, known to round-trip */
} structure_vector;

#include "structure_vectors.inc"

#define NVECTORS (sizeof structure_vectors / sizeof *structure_vectors)

/* Loads a vector from a heap copy of exactly its size, so that the
 * sanitizer sees any read past the end; NULL (after a CHECK) on failure. */
static dp_code *load_vector(dp_arena *a, const structure_vector *v) {
    uint8_t *copy = malloc(v->len);
    CHECK(copy != NULL);
    if (copy == NULL)
        return NULL;
    memcpy(copy, v->data, v->len);
    dp_error err;
    dp_error_init(&err);
    dp_const *c = NULL;
    int rc = dp_marshal_load(a, copy, v->len, v->py_minor, &c, &err);
    free(copy);
    CHECK(rc == 0 && c != NULL && c->kind == DP_CONST_CODE);
    if (rc != 0 || c == NULL || c->kind != DP_CONST_CODE) {
        fprintf(stderr, "  3.%d %s: %s\n", v->py_minor, v->label, err.msg);
        return NULL;
    }
    return c->code;
}

static void test_every_vector_prints_its_source(void) {
    for (size_t i = 0; i < NVECTORS; i++) {
        const structure_vector *v = &structure_vectors[i];
        dp_arena a;
        dp_arena_init(&a);
        dp_code *code = load_vector(&a, v);
        if (code != NULL) {
            dp_options opt = {0};
            dp_buf out;
            dp_buf_init(&out);
            dp_error err;
            dp_error_init(&err);
            int rc = dp_decompile(code, &opt, &out, &err);
            CHECK(rc == 0);
            if (rc != 0) {
                fprintf(stderr, "  3.%d %s: %s\n", v->py_minor, v->label, err.msg);
            } else {
                if (strcmp(out.data, v->source) != 0)
                    fprintf(stderr, "  3.%d %s:\n", v->py_minor, v->label);
                CHECK_STR(out.data, v->source);
            }
            dp_buf_free(&out);
        }
        dp_arena_free(&a);
    }
}

/* ------------------------------------------------------------ damaged code */

#define CASES_PER_VECTOR 200
#define SECONDS_PER_CASE 5
#define MAX_CODES 64

static uint64_t rng_state;

static uint32_t rnd(uint32_t n) { /* xorshift64; n > 0 */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32) % n;
}

/* The case being run, named on stderr when it hangs or crashes. */
static char current_case[300];

static void say_case(const char *why) {
    if (write(2, why, strlen(why)) < 0 || write(2, current_case, strlen(current_case)) < 0 ||
        write(2, "\n", 1) < 0)
        _exit(2);
}

static void on_alarm(int sig) {
    (void)sig;
    say_case("test_structure: dp_decompile hung on ");
    _exit(1);
}

/* Names the case, then lets the fault happen again under the handler that
 * was there before (the sanitizer's report, or the default core dump). */
static struct sigaction previous_segv;

static void on_segv(int sig) {
    say_case("test_structure: dp_decompile crashed on ");
    sigaction(sig, &previous_segv, NULL);
}

static void collect_codes(dp_code *code, dp_code **out, size_t *n) {
    if (*n < MAX_CODES)
        out[(*n)++] = code;
    for (size_t i = 0; i < code->nconsts; i++)
        if (code->consts[i]->kind == DP_CONST_CODE)
            collect_codes(code->consts[i]->code, out, n);
}

/* Heap copies of the parts of one code object that a case damages.  Each
 * is reinstalled at its exact final size, so that any read past the end
 * (after a truncation or a shrunk table) shows under the sanitizer. */
typedef struct damage {
    uint8_t *code, *table, *lines;
    size_t codelen, tablelen, lineslen;
    size_t nnames, nvarnames, nconsts;
} damage;

/* Byte offsets of the jump instructions (inline caches skipped). */
static size_t jump_offsets(const dp_code *orig, const damage *g, size_t *out, size_t cap) {
    const dp_optable *t = dp_optable_for(orig->py_minor);
    size_t n = 0;
    for (size_t i = 0; i + 1 < g->codelen && n < cap; i += 2 * (1 + (size_t)t->caches[g->code[i]]))
        if (t->flags[g->code[i]] & (DP_OPF_JREL | DP_OPF_JABS))
            out[n++] = i;
    return n;
}

/* Exception table entries start at a byte with the high bit set. */
static size_t entry_starts(const damage *g, size_t *out, size_t cap) {
    size_t n = 0;
    for (size_t i = 0; i < g->tablelen && n < cap; i++)
        if (g->table[i] & 0x80)
            out[n++] = i;
    return n;
}

enum mutation {
    M_OPCODE,     /* an opcode byte replaced */
    M_ARG,        /* an argument byte replaced */
    M_JUMP,       /* a jump's argument moved a little or anywhere */
    M_TRUNCATE,   /* the code cut short (possibly mid-instruction) */
    M_DROP_ENTRY, /* one exception table entry removed */
    M_TABLE_BYTE, /* a byte of the exception table replaced */
    M_SWAP,       /* two instructions exchanged */
    M_SCATTER,    /* several random bytes replaced */
    M_SHRINK,     /* co_names, co_varnames or co_consts cut short */
    M_HEADER,     /* an argument count or co_flags changed */
    M_LINES,      /* the line table damaged or cut */
    M_COUNT
};
static const char *const mutation_names[M_COUNT] = {
    "opcode", "arg", "jump", "truncate", "drop-entry", "table-byte",
    "swap", "scatter", "shrink", "header", "lines"};

/* Applies `m` to `g` (or to the counts of `co`); writes a description to
 * `what`.  Returns 0 when the mutation does not apply (nothing changed). */
static int mutate(enum mutation m, damage *g, dp_code *co, char *what, size_t whatlen) {
    size_t units = g->codelen / 2, pos[512];
    if (units == 0)
        return 0;
    switch (m) {
    case M_OPCODE: {
        size_t u = rnd((uint32_t)units);
        g->code[2 * u] = (uint8_t)rnd(256);
        snprintf(what, whatlen, "opcode at %zu := %u", 2 * u, g->code[2 * u]);
        return 1;
    }
    case M_ARG: {
        size_t u = rnd((uint32_t)units);
        g->code[2 * u + 1] = (uint8_t)rnd(256);
        snprintf(what, whatlen, "arg at %zu := %u", 2 * u + 1, g->code[2 * u + 1]);
        return 1;
    }
    case M_JUMP: {
        size_t n = jump_offsets(co, g, pos, sizeof pos / sizeof *pos);
        if (n == 0)
            return 0;
        size_t at = pos[rnd((uint32_t)n)];
        int delta = (int)rnd(7) - 3;
        g->code[at + 1] = rnd(2) ? (uint8_t)(g->code[at + 1] + delta) : (uint8_t)rnd(256);
        snprintf(what, whatlen, "jump at %zu -> arg %u", at, g->code[at + 1]);
        return 1;
    }
    case M_TRUNCATE:
        g->codelen = rnd((uint32_t)g->codelen);
        snprintf(what, whatlen, "code cut to %zu bytes", g->codelen);
        return 1;
    case M_DROP_ENTRY: {
        size_t n = entry_starts(g, pos, sizeof pos / sizeof *pos);
        if (n == 0)
            return 0;
        size_t k = rnd((uint32_t)n);
        size_t end = k + 1 < n ? pos[k + 1] : g->tablelen;
        memmove(g->table + pos[k], g->table + end, g->tablelen - end);
        g->tablelen -= end - pos[k];
        snprintf(what, whatlen, "exception entry %zu of %zu dropped", k, n);
        return 1;
    }
    case M_TABLE_BYTE: {
        if (g->tablelen == 0)
            return 0;
        size_t at = rnd((uint32_t)g->tablelen);
        g->table[at] = (uint8_t)rnd(256);
        snprintf(what, whatlen, "exception table byte %zu := %u", at, g->table[at]);
        return 1;
    }
    case M_SWAP: {
        size_t a = rnd((uint32_t)units), b = rnd((uint32_t)units);
        uint8_t t0 = g->code[2 * a], t1 = g->code[2 * a + 1];
        g->code[2 * a] = g->code[2 * b];
        g->code[2 * a + 1] = g->code[2 * b + 1];
        g->code[2 * b] = t0;
        g->code[2 * b + 1] = t1;
        snprintf(what, whatlen, "units at %zu and %zu swapped", 2 * a, 2 * b);
        return 1;
    }
    case M_SCATTER:
        for (int k = 0; k < 4; k++)
            g->code[rnd((uint32_t)g->codelen)] = (uint8_t)rnd(256);
        snprintf(what, whatlen, "4 random bytes replaced");
        return 1;
    case M_SHRINK: {
        size_t *counts[3] = {&g->nnames, &g->nvarnames, &g->nconsts};
        static const char *const which[3] = {"co_names", "co_varnames", "co_consts"};
        int k = (int)rnd(3);
        if (*counts[k] == 0)
            return 0;
        *counts[k] = rnd((uint32_t)*counts[k]);
        snprintf(what, whatlen, "%s cut to %zu", which[k], *counts[k]);
        return 1;
    }
    case M_HEADER: {
        int *fields[4] = {&co->argcount, &co->posonlyargcount, &co->kwonlyargcount, &co->flags};
        static const char *const which[4] = {"co_argcount", "co_posonlyargcount", "co_kwonlyargcount",
                                             "co_flags"};
        int k = (int)rnd(4);
        *fields[k] = k == 3 ? *fields[k] ^ (1 << rnd(10)) : (int)rnd(8) - 1;
        snprintf(what, whatlen, "%s := %d", which[k], *fields[k]);
        return 1;
    }
    case M_LINES:
        if (g->lineslen == 0)
            return 0;
        if (rnd(2)) {
            g->lineslen = rnd((uint32_t)g->lineslen);
            snprintf(what, whatlen, "line table cut to %zu bytes", g->lineslen);
        } else {
            size_t at = rnd((uint32_t)g->lineslen);
            g->lines[at] = (uint8_t)rnd(256);
            snprintf(what, whatlen, "line table byte %zu := %u", at, g->lines[at]);
        }
        return 1;
    case M_COUNT:
        break;
    }
    return 0;
}

/* A heap copy of exactly `n` bytes of `p` (at least one byte allocated). */
static void *exact_copy(const void *p, size_t n) {
    void *c = malloc(n ? n : 1);
    if (c != NULL && n)
        memcpy(c, p, n);
    return c;
}

typedef struct fuzz_tally {
    int cases, decompiled, failed, bad;
} fuzz_tally;

/* Decompiles the damaged tree from the top and files the outcome. */
static void decompile_damaged(dp_code *top, fuzz_tally *tally) {
    dp_options opt = {0};
    dp_buf out;
    dp_buf_init(&out);
    dp_error err;
    dp_error_init(&err);
    alarm(SECONDS_PER_CASE);
    int rc = dp_decompile(top, &opt, &out, &err);
    alarm(0);
    tally->cases++;
    if (rc == 0 && dp_buf_ok(&out) && out.len > 0) {
        tally->decompiled++;
    } else if (rc == -1 && err.set && err.msg[0] != '\0') {
        tally->failed++;
    } else {
        tally->bad++;
        if (tally->bad <= 10)
            fprintf(stderr, "  %s: rc %d, message [%s], %zu bytes of output\n", current_case, rc,
                    err.msg, out.len);
    }
    dp_buf_free(&out);
}

/* Damages one code object of the vector's tree (`victim`) and decompiles
 * the whole tree from the top; then puts the victim back as it was. */
static void run_case(dp_code *top, dp_code *victim, enum mutation first, const structure_vector *v,
                     fuzz_tally *tally) {
    const dp_code saved = *victim;
    damage g = {exact_copy(saved.code, saved.codelen), exact_copy(saved.exctable, saved.exctablelen),
                exact_copy(saved.linetable, saved.linetablelen), saved.codelen, saved.exctablelen,
                saved.linetablelen, saved.names.n, saved.varnames.n, saved.nconsts};
    CHECK(g.code != NULL && g.table != NULL && g.lines != NULL);
    char what[120];
    int applied = 0;
    enum mutation m = first;
    /* a kind that does not apply here (no jump, no table) gives way to the next */
    for (int k = 0; k < M_COUNT && !applied && g.code && g.table && g.lines; k++) {
        m = (enum mutation)((first + k) % M_COUNT);
        applied = mutate(m, &g, victim, what, sizeof what);
    }
    if (applied) {
        void *code = exact_copy(g.code, g.codelen), *table = exact_copy(g.table, g.tablelen),
             *lines = exact_copy(g.lines, g.lineslen);
        void *names = exact_copy(saved.names.v, g.nnames * sizeof *saved.names.v),
             *varnames = exact_copy(saved.varnames.v, g.nvarnames * sizeof *saved.varnames.v),
             *consts = exact_copy(saved.consts, g.nconsts * sizeof *saved.consts);
        CHECK(code && table && lines && names && varnames && consts);
        if (code && table && lines && names && varnames && consts) {
            victim->code = code;
            victim->codelen = g.codelen;
            victim->exctable = saved.exctable ? table : NULL;
            victim->exctablelen = g.tablelen;
            victim->linetable = saved.linetable ? lines : NULL;
            victim->linetablelen = g.lineslen;
            victim->names.v = names;
            victim->names.n = g.nnames;
            victim->varnames.v = varnames;
            victim->varnames.n = g.nvarnames;
            victim->consts = consts;
            victim->nconsts = g.nconsts;
            snprintf(current_case, sizeof current_case, "3.%d %s, code %s: %s (%s)", v->py_minor,
                     v->label, saved.qualname, mutation_names[m], what);
            decompile_damaged(top, tally);
        }
        free(code);
        free(table);
        free(lines);
        free(names);
        free(varnames);
        free(consts);
    }
    *victim = saved;
    free(g.code);
    free(g.table);
    free(g.lines);
}

static void test_damaged_code_decompiles_or_fails_with_a_message(void) {
    signal(SIGALRM, on_alarm);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, &previous_segv);
    fuzz_tally tally = {0};
    for (size_t i = 0; i < NVECTORS; i++) {
        const structure_vector *v = &structure_vectors[i];
        dp_arena a;
        dp_arena_init(&a);
        dp_code *top = load_vector(&a, v);
        if (top != NULL) {
            rng_state = 0x9E3779B97F4A7C15u ^ ((uint64_t)(i + 1) * 0x100000001B3u);
            dp_code *codes[MAX_CODES];
            size_t ncodes = 0;
            collect_codes(top, codes, &ncodes);
            for (int k = 0; k < CASES_PER_VECTOR; k++) {
                /* half the cases damage the function itself, the rest any code object of its tree */
                dp_code *victim = rnd(2) ? top : codes[rnd((uint32_t)ncodes)];
                run_case(top, victim, (enum mutation)(k % M_COUNT), v, &tally);
            }
        }
        dp_arena_free(&a);
    }
    sigaction(SIGSEGV, &previous_segv, NULL);
    printf("    %d damaged cases: %d decompiled, %d failed with a message\n", tally.cases,
           tally.decompiled, tally.failed);
    CHECK(tally.bad == 0);
    /* damage that is always rejected, or never noticed, would test nothing */
    CHECK(tally.decompiled > 0 && tally.failed > 0);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* the test's name shows even if it crashes */
    RUN(test_every_vector_prints_its_source);
    RUN(test_damaged_code_decompiles_or_fails_with_a_message);
    return TEST_REPORT();
}
