/* Annotated assignments of module and class bodies.  `x: int = 3` compiles
 * to `x = 3` followed by `__annotations__['x'] = int` (SETUP_ANNOTATIONS
 * having made the dict), `x: int` to the second store alone; the structurer
 * sees those stores, and this pass gives them back their source form.
 * Under `from __future__ import annotations` the stored value is the
 * annotation's text (ast.unparse of it), which the compiler makes again
 * from the same text printed as an expression. */
#include <string.h>

#include "dc.h"

enum { CO_FUTURE_ANNOTATIONS = 0x1000000 };

/* The key of a store into __annotations__ that can be written as the
 * target of `x: T`.  Keys can be any string the source wrote: past ASCII
 * nothing here can tell an identifier character, so only ASCII names. */
static int is_target_name(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] >= 0x80)
            return 0;
    return dc_is_identifier_n(s, len);
}

/* Can the annotation text `s` be printed as the expression it came from?
 * It must be one line with balanced brackets and quotes and nothing that
 * ends or comments out a statement (the compiler's own text always is;
 * anything else keeps the store).  *plain: only names, dots, subscripts,
 * commas, strings and `|`: needs no parentheses (the others get them, so
 * that the text stays one expression). */
static int printable_annotation(const char *s, size_t len, int *plain) {
    char stack[64];
    int depth = 0;
    char quote = 0;
    *plain = 1;
    if (len == 0)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '\n' || c == '\r' || c == '\\' || c == '\0')
            return 0;
        if (quote) {
            if (c == quote)
                quote = 0;
            continue;
        }
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '.' || c == '[' || c == ']' || c == ',' || c == ' ' || c == '|' || c == '\'' || c == '"'))
            *plain = 0;
        if (c == '#' || c == ';')
            return 0;
        if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '(' || c == '[' || c == '{') {
            if (depth == (int)sizeof stack)
                return 0;
            stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
        } else if (c == ')' || c == ']' || c == '}') {
            if (depth == 0 || stack[--depth] != c)
                return 0;
        }
    }
    return depth == 0 && quote == 0;
}

static int is_future(const dc *d) {
    return (d->code->flags & CO_FUTURE_ANNOTATIONS) != 0;
}

/* Does `value` (an annotation's) need the text form, and has it one? */
static int as_text(const dc *d, const dp_node *value, int *plain) {
    return is_future(d) && dc_is_const_kind(value, DP_CONST_STR) &&
           printable_annotation(value->cst->text, value->cst->len, plain);
}

dp_node *dc_annotation(dc *d, dp_node *value) {
    int plain;
    if (!as_text(d, value, &plain))
        return value;
    const dp_const *c = value->cst;
    dp_node *raw = dc_node(d, E_RAW);
    char *text = dp_alloc(d->sh->ar, c->len + 3);
    if (raw == NULL || text == NULL)
        return NULL;
    size_t n = 0;
    if (!plain)
        text[n++] = '(';
    memcpy(text + n, c->text, c->len);
    n += c->len;
    if (!plain)
        text[n++] = ')';
    text[n] = '\0';
    raw->s = text;
    return raw;
}

/* The key of `__annotations__['x'] = value`, or NULL. */
static const dp_const *annotation_key(const dp_node *s) {
    if (s->kind != S_ASSIGN || s->l1.n != 1)
        return NULL;
    const dp_node *t = s->l1.v[0];
    if (t->kind != E_SUBSCR || t->a == NULL || t->a->kind != E_NAME || strcmp(t->a->s, "__annotations__") != 0 ||
        !dc_is_const_kind(t->b, DP_CONST_STR) || !is_target_name(t->b->cst->text, t->b->cst->len))
        return NULL;
    return t->b->cst;
}

static int rewrite(dc *d, dp_nodes *body, int depth) {
    if (depth > DP_MAX_NESTING * 4)
        return dc_fail(d, -1, "statements nested too deeply");
    for (int k = 0; k < body->n; k++) {
        dp_node *s = body->v[k];
        if (s->kind == S_FUNCTIONDEF || s->kind == S_CLASSDEF)
            continue;
        dp_nodes *ls[4] = {&s->l1, &s->l2, &s->l3, &s->l4};
        if (s->kind == S_IF || s->kind == S_WHILE || s->kind == S_FOR || s->kind == S_TRY || s->kind == S_EXCEPT ||
            s->kind == S_WITH || s->kind == S_MATCH || s->kind == S_CASE) {
            for (int l = 0; l < 4; l++)
                if (rewrite(d, ls[l], depth + 1) < 0)
                    return -1;
            continue;
        }
        const dp_const *key = annotation_key(s);
        int plain;
        if (key == NULL || (is_future(d) && dc_is_const_kind(s->b, DP_CONST_STR) && !as_text(d, s->b, &plain)))
            continue; /* (a text that cannot be printed as an expression stays a store) */
        dp_node *ann = dc_annotation(d, s->b);
        if (ann == NULL)
            return -1;
        dp_node *prev = k > 0 ? body->v[k - 1] : NULL;
        s->kind = S_ANNASSIGN;
        s->op = 1; /* a simple name: recorded in __annotations__ */
        s->b = ann;
        s->c = NULL;
        s->l1.n = 0;
        if (prev && prev->kind == S_ASSIGN && prev->l1.n == 1 && prev->l1.v[0]->kind == E_NAME &&
            strlen(prev->l1.v[0]->s) == key->len && memcmp(prev->l1.v[0]->s, key->text, key->len) == 0) {
            /* `x = v` just before: `x: T = v` stores v, then the annotation */
            s->a = prev->l1.v[0];
            s->c = prev->b;
            memmove(body->v + k - 1, body->v + k, (size_t)(body->n - k) * sizeof *body->v);
            body->n--;
            k--;
        } else if ((s->a = dc_name(d, key->text)) == NULL) {
            return -1;
        }
    }
    return 0;
}

int dc_annotated_assigns(dc *d, dp_nodes *body) {
    return rewrite(d, body, 0);
}
