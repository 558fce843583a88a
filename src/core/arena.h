/* A bump allocator: everything built for one decompilation (code model, IR,
 * AST) lives in one arena and is freed in one call.  Allocation failure and
 * the overall memory budget are reported, never ignored. */
#ifndef DEPYF_ARENA_H
#define DEPYF_ARENA_H

#include <stddef.h>

typedef struct dp_arena_block dp_arena_block;

typedef struct dp_arena {
    dp_arena_block *head;
    size_t used_total;   /* bytes handed out so far */
    size_t limit;        /* 0 = DP_ARENA_DEFAULT_LIMIT */
    int failed;          /* set once an allocation was refused */
    int over_limit;      /* ... because it would pass `limit` (else malloc failed) */
    size_t nodes;        /* AST nodes made so far (their creation order) */
} dp_arena;

#define DP_ARENA_DEFAULT_LIMIT ((size_t)1 << 31) /* 2 GiB */

void dp_arena_init(dp_arena *a);
void dp_arena_free(dp_arena *a);
/* Zeroed, 16-byte aligned memory; NULL when out of memory or over the limit. */
void *dp_alloc(dp_arena *a, size_t size);
/* n * size with overflow check. */
void *dp_alloc_array(dp_arena *a, size_t n, size_t size);
char *dp_strndup(dp_arena *a, const char *s, size_t n);
char *dp_strdup(dp_arena *a, const char *s);
/* Why the last allocation failed, as a message: past the limit (naming
 * it, in MiB or KiB), or refused by the system.  `what` names the work. */
void dp_arena_why(const dp_arena *a, const char *what, char *buf, size_t cap);

#endif
