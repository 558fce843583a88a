/* STUB: generated */
#include "opcodes.h"
const dp_optable dp_optable_3_9 = {9, 0, 0, {0}, {0}, {0}};
