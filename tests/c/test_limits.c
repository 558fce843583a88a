/* The documented limits (docs/limits.md): past each one a clear error, never
 * a crash, and up to it the work stays proportional to the input: the
 * budgets of depyf.h are reached here and their use (dp_usage) checked.  The code
 * objects are built here from 3.11 opcodes, as a compiler would not. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "depyf.h"
#include "opcodes.h"
#include "testlib.h"

#define MINOR 11
/* One nested def takes two levels of DP_MAX_NESTING: its code object and
 * the statement region of its body. */
#define DEEPEST_DEFS (DP_MAX_NESTING / 2)

/* A growing code string of one code object. */
typedef struct emitter {
    uint8_t *code;
    size_t len, cap;
    int oom;
} emitter;

static void emit(emitter *e, enum dp_opname op, unsigned arg) {
    const dp_optable *t = dp_optable_for(MINOR);
    int byte = -1;
    for (int b = 0; b < 256 && byte < 0; b++)
        if (t->op[b] == op)
            byte = b;
    size_t need = 4 + 2 * (size_t)t->caches[byte < 0 ? 0 : byte];
    if (e->oom || byte < 0 || arg > 0xffff) {
        e->oom = 1;
        return;
    }
    if (e->len + need > e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 256;
        uint8_t *grown = realloc(e->code, cap);
        if (grown == NULL) {
            e->oom = 1;
            return;
        }
        e->code = grown;
        e->cap = cap;
    }
    if (arg > 0xff) {
        for (int b = 0; b < 256; b++)
            if (t->op[b] == DPO_EXTENDED_ARG)
                e->code[e->len] = (uint8_t)b;
        e->code[e->len + 1] = (uint8_t)(arg >> 8);
        e->len += 2;
    }
    e->code[e->len++] = (uint8_t)byte;
    e->code[e->len++] = (uint8_t)arg;
    memset(e->code + e->len, 0, 2 * (size_t)t->caches[byte]); /* CACHE units */
    e->len += 2 * (size_t)t->caches[byte];
}

static dp_strs strs(dp_arena *a, const char *one) {
    dp_strs s = {dp_alloc_array(a, 1, sizeof(char *)), 0};
    if (s.v != NULL && one != NULL)
        s.v[s.n++] = one;
    return s;
}

/* A function `name` (one argument `x`, one local `g`) whose code is the
 * emitter's, moved into the arena. */
static dp_code *function(dp_arena *a, const char *name, emitter *e, dp_const **consts, size_t nconsts) {
    dp_code *co = dp_code_new(a);
    uint8_t *code = e->oom ? NULL : dp_alloc(a, e->len);
    CHECK(co != NULL && code != NULL);
    if (co == NULL || code == NULL) {
        free(e->code);
        return NULL;
    }
    memcpy(code, e->code, e->len);
    free(e->code);
    co->py_minor = MINOR;
    co->argcount = 1;
    co->flags = DP_CO_OPTIMIZED | DP_CO_NEWLOCALS;
    co->name = co->qualname = name;
    co->filename = "<limits>";
    co->firstlineno = 1;
    co->names = strs(a, "y");
    co->varnames = strs(a, "x");
    co->varnames.v = dp_alloc_array(a, 2, sizeof(char *));
    if (co->varnames.v != NULL) {
        co->varnames.v[0] = "x";
        co->varnames.v[1] = "g";
        co->varnames.n = 2;
    }
    co->cellvars = strs(a, NULL);
    co->freevars = strs(a, NULL);
    co->consts = consts;
    co->nconsts = nconsts;
    co->code = code;
    co->codelen = e->len;
    return co;
}

static dp_const *none_const(dp_arena *a) { return dp_const_new(a, DP_CONST_NONE); }

/* def f(x): def g(x): ... (depth times) ... return None */
static dp_code *nested_functions(dp_arena *a, int depth) {
    dp_code *inner = NULL;
    for (int k = 0; k < depth; k++) {
        emitter e = {0};
        emit(&e, DPO_RESUME, 0);
        dp_const **consts = dp_alloc_array(a, 2, sizeof *consts);
        if (consts == NULL || (consts[0] = none_const(a)) == NULL)
            return NULL;
        size_t n = 1;
        if (inner != NULL) {
            if ((consts[1] = dp_const_new(a, DP_CONST_CODE)) == NULL)
                return NULL;
            consts[1]->code = inner;
            n = 2;
            emit(&e, DPO_LOAD_CONST, 1);
            emit(&e, DPO_MAKE_FUNCTION, 0);
            emit(&e, DPO_STORE_FAST, 1);
        }
        emit(&e, DPO_LOAD_CONST, 0);
        emit(&e, DPO_RETURN_VALUE, 0);
        if ((inner = function(a, k + 1 == depth ? "f" : "g", &e, consts, n)) == NULL)
            return NULL;
    }
    return inner;
}

static int decompile(const dp_code *co, dp_buf *out, dp_error *err) {
    dp_options opt = {0};
    dp_buf_init(out);
    dp_error_init(err);
    return dp_decompile(co, &opt, out, err);
}

static size_t count(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static void test_code_objects_nested_up_to_the_limit_decompile(void) {
    dp_arena a;
    dp_arena_init(&a);
    dp_code *co = nested_functions(&a, DEEPEST_DEFS);
    CHECK(co != NULL);
    if (co != NULL) {
        dp_buf out;
        dp_error err;
        int rc = decompile(co, &out, &err);
        CHECK(rc == 0);
        if (rc == 0)
            CHECK(count(out.data, "def g(x):") == DEEPEST_DEFS - 1);
        else
            fprintf(stderr, "  %s\n", err.msg);
        dp_buf_free(&out);
    }
    dp_arena_free(&a);
}

static void test_defs_nested_one_past_the_limit_are_an_error(void) {
    dp_arena a;
    dp_arena_init(&a);
    dp_code *co = nested_functions(&a, DEEPEST_DEFS + 1);
    CHECK(co != NULL);
    if (co != NULL) {
        dp_buf out;
        dp_error err;
        CHECK(decompile(co, &out, &err) < 0);
        CHECK(strstr(err.msg, "nested more than") != NULL);
        dp_buf_free(&out);
    }
    dp_arena_free(&a);
}

static void test_code_objects_nested_past_the_limit_are_an_error(void) {
    dp_arena a;
    dp_arena_init(&a);
    dp_code *co = nested_functions(&a, DP_MAX_NESTING + 1);
    CHECK(co != NULL);
    if (co != NULL) {
        dp_buf out;
        dp_error err;
        /* fails at once: no retry below the limit (those were exponential) */
        CHECK(decompile(co, &out, &err) < 0);
        CHECK(strstr(err.msg, "nested more than 100 deep") != NULL);
        dp_buf_free(&out);
        dp_buf_init(&out);
        dp_error_init(&err);
        CHECK(dp_disasm(co, &out, &err) < 0);
        CHECK(strstr(err.msg, "nested more than") != NULL);
        dp_buf_free(&out);
    }
    dp_arena_free(&a);
}

/* return x + (x + (x + ...)): an expression `terms` deep on one line. */
static dp_code *deep_expression(dp_arena *a, int terms) {
    emitter e = {0};
    emit(&e, DPO_RESUME, 0);
    for (int k = 0; k < terms; k++)
        emit(&e, DPO_LOAD_FAST, 0);
    for (int k = 1; k < terms; k++)
        emit(&e, DPO_BINARY_OP, 0); /* + */
    emit(&e, DPO_RETURN_VALUE, 0);
    dp_const **consts = dp_alloc_array(a, 1, sizeof *consts);
    if (consts == NULL || (consts[0] = none_const(a)) == NULL) {
        free(e.code);
        return NULL;
    }
    return function(a, "f", &e, consts, 1);
}

/* Deep expressions are printed (or spilled) without exhausting the C stack:
 * a crash here would be a stack overflow. */
static void test_deep_expressions_decompile_or_fail_cleanly(void) {
    static const int sizes[] = {50, 1000, 20000};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        dp_arena a;
        dp_arena_init(&a);
        dp_code *co = deep_expression(&a, sizes[k]);
        CHECK(co != NULL);
        if (co != NULL) {
            dp_buf out;
            dp_error err;
            int rc = decompile(co, &out, &err);
            if (rc == 0)
                CHECK(count(out.data, "x") >= (size_t)sizes[k]);
            else
                CHECK(err.msg[0] != '\0');
            if (sizes[k] == 50)
                CHECK(rc == 0); /* a shallow one is ordinary code */
            dp_buf_free(&out);
        }
        dp_arena_free(&a);
    }
}

/* y = x; y = x; ... : `n` statements, then return None. */
static dp_code *long_function(dp_arena *a, size_t n) {
    emitter e = {0};
    emit(&e, DPO_RESUME, 0);
    for (size_t k = 0; k < n; k++) {
        emit(&e, DPO_LOAD_FAST, 0);
        emit(&e, DPO_STORE_FAST, 1);
    }
    emit(&e, DPO_LOAD_CONST, 0);
    emit(&e, DPO_RETURN_VALUE, 0);
    dp_const **consts = dp_alloc_array(a, 1, sizeof *consts);
    if (consts == NULL || (consts[0] = none_const(a)) == NULL) {
        free(e.code);
        return NULL;
    }
    return function(a, "f", &e, consts, 1);
}

static void test_a_function_past_the_instruction_limit_is_an_error(void) {
    dp_arena a;
    dp_arena_init(&a);
    dp_code *co = long_function(&a, DP_MAX_INSTRUCTIONS / 2 + 1);
    CHECK(co != NULL);
    if (co != NULL) {
        dp_buf out;
        dp_error err;
        CHECK(decompile(co, &out, &err) < 0);
        CHECK(strstr(err.msg, "too long") != NULL);
        dp_buf_free(&out);
    }
    dp_arena_free(&a);
}

/* return "<len bytes>": the constant is printed whole, in time linear in it. */
static void test_a_large_constant_is_printed_whole(void) {
    const size_t len = (size_t)4 << 20;
    dp_arena a;
    dp_arena_init(&a);
    emitter e = {0};
    emit(&e, DPO_RESUME, 0);
    emit(&e, DPO_LOAD_CONST, 0);
    emit(&e, DPO_RETURN_VALUE, 0);
    dp_const **consts = dp_alloc_array(&a, 1, sizeof *consts);
    char *text = dp_alloc(&a, len + 1);
    if (consts == NULL || text == NULL || (consts[0] = dp_const_new(&a, DP_CONST_STR)) == NULL) {
        free(e.code);
        CHECK(0);
        dp_arena_free(&a);
        return;
    }
    memset(text, 'q', len);
    consts[0]->text = text;
    consts[0]->len = len;
    dp_code *co = function(&a, "f", &e, consts, 1);
    if (co != NULL) {
        dp_buf out;
        dp_error err;
        CHECK(decompile(co, &out, &err) == 0);
        CHECK(out.len > len && strspn(strchr(out.data, 'q'), "q") == len);
        dp_buf_free(&out);
    }
    dp_arena_free(&a);
}

/* A module defining `n` functions one after the other. */
static dp_code *many_functions(dp_arena *a, size_t n) {
    emitter e = {0};
    emit(&e, DPO_RESUME, 0);
    dp_const **consts = dp_alloc_array(a, n + 1, sizeof *consts);
    const char **names = dp_alloc_array(a, n, sizeof *names);
    if (consts == NULL || names == NULL || (consts[n] = none_const(a)) == NULL) {
        free(e.code);
        return NULL;
    }
    for (size_t k = 0; k < n; k++) {
        emitter body = {0};
        char name[32];
        snprintf(name, sizeof name, "g%zu", k);
        emit(&body, DPO_RESUME, 0);
        emit(&body, DPO_LOAD_FAST, 0);
        emit(&body, DPO_RETURN_VALUE, 0);
        dp_const **none = dp_alloc_array(a, 1, sizeof *none);
        if (none == NULL || (none[0] = none_const(a)) == NULL || (names[k] = dp_strdup(a, name)) == NULL ||
            (consts[k] = dp_const_new(a, DP_CONST_CODE)) == NULL ||
            (consts[k]->code = function(a, names[k], &body, none, 1)) == NULL) {
            free(e.code);
            return NULL;
        }
        emit(&e, DPO_LOAD_CONST, (unsigned)k);
        emit(&e, DPO_MAKE_FUNCTION, 0);
        emit(&e, DPO_STORE_NAME, (unsigned)k);
    }
    emit(&e, DPO_LOAD_CONST, (unsigned)n);
    emit(&e, DPO_RETURN_VALUE, 0);
    dp_code *mod = function(a, "<module>", &e, consts, n + 1);
    if (mod != NULL) {
        mod->argcount = 0;
        mod->flags = 0;
        mod->names.v = names;
        mod->names.n = n;
        mod->varnames.n = 0;
    }
    return mod;
}

static void test_many_code_objects_decompile(void) {
    const size_t n = 5000;
    dp_arena a;
    dp_arena_init(&a);
    dp_code *co = many_functions(&a, n);
    CHECK(co != NULL);
    if (co != NULL) {
        dp_buf out;
        dp_error err;
        int rc = decompile(co, &out, &err);
        CHECK(rc == 0);
        if (rc == 0) {
            CHECK(count(out.data, "def g") == n);
            CHECK(strstr(out.data, "def g4999(x):\n    return x\n") != NULL);
        } else {
            fprintf(stderr, "  %s\n", err.msg);
        }
        dp_buf_free(&out);
    }
    dp_arena_free(&a);
}

/* The code object `inner` made `uses` times into g, then return None; it
 * is constant 1 and constant 2 (as marshal references share it). */
static dp_code *uses_of(dp_arena *a, const char *name, dp_code *inner, int uses) {
    emitter e = {0};
    emit(&e, DPO_RESUME, 0);
    dp_const **consts = dp_alloc_array(a, 3, sizeof *consts);
    if (consts == NULL || (consts[0] = none_const(a)) == NULL || (consts[1] = dp_const_new(a, DP_CONST_CODE)) == NULL) {
        free(e.code);
        return NULL;
    }
    consts[1]->code = inner;
    consts[2] = consts[1];
    for (int k = 0; k < uses; k++) {
        emit(&e, DPO_LOAD_CONST, 1 + k % 2);
        emit(&e, DPO_MAKE_FUNCTION, 0);
        emit(&e, DPO_STORE_FAST, 1);
    }
    emit(&e, DPO_LOAD_CONST, 0);
    emit(&e, DPO_RETURN_VALUE, 0);
    return function(a, name, &e, consts, 3);
}

/* def g(x): return <text of `len` bytes> */
static dp_code *returns_text(dp_arena *a, size_t len) {
    emitter e = {0};
    emit(&e, DPO_RESUME, 0);
    emit(&e, DPO_LOAD_CONST, 1);
    emit(&e, DPO_RETURN_VALUE, 0);
    dp_const **consts = dp_alloc_array(a, 2, sizeof *consts); /* (a text first would be the docstring) */
    char *text = dp_alloc(a, len + 1);
    if (consts == NULL || text == NULL || (consts[0] = none_const(a)) == NULL ||
        (consts[1] = dp_const_new(a, DP_CONST_STR)) == NULL) {
        free(e.code);
        return NULL;
    }
    memset(text, 'q', len);
    consts[1]->text = text;
    consts[1]->len = len;
    return function(a, "g", &e, consts, 2);
}

/* `levels` functions, each making the one below it twice: one code object
 * per level (marshal references share them), 2**levels uses of the leaf. */
static dp_code *shared_levels(dp_arena *a, dp_code *leaf, int levels) {
    dp_code *co = leaf;
    for (int k = 0; k < levels && co != NULL; k++)
        co = uses_of(a, k + 1 == levels ? "f" : "g", co, 2);
    return co;
}

static int decompile_with(const dp_code *co, dp_options *opt, dp_usage *use, dp_buf *out, dp_error *err) {
    opt->usage = use;
    dp_buf_init(out);
    dp_error_init(err);
    return dp_decompile(co, opt, out, err);
}

/* A DAG of code objects prints each use in full: up to the work limit it
 * decompiles, past it the error names the limit, and the work done stays
 * within it (nothing like the 2**30 uses). */
static void test_shared_code_objects_decompile_up_to_the_work_limit(void) {
    dp_arena a;
    dp_arena_init(&a);
    dp_code *small = shared_levels(&a, returns_text(&a, 1), 4), *big = shared_levels(&a, returns_text(&a, 1), 30);
    CHECK(small != NULL && big != NULL);
    if (small != NULL && big != NULL) {
        dp_options opt = {0};
        dp_usage use;
        dp_buf out;
        dp_error err;
        CHECK(decompile_with(small, &opt, &use, &out, &err) == 0);
        CHECK(out.data != NULL && count(out.data, "def g(x):") == 2 + 4 + 8 + 16 && count(out.data, "return 'q'") == 16);
        dp_buf_free(&out);
        CHECK(decompile_with(big, &opt, &use, &out, &err) < 0);
        CHECK(strstr(err.msg, "the work limit") != NULL && strstr(err.msg, "once per use") != NULL);
        CHECK(use.work <= DP_WORK_FACTOR * use.input.bytecode + DP_WORK_FLOOR);
        CHECK(use.input.bytecode < 4096); /* each shared code object counted once */
        dp_buf_free(&out);
        /* the listing shows each code object once */
        dp_buf_init(&out);
        dp_error_init(&err);
        CHECK(dp_disasm(big, &out, &err) == 0);
        CHECK(count(out.data, "Disassembly of code object") == 31 && count(out.data, "listed above") == 30);
        dp_buf_free(&out);
    }
    dp_arena_free(&a);
}

/* def f(x): g, g, ... (n times) = x, or with `stores` 0 only the unpack. */
static dp_code *unpacks(dp_arena *a, unsigned n, unsigned stores) {
    emitter e = {0};
    dp_const **consts = dp_alloc_array(a, 1, sizeof *consts);
    if (consts == NULL || (consts[0] = none_const(a)) == NULL)
        return NULL;
    emit(&e, DPO_RESUME, 0);
    emit(&e, DPO_LOAD_FAST, 0);
    emit(&e, DPO_UNPACK_SEQUENCE, n);
    for (unsigned k = 0; k < stores; k++)
        emit(&e, DPO_STORE_FAST, 1);
    emit(&e, DPO_LOAD_CONST, 0);
    emit(&e, DPO_RETURN_VALUE, 0);
    return function(a, "f", &e, consts, 1);
}

/* Values an instruction unpacks are work: an assignment to 20,000 targets
 * decompiles, one short instruction that pushes 60,000 values and nothing
 * to consume them passes the work limit, and memory stays in proportion. */
static void test_unpacked_values_count_as_work(void) {
    dp_arena a;
    dp_arena_init(&a);
    dp_code *targets = unpacks(&a, 20000, 20000), *hostile = unpacks(&a, 60000, 0);
    CHECK(targets != NULL && hostile != NULL);
    if (targets != NULL && hostile != NULL) {
        dp_options opt = {0};
        dp_usage use;
        dp_buf out;
        dp_error err;
        CHECK(decompile_with(targets, &opt, &use, &out, &err) == 0);
        CHECK(out.data != NULL && count(out.data, "g, ") == 19999);
        CHECK(use.memory <= 16 * use.work + ((size_t)16 << 20));
        dp_buf_free(&out);
        CHECK(decompile_with(hostile, &opt, &use, &out, &err) < 0);
        CHECK(strstr(err.msg, "the work limit") != NULL && strstr(err.msg, "unpacks") != NULL);
        CHECK(use.work <= DP_WORK_FACTOR * use.input.bytecode + DP_WORK_FLOOR);
        dp_buf_free(&out);
    }
    dp_arena_free(&a);
}

/* A text constant printed once per use: up to the output limit the source
 * holds it each time, past it the error names the limit and nothing more
 * than the limit was printed. */
static void test_text_used_many_times_prints_up_to_the_output_limit(void) {
    const size_t len = (size_t)64 << 10;
    dp_arena a;
    dp_arena_init(&a);
    dp_code *leaf = returns_text(&a, len);
    dp_code *few = leaf ? uses_of(&a, "f", leaf, 8) : NULL, *many = leaf ? shared_levels(&a, leaf, 8) : NULL;
    CHECK(few != NULL && many != NULL);
    if (few != NULL && many != NULL) {
        dp_options opt = {0};
        dp_usage use;
        dp_buf out;
        dp_error err;
        CHECK(decompile_with(few, &opt, &use, &out, &err) == 0);
        CHECK(use.output > 8 * len && use.output == out.len);
        dp_buf_free(&out);
        CHECK(decompile_with(many, &opt, &use, &out, &err) < 0);
        CHECK(strstr(err.msg, "the output limit") != NULL);
        CHECK(use.output <= DP_OUTPUT_FACTOR * use.input.bytes + DP_OUTPUT_FLOOR);
        CHECK(use.input.bytes < 2 * len);
        dp_buf_free(&out);
    }
    dp_arena_free(&a);
}

/* One tuple held twice at each of 60 levels (2**60 items when printed). */
static void test_a_shared_tuple_prints_up_to_the_output_limit(void) {
    dp_arena a;
    dp_arena_init(&a);
    dp_const *t = dp_const_new(&a, DP_CONST_INT);
    if (t != NULL)
        t->text = "1", t->len = 1;
    for (int k = 0; k < 60 && t != NULL; k++) {
        dp_const *up = dp_const_new(&a, DP_CONST_TUPLE);
        dp_const **items = dp_alloc_array(&a, 2, sizeof *items);
        if (up == NULL || items == NULL) {
            t = NULL;
            break;
        }
        items[0] = items[1] = t;
        up->items = items;
        up->n = 2;
        t = up;
    }
    emitter e = {0};
    emit(&e, DPO_RESUME, 0);
    emit(&e, DPO_LOAD_CONST, 0);
    emit(&e, DPO_RETURN_VALUE, 0);
    dp_const **consts = dp_alloc_array(&a, 1, sizeof *consts);
    if (consts != NULL)
        consts[0] = t;
    dp_code *co = t && consts ? function(&a, "f", &e, consts, 1) : (free(e.code), NULL);
    CHECK(co != NULL);
    if (co != NULL) {
        dp_options opt = {0};
        dp_usage use;
        dp_buf out;
        dp_error err;
        CHECK(decompile_with(co, &opt, &use, &out, &err) < 0);
        CHECK(strstr(err.msg, "the output limit") != NULL);
        CHECK(use.output <= DP_OUTPUT_FACTOR * use.input.bytes + DP_OUTPUT_FLOOR);
        dp_buf_free(&out);
    }
    dp_arena_free(&a);
}

/* Validation prints each function with the functions in it: a hook that
 * refuses everything makes every function print as the state machine,
 * until the validation budget is spent; then they are not validated. */
static int refuse(void *ctx, const char *src, long first_line, int flags, dp_arena *a, dp_code **out, char *why,
                  size_t whylen) {
    (void)src, (void)first_line, (void)flags, (void)a, (void)out;
    ++*(int *)ctx;
    snprintf(why, whylen, "refused by the test");
    return 1;
}

static void test_validation_stops_at_its_limit(void) {
    const size_t len = (size_t)64 << 10;
    dp_arena a;
    dp_arena_init(&a);
    dp_code *co = shared_levels(&a, returns_text(&a, len), 6);
    CHECK(co != NULL);
    if (co != NULL) {
        int compiled = 0;
        dp_validation_stats stats = {0};
        dp_options opt = {.compile = refuse, .compile_ctx = &compiled, .compile_minor = MINOR, .stats = &stats};
        dp_usage use;
        dp_buf out;
        dp_error err;
        int rc = decompile_with(co, &opt, &use, &out, &err);
        CHECK(rc == 0);
        CHECK(use.validation <= DP_VALIDATION_FACTOR * use.input.bytes + DP_VALIDATION_FLOOR);
        CHECK(stats.fallback == compiled && stats.fallback > 0 && stats.unchecked > 0);
        CHECK(rc < 0 || count(out.data, "qqqq\'") == 64); /* each use of the leaf printed */
        dp_buf_free(&out);
    }
    dp_arena_free(&a);
}

/* The memory limit names itself. */
static void test_the_memory_limit_names_itself(void) {
    dp_arena a;
    dp_arena_init(&a);
    dp_code *co = many_functions(&a, 2000);
    CHECK(co != NULL);
    if (co != NULL) {
        dp_options opt = {.memory_limit = (size_t)1 << 20};
        dp_usage use;
        dp_buf out;
        dp_error err;
        CHECK(decompile_with(co, &opt, &use, &out, &err) < 0);
        CHECK(strstr(err.msg, "out of memory") == err.msg && strstr(err.msg, "memory limit of 1 MiB") != NULL);
        CHECK(use.memory <= opt.memory_limit);
        dp_buf_free(&out);
    }
    dp_arena_free(&a);
}


int main(void) {
    RUN(test_code_objects_nested_up_to_the_limit_decompile);
    RUN(test_defs_nested_one_past_the_limit_are_an_error);
    RUN(test_code_objects_nested_past_the_limit_are_an_error);
    RUN(test_deep_expressions_decompile_or_fail_cleanly);
    RUN(test_a_function_past_the_instruction_limit_is_an_error);
    RUN(test_a_large_constant_is_printed_whole);
    RUN(test_many_code_objects_decompile);
    RUN(test_shared_code_objects_decompile_up_to_the_work_limit);
    RUN(test_unpacked_values_count_as_work);
    RUN(test_text_used_many_times_prints_up_to_the_output_limit);
    RUN(test_a_shared_tuple_prints_up_to_the_output_limit);
    RUN(test_validation_stops_at_its_limit);
    RUN(test_the_memory_limit_names_itself);
    return TEST_REPORT();
}
