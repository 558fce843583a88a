/* Errors are values: every fallible function returns 0 on success or -1 after
 * filling a dp_error.  Nothing in the core aborts, exits or asserts on input. */
#ifndef DEPYF_ERROR_H
#define DEPYF_ERROR_H

typedef struct dp_error {
    int set;            /* 1 once an error was recorded */
    int offset;         /* bytecode offset the error is about, or -1 */
    char where[160];    /* qualname of the code object, or file name */
    char msg[400];      /* human-readable reason */
} dp_error;

void dp_error_init(dp_error *e);
/* Records the first error only (later ones would hide the cause); returns -1. */
int dp_fail(dp_error *e, int offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Sets `where` if it is still empty. */
void dp_error_where(dp_error *e, const char *where);

#endif
