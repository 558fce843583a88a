/* STUB */
#include "depyf.h"
int dp_decompile(const dp_code *code, const dp_options *opt, dp_buf *out, dp_error *err) {
    (void)code; (void)opt; (void)out;
    return dp_fail(err, -1, "decompiler not built yet");
}
