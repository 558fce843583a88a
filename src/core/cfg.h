/* The control-flow graph of one lifted code object, built once after
 * lifting (cfg.c) and read by every later pass: the structurer, the
 * fallback's state machine, the checks on coverage.
 *
 * One exception model for every version: each instruction has at most one
 * handler.  From 3.11 it comes from the exception table (the first entry
 * covering an instruction wins, as in CPython's lookup); for 3.8-3.10 it is
 * derived from the block stack the way CPython 3.11's compiler derives its
 * table (label_exception_targets): SETUP_* pushes a block whose handler is
 * its target, POP_BLOCK pops it, a handler runs under the blocks below the
 * one it handles.  The one special case is 3.8's finally machinery:
 * CALL_FINALLY enters a finally body that END_FINALLY leaves for the
 * instruction after the CALL_FINALLY, so CALL_FINALLY has two edges, like a
 * call: the body and the place it returns to.
 *
 * Blocks end at jumps, at instructions that do not fall through, at
 * changes of the exception state (SETUP_*, POP_BLOCK, POP_EXCEPT, 3.8's
 * END_FINALLY, POP_FINALLY and WITH_CLEANUP_FINISH; PUSH_EXC_INFO is a
 * block of its own) and at the bounds of every exception range, so a block
 * lies in one range.  Dominators and post-dominators, built when a pass
 * asks (dp_cfg_dominators), are Lengauer-Tarjan's (near-linear on any
 * input); loops are natural loops of back edges (a header dominating its
 * latch), found innermost first with a union-find as in Havlak's
 * algorithm. */
#ifndef DEPYF_CFG_H
#define DEPYF_CFG_H

#include "ir.h"

/* Where the exceptions of an instruction go: a 3.11+ table entry, or a
 * 3.8-3.10 SETUP_* block. */
typedef struct dp_exc_region {
    int32_t target;      /* IR index of the handler */
    int32_t depth;       /* stack values kept below what the handler gets (3.8-3.10: below its
                          * six values; -1 where no depth is static: 3.8's finally bodies) */
    int32_t setup;       /* 3.8-3.10: the SETUP_* instruction that opened the block, else -1 */
    int32_t up;          /* 3.8-3.10: the region of the block below it (the handler's own), -1 */
    uint8_t lasti;
} dp_exc_region;

enum { DP_EDGE_FALL, DP_EDGE_JUMP, DP_EDGE_EXC };

typedef struct dp_edge {
    int32_t to;          /* block */
    uint8_t kind;        /* DP_EDGE_* */
} dp_edge;

typedef struct dp_block {
    int32_t start, end;  /* IR range [start, end) */
    int32_t exc;         /* exception region covering it, or -1 */
    uint8_t can_raise;   /* some instruction of it can raise */
    dp_edge *succ;       /* fall-through, jump, exception handler (in that order) */
    int32_t nsucc;
    int32_t *pred;
    int32_t npred;
    int32_t rpo;         /* reverse postorder number, -1 when unreachable */
    int32_t idom;        /* immediate dominator (-1: the entry, or unreachable) */
    int32_t ipdom;       /* immediate post-dominator (-1: the function's exit) */
    int32_t loop;        /* header of the innermost loop holding it (itself for a header), -1 */
    int32_t loop_up;     /* a header: the header of the loop around its own, -1 */
    uint8_t is_header;   /* the target of a back edge */
    /* intervals of the dominator, post-dominator and loop trees, for
     * constant-time ancestor questions */
    int32_t dom_in, dom_out, pdom_in, pdom_out, loop_in, loop_out;
} dp_block;

typedef struct dp_cfg {
    const dp_irfunc *f;
    int32_t n;           /* instructions */
    dp_block *b;
    int32_t nb;
    int32_t *block_of;   /* instruction -> its block (n + 1 entries, block_of[n] = -1) */
    int32_t *exc_of;     /* instruction -> its exception region, -1 */
    dp_exc_region *exc;
    int32_t nexc;
    uint8_t *reach;      /* instruction -> can it run (its block is reachable) */
    int32_t *order;      /* the reachable blocks in reverse postorder */
    int32_t nreach;
    int dominators;      /* dp_cfg_dominators ran: idom, ipdom, loops and the tree intervals are set */
} dp_cfg;

/* For each instruction of f (n + 1 entries), the first exception-table
 * entry covering it, -1 for none: in time linear in the code and the
 * table, however the entries overlap.  -1 when out of memory, -2 for an
 * entry out of range. */
int dp_exc_cover(dp_arena *a, const dp_irfunc *f, int32_t *entry_of);

/* Builds the graph of `f`.  Fails (with a message) only on a jump or
 * exception entry out of range. */
int dp_cfg_build(dp_arena *a, const dp_irfunc *f, dp_cfg *g, dp_error *err);

/* Dominators, post-dominators and loops of a built graph, for the passes
 * that ask (built once; until then idom, ipdom and loop are -1). */
int dp_cfg_dominators(dp_arena *a, dp_cfg *g, dp_error *err);

/* The handler (IR index) of instruction i, or -1. */
static inline int32_t dp_cfg_handler(const dp_cfg *g, int32_t i) {
    return i >= 0 && i < g->n && g->exc_of[i] >= 0 ? g->exc[g->exc_of[i]].target : -1;
}
/* Does block a dominate block b (both reachable)?  (These three need
 * dp_cfg_dominators.) */
int dp_cfg_dominates(const dp_cfg *g, int32_t a, int32_t b);
/* Does block a post-dominate block b? */
int dp_cfg_post_dominates(const dp_cfg *g, int32_t a, int32_t b);
/* Is block b inside the loop headed by block h? */
int dp_cfg_in_loop(const dp_cfg *g, int32_t b, int32_t h);

#endif
