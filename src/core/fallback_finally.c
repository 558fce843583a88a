/* 3.8's finally machinery in the state machine (fallback.c). */
#include <stdio.h>
#include <string.h>

#include "fallback.h"

/* ------------------------------------------------------------------ 3.8 finally blocks */

/* CPython 3.8 enters a finally block three ways, told apart by the top of
 * the stack: NULL (BEGIN_FINALLY: the try body ended), a return address
 * (CALL_FINALLY: a return, break or continue leaves the try, and the
 * finally block goes back there) or, under an except-handler block, the six
 * values of an exception.  Each way in is another entry stack, so fb_reach()
 * gives each its own copy of the finally body's blocks (3.9's compiler
 * copies them too), and END_FINALLY, POP_FINALLY and WITH_CLEANUP_* know
 * statically which way they were entered: NULL and return addresses are
 * held by no variable, any other value there is an exception's type. */

static dp_node *ret_node(fb *F, int target) {
    dp_node *n = fb_node(F, X_OPAQUE);
    if (n) {
        n->op = target;
        n->fb.ret = 1;
    }
    return n;
}

static int push_null(fb *F) {
    dp_node *n = fb_node(F, X_NULL);
    return n ? fb_push(F, n, 0) : -1;
}

/* `break` out of the nested machine of a handler that ends here (a flat
 * machine drops it, see unflatten). */
static dp_node *leave_stmt(fb *F) {
    dp_node *s = fb_node(F, S_BREAK);
    if (s)
        s->fb.leave = 1;
    return s;
}

/* The except-handler block on top of the block stack ends (the handler of
 * an exception the finally block dropped). */
static int end_handler_block(fb *F, int i, dp_nodes *out) {
    if (F->nsetups == 0 || F->setups[F->nsetups - 1].handler >= 0)
        return fb_fail(F, i, "an exception's values outside its handler");
    int n = fb_running_handlers(F);
    F->nsetups--;
    return fb_handled_stmt(F, out, n, dc_none(F->d));
}

/* END_FINALLY: NULL goes on, a return address goes back, an exception
 * [tb, value, type] is raised again. */
static int end_finally(fb *F, int i) {
    dp_node *v = fb_pop(F), *value;
    if (v == NULL)
        return -1;
    if (v->kind == X_NULL || fb_ret_of(v) >= 0)
        return fb_continue_to(F, fb_block_at(F, v->kind == X_NULL ? i + 1 : fb_ret_of(v)));
    if (v->kind == E_CONST) /* hand-made code: no exception type, maybe a byte offset */
        return fb_fail(F, i, "END_FINALLY on a constant");
    if ((value = fb_pop(F)) == NULL || fb_pop(F) == NULL || fb_flush(F, F->st.n) < 0 || fb_clear_dead(F, F->out, value, 1) < 0)
        return -1;
    if (fb_no_var(value))
        return fb_fail(F, i, "END_FINALLY raising a NULL");
    return fb_emit_raise(F, value, NULL, F->out);
}

/* POP_FINALLY preserve_tos: drops what entered the finally block from under
 * the value on fb_top (if preserved); dropping an exception ends its handler. */
static int pop_finally(fb *F, int i) {
    dp_node *keep = NULL, *v;
    if (fb_flush(F, F->st.n) < 0 || (F->d->in[i].arg && (keep = fb_pop(F)) == NULL) || (v = fb_pop(F)) == NULL)
        return -1;
    int exc = !fb_no_var(v);
    for (int q = 0; exc && q < 5; q++)
        if (fb_pop(F) == NULL)
            return -1;
    if ((exc && end_handler_block(F, i, F->out) < 0) || (keep && fb_push(F, keep, 0) < 0))
        return -1;
    return exc ? fb_leave_handler(F, i) : fb_continue_to(F, fb_block_at(F, i + 1));
}

/* WITH_CLEANUP_START calls __exit__, found below what entered the block:
 *   [exit, NULL] -> [NULL, None, exit(None, None, None)]
 *   [exit, 3 saved, tb, value, type]
 *       -> [3 saved, NULL, tb, value, type, type, exit(type, value, tb)] */
static int with_cleanup_start(fb *F, int i) {
    dp_node *v = fb_top(F, 0);
    if (v == NULL || fb_flush(F, F->st.n) < 0)
        return -1;
    int n = F->st.n, exc = !fb_no_var(v), below = exc ? 7 : 2;
    if (fb_ret_of(v) >= 0 || n < below || fb_no_var(F->st.v[n - below]))
        return fb_fail(F, i, "WITH_CLEANUP_START without a with block's values");
    dp_node *c = fb_node(F, E_CALL);
    if (c == NULL)
        return -1;
    c->a = F->st.v[n - below];
    for (int k = 0; k < 3; k++)
        if (dc_add(F->d, &c->l1, exc ? F->st.v[n - 1 - k] : dc_none(F->d)) < 0)
            return -1;
    dp_node *res = fb_spill(F, c); /* __exit__ runs now */
    if (res == NULL)
        return -1;
    if (!exc) {
        F->st.n = n - 2;
        return (push_null(F) < 0 || fb_push(F, dc_none(F->d), 0) < 0) ? -1 : fb_push(F, res, 0);
    }
    for (int k = n - 7; k < n - 4; k++) {
        F->st.v[k] = F->st.v[k + 1];
        F->dep[k] = 0;
    }
    if ((F->st.v[n - 4] = fb_node(F, X_NULL)) == NULL)
        return -1;
    F->dep[n - 4] = 0;
    return (fb_push(F, v, 0) < 0) ? -1 : fb_push(F, res, 0);
}

/* WITH_CLEANUP_FINISH: [.., exc, result] -> [..]; when exc is an exception
 * and __exit__ returned true, the exception is swallowed: its handler ends,
 * the stack is cut below its 3 saved values and NULL pushed. */
static int with_cleanup_finish(fb *F, int i) {
    dp_node *res = fb_pop(F), *exc = res ? fb_pop(F) : NULL;
    if (exc == NULL || fb_flush(F, F->st.n) < 0)
        return -1;
    int next = fb_block_at(F, i + 1);
    if (dc_is_const_kind(exc, DP_CONST_NONE))
        return (!fb_is_atom(res) && fb_emit_expr(F, res) < 0) ? -1 : fb_continue_to(F, next);
    int n = F->st.n, exit_level = F->exit_level;
    if (n < 7)
        return fb_fail(F, i, "WITH_CLEANUP_FINISH without an exception's values");
    dp_node *s = fb_stmt(F, S_IF);
    dc_stack saved = {0};
    if (s == NULL || fb_clear_dead(F, F->out, res, 1) < 0 || (s->a = fb_lower(F, res, 0)) == NULL ||
        dc_stack_copy(F->d, &saved, &F->st) < 0)
        return -1;
    F->st.n = n - 7;
    if ((F->exit_level = F->cur->level - 1) < 0) {
        F->flat = 1;
        F->exit_level = 0;
    }
    if (end_handler_block(F, i, &s->l1) < 0 || push_null(F) < 0 || fb_jump_to(F, next, &s->l1) < 0 ||
        fb_emit_to(F, &s->l1, leave_stmt(F)) < 0)
        return -1;
    F->nsetups++;
    F->exit_level = exit_level;
    if (dc_stack_copy(F->d, &F->st, &saved) < 0 || fb_jump_to(F, next, &s->l2) < 0)
        return -1;
    return fb_emit(F, s);
}

/* (with why the structured form was not taken: the fallback runs only then) */
static int unsupported(fb *F, int i) {
    const dc *d = F->d;
    return dc_fail(F->d, i, "%s is not supported by the state-machine fallback yet (%s%s)", dp_irop_name(d->in[i].op),
                   d->refused ? "the structured form failed validation: " : "no structured form: ",
                   d->why[0] ? d->why : "no reason given");
}

/* Translates instruction i.  Returns 1 when it ends the block, 0 to go on
 * at *next, -1 on error. */
/* instr's groups of instructions: SW_NOT_MINE for another group's,
 * SW_BREAK where instr goes on with the expression step. */
enum { SW_NOT_MINE = 0x10000, SW_BREAK };

/* Loads, operators and values (instr): SW_NOT_MINE for the others. */
static int value_instr(fb *F, int i) {
    dc *d = F->d;
    const dp_instr *ins = &d->in[i];
    dp_node *v;
    switch (ins->op) {
    case IR_NOP:
        if (ins->arg2 != DP_NOP_TO_BOOL)
            return 0;
        return SW_BREAK; /* 3.13 TO_BOOL whose bool is used: `not not x` (expr.c) */
    case IR_RETURN_GENERATOR: case IR_STOPITERATION_ERROR:
        return 0;
    case IR_ASYNC_GEN_WRAP:
        return fb_top(F, 0) ? 0 : -1;
    case IR_LOAD_CLOSURE:
        return fb_push(F, fb_marked_name(F, ins->name, FB_CELL), 0);
    case IR_LOAD_FAST:
        if (dc_is_cell_var(d->code, ins->name)) { /* 3.13 spells LOAD_CLOSURE so: the cell itself */
            dp_node *cell = fb_marked_name(F, ins->name, FB_CELL);
            if (cell != NULL)
                cell->op = !dc_fast_load_is_cell(d, ins->name); /* see cells_spelled */
            return fb_push(F, cell, 0);
        }
        if (F->scope_body)
            return fb_push(F, fb_name_target(F, ins), 0);
        return SW_BREAK;
    case IR_LOAD_FAST_AND_CLEAR:
        return fb_save_local(F, ins);
    case IR_LOAD_LOCALS:
        return fb_push(F, fb_call(F, "locals", NULL, NULL, NULL), 1);
    case IR_LOAD_ASSERTION_ERROR:
        return fb_push(F, fb_builtin(F, "AssertionError"), 1);
    case IR_UNARY:
        if (ins->arg == DP_UN_NOT)
            return fb_unary_not(F);
        return SW_BREAK;
    case IR_COPY: case IR_SWAP:
        return fb_shuffle(F, i);
    case IR_BUILD_STRING:
        if (fb_fstring_parts(F, ins->arg) < 0)
            return -1;
        return SW_BREAK;
    case IR_FORMAT_VALUE:
        if ((ins->arg & DP_FMT_HAS_SPEC) && fb_fstring_parts(F, 1) < 0)
            return -1;
        return SW_BREAK;
    case IR_LIST_TO_TUPLE:
        if ((v = fb_top(F, 0)) == NULL)
            return -1;
        if (v->kind != E_LIST || fb_is_atom(v)) {
            F->st.v[F->st.n - 1] = fb_call(F, "tuple", v, NULL, NULL);
            F->dep[F->st.n - 1]++;
            return F->st.v[F->st.n - 1] ? 0 : -1;
        }
        return SW_BREAK;
    case IR_MAKE_FUNCTION:
        return fb_make_function(F, ins);
    case IR_POP_TOP:
        if ((v = fb_pop(F)) == NULL || fb_is_atom(v))
            return v == NULL ? -1 : fb_var_of(v) == FB_STACK ? fb_clear_now(F, v->op, NULL) : 0;
        if (fb_flush(F, F->st.n) < 0)
            return -1;
        return fb_def_name(v) ? (fb_spill(F, v) ? 0 : -1) : fb_emit_expr(F, v);
    case IR_PRINT_EXPR: {
        if ((v = fb_pop(F)) == NULL || fb_flush(F, F->st.n) < 0)
            return -1;
        dp_node *hook = fb_node(F, E_CALL);
        if (hook == NULL || (hook->a = fb_attr(F, fb_call(F, "__import__", fb_str_const(F, "sys"), NULL, NULL), "displayhook")) == NULL ||
            dc_add(d, &hook->l1, v) < 0)
            return -1;
        return fb_emit_expr(F, hook);
    }
    default:
        return SW_NOT_MINE;
    }
}

/* Stores, deletes, imports and collections (instr): SW_NOT_MINE for the others. */
static int store_instr(fb *F, int i, int *next) {
    dc *d = F->d;
    const dp_instr *ins = &d->in[i];
    int skip = 0, r;
    switch (ins->op) {
    case IR_STORE_NAME: case IR_STORE_FAST: case IR_STORE_GLOBAL: case IR_STORE_DEREF:
        return fb_store_name(F, ins);
    case IR_STORE_ATTR: case IR_STORE_SUBSCR: case IR_STORE_SLICE: case IR_DELETE_ATTR: case IR_DELETE_SUBSCR:
        return fb_store_or_delete(F, ins);
    case IR_DELETE_NAME: case IR_DELETE_FAST: case IR_DELETE_GLOBAL: case IR_DELETE_DEREF: {
        dp_node *s = fb_stmt(F, S_DELETE);
        if (s == NULL || fb_flush(F, F->st.n) < 0 || dc_add(d, &s->l1, fb_name_target(F, ins)) < 0)
            return -1;
        return fb_emit(F, s);
    }
    case IR_UNPACK_SEQUENCE: case IR_UNPACK_EX:
        r = fb_unpack(F, i, &skip);
        *next = i + 1 + skip;
        return r;
    case IR_IMPORT_NAME:
        r = fb_import_name(F, i, &skip);
        *next = i + 1 + skip;
        return r;
    case IR_IMPORT_FROM:
        if (fb_top(F, 0) == NULL || fb_flush(F, F->st.n) < 0)
            return -1;
        return fb_push(F, fb_attr(F, fb_top(F, 0), ins->name), 1);
    case IR_SETUP_ANNOTATIONS:
        return fb_flush(F, F->st.n) < 0 ? -1 : fb_setup_annotations(F);
    case IR_LIST_APPEND: case IR_SET_ADD: case IR_MAP_ADD: case IR_LIST_EXTEND: case IR_SET_UPDATE:
    case IR_DICT_UPDATE: case IR_DICT_MERGE:
        return fb_collection_op(F, ins);
    default:
        return SW_NOT_MINE;
    }
}

/* Handlers, the block stack, with, async iteration and pattern tests (instr): SW_NOT_MINE for the others. */
static int handler_instr(fb *F, int i) {
    dc *d = F->d;
    const dp_instr *ins = &d->in[i];
    dp_node *v, *w;
    int r;
    switch (ins->op) {
    case IR_CHECK_EXC_MATCH: /* <= 3.10 tests the exception's type */
        if ((w = fb_pop(F)) == NULL || fb_top(F, 0) == NULL || fb_flush(F, F->st.n) < 0)
            return -1;
        return fb_push(F, fb_call(F, F->block_stack ? "issubclass" : "isinstance", fb_top(F, 0), w, NULL), 1);
    case IR_PUSH_EXC_INFO:
        if ((v = fb_pop(F)) == NULL || fb_push(F, dc_none(d), 0) < 0)
            return -1;
        return fb_push(F, v, 0);
    case IR_POP_EXCEPT:
        return fb_pop_except(F, i) < 0 ? -1 : 1;
    case IR_CHECK_EG_MATCH:
        return fb_check_eg_match(F);
    case IR_PREP_RERAISE_STAR:
        return fb_prep_reraise_star(F);
    /* <= 3.10: the CFG's regions say which block is open where; 3.8 walks
     * them too (SETUP_ASYNC_WITH keeps the awaited value above) */
    case IR_SETUP_FINALLY: case IR_SETUP_ASYNC_WITH:
        if (!F->block_stack)
            return unsupported(F, i);
        return F->walk_setups ? fb_push_setup(F, ins->target, F->st.n - (ins->op == IR_SETUP_ASYNC_WITH)) : 0;
    case IR_SETUP_WITH: /* BEFORE_WITH, with the block level below __enter__'s result */
        if (!F->block_stack)
            return unsupported(F, i);
        if (fb_before_with(F, 0) < 0)
            return -1;
        return F->walk_setups ? fb_push_setup(F, ins->target, F->st.n - 1) : 0;
    case IR_POP_BLOCK:
        if (F->block_stack && !F->walk_setups)
            return 0;
        if (!F->block_stack || F->nsetups == 0 || F->setups[F->nsetups - 1].handler < 0)
            return fb_fail(F, i, "POP_BLOCK without a SETUP block");
        F->nsetups--;
        return 0;
    case IR_WITH_EXCEPT_START:
        return fb_with_except_start(F);
    case IR_BEGIN_FINALLY:
        return push_null(F);
    case IR_CALL_FINALLY:
        return (fb_push(F, ret_node(F, i + 1), 0) < 0 || fb_continue_to(F, fb_block_at(F, ins->target)) < 0) ? -1 : 1;
    case IR_END_FINALLY:
        return end_finally(F, i) < 0 ? -1 : 1;
    case IR_POP_FINALLY:
        return pop_finally(F, i) < 0 ? -1 : 1;
    case IR_WITH_CLEANUP_START:
        return with_cleanup_start(F, i);
    case IR_WITH_CLEANUP_FINISH:
        return with_cleanup_finish(F, i) < 0 ? -1 : 1;
    case IR_BEFORE_WITH: case IR_BEFORE_ASYNC_WITH:
        return fb_before_with(F, ins->op == IR_BEFORE_ASYNC_WITH);
    case IR_GET_AITER:
        if ((r = fb_expr_step(F, i)) != 0) /* the structurer may know it (an async comprehension's iterable) */
            return r < 0 ? -1 : 0;
        if ((v = fb_pop(F)) == NULL)
            return -1;
        return fb_aiter_call(F, "aiter", "__aiter__", v);
    case IR_GET_ANEXT:
        return fb_get_anext(F);
    case IR_END_ASYNC_FOR:
        return fb_end_async_for(F);
    case IR_MATCH_MAPPING: case IR_MATCH_SEQUENCE: case IR_MATCH_KEYS: case IR_MATCH_CLASS: case IR_GET_LEN:
        return fb_match_op(F, ins);
    case IR_COPY_DICT_WITHOUT_KEYS:
        return fb_copy_dict_without_keys(F);
    default:
        return SW_NOT_MINE;
    }
}

/* Returns, raises and jumps (instr): SW_NOT_MINE for the others. */
static int flow_instr(fb *F, int i) {
    dc *d = F->d;
    const dp_instr *ins = &d->in[i];
    dp_node *v;
    switch (ins->op) {
    case IR_RETURN_VALUE:
        return fb_return_value(F) < 0 ? -1 : 1;
    case IR_RAISE: {
        dp_node *cause = NULL, *exc = NULL;
        if (ins->arg < 0 || ins->arg > 2)
            return dc_fail(d, i, "bad RAISE_VARARGS %d", ins->arg);
        if ((ins->arg >= 2 && (cause = fb_pop(F)) == NULL) || (ins->arg >= 1 && (exc = fb_pop(F)) == NULL) ||
            fb_flush(F, F->st.n) < 0)
            return -1;
        if (fb_clear_dead(F, F->out, exc, 1) < 0 || (cause && fb_clear_dead(F, F->out, cause, 1) < 0))
            return -1;
        if (ins->arg == 0 && F->block_stack && fb_running_handlers(F) > 0) { /* the handled exception */
            exc = fb_marked_name(F, fb_make_name(F, "handled", fb_running_handlers(F)), FB_TEMP);
            if (fb_emit_raise(F, exc, cause, F->out) < 0)
                return -1;
            F->out->v[F->out->n - 1]->fb.handled = 1;
            return 1;
        }
        if (ins->arg == 0 && F->star)
            return fb_star_reraise(F) < 0 ? -1 : 1;
        return fb_emit_raise(F, exc, cause, F->out) < 0 ? -1 : 1;
    }
    case IR_RERAISE: /* <= 3.10 pops (type, value, traceback) and raises the value */
        if ((v = fb_pop(F)) == NULL || (F->block_stack && ((v = fb_pop(F)) == NULL || fb_pop(F) == NULL)) ||
            fb_flush(F, F->st.n) < 0 || fb_clear_dead(F, F->out, v, 1) < 0)
            return -1;
        return fb_emit_raise(F, v, NULL, F->out) < 0 ? -1 : 1;
    case IR_JUMP:
        return fb_continue_to(F, fb_block_at(F, ins->target)) < 0 ? -1 : 1;
    case IR_POP_JUMP_IF_FALSE: case IR_POP_JUMP_IF_TRUE: case IR_POP_JUMP_IF_NONE: case IR_POP_JUMP_IF_NOT_NONE: {
        if ((v = fb_pop(F)) == NULL || fb_below_test(F, v) < 0)
            return -1;
        int tgt = fb_block_at(F, ins->target), fall = fb_block_at(F, i + 1);
        int on_false = ins->op == IR_POP_JUMP_IF_FALSE;
        return fb_branch(F, fb_cond_test(F, ins->op, v), on_false ? fall : tgt, 0, on_false ? tgt : fall, 0) < 0 ? -1 : 1;
    }
    case IR_JUMP_IF_FALSE_OR_POP: case IR_JUMP_IF_TRUE_OR_POP: {
        if (fb_top(F, 0) == NULL || fb_transfer(F, F->st.n, F->out) < 0)
            return -1;
        int tgt = fb_block_at(F, ins->target), fall = fb_block_at(F, i + 1);
        v = fb_top(F, 0);
        if (ins->op == IR_JUMP_IF_FALSE_OR_POP)
            return fb_branch(F, v, fall, 1, tgt, 0) < 0 ? -1 : 1;
        return fb_branch(F, v, tgt, 0, fall, 1) < 0 ? -1 : 1;
    }
    case IR_FOR_ITER:
        return fb_for_iter(F, i) < 0 ? -1 : 1;
    default:
        return SW_NOT_MINE;
    }
}

static int instr(fb *F, int i, int *next) {
    const dp_instr *ins = &F->d->in[i];
    int r;
    F->at = i;
    int res = value_instr(F, i);
    if (res == SW_NOT_MINE)
        res = store_instr(F, i, next);
    if (res == SW_NOT_MINE)
        res = handler_instr(F, i);
    if (res == SW_NOT_MINE)
        res = flow_instr(F, i);
    if (res != SW_NOT_MINE && res != SW_BREAK)
        return res;
    r = fb_expr_step(F, i);
    if (r == 0)
        return unsupported(F, i);
    if (r < 0)
        return -1;
    if (ins->op == IR_CALL)
        return fb_settle_class(F, i + 1);
    return 0;
}

/* The entry stack of a block: __stack_k variables (and NULLs). */
static int entry_stack(fb *F, fb_block *b) {
    F->st.n = 0;
    for (int k = 0; k < b->depth; k++) {
        static const int saved[] = {0, 0, FB_SAVED_VALUE, FB_SAVED_CELL}; /* by SLOT_* */
        int kind = b->slots[k];
        dp_node *v = kind == SLOT_NULL ? fb_node(F, X_NULL) : kind >= SLOT_RET ? ret_node(F, kind - SLOT_RET)
                                                                              : fb_canon(F, k, saved[kind]);
        if (fb_push(F, v, 0) < 0)
            return -1;
    }
    return 0;
}

/* (a block made only of instructions that cannot raise has no exception
 * edge: POP_EXCEPT and the COPY before it sit inside the ranges of the
 * enclosing handler, one level out) */
static int block_can_raise(const fb *F, const fb_block *b) {
    for (int i = b->start; i < b->end; i++)
        if (dp_can_raise(F->d->in[i].op))
            return 1;
    return 0;
}

/* Block b's exceptions go to handler block h (-1: error), a copy of the
 * handler of b's entry that other blocks may not share (3.8). */
static int bind_handler(fb *F, fb_block *b, int h) {
    if (h < 0)
        return -1;
    const fb_exc *e = &F->ex[b->exc];
    if (e->block == h)
        return 0;
    if (e->block < 0) {
        F->ex[b->exc].block = h;
        return 0;
    }
    return (b->exc = fb_exc_entry(F, e->target, e->depth, e->lasti, e->six, e->null, h)) < 0 ? -1 : 0;
}

/* <= 3.10: the call that starts block b after NOPs, when no other instruction
 * of the block can raise, else -1.  Dynamo's code calls values it carried
 * into a with's try/finally from below the block's level (no compiler
 * does): the handler of such a block is entered on the stack that call
 * leaves. */
static int lone_call(const fb *F, const fb_block *b) {
    int c = b->start;
    while (c < b->end && F->d->in[c].op == IR_NOP)
        c++;
    if (c == b->end || F->d->in[c].op != IR_CALL)
        return -1;
    for (int i = c + 1; i < b->end; i++)
        if (dp_can_raise(F->d->in[i].op))
            return -1;
    return c;
}

/* <= 3.10: the SETUP_* block that handles the exceptions of block b: its
 * handler and level (the stack values below its six).  Returns how many
 * blocks of F->setups stay open when the handler runs: those below it (the
 * unwinding pops the rest), -1 when no block is open, -2 on error.  3.8
 * finds it on the block stack it walks; 3.9/3.10 in the CFG's region of
 * the block, the except-handler blocks below its level staying open. */
static int open_setup(fb *F, const fb_block *b, int *handler, int *level) {
    int setup = F->nsetups - 1;
    if (F->walk_setups) {
        while (setup >= 0 && F->setups[setup].handler < 0)
            setup--;
        if (setup >= 0) {
            *handler = F->setups[setup].handler;
            *level = F->setups[setup].level;
        }
        return setup;
    }
    int r = F->g->exc_of[b->start];
    if (r < 0)
        return -1;
    if (F->g->exc[r].depth < 0) {
        fb_fail(F, b->start, "the stack depth differs between paths into a try or with block");
        return -2;
    }
    *handler = F->g->exc[r].target;
    *level = F->g->exc[r].depth;
    int keep = 0;
    while (keep < F->nsetups && F->setups[keep].level < *level)
        keep++;
    return keep;
}

/* The handler of block b is reached with the stack cut to the entry's depth,
 * then lasti (if asked) and the exception. */
static int reach_handler(fb *F, fb_block *b, int setup) {
    const fb_exc *e = &F->ex[b->exc];
    /* damaged code can ask for a negative depth, or more than is on the stack */
    if (e->depth < 0 || e->depth > b->depth || e->depth > F->st.n)
        return dc_fail(F->d, b->start, "exception handler expects %d stack values, %d there", e->depth,
                       e->depth > b->depth ? b->depth : F->st.n);
    dc_stack st = {0};
    if (dc_stack_copy(F->d, &st, &F->st) < 0)
        return -1;
    st.n = e->depth;
    if (e->null && (st.v[e->depth - 1] = fb_node(F, X_NULL)) == NULL)
        return -1;
    for (int k = 0; k < (e->six ? 6 : 1 + (e->lasti != 0)); k++)
        if (dc_push(F->d, &st, dc_none(F->d)) < 0)
            return -1;
    if (!e->six)
        return bind_handler(F, b, fb_reach(F, fb_block_at(F, e->target), &st, b->level, 0, b->start));
    /* the unwinding pops the blocks above the SETUP and the SETUP itself, and
     * the handler runs under an except-handler block */
    fb_setup *mine = F->setups, *theirs = dp_alloc_array(F->d->sh->ar, (size_t)setup + 1, sizeof *theirs);
    int n = F->nsetups, cap = F->setupcap;
    if (theirs == NULL)
        return fb_oom(F);
    if (setup > 0) /* (3.9/3.10: no block open before, none allocated) */
        memcpy(theirs, mine, (size_t)setup * sizeof *theirs);
    theirs[setup] = (fb_setup){-1, e->depth};
    F->setups = theirs;
    F->nsetups = F->setupcap = setup + 1;
    int r = fb_reach(F, fb_block_at(F, e->target), &st, fb_running_handlers(F), 0, b->start);
    F->setups = mine;
    F->nsetups = n;
    F->setupcap = cap;
    return bind_handler(F, b, r);
}

int fb_translate(fb *F, int bi) {
    fb_block *b = &F->b[bi];
    dc *d = F->d;
    F->cur = b;
    F->out = &b->body;
    F->temps.n = 0;
    F->exit_level = b->level + (d->in[b->end - 1].op == IR_PUSH_EXC_INFO);
    if (entry_stack(F, b) < 0)
        return -1;
    if (b->depth && (F->cleared = dp_alloc(d->sh->ar, (size_t)b->depth)) == NULL)
        return fb_oom(F);
    F->nsetups = 0;
    for (int k = 0; k < b->nsetups; k++)
        if (fb_push_setup(F, b->setups[k].handler, b->setups[k].level) < 0)
            return -1;
    int setup = -1, handler = -1, level = 0; /* <= 3.10: the innermost SETUP_* block handles exceptions */
    if (F->block_stack && (setup = open_setup(F, b, &handler, &level)) == -2)
        return -1;
    if (handler >= 0) {
        /* (CPython unwinds from what a lone call left, its NULL result on
         * top; 3.9/3.10 blocks have their region's entry otherwise) */
        int c = lone_call(F, b), left = c < 0 ? level : b->depth - fb_npop(&d->in[c]);
        int null = left >= 0 && left < level;
        if ((null || F->walk_setups) && (b->exc = fb_exc_entry(F, handler, null ? left + 1 : level, 0, 1, null, -1)) < 0)
            return -1;
    }
    F->hdepth = 0;
    if (b->exc >= 0 && !block_can_raise(F, b))
        b->exc = -1;
    if (b->exc >= 0) {
        if (reach_handler(F, b, setup) < 0)
            return -1;
        F->hdepth = F->ex[b->exc].depth - F->ex[b->exc].null;
    }
    int fn_pending = 0;
    F->atoms = 0;
    for (int i = b->start; i < b->end;) {
        int next = i + 1;
        dp_effect e;
        /* (the values i takes may change; the instructions a handler
         * consumes with i, stores of unpacked or imported values, work
         * above what i leaves; the op table takes the version) */
        fb_lower_atoms(F, dp_ir_effect(&d->in[i], &d->lay, 0, &e) < 0 ? 0 : F->st.n - e.in);
        int r = instr(F, i, &next);
        fb_lower_atoms(F, F->st.n);
        if (r < 0)
            return -1;
        if (r > 0)
            return 0;
        if (d->in[i].op == IR_MAKE_FUNCTION)
            fn_pending = 1;
        if (fn_pending && (next >= b->end || d->in[next].op != IR_SET_FUNCTION_ATTRIBUTE)) {
            fn_pending = 0;
            fb_lower_atoms(F, F->st.n - 1);
            if (fb_settle_function(F, next) < 0)
                return -1;
        }
        if (fb_keep_handler_slots(F) < 0)
            return -1;
        i = next;
    }
    F->at = b->end - 1;
    return fb_continue_to(F, fb_block_at(F, b->end));
}
