/* Every input the fuzzers ever broke the core with, and inputs on its
 * limits (tests/c/regressions/, one file per input, a subdirectory per
 * harness), replayed through the same harness code, here built by the
 * ordinary test rule: plain, under ASan+UBSan (make ctest-san) and under
 * valgrind (make ctest-valgrind).  A crash, sanitizer report, trap or an
 * input running past its time fails. */
#define _POSIX_C_SOURCE 200809L /* opendir(), alarm() */
#define DP_FUZZ_NO_ENTRY

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

/* The harnesses are compiled into this test: the Makefile's rule builds one
 * test file with the core, nothing else. */
#include "../../fuzz/pipeline.c"
#include "../../fuzz/reader.c"

#define REGRESSIONS "tests/c/regressions"
#define SECONDS_PER_INPUT 10 /* libFuzzer's -timeout for the harnesses */

static const char *current = "";

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "an input ran past its time: ";
    if (write(2, msg, sizeof msg - 1) < 0 || write(2, current, strlen(current)) < 0 || write(2, "\n", 1) < 0)
        _exit(3);
    _exit(2);
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            uint8_t *grown = realloc(buf, cap = cap ? cap * 2 : 4096);
            if (grown == NULL) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = grown;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Replays each file of REGRESSIONS/<dir>; returns how many. */
static int replay_dir(const char *dir, int (*harness)(const uint8_t *, size_t)) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", REGRESSIONS, dir);
    DIR *d = opendir(path);
    CHECK(d != NULL);
    if (d == NULL)
        return 0;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/%s", REGRESSIONS, dir, e->d_name);
        size_t len = 0;
        uint8_t *data = read_file(path, &len);
        CHECK(data != NULL);
        if (data == NULL)
            continue;
        current = path;
        alarm(SECONDS_PER_INPUT);
        harness(data, len);
        alarm(0);
        free(data);
        count++;
    }
    closedir(d);
    return count;
}

static void test_reader_regressions(void) {
    int n = replay_dir("reader", fuzz_reader_one);
    printf("    %d inputs\n", n);
    CHECK(n > 0); /* the directory must not silently go missing */
}

static void test_pipeline_regressions(void) {
    int n = replay_dir("pipeline", fuzz_pipeline_one);
    printf("    %d inputs\n", n);
    CHECK(n > 0); /* the directory must not silently go missing */
}

int main(void) {
    signal(SIGALRM, on_alarm);
    RUN(test_reader_regressions);
    RUN(test_pipeline_regressions);
    return TEST_REPORT();
}
