/* Translation validation: is a recompiled decompilation equivalent to the
 * original bytecode?  See equiv.c for the method and its limits. */
#ifndef DEPYF_EQUIV_H
#define DEPYF_EQUIV_H

#include <stddef.h>

#include "code.h"

/* Compares two code objects of the same CPython version: 1 when `cand`
 * does what `orig` does (same observable operations in the same order, on
 * the same values, with the same exception handling), 0 when not (`why`
 * names the offsets), -1 when the check could not be made (a limit, bytecode
 * the checker does not model, an error; `why` says which).  Nested code
 * objects are compared by name and signature, except lambdas and
 * comprehensions (names in angle brackets), which are compared in full. */
int dp_equivalent(const dp_code *orig, const dp_code *cand, int flags, char *why, size_t whylen);

/* The constants with no literal form that the printer named (print.h): in
 * `cand`, reading the global DP_NONLITERAL_PREFIX<k> loads named->v[k]. */
typedef struct dp_named_consts {
    const dp_const *const *v;
    size_t n;
} dp_named_consts;

/* dp_equivalent for a candidate printed with named constants. */
int dp_equivalent_named(const dp_code *orig, const dp_code *cand, int flags, const dp_named_consts *named, char *why,
                        size_t whylen);

/* flags of dp_equivalent.  DP_EQ_STABLE_GLOBALS: reading a global is taken
 * to give the same value wherever it happens in one run, so global reads
 * may move past other operations.  True of the names Dynamo binds for its
 * transformed code (compiled graphs, resume functions, imported modules),
 * not of arbitrary code, where a call may rebind a global. */
enum { DP_EQ_STABLE_GLOBALS = 1 };

#endif
