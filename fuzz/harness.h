/* The fuzz harnesses as plain functions, so that the same code runs under
 * libFuzzer and in the regression test that replays tests/c/regressions/
 * with any compiler.
 *
 * Include it first (it needs clock_gettime from POSIX).
 *
 * reader.c and pipeline.c each define LLVMFuzzerTestOneInput with theirs
 * unless DP_FUZZ_NO_ENTRY is defined.  Both return 0 for any input; an input
 * that breaks a property of the core API (an error without a message,
 * output that is not a C string) traps, so libFuzzer records it as a crash. */
#ifndef DEPYF_FUZZ_HARNESS_H
#define DEPYF_FUZZ_HARNESS_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Beyond crashes, each harness checks that an input cost time and memory
 * in proportion to its size (docs/limits.md), and traps when it did not:
 * - memory: the arena of the reader or of the decompilation, at most
 *   FUZZ_MEMORY_FLOOR + FUZZ_MEMORY_PER_BYTE bytes per byte of the input
 *   (for a decompilation, per byte of its work: each code object once per
 *   use, itself at most DP_WORK_FACTOR times the input);
 * - output: the source at most what DP_OUTPUT_FACTOR allows, the listing
 *   at most FUZZ_LISTING_PER_BYTE bytes per byte of the input;
 * - time: CPU time at most FUZZ_SECONDS_FLOOR + FUZZ_SECONDS_PER_KIB per KiB
 *   of the input, times $DEPYF_FUZZ_TIME_SCALE (valgrind runs them ~50 times
 *   slower: make ctest-valgrind sets it).  The bound is loose (a sanitized
 *   build on a loaded machine stays far inside it); what it catches is cost
 *   out of proportion: an exponential walk, minutes for a small input. */
#define FUZZ_MEMORY_FLOOR ((size_t)16 << 20)
#define FUZZ_MEMORY_PER_BYTE 4096
#define FUZZ_LISTING_PER_BYTE 512
#define FUZZ_SECONDS_FLOOR 2.0
#define FUZZ_SECONDS_PER_KIB 0.1

/* Traps when `used` is past floor + per_byte * bytes. */
static inline void fuzz_check_proportional(size_t used, size_t floor, size_t per_byte, size_t bytes) {
    size_t allowed = bytes > ((size_t)-1 - floor) / per_byte ? (size_t)-1 : floor + per_byte * bytes;
    if (used > allowed)
        __builtin_trap();
}

static inline double fuzz_cpu_seconds(void) {
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0)
        return 0;
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* fuzz_cpu_seconds() when the input started (CPU time, not wall time: a
 * loaded machine slows neither). */
typedef struct fuzz_clock {
    double started;
} fuzz_clock;

static inline fuzz_clock fuzz_clock_start(void) { return (fuzz_clock){fuzz_cpu_seconds()}; }

/* Traps when the input took more CPU time than its size allows. */
static inline void fuzz_clock_check(fuzz_clock c, size_t len) {
    const char *scale_env = getenv("DEPYF_FUZZ_TIME_SCALE");
    double scale = scale_env ? atof(scale_env) : 1.0;
    if (scale <= 0)
        scale = 1.0;
    double allowed = (FUZZ_SECONDS_FLOOR + FUZZ_SECONDS_PER_KIB * (double)len / 1024) * scale;
    if (fuzz_cpu_seconds() - c.started > allowed)
        __builtin_trap();
}

/* (a) The readers.  Byte 0 picks the reader: 0 mod 7 is a whole .pyc file
 * (dp_read_pyc), k mod 7 (k = 1..6) one marshalled object written by
 * Python 3.(7+k) (dp_marshal_load).  A code object read is then listed
 * (dp_disasm). */
int fuzz_reader_one(const uint8_t *data, size_t len);

/* (b) The whole pipeline, code model -> source.  Byte 0 even: the rest
 * drives a generator of code models for Python 3.(8 + byte1 % 6) (see
 * pipeline.c); odd: byte 1 picks the version and the rest is a marshalled
 * code object.  Either way the result is decompiled and disassembled. */
int fuzz_pipeline_one(const uint8_t *data, size_t len);

#endif
