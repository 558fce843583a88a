/* Precedence-aware printer: AST -> Python source. */
#ifndef DEPYF_PRINT_H
#define DEPYF_PRINT_H

#include "ast.h"
#include "buf.h"
#include "error.h"

typedef struct dp_printer {
    dp_buf *out;
    int indent;          /* spaces per level (4 by default) */
    int line;            /* current output line, 1-based: lets callers map statements to lines */
    int py_minor;        /* the Python 3.x the source must compile under (0: any) */
    /* The class the text is printed in (a caller's wrapper, or the class
     * statement being printed): names its compiler mangles print as written
     * (dp_unmangled).  NULL outside classes. */
    const char *private_class;
    dp_error *err;
    /* Optional: called for every statement as it starts printing, with the
     * output line it starts on (used to map bytecode offsets to lines). */
    void (*on_stmt)(void *ctx, const dp_node *stmt, int out_line);
    void *ctx;
    /* Constants with no literal form (a live object Dynamo loads, a code
     * object outside MAKE_FUNCTION) print as the name NONLITERAL_PREFIX<k>,
     * k their order of first use, and the line of that first use ends with a
     * comment showing their repr: the source stays Python.  `named` holds
     * the dp_const pointers in that order, as bytes (dp_printer_free). */
    dp_buf named;
    size_t commented;    /* names whose comment is written */
    size_t *slots;       /* open-addressing index of `named`: k + 1, 0 empty */
    size_t nslots;       /* a power of two, or 0 */
} dp_printer;

#define DP_NONLITERAL_PREFIX "_depyf_const_"

/* How many constants are named so far (see dp_printer.named), and the k-th. */
size_t dp_printer_nnamed(const dp_printer *p);
const dp_const *dp_printer_named(const dp_printer *p, size_t k);
void dp_printer_free(dp_printer *p);

/* `name` as written in the body of class `cls` when it is the name the
 * compiler mangled there (`_A__x` in class A or _A: `__x`; never a dunder
 * `__x__` nor a dotted name, none when cls is all underscores), else name. */
const char *dp_unmangled(const char *cls, const char *name);

void dp_printer_init(dp_printer *p, dp_buf *out, int indent, dp_error *err);
/* Prints statements at the given nesting level (an empty list prints `pass`
 * when level > 0).  Returns 0 or -1 (err set). */
int dp_print_block(dp_printer *p, const dp_nodes *body, int level);
/* Prints one expression at the lowest precedence (no surrounding parens). */
int dp_print_expr(dp_printer *p, const dp_node *e);
/* A constant as a Python literal that evaluates to an equal value of the same
 * type: str/bytes escapes, float repr (inf/nan spelled as expressions),
 * complex, big ints, nested tuples, frozensets. */
void dp_print_const(dp_buf *out, const dp_const *c);

#endif
