/* The version-neutral code-object model.  Filled either by the marshal
 * reader (.pyc files of any supported version) or by the CPython extension
 * from a live code object.  All memory belongs to one dp_arena. */
#ifndef DEPYF_CODE_H
#define DEPYF_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"

typedef enum dp_const_kind {
    DP_CONST_NONE,
    DP_CONST_TRUE,
    DP_CONST_FALSE,
    DP_CONST_ELLIPSIS,
    DP_CONST_INT,       /* text: a Python int literal, e.g. "42", "-7", "0x1f..." */
    DP_CONST_FLOAT,     /* f */
    DP_CONST_COMPLEX,   /* re, im */
    DP_CONST_STR,       /* text/len: UTF-8 ("surrogatepass": lone surrogates kept) */
    DP_CONST_BYTES,     /* text/len: raw bytes */
    DP_CONST_TUPLE,     /* items/n */
    DP_CONST_FROZENSET, /* items/n */
    DP_CONST_CODE,      /* code */
    DP_CONST_OTHER,     /* text: the source of an expression for the value (a list display read from
                         * a .pyc, a live function's default shown as a name or repr) */
    DP_CONST_OBJECT,    /* a live object with no literal form (Dynamo can load any object): text =
                         * its repr, which need not be Python; printed as a name (print.h) */
} dp_const_kind;

typedef struct dp_code dp_code;

typedef struct dp_const {
    dp_const_kind kind;
    const char *text;  /* INT, STR, BYTES; NUL-terminated but may hold NULs: use len */
    size_t len;
    double f;          /* FLOAT; real part of COMPLEX */
    double im;         /* imaginary part of COMPLEX */
    struct dp_const **items;
    size_t n;
    dp_code *code;
    const void *origin; /* the caller's object this was made from (opaque to the core; NULL from a .pyc):
                         * lets a caller bind the constants the printer names (dp_options.named) */
    size_t at;          /* 1 + the byte of its file it was read at (marshal.c), 0: not read from one */
} dp_const;

/* Flags of co_flags that the decompiler cares about (same in every version). */
enum {
    DP_CO_OPTIMIZED = 0x1,
    DP_CO_NEWLOCALS = 0x2,
    DP_CO_VARARGS = 0x4,
    DP_CO_VARKEYWORDS = 0x8,
    DP_CO_NESTED = 0x10,
    DP_CO_GENERATOR = 0x20,
    DP_CO_COROUTINE = 0x80,
    DP_CO_ITERABLE_COROUTINE = 0x100,
    DP_CO_ASYNC_GENERATOR = 0x200,
};

typedef struct dp_strs {
    const char **v;
    size_t n;
} dp_strs;

struct dp_code {
    int py_minor;          /* 8..13: CPython 3.<py_minor> made this bytecode */
    int argcount, posonlyargcount, kwonlyargcount;
    int stacksize, flags, firstlineno;
    const char *name, *qualname, *filename; /* qualname = name before 3.11 */
    dp_strs names;      /* co_names */
    dp_strs varnames;   /* co_varnames: arguments first, then locals */
    dp_strs cellvars;   /* co_cellvars */
    dp_strs freevars;   /* co_freevars */
    dp_const **consts;
    size_t nconsts;
    const uint8_t *code;      /* co_code: raw wordcode (3.11+: with CACHE entries) */
    size_t codelen;
    const uint8_t *exctable;  /* co_exceptiontable (3.11+), else NULL */
    size_t exctablelen;
    const uint8_t *linetable; /* co_lnotab (<=3.9) / co_linetable (3.10+) */
    size_t linetablelen;
};

struct dp_buf;
/* A short repr of a constant, close to Python's, cut at about `max`
 * characters (disassembly listings and messages). */
void dp_const_repr(const dp_const *c, size_t max, struct dp_buf *out);

/* How big an input is: the bytes of its bytecode, exception and line
 * tables, names and constants, those of every code object and constant in
 * it included, each counted once however often it is referenced (about
 * the size of its .pyc).  `bytecode` counts the bytecode alone.  The
 * budgets of a decompilation are in proportion to it (depyf.h). */
typedef struct dp_input_size {
    size_t bytes, bytecode;
} dp_input_size;
/* Adds `code` (and what it holds) to *size, `c` likewise; objects already
 * counted (in `seen`, which starts zeroed) are skipped.  -1: out of memory. */
struct dp_ptrmap;
int dp_size_code(dp_arena *a, struct dp_ptrmap *seen, const dp_code *code, dp_input_size *size);
int dp_size_const(dp_arena *a, struct dp_ptrmap *seen, const dp_const *c, dp_input_size *size);

/* Helpers for building models (used by the marshal reader and extension). */
dp_const *dp_const_new(dp_arena *a, dp_const_kind kind);
dp_code *dp_code_new(dp_arena *a);

#endif
