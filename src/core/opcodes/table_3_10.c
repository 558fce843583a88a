/* STUB: generated */
#include "opcodes.h"
const dp_optable dp_optable_3_10 = {10, 0, 0, {0}, {0}, {0}};
