/* STUB */
#include "opcodes.h"
#include <stddef.h>
const char *const dp_opname_str[DPO_COUNT] = {"<unknown>"};
const dp_optable *dp_optable_for(int py_minor) { (void)py_minor; return NULL; }
int dp_minor_for_magic(uint16_t magic) { (void)magic; return -1; }
