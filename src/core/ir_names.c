/* STUB */
#include "ir.h"
const char *dp_irop_name(int op) { (void)op; return "?"; }
