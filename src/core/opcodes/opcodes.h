/* Per-version opcode tables.  tools/gen_opcodes.py generates opnames.h (the
 * union of every supported version's opcode names, as the dp_opname enum)
 * and one table_3_<minor>.c per version from that interpreter's `opcode`
 * module; the generated files are committed.  Nothing here depends on the
 * Python that runs the decompiler. */
#ifndef DEPYF_OPCODES_H
#define DEPYF_OPCODES_H

#include <stdint.h>

#include "opnames.h" /* enum dp_opname { DPO_UNKNOWN = 0, DPO_POP_TOP, ... DPO_COUNT } */

enum {
    DP_OPF_HASARG = 1, /* opcode >= HAVE_ARGUMENT */
    DP_OPF_JREL = 2,   /* in opcode.hasjrel */
    DP_OPF_JABS = 4,   /* in opcode.hasjabs */
};

typedef struct dp_optable {
    int py_minor;
    uint16_t magic;            /* the release's .pyc magic number (low 16 bits) */
    uint16_t magic_first;      /* oldest magic number (alphas/betas) accepted as this version */
    uint16_t op[256];          /* dp_opname of each opcode byte, DPO_UNKNOWN if unused */
    uint8_t caches[256];       /* inline CACHE code units following the instruction (3.11+) */
    uint8_t flags[256];        /* DP_OPF_* */
} dp_optable;

extern const char *const dp_opname_str[DPO_COUNT];

#define DP_MIN_MINOR 8
#define DP_MAX_MINOR 13

/* NULL when 3.<py_minor> is not supported. */
const dp_optable *dp_optable_for(int py_minor);
/* The 3.x minor version whose magic range holds `magic`, or -1. */
int dp_minor_for_magic(uint16_t magic);

#endif
