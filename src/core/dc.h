/* Internal state of one decompilation (IR -> AST).  Shared by decompile.c
 * (entry, nested code objects), expr.c (the stack machine that builds
 * expressions) and stmt.c (control-flow structuring). */
#ifndef DEPYF_DC_H
#define DEPYF_DC_H

#include "ast.h"
#include "cfg.h"
#include "depyf.h"
#include "ir.h"
#include "ptrmap.h"

/* Internal node kinds that live only on the symbolic stack. */
enum {
    X_NULL = DP_NODE_KIND_COUNT + 1, /* NULL half of a callable pair */
    X_SLOT,       /* unpack/for target slot: a = holder tuple, op = index */
    X_FUNC,       /* made function: cst = code, a = defaults, b = kwdefaults,
                     c = annotations, l1 = {the closure tuple} when it has one;
                     op = index of its MAKE_FUNCTION (the use of the code
                     object: see dc_shared.memo) */
    X_IMPORT,     /* IMPORT_NAME result: s = module, op = level, cst = fromlist,
                     a = the S_IMPORTFROM statement once one was emitted */
    X_ITER,       /* a loop's iterator (GET_ITER result): a = iterable */
    X_EXC,        /* the exception being handled (pushed by PUSH_EXC_INFO) */
    X_PREV_EXC,   /* the previous exception saved below it */
    X_WITH_EXIT,  /* bound __exit__ of a with-statement: a = manager */
    X_BUILD_CLASS,/* LOAD_BUILD_CLASS */
    X_CONVERTED,  /* 3.13 CONVERT_VALUE: a = value, op = conversion */
    X_ASSERTION,  /* LOAD_ASSERTION_ERROR */
    X_OPAQUE,     /* a value with no source form (interpreter internals) */
    X_APPEND,     /* comprehension body: LIST_APPEND/SET_ADD (a = value) or
                     MAP_ADD (a = key, b = value) */
    X_GENERIC,    /* a PEP 695 definition (generic.c): s = name, l4 = E_TYPEPARAM nodes,
                     op = DC_GEN_*; a = the X_FUNC (def), the __build_class__ call (class)
                     or the value (type alias) */
    X_GENERIC_BASE, /* the Generic[*params] base a generic class gets from the compiler */
};

enum { DC_GEN_DEF, DC_GEN_CLASS, DC_GEN_ALIAS };

typedef struct dc_stack {
    dp_node **v;
    int n, cap;
} dc_stack;

typedef struct dc_loop {
    int head;          /* where `continue` jumps */
    int brk;           /* where `break` jumps (-1 if unknown) */
    int is_for;        /* the iterator sits on the stack inside the body */
    struct dc_loop *up;
    int then;          /* where control goes on from brk when brk ends the
                          enclosing region (its exit), else -1 */
} dc_loop;

typedef struct dc_shared {
    dp_arena *ar;
    dp_error *err;
    const dp_options *opt;
    int depth;         /* nesting of code objects and blocks: bounded */
    int limit_hit;     /* a limit was passed (dc_limit): no retry can succeed, so none is made */
    char limit_msg[300]; /* ... which one, as reported */
    int ntemps;        /* counter for spilled temporaries */
    /* The budgets of depyf.h: what was used and the limits. */
    dp_usage use;
    size_t work_limit, output_limit, validation_limit;
    /* Nested code objects already decompiled, so that a structure tried
     * again (a failed speculation, a function refused by validation) does
     * not decompile them again (that was exponential in their nesting): by
     * (path of the enclosing code object, index of the MAKE_FUNCTION, code
     * object, body kind) -> dc_memo.  One use of a code object is never
     * another's: each use prints its own text, paid for by the work budget. */
    dp_ptrmap memo;
    int npaths;        /* paths handed out (dc.path) */
    int keep_return_copies; /* dc_join_return_copies is off (a retry without it) */
    int lambda_alone;  /* the code decompiled is a lambda's: printed, and validated, as `lambda ...: value` */
} dc_shared;

/* Passes a limit: records `fmt` as the error and makes it fatal (every
 * level unwinds with it, no retry).  Returns -1. */
int dc_limit(dc_shared *sh, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* One more level of sh->depth (shared by code objects, statements and the
 * fallback's handler levels), or dc_limit's -1 once it would pass `max`:
 * "<what> nested more than <max> deep".  The caller decrements it. */
int dc_nest(dc_shared *sh, int max, const char *what);

/* The try statements (by handler) found in a code object: see try.c. */
typedef struct dc_handler {
    int at;            /* IR index of the handler (PUSH_EXC_INFO) */
    int start, end;    /* protected range, nested try bodies included */
    int opened;        /* already being structured */
} dc_handler;

/* A name bound by an enclosing `except ... as` clause (a list on the C stack). */
typedef struct dc_names {
    const char *name;
    const struct dc_names *up;
} dc_names;

typedef struct dc {
    dc_shared *sh;
    const dp_code *code;
    int path;          /* this use of the code object (a key of dc_shared.memo) */
    dp_irfunc f;
    dp_layout lay;     /* the bytecode layout facts of the code's version (f.lay) */
    const dp_instr *in;
    int n;
    dp_cfg cfg;        /* the control-flow graph, built once after the IR normalizations */
    int *nref;         /* per instruction: reachable jumps and handlers that target it */
    const unsigned char *reach; /* per instruction: can it run at all (cfg.reach) */
    unsigned char *seen;  /* per instruction: consumed by the structurer (see dc_seen); set
                             only by dc_mark, which logs it while speculating */
    int *seen_log;     /* instructions marked seen during the open speculations, in order */
    int nseen_log, capseen_log;
    struct dc_undo *undo; /* skip_to, vjump and nref entries set during the open speculations (dc_set) */
    int nundo, capundo;
    struct dc_undo_instr *undo_ins; /* instructions rewritten during them (dc_edit), as they were */
    int nundo_ins, capundo_ins;
    int spec_depth;    /* speculations open (dc_spec_begin) */
    size_t shared_seq; /* nodes made up to this one (dp_node.seq) may be on more than one
                          stack: a stack copy or a speculation began after them; one is
                          copied before it is changed in place (dc_own_slot).  A
                          speculation puts it back at its end: the copies made inside
                          are gone (a display whose every value holds a conditional
                          expression is not copied at each) */
    dc_handler *handlers;
    int nhandlers;
    int *opened_log;   /* handlers whose `opened` was set, in order (dc_open_handler), so
                          that a failed speculation can clear just those */
    int nopened, capopened;
    struct dc_tail_index *tail_index; /* try_legacy.c's index of return tails, or NULL */
    struct dc_try_index *try_index; /* try.c's lookups (handlers by place, table entries
                                       by target, returns, jumps): built on first use, or NULL */
    unsigned char *cell_stored; /* per cellvar then freevar: a fast store or delete touches its
                                   slot (3.13, see dc_fast_load_is_cell): built on first use, or NULL */
    const char *except_name; /* name bound by the innermost `except ... as` */
    const struct dc_names *except_names; /* 3.11+: the names bound by the enclosing
                                            `except ... as` clauses, innermost first */
    int base;          /* stack depth at the start of the region being walked */
    dp_node **base_vals; /* the values below `base` then (NULL: not kept) */
    char why[200];     /* why structuring failed (shown by the fallback), "" if it did not */
    int used_fallback; /* the body is fallback.c's state machine */
    int refused;       /* ... because the structured form failed validation (why says how) */
    int finish_stmt;   /* next dc_region may run past its end to complete a statement */
    int finish_handler; /* with finish_stmt (3.12+): the try's handler, -1 when not known */
    int open_try;      /* the handler of the innermost try whose body is walked, -1 */
    dp_node *stop_node; /* next dc_region stops at a statement boundary once this
                           value left the stack (a with block ends at __exit__) */
    int *skip_to;      /* per instruction: handler code to step over, -1 */
    int *first_source; /* per instruction: first jump or handler range to reach it, INT_MAX if
                          none (built on first use by match.c), or NULL */
    int *last_back;    /* per instruction: last jump back to it, -1; then per jump: the
                          one before it to the same place (built on first use by
                          back_edge in stmt.c), or NULL */
    int *vjump;        /* per instruction: a copy of the code at vjump[i] starts here
                          (3.12+ duplicates the code after a try into its handlers):
                          read as a jump there, -1 */
    int region_stop;   /* where the last dc_region stopped */
    int region_live;   /* whether its end is reachable (falls through) */
    int region_jumps_on; /* its end is a cold tail's jump to where it goes on (3.12+: a
                            loop body's jump back), not a fall off its end */
    int cond_finishes; /* the region calling dc_cond may complete its last statement past its end */
    const dp_instr *fin_ops; /* body of the innermost finally (to skip copies) */
    int fin_len;
    int fin_copy_end;  /* where the last finally copy a region stepped over ends */
    struct { const dp_instr *ops; int len; } fin_outer[8]; /* enclosing finally bodies */
    int nfin_outer;
    dc_loop *loop;
    struct dc *outer;  /* enclosing function's decompilation (for global/nonlocal) */
    dp_node *pending_chain; /* S_ASSIGN being extended by `a = b = v` */
    dp_nodes globals, nonlocals; /* declarations this code needs */
    int is_class_body, is_module;
    int joined_copies; /* copies of returns dc_join_return_copies turned into jumps */
    int *stack_depth;  /* per instruction: the stack depth before it, -1 unknown (built on
                          first use by dc_statement_boundary), or NULL */
    int *loop_mark, *loop_work; /* per block: loop.c's walks of a natural loop (marked with
                                   loop_stamp), built on first use, or NULL */
    int loop_stamp;
} dc;

/* The handler of instruction i from the exception table (3.11+), -1 if
 * none or outside the code.  The 3.12+ generator epilogue, which protects
 * every instruction of a generator, is no try statement's: -1 there too.
 * 3.8-3.10 blocks are structured from their SETUP_* instructions
 * (try_legacy.c), so their regions give -1 here as well. */
static inline int dc_handler_at(const dc *d, int i) {
    int32_t r = i >= 0 && i < d->n ? d->cfg.exc_of[i] : -1;
    if (r < 0 || d->cfg.exc[r].setup >= 0)
        return -1;
    int32_t h = d->cfg.exc[r].target;
    return d->in[h].op == IR_STOPITERATION_ERROR ? -1 : h;
}

/* Is instruction i in the body of the try whose handler is at h (3.11+)?
 * It is protected by h, or by a handler whose code h protects in turn (a
 * nested try or with); code that a later try protects is not.  With h
 * unknown (-1): protected at all. */
static inline int dc_within_try(const dc *d, int i, int h) {
    int c = dc_handler_at(d, i);
    for (int depth = 0; h >= 0 && c >= 0 && c != h && depth < 32; depth++)
        c = c < d->n ? dc_handler_at(d, c) : -1;
    return h < 0 ? c >= 0 : c == h;
}

/* Marks [from, to) as consumed.  After structuring, a reachable instruction
 * nobody consumed means the structure lost code: the result is discarded. */
void dc_seen(dc *d, int from, int to);
/* Marks instruction i consumed; a failed speculation unmarks what it marked. */
void dc_mark(dc *d, int i);
/* *slot = value for an entry of skip_to, vjump or nref, undone by a failed speculation. */
void dc_set(dc *d, int *slot, int value);
/* Instruction k of the IR, to be rewritten: a failed speculation puts it back. */
dp_instr *dc_edit(dc *d, int k);

/* ---- stack (expr.c) ---- */
int dc_push(dc *d, dc_stack *st, dp_node *e);
dp_node *dc_pop(dc *d, dc_stack *st, int at);  /* NULL + error on underflow */
dp_node *dc_top(dc *d, dc_stack *st, int k, int at); /* k = 0: top */
int dc_stack_copy(dc *d, dc_stack *dst, const dc_stack *src);
/* The display at slot k of st, to be added to in place (LIST_EXTEND, DICT_UPDATE,
 * LIST_APPEND, ...): copied into the slot first where another stack may hold it. */
dp_node *dc_own_slot(dc *d, dc_stack *st, int k);

/* Node helpers (expr.c). */
dp_node *dc_node(dc *d, int kind);
dp_node *dc_name(dc *d, const char *s);
/* Adds `name` to a `global`/`nonlocal` list once (stmt.c). */
int dc_declare(dc *d, dp_nodes *decls, const char *name);
/* Whether a yield of this scope is in the tree, nested scopes skipped (decompile.c). */
int dc_has_yield(const dp_node *n, int depth);
dp_node *dc_const(dc *d, const dp_const *c);
dp_node *dc_none(dc *d);
dp_node *dc_cell(dc *d, const char *name);
int dc_is_cell(const dp_node *e);
/* Is `closure` (MAKE_FUNCTION's) the cells of `code`'s free variables, in
 * order, so that a def or lambda prints it? */
int dc_closure_is_cells(const dc *d, const dp_code *code, const dp_node *closure);
/* The call that makes function `fn` (X_FUNC) with `closure` where no def
 * or lambda can, or NULL after dc_fail. */
dp_node *dc_function_by_value(dc *d, dp_node *fn, dp_node *closure, int at);
int dc_is_cell_var(const dp_code *code, const char *name);
int dc_fast_load_is_cell(dc *d, const char *name);
dp_node *dc_not(dc *d, dp_node *e);
dp_node *dc_boolop(dc *d, int is_or, dp_node *a, dp_node *b);
int dc_add(dc *d, dp_nodes *l, dp_node *n);
int dc_is_const_kind(const dp_node *e, int kind);
/* s can be written as a name (an identifier that is not a keyword; bytes
 * past ASCII are taken as the UTF-8 of identifier characters, as they are
 * in names that come from code objects). */
int dc_is_identifier(const char *s);
int dc_is_identifier_n(const char *s, size_t len);

/* Executes instruction i when it is a pure expression/stack operation.
 * Returns 1 if handled, 0 if i is not one, -1 on error. */
int dc_expr_step(dc *d, int i, dc_stack *st);

/* A chained comparison starting at i (compare.c): 1 if handled (the
 * comparison is pushed, *next set), 0 if none starts here, -1 on error. */
int dc_chain_compare(dc *d, int i, dc_stack *st, int *next);

/* A match statement whose subject is on top of the stack when instruction
 * i runs (match.c): 1 if one starts here (statement appended, *next set),
 * 0 if not, -1 on error.  `base` is the stack depth at the statement start
 * (the subject is at base). */
int dc_match(dc *d, int i, int base, dc_stack *st, dp_nodes *out, int *next);

/* 3.12+ inlined comprehension starting at instruction i (inline_comp.c):
 * 1 if one was recognized (its value pushed on `st`, *next set), 0 if
 * none starts here, -1 on error. */
int dc_inline_comprehension(dc *d, int i, dc_stack *st, dp_nodes *out, int *next);
/* The clauses and element of `comp` from the statements of the loop nest
 * that computes it (inline_comp.c): one S_FOR (returns and nonlocal/global
 * declarations aside) whose innermost statement adds the element
 * (X_APPEND, a generator's yield, or a call on `acc`, the accumulator of
 * an inlined comprehension).  `outer_iter` replaces the `.0` argument of a
 * comprehension's code object (NULL: none). */
int dc_comp_clauses(dc *d, const dp_nodes *stmts, dp_node *comp, dp_node *acc, dp_node *outer_iter);
/* Marks the cleanup blocks of 3.12+ inlined comprehensions in d->skip_to
 * (inline_comp.c); once per code object, before structuring. */
void dc_inline_comp_cleanups(dc *d);

/* Puts the statement of `body` (a structured code object's) where the
 * compiler left the True of a folded `if __debug__:` under `if True:`
 * (folded_test.c; layout fact keeps_folded_test_consts).  -1 only when out
 * of memory. */
int dc_folded_test(dc *d, dp_nodes *body);

/* Always-correct fallback (fallback.c): rebuilds the whole code object as a
 * state machine over its basic blocks when structuring failed.  Appends the
 * function body to `out`; returns -1 only when the bytecode is invalid. */
int dc_fallback(dc *d, dp_nodes *out);

/* `__annotations__['x'] = T` stores of a module or class body (after an
 * `x = v`) back to `x: T (= v)` (annassign.c). */
int dc_annotated_assigns(dc *d, dp_nodes *body);
/* An annotation value as printed: under `from __future__ import
 * annotations` (of the code evaluating it), the expression its text spells
 * when it can be printed as one; else the value (annassign.c). */
dp_node *dc_annotation(dc *d, dp_node *value);

/* ---- statements (stmt.c) ---- */
/* Structures instructions [start, end) into statements appended to `out`,
 * with the symbolic stack `st` (updated in place). */
int dc_block(dc *d, int start, int end, dc_stack *st, dp_nodes *out);
/* Evaluates [start, end) as an expression region that leaves exactly one
 * more value on the stack; returns that value or NULL (error set). */
dp_node *dc_value_region(dc *d, int start, int end, dc_stack *st);

/* Structures the statement starting at instruction i when it is a
 * conditional jump (stmt.c); *next receives where to continue. */
int dc_cond(dc *d, int stmt_start, int i, int end, int exit, dc_stack *st, dp_nodes *out, int *next);
/* try/except/finally and with (try.c): returns 1 if a try statement starts at
 * i (then *next is set, and d->region_live to whether the statement can
 * complete normally), 0 if not, -1 on error.  [?, end) is the enclosing
 * region, `exit` where it goes on (dc_region).  `carried` (3.11+): the try
 * is entered with values of the region on the stack, which no compiler
 * does but Dynamo's code does at a graph break inside a with block: they go
 * into temporaries first, and the code after the statement goes on with
 * the stack the body leaves (a try/finally only). */
int dc_try(dc *d, int i, int end, int exit, dc_stack *st, dp_nodes *out, int *next, int carried);
/* The stack `left` that the body [i, stop) of a try entered with values on
 * the stack leaves goes on to the code after the statement (into st), its
 * values in temporaries assigned at the end of `body`: the body must leave
 * by one way only, falling off its end (`live`) or by its last
 * instruction, a jump (the stacks of other ways out are not known here)
 * (try.c). */
int dc_carry_on(dc *d, int i, int stop, int live, dc_stack *left, dp_nodes *body, dc_stack *st);
/* Can the statements `l` complete normally (fall off their end)?  A
 * conservative yes where it cannot tell (stmt.c). */
int dc_can_complete(const dp_nodes *l, int depth);
/* A new temporary's name, `__temp_<n>` (stmt.c); NULL when out of memory. */
dp_node *dc_new_temp(dc *d);
/* Puts every value pending on the stack into a temporary, in the order the
 * bytecode computed them (stmt.c). */
int dc_spill_stack(dc *d, dc_stack *st, dp_nodes *out, int at);
/* A with statement whose BEFORE_WITH is at i (try.c). */
int dc_with(dc *d, int i, int end, dc_stack *st, dp_nodes *out, int *next);
/* The same as dc_block with an explicit exit label: where control goes when
 * [start, end) falls off its end (-1: the function ends). */
int dc_region(dc *d, int start, int end, int exit, dc_stack *st, dp_nodes *out);
/* Statement node with the source position of instruction `at`. */
dp_node *dc_stmt(dc *d, int kind, int at);

/* Speculative structuring: run, and on failure restore the error state. */
typedef struct dc_spec {
    dp_error saved;
    int nopened;               /* length of d->opened_log before */
    int nseen_log, nundo, nundo_ins; /* lengths of d->seen_log, d->undo and d->undo_ins before */
    int depth;                 /* d->spec_depth before */
    int nglobals, nnonlocals;  /* lengths of d->globals and d->nonlocals before */
    dp_node *pending_chain;
    int ntemps;
    size_t shared_seq;         /* d->shared_seq before: the stacks copied inside are gone after */
} dc_spec;
void dc_spec_begin(dc *d, dc_spec *s);
/* Returns 1 if the speculation succeeded, 0 if it failed (error cleared). */
int dc_spec_end(dc *d, dc_spec *s, int result);
/* Marks handler h as being structured (until a failed speculation undoes it). */
int dc_open_handler(dc *d, dc_handler *h);

/* ---- PEP 695 generics (generic.c) ---- */
/* The value of calling `<generic parameters of NAME>` (X_FUNC `fn`) with
 * `args` (its .defaults and .kwdefaults): an X_GENERIC, or NULL (error set)
 * when the scope is not in a form the compiler makes. */
dp_node *dc_generic(dc *d, dp_node *fn, const dp_nodes *args, int at);
/* Is `fn` (any node) the function of a `<generic parameters of ...>` scope? */
int dc_is_generic_scope(const dp_node *fn);
/* The X_GENERIC of INTRINSIC_TYPEALIAS applied to `t`, the tuple (name,
 * type parameters or None, function computing the value). */
dp_node *dc_typealias(dc *d, dp_node *t, const dp_nodes *params, int at);
/* Is the SWAP at i one of those that order the arguments of a call of a
 * type parameter scope (they keep the order in which they were computed)? */
int dc_generic_call_swap(const dc *d, int i);
/* The statement defining X_GENERIC `g` under `name` (decorators aside), or
 * NULL (error set) when `name` is not the name it defines. */
dp_node *dc_generic_stmt(dc *d, dp_node *g, const char *name, int at);

/* ---- nested code (decompile.c) ---- */
/* Prepares `d` to walk `code` (lifted, reachability and handlers known). */
int dc_setup(dc *d, dc_shared *sh, const dp_code *code, dc *outer);
/* The name of the class whose body d's code is in (the nearest enclosing
 * class body, d itself included): the compiler mangled its private names
 * with it, and the output spells them as written there
 * (dp_printer.private_class).  NULL outside classes. */
const char *dc_private_class(const dc *d);
/* The path (dc.path) of the use `site` of `code` in `outer` walked as a
 * scope of its own (a PEP 695 type parameter scope): the same each time that
 * use is walked again, so that what is nested in it is decompiled once.
 * -1 when out of memory (error set). */
int dc_scope_path(dc *outer, int site, const dp_code *code);
/* Builds the statement for a function definition from X_FUNC `fn`, stored
 * under `name` (decorators applied by the caller). */
dp_node *dc_funcdef(dc *d, dp_node *fn, const char *name, int at);
dp_node *dc_lambda(dc *d, dp_node *fn, int at);
/* A comprehension: fn = X_FUNC of a <listcomp>/<setcomp>/<dictcomp>/<genexpr>
 * code, iter = the outermost iterable. */
dp_node *dc_comprehension(dc *d, dp_node *fn, dp_node *iter, int at);
dp_node *dc_classdef(dc *d, dp_node *call, const char *name, int at);
int dc_fail(dc *d, int at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- translation validation (validate.c) ---- */
/* Is validation asked for, and possible, for this code object? */
int dc_wants_validation(const dc_shared *sh, const dp_code *code, int module);
/* Compiles the function statement `def` (of d->code; or the expression
 * statement of its lambda) through the caller's hook and compares it with
 * d->code: 1 equivalent, 0 not, -1 not checked; `why` says why not. */
int dc_validate(dc *d, dp_node *def, char *why, size_t whylen);
/* The same for a module's body (d->code a module): compiled whole. */
int dc_validate_module(dc *d, dp_nodes *body, char *why, size_t whylen);
/* The same for a class body: a class statement where its qualified name says. */
int dc_validate_class(dc *d, dp_nodes *body, char *why, size_t whylen);

/* ---- 3.8-3.10 block-stack try/except/finally and with (try_legacy.c) ---- */
/* SETUP_FINALLY/SETUP_WITH/SETUP_ASYNC_WITH (a whole statement), POP_BLOCK and
 * POP_EXCEPT met by the region walker at i: 1 if handled (*next set), 0 if i
 * is none of them (or not in a form we know), -1 on error. */
int dc_legacy_op(dc *d, int i, int end, dc_stack *st, dp_nodes *out, int *next);
/* async with from its BEFORE_ASYNC_WITH at i (called by dc_with). */
int dc_only_unwinds_legacy(const dc *d, int j);
int dc_legacy_async_with(dc *d, int i, dc_stack *st, dp_nodes *out, int *next);
/* The end (RETURN_VALUE) of the normal exit of a with at its POP_BLOCK i,
 * `POP_BLOCK; <call __exit__>; <code computing a return value>`, which 3.10
 * copies into the branches that end the with's body, or -1. */
int dc_legacy_exit_end(const dc *d, int i);
/* Is the jump j a way out of a try statement that goes on past j: the
 * try body's normal exit (`POP_BLOCK; JUMP`, its handler after j) or the
 * end of an except clause (`POP_EXCEPT; JUMP`, after an `except ... as e`
 * clause `POP_EXCEPT; e = None; del e; JUMP`)?  A jump back so placed is
 * no loop's end: the handler closes later (END_FINALLY, RERAISE), and the
 * loop's own jump back follows that (dead when every part leaves). */
int dc_legacy_inside_try(const dc *d, int j);
/* The end of the statement whose block SETUP s opens, past its handler's
 * last instruction (the RERAISE or END_FINALLY closing it), or -1 when
 * that is not known (a bare except clause ends the handler). */
int dc_legacy_handler_end(const dc *d, int s);
/* 3.10: points the jumps to copies of an except clause's way out (POP_EXCEPT
 * and a return tail) at the copy the clause falls into (before reachability
 * is known: the other copies become dead). */
void dc_legacy_join_exit_copies(dc *d);
/* ---- end of try_legacy.c ---- */
/* 3.13: turns the copies CPython inlined of a `return` statement back into
 * jumps to the statement (copies.c; before the graph is built), counted in
 * d->joined_copies. */
void dc_join_return_copies(dc *d);

/* ---- helpers shared by stmt.c, try.c and try_legacy.c: comparing and
 * classifying instructions, the parts common to both try/with structurers ---- */
/* JUMP and the conditional jumps (not FOR_ITER, nor the 3.8-3.10 block
 * setups) (stmt.c). */
int dc_is_jump(int op);
/* A conditional jump that pops its operand (POP_JUMP_IF_*). */
int dc_is_pop_jump(int op);
/* A copy at i, within [0, end), of the finally body `ops` (the handler's
 * code up to its closing RERAISE, which follows it): its length, 0 if
 * none.  Jumps inside keep their places; where the body leaves for its end
 * the copy goes where its own end goes, however CPython threaded it (stmt.c). */
int dc_copy_len(const dc *d, int i, int end, const dp_instr *ops, int len);
/* As dc_copy_len; where the copy is one, the indices into ops where the
 * body leaves for its end go to ks (at most max of them): their count,
 * -1 if no copy (stmt.c). */
int dc_copy_exits(const dc *d, int i, int end, const dp_instr *ops, int len, int *ks, int max);
/* Does control go on at t just as at c?  CPython copies a block that ends
 * the code (`return x`) into each jump to it, and threads a jump to a
 * JUMP to where that one goes (stmt.c). */
int dc_same_continuation(const dc *d, int t, int c);
/* The copy [i, i + len) of a finally body is taken: its jumps to copies of
 * the code after it go there again, undoing what CPython threaded, so that
 * code is reached once (stmt.c). */
void dc_unthread_copy(dc *d, int i, int len);
/* Takes the copy at i of the finally body `ops` (as dc_copy_len finds it):
 * unthreads it, marks it seen with its handler blocks placed apart (3.12+);
 * its length, 0 if none (stmt.c). */
int dc_take_copy(dc *d, int i, int end, const dp_instr *ops, int len);
/* The same operation: opcode, argument, constant and name (stmt.c). */
int dc_same_instr(const dp_instr *a, const dp_instr *b);
/* The first index of the ascending a[0..n) whose value is v or more (n if none). */
int dc_lower_bound(const int *a, int n, int v);
/* A hash of an instruction: equal for instructions dc_same_instr finds the same. */
uint32_t dc_instr_hash(const dp_instr *x);
/* SETUP_FINALLY, SETUP_WITH or SETUP_ASYNC_WITH: opens a 3.8-3.10 block (stmt.c). */
int dc_is_block_setup(int op);
/* 3.12+: the furthest place past `after` that a JUMP in the cold handler of
 * a try starting in [from, to) goes to (a `break` in an except clause placed
 * after the loop), else `after` (try.c). */
int dc_cold_loop_exit(dc *d, int from, int to, int after);
/* 3.12+: the last JUMP back to `head` in the cold handler (or right after
 * it) of a try starting in [head, end) placed past `end`, unconsumed or a
 * back edge of the graph (a failed speculation may have consumed it): a
 * loop whose only jump back is a continue of an except clause, or -1 (try.c). */
int dc_cold_back_edge(dc *d, int head, int end);
/* Is the jump at j a back edge of the graph: its target starts a block that
 * dominates j's (a loop's, not a cold handler's way back to the code after
 * its statement)?  (loop.c) */
int dc_is_back_edge(dc *d, int j);
/* 3.12+: does instruction j lie in the handler code (up to its cleanup
 * block, placed after the function) of a try starting in [from, to)? (try.c) */
int dc_in_cold_handler(dc *d, int j, int from, int to);
/* Is `target` where a break or continue of the innermost loop goes? (try.c) */
int dc_is_loop_exit(const dc *d, int target);
/* Is `target` where a continue of the innermost loop goes (its head, or
 * NOPs just before it)? (try.c) */
int dc_is_loop_head(const dc *d, int target);
/* The S_WITH node of a with statement at `at` with its one item, whose
 * manager is `mgr` (try.c).  The body is walked with *exitfn (the bound
 * __exit__) on the stack, then *slot (where the `as` target is stored) when
 * the body binds one; the target is then (*slot)->a->l1.v[0]. */
dp_node *dc_with_node(dc *d, dp_node *mgr, int is_async, int at, dp_node **exitfn, dp_node **slot);
/* Can `op` be part of the type expression an except clause matches (a
 * name, an attribute, a tuple of them, a call)? (try.c) */
int dc_is_exc_type_op(int op);
/* The `as` name of the except clause `h` from the instruction at `at` that
 * binds it (POP_TOP: none) (try.c). */
int dc_except_binding(dc *d, dp_node *h, int at);
/* The body [body, end) of the except clause h, going on at exit, with prev
 * on the stack and h's name bound in it (try.c). */
int dc_except_body(dc *d, dp_node *h, int body, int end, int exit, dc_stack *st, dp_node *prev);

/* try_star.c: is the handler at H (PUSH_EXC_INFO) one of except* clauses?
 * Their clauses, into the try statement tr (see except_handlers). */
int dc_is_except_star(const dc *d, int H);
int dc_except_star_handlers(dc *d, dp_node *tr, int H, int clean, int exit, dc_stack *st, int *alone);
/* 3.11: the else clause of the except* statement whose handler is at H
 * placed after the handler (see try_star.c). */
int dc_except_star_layout(const dc *d, int H, int clean, int cend, int body_end, int *else_at, int *after);
/* A try/except/finally compiles as a try/except inside a try/finally: the
 * S_TRY `tr` of the finally takes the parts of that inner one (try.c). */
void dc_merge_inner_except(dp_node *tr);
/* ---- end of the shared helpers ---- */

#endif
