#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dp_buf_init(dp_buf *b) { memset(b, 0, sizeof *b); }

void dp_buf_free(dp_buf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

static int reserve(dp_buf *b, size_t extra) {
    if (b->oom)
        return -1;
    if (b->limit && (extra > b->limit || b->len > b->limit - extra)) {
        b->oom = b->over = 1;
        return -1;
    }
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > ((size_t)-1) / 2) {
            b->oom = 1;
            return -1;
        }
        cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (p == NULL) {
        b->oom = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

/* Room for n more bytes and the NUL without growing, within the limit:
 * the common case, which needs none of reserve()'s work. */
static int fits(const dp_buf *b, size_t n) {
    return !b->oom && b->cap - b->len > n && (b->limit == 0 || (b->len <= b->limit && b->limit - b->len >= n));
}

void dp_buf_putn(dp_buf *b, const char *s, size_t n) {
    if (!fits(b, n) && reserve(b, n) < 0)
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void dp_buf_puts(dp_buf *b, const char *s) { dp_buf_putn(b, s, strlen(s)); }

void dp_buf_putc(dp_buf *b, char c) {
    if (!fits(b, 1) && reserve(b, 1) < 0)
        return;
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

void dp_buf_printf(dp_buf *b, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        dp_buf_putn(b, small, (size_t)n);
        return;
    }
    if (reserve(b, (size_t)n) < 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

int dp_buf_ok(const dp_buf *b) { return !b->oom; }

int dp_buf_over(const dp_buf *b) { return b->over; }
