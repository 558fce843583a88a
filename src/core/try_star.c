/* `except*` clauses (PEP 654, 3.11+), read from the handler CPython emits
 * for them.  The handler keeps the exception group, a list of what the
 * clauses raise and the part not yet matched on the stack:
 *
 *   PUSH_EXC_INFO; COPY 1; BUILD_LIST; SWAP 2      (3.12+: BUILD_LIST; COPY 2)
 *   per clause:  <type>; CHECK_EG_MATCH; COPY 1; POP_JUMP_IF_NONE nomatch
 *                STORE e | POP_TOP; <body>; [e = None; del e] [LIST_APPEND 1] JUMP next
 *                T: [e = None; del e] LIST_APPEND 3; POP_TOP [LIST_APPEND 1] JUMP next
 *                (3.11/3.12: a JUMP threading to next)
 *      nomatch:  POP_TOP
 *   LIST_APPEND 1; PREP_RERAISE_STAR; COPY 1; POP_JUMP_IF_NOT_NONE R
 *   POP_TOP; POP_EXCEPT; <the way to the code after the try>
 *   R: SWAP 2; POP_EXCEPT; RERAISE
 *
 * T is the clause body's own handler: what the body raises joins the list.
 * A clause cannot return, break or continue (a SyntaxError), so its body
 * either goes on to the next clause or raises.  Everything here is checked
 * by translation validation afterwards; what does not fit is refused. */
#include <string.h>

#include "dc.h"

static int op_at(const dc *d, int j) {
    return j >= 0 && j < d->n ? d->in[j].op : -1;
}

/* The first clause's test after the prologue of the handler at H, or -1. */
static int first_clause(const dc *d, int H) {
    if (op_at(d, H + 1) == IR_COPY && d->in[H + 1].arg == 1 && op_at(d, H + 2) == IR_BUILD_LIST &&
        op_at(d, H + 3) == IR_SWAP && d->in[H + 3].arg == 2)
        return H + 4;
    if (op_at(d, H + 1) == IR_BUILD_LIST && d->in[H + 1].arg == 0 && op_at(d, H + 2) == IR_COPY &&
        d->in[H + 2].arg == 2)
        return H + 3;
    return -1;
}

int dc_is_except_star(const dc *d, int H) {
    return op_at(d, H) == IR_PUSH_EXC_INFO && first_clause(d, H) >= 0;
}

static int is_store(int op) {
    return op == IR_STORE_FAST || op == IR_STORE_NAME || op == IR_STORE_DEREF || op == IR_STORE_GLOBAL;
}

static int is_delete(int op) {
    return op >= IR_DELETE_NAME && op <= IR_DELETE_DEREF;
}

/* `e = None; del e` at j for the clause's name (NULL: none). */
static int is_name_cleanup(const dc *d, int j, const char *name) {
    return name != NULL && op_at(d, j) == IR_LOAD_CONST && is_store(op_at(d, j + 1)) && is_delete(op_at(d, j + 2)) &&
           d->in[j + 1].name && d->in[j + 2].name && strcmp(d->in[j + 1].name, name) == 0 &&
           strcmp(d->in[j + 2].name, name) == 0;
}

/* The body's handler T in (b, nomatch): `[e = None; del e] LIST_APPEND 3;
 * POP_TOP`, an exception-table target; the last one (those of except*
 * statements nested in the body come before it), or -1. */
static int body_handler(const dc *d, int b, int nomatch, const char *name) {
    for (int t = nomatch - 1; t > b; t--) {
        if (d->nref[t] == 0)
            continue;
        int k = is_name_cleanup(d, t, name) ? t + 3 : t;
        if (op_at(d, k) == IR_LIST_APPEND && d->in[k].arg == 3 && op_at(d, k + 1) == IR_POP_TOP)
            return t;
    }
    return -1;
}

/* Can j be glue of the clauses (cleanups, the list, jumps to the next)? */
static int is_glue(int op) {
    return op == IR_NOP || op == IR_JUMP || op == IR_LIST_APPEND || op == IR_POP_TOP || op == IR_LOAD_CONST ||
           is_store(op) || is_delete(op);
}

/* Where the body [b, end) hands over to the clause's way out: before its
 * `[e = None; del e] [LIST_APPEND 1] JUMP next`, when it falls into it. */
static int body_tail(const dc *d, int b, int end, const char *name) {
    int t = end;
    if (t - 1 >= b && op_at(d, t - 1) == IR_JUMP && d->in[t - 1].target >= t)
        t--;
    else
        return t;
    if (t - 1 >= b && op_at(d, t - 1) == IR_LIST_APPEND && d->in[t - 1].arg == 1)
        t--;
    if (t - 3 >= b && is_name_cleanup(d, t - 3, name))
        t -= 3;
    return t;
}

/* The length of `return <constant or local, or a tuple of them>` at j (CPython copies it into
 * the jumps to it), or 0. */
static int return_copy_len(const dc *d, int j) {
    int k = j;
    while (k < d->n && k < j + 8 &&
           (d->in[k].op == IR_LOAD_CONST || d->in[k].op == IR_LOAD_FAST || d->in[k].op == IR_NOP ||
            (d->in[k].op == IR_BUILD_TUPLE && k > j)))
        k++;
    return k > j && op_at(d, k) == IR_RETURN_VALUE ? k + 1 - j : 0;
}

static int same_code(const dc *d, int a, int b, int len) {
    for (int k = 0; k < len; k++)
        if (!dc_same_instr(&d->in[a + k], &d->in[b + k]))
            return 0;
    return 1;
}

/* 3.13 copies the clause's way out [tail, end) into the branches of the
 * body that fall into it: jumps there again, as in the source, so that
 * the branches read as ending the body (the copy's code becomes NOPs). */
static void unthread_tail_copies(dc *d, int b, int tail, int end) {
    int len = end - tail;
    if (len < 2 || d->in[end - 1].op != IR_JUMP)
        return;
    for (int j = b; j + len <= tail; j++) {
        int same = 1;
        for (int k = 0; k < len && same; k++)
            same = dc_same_instr(&d->in[j + k], &d->in[tail + k]) && (k == 0 || d->nref[j + k] == 0) &&
                   dc_handler_at(d, j + k) == dc_handler_at(d, tail + k);
        if (!same || d->in[j + len - 1].target != d->in[end - 1].target)
            continue;
        for (int k = 0; k < len - 1; k++) {
            dp_instr *y = dc_edit(d, j + k);
            y->op = IR_NOP;
            y->arg = 0;
        }
        dp_instr *x = dc_edit(d, j + len - 1);
        dc_set(d, &d->nref[x->target], d->nref[x->target] - 1);
        x->target = tail;
        dc_set(d, &d->nref[tail], d->nref[tail] + 1);
        j += len - 1;
    }
}

/* The end of the exit [j, end) (straight-line code up to its return or
 * raise, which nothing else jumps into) that CPython inlines where a
 * handler goes on to it, or -1. */
static int small_exit_end(const dc *d, int j, int clean) {
    for (int k = j; k < clean && k < j + 8; k++) {
        int op = d->in[k].op;
        if (k > j && d->nref[k] > 0)
            return -1;
        if (op == IR_RETURN_VALUE || op == IR_RAISE)
            return k + 1;
        if (dc_is_jump(op) || op == IR_FOR_ITER || op == IR_RERAISE || op == IR_PUSH_EXC_INFO || op == IR_POP_EXCEPT)
            return -1;
    }
    return -1;
}

/* The clauses of the except* handler at H (see the top), into tr; `clean`
 * is the cleanup block protecting them, `exit` where the try goes on.
 * With `alone` (3.12+, a body that never completes, no join found): when
 * the handler goes on into the only copy of the code after the statement
 * (a small exit, inlined), alone[0..1] is its range, else alone[0] = -1. */
int dc_except_star_handlers(dc *d, dp_node *tr, int H, int clean, int exit, dc_stack *st, int *alone) {
    if (alone)
        alone[0] = -1;
    dp_node *prev = dc_node(d, X_PREV_EXC), *exc = dc_node(d, X_EXC);
    if (prev == NULL || exc == NULL)
        return -1;
    int p = first_clause(d, H);
    if (p < 0)
        return dc_fail(d, H, "malformed except* handler");
    dc_seen(d, H + 1, p);
    tr->op = 1;
    while (p < clean && d->in[p].op != IR_LIST_APPEND && d->in[p].op != IR_PREP_RERAISE_STAR) {
        dp_node *h = dc_stmt(d, S_EXCEPT, p);
        dc_stack tmp = {0};
        if (h == NULL || dc_add(d, &tr->l2, h) < 0 || dc_stack_copy(d, &tmp, st) < 0 || dc_push(d, &tmp, prev) < 0 ||
            dc_push(d, &tmp, exc) < 0)
            return -1;
        int q = p;
        while (q < clean && d->in[q].op != IR_CHECK_EG_MATCH) {
            if (dc_expr_step(d, q, &tmp) <= 0)
                return dc_fail(d, q, "unexpected code in an except* clause");
            q++;
        }
        if (op_at(d, q + 1) != IR_COPY || d->in[q + 1].arg != 1 || op_at(d, q + 2) != IR_POP_JUMP_IF_NONE)
            return dc_fail(d, q, "malformed except* clause");
        int nomatch = d->in[q + 2].target;
        if (nomatch <= q + 3 || nomatch >= clean || d->in[nomatch].op != IR_POP_TOP)
            return dc_fail(d, q, "malformed except* clause");
        if ((h->a = dc_top(d, &tmp, 0, q)) == NULL || dc_except_binding(d, h, q + 3) < 0)
            return -1;
        dc_seen(d, q, q + 4); /* CHECK_EG_MATCH, COPY, the jump, the binding */
        int b = q + 4;
        int T = body_handler(d, b, nomatch, h->s);
        int tail_end = T >= 0 ? T : nomatch, tail = body_tail(d, b, tail_end, h->s);
        unthread_tail_copies(d, b, tail, tail_end);
        if (dc_except_body(d, h, b, tail, tail, st, prev) < 0)
            return -1;
        if (h->l1.n == 0 && dc_add(d, &h->l1, dc_stmt(d, S_PASS, b)) < 0)
            return -1;
        for (int j = tail; j <= nomatch; j++) {
            if (d->seen[j])
                continue;
            if (!is_glue(d->in[j].op))
                return dc_fail(d, j, "unexpected code at the end of an except* clause");
            dc_mark(d, j);
        }
        p = nomatch + 1;
    }
    /* the epilogue: raise what is left, else go on after the try */
    int pr = p;
    while (pr < clean && (d->in[pr].op == IR_LIST_APPEND || d->in[pr].op == IR_JUMP || d->in[pr].op == IR_NOP))
        pr++;
    if (tr->l2.n == 0 || op_at(d, pr) != IR_PREP_RERAISE_STAR || op_at(d, pr + 1) != IR_COPY ||
        op_at(d, pr + 2) != IR_POP_JUMP_IF_NOT_NONE || op_at(d, pr + 3) != IR_POP_TOP ||
        op_at(d, pr + 4) != IR_POP_EXCEPT)
        return dc_fail(d, p, "malformed end of an except* handler");
    int R = d->in[pr + 2].target;
    if (R + 2 >= clean || op_at(d, R) != IR_SWAP || op_at(d, R + 1) != IR_POP_EXCEPT || op_at(d, R + 2) != IR_RERAISE)
        return dc_fail(d, pr, "malformed end of an except* handler");
    dc_seen(d, p, pr + 5);
    dc_seen(d, R, R + 3);
    int cont = pr + 5;
    if (d->seen[cont] || (d->in[cont].op == IR_JUMP && d->vjump[cont] < 0)) {
        dc_mark(d, cont); /* (a copy of the code after the try, taken by cold_join, or the jump there) */
        return 0;
    }
    /* (3.13: the statement ends an enclosing except* clause, whose way out
     * it copies: the part left joins the list, then to the next clause) */
    if (op_at(d, cont) == IR_LIST_APPEND && d->in[cont].arg == 1 && op_at(d, cont + 1) == IR_JUMP && exit >= 0 &&
        d->in[cont + 1].target == exit && d->nref[cont + 1] == 0) {
        dc_seen(d, cont, cont + 2);
        return 0;
    }
    /* 3.11: a copy of the code after the try (CPython inlines small exit
     * blocks): only a return of what that code returns */
    int len = return_copy_len(d, cont), found = 0;
    if (len > 0 && exit >= 0 && exit + len <= d->n)
        found = same_code(d, cont, exit, len);
    /* (a statement ending the function: its implicit `return None`) */
    int none = len == 2 && (exit < 0 || exit >= d->n) && d->in[cont].op == IR_LOAD_CONST && d->in[cont].cst &&
               d->in[cont].cst->kind == DP_CONST_NONE;
    /* (3.12+: the code after a statement whose body never completes is
     * only in its handler, even where a copy of the same code goes on
     * from an enclosing statement's handler too) */
    int e = !found && !none && alone ? small_exit_end(d, cont, clean) : -1;
    if (e > 0) {
        alone[0] = cont;
        alone[1] = e;
        return 0;
    }
    /* (where the region ends with the statement, the code after it is
     * the enclosing one's, or the function's end: copied elsewhere too;
     * translation validation checks that it is the same) */
    for (int j = 0; len > 0 && !found && j + len <= d->n; j++)
        found = j != cont && same_code(d, cont, j, len);
    found |= none;
    if (!found)
        return dc_fail(d, cont, "except* handler left for other code than after the try");
    dc_seen(d, cont, cont + len);
    return 0;
}

/* 3.11 places an except* statement's else clause after the handler: the
 * body jumps over it (to the else, or straight to where the statement
 * goes on, the jump threaded), and the handler, once no exception is left,
 * jumps to where the statement goes on.  For the handler at H of a body
 * ending at body_end: 1 with *else_at (the else clause, -1 if none) and
 * *after, else 0. */
int dc_except_star_layout(const dc *d, int H, int clean, int cend, int body_end, int *else_at, int *after) {
    int pr = -1;
    for (int j = H; j < clean; j++)
        if (d->in[j].op == IR_PREP_RERAISE_STAR && op_at(d, j + 4) == IR_POP_EXCEPT)
            pr = j;
    int j = body_end;
    while (op_at(d, j) == IR_NOP)
        j++;
    int t2 = op_at(d, pr + 5) == IR_JUMP ? d->in[pr + 5].target : -1;
    if (!dc_is_except_star(d, H) || pr < 0)
        return 0;
    /* (in a loop: the end of a last statement the table does not cover,
     * the pops before a return) */
    int k = t2 >= 0 && dc_is_loop_head(d, t2) ? j : H;
    while (k < H && k < j + 8 && !dc_is_jump(d->in[k].op) && (k == j || d->nref[k] == 0) &&
           d->in[k].op != IR_RETURN_VALUE && d->in[k].op != IR_RAISE)
        k++;
    if (k < H && (d->in[k].op == IR_RETURN_VALUE || d->in[k].op == IR_RAISE) && k + 1 == H)
        j = H;
    int last = op_at(d, j - 1);
    if (j == H && t2 >= 0 && (last == IR_RAISE || last == IR_RERAISE || last == IR_RETURN_VALUE) &&
        (t2 >= cend || dc_is_loop_head(d, t2))) {
        /* (a body that never completes: no else, only the handler goes on) */
        *else_at = -1;
        *after = t2;
        return 1;
    }
    if (op_at(d, j) != IR_JUMP)
        return 0;
    int t1 = d->in[j].target;
    int len = return_copy_len(d, pr + 5);
    for (int x = t1; t2 < 0 && len > 0 && x >= cend && x + len <= d->n; x++)
        if (same_code(d, x, pr + 5, len))
            t2 = x; /* (the handler's copy of the code after the statement) */
    if (t1 == t2 && (t1 >= cend || dc_is_loop_head(d, t1))) {
        *else_at = -1;
        *after = t2;
        return 1;
    }
    if (t1 == cend && t2 > cend) {
        *else_at = t1;
        *after = t2;
        return 1;
    }
    return 0;
}
