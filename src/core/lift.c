/* STUB */
#include "ir.h"
int dp_lift(dp_arena *a, const dp_code *code, dp_irfunc *out, dp_error *err) {
    (void)a; (void)code; (void)out;
    return dp_fail(err, -1, "lift not built yet");
}
