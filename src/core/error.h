/* Errors are values: every fallible function returns 0 on success or -1 after
 * filling a dp_error.  Nothing in the core aborts, exits or asserts on input. */
#ifndef DEPYF_ERROR_H
#define DEPYF_ERROR_H

#include <stddef.h>

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
/* Drops a UTF-8 sequence cut short at the end of `s` (text cut to fit a
 * buffer must stay valid UTF-8: it is shown, and printed into output). */
void dp_utf8_trim(char *s);
/* Where s[0, n) stops being UTF-8 as CPython's decoder with "surrogatepass"
 * takes it (shortest forms only, up to U+10FFFF, encoded surrogates
 * allowed): the offset of the first bad byte, n when all is good. */
size_t dp_utf8_invalid_at(const char *s, size_t n);
/* Sets `where` if it is still empty. */
void dp_error_where(dp_error *e, const char *where);

#endif
