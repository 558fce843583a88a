/* STUB: generated */
#include "opcodes.h"
const dp_optable dp_optable_3_13 = {13, 0, 0, {0}, {0}, {0}};
