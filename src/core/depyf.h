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
} dp_options;

/* Limits checked on input; past them a clear error, never a crash. */
#define DP_MAX_NESTING 100        /* nested code objects / blocks */
#define DP_MAX_INSTRUCTIONS 4000000

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

/* Reads one marshalled object written by CPython 3.<py_minor>. */
int dp_marshal_load(dp_arena *a, const uint8_t *data, size_t len, int py_minor,
                    dp_const **out, dp_error *err);

#endif
