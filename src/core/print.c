/* STUB */
#include "print.h"
void dp_printer_init(dp_printer *p, dp_buf *out, int indent, dp_error *err) {
    p->out = out; p->indent = indent ? indent : 4; p->line = 1; p->err = err; p->on_stmt = 0; p->ctx = 0;
}
int dp_print_block(dp_printer *p, const dp_nodes *body, int level) { (void)body; (void)level; return dp_fail(p->err, -1, "printer not built yet"); }
int dp_print_expr(dp_printer *p, const dp_node *e) { (void)e; return dp_fail(p->err, -1, "printer not built yet"); }
void dp_print_const(dp_buf *out, const dp_const *c) { (void)c; dp_buf_puts(out, "?"); }
