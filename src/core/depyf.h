/* Public API of the depyf C core.  No Python.h: everything works on the
 * version-neutral model in code.h. */
#ifndef DEPYF_H
#define DEPYF_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "buf.h"
#include "code.h"
#include "error.h"

/* Which output line each bytecode offset of the top-level code object was
 * printed on (sorted by offset); filled when dp_options.linemap is set.
 * Owned by the caller: free `entries` with free(). */
typedef struct dp_linemap_entry {
    int32_t offset, line;
} dp_linemap_entry;
typedef struct dp_linemap {
    dp_linemap_entry *entries;
    size_t n, cap;
} dp_linemap;

/* See dp_options.named. */
typedef struct dp_named_out {
    const dp_const **v;
    size_t n;
} dp_named_out;

/* Translation validation (issue 11): the caller compiles source text, the
 * core compares the result with the original bytecode.  The hook compiles
 * `src` (NUL-terminated module source) as if it started on line
 * `first_line` (>= 1: after first_line - 1 blank lines), with the
 * __future__ bits of `flags` (co_flags), and stores the module's code
 * object, modelled in `a`, in *out.  Returns 0, 1 when the source does not
 * compile (`why` says why), -1 when compiling could not be tried. */
typedef int (*dp_compile_fn)(void *ctx, const char *src, long first_line, int flags, dp_arena *a, dp_code **out,
                             char *why, size_t whylen);

/* Counts of one decompilation: functions whose structured form was checked
 * equivalent to their bytecode, found not equivalent (printed as the state
 * machine instead), or not checked (a limit of the checker; printed as the
 * state machine too). */
typedef struct dp_validation_stats {
    long validated, fallback, unchecked;
} dp_validation_stats;

/* What one decompilation used, against its budgets (see below). */
typedef struct dp_usage {
    dp_input_size input;     /* the input's size (code.h) */
    size_t work;             /* bytecode decompiled: each code object once per use */
    size_t output;           /* bytes of source text printed */
    size_t validation;       /* bytes of source printed to be validated */
    size_t memory;           /* bytes of the decompilation's arena */
} dp_usage;

typedef struct dp_options {
    int indent;          /* spaces per level; 0 means 4 */
    dp_linemap *linemap; /* optional out: offset -> output line of the top-level code */
    /* Optional: a live function's __defaults__ (a tuple) and __kwdefaults__
     * (a tuple of (name, value) pairs), printed in the top-level def.  An
     * object with no literal form is a DP_CONST_OTHER whose text is the
     * expression to print (e.g. the global name it is bound to). */
    const dp_const *defaults;
    const dp_const *kwdefaults;
    /* For tests: print every function as the state machine of fallback.c,
     * which otherwise runs only where no structure is found. */
    int force_fallback;
    /* Optional validation: every function body structured from bytecode of
     * CPython 3.<compile_minor> is printed, compiled by `compile` and compared
     * with its original (equiv.h); one that is not equivalent is printed as
     * the state machine instead.  Counts go to `stats` when set. */
    dp_compile_fn compile;
    void *compile_ctx;
    int compile_minor;
    dp_validation_stats *stats;
    /* Validation may take global reads as stable (DP_EQ_STABLE_GLOBALS in
     * equiv.h): set for Dynamo's transformed code, whose globals are the
     * graphs and helpers Dynamo itself binds. */
    int stable_globals;
    /* Optional: the name of the top-level def (an identifier).  Without it a
     * function prints under its own name, made valid where it is not one
     * (`<lambda>` as `_lambda`; a lambda whose body is one value prints as a
     * `lambda` expression). */
    const char *def_name;
    /* Optional out: the constants with no literal form that the output names
     * DP_NONLITERAL_PREFIX<k> (print.h), k-th at v[k], so that a caller can
     * bind those names and run the output.  Owned by the caller: free `v`
     * with free(). */
    dp_named_out *named;
    /* Optional out: what the decompilation used (also when it failed). */
    dp_usage *usage;
    /* Optional: the memory budget in bytes (0: DP_ARENA_DEFAULT_LIMIT). */
    size_t memory_limit;
} dp_options;

/* Limits checked on input; past them a clear error, never a crash. */
#define DP_MAX_NESTING 100        /* nested code objects / blocks */
#define DP_MAX_INSTRUCTIONS 4000000

/* Budgets of one decompilation in proportion to its input of S bytes, B of
 * them bytecode (dp_input_size, every shared object counted once), so that
 * time and memory stay in proportion to the input whatever it holds
 * (docs/limits.md).  Each is checked before the work it pays for is done:
 * - work: the bytecode decompiled, a code object counted once per use (a
 *   marshal DAG of code objects used twice at each of n levels would be
 *   decompiled 2**n times): at most DP_WORK_FACTOR * B + DP_WORK_FLOOR;
 * - output: the source text, at most DP_OUTPUT_FACTOR * S + DP_OUTPUT_FLOOR
 *   bytes (a constant loaded many times is printed each time);
 * - validation: the source printed to be validated (a function with its
 *   nested ones, compiled by the caller), at most DP_VALIDATION_FACTOR * S
 *   + DP_VALIDATION_FLOOR bytes; past it functions are not validated.
 * (Measured on the standard library, 3.11: work at most 2.0 B with every
 * function refused by validation, source at most 3.6 S printed as state
 * machines, validation at most 1.0 S.) */
#define DP_WORK_FACTOR 4
#define DP_WORK_FLOOR ((size_t)64 << 10)
#define DP_OUTPUT_FACTOR 64
#define DP_OUTPUT_FLOOR ((size_t)4 << 20)
#define DP_VALIDATION_FACTOR 8
#define DP_VALIDATION_FLOOR ((size_t)1 << 20)

/* Decompiles `code`.  A function's code object becomes a complete `def`
 * (or `async def`) statement; a module's becomes module source.  Appends to
 * `out`.  Returns 0, or -1 with `err` set (then `out` holds nothing useful). */
int dp_decompile(const dp_code *code, const dp_options *opt, dp_buf *out, dp_error *err);

/* A readable disassembly of `code` and every code object nested in it. */
int dp_disasm(const dp_code *code, dp_buf *out, dp_error *err);

/* Parses a whole .pyc file (header + marshalled module code object) into a
 * model allocated in `a`.  Errors name what was wrong (bad magic with the
 * number found and the supported versions, truncation, bad marshal data). */
int dp_read_pyc(dp_arena *a, const uint8_t *data, size_t len, dp_code **out, dp_error *err);
/* Only the 16-byte header of a .pyc file (the first `len` bytes of it, at
 * least 16): the same checks and messages as dp_read_pyc, so that a caller
 * can refuse a file before reading the rest.  Sets *minor to 3.<minor>. */
int dp_check_pyc_header(const uint8_t *data, size_t len, int *minor, dp_error *err);

/* Reads one marshalled object written by CPython 3.<py_minor>.  Positions
 * in messages (and dp_const.at) count from `data`; with _at, from the start
 * of the file `data` is at byte `base` of. */
int dp_marshal_load(dp_arena *a, const uint8_t *data, size_t len, int py_minor,
                    dp_const **out, dp_error *err);
int dp_marshal_load_at(dp_arena *a, const uint8_t *data, size_t len, size_t base, int py_minor, dp_const **out,
                       dp_error *err);

#endif
