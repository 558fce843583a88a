/* .pyc files of CPython 3.8-3.13: a 16-byte header (PEP 552), then the
 * marshalled module code object. */
#include "depyf.h"
#include "opcodes.h"

#define PYC_HEADER_SIZE 16

int dp_check_pyc_header(const uint8_t *data, size_t len, int *minor_out, dp_error *err) {
    if (data == NULL || len < PYC_HEADER_SIZE)
        return dp_fail(err, 0, "not a .pyc file: %zu bytes, the header alone takes %d",
                       data ? len : 0, PYC_HEADER_SIZE);
    unsigned magic = data[0] | (unsigned)data[1] << 8;
    if (data[2] != '\r' || data[3] != '\n')
        return dp_fail(err, 2, "not a .pyc file: the magic number is not followed by \\r\\n");
    int minor = dp_minor_for_magic((uint16_t)magic);
    if (minor < 0)
        return dp_fail(err, 0,
                       ".pyc magic number %u is not one of Python 3.%d to 3.%d (the versions "
                       "this reader supports)",
                       magic, DP_MIN_MINOR, DP_MAX_MINOR);
    uint32_t flags = data[4] | (uint32_t)data[5] << 8 | (uint32_t)data[6] << 16 |
                     (uint32_t)data[7] << 24;
    if (flags & ~(uint32_t)3)
        return dp_fail(err, 4,
                       ".pyc header flags 0x%x have unknown bits (PEP 552 defines 0x1 and 0x2)",
                       (unsigned)flags);
    *minor_out = minor;
    return 0;
}

int dp_read_pyc(dp_arena *a, const uint8_t *data, size_t len, dp_code **out, dp_error *err) {
    *out = NULL;
    int minor = 0;
    if (dp_check_pyc_header(data, len, &minor, err) < 0)
        return -1;
    dp_const *top;
    if (dp_marshal_load_at(a, data + PYC_HEADER_SIZE, len - PYC_HEADER_SIZE, PYC_HEADER_SIZE, minor, &top, err) < 0) {
        dp_error_where(err, "the marshal data after the 16-byte .pyc header");
        return -1;
    }
    if (top->kind != DP_CONST_CODE)
        return dp_fail(err, PYC_HEADER_SIZE, "the object in the .pyc file is not a code object");
    *out = top->code;
    return 0;
}
