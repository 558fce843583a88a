/* STUB: generated */
#include "opcodes.h"
const dp_optable dp_optable_3_8 = {8, 0, 0, {0}, {0}, {0}};
