/* The marshal reader: one object written by CPython 3.8-3.13's marshal
 * module, read into the model of code.h without the host Python.
 *
 * Follows CPython's Python/marshal.c (r_object): the same type codes, the
 * same reference numbering (FLAG_REF reserves a slot when an object starts;
 * singletons and TYPE_REF never take one) and the per-version code object
 * layout.  Every length is checked against the bytes left before anything is
 * allocated, so memory stays proportional to the input. */
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "depyf.h"
#include "opcodes.h"

/* Defined in disasm.c (the const repr); list, set and dict values, which
 * have no dp_const kind of their own, keep their repr as DP_CONST_OTHER. */

#define MARSHAL_MAX_DEPTH 200
#define OTHER_REPR_MAX ((size_t)1 << 16)

enum {
    TYPE_NULL = '0',
    TYPE_NONE = 'N',
    TYPE_FALSE = 'F',
    TYPE_TRUE = 'T',
    TYPE_STOPITER = 'S',
    TYPE_ELLIPSIS = '.',
    TYPE_INT = 'i',
    TYPE_INT64 = 'I', /* no longer written, still read by CPython */
    TYPE_FLOAT = 'f',
    TYPE_BINARY_FLOAT = 'g',
    TYPE_COMPLEX = 'x',
    TYPE_BINARY_COMPLEX = 'y',
    TYPE_LONG = 'l',
    TYPE_STRING = 's',
    TYPE_INTERNED = 't',
    TYPE_REF = 'r',
    TYPE_TUPLE = '(',
    TYPE_LIST = '[',
    TYPE_DICT = '{',
    TYPE_CODE = 'c',
    TYPE_UNICODE = 'u',
    TYPE_SET = '<',
    TYPE_FROZENSET = '>',
    TYPE_ASCII = 'a',
    TYPE_ASCII_INTERNED = 'A',
    TYPE_SMALL_TUPLE = ')',
    TYPE_SHORT_ASCII = 'z',
    TYPE_SHORT_ASCII_INTERNED = 'Z',
    FLAG_REF = 0x80,
};

/* Bits of co_localspluskinds (3.11+). */
enum { CO_FAST_LOCAL = 0x20, CO_FAST_CELL = 0x40, CO_FAST_FREE = 0x80 };

typedef struct reader {
    dp_arena *a;
    const uint8_t *data;
    size_t len, pos;
    int py_minor;
    int depth;
    dp_const **refs; /* malloc'ed; NULL entries are objects still being built */
    size_t nrefs, caprefs;
    dp_error *err;
    size_t base; /* where the data starts in its file: positions in messages are the file's */
} reader;

/* A position of the data as reported: in the file. */
static size_t in_file(const reader *r, size_t pos) { return r->base + pos; }
/* dp_error keeps offsets as int. */
static int off(const reader *r, size_t pos) {
    pos = in_file(r, pos);
    return pos > INT_MAX ? INT_MAX : (int)pos;
}
static int at(const reader *r) { return off(r, r->pos); }

static int fail_at(reader *r, size_t pos, const char *what) {
    return dp_fail(r->err, off(r, pos), "bad marshal data at byte %zu: %s", in_file(r, pos), what);
}

static int oom(reader *r) {
    return dp_fail(r->err, at(r), "out of memory reading marshal data at byte %zu", in_file(r, r->pos));
}

static size_t left(const reader *r) { return r->len - r->pos; }

static int need(reader *r, size_t n, const char *what) {
    if (left(r) >= n)
        return 0;
    return dp_fail(r->err, at(r),
                   "marshal data truncated at byte %zu: %s needs %zu bytes, %zu left", in_file(r, r->pos),
                   what, n, left(r));
}

static int r_u8(reader *r, const char *what, unsigned *out) {
    if (need(r, 1, what) < 0)
        return -1;
    *out = r->data[r->pos++];
    return 0;
}

static int r_i32(reader *r, const char *what, int32_t *out) {
    if (need(r, 4, what) < 0)
        return -1;
    const uint8_t *p = r->data + r->pos;
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    r->pos += 4;
    *out = u <= INT32_MAX ? (int32_t)u : -(int32_t)(UINT32_MAX - u) - 1;
    return 0;
}

/* A 32-bit size that must be non-negative and, since every item or byte
 * takes at least one byte, fit in the rest of the input. */
static int r_size(reader *r, const char *what, size_t *out) {
    size_t start = r->pos;
    int32_t n;
    if (r_i32(r, what, &n) < 0)
        return -1;
    if (n < 0)
        return fail_at(r, start, "negative size");
    if ((size_t)n > left(r))
        return dp_fail(r->err, at(r),
                       "marshal data truncated at byte %zu: %s of %d needs at least as many "
                       "bytes, %zu left",
                       in_file(r, r->pos), what, n, left(r));
    *out = (size_t)n;
    return 0;
}

static double r_double_bin(reader *r) {
    const uint8_t *p = r->data + r->pos;
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | p[i];
    r->pos += 8;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* The text form of marshal versions 0 and 1: a length byte and the repr. */
static int r_double_str(reader *r, double *out) {
    size_t start = r->pos;
    unsigned n;
    if (r_u8(r, "float text length", &n) < 0 || need(r, n, "float text") < 0)
        return -1;
    char buf[256];
    memcpy(buf, r->data + r->pos, n);
    buf[n] = '\0';
    r->pos += n;
    /* strtod also takes spaces and hex floats, which Python's parser refuses */
    int ok = n > 0 && strspn(buf, "0123456789.eE+-infatyINFATY") == n;
    char *end = NULL;
    double d = ok ? strtod(buf, &end) : 0.0;
    if (!ok || end != buf + n)
        return fail_at(r, start, "float text is not a number");
    *out = d;
    return 0;
}

static dp_const *new_const(reader *r, dp_const_kind kind) {
    dp_const *c = dp_const_new(r->a, kind);
    if (c == NULL)
        oom(r);
    return c;
}

static dp_const *new_text(reader *r, dp_const_kind kind, const uint8_t *s, size_t n) {
    dp_const *c = new_const(r, kind);
    if (c == NULL)
        return NULL;
    char *t = dp_strndup(r->a, (const char *)s, n);
    if (t == NULL) {
        oom(r);
        return NULL;
    }
    c->text = t;
    c->len = n;
    return c;
}

/* Reserves the next reference index (FLAG_REF), to be filled once the
 * object is complete; returns the index or SIZE_MAX on error. */
static size_t ref_reserve(reader *r) {
    if (r->nrefs == r->caprefs) {
        size_t cap = r->caprefs ? r->caprefs * 2 : 64;
        dp_const **p = realloc(r->refs, cap * sizeof *p);
        if (p == NULL) {
            oom(r);
            return SIZE_MAX;
        }
        r->refs = p;
        r->caprefs = cap;
    }
    r->refs[r->nrefs] = NULL;
    return r->nrefs++;
}

static int r_object(reader *r, dp_const **out, int null_ok);

static int r_long_digits(reader *r, dp_const **out) {
    int32_t n;
    if (r_i32(r, "int digit count", &n) < 0)
        return -1;
    int neg = n < 0;
    size_t ndigits = neg ? (size_t)(-(int64_t)n) : (size_t)n;
    if (ndigits > left(r) / 2)
        return need(r, ndigits * 2, "int digits");
    /* magnitude as little-endian bytes; digits may be 2**15 (CPython lets
     * that through), hence the spare bytes for the carry */
    size_t nbytes = ndigits * 15 / 8 + 4;
    uint8_t *mag = calloc(nbytes, 1);
    if (mag == NULL)
        return oom(r);
    for (size_t i = 0; i < ndigits; i++) {
        const uint8_t *p = r->data + r->pos;
        unsigned d = p[0] | (unsigned)p[1] << 8;
        r->pos += 2;
        if (d > 0x8000 || (d == 0 && i == ndigits - 1)) {
            free(mag);
            return fail_at(r, r->pos - 2,
                           d ? "int digit out of range" : "int not normalized (top digit is 0)");
        }
        size_t bit = i * 15;
        uint32_t carry = (uint32_t)d << (bit % 8);
        for (size_t j = bit / 8; carry != 0 && j < nbytes; j++) {
            carry += mag[j];
            mag[j] = (uint8_t)carry;
            carry >>= 8;
        }
    }
    size_t top = nbytes;
    while (top > 0 && mag[top - 1] == 0)
        top--;
    if (top <= 8) {
        uint64_t m = 0;
        for (size_t j = top; j > 0; j--)
            m = m << 8 | mag[j - 1];
        int fits = neg ? m <= (uint64_t)INT64_MAX + 1 : m <= (uint64_t)INT64_MAX;
        if (fits) {
            char buf[32];
            snprintf(buf, sizeof buf, "%s%llu", neg && m ? "-" : "", (unsigned long long)m);
            free(mag);
            *out = new_text(r, DP_CONST_INT, (const uint8_t *)buf, strlen(buf));
            return *out ? 0 : -1;
        }
    }
    /* too big for int64: "0x..." hex, two digits per byte */
    char *text = dp_alloc(r->a, top * 2 + 4);
    if (text == NULL) {
        free(mag);
        return oom(r);
    }
    size_t k = 0;
    if (neg)
        text[k++] = '-';
    text[k++] = '0';
    text[k++] = 'x';
    static const char hex[] = "0123456789abcdef";
    for (size_t j = top; j > 0; j--) {
        uint8_t b = mag[j - 1];
        if (j < top || b >> 4)
            text[k++] = hex[b >> 4];
        text[k++] = hex[b & 15];
    }
    text[k] = '\0';
    free(mag);
    *out = new_const(r, DP_CONST_INT);
    if (*out == NULL)
        return -1;
    (*out)->text = text;
    (*out)->len = k;
    return 0;
}

static int r_int64(reader *r, dp_const **out) {
    if (need(r, 8, "64-bit int") < 0)
        return -1;
    const uint8_t *p = r->data + r->pos;
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | p[i];
    r->pos += 8;
    char buf[32];
    if (u >> 63)
        snprintf(buf, sizeof buf, "-%llu", (unsigned long long)(~u + 1));
    else
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)u);
    *out = new_text(r, DP_CONST_INT, (const uint8_t *)buf, strlen(buf));
    return *out ? 0 : -1;
}

/* TYPE_ASCII* is read by CPython as Latin-1; a byte >= 0x80 becomes two in UTF-8. */
static int r_ascii(reader *r, size_t n, dp_const **out) {
    const uint8_t *s = r->data + r->pos;
    size_t high = 0;
    for (size_t i = 0; i < n; i++)
        high += s[i] >> 7;
    r->pos += n;
    if (high == 0) {
        *out = new_text(r, DP_CONST_STR, s, n);
        return *out ? 0 : -1;
    }
    char *t = dp_alloc(r->a, n + high + 1);
    if (t == NULL)
        return oom(r);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < 0x80) {
            t[k++] = (char)s[i];
        } else {
            t[k++] = (char)(0xC0 | s[i] >> 6);
            t[k++] = (char)(0x80 | (s[i] & 0x3F));
        }
    }
    *out = new_const(r, DP_CONST_STR);
    if (*out == NULL)
        return -1;
    (*out)->text = t;
    (*out)->len = k;
    return 0;
}

static int r_items(reader *r, size_t n, dp_const *c, const char *what) {
    c->items = dp_alloc_array(r->a, n ? n : 1, sizeof *c->items);
    if (c->items == NULL)
        return oom(r);
    for (size_t i = 0; i < n; i++) {
        size_t item_pos = r->pos;
        if (r_object(r, &c->items[i], 1) < 0)
            return -1;
        if (c->items[i] == NULL)
            return fail_at(r, item_pos, what);
    }
    c->n = n;
    return 0;
}

/* Keeps the repr of a list, set or dict as its text. */
static int set_other_repr(reader *r, dp_const *c, const char *open, const char *close,
                          const char *empty, int pairs) {
    dp_buf b;
    dp_buf_init(&b);
    if (c->n == 0) {
        dp_buf_puts(&b, empty);
    } else {
        dp_buf_puts(&b, open);
        for (size_t i = 0; i < c->n && b.len < OTHER_REPR_MAX; i++) {
            if (i > 0)
                dp_buf_puts(&b, pairs && i % 2 ? ": " : ", ");
            dp_const_repr(c->items[i], OTHER_REPR_MAX, &b);
        }
        dp_buf_puts(&b, b.len < OTHER_REPR_MAX ? close : "...");
    }
    int ok = dp_buf_ok(&b);
    c->text = ok ? dp_strndup(r->a, b.data, b.len) : NULL;
    c->len = ok ? b.len : 0;
    dp_buf_free(&b);
    return c->text ? 0 : oom(r);
}

/* A growable array of items while their number is not known yet (dicts). */
typedef struct itemvec {
    dp_const **v;
    size_t n, cap;
} itemvec;

static int itemvec_push(reader *r, itemvec *iv, dp_const *c) {
    if (iv->n == iv->cap) {
        size_t cap = iv->cap ? iv->cap * 2 : 16;
        dp_const **p = realloc(iv->v, cap * sizeof *p);
        if (p == NULL)
            return oom(r);
        iv->v = p;
        iv->cap = cap;
    }
    iv->v[iv->n++] = c;
    return 0;
}

/* key, value, key, value ... up to a NULL key. */
static int r_dict_items(reader *r, itemvec *kv) {
    for (;;) {
        dp_const *key, *value;
        if (r_object(r, &key, 1) < 0)
            return -1;
        if (key == NULL)
            return 0;
        size_t value_pos = r->pos;
        if (r_object(r, &value, 1) < 0)
            return -1;
        if (value == NULL)
            return fail_at(r, value_pos, "NULL where a dict value was expected");
        if (itemvec_push(r, kv, key) < 0 || itemvec_push(r, kv, value) < 0)
            return -1;
    }
}

static int r_dict(reader *r, dp_const *c) {
    itemvec kv = {0};
    int rc = r_dict_items(r, &kv);
    if (rc == 0) {
        c->items = dp_alloc_array(r->a, kv.n ? kv.n : 1, sizeof *c->items);
        if (c->items == NULL)
            rc = oom(r);
    }
    if (rc == 0) {
        if (kv.n)
            memcpy(c->items, kv.v, kv.n * sizeof *kv.v);
        c->n = kv.n;
    }
    free(kv.v);
    return rc < 0 ? -1 : set_other_repr(r, c, "{", "}", "{}", 1);
}

static int r_str_tuple(reader *r, const char *field, dp_strs *out) {
    size_t pos = r->pos;
    dp_const *t;
    if (r_object(r, &t, 0) < 0)
        return -1;
    if (t->kind != DP_CONST_TUPLE)
        return dp_fail(r->err, off(r, pos), "bad marshal data at byte %zu: code %s is not a tuple",
                       in_file(r, pos), field);
    out->v = dp_alloc_array(r->a, t->n ? t->n : 1, sizeof *out->v);
    if (out->v == NULL)
        return oom(r);
    for (size_t i = 0; i < t->n; i++) {
        if (t->items[i]->kind != DP_CONST_STR)
            return dp_fail(r->err, off(r, pos),
                           "bad marshal data at byte %zu: code %s holds a non-string", in_file(r, pos), field);
        out->v[i] = t->items[i]->text;
    }
    out->n = t->n;
    return 0;
}

static int r_typed(reader *r, dp_const_kind kind, const char *field, dp_const **out) {
    size_t pos = r->pos;
    if (r_object(r, out, 0) < 0)
        return -1;
    if ((*out)->kind != kind)
        return dp_fail(r->err, off(r, pos), "bad marshal data at byte %zu: code %s is not a %s", in_file(r, pos),
                       field, kind == DP_CONST_STR     ? "str"
                              : kind == DP_CONST_TUPLE ? "tuple"
                                                       : "bytes");
    return 0;
}

static int r_int_field(reader *r, const char *field, int *out) {
    int32_t v;
    if (r_i32(r, field, &v) < 0)
        return -1;
    *out = v;
    return 0;
}

/* 3.11+: names and kinds of all fast locals, cells and free variables in
 * one tuple; the classic co_varnames/co_cellvars/co_freevars are the names
 * whose kind has the LOCAL/CELL/FREE bit, in order. */
static int split_localsplus(reader *r, dp_code *co, const dp_strs *names, const dp_const *kinds,
                            size_t pos) {
    if (kinds->len != names->n)
        return dp_fail(r->err, off(r, pos),
                       "bad marshal data at byte %zu: %zu localsplus names but %zu kinds", in_file(r, pos),
                       names->n, kinds->len);
    struct {
        dp_strs *out;
        uint8_t bit;
    } parts[3] = {{&co->varnames, CO_FAST_LOCAL},
                  {&co->cellvars, CO_FAST_CELL},
                  {&co->freevars, CO_FAST_FREE}};
    const uint8_t *k = (const uint8_t *)kinds->text;
    for (int p = 0; p < 3; p++) {
        dp_strs *s = parts[p].out;
        s->v = dp_alloc_array(r->a, names->n ? names->n : 1, sizeof *s->v);
        if (s->v == NULL)
            return oom(r);
        s->n = 0;
        for (size_t i = 0; i < names->n; i++)
            if (k[i] & parts[p].bit)
                s->v[s->n++] = names->v[i];
    }
    return 0;
}

static int r_code(reader *r, dp_const *c) {
    dp_code *co = dp_code_new(r->a);
    if (co == NULL)
        return oom(r);
    co->py_minor = r->py_minor;
    int nlocals = 0; /* 3.8-3.10 only; implied by co_varnames */
    dp_const *code, *consts, *filename, *name, *qualname = NULL, *lines, *exc = NULL, *kinds = NULL;
    dp_strs localsplus = {0};
    size_t kinds_pos = 0;
    int modern = r->py_minor >= 11;
    if (r_int_field(r, "co_argcount", &co->argcount) < 0 ||
        r_int_field(r, "co_posonlyargcount", &co->posonlyargcount) < 0 ||
        r_int_field(r, "co_kwonlyargcount", &co->kwonlyargcount) < 0 ||
        (!modern && r_int_field(r, "co_nlocals", &nlocals) < 0) ||
        r_int_field(r, "co_stacksize", &co->stacksize) < 0 ||
        r_int_field(r, "co_flags", &co->flags) < 0 ||
        r_typed(r, DP_CONST_BYTES, "co_code", &code) < 0 ||
        r_typed(r, DP_CONST_TUPLE, "co_consts", &consts) < 0 ||
        r_str_tuple(r, "co_names", &co->names) < 0)
        return -1;
    if (modern) {
        kinds_pos = r->pos;
        if (r_str_tuple(r, "co_localsplusnames", &localsplus) < 0 ||
            r_typed(r, DP_CONST_BYTES, "co_localspluskinds", &kinds) < 0)
            return -1;
    } else if (r_str_tuple(r, "co_varnames", &co->varnames) < 0 ||
               r_str_tuple(r, "co_freevars", &co->freevars) < 0 ||
               r_str_tuple(r, "co_cellvars", &co->cellvars) < 0) {
        return -1;
    }
    if (r_typed(r, DP_CONST_STR, "co_filename", &filename) < 0 ||
        r_typed(r, DP_CONST_STR, "co_name", &name) < 0 ||
        (modern && r_typed(r, DP_CONST_STR, "co_qualname", &qualname) < 0) ||
        r_int_field(r, "co_firstlineno", &co->firstlineno) < 0 ||
        r_typed(r, DP_CONST_BYTES, modern || r->py_minor == 10 ? "co_linetable" : "co_lnotab",
                &lines) < 0 ||
        (modern && r_typed(r, DP_CONST_BYTES, "co_exceptiontable", &exc) < 0))
        return -1;
    if (modern && split_localsplus(r, co, &localsplus, kinds, kinds_pos) < 0)
        return -1;
    co->code = (const uint8_t *)code->text;
    co->codelen = code->len;
    co->consts = consts->items;
    co->nconsts = consts->n;
    co->filename = filename->text;
    co->name = name->text;
    co->qualname = qualname ? qualname->text : name->text;
    co->linetable = (const uint8_t *)lines->text;
    co->linetablelen = lines->len;
    if (exc != NULL) {
        co->exctable = (const uint8_t *)exc->text;
        co->exctablelen = exc->len;
    }
    c->code = co;
    return 0;
}

/* Objects that never take a reference slot: singletons and TYPE_REF. */
static int r_unnumbered(reader *r, int type, size_t start, dp_const **out) {
    dp_const_kind kind;
    switch (type) {
    case TYPE_NONE: kind = DP_CONST_NONE; break;
    case TYPE_TRUE: kind = DP_CONST_TRUE; break;
    case TYPE_FALSE: kind = DP_CONST_FALSE; break;
    case TYPE_ELLIPSIS: kind = DP_CONST_ELLIPSIS; break;
    case TYPE_STOPITER:
        *out = new_text(r, DP_CONST_OTHER, (const uint8_t *)"StopIteration", 13);
        return *out ? 0 : -1;
    default: { /* TYPE_REF */
        int32_t idx;
        if (r_i32(r, "reference index", &idx) < 0)
            return -1;
        if (idx < 0 || (size_t)idx >= r->nrefs)
            return dp_fail(r->err, off(r, start),
                           "bad marshal data at byte %zu: reference %d, but only %zu objects "
                           "are numbered",
                           in_file(r, start), idx, r->nrefs);
        /* CPython hands out a half-built tuple here; a cycle would hang
         * every consumer of the model, so refuse it */
        if (r->refs[idx] == NULL)
            return dp_fail(r->err, off(r, start),
                           "bad marshal data at byte %zu: reference %d to an object still being "
                           "built",
                           in_file(r, start), idx);
        *out = r->refs[idx];
        return 0;
    }
    }
    *out = new_const(r, kind);
    return *out ? 0 : -1;
}

static int r_container(reader *r, int type, dp_const **out) {
    size_t n;
    if (type == TYPE_SMALL_TUPLE) {
        unsigned n8;
        if (r_u8(r, "small tuple size", &n8) < 0)
            return -1;
        n = n8;
    } else if (r_size(r, "container size", &n) < 0) {
        return -1;
    }
    dp_const_kind kind = type == TYPE_TUPLE || type == TYPE_SMALL_TUPLE ? DP_CONST_TUPLE
                         : type == TYPE_FROZENSET                     ? DP_CONST_FROZENSET
                                                                      : DP_CONST_OTHER;
    dp_const *c = *out = new_const(r, kind);
    if (c == NULL || r_items(r, n, c, "NULL where an item was expected") < 0)
        return -1;
    if (type == TYPE_LIST)
        return set_other_repr(r, c, "[", "]", "[]", 0);
    if (type == TYPE_SET)
        return set_other_repr(r, c, "{", "}", "set()", 0);
    return 0;
}

static int r_float(reader *r, int type, dp_const **out) {
    int cplx = type == TYPE_BINARY_COMPLEX || type == TYPE_COMPLEX;
    double re, im = 0.0;
    if (type == TYPE_BINARY_FLOAT || type == TYPE_BINARY_COMPLEX) {
        if (need(r, cplx ? 16 : 8, cplx ? "binary complex" : "binary float") < 0)
            return -1;
        re = r_double_bin(r);
        if (cplx)
            im = r_double_bin(r);
    } else if (r_double_str(r, &re) < 0 || (cplx && r_double_str(r, &im) < 0)) {
        return -1;
    }
    *out = new_const(r, cplx ? DP_CONST_COMPLEX : DP_CONST_FLOAT);
    if (*out == NULL)
        return -1;
    (*out)->f = re;
    (*out)->im = im;
    return 0;
}

static int r_string(reader *r, int type, dp_const **out) {
    size_t n;
    if (type == TYPE_SHORT_ASCII || type == TYPE_SHORT_ASCII_INTERNED) {
        unsigned n8;
        if (r_u8(r, "short str length", &n8) < 0 || need(r, n8, "short str") < 0)
            return -1;
        return r_ascii(r, n8, out);
    }
    if (r_size(r, type == TYPE_STRING ? "bytes length" : "str length", &n) < 0)
        return -1;
    if (type == TYPE_ASCII || type == TYPE_ASCII_INTERNED)
        return r_ascii(r, n, out);
    const uint8_t *s = r->data + r->pos;
    size_t bad = type != TYPE_STRING ? dp_utf8_invalid_at((const char *)s, n) : n;
    if (bad < n)
        return fail_at(r, r->pos + bad, "str is not valid UTF-8");
    r->pos += n;
    *out = new_text(r, type == TYPE_STRING ? DP_CONST_BYTES : DP_CONST_STR, s, n);
    return *out ? 0 : -1;
}

/* Objects that take a reference slot when written with FLAG_REF. */
static int r_numbered(reader *r, int type, size_t start, dp_const **out) {
    switch (type) {
    case TYPE_INT: {
        int32_t v;
        char buf[16];
        if (r_i32(r, "int", &v) < 0)
            return -1;
        snprintf(buf, sizeof buf, "%ld", (long)v);
        *out = new_text(r, DP_CONST_INT, (const uint8_t *)buf, strlen(buf));
        return *out ? 0 : -1;
    }
    case TYPE_INT64:
        return r_int64(r, out);
    case TYPE_LONG:
        return r_long_digits(r, out);
    case TYPE_FLOAT:
    case TYPE_BINARY_FLOAT:
    case TYPE_COMPLEX:
    case TYPE_BINARY_COMPLEX:
        return r_float(r, type, out);
    case TYPE_STRING:
    case TYPE_UNICODE:
    case TYPE_INTERNED:
    case TYPE_ASCII:
    case TYPE_ASCII_INTERNED:
    case TYPE_SHORT_ASCII:
    case TYPE_SHORT_ASCII_INTERNED:
        return r_string(r, type, out);
    case TYPE_SMALL_TUPLE:
    case TYPE_TUPLE:
    case TYPE_LIST:
    case TYPE_SET:
    case TYPE_FROZENSET:
        return r_container(r, type, out);
    case TYPE_DICT:
        *out = new_const(r, DP_CONST_OTHER);
        return *out ? r_dict(r, *out) : -1;
    case TYPE_CODE:
        *out = new_const(r, DP_CONST_CODE);
        return *out ? r_code(r, *out) : -1;
    default:
        return dp_fail(r->err, off(r, start),
                       "bad marshal data at byte %zu: unknown type code 0x%02x ('%c'), "
                       "expected one of 0NTF.SirIlfgxysuatAzZ()[{<>c",
                       in_file(r, start), (unsigned)type, type >= 0x20 && type < 0x7f ? type : '?');
    }
}

/* One object; with null_ok a TYPE_NULL gives *out == NULL (dict end). */
static int r_object(reader *r, dp_const **out, int null_ok) {
    size_t start = r->pos;
    unsigned code;
    *out = NULL;
    if (r_u8(r, "type code", &code) < 0)
        return -1;
    int flag = code & FLAG_REF;
    int type = (int)(code & ~(unsigned)FLAG_REF);
    switch (type) {
    case TYPE_NULL:
        return null_ok ? 0 : fail_at(r, start, "NULL where an object was expected");
    case TYPE_NONE:
    case TYPE_TRUE:
    case TYPE_FALSE:
    case TYPE_ELLIPSIS:
    case TYPE_STOPITER:
    case TYPE_REF:
        return r_unnumbered(r, type, start, out);
    default:
        break;
    }
    if (r->depth >= MARSHAL_MAX_DEPTH)
        return dp_fail(r->err, off(r, start),
                       "bad marshal data at byte %zu: nested more than %d levels deep", in_file(r, start),
                       MARSHAL_MAX_DEPTH);
    /* the slot is taken before the contents are read, as CPython does */
    size_t idx = flag ? ref_reserve(r) : SIZE_MAX;
    if (flag && idx == SIZE_MAX)
        return -1;
    r->depth++;
    dp_const *c = NULL;
    int rc = r_numbered(r, type, start, &c);
    r->depth--;
    if (rc < 0 || c == NULL)
        return -1;
    c->at = in_file(r, start) + 1;
    if (flag)
        r->refs[idx] = c;
    *out = c;
    return 0;
}

int dp_marshal_load(dp_arena *a, const uint8_t *data, size_t len, int py_minor, dp_const **out,
                    dp_error *err) {
    return dp_marshal_load_at(a, data, len, 0, py_minor, out, err);
}

int dp_marshal_load_at(dp_arena *a, const uint8_t *data, size_t len, size_t base, int py_minor, dp_const **out,
                       dp_error *err) {
    *out = NULL;
    if (py_minor < DP_MIN_MINOR || py_minor > DP_MAX_MINOR)
        return dp_fail(err, -1, "marshal data of Python 3.%d is not supported (3.%d to 3.%d are)",
                       py_minor, DP_MIN_MINOR, DP_MAX_MINOR);
    reader r = {.a = a, .data = data, .len = data ? len : 0, .py_minor = py_minor, .err = err, .base = base};
    dp_const *c;
    int rc = r_object(&r, &c, 0);
    free(r.refs);
    if (rc < 0)
        return -1;
    *out = c;
    return 0;
}
