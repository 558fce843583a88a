/* STUB: generated */
#include "opcodes.h"
const dp_optable dp_optable_3_12 = {12, 0, 0, {0}, {0}, {0}};
