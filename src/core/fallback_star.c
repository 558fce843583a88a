/* except* (PEP 654, 3.11+) in the state machine (fallback.c).
 *
 * An except* handler is an ordinary handler (PUSH_EXC_INFO ... POP_EXCEPT)
 * whose clauses test with CHECK_EG_MATCH and whose end computes what to
 * raise with PREP_RERAISE_STAR (3.12+: CALL_INTRINSIC_2, lifted to the same
 * IR op).  Both become calls of two helper functions printed at the top of
 * the machine, which do in Python what the interpreter does in C
 * (Python/ceval.c's exception_group_match, Objects/exceptions.c's
 * _PyExc_PrepReraiseStar): split the group with its own split(), tell
 * re-raised parts from raised ones by their traceback, cause and context,
 * and rebuild the re-raised part with BaseExceptionGroup.subgroup, which
 * derives each nested group as the interpreter's projection does.
 *
 * CHECK_EG_MATCH also makes the matched part the handled exception, which
 * a bare `raise` in the clause re-raises: the machine keeps it in
 * __egh<level> (None outside except* clauses), and RAISE_VARARGS 0 re-raises
 * it as the interpreter does, its traceback and context unchanged (the
 * raise that sends it to the handler would add to both; they are put back
 * as it leaves):
 *
 *     if __egh1 is not None:
 *         __t4 = (__egh1.__traceback__, __egh1.__context__)
 *         try:
 *             raise __egh1
 *         finally:
 *             __egh1.__traceback__, __egh1.__context__ = __t4
 *             __t4 = None
 *     raise
 *
 * Known difference: inside an except* clause sys.exc_info(), and so the
 * __context__ of an exception raised there, is the group the handler
 * caught, not the part the clause matched. */
#include <stdio.h>
#include <string.h>

#include "fallback.h"

/* Levels past this one share a variable (the machine is flat by then). */
#define EGH_LEVELS 32

/* The handled exception of except* clauses at `level`. */
static dp_node *egh_var(fb *F, int level) {
    if (level >= EGH_LEVELS)
        level = EGH_LEVELS - 1;
    if (level > F->egh_max)
        F->egh_max = level;
    return fb_marked_name(F, fb_make_name(F, "egh", level), FB_TEMP);
}

static dp_node *helper_call(fb *F, const char *what, dp_node *a1, dp_node *a2, dp_node *a3) {
    return fb_call_of(F, fb_marked_name(F, fb_make_name(F, what, -1), FB_TEMP), a1, a2, a3);
}

/* CHECK_EG_MATCH: [eg, type] -> [rest, match];
 * `rest, match, __egh<level> = __star_match(eg, type, __egh<level>)`. */
int fb_check_eg_match(fb *F) {
    dp_node *type = fb_pop(F), *eg = type ? fb_pop(F) : NULL;
    if (eg == NULL || fb_flush(F, F->st.n) < 0)
        return -1;
    dp_node *rest = fb_temp(F), *match = fb_temp(F), *egh = egh_var(F, F->cur->level);
    dp_node *targets = fb_node(F, E_TUPLE);
    if (rest == NULL || match == NULL || egh == NULL || targets == NULL || dc_add(F->d, &targets->l1, rest) < 0 ||
        dc_add(F->d, &targets->l1, match) < 0 || dc_add(F->d, &targets->l1, egh) < 0)
        return -1;
    if (fb_emit_assign(F, targets, helper_call(F, "star_match", eg, type, egh)) < 0)
        return -1;
    return (fb_push(F, rest, 0) < 0 || fb_push(F, match, 0) < 0) ? -1 : 0;
}

/* PREP_RERAISE_STAR: [orig, raised] -> [what the statement raises, or None]. */
int fb_prep_reraise_star(fb *F) {
    dp_node *raised = fb_pop(F), *orig = raised ? fb_pop(F) : NULL;
    if (orig == NULL)
        return -1;
    return fb_push(F, helper_call(F, "star_prep", orig, raised, NULL), 1);
}

/* RAISE_VARARGS 0 in code with except*: the matched part when a clause
 * handles one (see the top), else a bare `raise`. */
int fb_star_reraise(fb *F) {
    dc *d = F->d;
    dp_node *egh = egh_var(F, F->cur->level), *saved = fb_temp(F);
    dp_node *test = fb_stmt(F, S_IF), *tr = fb_stmt(F, S_TRY), *raise = fb_stmt(F, S_RAISE);
    dp_node *meta = fb_node(F, E_TUPLE), *attrs = fb_node(F, E_TUPLE);
    if (egh == NULL || saved == NULL || test == NULL || tr == NULL || raise == NULL || meta == NULL || attrs == NULL ||
        (test->a = fb_compare(F, egh, DP_CMP_IS_NOT, dc_none(d))) == NULL)
        return -1;
    static const char *const fields[2] = {"__traceback__", "__context__"};
    for (int k = 0; k < 2; k++)
        if (dc_add(d, &meta->l1, fb_attr(F, egh, fields[k])) < 0 || dc_add(d, &attrs->l1, fb_attr(F, egh, fields[k])) < 0)
            return -1;
    raise->a = egh;
    if (fb_emit_to(F, &test->l1, fb_assign_stmt(F, saved, meta)) < 0 || dc_add(d, &tr->l1, raise) < 0 ||
        fb_emit_to(F, &tr->l4, fb_assign_stmt(F, attrs, saved)) < 0 ||
        fb_emit_to(F, &tr->l4, fb_assign_stmt(F, saved, dc_none(d))) < 0 || dc_add(d, &test->l1, tr) < 0 ||
        fb_emit(F, test) < 0)
        return -1;
    return fb_emit_raise(F, NULL, NULL, F->out);
}

/* POP_EXCEPT ends the handler: no clause of it handles a matched part now. */
int fb_star_leave(fb *F) {
    return fb_emit_assign(F, egh_var(F, F->cur->level), dc_none(F->d));
}

/* Does the code use except*? */
int fb_uses_star(const dc *d) {
    for (int i = 0; i < d->n; i++)
        if (d->in[i].op == IR_CHECK_EG_MATCH || d->in[i].op == IR_PREP_RERAISE_STAR)
            return 1;
    return 0;
}

/* The helpers, as the interpreter of the code's version does it: 3.11
 * keeps the group itself when nothing matches and trusts split() to return
 * a pair; 3.12 takes split()'s rest and checks the pair. */
static const char MATCH_HEAD[] =
    "def %sstar_match(eg, kind, handled):\n"
    "    \"\"\"CHECK_EG_MATCH of an except* clause: (what is left of eg, the part\n"
    "    of it matching kind, the exception handled after it).\"\"\"\n"
    "    import builtins as b\n"
    "    kinds = kind if b.isinstance(kind, b.tuple) else (kind,)\n"
    "    for k in kinds:\n"
    "        if not (b.isinstance(k, b.type) and b.issubclass(k, b.BaseException)):\n"
    "            raise b.TypeError('catching classes that do not inherit from BaseException is not allowed')\n"
    "    for k in kinds:\n"
    "        if b.issubclass(k, b.BaseExceptionGroup):\n"
    "            raise b.TypeError('catching ExceptionGroup with except* is not allowed. Use except instead.')\n"
    "    if eg is None:\n"
    "        return None, None, handled\n"
    "    group = b.issubclass(b.type(eg), b.BaseExceptionGroup)\n"
    "    if b.issubclass(b.type(eg), kind):\n"
    "        match = eg if group else b.BaseExceptionGroup('', (eg,))\n"
    "        return None, match, match\n"
    "    if not group:\n"
    "        return eg, None, handled\n"
    "    pair = eg.split(kind)\n";
static const char MATCH_TAIL_311[] =
    "    if pair[0] is None:\n"
    "        return eg, None, handled\n"
    "    return pair[1], pair[0], pair[0]\n";
static const char MATCH_TAIL[] =
    "    name = b.type(eg).__name__\n"
    "    if b.type(pair) is not b.tuple:\n"
    "        raise b.TypeError(f'{name}.split must return a tuple, not {b.type(pair).__name__}')\n"
    "    if b.len(pair) < 2:\n"
    "        raise b.TypeError(f'{name}.split must return a 2-tuple, got tuple of size {b.len(pair)}')\n"
    "    return pair[1], pair[0], handled if pair[0] is None else pair[0]\n";
static const char PREP[] =
    "def %sstar_prep(orig, excs):\n"
    "    \"\"\"PREP_RERAISE_STAR at the end of an except* statement: what it raises\n"
    "    (None: nothing) of what its clauses raised (excs, the part no clause\n"
    "    matched last).  Parts with orig's traceback, cause and context were\n"
    "    re-raised: they keep their place in orig; the others join them in a\n"
    "    new group.\"\"\"\n"
    "    import builtins as b\n"
    "    G = b.BaseExceptionGroup\n"
    "    if not excs:\n"
    "        return None\n"
    "    if not b.issubclass(b.type(orig), G):\n"
    "        return excs[0]\n"
    "    raised, reraised = [], []\n"
    "    for e in excs:\n"
    "        if e is not None:\n"
    "            same = (e.__traceback__ is orig.__traceback__ and e.__cause__ is orig.__cause__\n"
    "                    and e.__context__ is orig.__context__)\n"
    "            (reraised if same else raised).append(e)\n"
    "    leaves, todo = b.set(), reraised[:]\n"
    "    while todo:\n"
    "        e = todo.pop()\n"
    "        if b.issubclass(b.type(e), G):\n"
    "            todo.extend(G.exceptions.__get__(e))\n"
    "        else:\n"
    "            leaves.add(b.id(e))\n"
    "    kept = G.subgroup(orig, lambda x: not b.issubclass(b.type(x), G) and b.id(x) in leaves)\n"
    "    if not raised:\n"
    "        return kept\n"
    "    if kept is not None:\n"
    "        raised.append(kept)\n"
    "    return G('', raised) if b.len(raised) > 1 else raised[0]";

/* The helper functions and `__egh0 = ... = None`, before the machine. */
int fb_star_prologue(fb *F, dp_nodes *out) {
    dc *d = F->d;
    /* (the semantics of the interpreter the output runs on, not layout) */
    const char *tail = d->code->py_minor == 11 ? MATCH_TAIL_311 : MATCH_TAIL;
    size_t len = sizeof MATCH_HEAD + strlen(tail) + sizeof PREP + 2 * strlen(F->pfx) + 8;
    char *text = dp_alloc(d->sh->ar, len);
    dp_node *defs = fb_node(F, S_COMMENT), *init = fb_node(F, S_ASSIGN);
    if (text == NULL || defs == NULL || init == NULL)
        return fb_oom(F);
    size_t n = (size_t)snprintf(text, len, MATCH_HEAD, F->pfx);
    n += (size_t)snprintf(text + n, len - n, "%s", tail);
    snprintf(text + n, len - n, PREP, F->pfx);
    defs->s = text;
    defs->op = 1; /* code */
    for (int k = 0; k <= F->egh_max; k++)
        if (dc_add(d, &init->l1, egh_var(F, k)) < 0)
            return -1;
    if ((init->b = dc_none(d)) == NULL || dc_add(d, out, defs) < 0)
        return -1;
    return init->l1.n ? dc_add(d, out, init) : 0;
}
