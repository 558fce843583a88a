/* STUB */
#include "depyf.h"
int dp_read_pyc(dp_arena *a, const uint8_t *data, size_t len, dp_code **out, dp_error *err) {
    (void)a; (void)data; (void)len; (void)out;
    return dp_fail(err, -1, "pyc reader not built yet");
}
