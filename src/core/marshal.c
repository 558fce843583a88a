/* STUB: replaced by the marshal reader. */
#include "depyf.h"
int dp_marshal_load(dp_arena *a, const uint8_t *data, size_t len, int py_minor, dp_const **out, dp_error *err) {
    (void)a; (void)data; (void)len; (void)py_minor; (void)out;
    return dp_fail(err, -1, "marshal reader not built yet");
}
