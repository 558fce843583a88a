#include "ptrmap.h"

#include <string.h>

static size_t hash3(uintptr_t a, uintptr_t b, uintptr_t c) {
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15u;
    h ^= (h >> 29) + (uint64_t)b * 0xBF58476D1CE4E5B9u;
    h ^= (h >> 31) + (uint64_t)c * 0x94D049BB133111EBu;
    return (size_t)(h ^ (h >> 32));
}

static dp_ptrmap_slot *find(const dp_ptrmap *m, uintptr_t a, uintptr_t b, uintptr_t c) {
    size_t mask = m->cap - 1;
    for (size_t i = hash3(a, b, c) & mask;; i = (i + 1) & mask) {
        dp_ptrmap_slot *s = &m->slots[i];
        if (s->value == NULL || (s->k[0] == a && s->k[1] == b && s->k[2] == c))
            return s;
    }
}

void *dp_ptrmap_get(const dp_ptrmap *m, uintptr_t a, uintptr_t b, uintptr_t c) {
    return m->cap ? find(m, a, b, c)->value : NULL;
}

int dp_ptrmap_put(dp_arena *ar, dp_ptrmap *m, uintptr_t a, uintptr_t b, uintptr_t c, void *value) {
    if (2 * (m->n + 1) > m->cap) {
        /* (the old table stays in the arena: at most as much again) */
        dp_ptrmap old = *m;
        size_t cap = m->cap ? 2 * m->cap : 64;
        m->slots = dp_alloc_array(ar, cap, sizeof *m->slots);
        if (m->slots == NULL) {
            *m = old;
            return -1;
        }
        m->cap = cap;
        for (size_t i = 0; i < old.cap; i++)
            if (old.slots[i].value != NULL)
                *find(m, old.slots[i].k[0], old.slots[i].k[1], old.slots[i].k[2]) = old.slots[i];
    }
    dp_ptrmap_slot *s = find(m, a, b, c);
    if (s->value == NULL) {
        m->n++;
        s->k[0] = a;
        s->k[1] = b;
        s->k[2] = c;
    }
    s->value = value;
    return 0;
}
