/* STUB: 3.12+ inlined comprehensions (being written). */
#include "dc.h"

int dc_inline_comprehension(dc *d, int i, dc_stack *st, dp_nodes *out, int *next) {
    (void)d; (void)i; (void)st; (void)out; (void)next;
    return 0;
}
