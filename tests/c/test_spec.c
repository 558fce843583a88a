/* Speculative structuring (dc_spec_begin/dc_spec_end, stmt.c): a failed
 * speculation leaves no trace in what the coverage check and the walk read
 * (instructions marked seen, skip_to, vjump and nref entries, the IR it
 * rewrote), nor in the declarations and the error; a successful one keeps
 * all of it. */
#include <stdlib.h>

#include "dc.h"
#include "testlib.h"

enum { N = 16 };

typedef struct fixture {
    dp_arena ar;
    dp_error err;
    dc_shared sh;
    dc d;
    unsigned char seen[N + 1];
    int skip_to[N + 1], vjump[N + 1], nref[N + 1];
    dp_instr in[N];
    dp_code code;
} fixture;

static void setup(fixture *f) {
    memset(f, 0, sizeof *f);
    dp_arena_init(&f->ar);
    dp_error_init(&f->err);
    f->sh.ar = &f->ar;
    f->sh.err = &f->err;
    f->d.sh = &f->sh;
    f->d.n = N;
    f->d.in = f->in;
    f->d.f.ins = f->in;
    f->d.f.n = N;
    f->d.nref = f->nref;
    for (int i = 0; i < N; i++) {
        f->in[i].op = IR_JUMP;
        f->in[i].target = N - 1;
    }
    f->nref[N - 1] = N;
    f->code.qualname = "f";
    f->d.code = &f->code;
    f->d.seen = f->seen;
    f->d.skip_to = f->skip_to;
    f->d.vjump = f->vjump;
    for (int i = 0; i <= N; i++)
        f->skip_to[i] = f->vjump[i] = -1;
}

static void teardown(fixture *f) { dp_arena_free(&f->ar); }

static void test_a_failed_speculation_undoes_marks_entries_and_declarations(void) {
    fixture f;
    setup(&f);
    dc *d = &f.d;
    dc_mark(d, 1); /* consumed before: stays consumed */
    dc_spec sa, sb;
    dc_spec_begin(d, &sa);
    dc_mark(d, 1);
    dc_mark(d, 3);
    dc_set(d, &d->skip_to[5], 9);
    CHECK(dc_declare(d, &d->globals, "x") == 0);
    dc_spec_begin(d, &sb);
    dc_mark(d, 4);
    dc_set(d, &d->vjump[2], 7);
    CHECK(dc_spec_end(d, &sb, 0) == 1); /* the inner one succeeds ... */
    CHECK(d->seen[4] == 1 && d->vjump[2] == 7);
    dc_fail(d, 6, "no such statement");
    CHECK(dc_spec_end(d, &sa, -1) == 0); /* ... the outer one fails: both are undone */
    CHECK(d->seen[1] == 1);
    CHECK(d->seen[3] == 0 && d->seen[4] == 0);
    CHECK(d->skip_to[5] == -1 && d->vjump[2] == -1);
    CHECK(d->globals.n == 0);
    CHECK(!f.err.set);
    teardown(&f);
}

static void test_a_successful_speculation_keeps_what_it_did(void) {
    fixture f;
    setup(&f);
    dc *d = &f.d;
    dc_spec sa, sb;
    dc_spec_begin(d, &sa);
    dc_spec_begin(d, &sb);
    dc_mark(d, 6);
    dc_set(d, &d->skip_to[6], 8);
    CHECK(dc_spec_end(d, &sb, -1) == 0); /* an inner failure inside a success */
    CHECK(d->seen[6] == 0 && d->skip_to[6] == -1);
    dc_mark(d, 7);
    dc_set(d, &d->skip_to[7], 10);
    dc_set(d, &d->skip_to[7], 11); /* set twice: undone to the first value */
    CHECK(dc_spec_end(d, &sa, 0) == 1);
    CHECK(d->seen[7] == 1 && d->skip_to[7] == 11);
    /* with no speculation open, nothing is logged any more */
    CHECK(d->spec_depth == 0 && d->nseen_log == 0 && d->nundo == 0);
    dc_mark(d, 9);
    dc_set(d, &d->vjump[9], 3);
    CHECK(d->nseen_log == 0 && d->nundo == 0);
    teardown(&f);
}

static void test_set_twice_inside_a_failure_restores_the_value_before_it(void) {
    fixture f;
    setup(&f);
    dc *d = &f.d;
    dc_set(d, &d->skip_to[2], 4);
    dc_spec s;
    dc_spec_begin(d, &s);
    dc_set(d, &d->skip_to[2], 5);
    dc_set(d, &d->skip_to[2], 6);
    CHECK(dc_spec_end(d, &s, -1) == 0);
    CHECK(d->skip_to[2] == 4);
    teardown(&f);
}

static void test_a_failed_speculation_puts_rewritten_instructions_back(void) {
    fixture f;
    setup(&f);
    dc *d = &f.d;
    dc_spec sa, sb;
    dc_spec_begin(d, &sa);
    dp_instr *x = dc_edit(d, 3);
    x->op = IR_NOP;
    x->target = -1;
    dc_set(d, &d->nref[N - 1], d->nref[N - 1] - 1);
    dc_spec_begin(d, &sb);
    dc_edit(d, 3)->op = IR_RETURN_VALUE; /* edited twice: back to the first form */
    dc_edit(d, 4)->target = 2;
    dc_set(d, &d->nref[2], d->nref[2] + 1);
    CHECK(dc_spec_end(d, &sb, 0) == 1);
    CHECK(d->in[3].op == IR_RETURN_VALUE && d->in[4].target == 2);
    CHECK(dc_spec_end(d, &sa, -1) == 0);
    CHECK(d->in[3].op == IR_JUMP && d->in[3].target == N - 1);
    CHECK(d->in[4].op == IR_JUMP && d->in[4].target == N - 1);
    CHECK(d->nref[N - 1] == N && d->nref[2] == 0);
    /* outside a speculation an edit stays */
    dc_edit(d, 5)->op = IR_NOP;
    CHECK(d->in[5].op == IR_NOP && d->nundo_ins == 0);
    teardown(&f);
}

static void test_a_speculation_left_open_by_an_error_is_closed_by_its_outer_one(void) {
    fixture f;
    setup(&f);
    dc *d = &f.d;
    dc_spec sa, sb;
    dc_spec_begin(d, &sa);
    dc_spec_begin(d, &sb); /* (an error return skips its dc_spec_end) */
    dc_mark(d, 2);
    CHECK(dc_spec_end(d, &sa, -1) == 0);
    CHECK(d->spec_depth == 0 && d->seen[2] == 0);
    teardown(&f);
}

int main(void) {
    RUN(test_a_failed_speculation_undoes_marks_entries_and_declarations);
    RUN(test_a_successful_speculation_keeps_what_it_did);
    RUN(test_set_twice_inside_a_failure_restores_the_value_before_it);
    RUN(test_a_failed_speculation_puts_rewritten_instructions_back);
    RUN(test_a_speculation_left_open_by_an_error_is_closed_by_its_outer_one);
    return TEST_REPORT();
}
