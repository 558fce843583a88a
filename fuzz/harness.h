/* The fuzz harnesses as plain functions, so that the same code runs under
 * libFuzzer and in the regression test that replays tests/c/regressions/
 * with any compiler.
 *
 * reader.c and pipeline.c each define LLVMFuzzerTestOneInput with theirs
 * unless DP_FUZZ_NO_ENTRY is defined.  Both return 0 for any input; an input
 * that breaks a property of the core API (an error without a message,
 * output that is not a C string) traps, so libFuzzer records it as a crash. */
#ifndef DEPYF_FUZZ_HARNESS_H
#define DEPYF_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

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
