/* The one table of bytecode-layout facts per CPython version (layout.h). */
#include "layout.h"

dp_layout dp_layout_for(int py_minor) {
    int v = py_minor;
    dp_layout l = {
        .block_stack = v <= 10,
        .finally_subroutine = v <= 8,
        .assert_loads_global = v <= 8,
        .keeps_dead_blocks = v <= 9,
        .copies_small_exits = v >= 10,
        .while_test_at_bottom = v >= 10,
        .line_nops = v >= 10,
        .match_tests_none_by_is = v == 10,
        .qualname_on_stack = v <= 10,
        .no_method_calls_on_imports = v >= 11,
        .star_else_after_handlers = v == 11,
        .forward_cond_jumps = v >= 12,
        .cold_handlers = v >= 12,
        .copies_join_blocks = v >= 12,
        .inline_comprehensions = v >= 12,
        .bool_ops_by_copy = v >= 12,
        .type_param_scopes = v >= 12,
        .copies_returns = v >= 13,
        .class_records_lines_attrs = v >= 13,
        .cells_by_load_fast = v >= 13,
        .function_attrs_after_make = v >= 13,
        .method_load_null_last = v >= 13,
        .keeps_folded_test_consts = v == 10 || v == 11,
    };
    return l;
}
