/* The size of an input (code.h dp_input_size): a walk over the model that
 * counts each shared object and buffer once. */
#include <string.h>

#include "code.h"
#include "ptrmap.h"

/* One object of the walk: a constant or a code object (tagged in bit 0). */
typedef struct size_walk {
    dp_arena *a;
    struct dp_ptrmap *seen;
    dp_input_size *size;
    uintptr_t *todo;
    size_t n, cap;
} size_walk;

static int push(size_walk *w, const void *p, int is_code) {
    if (p == NULL || dp_ptrmap_get(w->seen, (uintptr_t)p, 0, 0) != NULL)
        return 0;
    if (dp_ptrmap_put(w->a, w->seen, (uintptr_t)p, 0, 0, (void *)p) < 0)
        return -1;
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        uintptr_t *v = dp_alloc_array(w->a, cap, sizeof *v);
        if (v == NULL)
            return -1;
        if (w->n)
            memcpy(v, w->todo, w->n * sizeof *v);
        w->todo = v;
        w->cap = cap;
    }
    w->todo[w->n++] = (uintptr_t)p | (uintptr_t)is_code;
    return 0;
}

/* The size of a buffer (text, bytecode, a table) not counted yet: buffers
 * are shared like objects (two code objects of marshal data may hold the
 * same co_code), and measured only once seen to be new.  (size_t)-1 on
 * out of memory. */
static size_t buffer(size_walk *w, const void *p, size_t len, int is_text) {
    if (p == NULL || dp_ptrmap_get(w->seen, (uintptr_t)p, 1, 0) != NULL)
        return 0;
    if (dp_ptrmap_put(w->a, w->seen, (uintptr_t)p, 1, 0, (void *)p) < 0)
        return (size_t)-1;
    return is_text ? strlen(p) + 1 : len;
}

static int strs(size_walk *w, const dp_strs *s) {
    for (size_t k = 0; k < s->n; k++) {
        size_t n = buffer(w, s->v[k], 0, 1);
        if (n == (size_t)-1)
            return -1;
        w->size->bytes += n + 8;
    }
    return 0;
}

/* (iterative: the nesting of a model is not bounded here) */
static int walk(size_walk *w) {
    while (w->n > 0) {
        uintptr_t top = w->todo[--w->n];
        if (top & 1) {
            const dp_code *co = (const dp_code *)(top & ~(uintptr_t)1);
            size_t code = buffer(w, co->code, co->codelen, 0), exc = buffer(w, co->exctable, co->exctablelen, 0);
            size_t lines = buffer(w, co->linetable, co->linetablelen, 0), name = buffer(w, co->name, 0, 1);
            size_t qualname = buffer(w, co->qualname, 0, 1), filename = buffer(w, co->filename, 0, 1);
            size_t parts[] = {code, exc, lines, name, qualname, filename};
            for (size_t k = 0; k < sizeof parts / sizeof *parts; k++) {
                if (parts[k] == (size_t)-1)
                    return -1;
                w->size->bytes += parts[k];
            }
            w->size->bytecode += code;
            w->size->bytes += 64 + 8 * co->nconsts;
            if (strs(w, &co->names) < 0 || strs(w, &co->varnames) < 0 || strs(w, &co->cellvars) < 0 ||
                strs(w, &co->freevars) < 0)
                return -1;
            for (size_t k = 0; k < co->nconsts; k++)
                if (push(w, co->consts[k], 0) < 0)
                    return -1;
            continue;
        }
        const dp_const *c = (const dp_const *)top;
        size_t text = buffer(w, c->text, c->len, 0);
        if (text == (size_t)-1)
            return -1;
        w->size->bytes += 16 + text + 8 * c->n;
        for (size_t k = 0; k < c->n; k++)
            if (push(w, c->items[k], 0) < 0)
                return -1;
        if (c->kind == DP_CONST_CODE && push(w, c->code, 1) < 0)
            return -1;
    }
    return 0;
}

int dp_size_code(dp_arena *a, struct dp_ptrmap *seen, const dp_code *code, dp_input_size *size) {
    size_walk w = {a, seen, size, NULL, 0, 0};
    return push(&w, code, 1) < 0 ? -1 : walk(&w);
}

int dp_size_const(dp_arena *a, struct dp_ptrmap *seen, const dp_const *c, dp_input_size *size) {
    size_walk w = {a, seen, size, NULL, 0, 0};
    return push(&w, c, 0) < 0 ? -1 : walk(&w);
}
