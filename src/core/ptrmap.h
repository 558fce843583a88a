/* A hash map in an arena from keys of three words (pointers, indices) to
 * non-NULL pointers: the sets of objects already seen that keep walks over
 * shared objects (marshal references, code objects used twice) linear, and
 * the memo of nested code objects (decompile.c). */
#ifndef DEPYF_PTRMAP_H
#define DEPYF_PTRMAP_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"

typedef struct dp_ptrmap_slot {
    uintptr_t k[3];
    void *value; /* NULL: empty */
} dp_ptrmap_slot;

typedef struct dp_ptrmap {
    dp_ptrmap_slot *slots;
    size_t cap, n; /* cap: 0 or a power of two, kept at least twice n */
} dp_ptrmap;

/* The value stored under (a, b, c), or NULL. */
void *dp_ptrmap_get(const dp_ptrmap *m, uintptr_t a, uintptr_t b, uintptr_t c);
/* Stores `value` (not NULL) under (a, b, c), replacing any; -1 when out of memory. */
int dp_ptrmap_put(dp_arena *ar, dp_ptrmap *m, uintptr_t a, uintptr_t b, uintptr_t c, void *value);

#endif
