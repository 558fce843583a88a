/* The control-flow graph (cfg.h): exception regions, blocks and edges,
 * reachability, dominators, post-dominators and loops.  Every step is
 * linear or near-linear in the code's size, whatever the input: the graph
 * is built for hostile bytecode too. */
#include <string.h>

#include "cfg.h"

typedef struct builder {
    dp_arena *a;
    dp_error *err;
    dp_cfg *g;
    const dp_instr *in;
    int32_t n;
} builder;

static int oom(builder *B) { return dp_fail(B->err, -1, "out of memory"); }

#define ALLOC(ptr, count) ((ptr) = dp_alloc_array(B->a, (size_t)(count) + 1, sizeof *(ptr)))

/* ------------------------------------------------------------------ exception regions */

/* The next position at or after i not yet given an entry (union-find
 * with path halving over next[]). */
static int32_t next_free(int32_t *next, int32_t i) {
    while (next[i] != i) {
        next[i] = next[next[i]];
        i = next[i];
    }
    return i;
}

int dp_exc_cover(dp_arena *a, const dp_irfunc *f, int32_t *entry_of) {
    int32_t n = f->n, *next = dp_alloc_array(a, (size_t)n + 2, sizeof *next);
    if (next == NULL)
        return -1;
    for (int32_t i = 0; i <= n; i++) {
        next[i] = i;
        entry_of[i] = -1;
    }
    for (int32_t k = 0; k < f->nexc; k++) {
        const dp_exc_entry *e = &f->exc[k];
        if (e->start < 0 || e->end > n || e->target < 0 || e->target >= n || e->start > e->end || e->depth < 0)
            return -2;
        for (int32_t i = next_free(next, e->start); i < e->end; i = next_free(next, i)) {
            entry_of[i] = k;
            next[i] = i + 1;
        }
    }
    return 0;
}

/* 3.11+: the exception table; the first entry covering an instruction is
 * its region, as CPython's lookup finds it. */
static int regions_from_table(builder *B) {
    dp_cfg *g = B->g;
    const dp_irfunc *f = g->f;
    if (f->nexc > 0 && ALLOC(g->exc, f->nexc) == NULL)
        return oom(B);
    int r = dp_exc_cover(B->a, f, g->exc_of);
    if (r < 0)
        return r == -1 ? oom(B) : dp_fail(B->err, -1, "bad exception table entry");
    for (int32_t k = 0; k < f->nexc; k++) {
        const dp_exc_entry *e = &f->exc[k];
        g->exc[g->nexc++] = (dp_exc_region){e->target, e->depth, -1, -1, (uint8_t)(e->lasti != 0)};
    }
    return 0;
}

/* 3.8-3.10: the block stack, walked along every edge from the entry
 * (CPython 3.11's label_exception_targets): the region of an instruction
 * is the innermost SETUP_* block open there.  A SETUP_* opens its region
 * (one per SETUP_*, made where the walk first meets it), POP_BLOCK closes
 * it, the handler runs under the region below.  Where two paths meet with
 * different blocks open (no compiler does that) the first one counts.
 *
 * The walk also carries the stack depth, as CPython 3.11's compiler does
 * for its table: a region's depth is the values its SETUP_* keeps below
 * the six a handler gets (the op table's jump effect).  When some
 * instruction is met at two depths (3.8's finally bodies, entered by
 * BEGIN_FINALLY or CALL_FINALLY with one value and by an exception with
 * six), no depth is static: every region's depth stays -1. */
/* A depth after an instruction, kept in range on hostile code (arguments
 * push billions of values): out of it, no depth is static. */
static int32_t next_depth(int64_t d, int *fixed) {
    if (d >= 0 && d <= (1 << 24))
        return (int32_t)d;
    *fixed = 0;
    return 0;
}

static int regions_from_blocks(builder *B) {
    dp_cfg *g = B->g;
    const dp_layout *lay = &g->f->lay;
    int32_t *state, *setup_region, *work, *depth;
    int32_t top = 0;
    int fixed = 1; /* every instruction met at one depth so far */
    if (ALLOC(state, B->n) == NULL || ALLOC(setup_region, B->n) == NULL || ALLOC(work, B->n) == NULL ||
        ALLOC(depth, B->n) == NULL || ALLOC(g->exc, B->n) == NULL)
        return oom(B);
    for (int32_t i = 0; i < B->n; i++)
        state[i] = setup_region[i] = -2;
#define VISIT(j, s, dd)                                     \
    do {                                                    \
        int32_t j_ = (j), d_ = next_depth(dd, &fixed);      \
        if (j_ >= 0 && j_ < B->n && state[j_] == -2) {      \
            state[j_] = (s);                                \
            depth[j_] = d_;                                 \
            work[top++] = j_;                               \
        } else if (j_ >= 0 && j_ < B->n && depth[j_] != d_) \
            fixed = 0;                                      \
    } while (0)
    VISIT(0, -1, 0);
    while (top > 0) {
        int32_t i = work[--top], s = state[i], here = depth[i];
        const dp_instr *x = &B->in[i];
        int flags = dp_op_info(x->op)->flags;
        dp_effect fall, jump;
        if (dp_ir_effect(x, lay, 0, &fall) < 0)
            fixed = 0, fall = (dp_effect){0, 0, 0};
        if ((flags & (DP_IRF_JUMP | DP_IRF_SETUP)) && dp_ir_effect(x, lay, 1, &jump) < 0)
            fixed = 0, jump = (dp_effect){0, 0, 0};
        g->exc_of[i] = s;
        if (flags & DP_IRF_SETUP) {
            if (setup_region[i] == -2) {
                setup_region[i] = g->nexc;
                int32_t below = next_depth((int64_t)here - jump.in + jump.out - 6, &fixed);
                g->exc[g->nexc++] = (dp_exc_region){x->target, below, i, s, 0};
            }
            VISIT(x->target, s, (int64_t)here - jump.in + jump.out);
            VISIT(i + 1, setup_region[i], (int64_t)here - fall.in + fall.out);
            continue;
        }
        if (x->op == IR_POP_BLOCK) {
            VISIT(i + 1, s >= 0 ? g->exc[s].up : -1, here);
            continue;
        }
        if (flags & DP_IRF_JUMP)
            VISIT(x->target, s, (int64_t)here - jump.in + jump.out);
        if (dp_falls_through(x->op)) /* (CALL_FINALLY too: where the finally body returns to) */
            VISIT(i + 1, s, (int64_t)here - fall.in + fall.out);
    }
#undef VISIT
    for (int32_t r = 0; r < g->nexc && !fixed; r++)
        g->exc[r].depth = -1;
    return 0;
}

/* ------------------------------------------------------------------ blocks and edges */

/* Does instruction i end its block? */
static int ends_block(const dp_instr *x) {
    if (dp_op_info(x->op)->flags & (DP_IRF_JUMP | DP_IRF_NOFALL | DP_IRF_SETUP))
        return 1;
    switch (x->op) {
    case IR_PUSH_EXC_INFO: case IR_POP_EXCEPT: case IR_POP_BLOCK: case IR_END_FINALLY: case IR_POP_FINALLY:
    case IR_WITH_CLEANUP_FINISH:
        return 1;
    default:
        return 0;
    }
}

static int split_blocks(builder *B) {
    dp_cfg *g = B->g;
    const dp_irfunc *f = g->f;
    uint8_t *lead;
    if (ALLOC(lead, B->n + 1) == NULL)
        return oom(B);
    lead[0] = 1;
    for (int32_t i = 0; i < B->n; i++) {
        const dp_instr *x = &B->in[i];
        if (x->target >= 0 && (dp_op_info(x->op)->flags & (DP_IRF_JUMP | DP_IRF_SETUP)))
            lead[x->target] = 1;
        if (ends_block(x))
            lead[i + 1] = 1;
        if (x->op == IR_PUSH_EXC_INFO)
            lead[i] = 1;
        if (i > 0 && g->exc_of[i] != g->exc_of[i - 1])
            lead[i] = 1;
    }
    for (int32_t k = 0; k < f->nexc; k++) /* (every entry's bounds, overlapping ones too) */
        lead[f->exc[k].start] = lead[f->exc[k].end] = 1;
    for (int32_t k = 0; k < g->nexc; k++)
        lead[g->exc[k].target] = 1;
    for (int32_t i = 0; i < B->n; i++)
        g->nb += lead[i];
    if (ALLOC(g->b, g->nb) == NULL)
        return oom(B);
    int32_t k = -1;
    for (int32_t i = 0; i < B->n; i++) {
        if (lead[i]) {
            dp_block *b = &g->b[++k];
            b->start = i;
            b->exc = g->exc_of[i];
            b->rpo = b->idom = b->ipdom = b->loop = b->loop_up = -1;
        }
        g->b[k].end = i + 1;
        g->b[k].can_raise |= dp_can_raise(B->in[i].op);
        g->block_of[i] = k;
    }
    g->block_of[B->n] = -1;
    return 0;
}

/* Successors: fall-through, jump (a SETUP_*'s handler), exception handler;
 * then predecessors from them. */
static int link_blocks(builder *B) {
    dp_cfg *g = B->g;
    int32_t total = 0;
    dp_edge *edges;
    int32_t *npred;
    if (ALLOC(edges, 3 * (size_t)g->nb) == NULL || ALLOC(npred, g->nb) == NULL)
        return oom(B);
    for (int32_t k = 0; k < g->nb; k++) {
        dp_block *b = &g->b[k];
        const dp_instr *last = &B->in[b->end - 1];
        b->succ = edges + total;
        if (dp_falls_through(last->op) && b->end < B->n)
            b->succ[b->nsucc++] = (dp_edge){g->block_of[b->end], DP_EDGE_FALL};
        if (last->target >= 0 && (dp_op_info(last->op)->flags & (DP_IRF_JUMP | DP_IRF_SETUP)))
            b->succ[b->nsucc++] = (dp_edge){g->block_of[last->target], DP_EDGE_JUMP};
        if (b->exc >= 0)
            b->succ[b->nsucc++] = (dp_edge){g->block_of[g->exc[b->exc].target], DP_EDGE_EXC};
        total += b->nsucc;
        for (int32_t e = 0; e < b->nsucc; e++)
            npred[b->succ[e].to]++;
    }
    int32_t *preds;
    if (ALLOC(preds, total) == NULL)
        return oom(B);
    for (int32_t k = 0, at = 0; k < g->nb; k++) {
        g->b[k].pred = preds + at;
        at += npred[k];
    }
    for (int32_t k = 0; k < g->nb; k++)
        for (int32_t e = 0; e < g->b[k].nsucc; e++) {
            dp_block *t = &g->b[g->b[k].succ[e].to];
            t->pred[t->npred++] = k;
        }
    return 0;
}

/* ------------------------------------------------------------------ depth-first order */

/* A graph for the generic passes below: node v's successors are
 * adj[off[v] .. off[v + 1]). */
typedef struct graph {
    int32_t n;
    const int32_t *off, *adj;
} graph;

/* Preorder numbers (pre[v], -1 when unreached from root), the nodes in
 * preorder, their DFS-tree parents and the postorder, without recursion. */
typedef struct dfs {
    int32_t *pre, *vertex, *parent, *post;
    int32_t count;
} dfs;

static int depth_first(builder *B, const graph *G, int32_t root, dfs *D) {
    int32_t *stack, *edge, top = 0, npost = 0;
    if (ALLOC(D->pre, G->n) == NULL || ALLOC(D->vertex, G->n) == NULL || ALLOC(D->parent, G->n) == NULL ||
        ALLOC(D->post, G->n) == NULL || ALLOC(stack, G->n) == NULL || ALLOC(edge, G->n) == NULL)
        return oom(B);
    for (int32_t v = 0; v < G->n; v++)
        D->pre[v] = D->parent[v] = -1;
    D->count = 0;
    D->pre[root] = D->count;
    D->vertex[D->count++] = root;
    stack[top] = root;
    edge[top++] = G->off[root];
    while (top > 0) {
        int32_t v = stack[top - 1];
        if (edge[top - 1] == G->off[v + 1]) {
            D->post[npost++] = v;
            top--;
            continue;
        }
        int32_t w = G->adj[edge[top - 1]++];
        if (D->pre[w] >= 0)
            continue;
        D->pre[w] = D->count;
        D->vertex[D->count++] = w;
        D->parent[w] = v;
        stack[top] = w;
        edge[top++] = G->off[w];
    }
    return 0;
}

/* ------------------------------------------------------------------ dominators */

/* The ancestor of v with the least semi-dominator, compressing the path
 * (iteratively: the forest can be as deep as the code is long). */
static int32_t eval_min(int32_t v, int32_t *anc, int32_t *best, const int32_t *semi, const int32_t *pre,
                        int32_t *path) {
    int32_t n = 0, v0 = v;
    while (anc[v] >= 0 && anc[anc[v]] >= 0) {
        path[n++] = v;
        v = anc[v];
    }
    while (n > 0) {
        int32_t u = path[--n];
        if (pre[semi[best[anc[u]]]] < pre[semi[best[u]]])
            best[u] = best[anc[u]];
        anc[u] = anc[anc[u]];
    }
    return best[v0];
}

/* Immediate dominators of the nodes reached from root (Lengauer and
 * Tarjan, with path compression): idom[v], -1 for root and unreached
 * nodes.  `radj` lists predecessors. */
static int dominators(builder *B, const graph *G, const graph *R, int32_t root, int32_t *idom) {
    dfs D;
    int32_t *semi, *anc, *best, *bucket, *next, *same, *path;
    if (depth_first(B, G, root, &D) < 0 || ALLOC(semi, G->n) == NULL || ALLOC(anc, G->n) == NULL ||
        ALLOC(best, G->n) == NULL || ALLOC(bucket, G->n) == NULL || ALLOC(next, G->n) == NULL ||
        ALLOC(same, G->n) == NULL || ALLOC(path, G->n) == NULL)
        return -1;
    for (int32_t v = 0; v < G->n; v++) {
        semi[v] = best[v] = v;
        anc[v] = bucket[v] = same[v] = idom[v] = -1;
    }
    for (int32_t i = D.count - 1; i >= 1; i--) {
        int32_t v = D.vertex[i], p = D.parent[v], s = p;
        for (int32_t e = R->off[v]; e < R->off[v + 1]; e++) {
            int32_t u = R->adj[e];
            if (D.pre[u] < 0)
                continue;
            int32_t c = D.pre[u] <= D.pre[v] ? u : semi[eval_min(u, anc, best, semi, D.pre, path)];
            if (D.pre[c] < D.pre[s])
                s = c;
        }
        semi[v] = s;
        next[v] = bucket[s];
        bucket[s] = v;
        anc[v] = p;
        for (int32_t w = bucket[p]; w >= 0; w = next[w]) {
            int32_t y = eval_min(w, anc, best, semi, D.pre, path);
            if (semi[y] == semi[w])
                idom[w] = p;
            else
                same[w] = y;
        }
        bucket[p] = -1;
    }
    for (int32_t i = 1; i < D.count; i++) {
        int32_t v = D.vertex[i];
        if (same[v] >= 0)
            idom[v] = idom[same[v]];
    }
    return 0;
}

/* Entry and exit times of a forest given by parent links (-1: a root),
 * over the nodes with in_tree set: a is an ancestor of b (or b) when
 * in[a] <= in[b] && out[b] <= out[a]. */
static int tree_intervals(builder *B, int32_t n, const int32_t *parent, const uint8_t *in_tree, int32_t *tin,
                          int32_t *tout) {
    int32_t *first, *sibling, *stack, top = 0, clock = 0;
    if (ALLOC(first, n) == NULL || ALLOC(sibling, n) == NULL || ALLOC(stack, n) == NULL)
        return oom(B);
    for (int32_t v = 0; v < n; v++)
        first[v] = -1, tin[v] = tout[v] = -1;
    for (int32_t v = n - 1; v >= 0; v--)
        if (in_tree[v] && parent[v] >= 0) {
            sibling[v] = first[parent[v]];
            first[parent[v]] = v;
        }
    for (int32_t r = 0; r < n; r++) {
        if (!in_tree[r] || parent[r] >= 0)
            continue;
        stack[top++] = r;
        tin[r] = clock++;
        while (top > 0) {
            int32_t v = stack[top - 1];
            if (first[v] >= 0) {
                int32_t c = first[v];
                first[v] = sibling[c];
                tin[c] = clock++;
                stack[top++] = c;
            } else {
                tout[v] = clock++;
                top--;
            }
        }
    }
    return 0;
}

/* Adjacency arrays of the blocks' successors and predecessors, the
 * reverse graph closed by a virtual exit node (nb) that every block
 * without successors leads to. */
static int make_graphs(builder *B, graph *fwd, graph *back, graph *rfwd, graph *rback) {
    dp_cfg *g = B->g;
    int32_t nb = g->nb, ne = 0, nexit = 0;
    for (int32_t k = 0; k < nb; k++) {
        ne += g->b[k].nsucc;
        nexit += g->b[k].nsucc == 0;
    }
    int32_t *soff, *sadj, *poff, *padj, *rsoff, *rsadj, *rpoff, *rpadj;
    if (ALLOC(soff, nb + 1) == NULL || ALLOC(sadj, ne) == NULL || ALLOC(poff, nb + 1) == NULL ||
        ALLOC(padj, ne) == NULL || ALLOC(rsoff, nb + 2) == NULL || ALLOC(rsadj, ne + nexit) == NULL ||
        ALLOC(rpoff, nb + 2) == NULL || ALLOC(rpadj, ne + nexit) == NULL)
        return oom(B);
    int32_t s = 0, p = 0, rs = 0, rp = 0;
    for (int32_t k = 0; k < nb; k++) {
        const dp_block *b = &g->b[k];
        soff[k] = s;
        for (int32_t e = 0; e < b->nsucc; e++)
            sadj[s++] = b->succ[e].to;
        poff[k] = p;
        for (int32_t e = 0; e < b->npred; e++)
            padj[p++] = b->pred[e];
        /* reversed: a block's successors are its predecessors */
        rsoff[k] = rs;
        for (int32_t e = 0; e < b->npred; e++)
            rsadj[rs++] = b->pred[e];
        rpoff[k] = rp;
        for (int32_t e = 0; e < b->nsucc; e++)
            rpadj[rp++] = b->succ[e].to;
        if (b->nsucc == 0)
            rpadj[rp++] = nb;
    }
    soff[nb] = s;
    poff[nb] = p;
    rsoff[nb] = rs;
    for (int32_t k = 0; k < nb; k++)
        if (g->b[k].nsucc == 0)
            rsadj[rs++] = k;
    rsoff[nb + 1] = rs;
    rpoff[nb] = rpoff[nb + 1] = rp;
    *fwd = (graph){nb, soff, sadj};
    *back = (graph){nb, poff, padj};
    *rfwd = (graph){nb + 1, rsoff, rsadj};
    *rback = (graph){nb + 1, rpoff, rpadj};
    return 0;
}

/* The reachable blocks in reverse postorder (rpo, order). */
static int reverse_postorder(builder *B) {
    dp_cfg *g = B->g;
    graph fwd, back, rfwd, rback;
    dfs D;
    if (make_graphs(B, &fwd, &back, &rfwd, &rback) < 0 || depth_first(B, &fwd, 0, &D) < 0 ||
        ALLOC(g->order, g->nb) == NULL)
        return oom(B);
    for (int32_t i = D.count - 1; i >= 0; i--) {
        int32_t v = D.post[i];
        g->b[v].rpo = g->nreach;
        g->order[g->nreach++] = v;
    }
    return 0;
}

static int dominator_trees(builder *B) {
    dp_cfg *g = B->g;
    int32_t nb = g->nb;
    graph fwd, back, rfwd, rback;
    int32_t *idom, *ipdom, *in, *out;
    uint8_t *in_tree;
    if (make_graphs(B, &fwd, &back, &rfwd, &rback) < 0 || ALLOC(idom, nb + 1) == NULL ||
        ALLOC(ipdom, nb + 1) == NULL || ALLOC(in, nb + 1) == NULL || ALLOC(out, nb + 1) == NULL ||
        ALLOC(in_tree, nb + 1) == NULL)
        return oom(B);
    if (dominators(B, &fwd, &back, 0, idom) < 0 || dominators(B, &rfwd, &rback, nb, ipdom) < 0)
        return -1;
    for (int32_t k = 0; k < nb; k++) {
        g->b[k].idom = idom[k];
        g->b[k].ipdom = ipdom[k] == nb ? -1 : ipdom[k];
        in_tree[k] = g->b[k].rpo >= 0;
    }
    if (tree_intervals(B, nb, idom, in_tree, in, out) < 0)
        return -1;
    for (int32_t k = 0; k < nb; k++)
        g->b[k].dom_in = in[k], g->b[k].dom_out = out[k];
    /* post-dominators: the tree rooted at the virtual exit */
    for (int32_t k = 0; k <= nb; k++)
        in_tree[k] = k == nb || (g->b[k].rpo >= 0 && ipdom[k] >= 0);
    if (tree_intervals(B, nb + 1, ipdom, in_tree, in, out) < 0)
        return -1;
    for (int32_t k = 0; k < nb; k++)
        g->b[k].pdom_in = in[k], g->b[k].pdom_out = out[k];
    return 0;
}

int dp_cfg_dominates(const dp_cfg *g, int32_t a, int32_t b) {
    if (!g->dominators || a < 0 || b < 0 || a >= g->nb || b >= g->nb || g->b[a].rpo < 0 || g->b[b].rpo < 0)
        return 0;
    return g->b[a].dom_in <= g->b[b].dom_in && g->b[b].dom_out <= g->b[a].dom_out;
}

int dp_cfg_post_dominates(const dp_cfg *g, int32_t a, int32_t b) {
    if (!g->dominators || a < 0 || b < 0 || a >= g->nb || b >= g->nb || g->b[a].pdom_in < 0 || g->b[b].pdom_in < 0)
        return 0;
    return g->b[a].pdom_in <= g->b[b].pdom_in && g->b[b].pdom_out <= g->b[a].pdom_out;
}

/* ------------------------------------------------------------------ loops */

static int32_t find(int32_t *rep, int32_t v) {
    while (rep[v] != v) {
        rep[v] = rep[rep[v]];
        v = rep[v];
    }
    return v;
}

/* Natural loops, innermost first (headers in decreasing depth-first
 * order): the body of header h is what reaches a latch backwards without
 * passing h; blocks already in an inner loop stand for it by its header. */
static int find_loops(builder *B) {
    dp_cfg *g = B->g;
    int32_t nb = g->nb, *rep, *work, *mark, *in, *out;
    uint8_t *is_loop;
    if (ALLOC(rep, nb) == NULL || ALLOC(work, nb) == NULL || ALLOC(mark, nb) == NULL || ALLOC(in, nb) == NULL ||
        ALLOC(out, nb) == NULL || ALLOC(is_loop, nb) == NULL)
        return oom(B);
    for (int32_t k = 0; k < nb; k++)
        rep[k] = k, mark[k] = -1;
    for (int32_t i = g->nreach - 1; i >= 0; i--) {
        int32_t h = g->order[i], top = 0;
        for (int32_t e = 0; e < g->b[h].npred; e++) {
            int32_t u = g->b[h].pred[e];
            if (dp_cfg_dominates(g, h, u)) { /* a back edge */
                g->b[h].is_header = 1;
                u = find(rep, u);
                if (u != h && mark[u] != h) {
                    mark[u] = h;
                    work[top++] = u;
                }
            }
        }
        if (!g->b[h].is_header)
            continue;
        g->b[h].loop = h;
        while (top > 0) {
            int32_t x = work[--top];
            rep[x] = h;
            if (g->b[x].is_header)
                g->b[x].loop_up = h;
            else
                g->b[x].loop = h;
            for (int32_t e = 0; e < g->b[x].npred; e++) {
                int32_t y = find(rep, g->b[x].pred[e]);
                if (y != h && mark[y] != h && g->b[y].rpo >= 0 && dp_cfg_dominates(g, h, y)) {
                    mark[y] = h;
                    work[top++] = y;
                }
            }
        }
    }
    /* the loop tree: headers, each under the header of the loop around it */
    for (int32_t k = 0; k < nb; k++) {
        is_loop[k] = g->b[k].is_header;
        work[k] = g->b[k].loop_up;
    }
    if (tree_intervals(B, nb, work, is_loop, in, out) < 0)
        return -1;
    for (int32_t k = 0; k < nb; k++)
        g->b[k].loop_in = in[k], g->b[k].loop_out = out[k];
    return 0;
}

int dp_cfg_in_loop(const dp_cfg *g, int32_t b, int32_t h) {
    if (!g->dominators || b < 0 || h < 0 || b >= g->nb || h >= g->nb || g->b[b].loop < 0 || !g->b[h].is_header)
        return 0;
    const dp_block *l = &g->b[g->b[b].loop], *H = &g->b[h];
    return H->loop_in <= l->loop_in && l->loop_out <= H->loop_out;
}

/* ------------------------------------------------------------------ the whole graph */

int dp_cfg_build(dp_arena *a, const dp_irfunc *f, dp_cfg *g, dp_error *err) {
    memset(g, 0, sizeof *g);
    builder Bs = {a, err, g, f->ins, f->n}, *B = &Bs;
    g->f = f;
    g->n = f->n;
    for (int32_t i = 0; i < f->n; i++)
        if (f->ins[i].target < -1 || f->ins[i].target >= f->n)
            return dp_fail(err, f->ins[i].offset, "jump target out of range");
    if (ALLOC(g->exc_of, f->n) == NULL || ALLOC(g->block_of, f->n + 1) == NULL || ALLOC(g->reach, f->n) == NULL)
        return oom(B);
    for (int32_t i = 0; i < f->n; i++)
        g->exc_of[i] = -1;
    if (f->n <= 0) /* (no code: no blocks) */
        return ALLOC(g->order, 0) == NULL ? oom(B) : 0;
    if ((f->lay.block_stack ? regions_from_blocks(B) : regions_from_table(B)) < 0 || split_blocks(B) < 0 ||
        link_blocks(B) < 0 || reverse_postorder(B) < 0)
        return -1;
    for (int32_t i = 0; i < f->n; i++)
        g->reach[i] = g->b[g->block_of[i]].rpo >= 0;
    return 0;
}

int dp_cfg_dominators(dp_arena *a, dp_cfg *g, dp_error *err) {
    builder Bs = {a, err, g, g->f->ins, g->n}, *B = &Bs;
    if (g->dominators || g->nb == 0)
        return 0;
    if (dominator_trees(B) < 0)
        return -1;
    g->dominators = 1; /* (find_loops asks) */
    return find_loops(B);
}
