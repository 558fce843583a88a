/* Entry point of the decompiler and everything about code objects: a
 * function's signature, nested functions, lambdas, comprehensions and class
 * bodies, and the clean-ups that make output read like source. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dc.h"
#include "print.h"

/* 3.12+ compiles `a and b` (as a value) to `a; COPY 1; POP_JUMP_IF_FALSE L;
 * POP_TOP; b; L:` where earlier versions had JUMP_IF_FALSE_OR_POP: rewrite
 * to that form (3.13's TO_BOOL is already a NOP). */
static void normalize_boolops(dc *d) {
    if (!d->lay.bool_ops_by_copy)
        return;
    dp_instr *in = d->f.ins;
    for (int i = 0; i + 2 < d->n; i++) {
        if (in[i].op != IR_COPY || in[i].arg != 1)
            continue;
        int j = i + 1;
        while (j < d->n && in[j].op == IR_NOP)
            j++;
        if (j + 1 >= d->n || (in[j].op != IR_POP_JUMP_IF_FALSE && in[j].op != IR_POP_JUMP_IF_TRUE) ||
            in[j + 1].op != IR_POP_TOP || in[j].target <= j)
            continue;
        in[i].op = IR_NOP;
        in[j].op = in[j].op == IR_POP_JUMP_IF_FALSE ? IR_JUMP_IF_FALSE_OR_POP : IR_JUMP_IF_TRUE_OR_POP;
        in[j + 1].op = IR_NOP;
    }
}

/* A test of truth: jumps when the value is `*on` (1 true, 0 false), popping
 * it both ways (`*pops`) or only when it falls through. */
static int truth_test(int op, int *on, int *pops) {
    *on = op == IR_POP_JUMP_IF_TRUE || op == IR_JUMP_IF_TRUE_OR_POP;
    *pops = op == IR_POP_JUMP_IF_TRUE || op == IR_POP_JUMP_IF_FALSE;
    return *pops || op == IR_JUMP_IF_TRUE_OR_POP || op == IR_JUMP_IF_FALSE_OR_POP;
}

/* A bool op's JUMP_IF_X_OR_POP that lands on another test of the same value
 * (the end of an enclosing bool op, `a and (b and c) or d`) is threaded by
 * CPython's peephole pass to where that test sends a value of known truth:
 * through a same-polarity test to its target, past an opposite one (popping:
 * POP_JUMP_IF_X to the instruction after it).  3.10 and 3.11 do it only when
 * both jumps are on one line, so an expression written over several lines
 * keeps the chain: thread it here, as one line would have been.  (Linear:
 * targets are threaded before the jumps to them, so each jump moves a step
 * or two, each forward.) */
static int thread_bool_chains(dc *d) {
    dp_instr *in = d->f.ins;
    int n = d->n;
    /* real[i]: the first instruction at or after i that is not a plain NOP */
    int *real = dp_alloc_array(d->sh->ar, (size_t)n + 1, sizeof(int));
    if (real == NULL)
        return dp_fail(d->sh->err, -1, "out of memory");
    real[n] = n;
    for (int i = n - 1; i >= 0; i--)
        real[i] = in[i].op == IR_NOP && in[i].arg2 != DP_NOP_TO_BOOL ? real[i + 1] : i;
    for (int q = n - 1; q >= 0; q--) {
        int on, pops, next_on, next_pops;
        while (truth_test(in[q].op, &on, &pops) && !pops && in[q].target > q && in[q].target < n) {
            int t = real[in[q].target];
            if (t >= n || !truth_test(in[t].op, &next_on, &next_pops))
                break;
            /* where a value that is `on` goes from t, and whether it is popped */
            int to = next_on == on ? in[t].target : t + 1, kept = next_on == on && !next_pops;
            if (to <= t)
                break;
            if (!kept)
                in[q].op = on ? IR_POP_JUMP_IF_TRUE : IR_POP_JUMP_IF_FALSE;
            in[q].target = to;
        }
    }
    return 0;
}

/* The peephole optimizer threads a bool op's jump through the jump that
 * ends its arm of a conditional expression: in `(a or b) if c else d`,
 * `a`'s JUMP_IF_TRUE_OR_POP goes straight to the join, past the end of its
 * arm.  Point it back at that jump (or at the arm's own RETURN_VALUE where
 * the join returned): the same stack reaches the same place, and the arm is
 * one expression again.  The arm is recognised by the conditional jump
 * before the bool op that targets the instruction right after its end.
 * (Linear: a chain of bool ops all jumping to one join, `a and b and ...`,
 * looked for its arm's end over the rest of the chain from each operand.) */
static int unthread_value_jumps(dc *d) {
    dp_instr *in = d->f.ins;
    int n = d->n;
    /* next_ret[i]: the first RETURN_VALUE at or after i (n: none); the JUMPs
     * to each target in order: first_jump[t], then next_jump[j]; cursor[t]
     * walks them as q grows; first_pop[t]: the first pop jump to t */
    int *next_ret = dp_alloc_array(d->sh->ar, (size_t)n + 1, sizeof(int));
    int *first_jump = dp_alloc_array(d->sh->ar, (size_t)n + 1, sizeof(int));
    int *next_jump = dp_alloc_array(d->sh->ar, (size_t)n + 1, sizeof(int));
    int *first_pop = dp_alloc_array(d->sh->ar, (size_t)n + 1, sizeof(int));
    if (next_ret == NULL || first_jump == NULL || next_jump == NULL || first_pop == NULL)
        return dp_fail(d->sh->err, -1, "out of memory");
    next_ret[n] = n;
    for (int t = 0; t <= n; t++)
        first_jump[t] = first_pop[t] = -1;
    for (int i = n - 1; i >= 0; i--) {
        next_ret[i] = in[i].op == IR_RETURN_VALUE ? i : next_ret[i + 1];
        int t = in[i].target;
        if (t < 0 || t > n)
            continue;
        if (in[i].op == IR_JUMP) {
            next_jump[i] = first_jump[t];
            first_jump[t] = i;
        }
        if (dc_is_pop_jump(in[i].op))
            first_pop[t] = i;
    }
    int *cursor = first_jump; /* (consumed in place) */
    for (int q = 0; q < n; q++) {
        int t = in[q].target;
        if ((in[q].op != IR_JUMP_IF_FALSE_OR_POP && in[q].op != IR_JUMP_IF_TRUE_OR_POP) || t <= q + 1 || t >= n)
            continue;
        while (cursor[t] >= 0 && cursor[t] <= q)
            cursor[t] = next_jump[cursor[t]];
        int j = cursor[t] >= 0 ? cursor[t] : n;
        if (in[t].op == IR_RETURN_VALUE && next_ret[q + 1] < j)
            j = next_ret[q + 1];
        if (j >= t)
            continue;
        int p = first_pop[j + 1];
        if (p >= 0 && p < q)
            in[q].target = j;
    }
    return 0;
}

/* 3.12+ generators are wrapped in a handler that turns a leaked
 * StopIteration into RuntimeError: no source construct. */
static void skip_generator_epilogue(dc *d) {
    for (int k = 0; k < d->f.nexc; k++) {
        int t = d->f.exc[k].target;
        if (t >= 0 && t < d->n && d->in[t].op == IR_STOPITERATION_ERROR) {
            int e = t + 1;
            while (e < d->n && d->in[e].op != IR_RERAISE)
                e++;
            d->skip_to[t] = e + 1 <= d->n ? e + 1 : d->n;
        }
    }
}

/* Where the walk of the structurer may count on more than the graph:
 * the references to each instruction (reachable jumps, and the start of
 * each range of a handler), and the places to step over or read as jumps
 * (see dc.h), filled by the passes that know them. */
static int structurer_arrays(dc *d) {
    dp_arena *ar = d->sh->ar;
    d->seen = dp_alloc(ar, (size_t)d->n + 1);
    d->nref = dp_alloc_array(ar, (size_t)d->n + 1, sizeof(int));
    d->skip_to = dp_alloc_array(ar, (size_t)d->n + 1, sizeof(int));
    d->vjump = dp_alloc_array(ar, (size_t)d->n + 1, sizeof(int));
    if (d->seen == NULL || d->nref == NULL || d->skip_to == NULL || d->vjump == NULL)
        return dp_fail(d->sh->err, -1, "out of memory");
    for (int i = 0; i < d->n; i++)
        d->skip_to[i] = d->vjump[i] = -1;
    /* (from reachable code only: code that cannot run, an empty try
     * body's handler, must not look like a join point) */
    for (int i = 0; i < d->n; i++) {
        if (!d->reach[i])
            continue;
        if (d->in[i].target >= 0)
            d->nref[d->in[i].target]++;
        int h = dc_handler_at(d, i);
        if (h >= 0 && (i == 0 || dc_handler_at(d, i - 1) != h || !d->reach[i - 1]))
            d->nref[h]++;
    }
    return 0;
}

int dc_limit(dc_shared *sh, const char *fmt, ...) {
    if (!sh->limit_hit) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(sh->limit_msg, sizeof sh->limit_msg, fmt, ap);
        va_end(ap);
        sh->limit_hit = 1;
    }
    return dp_fail(sh->err, -1, "%s", sh->limit_msg);
}

int dc_nest(dc_shared *sh, int max, const char *what) {
    if (sh->limit_hit)
        return dp_fail(sh->err, -1, "%s", sh->limit_msg);
    if (sh->depth >= max)
        return dc_limit(sh, "%s nested more than %d deep", what, max);
    sh->depth++;
    return 0;
}

const char *dc_private_class(const dc *d) {
    for (; d != NULL; d = d->outer)
        if (d->is_class_body)
            return d->code->name;
    return NULL;
}

/* Adds `bytes` to the work done, or fails when that passes the budget. */
static int pay_work(dc_shared *sh, size_t bytes, const char *why) {
    if (bytes > sh->work_limit - sh->use.work)
        return dc_limit(sh,
                        "the work limit: decompiling needs more than %zu bytes of bytecode (%d times the "
                        "input's %zu, + %zu KiB): %s",
                        sh->work_limit, DP_WORK_FACTOR, sh->use.input.bytecode, DP_WORK_FLOOR >> 10, why);
    sh->use.work += bytes;
    return 0;
}

/* What the values that instructions unpack cost beyond their own bytes.
 * One UNPACK_EX of four bytes can push 16 million values, each a node on
 * every symbolic stack that holds it; a compiler's code consumes each
 * value with an instruction of its own, so 2 bytes per value is what such
 * code pays anyway, and memory stays in proportion to the work. */
static size_t unpacked_values_cost(const dp_irfunc *f) {
    size_t cost = 0;
    for (int i = 0; i < f->n; i++) {
        dp_effect e;
        if (dp_ir_effect(&f->ins[i], &f->lay, 0, &e) == 0 && e.out - e.keep > 2)
            cost += 2 * (size_t)(e.out - e.keep - 2);
    }
    return cost;
}

int dc_setup(dc *d, dc_shared *sh, const dp_code *code, dc *outer) {
    memset(d, 0, sizeof *d);
    d->sh = sh;
    d->code = code;
    d->outer = outer;
    d->open_try = -1;
    /* (paid before the work: a code object used twice at every level of
     * a DAG must fail early, not after exponential work) */
    if (pay_work(sh, code->codelen,
                 "code objects used more than once (a DAG of marshal references) are decompiled once per use") < 0)
        return -1;
    if (dp_lift(sh->ar, code, &d->f, sh->err) < 0) {
        dp_error_where(sh->err, code->qualname);
        return -1;
    }
    if (pay_work(sh, unpacked_values_cost(&d->f), "each value an instruction unpacks counts as 2 bytes") < 0)
        return -1;
    d->in = d->f.ins;
    d->lay = d->f.lay;
    d->n = d->f.n;
    if (d->n > DP_MAX_INSTRUCTIONS)
        return dc_fail(d, -1, "function too long (%d instructions)", d->n);
    /* IR normalizations that move jumps, then the graph over the result */
    normalize_boolops(d);
    if (thread_bool_chains(d) < 0 || unthread_value_jumps(d) < 0)
        return -1;
    if (d->lay.block_stack && d->lay.copies_small_exits)
        dc_legacy_join_exit_copies(d);
    dc_join_return_copies(d);
    if (dp_cfg_build(sh->ar, &d->f, &d->cfg, sh->err) < 0) {
        dp_error_where(sh->err, code->qualname);
        return -1;
    }
    d->reach = d->cfg.reach;
    if (structurer_arrays(d) < 0)
        return -1;
    skip_generator_epilogue(d);
    dc_inline_comp_cleanups(d);
    d->is_module = strcmp(code->name, "<module>") == 0;
    return 0;
}

/* ---- clean-ups ---- */

static int is_return_none(const dp_node *s) {
    return s->kind == S_RETURN && (s->a == NULL || dc_is_const_kind(s->a, DP_CONST_NONE));
}

static int ends_in_return(const dp_nodes *l) {
    return l->n > 0 && is_return_none(l->v[l->n - 1]);
}

static int drop_return(dc *d, dp_nodes *l) {
    if (ends_in_return(l) && --l->n == 0 && dc_add(d, l, dc_stmt(d, S_PASS, -1)) < 0)
        return -1;
    return 0;
}

/* Moves l[k+1..] to the end of `to`. */
static int move_rest(dc *d, dp_nodes *l, int k, dp_nodes *to) {
    for (int q = k + 1; q < l->n; q++)
        if (dc_add(d, to, l->v[q]) < 0)
            return -1;
    l->n = k + 1;
    return 0;
}

/* At the end of a function, `if c: A; return None` followed by B is how an
 * `if c: A else: B` looks once CPython duplicated the implicit return into
 * both branches: put B back into the else (recursively, giving elif). */
static int rebuild_tail_else(dc *d, dp_nodes *body, int depth) {
    if (depth > DP_MAX_NESTING)
        return 0;
    for (int k = 0; k + 1 < body->n; k++) {
        dp_node *s = body->v[k];
        if (s->kind != S_IF || s->l2.n != 0 || !ends_in_return(&s->l1))
            continue;
        /* an implicit return copied into the branch keeps the line of the code
         * before it; a `return None` written out has a line of its own */
        const dp_node *ret = s->l1.v[s->l1.n - 1];
        const dp_node *prev = s->l1.n > 1 ? s->l1.v[s->l1.n - 2] : s;
        if (ret->line < 0 || ret->line > prev->line)
            continue;
        if (drop_return(d, &s->l1) < 0 || move_rest(d, body, k, &s->l2) < 0)
            return -1;
        return rebuild_tail_else(d, &s->l2, depth + 1);
    }
    return 0;
}

/* ---- module and class bodies: no `return` there ----
 * From 3.10 CPython copies the implicit `return None` that ends a module or
 * class body into every branch and loop that reaches the end.  A function
 * may say that with `return`; a module may not, so each copy is read back
 * as the statement that reaches the end there: code after an `if` whose
 * arm returns is its else, code after a `try` whose clauses return is its
 * else, a return inside a loop at the end is `break`, and one ending a
 * statement list at the end is dropped.  What is left is no source: the
 * body fails (dc_fail) rather than print code that does not compile. */

/* Visits the statements of a loop's body that belong to that loop (not to
 * an inner loop or function) until visit returns nonzero (depth past the
 * limit: 1, as if it had). */
static int loop_statements(dp_nodes *l, int depth, int (*visit)(dp_node *s)) {
    if (depth > DP_MAX_NESTING)
        return 1;
    for (int k = 0; k < l->n; k++) {
        dp_node *s = l->v[k];
        int r = visit(s);
        if (r)
            return r;
        if (s->kind == S_IF || s->kind == S_TRY || s->kind == S_WITH || s->kind == S_MATCH || s->kind == S_EXCEPT ||
            s->kind == S_CASE) {
            dp_nodes *ls[4] = {&s->l1, &s->l2, &s->l3, &s->l4};
            for (int q = 0; q < 4; q++) /* (a with's l1: its items) */
                if (!(s->kind == S_WITH && q == 0) && (r = loop_statements(ls[q], depth + 1, visit)) != 0)
                    return r;
        }
    }
    return 0;
}

/* In the body of a loop at the end, the copies are `break`. */
static int return_to_break(dp_node *s) {
    if (is_return_none(s)) {
        s->kind = S_BREAK;
        s->a = NULL;
    }
    return 0;
}

static void returns_to_breaks(dp_nodes *l) {
    loop_statements(l, 0, return_to_break);
}

static int is_break(dp_node *s) {
    return s->kind == S_BREAK;
}

/* Whether the body of a loop has a `break` of that loop. */
static int breaks_loop(dp_nodes *l) {
    return loop_statements(l, 0, is_break);
}

static int try_clauses_return(const dp_node *s) {
    int returns = 0;
    for (int h = 0; h < s->l2.n; h++) {
        const dp_nodes *arm = &s->l2.v[h]->l1;
        if (ends_in_return(arm))
            returns = 1;
        else if (dc_can_complete(arm, 0))
            return 0;
    }
    return returns;
}

static int body_returns(const dp_nodes *l, int depth);

/* `l` ends the body (what follows it is the end).  fn: a function's body
 * (none_returns_are_copies), where only ifs and loops are read so (the
 * else of a loop or a try, a with, are told apart from the code after them
 * otherwise). */
static int tail_returns(dc *d, dp_nodes *l, int depth, int fn) {
    if (depth > DP_MAX_NESTING)
        return dc_fail(d, -1, "statements nested too deeply");
    for (int k = 0; k + 1 < l->n; k++) {
        dp_node *s = l->v[k];
        if (s->kind == S_IF && s->l2.n == 0 && ends_in_return(&s->l1)) {
            if (drop_return(d, &s->l1) < 0 || move_rest(d, l, k, &s->l2) < 0)
                return -1;
            break;
        }
        if (fn)
            continue;
        /* a loop left by a return: what follows ran when it ended, its else */
        if ((s->kind == S_FOR || s->kind == S_WHILE) && s->l2.n == 0 && body_returns(&s->l1, 0) &&
            !breaks_loop(&s->l1)) { /* (a break of it would skip the else) */
            returns_to_breaks(&s->l1);
            if (move_rest(d, l, k, &s->l2) < 0)
                return -1;
            break;
        }
        /* (not with a finally: it runs after an else, before what follows) */
        if (s->kind == S_TRY && s->l2.n && s->l3.n == 0 && s->l4.n == 0 && try_clauses_return(s)) {
            for (int h = 0; h < s->l2.n; h++)
                if (drop_return(d, &s->l2.v[h]->l1) < 0)
                    return -1;
            if (move_rest(d, l, k, &s->l3) < 0)
                return -1;
            break;
        }
    }
    while (ends_in_return(l) && l->n > 1)
        l->n--;
    if (depth > 0 && drop_return(d, l) < 0) /* (a lone copy: `pass`; the body's own goes later) */
        return -1;
    if (l->n == 0)
        return 0;
    dp_node *s = l->v[l->n - 1];
    if (fn && s->kind != S_IF && s->kind != S_FOR && s->kind != S_WHILE)
        return 0;
    switch (s->kind) {
    case S_IF:
        return tail_returns(d, &s->l1, depth + 1, fn) < 0 ? -1 : tail_returns(d, &s->l2, depth + 1, fn);
    case S_WITH:
        return tail_returns(d, &s->l2, depth + 1, fn);
    case S_FOR: case S_WHILE:
        returns_to_breaks(&s->l1);
        return tail_returns(d, &s->l2, depth + 1, fn);
    case S_TRY:
        if (s->l4.n)
            return 0;
        for (int h = 0; h < s->l2.n; h++)
            if (tail_returns(d, &s->l2.v[h]->l1, depth + 1, fn) < 0)
                return -1;
        return tail_returns(d, s->l3.n ? &s->l3 : &s->l1, depth + 1, fn);
    case S_MATCH:
        for (int c = 0; c < s->l1.n; c++)
            if (tail_returns(d, &s->l1.v[c]->l1, depth + 1, fn) < 0)
                return -1;
        return 0;
    default:
        return 0;
    }
}

/* Whether statements of this body (not of functions or classes in it) return. */
static int body_returns(const dp_nodes *l, int depth) {
    if (depth > DP_MAX_NESTING)
        return 1;
    for (int k = 0; k < l->n; k++) {
        const dp_node *s = l->v[k];
        if (s->kind == S_RETURN)
            return 1;
        if (!dp_in_body(s) || s->kind == S_FUNCTIONDEF || s->kind == S_CLASSDEF)
            continue;
        const dp_nodes *ls[4] = {&s->l1, &s->l2, &s->l3, &s->l4};
        for (int q = 0; q < 4; q++)
            if (body_returns(ls[q], depth + 1))
                return 1;
    }
    return 0;
}

static int no_returns_outside_functions(dc *d, dp_nodes *body, int is_class) {
    if (tail_returns(d, body, 0, 0) < 0)
        return -1;
    if (body->n == 1 && is_return_none(body->v[0])) /* (an empty body) */
        body->n = 0;
    if (body_returns(body, 0))
        return dc_fail(d, -1, "the %s body returns where no statement of a %s can say so",
                       is_class ? "class" : "module", is_class ? "class" : "module");
    return 0;
}

/* Up to 3.9 the compiler ends a function whose last statement is no
 * `return` with `return None` even where that statement never completes
 * (`if c: return a` / `else: return b`): that `return None` is dead.  So a
 * dead `LOAD_CONST None; RETURN_VALUE` ending the code says the source
 * ended with a compound statement: when the body ends with `if c: <never
 * completes>` then simple statements ending in a `return`, those are its
 * else (3.10+ removes dead code: no such ending). */
static int else_before_dead_return(dc *d, dp_nodes *body) {
    int n = d->n;
    if (n < 2 || d->reach[n - 1] || d->reach[n - 2] || d->in[n - 1].op != IR_RETURN_VALUE ||
        d->in[n - 2].op != IR_LOAD_CONST || d->in[n - 2].cst == NULL || d->in[n - 2].cst->kind != DP_CONST_NONE)
        return 0;
    /* (a compound statement at the end, or a `raise`, whose block the
     * compiler does not count as returning, explains the dead return) */
    if (body->n < 2 || body->v[body->n - 1]->kind != S_RETURN)
        return 0;
    for (int k = body->n - 2; k >= 0; k--) {
        dp_node *s = body->v[k];
        if (s->kind != S_IF)
            continue;
        if (s->l2.n != 0 || dc_can_complete(&s->l1, 0))
            return 0;
        return move_rest(d, body, k, &s->l2);
    }
    return 0;
}

/* `if c: return a` then `return b`, one of them an arm of a conditional
 * expression (S_RETURN op2, DP_RETURN_ARM: 3.12+ copies the return into
 * each arm, where a return statement of a constant would be fused), is
 * `return a if c else b`; in every block of the body. */
static void remove_at(dp_nodes *l, int at);

static int returned_ifexps(dc *d, dp_nodes *body, int depth) {
    if (depth > DP_MAX_NESTING)
        return 0;
    for (int k = body->n - 2; k >= 0; k--) {
        dp_node *s = body->v[k], *r = body->v[k + 1];
        if (s->kind != S_IF || s->l2.n != 0 || s->l1.n != 1 || s->l1.v[0]->kind != S_RETURN || s->l1.v[0]->a == NULL ||
            r->kind != S_RETURN || r->a == NULL || !(s->l1.v[0]->op2 || r->op2))
            continue;
        dp_node *e = dc_node(d, E_IFEXP);
        if (e == NULL)
            return -1;
        e->a = s->a;
        e->b = s->l1.v[0]->a;
        e->c = r->a;
        s->kind = S_RETURN; /* (in place: the if's position) */
        s->a = e;
        s->op2 = 0;
        s->l1.n = 0;
        remove_at(body, k + 1);
    }
    for (int k = 0; k < body->n; k++) {
        dp_node *s = body->v[k];
        if (!dp_in_body(s) || s->kind == S_FUNCTIONDEF || s->kind == S_CLASSDEF)
            continue;
        dp_nodes *ls[4] = {&s->l1, &s->l2, &s->l3, &s->l4};
        for (int l = 0; l < 4; l++) /* (a try's handlers, a match's cases: statements too) */
            if (returned_ifexps(d, ls[l], depth + 1) < 0)
                return -1;
    }
    return 0;
}

/* The compiler adds `return None` at the end of every path that falls off
 * the end of a function; remove those so the source reads naturally.
 * From 3.10 it copies that return into the branches and handlers that end
 * the function; before, only the end of the code has one, and a `return`
 * that ends an except clause was written there (`copies`). */
static void drop_implicit_returns_or_dead(dp_nodes *body, int copies);

static void drop_implicit_returns(dp_nodes *body, int copies) {
    if (body->n == 0)
        return;
    dp_node *last = body->v[body->n - 1];
    /* (what comes before falls off the end then: a branch of it ending in
     * a `return None` copy too; a copy after the return is dead code) */
    while (is_return_none(last)) {
        if (--body->n == 0)
            return;
        last = body->v[body->n - 1];
    }
    /* (before 3.10 a branch's `return None` is written out: the implicit
     * one is only at the end of the code, after the if) */
    if (last->kind == S_IF && copies) {
        drop_implicit_returns(&last->l1, copies);
        drop_implicit_returns(&last->l2, copies);
    }
    if (last->kind == S_MATCH)
        for (int k = 0; k < last->l1.n; k++)
            drop_implicit_returns(&last->l1.v[k]->l1, copies);
    if (last->kind == S_TRY) {
        /* a try at the end: its paths fall off the function too (through
         * the finally body, if any, either way) */
        drop_implicit_returns_or_dead(last->l3.n ? &last->l3 : &last->l1, copies);
        for (int k = 0; k < last->l2.n; k++)
            drop_implicit_returns_or_dead(&last->l2.v[k]->l1, copies);
    }
}

/* 3.10+: is the `return None` ending the body written source?  The
 * implicit one has no line: CPython copies it into each block that reaches
 * the end, and each copy takes the line of the code before it.  A return
 * on a line after all other code, reached by all of them, was written. */
static int written_final_return(const dc *d, const dp_nodes *body) {
    if (!d->lay.copies_small_exits || body->n == 0)
        return 0;
    const dp_node *last = body->v[body->n - 1];
    if (!is_return_none(last) || last->line < 0)
        return 0;
    int at = 0;
    for (int j = 0; j < d->n; j++) {
        const dp_instr *x = &d->in[j];
        if (x->line > last->line)
            return 0;
        if (x->line == last->line) {
            if (x->op == IR_LOAD_CONST && x->cst != NULL && x->cst->kind == DP_CONST_NONE)
                at++;
            else if (x->op != IR_RETURN_VALUE && x->op != IR_NOP)
                return 0;
        }
    }
    return at == 1; /* (one return there, not copies) */
}

/* After tail_returns: an else left holding only the `pass` of a copied
 * return is no else (the branch fell off the end there). */
static void drop_pass_elses(dp_nodes *l, int depth) {
    if (l->n == 0 || depth > DP_MAX_NESTING)
        return;
    dp_node *s = l->v[l->n - 1];
    if (s->kind != S_IF && s->kind != S_FOR && s->kind != S_WHILE)
        return;
    if (s->l2.n == 1 && s->l2.v[0]->kind == S_PASS)
        s->l2.n = 0;
    if (s->kind == S_IF)
        drop_pass_elses(&s->l1, depth + 1);
    drop_pass_elses(&s->l2, depth + 1);
}

/* 3.10+: the compiler numbers co_consts in the order it meets them, and
 * meets the implicit `return None` after all the code: when None is the
 * last constant, after a docstring or others, no `return None` was written
 * before code with a constant of its own; CPython copied the implicit
 * one into the branches and loops that reach the end (the first constant,
 * the docstring or None, comes before any code and tells nothing). */
static int none_met_last(const dc *d) {
    size_t n = d->code->nconsts;
    if (!d->lay.copies_small_exits || n < 2 || d->code->consts[n - 1]->kind != DP_CONST_NONE)
        return 0;
    for (size_t k = 0; k + 1 < n; k++)
        if (d->code->consts[k]->kind == DP_CONST_NONE)
            return 0;
    return 1;
}

typedef struct const_walk {
    const dp_code *code;
    unsigned char *met;  /* per constant: met in the walk */
    int returned;        /* a `return None` was met */
    int later;           /* a constant first met after it */
    int budget;
} const_walk;

static int is_return_none(const dp_node *s);

/* Walks the tree in the order the compiler meets its code (tests before
 * branches, statements in order), near enough for constants first used by
 * whole statements. */
static void walk_consts(const dp_node *n, const_walk *w, int depth) {
    if (n == NULL || depth > DP_MAX_NESTING || --w->budget < 0 || w->later)
        return;
    if (n->kind == S_FUNCTIONDEF || n->kind == S_CLASSDEF || n->kind == E_LAMBDA)
        return; /* (what they hold is another code's: a default value would not be, but tells little) */
    if (n->kind == E_CONST && n->cst != NULL)
        for (size_t k = 1; k < w->code->nconsts; k++)
            if (w->code->consts[k] == n->cst && !w->met[k]) {
                w->met[k] = 1;
                if (w->returned && n->cst->kind != DP_CONST_NONE)
                    w->later = 1;
            }
    if (is_return_none(n)) {
        w->returned = 1;
        return;
    }
    walk_consts(n->a, w, depth + 1);
    walk_consts(n->b, w, depth + 1);
    walk_consts(n->c, w, depth + 1);
    const dp_nodes *ls[4] = {&n->l1, &n->l2, &n->l3, &n->l4};
    for (int q = 0; q < 4; q++)
        for (int k = 0; k < ls[q]->n; k++)
            walk_consts(ls[q]->v[k], w, depth + 1);
}

/* None met last (none_met_last), and the body has a `return None` before
 * code whose constants the compiler met first: that return cannot be
 * written source (None would come before them), it is a copy of the
 * implicit one. */
static int none_returns_are_copies(dc *d, const dp_nodes *body) {
    if (!none_met_last(d) || d->code->nconsts > 4000)
        return 0;
    const_walk w = {d->code, dp_alloc(d->sh->ar, d->code->nconsts), 0, 0, 100000};
    if (w.met == NULL)
        return 0;
    memset(w.met, 0, d->code->nconsts);
    for (int k = 0; k < body->n && !w.later; k++)
        walk_consts(body->v[k], &w, 0);
    return w.later && w.budget >= 0;
}

/* Inside a try at the end of a function before 3.10: only a `return None`
 * after a statement that never completes (dead code) goes. */
static void drop_implicit_returns_or_dead(dp_nodes *body, int copies) {
    if (copies) {
        drop_implicit_returns(body, copies);
        return;
    }
    if (body->n >= 2 && is_return_none(body->v[body->n - 1])) {
        int k = body->v[body->n - 2]->kind;
        if (k == S_RAISE || k == S_RETURN || k == S_CONTINUE || k == S_BREAK)
            body->n--;
    }
}

/* A loop body that ends in try/finally whose body ends in `continue`: from
 * 3.10 on that `continue` compiles like falling off the end (a copy of the
 * finally body, then the jump back), so the source reads better without it
 * (3.9 keeps a dead copy of the fall-through path after a written one). */
static void drop_trailing_continues(dp_nodes *body, int in_loop, int depth) {
    if (body->n == 0 || depth > DP_MAX_NESTING)
        return;
    dp_node *last = body->v[body->n - 1];
    if (in_loop && last->kind == S_TRY && last->l4.n > 0 && last->l2.n == 0 && last->l3.n == 0 && last->l1.n > 1 &&
        last->l1.v[last->l1.n - 1]->kind == S_CONTINUE)
        last->l1.n--;
    for (int k = 0; k < body->n; k++) {
        dp_node *s = body->v[k];
        if (!dp_in_body(s) || s->kind == S_FUNCTIONDEF || s->kind == S_CLASSDEF)
            continue;
        /* (the handlers of a try and the cases of a match are statements too) */
        drop_trailing_continues(&s->l1, s->kind == S_WHILE || s->kind == S_FOR, depth + 1);
        drop_trailing_continues(&s->l2, 0, depth + 1);
        drop_trailing_continues(&s->l3, 0, depth + 1);
        drop_trailing_continues(&s->l4, 0, depth + 1);
    }
}

/* Whether a yield of this scope is in the tree (nested scopes skipped;
 * missing one only costs a redundant `yield` below). */
int dc_has_yield(const dp_node *n, int depth) {
    if (n == NULL || depth > 2000)
        return 0;
    if (n->kind == E_YIELD || n->kind == E_YIELD_FROM)
        return 1;
    if (n->kind == S_FUNCTIONDEF || n->kind == S_CLASSDEF || n->kind == E_LAMBDA || n->kind == E_LISTCOMP ||
        n->kind == E_SETCOMP || n->kind == E_GENEXP || n->kind == E_DICTCOMP)
        return 0;
    const dp_nodes *ls[4] = {&n->l1, &n->l2, &n->l3, &n->l4};
    for (int l = 0; l < 4; l++)
        for (int k = 0; k < ls[l]->n; k++)
            if (dc_has_yield(ls[l]->v[k], depth + 1))
                return 1;
    return dc_has_yield(n->a, depth + 1) || dc_has_yield(n->b, depth + 1) || dc_has_yield(n->c, depth + 1);
}

/* A generator whose every yield is unreachable compiles without them, but
 * the flag stays: end the body with `return` then a dead `yield` so that
 * it is still a generator (an async one still an async generator). */
static int keep_generator_kind(dc *d, dp_nodes *body) {
    if (!(d->code->flags & (DP_CO_GENERATOR | DP_CO_ASYNC_GENERATOR)))
        return 0;
    for (int k = 0; k < body->n; k++)
        if (dc_has_yield(body->v[k], 0))
            return 0;
    int ends = body->n > 0 && (body->v[body->n - 1]->kind == S_RETURN || body->v[body->n - 1]->kind == S_RAISE);
    dp_node *ret = ends ? NULL : dc_stmt(d, S_RETURN, -1);
    dp_node *y = dc_stmt(d, S_EXPR, -1);
    if ((!ends && (ret == NULL || dc_add(d, body, ret) < 0)) || y == NULL || (y->a = dc_node(d, E_YIELD)) == NULL)
        return -1;
    return dc_add(d, body, y);
}

/* A free variable the bytecode never touches (Dynamo's resume functions
 * keep every cell of the function they resume) would be missing from the
 * recompiled code, and Dynamo fills frames by position: `if False: name`
 * makes it free again and compiles to nothing.  Only reachable code counts:
 * torch <= 2.11 leaves the whole original function, dead, after the jump
 * of its resume functions. */
static int keep_free_variables(dc *d, dp_nodes *body) {
    static const dp_const false_const = {.kind = DP_CONST_FALSE};
    for (size_t k = 0; k < d->code->freevars.n; k++) {
        const char *name = d->code->freevars.v[k];
        int used = strcmp(name, "__class__") == 0; /* zero-argument super() reads it without a name */
        for (int j = 0; j < d->n && !used; j++) {
            int op = d->in[j].op;
            used = d->reach[j] && (op == IR_LOAD_DEREF || op == IR_STORE_DEREF || op == IR_DELETE_DEREF || op == IR_LOAD_CLOSURE ||
                    op == IR_LOAD_CLASSDEREF || op == IR_LOAD_FAST) &&
                   d->in[j].name && strcmp(d->in[j].name, name) == 0;
        }
        if (used)
            continue;
        dp_node *s = dc_stmt(d, S_IF, -1), *e = dc_stmt(d, S_EXPR, -1);
        if (s == NULL || e == NULL || (s->a = dc_const(d, &false_const)) == NULL || (e->a = dc_name(d, name)) == NULL ||
            dc_add(d, &s->l1, e) < 0 || dc_add(d, body, s) < 0)
            return -1;
    }
    return 0;
}

static int is_assign_to(const dp_node *s, const char *name) {
    return s->kind == S_ASSIGN && s->l1.n == 1 && s->l1.v[0]->kind == E_NAME && strcmp(s->l1.v[0]->s, name) == 0;
}

/* `__doc__ = '...'` at the top of a module or class is its docstring. */
static void docstring_from_assign(dp_nodes *body, int at) {
    if (body->n > at && is_assign_to(body->v[at], "__doc__") && dc_is_const_kind(body->v[at]->b, DP_CONST_STR)) {
        dp_node *s = body->v[at];
        s->kind = S_EXPR;
        s->a = s->b;
        s->b = NULL;
        s->l1.n = 0;
    }
}

static void remove_at(dp_nodes *l, int at) {
    memmove(l->v + at, l->v + at + 1, (size_t)(l->n - at - 1) * sizeof *l->v);
    l->n--;
}

/* A module's code says LOAD_GLOBAL/STORE_GLOBAL/DELETE_GLOBAL only for a
 * name some `global` statement names (the module's own, or one in a
 * function it defines, which the function's bytecode may not show): one
 * `global` at the top of the module compiles every use of it so again. */
static int module_globals(dc *d) {
    for (int i = 0; i < d->n; i++) {
        const dp_instr *x = &d->in[i];
        if ((x->op == IR_LOAD_GLOBAL || x->op == IR_STORE_GLOBAL || x->op == IR_DELETE_GLOBAL) && x->name != NULL &&
            dc_declare(d, &d->globals, x->name) < 0)
            return -1;
    }
    return 0;
}

static int prepend_decls(dc *d, dp_nodes *body) {
    dp_nodes out = {0};
    if (d->is_module && module_globals(d) < 0)
        return -1;
    if (d->globals.n) {
        dp_node *g = dc_node(d, S_GLOBAL);
        if (g == NULL || dc_add(d, &out, g) < 0)
            return -1;
        g->l1 = d->globals;
    }
    if (d->nonlocals.n) {
        dp_node *g = dc_node(d, S_NONLOCAL);
        if (g == NULL || dc_add(d, &out, g) < 0)
            return -1;
        g->l1 = d->nonlocals;
    }
    if (out.n == 0)
        return 0;
    /* after a docstring and the `from __future__` imports, which must come first */
    int at = body->n > 0 && body->v[0]->kind == S_EXPR && dc_is_const_kind(body->v[0]->a, DP_CONST_STR);
    while (at < body->n && body->v[at]->kind == S_IMPORTFROM && body->v[at]->op == 0 && body->v[at]->s &&
           strcmp(body->v[at]->s, "__future__") == 0)
        at++;
    dp_nodes merged = {0};
    for (int k = 0; k < at; k++)
        if (dc_add(d, &merged, body->v[k]) < 0)
            return -1;
    for (int k = 0; k < out.n; k++)
        if (dc_add(d, &merged, out.v[k]) < 0)
            return -1;
    for (int k = at; k < body->n; k++)
        if (dc_add(d, &merged, body->v[k]) < 0)
            return -1;
    *body = merged;
    return 0;
}

enum { BODY_FUNCTION, BODY_CLASS, BODY_MODULE, BODY_LAMBDA, BODY_COMPREHENSION };

#define MAX_TREE_DEPTH 2000 /* statements and expressions, one code object's */

/* Functions made and not stored by a def, once the structure is built
 * (in place, as the node may be shared): a lambda still an X_FUNC (3.13
 * sets a function's defaults after MAKE_FUNCTION) is complete and becomes
 * its `lambda`; any other is a function used as a value, which only
 * Dynamo's code makes (torch <= 2.6 calls a resume function right where
 * it makes it): no def says that, so it becomes the call that makes the
 * same function from the same code object (dc_function_by_value). */
static int finish_made_function(dc *d, dp_node *n) {
    dp_node *closure = n->l1.n > 0 ? n->l1.v[0] : NULL;
    dp_node *made = strcmp(n->cst->code->name, "<lambda>") == 0 ? dc_lambda(d, n, -1)
                                                               : dc_function_by_value(d, n, closure, -1);
    if (made == NULL)
        return -1;
    *n = *made;
    return 0;
}

/* An item of an unpacked value used as a value rather than stored (Dynamo's
 * code tests one of a graph's outputs right where it unpacks them:
 * `UNPACK_SEQUENCE 2; STORE_FAST x; POP_JUMP_IF_FALSE`) becomes a
 * temporary: it is a target of the unpacking, read where it was used (in
 * place, as the slot may be shared). */
static int is_unfilled_slot(const dp_node *n) {
    return n->kind == X_SLOT && n->a != NULL && n->a->kind == E_TUPLE && n->op >= 0 && n->op < n->a->l1.n &&
           n->a->l1.v[n->op] == NULL;
}

static int fill_slot(dc *d, dp_node *n) {
    dp_node *target = dc_new_temp(d);
    if (target == NULL)
        return -1;
    n->a->l1.v[n->op] = target;
    *n = *target;
    return 0;
}

/* The two above, in one walk of the finished structure. */
static int finish_tree(dc *d, dp_node *n, int depth) {
    if (n == NULL)
        return 0;
    if (depth > MAX_TREE_DEPTH)
        return dc_fail(d, -1, "expression nested too deeply");
    if (n->kind == X_FUNC && n->cst && n->cst->code && finish_made_function(d, n) < 0)
        return -1;
    if (is_unfilled_slot(n))
        return fill_slot(d, n);
    dp_nodes *ls[4] = {&n->l1, &n->l2, &n->l3, &n->l4};
    for (int l = 0; l < 4; l++)
        for (int k = 0; k < ls[l]->n; k++)
            if (finish_tree(d, ls[l]->v[k], depth + 1) < 0)
                return -1;
    if (finish_tree(d, n->a, depth + 1) < 0 || finish_tree(d, n->b, depth + 1) < 0)
        return -1;
    return finish_tree(d, n->c, depth + 1);
}

/* Every instruction that can run must have been consumed by the structure;
 * NOPs and `return <const>` copies (CPython duplicates them freely) aside. */
static int check_coverage(dc *d) {
    for (int i = 0; i < d->n; i++) {
        if (!d->reach[i] || d->seen[i] || d->in[i].op == IR_NOP || d->in[i].op == IR_STOPITERATION_ERROR ||
            (d->in[i].op == IR_RERAISE && i > 0 && d->in[i - 1].op == IR_STOPITERATION_ERROR))
            continue;
        int exit_copy = (d->in[i].op == IR_LOAD_CONST && i + 1 < d->n && d->in[i + 1].op == IR_RETURN_VALUE) ||
                        (d->in[i].op == IR_RETURN_VALUE && i > 0 && d->in[i - 1].op == IR_LOAD_CONST);
        if (!exit_copy)
            return dc_fail(d, i, "%s was left out of the structure", dp_irop_name(d->in[i].op));
    }
    return 0;
}

/* `return (__classcell__ := __class__)` (or `__classcell__ = __class__;
 * return __class__`) hands the class cell to type(), and 3.13 stores
 * `__static_attributes__` before a class body's return: the compiler
 * writes both again.  From 3.10 they are copied into each branch that
 * reaches the body's end, like a function's `return None`: read as that,
 * the copies become else clauses and breaks (tail_returns). */
static int is_cell_return(const dp_node *r) {
    return r->kind == S_RETURN && r->a &&
           ((r->a->kind == E_NAME && strcmp(r->a->s, "__class__") == 0) ||
            (dc_is_cell(r->a) && strcmp(r->a->a->a->b->s, "__class__") == 0) ||
            (r->a->kind == E_NAMED && strcmp(r->a->s, "__classcell__") == 0));
}

static int cell_returns_to_none(dc *d, dp_nodes *l, int depth) {
    if (depth > DP_MAX_NESTING)
        return dc_fail(d, -1, "statements nested too deeply");
    for (int k = 0; k < l->n; k++) {
        dp_node *s = l->v[k];
        int cell = is_cell_return(s);
        if (cell || is_return_none(s)) {
            if (cell && (l->v[k] = dc_stmt(d, S_RETURN, -1)) == NULL)
                return -1;
            if (k > 0 && is_assign_to(l->v[k - 1], "__classcell__"))
                remove_at(l, --k);
            /* (3.13 records the `self.x` attributes the methods store, last before the return) */
            if (k > 0 && d->lay.class_records_lines_attrs && is_assign_to(l->v[k - 1], "__static_attributes__"))
                remove_at(l, --k);
            continue;
        }
        if (!dp_in_body(s) || s->kind == S_FUNCTIONDEF || s->kind == S_CLASSDEF)
            continue;
        dp_nodes *ls[4] = {&s->l1, &s->l2, &s->l3, &s->l4};
        for (int q = 0; q < 4; q++)
            if (cell_returns_to_none(d, ls[q], depth + 1) < 0)
                return -1;
    }
    return 0;
}

/* Decompiles a whole code object into statements; as the state machine
 * when `refused` (the reason) is set. */
static int code_body_try(dc_shared *sh, const dp_code *code, dc *outer, int kind, int path, dp_nodes *body,
                          dc *d, const char *refused) {
    if (dc_nest(sh, DP_MAX_NESTING, "code objects and blocks") < 0) {
        dp_error_where(sh->err, code->qualname);
        return -1;
    }
    int rc = -1;
    if (dc_setup(d, sh, code, outer) < 0)
        goto out;
    d->path = path;
    d->is_class_body = kind == BODY_CLASS;
    dc_stack st = {0};
    dc_spec sp;
    dc_spec_begin(d, &sp);
    int forced = (sh->opt && sh->opt->force_fallback && kind == BODY_FUNCTION) || refused;
    int r = forced ? dc_fail(d, -1, "the state machine was asked for") : dc_block(d, 0, d->n, &st, body);
    if (r >= 0 && !d->sh->err->set)
        r = check_coverage(d);
    for (int k = 0; r >= 0 && !d->sh->err->set && k < body->n; k++)
        r = finish_tree(d, body->v[k], 0);
    if (refused) {
        snprintf(d->why, sizeof d->why, "%.190s", refused);
        d->refused = 1;
    }
    else if (d->sh->err->set)
        snprintf(d->why, sizeof d->why, "at offset %d: %.150s", d->sh->err->offset, d->sh->err->msg);
    dp_utf8_trim(d->why);
    if (!dc_spec_end(d, &sp, r)) {
        /* no structured form: emit an equivalent state machine instead */
        if (d->sh->limit_hit) /* the speculation dropped the message */
            dp_fail(sh->err, -1, "%s", sh->limit_msg);
        if (d->sh->ar->failed || d->sh->limit_hit)
            goto out;
        body->n = 0;
        d->pending_chain = NULL;
        for (int h = 0; h < d->nhandlers; h++)
            d->handlers[h].opened = 0;
        d->nopened = 0;
        d->used_fallback = 1;
        if (dc_fallback(d, body) < 0)
            goto out;
    }
    if (kind == BODY_CLASS) {
        /* drop the compiler's prologue and the __class__ cell epilogue */
        /* (3.13 also records the first line: `__firstlineno__`) */
        while (body->n && (is_assign_to(body->v[0], "__module__") || is_assign_to(body->v[0], "__qualname__") ||
                           (d->lay.class_records_lines_attrs && is_assign_to(body->v[0], "__firstlineno__"))))
            remove_at(body, 0);
        docstring_from_assign(body, 0);
        if (cell_returns_to_none(d, body, 0) < 0)
            goto out;
    }
    if (kind == BODY_MODULE)
        docstring_from_assign(body, 0);
    if ((kind == BODY_MODULE || kind == BODY_CLASS) && dc_annotated_assigns(d, body) < 0)
        goto out;
    if (kind != BODY_LAMBDA && kind != BODY_COMPREHENSION) {
        /* (before 3.10 no implicit return is copied: a branch's `return
         * None` was written, even on the if's own line) */
        if ((d->lay.copies_small_exits && rebuild_tail_else(d, body, 0) < 0) ||
            (!d->used_fallback && else_before_dead_return(d, body) < 0) ||
            (!d->used_fallback && returned_ifexps(d, body, 0) < 0))
            goto out;
        /* (None met last: the returns of None are copies of the implicit
         * one, read back as the statements that reach the end; after
         * `return a if c else None` is rebuilt) */
        if (kind == BODY_FUNCTION && !d->used_fallback && none_returns_are_copies(d, body) &&
            !written_final_return(d, body)) {
            if (tail_returns(d, body, 0, 1) < 0)
                goto out;
            drop_pass_elses(body, 0);
        }
        if (!written_final_return(d, body))
            drop_implicit_returns(body, d->lay.copies_small_exits);
        if (!d->lay.keeps_dead_blocks)
            drop_trailing_continues(body, 0, 0);
    }
    if ((kind == BODY_MODULE || kind == BODY_CLASS) && no_returns_outside_functions(d, body, kind == BODY_CLASS) < 0)
        goto out;
    if (kind == BODY_FUNCTION && (keep_generator_kind(d, body) < 0 || keep_free_variables(d, body) < 0))
        goto out;
    if (kind != BODY_LAMBDA && kind != BODY_COMPREHENSION && dc_folded_test(d, body) < 0)
        goto out;
    if (kind == BODY_FUNCTION && code->nconsts > 0 && code->consts[0]->kind == DP_CONST_STR) {
        dp_node *doc = dc_node(d, S_EXPR);
        dp_nodes withdoc = {0};
        if (doc == NULL || (doc->a = dc_const(d, code->consts[0])) == NULL || dc_add(d, &withdoc, doc) < 0)
            goto out;
        for (int k = 0; k < body->n; k++)
            if (dc_add(d, &withdoc, body->v[k]) < 0)
                goto out;
        *body = withdoc;
    }
    if (kind != BODY_LAMBDA && prepend_decls(d, body) < 0)
        goto out;
    rc = 0;
out:
    sh->depth--;
    return rc;
}

/* code_body_try, and the check that its statements, every rewrite done,
 * hold what their kinds allow (ast_check.c): a structure that kept
 * interpreter-only values (NULL slots, unfilled unpack targets, with/except
 * internals) or put a node where its parent takes another kind cannot be
 * printed as source, and the state machine replaces it. */
static int code_body_once(dc_shared *sh, const dp_code *code, dc *outer, int kind, int path, dp_nodes *body,
                          dc *d, const char *refused) {
    if (code_body_try(sh, code, outer, kind, path, body, d, refused) < 0)
        return -1;
    if (kind == BODY_COMPREHENSION) /* (its body is the comprehension's parts, read by its caller) */
        return 0;
    dp_error types;
    dp_error_init(&types);
    if (dp_ast_check(body, 0, MAX_TREE_DEPTH, &types) == 0)
        return 0;
    if (d->used_fallback) {
        *sh->err = types;
        dp_error_where(sh->err, code->qualname);
        return -1;
    }
    char why[200];
    if (types.offset >= 0)
        snprintf(why, sizeof why, "at offset %d: %.150s", types.offset, types.msg);
    else
        snprintf(why, sizeof why, "%.150s", types.msg);
    dp_utf8_trim(why);
    *body = (dp_nodes){0};
    return code_body_once(sh, code, outer, kind, path, body, d, why);
}

static dp_node *arguments(dc *d, const dp_code *code, dp_node *fn, dp_node **returns);
static dp_node *lambda_value(dc *d, const dp_nodes *body);

/* `lambda <args>: <value>` for a lambda's code decompiled on its own whose
 * body is one value, else NULL.  (A generator lambda too: from 3.12 a
 * generator def's body is wrapped in a handler a lambda's is not.) */
static dp_node *lambda_statement(dc *d, const dp_node *def) {
    if ((d->code->flags & (DP_CO_COROUTINE | DP_CO_ASYNC_GENERATOR)) || def->b != NULL)
        return NULL;
    dp_node *value = lambda_value(d, &def->l1), *lam = value ? dc_node(d, E_LAMBDA) : NULL;
    dp_node *st = lam ? dc_node(d, S_EXPR) : NULL;
    if (st == NULL)
        return NULL;
    lam->a = def->c;
    lam->b = value;
    st->a = lam;
    return st;
}
static int is_async(const dp_code *code);

/* Decompiles a whole code object into statements.  A function body
 * structured from bytecode of the running Python is validated (see
 * validate.c): when it is not equivalent to its bytecode, or the check
 * could not be made, the state machine replaces it. */
static int code_body_validated(dc_shared *sh, const dp_code *code, dc *outer, int kind, int path, dp_nodes *body,
                               dc *d) {
    if (code_body_once(sh, code, outer, kind, path, body, d, NULL) < 0)
        return -1;
    if (d->used_fallback && d->joined_copies > 0 && !sh->keep_return_copies) {
        /* (the jumps back to a shared return left no structure: try the
         * copies as they are) */
        body->n = 0;
        sh->keep_return_copies = 1;
        int r = code_body_once(sh, code, outer, kind, path, body, d, NULL);
        sh->keep_return_copies = 0;
        if (r < 0)
            return -1;
    }
    if ((kind != BODY_FUNCTION && kind != BODY_MODULE && kind != BODY_CLASS) || d->used_fallback ||
        !dc_wants_validation(sh, code, kind == BODY_MODULE))
        return 0;
    char why[200];
    int v;
    if (kind == BODY_MODULE) {
        v = dc_validate_module(d, body, why, sizeof why);
    } else if (kind == BODY_CLASS) {
        v = dc_validate_class(d, body, why, sizeof why);
    } else {
        dp_node *def = dc_node(d, S_FUNCTIONDEF);
        if (def == NULL)
            return -1;
        def->s = code->name;
        def->op = is_async(code);
        def->l1 = *body;
        if ((def->c = arguments(d, code, NULL, &def->b)) == NULL)
            return -1;
        /* (a lambda decompiled on its own is validated as the lambda it prints as) */
        dp_node *lam = sh->lambda_alone && outer == NULL ? lambda_statement(d, def) : NULL;
        v = dc_validate(d, lam ? lam : def, why, sizeof why);
    }
    dp_validation_stats *stats = sh->opt->stats;
    if (stats)
        *(v == 1 ? &stats->validated : v == 0 ? &stats->fallback : &stats->unchecked) += 1;
    if (v == 1 || (v < 0 && kind == BODY_CLASS))
        return 0; /* (a class body that cannot be checked prints as before class bodies were checked) */
    if (v < 0) { /* what could not be checked is not printed either */
        char checked[sizeof why + 16];
        snprintf(checked, sizeof checked, "not checked: %.180s", why);
        memcpy(why, checked, sizeof why - 1);
        why[sizeof why - 1] = '\0';
        dp_utf8_trim(why);
    }
    *body = (dp_nodes){0};
    return code_body_once(sh, code, outer, kind, path, body, d, why);
}

/* What a use of a nested code object gave (dc_shared.memo). */
typedef struct dc_memo {
    int path;       /* of that use: its own nested code objects are keyed by it */
    int ok;
    dp_nodes body;  /* when ok */
    int ntemps;     /* the temporaries counter after it */
    dp_error err;   /* when not ok */
} dc_memo;

/* The kinds of use in the memo's keys: a body kind, or a scope's path. */
enum { USE_SCOPE = 7 };

int dc_scope_path(dc *outer, int site, const dp_code *code) {
    dc_shared *sh = outer->sh;
    uintptr_t use = (uintptr_t)(unsigned)site << 3 | USE_SCOPE;
    int *path = dp_ptrmap_get(&sh->memo, (uintptr_t)outer->path, use, (uintptr_t)code);
    if (path == NULL) {
        if ((path = dp_alloc(sh->ar, sizeof *path)) == NULL ||
            dp_ptrmap_put(sh->ar, &sh->memo, (uintptr_t)outer->path, use, (uintptr_t)code, path) < 0)
            return dp_fail(sh->err, -1, "out of memory");
        *path = ++sh->npaths;
    }
    return *path;
}

/* code_body_validated for the use `site` (the index of its MAKE_FUNCTION,
 * X_FUNC's op) of `code` in `outer` (NULL: the top level), once per use:
 * tried again, the use gives the same statements (or error) without work.
 * `d` is set up only when the work is done. */
static int code_body(dc_shared *sh, const dp_code *code, dc *outer, int site, int kind, dp_nodes *body, dc *d) {
    if (outer == NULL)
        return code_body_validated(sh, code, NULL, kind, 0, body, d);
    uintptr_t use = (uintptr_t)(unsigned)site << 3 | (uintptr_t)kind;
    dc_memo *m = dp_ptrmap_get(&sh->memo, (uintptr_t)outer->path, use, (uintptr_t)code);
    if (m != NULL) {
        if (!m->ok) {
            if (!sh->err->set)
                *sh->err = m->err;
            return -1;
        }
        *body = m->body; /* (no room left: an append copies the list) */
        if (sh->ntemps < m->ntemps)
            sh->ntemps = m->ntemps;
        return 0;
    }
    int path = ++sh->npaths;
    int rc = code_body_validated(sh, code, outer, kind, path, body, d);
    if (sh->limit_hit || sh->ar->failed) /* (fatal: nothing is tried again) */
        return rc;
    if ((m = dp_alloc(sh->ar, sizeof *m)) == NULL ||
        dp_ptrmap_put(sh->ar, &sh->memo, (uintptr_t)outer->path, use, (uintptr_t)code, m) < 0)
        return dp_fail(sh->err, -1, "out of memory");
    m->path = path;
    m->ok = rc == 0;
    m->ntemps = sh->ntemps;
    if (rc < 0) {
        m->err = *sh->err;
        return rc;
    }
    m->body.n = m->body.cap = body->n;
    if (body->n > 0) {
        if ((m->body.v = dp_alloc_array(sh->ar, (size_t)body->n, sizeof *m->body.v)) == NULL)
            return dp_fail(sh->err, -1, "out of memory");
        memcpy(m->body.v, body->v, (size_t)body->n * sizeof *body->v);
    }
    return 0;
}

/* ---- signatures ---- */

static dp_node *arg_node(dc *d, const char *name) {
    dp_node *a = dc_node(d, E_ARG);
    if (a)
        a->s = name;
    return a;
}

/* Values of a defaults tuple: a constant tuple or a BUILD_TUPLE. */
static int tuple_items(dc *d, dp_node *t, dp_nodes *out) {
    if (t == NULL)
        return 0;
    if (t->kind == E_TUPLE) {
        *out = t->l1;
        return 0;
    }
    if (dc_is_const_kind(t, DP_CONST_TUPLE)) {
        for (size_t k = 0; k < t->cst->n; k++)
            if (dc_add(d, out, dc_const(d, t->cst->items[k])) < 0)
                return -1;
        return 0;
    }
    return dc_fail(d, -1, "function defaults are not a tuple");
}

static dp_node *find_arg(dp_node *args, const char *name) {
    dp_nodes *lists[2] = {&args->l1, &args->l2};
    for (int l = 0; l < 2; l++)
        for (int k = 0; k < lists[l]->n; k++)
            if (strcmp(lists[l]->v[k]->s, name) == 0)
                return lists[l]->v[k];
    if (args->a && strcmp(args->a->s, name) == 0)
        return args->a;
    if (args->b && strcmp(args->b->s, name) == 0)
        return args->b;
    return NULL;
}

static int apply_annotations(dc *d, dp_node *args, dp_node *ann, dp_node **returns) {
    dp_nodes keys = {0}, vals = {0};
    if (ann->kind == E_DICT) {
        keys = ann->l1;
        vals = ann->l2;
    } else {
        dp_nodes flat = {0};
        if (tuple_items(d, ann, &flat) < 0)
            return -1;
        for (int k = 0; k + 1 < flat.n; k += 2)
            if (dc_add(d, &keys, flat.v[k]) < 0 || dc_add(d, &vals, flat.v[k + 1]) < 0)
                return -1;
    }
    for (int k = 0; k < keys.n; k++) {
        if (!dc_is_const_kind(keys.v[k], DP_CONST_STR))
            return dc_fail(d, -1, "annotation key is not a name");
        const char *name = keys.v[k]->cst->text;
        dp_node *v = dc_annotation(d, vals.v[k]);
        if (v == NULL)
            return -1;
        if (strcmp(name, "return") == 0) {
            *returns = v;
            continue;
        }
        dp_node *a = find_arg(args, name);
        if (a == NULL)
            return dc_fail(d, -1, "annotation for unknown parameter %s", name);
        a->a = v;
    }
    return 0;
}

/* The parameter list of `code`, with defaults/annotations from `fn`. */
static dp_node *arguments(dc *d, const dp_code *code, dp_node *fn, dp_node **returns) {
    dp_node *args = dc_node(d, E_ARGUMENTS);
    if (args == NULL)
        return NULL;
    int npos = code->argcount, nkw = code->kwonlyargcount;
    /* 64-bit: hostile counts must not overflow */
    long long need = (long long)npos + nkw + !!(code->flags & DP_CO_VARARGS) + !!(code->flags & DP_CO_VARKEYWORDS);
    if (npos < 0 || nkw < 0 || need > (long long)code->varnames.n || code->posonlyargcount > npos ||
        code->posonlyargcount < 0) {
        dc_fail(d, -1, "argument counts do not match co_varnames");
        return NULL;
    }
    int k = 0;
    for (; k < npos; k++)
        if (dc_add(d, &args->l1, arg_node(d, code->varnames.v[k])) < 0)
            return NULL;
    args->op = code->posonlyargcount;
    for (int q = 0; q < nkw; q++, k++)
        if (dc_add(d, &args->l2, arg_node(d, code->varnames.v[k])) < 0)
            return NULL;
    if (code->flags & DP_CO_VARARGS && (args->a = arg_node(d, code->varnames.v[k++])) == NULL)
        return NULL;
    if (code->flags & DP_CO_VARKEYWORDS && (args->b = arg_node(d, code->varnames.v[k++])) == NULL)
        return NULL;
    args->op2 = nkw > 0 && args->a == NULL;
    if (fn == NULL)
        return args;
    dp_nodes defs = {0};
    if (tuple_items(d, fn->a, &defs) < 0)
        return NULL;
    if (defs.n > npos) {
        dc_fail(d, -1, "more defaults than parameters");
        return NULL;
    }
    for (int q = 0; q < defs.n; q++)
        args->l1.v[npos - defs.n + q]->b = defs.v[q];
    if (fn->b) {
        if (fn->b->kind != E_DICT) {
            dc_fail(d, -1, "keyword defaults are not a dict");
            return NULL;
        }
        for (int q = 0; q < fn->b->l1.n; q++) {
            dp_node *key = fn->b->l1.v[q];
            dp_node *a = dc_is_const_kind(key, DP_CONST_STR) ? find_arg(args, key->cst->text) : NULL;
            if (a == NULL) {
                dc_fail(d, -1, "keyword default for unknown parameter");
                return NULL;
            }
            a->b = fn->b->l2.v[q];
        }
    }
    if (fn->c && apply_annotations(d, args, fn->c, returns) < 0)
        return NULL;
    return args;
}

static int is_async(const dp_code *code) {
    return (code->flags & (DP_CO_COROUTINE | DP_CO_ASYNC_GENERATOR)) != 0;
}

dp_node *dc_funcdef(dc *d, dp_node *fn, const char *name, int at) {
    const dp_code *code = fn->cst->code;
    dp_node *def = dc_stmt(d, S_FUNCTIONDEF, at);
    if (def == NULL)
        return NULL;
    def->s = name;
    def->op = is_async(code);
    if ((def->c = arguments(d, code, fn, &def->b)) == NULL)
        return NULL;
    dc sub;
    if (code_body(d->sh, code, d, fn->op, BODY_FUNCTION, &def->l1, &sub) < 0)
        return NULL;
    return def;
}

/* The value statements body[from..] return, as one expression: `return
 * x`, or `if c: <returns a>` then <returns b> (or its else), which is
 * `a if c else b` (a lambda's conditional expression compiles so where
 * both branches return: CPython copies the RETURN into each). */
static dp_node *returned_value(dc *d, const dp_nodes *body, int from, int depth) {
    if (from >= body->n || depth > DP_MAX_NESTING)
        return NULL;
    const dp_node *s = body->v[from];
    if (s->kind == S_RETURN)
        return from == body->n - 1 ? s->a : NULL;
    if (s->kind != S_IF || (s->l2.n > 0 && from != body->n - 1))
        return NULL;
    dp_node *e = dc_node(d, E_IFEXP);
    if (e == NULL || (e->b = returned_value(d, &s->l1, 0, depth + 1)) == NULL)
        return NULL;
    e->c = s->l2.n > 0 ? returned_value(d, &s->l2, 0, depth + 1) : returned_value(d, body, from + 1, depth + 1);
    e->a = s->a;
    return e->c ? e : NULL;
}

/* The value a lambda whose body is `body` returns, NULL when the body is
 * no single expression.  Generator lambdas end with an implicit `return
 * None` after the yield (the statements are left as they are: another use
 * may get them). */
static dp_node *lambda_value(dc *d, const dp_nodes *body) {
    if (body->n == 2 && body->v[0]->kind == S_EXPR && is_return_none(body->v[1])) {
        dp_node *ret = dc_node(d, S_RETURN);
        dp_nodes one = {0};
        if (ret == NULL || dc_add(d, &one, ret) < 0)
            return NULL;
        ret->a = body->v[0]->a;
        return returned_value(d, &one, 0, 0);
    }
    return returned_value(d, body, 0, 0);
}

dp_node *dc_lambda(dc *d, dp_node *fn, int at) {
    const dp_code *code = fn->cst->code;
    dp_node *lam = dc_node(d, E_LAMBDA);
    dp_node *ret = NULL;
    if (lam == NULL || (lam->a = arguments(d, code, fn, &ret)) == NULL)
        return NULL;
    dc sub;
    dp_nodes body = {0};
    if (code_body(d->sh, code, d, fn->op, BODY_LAMBDA, &body, &sub) < 0)
        return NULL;
    if ((lam->b = lambda_value(d, &body)) == NULL) {
        dc_fail(d, at, "lambda body is not a single expression");
        return NULL;
    }
    return lam;
}

/* ---- comprehensions ---- */

dp_node *dc_comprehension(dc *d, dp_node *fn, dp_node *iter, int at) {
    const dp_code *code = fn->cst->code;
    int kind = E_GENEXP;
    if (strcmp(code->name, "<listcomp>") == 0) kind = E_LISTCOMP;
    else if (strcmp(code->name, "<setcomp>") == 0) kind = E_SETCOMP;
    else if (strcmp(code->name, "<dictcomp>") == 0) kind = E_DICTCOMP;
    dc sub;
    dp_nodes body = {0};
    if (code_body(d->sh, code, d, fn->op, BODY_COMPREHENSION, &body, &sub) < 0)
        return NULL;
    dp_node *comp = dc_node(d, kind);
    if (comp == NULL || dc_comp_clauses(d, &body, comp, NULL, iter) < 0)
        return NULL;
    comp->op2 = (code->flags & DP_CO_COROUTINE) != 0; /* awaited where it is built */
    if (comp->l1.n == 0 || comp->a == NULL) {
        dc_fail(d, at, "malformed comprehension");
        return NULL;
    }
    return comp;
}

/* ---- classes ---- */

dp_node *dc_classdef(dc *d, dp_node *call, const char *name, int at) {
    if (call->l1.n < 2 || call->l1.v[0]->kind != X_FUNC) {
        dc_fail(d, at, "malformed class creation");
        return NULL;
    }
    dp_node *cls = dc_stmt(d, S_CLASSDEF, at);
    if (cls == NULL)
        return NULL;
    cls->s = name;
    for (int k = 2; k < call->l1.n; k++)
        if (dc_add(d, &cls->l3, call->l1.v[k]) < 0)
            return NULL;
    for (int k = 0; k < call->l2.n; k++)
        if (dc_add(d, &cls->l3, call->l2.v[k]) < 0)
            return NULL;
    dc sub;
    if (code_body(d->sh, call->l1.v[0]->cst->code, d, call->l1.v[0]->op, BODY_CLASS, &cls->l1, &sub) < 0)
        return NULL;
    return cls;
}

/* ---- entry point ---- */

/* The defaults a caller passed for a live function, in the shape
 * arguments() takes from MAKE_FUNCTION; NULL when there are none. */
static dp_node *live_defaults(dc *d, const dp_options *opt) {
    if (opt == NULL || (opt->defaults == NULL && opt->kwdefaults == NULL))
        return NULL;
    dp_node *fn = dc_node(d, X_FUNC);
    if (fn == NULL)
        return NULL;
    if (opt->defaults && opt->defaults->kind == DP_CONST_TUPLE && opt->defaults->n)
        fn->a = dc_const(d, opt->defaults);
    if (opt->kwdefaults && opt->kwdefaults->kind == DP_CONST_TUPLE && opt->kwdefaults->n) {
        if ((fn->b = dc_node(d, E_DICT)) == NULL)
            return NULL;
        for (size_t k = 0; k < opt->kwdefaults->n; k++) {
            const dp_const *pair = opt->kwdefaults->items[k];
            if (pair->kind != DP_CONST_TUPLE || pair->n != 2 || pair->items[0]->kind != DP_CONST_STR) {
                dc_fail(d, -1, "keyword defaults must be (name, value) pairs");
                return NULL;
            }
            if (dc_add(d, &fn->b->l1, dc_const(d, pair->items[0])) < 0 ||
                dc_add(d, &fn->b->l2, dc_const(d, pair->items[1])) < 0)
                return NULL;
        }
    }
    return fn;
}

typedef struct linemap_ctx {
    dp_linemap *map;
    int oom;
} linemap_ctx;

static void on_stmt(void *ctx, const dp_node *stmt, int line) {
    linemap_ctx *c = ctx;
    if (stmt->offset < 0 || stmt->nested || c->oom)
        return;
    dp_linemap *m = c->map;
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        dp_linemap_entry *e = realloc(m->entries, cap * sizeof *e);
        if (e == NULL) {
            c->oom = 1;
            return;
        }
        m->entries = e;
        m->cap = cap;
    }
    m->entries[m->n].offset = stmt->offset;
    m->entries[m->n].line = line;
    m->n++;
}

/* The printer's named constants, copied out for the caller (dp_options.named). */
static int export_named(const dp_printer *p, dp_named_out *named) {
    size_t n = dp_printer_nnamed(p);
    named->v = n ? malloc(n * sizeof *named->v) : NULL;
    if (n && named->v == NULL)
        return -1;
    for (size_t k = 0; k < n; k++)
        named->v[k] = dp_printer_named(p, k);
    named->n = n;
    return 0;
}

static int cmp_entry(const void *a, const void *b) {
    const dp_linemap_entry *x = a, *y = b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* A function decompiled on its own whose name is no identifier (`<lambda>`,
 * `<genexpr>`: a code object taken from a function, or Dynamo's code for a
 * lambda) prints under a valid name: its letters, digits and underscores,
 * with `_` before them where that is no identifier (`_lambda`).  The
 * argument `.0` of a comprehension becomes `__iter`.  NULL: out of memory. */
static const dp_code *valid_name(dp_arena *ar, const dp_code *code, const char *def_name) {
    if (dc_is_identifier(code->name) && def_name == NULL)
        return code;
    size_t n = strlen(code->name);
    char *name = dp_alloc(ar, n + 2);
    dp_code *copy = dp_alloc(ar, sizeof *copy);
    if (name == NULL || copy == NULL)
        return NULL;
    size_t k = 1;
    for (const char *c = code->name; *c; c++)
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
            (unsigned char)*c >= 0x80)
            name[k++] = *c;
    name[k] = '\0';
    name[0] = '_';
    *copy = *code;
    copy->name = def_name ? def_name : dc_is_identifier(name + 1) ? name + 1 : name;
    if (code->varnames.n > 0 && strcmp(code->varnames.v[0], ".0") == 0) {
        const char **v = dp_alloc_array(ar, code->varnames.n, sizeof *v);
        if (v == NULL)
            return NULL;
        memcpy(v, code->varnames.v, code->varnames.n * sizeof *v);
        v[0] = "__iter";
        copy->varnames.v = v;
    }
    return copy;
}

/* x * f + floor, saturating. */
static size_t budget(size_t x, size_t f, size_t floor) {
    return x > (SIZE_MAX - floor) / f ? SIZE_MAX : x * f + floor;
}

/* The budgets of depyf.h for `code` (and a live function's defaults). */
static int set_budgets(dc_shared *sh, const dp_code *code, const dp_options *opt) {
    dp_ptrmap seen = {0};
    if (dp_size_code(sh->ar, &seen, code, &sh->use.input) < 0 ||
        (opt && opt->defaults && dp_size_const(sh->ar, &seen, opt->defaults, &sh->use.input) < 0) ||
        (opt && opt->kwdefaults && dp_size_const(sh->ar, &seen, opt->kwdefaults, &sh->use.input) < 0))
        return dp_fail(sh->err, -1, "out of memory");
    sh->work_limit = budget(sh->use.input.bytecode, DP_WORK_FACTOR, DP_WORK_FLOOR);
    sh->output_limit = budget(sh->use.input.bytes, DP_OUTPUT_FACTOR, DP_OUTPUT_FLOOR);
    sh->validation_limit = budget(sh->use.input.bytes, DP_VALIDATION_FACTOR, DP_VALIDATION_FLOOR);
    return 0;
}

/* Why an allocation failed, as reported: the memory budget names itself. */
static void memory_error(dp_error *err, const dp_arena *ar) {
    char why[200];
    dp_arena_why(ar, "the decompilation", why, sizeof why);
    dp_error_init(err);
    dp_fail(err, -1, "%s", why);
}

int dp_decompile(const dp_code *code, const dp_options *opt, dp_buf *out, dp_error *err) {
    dp_arena ar;
    dp_arena_init(&ar);
    if (opt)
        ar.limit = opt->memory_limit;
    dc_shared sh = {.ar = &ar, .err = err, .opt = opt};
    dc d;
    dp_nodes body = {0};
    int rc = -1;
    size_t out_start = out->len, out_limit = out->limit;
    if (set_budgets(&sh, code, opt) < 0)
        goto out;
    int is_module = strcmp(code->name, "<module>") == 0;
    /* a class body taken on its own (no fast locals, a real name) prints as
     * the class statement without bases: a def would read its names as
     * globals and show the compiler's prologue */
    int is_class = !is_module && !(code->flags & DP_CO_NEWLOCALS) && code->name[0] != '<';
    const char *def_name = opt ? opt->def_name : NULL;
    int is_lambda = strcmp(code->name, "<lambda>") == 0 && def_name == NULL;
    sh.lambda_alone = is_lambda;
    if (def_name != NULL && !dc_is_identifier(def_name)) {
        dp_fail(err, -1, "the def name %.80s is not an identifier", def_name);
        goto out;
    }
    const dp_code *named = is_module || is_class ? code : valid_name(&ar, code, def_name);
    if (named == NULL) {
        dp_fail(err, -1, "out of memory");
        goto out;
    }
    code = named;
    if (code_body(&sh, code, NULL, -1, is_module ? BODY_MODULE : is_class ? BODY_CLASS : BODY_FUNCTION, &body, &d) < 0)
        goto out;
    dp_nodes top = body;
    if (is_class) {
        dp_node *cls = dc_node(&d, S_CLASSDEF);
        dp_nodes one = {0};
        if (cls == NULL || dc_add(&d, &one, cls) < 0)
            goto out;
        cls->s = code->name;
        cls->l1 = body;
        top = one;
    }
    else if (!is_module) {
        dp_node *def = dc_node(&d, S_FUNCTIONDEF);
        dp_nodes one = {0};
        if (def == NULL || dc_add(&d, &one, def) < 0)
            goto out;
        def->s = code->name;
        def->op = is_async(code);
        def->l1 = body;
        dp_node *fn = live_defaults(&d, opt);
        if (d.sh->err->set || (def->c = arguments(&d, code, fn, &def->b)) == NULL)
            goto out;
        top = one;
        /* (validated as this lambda, code_body_validated) */
        dp_node *lam = is_lambda && !d.used_fallback ? lambda_statement(&d, def) : NULL;
        if (lam != NULL)
            one.v[0] = lam;
    }
    /* (the def or class around the body: the body was checked) */
    if (top.v != body.v && dp_ast_check(&top, 0, MAX_TREE_DEPTH, err) < 0)
        goto out;
    dp_printer p;
    /* (the caller's own limit, if any, stays in force) */
    if (sh.output_limit <= SIZE_MAX - out_start && (out_limit == 0 || out_start + sh.output_limit < out_limit))
        out->limit = out_start + sh.output_limit;
    dp_printer_init(&p, out, opt ? opt->indent : 4, err);
    p.py_minor = code->py_minor; /* output language: the syntax the code's Python accepts */
    linemap_ctx lm = {opt ? opt->linemap : NULL, 0};
    if (lm.map) {
        p.on_stmt = on_stmt;
        p.ctx = &lm;
    }
    int printed = dp_print_block(&p, &top, 0);
    if (printed == 0 && opt && opt->named && export_named(&p, opt->named) < 0)
        printed = dp_fail(err, -1, "out of memory");
    dp_printer_free(&p);
    if (printed < 0)
        goto out;
    if (lm.oom || !dp_buf_ok(out)) {
        dp_fail(err, -1, "out of memory");
        goto out;
    }
    /* the output is text: no name or text of the input may be other bytes
     * (a bytes constant in the place of a str one, in damaged code) */
    size_t bad = out->len > out_start ? dp_utf8_invalid_at(out->data + out_start, out->len - out_start) : 0;
    if (bad < out->len - out_start) {
        dp_fail(err, -1, "a name or text of the code is not UTF-8 (byte %zu of the source would be 0x%02x)", bad,
                (unsigned char)out->data[out_start + bad]);
        goto out;
    }
    if (lm.map && lm.map->n > 1) /* statements do not print in offset order (loops, else blocks): sort */
        qsort(lm.map->entries, lm.map->n, sizeof *lm.map->entries, cmp_entry);
    rc = 0;
out:
    if (out->over && !sh.limit_hit) {
        dp_error_init(err);
        dp_fail(err, -1,
                "the output limit: the source would be longer than %zu bytes (%d times the input's %zu, + %zu "
                "MiB): constants or code objects used many times are printed once per use",
                sh.output_limit, DP_OUTPUT_FACTOR, sh.use.input.bytes, DP_OUTPUT_FLOOR >> 20);
    } else if (rc < 0 && ar.failed) {
        memory_error(err, &ar);
    }
    out->limit = out_limit;
    sh.use.output = out->len - out_start;
    sh.use.memory = ar.used_total;
    if (opt && opt->usage)
        *opt->usage = sh.use;
    dp_error_where(err, code->qualname);
    dp_arena_free(&ar);
    return rc;
}
