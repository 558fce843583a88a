/* dp_utf8_invalid_at (the check that decompiled text is UTF-8) against a
 * byte-at-a-time reference, on text with the invalid byte at every place
 * around the eight-byte steps of its ASCII path. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "testlib.h"

/* The first byte where s[0..n) stops being UTF-8 (surrogates allowed, as the
 * decompiler's text carries them through from surrogatepass), or n. */
static size_t reference(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned b = s[i], k = b < 0x80 ? 0 : (b & 0xE0) == 0xC0 ? 1 : (b & 0xF0) == 0xE0 ? 2 : (b & 0xF8) == 0xF0 ? 3 : 9;
        if (k == 9 || n - i <= k)
            return i;
        unsigned long cp = k == 0 ? b : b & (0x7F >> (k + 1));
        for (unsigned j = 1; j <= k; j++) {
            if ((s[i + j] & 0xC0) != 0x80)
                return i;
            cp = cp << 6 | (s[i + j] & 0x3F);
        }
        static const unsigned long least[] = {0, 0x80, 0x800, 0x10000};
        if (cp < least[k] || cp > 0x10FFFF)
            return i;
        i += k + 1;
    }
    return n;
}

static void test_every_position_of_every_kind_of_byte(void) {
    static const char *const inserts[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xff", "\x80",
                                          "\xc3", "\xe2\x82", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"};
    char text[64];
    int compared = 0;
    for (size_t len = 0; len <= 40; len++)
        for (size_t at = 0; at <= len; at++)
            for (size_t k = 0; k < sizeof inserts / sizeof *inserts; k++) {
                size_t m = strlen(inserts[k]);
                memset(text, 'a' + (int)(len % 26), sizeof text);
                memcpy(text + at, inserts[k], m);
                size_t n = len + m < sizeof text ? len + m : sizeof text;
                for (size_t start = 0; start < 3 && start <= n; start++) { /* every alignment */
                    CHECK(dp_utf8_invalid_at(text + start, n - start) ==
                          reference((const unsigned char *)text + start, n - start));
                    compared++;
                }
            }
    CHECK(compared > 10000);

}

static void test_plain_ascii_is_valid_to_the_end(void) {
    const char *s = "def f(x):\n    return x + 1\n";
    CHECK(dp_utf8_invalid_at(s, strlen(s)) == strlen(s));
    CHECK(dp_utf8_invalid_at(s, 0) == 0);

}

int main(void) {
    RUN(test_every_position_of_every_kind_of_byte);
    RUN(test_plain_ascii_is_valid_to_the_end);
    return TEST_REPORT();
}
