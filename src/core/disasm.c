/* STUB */
#include "depyf.h"
int dp_disasm(const dp_code *code, dp_buf *out, dp_error *err) {
    (void)code; (void)out;
    return dp_fail(err, -1, "disassembler not built yet");
}
