#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void dp_error_init(dp_error *e) {
    memset(e, 0, sizeof *e);
    e->offset = -1;
}

int dp_fail(dp_error *e, int offset, const char *fmt, ...) {
    if (e == NULL || e->set)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->set = 1;
    e->offset = offset;
    return -1;
}

void dp_error_where(dp_error *e, const char *where) {
    if (e != NULL && e->where[0] == '\0' && where != NULL)
        snprintf(e->where, sizeof e->where, "%s", where);
}
