/* How a CPython version lays out the bytecode of the code it compiles: the
 * facts the structurer and the fallback read instead of the version number.
 * Lift fills one dp_layout per function (dp_irfunc.lay, from the version
 * the IR is built from); below the lift, `py_minor` is read only where the
 * output language differs (the syntax or builtins a target Python has).
 * Each field is 1 for the Pythons named in its comment, 0 for the others
 * (docs/pipeline.md lists them with their readers). */
#ifndef DEPYF_LAYOUT_H
#define DEPYF_LAYOUT_H

typedef struct dp_layout {
    /* try/with set up by SETUP_* and POP_BLOCK on a block stack, handlers
     * entered with six values, an exception being three (type, value,
     * traceback) (3.8-3.10); later, an exception table and one value */
    unsigned char block_stack;
    /* finally bodies entered as a subroutine (BEGIN_FINALLY, CALL_FINALLY,
     * POP_FINALLY, END_FINALLY), with exits by WITH_CLEANUP_START (3.8) */
    unsigned char finally_subroutine;
    /* `assert` loads AssertionError with LOAD_GLOBAL (3.8; later
     * LOAD_ASSERTION_ERROR) */
    unsigned char assert_loads_global;
    /* unreachable blocks stay in the code (the peephole optimizer erases a
     * dead jump but not the code it jumped to) (3.8-3.9) */
    unsigned char keeps_dead_blocks;
    /* a small exit with no line of its own (a return, a RERAISE, a with's
     * exit) is copied into each block that jumps to it (3.10+) */
    unsigned char copies_small_exits;
    /* a while loop repeats its test at the bottom (3.10+; before, the
     * bottom is a jump back to the test) */
    unsigned char while_test_at_bottom;
    /* a line with no code of its own (`while True:`) keeps a NOP (PEP 626,
     * 3.10+) */
    unsigned char line_nops;
    /* a match pattern tests MATCH_CLASS/MATCH_KEYS's result with
     * `LOAD_CONST None; IS_OP` (3.10; later POP_JUMP_IF_NONE) */
    unsigned char match_tests_none_by_is;
    /* MAKE_FUNCTION takes the qualified name from the stack (3.8-3.10;
     * later from the code object) */
    unsigned char qualname_on_stack;
    /* `n.attr(...)` is compiled without the method form when the module
     * imports a name n (3.11+) */
    unsigned char no_method_calls_on_imports;
    /* try/except* places its else clause after the handlers (3.11) */
    unsigned char star_else_after_handlers;
    /* conditional jumps only go forward: one to a loop head is inverted to
     * skip a `JUMP head` (3.12+) */
    unsigned char forward_cond_jumps;
    /* handlers, and the code only they reach, are placed after the
     * function's code (cold blocks) (3.12+) */
    unsigned char cold_handlers;
    /* a small block with no line of its own that a jump reaches (an except
     * clause's exit, the code after a loop) is copied into the branches
     * leading to it (3.12+) */
    unsigned char copies_join_blocks;
    /* comprehensions are inlined into the function (PEP 709, 3.12+) */
    unsigned char inline_comprehensions;
    /* `a and b` as a value is `COPY 1; POP_JUMP_IF_*; POP_TOP` (3.12+;
     * before, JUMP_IF_*_OR_POP) */
    unsigned char bool_ops_by_copy;
    /* `def f[T]` and `class C[T]` compile to a function that makes the
     * type parameters, called with the defaults (PEP 695, 3.12+) */
    unsigned char type_param_scopes;
    /* a return reached by several branches is copied into each (3.13+) */
    unsigned char copies_returns;
    /* a class body stores `__firstlineno__` first and
     * `__static_attributes__` last (3.13+) */
    unsigned char class_records_lines_attrs;
    /* the cells of a closure are loaded with LOAD_FAST (3.13+; before,
     * LOAD_CLOSURE) */
    unsigned char cells_by_load_fast;
    /* MAKE_FUNCTION takes only the code; SET_FUNCTION_ATTRIBUTE then sets
     * the defaults, annotations and closure (3.13+) */
    unsigned char function_attrs_after_make;
    /* a method load (LOAD_METHOD, LOAD_ATTR's method form) pushes
     * [method, NULL] (3.13+; before, [NULL, method]) */
    unsigned char method_load_null_last;
    /* `if __debug__:` (`if True:` once the AST optimizer folds it) compiles
     * to `LOAD_CONST True; POP_JUMP_IF_FALSE`, which the peephole pass then
     * deletes, leaving the True in co_consts where the test was compiled
     * (3.10-3.11; 3.8/3.9 drop the test before any constant is added, 3.12+
     * remove unused constants) */
    unsigned char keeps_folded_test_consts;
} dp_layout;

/* The layout of CPython 3.<py_minor>'s bytecode: the one table of version
 * facts below the lift. */
dp_layout dp_layout_for(int py_minor);

#endif
