#include "error.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void dp_error_init(dp_error *e) {
    memset(e, 0, sizeof *e);
    e->offset = -1;
}

int dp_fail(dp_error *e, int offset, const char *fmt, ...) {
    if (e == NULL || e->set)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    dp_utf8_trim(e->msg);
    e->set = 1;
    e->offset = offset;
    return -1;
}

void dp_utf8_trim(char *s) {
    size_t n = strlen(s), k = n;
    while (k > 0 && ((unsigned char)s[k - 1] & 0xC0) == 0x80 && n - k < 3)
        k--;
    if (k == 0 || (unsigned char)s[k - 1] < 0xC0)
        return; /* ASCII last, or no lead byte within reach: nothing cut */
    unsigned char lead = (unsigned char)s[k - 1];
    size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (n - (k - 1) < want)
        s[k - 1] = '\0';
}

static int is_cont(unsigned char b) { return (b & 0xC0) == 0x80; }

size_t dp_utf8_invalid_at(const char *text, size_t n) {
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < n) {
        unsigned char b = s[i];
        size_t k;
        unsigned long cp, min;
        if (b < 0x80) {
            /* ASCII, nearly all of printed source: eight bytes at a time */
            uint64_t word;
            while (n - i >= 8 && (memcpy(&word, s + i, 8), (word & 0x8080808080808080u) == 0))
                i += 8;
            while (i < n && s[i] < 0x80)
                i++;
            continue;
        } else if ((b & 0xE0) == 0xC0) {
            k = 1, cp = b & 0x1F, min = 0x80;
        } else if ((b & 0xF0) == 0xE0) {
            k = 2, cp = b & 0x0F, min = 0x800;
        } else if ((b & 0xF8) == 0xF0) {
            k = 3, cp = b & 0x07, min = 0x10000;
        } else {
            return i;
        }
        if (n - i <= k)
            return i;
        for (size_t j = 1; j <= k; j++) {
            if (!is_cont(s[i + j]))
                return i;
            cp = cp << 6 | (s[i + j] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF)
            return i;
        i += k + 1;
    }
    return n;
}

void dp_error_where(dp_error *e, const char *where) {
    if (e != NULL && e->where[0] == '\0' && where != NULL) {
        snprintf(e->where, sizeof e->where, "%s", where);
        dp_utf8_trim(e->where);
    }
}
