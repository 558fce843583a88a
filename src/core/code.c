#include "code.h"

dp_const *dp_const_new(dp_arena *a, dp_const_kind kind) {
    dp_const *c = dp_alloc(a, sizeof *c);
    if (c != NULL)
        c->kind = kind;
    return c;
}

dp_code *dp_code_new(dp_arena *a) {
    dp_code *c = dp_alloc(a, sizeof *c);
    if (c != NULL) {
        c->name = "";
        c->qualname = "";
        c->filename = "";
    }
    return c;
}
