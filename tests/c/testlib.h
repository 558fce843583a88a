/* A tiny test harness for the C unit tests: CHECK records a failure and
 * goes on; TEST_MAIN runs the listed tests and exits non-zero on failure. */
#ifndef DEPYF_TESTLIB_H
#define DEPYF_TESTLIB_H

#include <stdio.h>
#include <string.h>

static int tl_failures, tl_checks;

#define CHECK(cond)                                                              \
    do {                                                                         \
        tl_checks++;                                                             \
        if (!(cond)) {                                                           \
            tl_failures++;                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                        \
    } while (0)

#define CHECK_STR(got, want)                                                     \
    do {                                                                         \
        const char *g_ = (got), *w_ = (want);                                    \
        tl_checks++;                                                             \
        if (g_ == NULL || strcmp(g_, w_) != 0) {                                 \
            tl_failures++;                                                       \
            fprintf(stderr, "%s:%d: got  [%s]\n%*swant [%s]\n", __FILE__, __LINE__, \
                    g_ ? g_ : "(null)", (int)strlen(__FILE__) + 8, "", w_);      \
        }                                                                        \
    } while (0)

#define RUN(test) (printf("  %s\n", #test), test())

#define TEST_REPORT()                                                            \
    (printf("%d checks, %d failed\n", tl_checks, tl_failures), tl_failures ? 1 : 0)

#endif
