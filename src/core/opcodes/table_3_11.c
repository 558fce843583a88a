/* STUB: generated */
#include "opcodes.h"
const dp_optable dp_optable_3_11 = {11, 0, 0, {0}, {0}, {0}};
