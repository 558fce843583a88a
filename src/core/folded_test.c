/* The constant of a folded `if __debug__:` (layout fact
 * keeps_folded_test_consts, 3.10/3.11).  The AST optimizer turns the test
 * into `True`; the compiler adds True to co_consts as it compiles the test
 * (`LOAD_CONST True; POP_JUMP_IF_FALSE`) and the peephole pass deletes the
 * two instructions but not the constant.  Source without the `if` compiles
 * to the same instructions over a pool one constant shorter, every later
 * index one off.  So when co_consts holds a True nothing reads (lift's
 * dp_irfunc.unused_true_before, only for a pool numbered as the compiler
 * numbers it), the statement at that place is put under `if True:`, which
 * compiles to nothing but that constant.  `if True:`, not `if __debug__:`:
 * under -O the latter would drop a body the bytecode runs. */
#include <string.h>

#include "dc.h"

#define MAX_DEPTH 2000 /* (deeper trees get no `if True:`) */

/* A True of the code's own (not of its nested code objects) in the tree of
 * n, `while True:` among them (whose True the peephole pass leaves unread
 * too): the compiler would add a True of its own.  -1: too deep to tell. */
static int makes_true(const dp_node *n, int depth) {
    if (n == NULL)
        return 0;
    if (depth > MAX_DEPTH)
        return -1;
    if ((n->kind == E_CONST || n->kind == P_SINGLETON) && n->cst != NULL && n->cst->kind == DP_CONST_TRUE)
        return 1;
    const dp_nodes *ls[4] = {&n->l1, &n->l2, &n->l3, &n->l4};
    for (int l = 0; l < 4; l++) {
        if (l == 0 && (n->kind == S_FUNCTIONDEF || n->kind == S_CLASSDEF)) /* (the body: another code object) */
            continue;
        for (int k = 0; k < ls[l]->n; k++) {
            int r = makes_true(ls[l]->v[k], depth + 1);
            if (r != 0)
                return r;
        }
    }
    int r = makes_true(n->a, depth + 1);
    if (r == 0 && n->kind != E_LAMBDA)
        r = makes_true(n->b, depth + 1);
    return r != 0 ? r : makes_true(n->c, depth + 1);
}

typedef struct place {
    dp_nodes *list;
    int k;
    int offset;
} place;

/* The statement of the lists of n (through except and case clauses and
 * spliced blocks) that starts last at or before `at`, into *best. */
static int last_before(dp_node *n, int at, place *best, int depth) {
    if (depth > MAX_DEPTH)
        return -1;
    dp_nodes *ls[4] = {&n->l1, &n->l2, &n->l3, &n->l4};
    for (int l = 0; l < 4; l++)
        for (int k = 0; k < ls[l]->n; k++) {
            dp_node *s = ls[l]->v[k];
            if (!dp_in_body(s))
                continue;
            if (s->kind == S_EXCEPT || s->kind == S_CASE || s->kind == S_BLOCK) {
                if (last_before(s, at, best, depth + 1) < 0)
                    return -1;
            } else if (s->offset >= 0 && s->offset <= at && s->offset >= best->offset) {
                *best = (place){ls[l], k, s->offset};
            }
        }
    return 0;
}

/* The innermost statement of `body` that starts at or before `at`: into
 * *where; 0 if none. */
static int innermost(dp_nodes *body, int at, place *where) {
    dp_node top = {0};
    top.l1 = *body;
    dp_node *n = &top;
    where->list = NULL;
    for (int depth = 0;; depth++) {
        place best = {NULL, 0, -1};
        if (depth > MAX_DEPTH || last_before(n, at, &best, 0) < 0)
            return -1;
        if (best.list == NULL)
            return where->list != NULL;
        *where = best;
        if (where->list == &top.l1)
            where->list = body;
        n = best.list->v[best.k];
        if (n->kind == S_FUNCTIONDEF || n->kind == S_CLASSDEF) /* (its body is another code object's) */
            return 1;
    }
}

int dc_folded_test(dc *d, dp_nodes *body) {
    int at = d->f.unused_true_before;
    if (!d->lay.keeps_folded_test_consts || at < 0 || d->used_fallback)
        return 0;
    for (int k = 0; k < body->n; k++)
        if (makes_true(body->v[k], 0) != 0)
            return 0;
    place p;
    if (innermost(body, at, &p) <= 0)
        return 0;
    dp_node *s = p.list->v[p.k];
    /* (never a docstring, nor a future import, which must come first) */
    if ((p.list == body && p.k == 0 && s->kind == S_EXPR && dc_is_const_kind(s->a, DP_CONST_STR)) ||
        (s->kind == S_IMPORTFROM && s->s != NULL && strcmp(s->s, "__future__") == 0))
        return 0;
    dp_const *t = dp_const_new(d->sh->ar, DP_CONST_TRUE);
    dp_node *ifs = dc_node(d, S_IF);
    if (t == NULL || ifs == NULL || (ifs->a = dc_const(d, t)) == NULL)
        return dc_fail(d, -1, "out of memory");
    ifs->line = s->line; /* (no offset: the line map keeps the statement's) */
    ifs->nested = s->nested;
    if (dc_add(d, &ifs->l1, s) < 0)
        return -1;
    p.list->v[p.k] = ifs;
    return 0;
}
