#include "ast.h"

#include <string.h>

dp_node *dp_node_new(dp_arena *ar, int kind) {
    dp_node *n = dp_alloc(ar, sizeof *n);
    if (n != NULL) {
        n->seq = ++ar->nodes;
        n->kind = kind;
        n->line = -1;
        n->offset = -1;
    }
    return n;
}

int dp_nodes_push(dp_arena *ar, dp_nodes *l, dp_node *n) {
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 4;
        dp_node **v = dp_alloc_array(ar, (size_t)cap, sizeof *v);
        if (v == NULL)
            return -1;
        if (l->n)
            memcpy(v, l->v, (size_t)l->n * sizeof *v);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = n;
    return 0;
}
