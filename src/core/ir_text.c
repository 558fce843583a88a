/* STUB */
#include "ir.h"
const char *dp_irop_name(int op) { (void)op; return "?"; }
void dp_ir_dump(const dp_irfunc *f, dp_buf *out) { (void)f; dp_buf_puts(out, "?"); }
