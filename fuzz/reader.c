/* Harness (a): the marshal and .pyc readers on arbitrary bytes. */
#include "harness.h"

#include <string.h>

#include "depyf.h"

/* Every failure must explain itself; a success must leave a C string. */
static void check_reader_result(int rc, const dp_error *err) {
    if (rc < 0 && (!err->set || err->msg[0] == '\0'))
        __builtin_trap();
    if (rc == 0 && err->set)
        __builtin_trap();
}

/* The listing of what `len` bytes of input held. */
static void list_code(const dp_code *code, size_t len) {
    dp_buf out;
    dp_buf_init(&out);
    dp_error err;
    dp_error_init(&err);
    int rc = dp_disasm(code, &out, &err);
    check_reader_result(rc, &err);
    if (rc == 0 && dp_buf_ok(&out) && out.len > 0 && (out.data == NULL || strlen(out.data) != out.len))
        __builtin_trap();
    fuzz_check_proportional(out.len, 64 << 10, FUZZ_LISTING_PER_BYTE, len);
    dp_buf_free(&out);
}

int fuzz_reader_one(const uint8_t *data, size_t len) {
    if (len < 1)
        return 0;
    fuzz_clock clock = fuzz_clock_start();
    int which = data[0] % 7;
    dp_arena a;
    dp_arena_init(&a);
    dp_error err;
    dp_error_init(&err);
    dp_code *code = NULL;
    if (which == 0) {
        int rc = dp_read_pyc(&a, data + 1, len - 1, &code, &err);
        check_reader_result(rc, &err);
    } else {
        dp_const *c = NULL;
        int rc = dp_marshal_load(&a, data + 1, len - 1, 7 + which, &c, &err);
        check_reader_result(rc, &err);
        if (rc == 0) {
            /* the repr must stop near its limit whatever the constant */
            dp_buf repr;
            dp_buf_init(&repr);
            dp_const_repr(c, 200, &repr);
            dp_buf_free(&repr);
            if (c->kind == DP_CONST_CODE)
                code = c->code;
        }
    }
    fuzz_check_proportional(a.used_total, FUZZ_MEMORY_FLOOR, FUZZ_MEMORY_PER_BYTE, len);
    if (code != NULL)
        list_code(code, len);
    dp_arena_free(&a);
    fuzz_clock_check(clock, len);
    return 0;
}

#ifndef DP_FUZZ_NO_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len) { return fuzz_reader_one(data, len); }
#endif
