/* A growable text buffer for output.  Out-of-memory is sticky: once set,
 * further appends are ignored and dp_buf_ok() reports it.  So is going past
 * `limit` (0: none), the output budget of a decompilation (depyf.h):
 * dp_buf_over() tells that apart. */
#ifndef DEPYF_BUF_H
#define DEPYF_BUF_H

#include <stddef.h>

typedef struct dp_buf {
    char *data;   /* NUL-terminated while ok */
    size_t len, cap;
    size_t limit; /* most bytes `len` may reach; 0 = no limit */
    int oom;      /* an append failed: out of memory, or past the limit (then `over` too) */
    int over;
} dp_buf;

void dp_buf_init(dp_buf *b);
void dp_buf_free(dp_buf *b);
void dp_buf_putn(dp_buf *b, const char *s, size_t n);
void dp_buf_puts(dp_buf *b, const char *s);
void dp_buf_putc(dp_buf *b, char c);
void dp_buf_printf(dp_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
int dp_buf_ok(const dp_buf *b);
int dp_buf_over(const dp_buf *b);

#endif
