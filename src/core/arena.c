#include "arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dp_arena_block {
    dp_arena_block *next;
    size_t size, used;
    /* payload follows, 16-byte aligned */
};

#define BLOCK_HEADER (((sizeof(dp_arena_block) + 15) / 16) * 16)
#define MIN_BLOCK ((size_t)64 * 1024)

void dp_arena_init(dp_arena *a) { memset(a, 0, sizeof *a); }

void dp_arena_free(dp_arena *a) {
    dp_arena_block *b = a->head;
    while (b != NULL) {
        dp_arena_block *next = b->next;
        free(b);
        b = next;
    }
    memset(a, 0, sizeof *a);
}

void *dp_alloc(dp_arena *a, size_t size) {
    size_t limit = a->limit ? a->limit : DP_ARENA_DEFAULT_LIMIT;
    if (size > limit)
        goto over;
    size = (size + 15) & ~(size_t)15;
    if (size == 0)
        size = 16;
    dp_arena_block *b = a->head;
    if (b == NULL || b->size - b->used < size) {
        size_t want = size > MIN_BLOCK ? size : MIN_BLOCK;
        if (a->used_total + want > limit)
            goto over;
        b = malloc(BLOCK_HEADER + want);
        if (b == NULL)
            goto refuse;
        b->size = want;
        b->used = 0;
        b->next = a->head;
        a->head = b;
        a->used_total += want;
    }
    void *p = (char *)b + BLOCK_HEADER + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
over:
    a->over_limit = 1;
refuse:
    a->failed = 1;
    return NULL;
}

void *dp_alloc_array(dp_arena *a, size_t n, size_t size) {
    if (size != 0 && n > SIZE_MAX / size) {
        a->failed = 1;
        return NULL;
    }
    return dp_alloc(a, n * size);
}

char *dp_strndup(dp_arena *a, const char *s, size_t n) {
    char *p = dp_alloc(a, n + 1);
    if (p != NULL && n)
        memcpy(p, s, n);
    return p;
}

char *dp_strdup(dp_arena *a, const char *s) { return dp_strndup(a, s, strlen(s)); }

void dp_arena_why(const dp_arena *a, const char *what, char *buf, size_t cap) {
    size_t limit = a->limit ? a->limit : DP_ARENA_DEFAULT_LIMIT;
    if (!a->over_limit)
        snprintf(buf, cap, "out of memory: the system refused an allocation %s (%zu MiB in use)", what,
                 a->used_total >> 20);
    else if (limit >= (size_t)1 << 20)
        snprintf(buf, cap, "out of memory: %s needs more than its memory limit of %zu MiB", what, limit >> 20);
    else
        snprintf(buf, cap, "out of memory: %s needs more than its memory limit of %zu KiB", what, limit >> 10);
}
