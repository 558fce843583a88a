/* STUB: match statements (being written). */
#include "dc.h"

int dc_match(dc *d, int i, int base, dc_stack *st, dp_nodes *out, int *next) {
    (void)d; (void)i; (void)base; (void)st; (void)out; (void)next;
    return 0;
}
