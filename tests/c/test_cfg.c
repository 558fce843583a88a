/* The control-flow graph (cfg.c) against definitions checked the slow way:
 * on hand-made IR and on random IR, blocks partition the code, edges agree
 * with the op table, reachability is a walk over instructions, a dominates
 * b exactly when b cannot be reached from the entry without a, post-
 * dominance the same towards the exit, loops are the natural loops of back
 * edges, and the exception regions follow the table (3.11+) or the block
 * stack (3.8-3.10). */
#include <stdlib.h>

#include "cfg.h"
#include "testlib.h"

typedef struct prog {
    dp_arena a;
    dp_code code;
    dp_irfunc f;
    dp_cfg g;
    dp_error err;
    int rc;
} prog;

static void build(prog *p, int minor, const dp_instr *ins, int n, const dp_exc_entry *exc, int nexc) {
    memset(p, 0, sizeof *p);
    dp_arena_init(&p->a);
    dp_error_init(&p->err);
    p->code.py_minor = minor;
    p->f.code = &p->code;
    p->f.lay = dp_layout_for(minor);
    p->f.ins = dp_alloc_array(&p->a, (size_t)n + 1, sizeof *p->f.ins);
    if (n > 0)
        memcpy(p->f.ins, ins, (size_t)n * sizeof *ins);
    p->f.n = n;
    if (nexc) {
        p->f.exc = dp_alloc_array(&p->a, (size_t)nexc, sizeof *exc);
        memcpy(p->f.exc, exc, (size_t)nexc * sizeof *exc);
        p->f.nexc = nexc;
    }
    p->rc = dp_cfg_build(&p->a, &p->f, &p->g, &p->err);
    if (p->rc == 0)
        p->rc = dp_cfg_dominators(&p->a, &p->g, &p->err);
}

#define OP(o) {.op = IR_##o, .target = -1}
#define JMP(o, t) {.op = IR_##o, .target = (t)}

/* ------------------------------------------------------------------ slow definitions */

/* Blocks reached from the entry without passing block `avoid` (-1: none). */
static void reached(const dp_cfg *g, int avoid, unsigned char *seen) {
    int *work = malloc(sizeof(int) * (size_t)(g->nb + 1)), top = 0;
    memset(seen, 0, (size_t)g->nb);
    if (g->nb > 0 && avoid != 0) {
        seen[0] = 1;
        work[top++] = 0;
    }
    while (top > 0) {
        int v = work[--top];
        for (int e = 0; e < g->b[v].nsucc; e++) {
            int w = g->b[v].succ[e].to;
            if (w != avoid && !seen[w]) {
                seen[w] = 1;
                work[top++] = w;
            }
        }
    }
    free(work);
}

/* Blocks that reach an exit (a block without successors) without passing `avoid`. */
static void reaching_exit(const dp_cfg *g, int avoid, unsigned char *seen) {
    int *work = malloc(sizeof(int) * (size_t)(g->nb + 1)), top = 0;
    memset(seen, 0, (size_t)g->nb);
    for (int v = 0; v < g->nb; v++)
        if (g->b[v].nsucc == 0 && v != avoid) {
            seen[v] = 1;
            work[top++] = v;
        }
    while (top > 0) {
        int v = work[--top];
        for (int e = 0; e < g->b[v].npred; e++) {
            int w = g->b[v].pred[e];
            if (w != avoid && !seen[w]) {
                seen[w] = 1;
                work[top++] = w;
            }
        }
    }
    free(work);
}

/* Does block b reach block `to` without passing block h (b itself may be h's successor)? */
static int reaches_avoiding(const dp_cfg *g, int b, int to, int h) {
    unsigned char *seen = calloc((size_t)g->nb + 1, 1);
    int *work = malloc(sizeof(int) * (size_t)(g->nb + 1)), top = 0, found = 0;
    seen[b] = 1;
    work[top++] = b;
    while (top > 0 && !found) {
        int v = work[--top];
        if (v == to) {
            found = 1;
            break;
        }
        for (int e = 0; e < g->b[v].nsucc; e++) {
            int w = g->b[v].succ[e].to;
            if (w != h && !seen[w]) {
                seen[w] = 1;
                work[top++] = w;
            }
        }
    }
    free(seen);
    free(work);
    return found;
}

/* Every property of a graph against its slow definition. */
static void check_graph(const prog *p) {
    const dp_cfg *g = &p->g;
    const dp_irfunc *f = &p->f;
    /* blocks partition the code in order */
    int at = 0;
    for (int k = 0; k < g->nb; k++) {
        CHECK(g->b[k].start == at && g->b[k].end > at);
        for (int i = g->b[k].start; i < g->b[k].end; i++)
            CHECK(g->block_of[i] == k && g->exc_of[i] == g->b[k].exc);
        at = g->b[k].end;
    }
    CHECK(at == f->n);
    /* edges as the op table says */
    for (int k = 0; k < g->nb; k++) {
        const dp_block *b = &g->b[k];
        const dp_instr *last = &f->ins[b->end - 1];
        int want = (dp_falls_through(last->op) && b->end < f->n) + (last->target >= 0) + (b->exc >= 0);
        CHECK(b->nsucc == want);
        for (int e = 0; e < b->nsucc; e++) {
            const dp_block *t = &g->b[b->succ[e].to];
            int back = 0;
            for (int q = 0; q < t->npred; q++)
                back |= t->pred[q] == k;
            CHECK(back);
        }
    }
    /* dominators, post-dominators and loops */
    unsigned char *live = malloc((size_t)g->nb + 1), *without = malloc((size_t)g->nb + 1);
    unsigned char *to_exit = malloc((size_t)g->nb + 1), *exit_without = malloc((size_t)g->nb + 1);
    reached(g, -1, live);
    reaching_exit(g, -1, to_exit);
    for (int k = 0; k < g->nb; k++)
        CHECK((g->b[k].rpo >= 0) == live[k]);
    for (int i = 0; i < f->n; i++)
        CHECK(g->reach[i] == live[g->block_of[i]]);
    for (int a = 0; a < g->nb; a++) {
        reached(g, a, without);
        reaching_exit(g, a, exit_without);
        for (int b = 0; b < g->nb; b++) {
            int dom = live[a] && live[b] && (a == b || !without[b]);
            CHECK(dp_cfg_dominates(g, a, b) == dom);
            int pdom = live[a] && live[b] && to_exit[b] && (a == b || !exit_without[b]);
            CHECK(dp_cfg_post_dominates(g, a, b) == pdom);
        }
    }
    for (int h = 0; h < g->nb; h++) {
        int header = 0;
        for (int e = 0; e < g->b[h].npred; e++)
            header |= live[h] && dp_cfg_dominates(g, h, g->b[h].pred[e]);
        CHECK(g->b[h].is_header == header);
        if (!header)
            continue;
        for (int b = 0; b < g->nb; b++) {
            /* in the natural loop: dominated by h, and reaching a latch without passing h */
            int in = b == h;
            for (int e = 0; e < g->b[h].npred && !in; e++) {
                int latch = g->b[h].pred[e];
                in = dp_cfg_dominates(g, h, latch) && dp_cfg_dominates(g, h, b) && reaches_avoiding(g, b, latch, h);
            }
            CHECK(dp_cfg_in_loop(g, b, h) == in);
        }
    }
    free(live);
    free(without);
    free(to_exit);
    free(exit_without);
}

/* ------------------------------------------------------------------ hand-made code */

static void test_if_else_and_a_loop(void) {
    /* 0 LOAD_FAST; 1 POP_JUMP_IF_FALSE 4; 2 NOP; 3 JUMP 5; 4 NOP;
     * 5 LOAD_FAST; 6 POP_JUMP_IF_TRUE 5 (a loop on itself); 7 RETURN */
    dp_instr ins[] = {OP(LOAD_FAST), JMP(POP_JUMP_IF_FALSE, 4), OP(NOP), JMP(JUMP, 5), OP(NOP),
                      OP(LOAD_FAST), JMP(POP_JUMP_IF_TRUE, 5), OP(RETURN_VALUE)};
    prog p;
    build(&p, 11, ins, 8, NULL, 0);
    CHECK(p.rc == 0);
    CHECK(p.g.nb == 5);
    int b_then = p.g.block_of[2], b_else = p.g.block_of[4], b_join = p.g.block_of[5];
    CHECK(p.g.b[b_join].idom == 0 && p.g.b[b_then].idom == 0 && p.g.b[b_else].idom == 0);
    CHECK(p.g.b[0].ipdom == b_join);
    CHECK(p.g.b[b_join].is_header && p.g.b[b_join].loop == b_join);
    CHECK(!dp_cfg_in_loop(&p.g, p.g.block_of[7], b_join));
    check_graph(&p);
    dp_arena_free(&p.a);
}

static void test_first_table_entry_wins(void) {
    /* overlapping entries (hostile: no compiler writes them): [0, 4) -> 5,
     * then [2, 6) -> 7 covers only 4 and 5 */
    dp_instr ins[] = {OP(NOP), OP(LOAD_FAST), OP(POP_TOP), OP(NOP), OP(NOP), OP(PUSH_EXC_INFO), OP(RERAISE),
                      OP(PUSH_EXC_INFO), OP(RERAISE)};
    ins[6].arg = ins[8].arg = 0;
    dp_exc_entry exc[] = {{0, 4, 5, 0, 0}, {2, 6, 7, 0, 1}};
    prog p;
    build(&p, 11, ins, 9, exc, 2);
    CHECK(p.rc == 0);
    for (int i = 0; i < 9; i++)
        CHECK(dp_cfg_handler(&p.g, i) == (i < 4 ? 5 : i < 6 ? 7 : -1));
    CHECK(p.g.exc[1].lasti == 1 && p.g.exc[1].setup == -1);
    check_graph(&p);
    dp_arena_free(&p.a);
}

static void test_block_stack_becomes_regions(void) {
    /* 3.9: try: (1..2) except: (5..) inside `try: ... finally:` opened at 0
     *  0 SETUP_FINALLY 9; 1 SETUP_FINALLY 5; 2 LOAD_FAST; 3 POP_BLOCK; 4 JUMP 8;
     *  5 POP_TOP (handler); 6 POP_EXCEPT; 7 JUMP 8; 8 POP_BLOCK ... 9 RERAISE (outer handler)
     *  10 LOAD_CONST; 11 RETURN_VALUE */
    dp_instr ins[] = {JMP(SETUP_FINALLY, 9), JMP(SETUP_FINALLY, 5), OP(LOAD_FAST), OP(POP_BLOCK), JMP(JUMP, 8),
                      OP(POP_TOP), OP(POP_EXCEPT), JMP(JUMP, 8), OP(POP_BLOCK), OP(RERAISE), OP(LOAD_CONST),
                      OP(RETURN_VALUE)};
    ins[8].op = IR_POP_BLOCK;
    ins[9].target = -1;
    /* (8 pops the outer block and falls into 9, which stands for the
     * finally body here; the walk only cares about the block stack) */
    prog p;
    build(&p, 9, ins, 12, NULL, 0);
    CHECK(p.rc == 0);
    CHECK(dp_cfg_handler(&p.g, 0) == -1);
    CHECK(dp_cfg_handler(&p.g, 1) == 9);
    CHECK(dp_cfg_handler(&p.g, 2) == 5 && dp_cfg_handler(&p.g, 3) == 5);
    CHECK(dp_cfg_handler(&p.g, 4) == 9);
    CHECK(dp_cfg_handler(&p.g, 5) == 9 && dp_cfg_handler(&p.g, 6) == 9); /* the handler runs under the outer block */
    CHECK(dp_cfg_handler(&p.g, 8) == 9 && dp_cfg_handler(&p.g, 9) == -1);
    int inner = p.g.exc_of[2];
    CHECK(p.g.exc[inner].setup == 1 && p.g.exc[p.g.exc[inner].up].setup == 0);
    check_graph(&p);
    dp_arena_free(&p.a);
}

static void test_block_stack_regions_have_the_depth_of_their_setup(void) {
    /* 3.9: x; try: y  except: pass, then a with block; a region keeps the
     * values below its SETUP_* (SETUP_WITH: __exit__ in place of the manager)
     *  0 LOAD_FAST; 1 SETUP_FINALLY 6; 2 LOAD_FAST; 3 POP_TOP; 4 POP_BLOCK; 5 JUMP 10;
     *  6-8 POP_TOP x3; 9 POP_EXCEPT; 10 LOAD_FAST; 11 SETUP_WITH 15; 12 POP_TOP;
     *  13 POP_BLOCK; 14 RETURN_VALUE (the exit's call left out); 15 RERAISE */
    dp_instr ins[] = {OP(LOAD_FAST), JMP(SETUP_FINALLY, 6), OP(LOAD_FAST), OP(POP_TOP), OP(POP_BLOCK), JMP(JUMP, 10),
                      OP(POP_TOP), OP(POP_TOP), OP(POP_TOP), OP(POP_EXCEPT), OP(LOAD_FAST), JMP(SETUP_WITH, 15),
                      OP(POP_TOP), OP(POP_BLOCK), OP(RETURN_VALUE), OP(RERAISE)};
    prog p;
    build(&p, 9, ins, 16, NULL, 0);
    CHECK(p.rc == 0);
    CHECK(p.g.nexc == 2);
    CHECK(p.g.exc[p.g.exc_of[2]].setup == 1 && p.g.exc[p.g.exc_of[2]].depth == 1);
    CHECK(p.g.exc[p.g.exc_of[12]].setup == 11 && p.g.exc[p.g.exc_of[12]].depth == 2);
    check_graph(&p);
    dp_arena_free(&p.a);
    /* 3.8: a finally body entered by BEGIN_FINALLY (one value) and by an
     * exception (six): no depth is static
     *  0 SETUP_FINALLY 3; 1 POP_BLOCK; 2 BEGIN_FINALLY; 3 END_FINALLY;
     *  4 LOAD_CONST; 5 RETURN_VALUE */
    dp_instr fin[] = {JMP(SETUP_FINALLY, 3), OP(POP_BLOCK), OP(BEGIN_FINALLY), OP(END_FINALLY), OP(LOAD_CONST),
                      OP(RETURN_VALUE)};
    build(&p, 8, fin, 6, NULL, 0);
    CHECK(p.rc == 0);
    CHECK(p.g.nexc == 1 && p.g.exc[0].depth == -1 && dp_cfg_handler(&p.g, 1) == 3);
    dp_arena_free(&p.a);
}

static void test_empty_code(void) {
    prog p;
    build(&p, 11, NULL, 0, NULL, 0);
    CHECK(p.rc == 0 && p.g.nb == 0);
    dp_arena_free(&p.a);
}

static void test_bad_targets_fail_with_a_message(void) {
    dp_instr ins[] = {JMP(JUMP, 7), OP(RETURN_VALUE)};
    prog p;
    build(&p, 11, ins, 2, NULL, 0);
    CHECK(p.rc < 0 && strstr(p.err.msg, "out of range") != NULL);
    dp_arena_free(&p.a);
    dp_instr ok[] = {OP(NOP), OP(RETURN_VALUE)};
    dp_exc_entry exc[] = {{0, 3, 1, 0, 0}};
    build(&p, 11, ok, 2, exc, 1);
    CHECK(p.rc < 0 && strstr(p.err.msg, "exception table") != NULL);
    dp_arena_free(&p.a);
}

/* ------------------------------------------------------------------ random code */

static unsigned rnd_state = 12345;
static unsigned rnd(unsigned n) {
    rnd_state = rnd_state * 1103515245u + 12345u;
    return (rnd_state >> 16) % n;
}

static void test_random_graphs_match_the_definitions(void) {
    static const int ops[] = {IR_NOP, IR_LOAD_FAST, IR_POP_TOP, IR_JUMP, IR_POP_JUMP_IF_FALSE, IR_POP_JUMP_IF_TRUE,
                              IR_FOR_ITER, IR_RETURN_VALUE, IR_RAISE, IR_PUSH_EXC_INFO, IR_POP_EXCEPT};
    static const int legacy_ops[] = {IR_SETUP_FINALLY, IR_POP_BLOCK, IR_SETUP_WITH, IR_CALL_FINALLY, IR_END_FINALLY};
    for (int round = 0; round < 400; round++) {
        int minor = round % 2 ? 11 : 9, n = 2 + (int)rnd(28);
        dp_instr ins[32];
        for (int i = 0; i < n; i++) {
            int op = minor <= 10 && rnd(4) == 0 ? legacy_ops[rnd(5)] : ops[rnd(sizeof ops / sizeof *ops)];
            ins[i] = (dp_instr){.op = (uint16_t)op, .target = -1, .arg = op == IR_RAISE ? 1 : 0};
            if (dp_op_info(op)->flags & (DP_IRF_JUMP | DP_IRF_SETUP))
                ins[i].target = (int32_t)rnd((unsigned)n);
        }
        dp_exc_entry exc[4];
        int nexc = minor >= 11 ? (int)rnd(4) : 0;
        for (int k = 0; k < nexc; k++) {
            int s = (int)rnd((unsigned)n), e = s + (int)rnd((unsigned)(n - s) + 1);
            exc[k] = (dp_exc_entry){s, e, (int32_t)rnd((unsigned)n), (int32_t)rnd(3), (int)rnd(2)};
        }
        prog p;
        build(&p, minor, ins, n, exc, nexc);
        CHECK(p.rc == 0);
        if (p.rc == 0) {
            check_graph(&p);
            /* 3.11+: the first entry covering an instruction */
            for (int i = 0; i < n && minor >= 11; i++) {
                int want = -1;
                for (int k = 0; k < nexc && want < 0; k++)
                    if (exc[k].start <= i && i < exc[k].end)
                        want = exc[k].target;
                CHECK(dp_cfg_handler(&p.g, i) == want);
            }
        }
        dp_arena_free(&p.a);
    }
}

int main(void) {
    RUN(test_if_else_and_a_loop);
    RUN(test_first_table_entry_wins);
    RUN(test_block_stack_becomes_regions);
    RUN(test_block_stack_regions_have_the_depth_of_their_setup);
    RUN(test_empty_code);
    RUN(test_bad_targets_fail_with_a_message);
    RUN(test_random_graphs_match_the_definitions);
    return TEST_REPORT();
}
