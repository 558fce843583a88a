/* What the structurer's files share besides dc.h: stmt.c (the walk of a
 * region and its simple statements), copies.c (the copies CPython makes of
 * finally bodies and small exits), loop.c (loops), cond.c (conditions). */
#ifndef DEPYF_STRUCTURE_H
#define DEPYF_STRUCTURE_H

#include "dc.h"

/* dc_cond's and the loops' result when the statement they built holds the
 * rest of the region, whose end is then reachable only as that statement's is. */
enum { REST_OF_REGION = 2 };

/* ---- stmt.c: the walk of a region, stores and temporaries ---- */
int dc_back_edge(dc *d, int head, int end);
int dc_cold_tail_jumps_to(const dc *d, int from, int end, int target);
int dc_far_jump_stmt(dc *d, int i, int target, int end, int exit, dp_nodes *out);
int dc_flush_leftovers(dc *d, dc_stack *st, int operands, const dp_node *value, dp_nodes *out, int at);
int dc_is_cond_jump(int op);
int dc_is_legacy_async_for(const dc *d, int i);
int dc_is_name_store(int op);
int dc_is_terminator(int op);
int dc_jump_stmt(dc *d, int i, int target, int exit, dp_nodes *out, int *handled);
int dc_jumps_into(const dc *d, int from, int to, int lo, int hi);
int dc_past_line_nops(const dc *d, int i);
int dc_same_stack(const dc_stack *a, const dc_stack *b);

/* ---- copies.c: copies of finally bodies and exits, the unwinding of a try body ---- */
int dc_breaks_out(const dc *d, const dc_loop *lp, int target);
int dc_comprehension_cleanup_end(const dc *d, int p);
int dc_continues_as(const dc *d, int a, int b);
int dc_copy_falls_through(const dc *d, int after, int end);
int dc_enclosing_cleanup(const dc *d, int i, int end);
int dc_exit_block_len(const dc *d, int t);
int dc_exit_copy_len(const dc *d, int i, int exit);
int dc_finally_copy_at(const dc *d, int i, int end);
int dc_is_except_cleanup(const dc *d, int i, int end);
int dc_leaves_clause(int op);
int dc_only_unwinds(const dc *d, int j, int end);
int dc_resolve_jumps(const dc *d, int i);
int dc_return_tail_end(const dc *d, int k);
int dc_same_clause_end(const dc *d, int x, int i, int t);
int dc_statement_boundary(dc *d, int i, int k);
int dc_unwinds_to_return(const dc *d, int j, int end);
void dc_skip_exit_copy_at(dc *d, int t, int to);
void dc_take_any_finally_copy(dc *d, int i, int end);

/* ---- loop.c: loops ---- */
int dc_async_for_loop(dc *d, int i, int end, dc_stack *st, dp_nodes *out, int *next);
int dc_find_loop_exit(dc *d, int from, int to, int after);
int dc_for_loop(dc *d, int i, int end, int exit, dc_stack *st, dp_nodes *out, int *next);
int dc_jumps_as(const dc *d, int from, int to, int exit, int after);
int dc_legacy_loop_end(const dc *d, int i, int last, int end);
int dc_loop_body(dc *d, dc_loop *lp, int start, int end, dc_stack *st, dp_nodes *out);
int dc_loop_else(dc *d, int from, int end, dc_stack *st, dp_nodes *out);
int dc_nothing_runs(const dc *d, int from, int to);
int dc_while_true(dc *d, int i, int last, int end, int exit, dc_stack *st, dp_nodes *out, int *next);
int dc_while_true_cold(dc *d, int i, int cold, int end, dc_stack *st, dp_nodes *out, int *next);
int dc_while_true_to(dc *d, int i, int E, dc_stack *st, dp_nodes *out, int *next);

/* ---- cond.c: conditions ---- */
int dc_is_assert_false(const dc *d, int start, const dp_node *s);
int dc_while_without_bottom_test(dc *d, int i, int last, int end, int exit, dc_stack *st, dp_nodes *out, int *next);

#endif
