/* What fallback.c's files share: the state machine's blocks, their
 * handlers and the fallback's own state (fallback.c), the translation
 * of one block (fallback_instr.c), 3.8's finally blocks
 * (fallback_finally.c), except* (fallback_star.c). */
#ifndef DEPYF_FALLBACK_H
#define DEPYF_FALLBACK_H

#include "dc.h"

#define MAX_LEVELS 4     /* nested machines (3 static blocks each; CPython allows 20) */
#define MAX_EXPR_DEPTH 40 /* deeper expressions are spilled: the printer and compiler stay shallow */

/* The names the fallback makes (dp_fb_mark.var in ast.h). */
enum {
    FB_TEMP = 1,  /* a temporary assigned once per run of its block */
    FB_STACK = 2, /* __stack_<op>: a slot at the block's entry */
    FB_CELL = 3,  /* LOAD_CLOSURE: the cell itself, only used by MAKE_FUNCTION */
};

/* What a name saved by 3.12's LOAD_FAST_AND_CLEAR holds (dp_fb_mark.saved). */
enum {
    FB_SAVED_VALUE = 1, /* (value,) or () when unbound: the store restores the variable */
    FB_SAVED_CELL = 2,  /* the same for a cell variable: nothing to restore */
};

/* An exception handler: a 3.11+ exception-table entry, or (3.9/3.10) the
 * SETUP_FINALLY/SETUP_WITH block on top of the block stack, whose handler
 * receives six values. */
typedef struct fb_exc {
    int target;         /* IR index of the handler */
    int depth;          /* stack values kept below what is pushed */
    int lasti;
    int six;            /* <= 3.10: [prev tb, prev value, prev type, tb, value, type] */
    int null;           /* <= 3.10: slot depth - 1 holds the NULL a failed call left (see lone_call) */
    int block;          /* the handler's block (3.8: one of its copies), -1 until reached */
    int same_target;    /* the next entry with this target, -1 */
} fb_exc;

/* One entry of a 3.9/3.10 block stack: a SETUP_* block (handler >= 0) or
 * the except-handler block of a running handler (handler == -1). */
typedef struct fb_setup {
    int handler, level;
} fb_setup;

/* What a stack slot holds at a block entry; SLOT_RET + i: a 3.8 return
 * address (END_FINALLY goes back to IR index i). */
enum { SLOT_VALUE, SLOT_NULL, SLOT_SAVED, SLOT_CELL_SAVED, SLOT_RET };

typedef struct fb_block {
    int start, end;     /* IR range */
    int exc;            /* exception-table entry covering it, or -1 */
    int reached;
    int depth, level;   /* entry stack depth, PUSH_EXC_INFO nesting */
    int *slots;         /* entry: SLOT_* per stack slot */
    int from_normal;    /* reached by a jump or fall-through */
    int id;             /* state number, -1 if unreachable */
    int pop_except;     /* ends with POP_EXCEPT: leaves a nested machine */
    int next;           /* the one block it continues to (jump, fall-through), else -1 */
    int escape;         /* ends a tidy-up re-raising into this level's escape clause */
    fb_setup *setups;   /* <= 3.10: the blocks open at entry (see fb.setups) */
    int nsetups;
    int copy;           /* 3.8: next copy of these instructions for another entry, or -1 */
    dp_nodes body;
} fb_block;

typedef struct fb {
    dc *d;
    fb_block *b;
    int nb;
    int bcap;           /* room for copies of blocks (3.8 finally bodies), never moved */
    long copy_budget;   /* what copies may still cost (entry slots, open blocks, instructions) */
    int *block_of;      /* IR index -> block starting there, -1 */
    int *work;
    int nwork;
    int flat;           /* one machine for every level */
    int scope_body;     /* module or class body: `return` leaves the machine */
    const char *pfx;    /* "__" (or more underscores if the code uses such names) */
    int ntemps;
    int atoms;          /* slots [0, atoms) of st hold atoms (see flush) */
    const char **stack_names;
    int nstack_names;
    dp_nodes fixups;    /* E_CONST state numbers: op = block index, filled at the end */
    int numbered;       /* blocks have their state numbers */
    int *fwd;           /* block -> the block it forwards to (itself unless it only jumps) */
    int builtins_used;  /* the body starts with `import builtins as __builtins` */
    int *enter;         /* states that start a nested machine, being collected */
    int nenter;
    fb_exc *ex;         /* the handlers blocks refer to (fb_block.exc) */
    int nex, excap;
    int *ex_at;         /* IR index -> the first entry with that target, -1 */
    int block_stack;    /* <= 3.10: handlers come from SETUP_* blocks, entered with six values */
    int walk_setups;    /* 3.8: SETUP_* blocks are walked (setups), their depths not static */
    const dp_cfg *g;
    int pending_used;   /* __pending / __pctx carry exceptions between levels */
    fb_setup *setups;   /* the block stack of the block being translated: except-handler
                         * blocks (3.9/3.10; their SETUP_* blocks are the CFG's regions),
                         * SETUP_* blocks too (3.8) */
    int nsetups, setupcap;
    /* the block being translated */
    fb_block *cur;
    dc_stack st;
    int *dep;           /* expression depth per stack slot */
    int depcap;
    int hdepth;         /* slots [0, hdepth) must stay canonical (handler depth), or 0 */
    dp_nodes *out;
    int at;             /* current instruction, for statement positions */
    int exit_level;     /* level of the code after the current block */
    uint8_t *cleared;   /* entry slots of the current block already set to None */
    dp_nodes temps;     /* temporaries of the current block not yet set to None */
    const char *state_name;
    int star;           /* the code has except*: RAISE_VARARGS 0 and POP_EXCEPT know __egh<level> */
    int egh_max;        /* the highest level whose __egh<level> is used, or -1 */
} fb;

/* ---- fallback.c: names, values, statements, the stack, blocks and their entries ---- */
const char *fb_def_name(const dp_node *v);
const char *fb_make_name(fb *F, const char *what, int n);
const char *fb_var_name(fb *F, const dp_instr *ins);
dp_node *fb_assign_stmt(fb *F, dp_node *target, dp_node *value);
dp_node *fb_attr(fb *F, dp_node *obj, const char *name);
dp_node *fb_bool_const(fb *F, int v);
dp_node *fb_builtin(fb *F, const char *name);
dp_node *fb_call(fb *F, const char *fn, dp_node *a1, dp_node *a2, dp_node *a3);
dp_node *fb_call_of(fb *F, dp_node *callee, dp_node *a1, dp_node *a2, dp_node *a3);
dp_node *fb_canon(fb *F, int k, int saved);
dp_node *fb_compare(fb *F, dp_node *a, int op, dp_node *b);
dp_node *fb_def_renamed(fb *F, dp_node *fn);
dp_node *fb_empty_tuple(fb *F);
dp_node *fb_goto_stmt(fb *F, int block);
dp_node *fb_int_const(fb *F, long v);
dp_node *fb_lower(fb *F, dp_node *e, int depth);
dp_node *fb_marked_name(fb *F, const char *s, int var);
dp_node *fb_name_target(fb *F, const dp_instr *ins);
dp_node *fb_node(fb *F, int kind);
dp_node *fb_pop(fb *F);
dp_node *fb_spill(fb *F, dp_node *v);
dp_node *fb_stmt(fb *F, int kind);
dp_node *fb_str_const(fb *F, const char *s);
dp_node *fb_temp(fb *F);
dp_node *fb_top(fb *F, int k);
int fb_block_at(fb *F, int i);
int fb_branch(fb *F, dp_node *cond, int yes, int drop_yes, int no, int drop_no);
int fb_clear_dead(fb *F, dp_nodes *out, const dp_node *keep, int consume);
int fb_clear_now(fb *F, int k, const dp_node *keep);
int fb_comprehension_has_form(fb *F, dp_node *fn);
int fb_continue_to(fb *F, int bi);
int fb_emit(fb *F, dp_node *s);
int fb_emit_assign(fb *F, dp_node *target, dp_node *value);
int fb_emit_def(fb *F, dp_node *v, const char *name);
int fb_emit_expr(fb *F, dp_node *value);
int fb_emit_to(fb *F, dp_nodes *out, dp_node *s);
int fb_ensure_dep(fb *F);
int fb_exc_entry(fb *F, int target, int depth, int lasti, int six, int null, int block);
int fb_fail(fb *F, int at, const char *what);
int fb_flush(fb *F, int upto);
int fb_handled_stmt(fb *F, dp_nodes *out, int n, dp_node *value);
int fb_is_atom(const dp_node *e);
int fb_is_canon(const dp_node *e, int k);
int fb_is_class_call(const dp_node *v);
int fb_is_comprehension_code(const dp_code *c);
int fb_jump_to(fb *F, int bi, dp_nodes *out);
int fb_var_of(const dp_node *e);
int fb_saved_of(const dp_node *e);
int fb_no_var(const dp_node *e);
int fb_no_var_kind(int kind);
int fb_oom(fb *F);
int fb_push(fb *F, dp_node *e, int depth);
int fb_push_setup(fb *F, int handler, int level);
int fb_reach(fb *F, int bi, const dc_stack *st, int level, int normal, int at);
int fb_reads_slot(fb *F, const dp_node *e, int k);
int fb_ret_of(const dp_node *e);
int fb_running_handlers(const fb *F);
int fb_slot_kind(const dp_node *v);
int fb_transfer(fb *F, int upto, dp_nodes *out);
void fb_lower_atoms(fb *F, int low);

/* ---- fallback_instr.c: one block's instructions ---- */
dp_node *fb_cond_test(fb *F, int op, dp_node *v);
int fb_aiter_call(fb *F, const char *builtin, const char *method, dp_node *v);
int fb_before_with(fb *F, int async);
int fb_below_test(fb *F, const dp_node *test);
int fb_collection_op(fb *F, const dp_instr *ins);
int fb_copy_dict_without_keys(fb *F);
int fb_emit_raise(fb *F, dp_node *exc, dp_node *cause, dp_nodes *out);
int fb_end_async_for(fb *F);
int fb_expr_step(fb *F, int i);
int fb_for_iter(fb *F, int i);
int fb_fstring_parts(fb *F, int count);
int fb_get_anext(fb *F);
int fb_import_name(fb *F, int i, int *skip);
int fb_keep_handler_slots(fb *F);
int fb_leave_handler(fb *F, int i);
int fb_make_function(fb *F, const dp_instr *ins);
int fb_match_op(fb *F, const dp_instr *ins);
int fb_npop(const dp_instr *in);
int fb_pop_except(fb *F, int i);
int fb_return_value(fb *F);
int fb_save_local(fb *F, const dp_instr *ins);
int fb_settle_class(fb *F, int next);
int fb_settle_function(fb *F, int next);
int fb_setup_annotations(fb *F);
int fb_shuffle(fb *F, int i);
int fb_store_name(fb *F, const dp_instr *ins);
int fb_store_or_delete(fb *F, const dp_instr *ins);
int fb_unary_not(fb *F);
int fb_unpack(fb *F, int i, int *skip);
int fb_with_except_start(fb *F);

/* ---- fallback_finally.c: 3.8's finally blocks ---- */
int fb_translate(fb *F, int bi);

/* ---- fallback_star.c: except* ---- */
int fb_check_eg_match(fb *F);
int fb_prep_reraise_star(fb *F);
int fb_star_leave(fb *F);
int fb_star_prologue(fb *F, dp_nodes *out);
int fb_star_reraise(fb *F);
int fb_uses_star(const dc *d);

#endif
