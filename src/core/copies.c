/* The copies CPython makes of finally bodies and small exits (a `return`,
 * `POP_EXCEPT; JUMP`), recognized so that each is printed once, and the
 * ways out of a try body that only unwind it. */
#include <stdlib.h>
#include <string.h>

#include "structure.h"

/* `e = None; del e` closes every `except ... as e` body: not source. */
int dc_is_except_cleanup(const dc *d, int i, int end) {
    return d->except_name && i + 2 < end && d->in[i].op == IR_LOAD_CONST && d->in[i].cst &&
           d->in[i].cst->kind == DP_CONST_NONE &&
           (d->in[i + 1].op == IR_STORE_FAST || d->in[i + 1].op == IR_STORE_NAME || d->in[i + 1].op == IR_STORE_DEREF) &&
           (d->in[i + 2].op == IR_DELETE_FAST || d->in[i + 2].op == IR_DELETE_NAME || d->in[i + 2].op == IR_DELETE_DEREF) &&
           strcmp(d->in[i + 1].name, d->except_name) == 0 && strcmp(d->in[i + 2].name, d->except_name) == 0;
}

/* The length of the exit block at t (straight code ending in a return,
 * at most 8 instructions), or 0. */
int dc_exit_block_len(const dc *d, int t) {
    for (int k = 0; k < 8 && t + k < d->n; k++) {
        const dp_instr *a = &d->in[t + k];
        if (a->op == IR_RETURN_VALUE)
            return k + 1;
        if (a->target >= 0 || a->op == IR_RAISE || a->op == IR_RERAISE)
            return 0;
    }
    return 0;
}

int dc_same_continuation(const dc *d, int t, int c) {
    if (t == c)
        return 1;
    if (t < 0 || c < 0 || t >= d->n || c >= d->n)
        return 0;
    if (d->in[c].op == IR_JUMP && d->in[c].target == t)
        return 1;
    int len = dc_exit_block_len(d, c);
    if (len == 0 || dc_exit_block_len(d, t) != len)
        return 0;
    for (int k = 0; k < len; k++)
        if (!dc_same_instr(&d->in[t + k], &d->in[c + k]) || dc_handler_at(d, t + k) != dc_handler_at(d, c + k))
            return 0;
    return 1;
}

/* Does the finally body [base, base + len) leave at k for its end (the
 * handler's RERAISE at base + len): a JUMP there, or from 3.12 on a copy of
 * that RERAISE (same argument, same handler)? */
static int fin_exit(const dc *d, int base, int len, int k) {
    const dp_instr *x = &d->in[base + k], *end = &d->in[base + len];
    if (x->op == IR_JUMP)
        return x->target == base + len;
    return x->op == IR_RERAISE && end->op == IR_RERAISE && x->arg == end->arg &&
           dc_handler_at(d, base + k) == dc_handler_at(d, base + len);
}

/* The longest finally body whose copies are recognized (the walk keeps a
 * place per instruction of the body, on the stack). */
enum { MAX_COPY_LEN = 4096 };
/* The most exits of a body a walk reports (dc_copy_exits). */
enum { MAX_COPY_EXITS = 256 };

/* The first instruction from i on that is no NOP. */
static int past_nops(const dc *d, int i) {
    while (i >= 0 && i < d->n && d->in[i].op == IR_NOP)
        i++;
    return i;
}

/* Is the body's instruction k, held at p in the copy, one of its exits?
 * (Where the copy reraises too, the RERAISE is a nested try's own: at the
 * body's top level the copy has no exception to reraise.) */
static int copy_exit(const dc *d, int base, int len, const dp_instr *ops, int k, int p) {
    return fin_exit(d, base, len, k) && !(ops[k].op == IR_RERAISE && dc_same_instr(&d->in[p], &ops[k]));
}

/* 3.12+: the handler block of a comprehension inlined in a finally body,
 * at p (`SWAP 2; POP_TOP; SWAP n; STORE_FAST...; RERAISE`: the iteration
 * variables restored, the exception raised again), to its end, or -1. */
int dc_comprehension_cleanup_end(const dc *d, int p) {
    if (p + 4 >= d->n || d->in[p].op != IR_SWAP || d->in[p].arg != 2 || d->in[p + 1].op != IR_POP_TOP ||
        d->in[p + 2].op != IR_SWAP)
        return -1;
    int q = p + 3;
    while (q < d->n && d->in[q].op == IR_STORE_FAST)
        q++;
    return q > p + 3 && q < d->n && d->in[q].op == IR_RERAISE ? q + 1 : -1;
}

/* 3.11+: the handler block of a try nested in a finally body, from its
 * PUSH_EXC_INFO at p to the end of its cleanup (`COPY 3; POP_EXCEPT;
 * RERAISE 1`, placed last), or an inlined comprehension's; -1 if none. */
static int handler_block_end(const dc *d, int p) {
    if (p >= 0 && p < d->n && d->in[p].op != IR_PUSH_EXC_INFO)
        return dc_comprehension_cleanup_end(d, p);
    if (p < 0 || p >= d->n)
        return -1;
    int c = dc_handler_at(d, p);
    if (c <= p || c + 2 >= d->n || d->in[c].op != IR_COPY || d->in[c + 1].op != IR_POP_EXCEPT ||
        d->in[c + 2].op != IR_RERAISE)
        return -1;
    return c + 3;
}

/* 3.11+: does the JUMP at j only step over handler blocks (placed inline in
 * the handler's copy of a finally body, from 3.12 on after the function in
 * the others)? */
static int jumps_over_handlers(const dc *d, int j) {
    int t = d->in[j].target, p = j + 1;
    while (p < t && p > j)
        p = handler_block_end(d, p);
    return t > j + 1 && p == t;
}

/* Does the finally body `ops` leave its handler at k for a return of its
 * own (`SWAP 2; POP_TOP; SWAP 2; POP_EXCEPT`, the value on top, before
 * RETURN_VALUE)?  Its copies, with no exception to drop, return at once. */
static int unwinds_finally(const dp_instr *ops, int k, int len) {
    return k + 4 < len && ops[k].op == IR_SWAP && ops[k].arg == 2 && ops[k + 1].op == IR_POP_TOP &&
           ops[k + 2].op == IR_SWAP && ops[k + 2].arg == 2 && ops[k + 3].op == IR_POP_EXCEPT &&
           ops[k + 4].op == IR_RETURN_VALUE;
}

/* The nested handlers of a finally body matched with those of a copy: the
 * copy's can be placed after the function (3.12+), the body's inline in the
 * handler or after its code (3.11+); each pair is walked as the body is,
 * instruction by instruction. */
enum { MAX_COPY_HANDLERS = 16 };
typedef struct {
    int n, top;                       /* top: the copy's handler where the body's is the finally's cleanup */
    int body[MAX_COPY_HANDLERS];      /* a nested handler of the body (its PUSH_EXC_INFO) */
    int copy[MAX_COPY_HANDLERS];      /* the copy's handler for it */
    int copy_end[MAX_COPY_HANDLERS];  /* where the copy's handler block ends, once walked; else -1 */
} copy_handlers;

/* Pairs the body's handler hb with the copy's hc (1), or 0 where a pairing
 * contradicts another: the copy runs its code under the same handlers. */
static int pair_handlers(copy_handlers *ch, int base, int span, int clean, int hb, int hc) {
    if (hb == clean) {
        if (ch->top == -2)
            ch->top = hc;
        return ch->top == hc;
    }
    if (hb <= base || hb >= base + span || hc < 0 || hc == ch->top)
        return 0; /* (a nested handler of the body needs one in the copy) */
    for (int x = 0; x < ch->n; x++)
        if (ch->body[x] == hb || ch->copy[x] == hc)
            return ch->body[x] == hb && ch->copy[x] == hc;
    if (ch->n == MAX_COPY_HANDLERS)
        return 0;
    ch->body[ch->n] = hb;
    ch->copy[ch->n] = hc;
    ch->copy_end[ch->n++] = -1;
    return 1;
}

/* Clears a copy walk's places (at: none, gone: no) from *ready up to upto. */
static void clear_upto(int *at, unsigned char *gone, int *ready, int upto) {
    for (; *ready < upto; (*ready)++) {
        at[*ready] = -1;
        gone[*ready] = 0;
    }
}

/* One walk of a finally body `ops` [base, base + len) against a copy of it
 * at i: what travels between its parts (copy_walk's steps). */
typedef struct {
    const dc *d;
    const dp_instr *ops;
    int i, end, base, len;
    int cold;  /* 3.11+: handlers of nested tries placed apart */
    int clean; /* the finally's cleanup handler */
    int span;  /* the body and its handlers span [base, base + span) */
    /* at[k]: where the copy holds the body's instruction k (-1: in a
     * handler block placed apart); gone[k]: a jump over such blocks, which
     * the copy has no need of; both set below `ready` (as the walk goes:
     * most walks fail early) */
    int at[MAX_COPY_LEN];
    unsigned char gone[MAX_COPY_LEN];
    int ready;
    int k;        /* where the walk in step stopped: len, or the body's last exit */
    int c;        /* the code after the copy, C */
    int *ks, *nks; /* the body's exits met */
    copy_handlers ch;
} copy_walk_state;

/* Sets up the walk of `ops` against the copy at i: 0 where no copy can be
 * there (bad bounds, a body too long to walk). */
static int copy_walk_start(copy_walk_state *w, const dc *d, int i, int end, const dp_instr *ops, int len, int *ks,
                           int *nks) {
    *nks = 0;
    if (ops == NULL || len <= 0 || len > MAX_COPY_LEN || i < 0 || i >= end || end > d->n)
        return 0;
    int base = (int)(ops - d->in);
    if (base < 0 || base + len >= d->n)
        return 0;
    w->d = d;
    w->ops = ops;
    w->i = i;
    w->end = end;
    w->base = base;
    w->len = len;
    w->ks = ks;
    w->nks = nks;
    /* 3.11+ places the handlers of tries nested in the body after their try
     * or after the body's code (in the handler's copy), 3.12+ after the
     * function (in the others): the body and its handlers span [base, clean) */
    w->cold = !d->lay.block_stack;
    /* (the body follows its handler's PUSH_EXC_INFO, protected by clean) */
    w->clean = base > 0 && d->in[base - 1].op == IR_PUSH_EXC_INFO ? dc_handler_at(d, base - 1)
                                                                    : dc_handler_at(d, base + len);
    w->span = w->cold && w->clean > base + len ? w->clean - base : len;
    if (w->span > MAX_COPY_LEN)
        return 0;
    w->ch = (copy_handlers){.n = 0, .top = -2};
    w->ready = 0;
    return 1;
}

/* Walks body and copy in step, from i: 1 with w->k and the copy's end
 * w->c, or 0 where the code at i is no copy.  Where the body leaves for
 * its end, the copy goes on to the code after it, C: a JUMP there, or a
 * copy of C's code when that returns (CPython copies such exits into each
 * jump to them); where the body leaves last, the copy falls into C.  NOPs
 * do nothing: either side can have them where the other has none (3.12+
 * places an await's CLEANUP_THROW, a NOP here, inline in the handler and
 * after the function in the copy). */
static int copy_walk_in_step(copy_walk_state *w) {
    const dc *d = w->d;
    const dp_instr *ops = w->ops;
    int base = w->base, len = w->len, span = w->span, end = w->end, cold = w->cold;
    int k = 0, p = w->i;
    for (; k < len; k++) {
        clear_upto(w->at, w->gone, &w->ready, k + 4 < span ? k + 4 : span);
        if (ops[k].op == IR_NOP) {
            w->at[k] = p;
            if (p < end && d->in[p].op == IR_NOP) /* (both have it: a handler's start, say) */
                p++;
            continue;
        }
        while (p < end && d->in[p].op == IR_NOP && d->nref[p] == 0)
            p++;
        if (p >= end)
            return 0;
        if (cold && handler_block_end(d, base + k) >= 0 &&
            (ops[k].op == IR_PUSH_EXC_INFO ? d->in[p].op != IR_PUSH_EXC_INFO : handler_block_end(d, p) < 0)) {
            int e = handler_block_end(d, base + k);
            if (e < 0 || e > base + len)
                return 0;
            clear_upto(w->at, w->gone, &w->ready, e - base);
            k = e - base - 1; /* (walked with the copy's handler below) */
            continue;
        }
        w->at[k] = p;
        if (copy_exit(d, base, len, ops, k, p)) {
            if (*w->nks == MAX_COPY_EXITS + 1)
                return 0;
            w->ks[(*w->nks)++] = k;
            /* (the body's last exits, one after another, are all where the
             * copy falls into C: the ends of branches there) */
            int rest = k + 1;
            while (cold && rest < len && (ops[rest].op == IR_NOP || fin_exit(d, base, len, rest)))
                rest++;
            if (k == len - 1 || rest == len)
                break;
            int m = d->in[p].op == IR_JUMP ? 1 : dc_exit_block_len(d, p);
            if (m == 0 || p + m > end)
                return 0;
            p += m;
            continue;
        }
        if (cold && ops[k].op == IR_JUMP && d->in[p].op != IR_JUMP && jumps_over_handlers(d, base + k)) {
            w->gone[k] = 1;
            continue;
        }
        if (cold && unwinds_finally(ops, k, len) && d->in[p].op == IR_RETURN_VALUE) {
            for (int u = 0; u < 4; u++)
                w->gone[k + u] = 1;
            k += 3; /* (the return value goes on past the handled exception) */
            continue;
        }
        if (!dc_same_instr(&d->in[p], &ops[k]))
            return 0;
        p++;
    }
    clear_upto(w->at, w->gone, &w->ready, span);
    w->k = k;
    int c = p;
    /* (a line's NOP that nothing jumps to can end the copy: the exits
     * copied in go on past it) */
    while (c < end && d->in[c].op == IR_NOP && d->nref[c] == 0)
        c++;
    w->c = c;
    return 1;
}

/* Walks the body's handler block [hb, eb) against the copy's, from q:
 * exits go on as C does.  Where the copy's block ends, or -1 where it is
 * no copy. */
static int copy_walk_handler_block(copy_walk_state *w, int hb, int eb, int q) {
    const dc *d = w->d;
    const dp_instr *ops = w->ops;
    int base = w->base, len = w->len;
    if (q < 0)
        return -1;
    for (int b = hb - base; b < eb - base; b++) {
        if (ops[b].op == IR_NOP) {
            w->at[b] = q;
            if (q < d->n && d->in[q].op == IR_NOP)
                q++;
            continue;
        }
        while (q < d->n && d->in[q].op == IR_NOP && d->nref[q] == 0)
            q++;
        if (q >= d->n)
            return -1;
        w->at[b] = q;
        if (copy_exit(d, base, len, ops, b, q)) {
            int m = d->in[q].op == IR_JUMP ? 1 : dc_exit_block_len(d, q);
            if (m == 0 || !dc_same_continuation(d, d->in[q].op == IR_JUMP ? d->in[q].target : q, w->c))
                return -1;
            q += m;
            continue;
        }
        if (!dc_same_instr(&d->in[q], &ops[b]))
            return -1;
        q++;
    }
    return q;
}

/* The copy's handler blocks (3.11+): each as the body's, the exits aside;
 * pairing the handlers of the code walked finds them, and walking them
 * the handlers of their code (nested there, inline in both).  0 where a
 * pairing or a block does not match. */
static int copy_walk_handlers(copy_walk_state *w) {
    const dc *d = w->d;
    int base = w->base, len = w->len, span = w->span, walked = 0;
    copy_handlers *ch = &w->ch;
    for (int round = 0; w->cold && round <= MAX_COPY_HANDLERS; round++) {
        for (int kk = 0; kk < span; kk++) {
            int q = w->at[kk];
            /* (an instruction the body's table leaves out cannot raise:
             * a jump, say; no handler of the copy's matters there) */
            if (q < 0 || w->ops[kk].op == IR_NOP || w->gone[kk] || kk == len || dc_handler_at(d, base + kk) < 0 ||
                copy_exit(d, base, len, w->ops, kk, q))
                continue;
            if (!pair_handlers(ch, base, span, w->clean, dc_handler_at(d, base + kk), dc_handler_at(d, q)))
                return 0;
        }
        if (walked == ch->n)
            break;
        for (; walked < ch->n; walked++) {
            int hb = ch->body[walked], eb = handler_block_end(d, hb);
            if (w->at[hb - base] >= 0 || eb < 0)
                continue; /* (walked already, or part of a block: see below) */
            int q = copy_walk_handler_block(w, hb, eb, ch->copy[walked]);
            if (q < 0)
                return 0;
            ch->copy_end[walked] = q;
        }
    }
    /* each handler paired is where the copy holds the body's */
    for (int x = 0; x < ch->n; x++)
        if (w->at[ch->body[x] - base] < 0 || past_nops(d, w->at[ch->body[x] - base]) != past_nops(d, ch->copy[x]))
            return 0;
    return 1;
}

/* Do the copy's exits go on as C does, and its jumps inside keep their
 * places? */
static int copy_walk_jumps(const copy_walk_state *w) {
    const dc *d = w->d;
    int base = w->base, len = w->len, span = w->span;
    for (int kk = 0; kk < span; kk++) {
        const dp_instr *b = &w->ops[kk];
        int q = w->at[kk];
        if (b->op == IR_NOP || q < 0 || (kk >= w->k && kk < len) || kk == len)
            continue;
        if (copy_exit(d, base, len, w->ops, kk, q)) {
            if (!dc_same_continuation(d, d->in[q].op == IR_JUMP ? d->in[q].target : q, w->c))
                return 0;
            continue;
        }
        if (!dc_is_jump(b->op))
            continue;
        int t = b->target - base;
        if (t < 0 || t > span)
            return 0;
        int from = w->gone[kk] ? q : d->in[q].target;
        int same_place = t < span && w->at[t] >= 0 && past_nops(d, from) == past_nops(d, w->at[t]);
        if (w->gone[kk] && !same_place)
            return 0;
        if (t == len || (t < len && fin_exit(d, base, len, t))) {
            /* (past the line's NOP that ends the copy, where its other
             * exits go: a loop's exits, 3.12+) */
            if (!dc_same_continuation(d, d->in[q].target, w->c) && !same_place &&
                past_nops(d, d->in[q].target) != past_nops(d, w->c))
                return 0;
        } else if (!same_place) {
            return 0;
        }
    }
    return 1;
}

/* dc_copy_len; the body's exits (indices into ops) go to ks[0..*nks):
 * at most MAX_COPY_EXITS + 1 of them, the last one included; the copy's
 * handler blocks placed apart to ch (may be NULL). */
static int copy_walk(const dc *d, int i, int end, const dp_instr *ops, int len, int *ks, int *nks,
                     copy_handlers *ch_out) {
    copy_walk_state w;
    if (!copy_walk_start(&w, d, i, end, ops, len, ks, nks) || !copy_walk_in_step(&w) || !copy_walk_handlers(&w) ||
        !copy_walk_jumps(&w))
        return 0;
    if (ch_out != NULL)
        *ch_out = w.ch;
    return w.c - i;
}

int dc_copy_len(const dc *d, int i, int end, const dp_instr *ops, int len) {
    int ks[MAX_COPY_EXITS + 1], nks;
    return copy_walk(d, i, end, ops, len, ks, &nks, NULL);
}

int dc_copy_exits(const dc *d, int i, int end, const dp_instr *ops, int len, int *ks, int max) {
    int all[MAX_COPY_EXITS + 1], n;
    if (copy_walk(d, i, end, ops, len, all, &n, NULL) <= 0)
        return -1;
    for (int x = 0; x < n && x < max; x++)
        ks[x] = all[x];
    return n < max ? n : max;
}

void dc_unthread_copy(dc *d, int i, int len) {
    int c = i + len;
    for (int j = i; j < c; j++) {
        int t = d->in[j].target;
        if (!dc_is_jump(d->in[j].op) || t == c || (t >= i && t < c) || !dc_same_continuation(d, t, c))
            continue;
        dc_set(d, &d->nref[t], d->nref[t] - 1);
        dc_set(d, &d->nref[c], d->nref[c] + 1);
        dc_edit(d, j)->target = c;
        /* the copied exit, now unreachable, is no code to structure */
        int m = dc_exit_block_len(d, t);
        if (m > 0 && d->nref[t] == 0 && t > 0 && dc_is_terminator(d->in[t - 1].op))
            dc_seen(d, t, t + m);
    }
}

int dc_take_copy(dc *d, int i, int end, const dp_instr *ops, int len) {
    int ks[MAX_COPY_EXITS + 1], nks;
    copy_handlers ch;
    int cl = copy_walk(d, i, end, ops, len, ks, &nks, &ch);
    if (cl <= 0)
        return cl;
    dc_unthread_copy(d, i, cl);
    dc_seen(d, i, i + cl);
    /* the copy's handler blocks placed apart are that copy too: their
     * exits join the code after it */
    for (int x = 0; x < ch.n; x++) {
        int e = ch.copy_end[x];
        for (int j = ch.copy[x]; e >= 0 && j < e; j++) {
            int t = d->in[j].target;
            if (dc_is_jump(d->in[j].op) && (t < ch.copy[x] || t >= e) && (t < i || t >= i + cl) && t != i + cl &&
                dc_same_continuation(d, t, i + cl)) {
                dc_set(d, &d->nref[t], d->nref[t] - 1);
                dc_set(d, &d->nref[i + cl], d->nref[i + cl] + 1);
                dc_edit(d, j)->target = i + cl;
            }
        }
        if (e >= 0) {
            dc_seen(d, ch.copy[x], e);
            dc_set(d, &d->skip_to[ch.copy[x]], e);
        }
    }
    return cl;
}

/* Can code at i be a copy of the finally body at ops (its handler's code)?
 * Not where that handler protects it: it is the try body's own code, the
 * same as the finally body (`x = f()` ending both), before a jump to the
 * copy, say. */
static int may_copy(const dc *d, int i, const dp_instr *ops) {
    return ops != NULL && !dc_within_try(d, i, (int)(ops - d->in) - 1);
}

/* A copy of an enclosing finally body starting at i (CPython inlines the
 * finally block before every exit of the try body): its length, or 0. */
static int any_finally_copy(const dc *d, int i, int end) {
    int len = may_copy(d, i, d->fin_ops) ? dc_copy_len(d, i, end, d->fin_ops, d->fin_len) : 0;
    for (int k = d->nfin_outer - 1; len == 0 && k >= 0; k--)
        if (may_copy(d, i, d->fin_outer[k].ops))
            len = dc_copy_len(d, i, end, d->fin_outer[k].ops, d->fin_outer[k].len);
    return len;
}

/* Takes the copy that any_finally_copy finds at i. */
void dc_take_any_finally_copy(dc *d, int i, int end) {
    int len = may_copy(d, i, d->fin_ops) ? dc_take_copy(d, i, end, d->fin_ops, d->fin_len) : 0;
    for (int k = d->nfin_outer - 1; len == 0 && k >= 0; k--)
        if (may_copy(d, i, d->fin_outer[k].ops))
            len = dc_take_copy(d, i, end, d->fin_outer[k].ops, d->fin_outer[k].len);
}

/* From j on, only the unwinding of enclosing blocks (loop iterators,
 * with blocks, async ones awaiting __aexit__, except blocks, finally
 * copies) comes before a return. */
int dc_unwinds_to_return(const dc *d, int j, int end) {
    for (int steps = 0; j < d->n && steps < 64; steps++) {
        int op = d->in[j].op, fin = any_finally_copy(d, j, end);
        if (fin > 0) {
            j += fin;
            continue;
        }
        if (op == IR_RETURN_VALUE)
            return 1;
        if (op != IR_SWAP && op != IR_POP_TOP && op != IR_POP_EXCEPT && op != IR_NOP && op != IR_LOAD_CONST &&
            op != IR_CALL && op != IR_STORE_FAST && op != IR_STORE_NAME && op != IR_DELETE_FAST &&
            op != IR_DELETE_NAME && !(op == IR_GET_AWAITABLE && d->in[j].arg == 2) && op != IR_YIELD_FROM)
            return 0;
        j++;
    }
    return 0;
}

/* A finally copy at i that stands where a statement ends or on the way out
 * of a return: its length, or 0. */
int dc_finally_copy_at(const dc *d, int i, int end) {
    int len = any_finally_copy(d, i, end);
    if (len == 0)
        return 0;
    int after = i + len;
    if (after >= end)
        return len;
    int op = d->in[after].op;
    if (op == IR_RETURN_VALUE || op == IR_JUMP || op == IR_SWAP || op == IR_POP_TOP || op == IR_LOAD_CONST ||
        op == IR_NOP || dc_unwinds_to_return(d, after, end))
        return len;
    return 0;
}

/* 3.11+: the code after a POP_EXCEPT runs once the handler is left.  A
 * clause's own return, break or continue puts there only the unwinding of
 * the blocks it leaves (finally copies, with exits, iterators) before its
 * RETURN_VALUE or JUMP, its value computed before the POP_EXCEPT (but
 * locals and constants, or a tuple of them, loaded after it, 3.12+).  Other code there is a
 * copy of what follows the try statement (CPython inlines small exit blocks
 * into the jumps to them): printed inside the clause it would run with the
 * exception still handled (sys.exc_info(), the __context__ of what it
 * raises, what a bare raise raises).  The same holds after a with's
 * __exit__ called by a nested statement (see dc_region). */
int dc_only_unwinds(const dc *d, int j, int end) {
    if (dc_is_except_cleanup(d, j, end))
        j += 3;
    for (int steps = 0; j < d->n && steps < 64; steps++) {
        if (d->vjump[j] >= 0)
            return 1; /* a copy taken for a jump to the code after the try */
        int op = d->in[j].op, fin = any_finally_copy(d, j, d->n);
        if (fin > 0) {
            j += fin;
            continue;
        }
        if (op == IR_RETURN_VALUE || op == IR_JUMP)
            return 1;
        if (op == IR_LOAD_FAST || op == IR_LOAD_CONST) {
            int k = j; /* (a tuple of them: the compiler copies `return a, b` too) */
            while (k < d->n && (d->in[k].op == IR_LOAD_FAST || d->in[k].op == IR_LOAD_CONST ||
                                (d->in[k].op == IR_BUILD_TUPLE && k > j)))
                k++;
            if (k < d->n && d->in[k].op == IR_RETURN_VALUE)
                return 1; /* the return value */
            if (op == IR_LOAD_FAST)
                return 0;
        } else if (op != IR_SWAP && op != IR_POP_TOP && op != IR_POP_EXCEPT && op != IR_NOP && op != IR_CALL &&
                   op != IR_GET_AWAITABLE && op != IR_YIELD_FROM && op != IR_STORE_FAST && op != IR_STORE_NAME &&
                   op != IR_DELETE_FAST && op != IR_DELETE_NAME) {
            return 0;
        }
        j++;
    }
    return 0;
}

/* Does the code at `after` (past a finally copy) go on with the next
 * statement, rather than return, raise or jump away? */
int dc_copy_falls_through(const dc *d, int after, int end) {
    while (after < d->n && d->in[after].op == IR_NOP)
        after++;
    if (after >= d->n)
        return 0;
    int op = d->in[after].op;
    return !dc_is_terminator(op) && !dc_unwinds_to_return(d, after, end);
}

/* Where control reaching i goes: past NOPs and unconditional jumps (a
 * jump to a loop's back edge is a `continue`).  Bounded: a cycle of jumps
 * is an endless loop, whose place is where the walk stopped. */
int dc_resolve_jumps(const dc *d, int i) {
    for (int steps = 0; steps < 64 && i >= 0 && i < d->n; steps++) {
        if (d->in[i].op == IR_NOP)
            i++;
        else if (d->in[i].op == IR_JUMP && d->in[i].target >= 0)
            i = d->in[i].target;
        else
            break;
    }
    return i;
}

/* The RETURN_VALUE ending a tail at k that only computes a return value
 * (no jump, nothing that raises past or sets up a handler), or -1. */
int dc_return_tail_end(const dc *d, int k) {
    for (int e = k; e < d->n && e < k + 64; e++) {
        int op = d->in[e].op;
        if (op == IR_RETURN_VALUE)
            return e;
        if (dc_is_jump(op) || dc_is_terminator(op) || dc_is_block_setup(op) || op == IR_POP_BLOCK ||
            op == IR_POP_EXCEPT || op == IR_FOR_ITER)
            return -1;
    }
    return -1;
}

/* Does control reaching a go on exactly as control reaching b does: the
 * same place once jumps are followed, or copies of one `return` tail
 * (3.10+ duplicates small exit blocks into the jumps leading there, 3.10
 * with the exit of the with they leave)? */
int dc_continues_as(const dc *d, int a, int b) {
    a = dc_resolve_jumps(d, a);
    b = dc_resolve_jumps(d, b);
    if (a == b)
        return 1;
    if (a < 0 || b < 0 || a >= d->n || b >= d->n)
        return 0;
    int e = dc_return_tail_end(d, a);
    if (e < 0 && d->lay.block_stack)
        e = dc_legacy_exit_end(d, a); /* (a copy of a with's exit ending in a return) */
    if (e < 0 || b + (e - a) >= d->n)
        return 0;
    for (int k = 0; k <= e - a; k++)
        if (!dc_same_instr(&d->in[a + k], &d->in[b + k]) || dc_handler_at(d, a + k) != dc_handler_at(d, b + k))
            return 0;
    return 1;
}

/* A jump to t goes on as the region does at `to` (dc_continues_as): when t
 * is a 3.10 copy of the exit of a with, that copy is no code of its own
 * (the exit at `to` is walked where the region goes on). */
void dc_skip_exit_copy_at(dc *d, int t, int to) {
    int e = d->lay.block_stack && t != to ? dc_legacy_exit_end(d, t) : -1;
    if (e > t) {
        dc_seen(d, t, e + 1);
        dc_set(d, &d->skip_to[t], e + 1);
    }
}

/* Does a jump to target leave loop lp as its `break` does?  Either it
 * lands where control goes on once the loop is done (the compiler threads
 * a break past a jump that follows the loop), or the loop ends its region
 * and the jump goes where the region goes on (a for-else ending a loop
 * body: the break skips the else and continues the outer loop). */
int dc_breaks_out(const dc *d, const dc_loop *lp, int target) {
    if (target == lp->head || dc_resolve_jumps(d, target) == dc_resolve_jumps(d, lp->head))
        return 0;
    /* (an exit nothing reaches prints no code: a break goes on as what
     * follows the loop's statement, lp->then, not as that dead code) */
    int live_brk = lp->brk >= d->n || d->reach[lp->brk];
    return (live_brk && dc_continues_as(d, target, lp->brk)) || (lp->then >= 0 && dc_continues_as(d, target, lp->then));
}

/* Is `n = None; del n` at i the end of an enclosing `except ... as n`
 * clause, copied into the way out of a clause nested in it? */
int dc_enclosing_cleanup(const dc *d, int i, int end) {
    if (i + 2 >= end || d->in[i].op != IR_LOAD_CONST || d->in[i].cst == NULL || d->in[i].cst->kind != DP_CONST_NONE ||
        !(d->in[i + 1].op >= IR_STORE_NAME && d->in[i + 1].op <= IR_STORE_DEREF) ||
        !(d->in[i + 2].op >= IR_DELETE_NAME && d->in[i + 2].op <= IR_DELETE_DEREF) ||
        d->in[i + 1].name == NULL || d->in[i + 2].name == NULL || strcmp(d->in[i + 1].name, d->in[i + 2].name) != 0)
        return 0;
    for (const dc_names *n = d->except_names; n != NULL; n = n->up)
        if (strcmp(n->name, d->in[i + 1].name) == 0)
            return 1;
    return 0;
}

/* Can op start the way out of an except clause once its POP_EXCEPT ran?
 * (a jump, `return <const>`, leaving an enclosing clause or a loop's
 * iterator, a with's exit called with constants and awaited below a return
 * value swapped to the top; the walk lets `return <local>` pass too, a
 * copy of the code after the try that cold_join did not take: read in the
 * clause, it loads the same value) */
int dc_leaves_clause(int op) {
    return op == IR_JUMP || op == IR_LOAD_CONST || op == IR_RETURN_VALUE || op == IR_POP_EXCEPT || op == IR_POP_TOP ||
           op == IR_NOP || op == IR_RERAISE || op == IR_GET_AWAITABLE || op == IR_YIELD_FROM || op == IR_SWAP;
}

/* The length of the code at i when it is a copy of the code at `exit` that
 * leaves an except clause, `POP_EXCEPT [e = None; del e] JUMP t`: protected
 * by the same handlers, jumping to the same place, nothing jumping into the
 * copy (nor the two overlapping); else 0. */
int dc_exit_copy_len(const dc *d, int i, int exit) {
    int len = i + 1 < d->n && d->in[i + 1].op == IR_LOAD_CONST ? 5 : 2;
    if (exit < 0 || exit + len > d->n || i + len > d->n || (exit < i + len && i < exit + len) ||
        d->in[i].op != IR_POP_EXCEPT || d->in[i + len - 1].op != IR_JUMP ||
        d->in[i + len - 1].target != d->in[exit + len - 1].target)
        return 0;
    if (len == 5 && !(d->in[i + 2].op >= IR_STORE_NAME && d->in[i + 2].op <= IR_STORE_DEREF &&
                      d->in[i + 3].op >= IR_DELETE_NAME && d->in[i + 3].op <= IR_DELETE_DEREF))
        return 0;
    for (int k = 0; k < len; k++)
        if (!dc_same_instr(&d->in[i + k], &d->in[exit + k]) || dc_handler_at(d, i + k) != dc_handler_at(d, exit + k) ||
            (k > 0 && d->nref[i + k] > 0) || d->skip_to[i + k] > i + k)
            return 0;
    return len;
}

/* Does control at x go on as at i, a duplicate of the code at t that ends
 * an except clause (cold_join)?  So it does where x leaves the except
 * block as i did (`POP_EXCEPT`, `e = None; del e`) before a duplicate of
 * that code too: both branches of an if ending the clause, say. */
int dc_same_clause_end(const dc *d, int x, int i, int t) {
    int u = 0; /* the length of the unwinding before i */
    while (u < 4 && i - u - 1 >= 0 && d->in[i - u - 1].op != IR_POP_EXCEPT)
        u++;
    if (u == 4 || i - u - 1 < 0)
        return 0;
    u++;
    if (u != 1 && !(u == 4 && dc_is_except_cleanup(d, i - 3, i)))
        return 0;
    if (x < 0 || x + u >= d->n || d->vjump[x + u] != t)
        return 0;
    for (int k = 0; k < u; k++)
        if (!dc_same_instr(&d->in[x + k], &d->in[i - u + k]) || dc_handler_at(d, x + k) != dc_handler_at(d, i - u + k))
            return 0;
    return 1;
}

/* Can the walk be at a statement boundary right after op?  (It ends a
 * statement: a store, a delete, a popped value, a line's NOP.) */
static int ends_statement(const dp_instr *x) {
    switch (x->op) {
    case IR_STORE_FAST: case IR_STORE_NAME: case IR_STORE_GLOBAL: case IR_STORE_DEREF: case IR_STORE_ATTR:
    case IR_STORE_SUBSCR: case IR_DELETE_FAST: case IR_DELETE_NAME: case IR_DELETE_GLOBAL: case IR_DELETE_DEREF:
    case IR_DELETE_ATTR: case IR_DELETE_SUBSCR: case IR_POP_TOP:
        return 1;
    case IR_NOP:
        return x->arg2 == 0;
    default:
        return 0;
    }
}

/* The stack depth before each instruction (3.11+: handlers from the
 * exception table, whose entries are `handler` by instruction), -1 where
 * not known (unreached, or an op of no fixed effect on the way), as
 * CPython's stackdepth() computes it; NULL when out of memory. */
static int *stack_depths(const dc *d, const int32_t *handler) {
    int n = d->n;
    int *depth = dp_alloc_array(d->sh->ar, (size_t)n + 1, sizeof(int));
    int *work = dp_alloc_array(d->sh->ar, (size_t)n + 1, sizeof(int));
    if (depth == NULL || work == NULL)
        return NULL;
    for (int i = 0; i <= n; i++)
        depth[i] = -1;
    int nw = 0;
    if (n > 0) {
        depth[0] = 0;
        work[nw++] = 0;
    }
    while (nw > 0) {
        int i = work[--nw], cur = depth[i];
        const dp_instr *x = &d->in[i];
        int to[3], at[3], m = 0;
        dp_effect e; /* (the op table takes the version: irop.c) */
        if (handler[i] >= 0) {
            const dp_exc_entry *h = &d->f.exc[handler[i]];
            to[m] = h->target;
            at[m++] = h->depth + (h->lasti != 0) + 1;
        }
        if (dp_falls_through(x->op) && dp_ir_effect(x, &d->lay, 0, &e) == 0 && e.in <= cur) {
            to[m] = i + 1;
            at[m++] = cur - e.in + e.out;
        }
        if (x->target >= 0 && dp_is_jump(x->op) && dp_ir_effect(x, &d->lay, 1, &e) == 0 && e.in <= cur) {
            to[m] = x->target;
            at[m++] = cur - e.in + e.out;
        }
        for (int q = 0; q < m; q++)
            if (to[q] >= 0 && to[q] < n && depth[to[q]] < 0) {
                depth[to[q]] = at[q];
                work[nw++] = to[q];
            }
    }
    return depth;
}

/* Is [k, r] a return statement on its own: from an empty stack it never
 * takes a value it did not push, and returns the one value it leaves?  (A
 * constant's return, the same everywhere, is left alone.) */
static int whole_return(const dc *d, int k, int r) {
    if (r == k + 1 && d->in[k].op == IR_LOAD_CONST)
        return 0;
    int depth = 0;
    for (int j = k; j < r; j++) {
        dp_effect e; /* (the op table takes the version: irop.c) */
        if (d->in[j].target >= 0 || dp_ir_effect(&d->in[j], &d->lay, 0, &e) < 0 || e.in > depth)
            return 0;
        depth += e.out - e.in;
    }
    return depth == 1;
}

/* Do instructions a and b raise to the same handler, with the same stack? */
static int same_handler(const dc *d, const int32_t *handler, int a, int b) {
    if (handler[a] < 0 || handler[b] < 0)
        return handler[a] == handler[b];
    const dp_exc_entry *x = &d->f.exc[handler[a]], *y = &d->f.exc[handler[b]];
    return x->target == y->target && x->depth == y->depth && (x->lasti != 0) == (y->lasti != 0);
}

/* Can the code at k start a statement: it follows the end of one, or
 * jumps lead there? */
static int statement_start(const dc *d, int k) {
    return k > 0 && (ends_statement(&d->in[k - 1]) || (d->in[k].flags & DP_INSTR_JUMP_TARGET));
}

/* Can a statement start at k with the stack as deep as at i (both 3.11+
 * code reached from the entry): k follows the end of one, or jumps lead
 * there?  0 when out of memory. */
int dc_statement_boundary(dc *d, int i, int k) {
    if (d->stack_depth == NULL) {
        int32_t *handler = dp_alloc_array(d->sh->ar, (size_t)d->n + 1, sizeof(int32_t));
        if (handler == NULL || dp_exc_cover(d->sh->ar, &d->f, handler) < 0 ||
            (d->stack_depth = stack_depths(d, handler)) == NULL)
            return 0;
    }
    return i >= 0 && k < d->n && statement_start(d, k) && d->stack_depth[k] >= 0 &&
           d->stack_depth[k] == d->stack_depth[i];
}

/* The start of the copy ending at the RETURN_VALUE r of the return tail
 * ending at the RETURN_VALUE r2 > r: the earliest k such that [k, r] and the
 * same length before r2 are the same code on the same lines under the same
 * handler, nothing jumps into either past its start, both can start a
 * statement with the same stack below, and [k, r] is a return statement on
 * its own; -1 if none. */
static int return_copy_start(const dc *d, const int32_t *handler, const int *depth, int r, int r2) {
    int len = 0;
    while (len < 8 && r - len >= 0 && r2 - len > r) {
        const dp_instr *a = &d->in[r - len], *b = &d->in[r2 - len];
        if (!dc_same_instr(a, b) || a->line != b->line || a->line < 0 || a->arg2 != b->arg2 ||
            !same_handler(d, handler, r - len, r2 - len) || a->target >= 0)
            break;
        len++;
    }
    for (int k = r - len + 1; k <= r; k++) {
        int t = r2 - (r - k);
        if (!statement_start(d, k) || !statement_start(d, t) || depth[k] < 0 || depth[k] != depth[t])
            continue;
        int into = 0;
        for (int j = k + 1; j <= r && !into; j++)
            into = (d->in[j].flags & DP_INSTR_JUMP_TARGET) || (d->in[t + (j - k)].flags & DP_INSTR_JUMP_TARGET);
        if (!into && whole_return(d, k, r))
            return k;
    }
    return -1;
}

struct line_return {
    int line, at;
};

static int by_line_then_place(const void *a, const void *b) {
    const struct line_return *x = a, *y = b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

/* CPython (3.12+) inlines a small block that ends the code, `return x`,
 * into every unconditional jump to it: `if c: A / else: B` then `return x`
 * compiles to `A; <copy of return x>` and `B; return x`.  The bytecode is
 * the same as that of a `return x` written in each branch, but for one
 * thing in 3.13: superinstructions form within a basic block only, and the
 * `return x` that B falls into is a block of its own, so a STORE_FAST ending
 * B and the LOAD_FAST starting the return stay apart, where a return
 * written in the branch would make them one STORE_FAST_LOAD_FAST.  A copy
 * keeps the line of the statement it copies, which a second `return x`
 * written in the source would not share: where the last return tail of
 * the same code on the same lines follows a STORE_FAST, the copies before
 * it are turned back into the jumps they replaced, so that the return is
 * printed once, after the branches, as the source had it.  Before the
 * graph is built; the caller retries without it (keep_return_copies)
 * where no structure is found with the jumps. */
void dc_join_return_copies(dc *d) {
    if (!d->lay.copies_returns || d->sh->keep_return_copies)
        return;
    int n = d->n, nret = 0;
    int32_t *handler = dp_alloc_array(d->sh->ar, (size_t)n + 1, sizeof(int32_t));
    int *ret = dp_alloc_array(d->sh->ar, (size_t)n + 1, sizeof(int));
    if (handler == NULL || ret == NULL || dp_exc_cover(d->sh->ar, &d->f, handler) < 0)
        return; /* (no memory: the copies stay copies) */
    int *depth = stack_depths(d, handler);
    if (depth == NULL)
        return;
    for (int i = 0; i < n; i++)
        if (d->in[i].op == IR_RETURN_VALUE && d->in[i].line >= 0)
            ret[nret++] = i;
    /* the returns by line, then place: a return's candidates are the later
     * ones on its line (run_end: where its line's run ends) */
    struct line_return *by_line = dp_alloc_array(d->sh->ar, (size_t)nret + 1, sizeof *by_line);
    int *place = dp_alloc_array(d->sh->ar, (size_t)nret + 1, sizeof(int));
    int *run_end = dp_alloc_array(d->sh->ar, (size_t)nret + 1, sizeof(int));
    if (by_line == NULL || place == NULL || run_end == NULL)
        return;
    for (int x = 0; x < nret; x++)
        by_line[x] = (struct line_return){d->in[ret[x]].line, ret[x]};
    qsort(by_line, (size_t)nret, sizeof *by_line, by_line_then_place);
    for (int q = nret - 1; q >= 0; q--)
        run_end[q] = q + 1 < nret && by_line[q + 1].line == by_line[q].line ? run_end[q + 1] : q + 1;
    for (int q = 0; q < nret; q++)
        place[dc_lower_bound(ret, nret, by_line[q].at)] = q;
    /* (from the last: a copy turned into a jump is no return any more, so
     * no jump goes to another copy; a bounded number of candidates each) */
    for (int x = nret - 2; x >= 0; x--) {
        int r = ret[x], p = place[x];
        for (int q = run_end[p] - 1, tries = 0; q > p && tries < 16; q--) {
            int r2 = by_line[q].at;
            if (d->in[r2].op != IR_RETURN_VALUE)
                continue;
            tries++;
            int k = return_copy_start(d, handler, depth, r, r2);
            if (k < 0)
                continue;
            dp_instr *in = d->f.ins;
            int t = r2 - (r - k);
            if (d->in[t].op != IR_LOAD_FAST || d->in[t - 1].op != IR_STORE_FAST)
                continue; /* (the bytecode is the same either way) */
            /* (t must be where the branches join: no jump between the copy
             * and t goes past t's return, to a branch after it, as the
             * tests of the next `elif` or `case` do when t is a copy too) */
            int past = t - k > 4000;
            for (int j = k + 1; j < t && !past; j++)
                past = d->in[j].target > r2;
            if (past)
                continue;
            d->joined_copies++;
            /* (the jump last, where the block it ends ended: a then-part
             * ends with its jump over the else) */
            for (int j = k; j <= r; j++) {
                in[j].op = j < r ? IR_NOP : IR_JUMP;
                in[j].arg = in[j].arg2 = 0;
                in[j].cst = NULL;
                in[j].name = NULL;
            }
            in[r].target = t;
            in[t].flags |= DP_INSTR_JUMP_TARGET;
            break;
        }
    }
}
