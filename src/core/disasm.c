/* The disassembler: a listing in the spirit of Python's `dis` for a code
 * object of any supported version and every code object nested in it.
 * Works on the raw bytecode with the per-version tables of opcodes.h only,
 * so it stays usable when the decompiler cannot handle some code. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "depyf.h"
#include "ptrmap.h"
#include "opcodes.h"

/* Also used by marshal.c for the text of list, set and dict values. */

#define CONST_REPR_MAX 80  /* constants are shortened to this in the listing */
#define REPR_MAX_DEPTH 50  /* deeper constants print as "..." */

/* Models built by hand or by the extension may leave names unset. */
static const char *or_empty(const char *s) { return s ? s : ""; }

static void buf_truncate(dp_buf *b, size_t len) {
    if (b->data != NULL && len <= b->len) {
        b->len = len;
        b->data[len] = '\0';
    }
}

/* ---- constant repr (close to Python's repr) ---- */

/* Python's float repr: the shortest digits that read back as the same
 * double; positional from 1e-4 up to 1e16, else scientific.  Complex parts
 * drop the ".0" of integral values, as Python does. */
static void put_float(dp_buf *b, double x, int complex_part) {
    if (isnan(x)) {
        dp_buf_puts(b, "nan");
        return;
    }
    if (isinf(x)) {
        dp_buf_puts(b, x > 0 ? "inf" : "-inf");
        return;
    }
    char sci[40];
    for (int prec = 0; prec < 17; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec, x);
        if (strtod(sci, NULL) == x)
            break;
    }
    /* sci is [-]d[.ddd]e(+|-)xx, the point being the locale's */
    const char *p = sci;
    if (*p == '-')
        dp_buf_putc(b, *p++);
    char digits[24];
    size_t nd = 0;
    for (; *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    int exp = atoi(p + 1);
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            dp_buf_puts(b, "0.");
            for (int i = -1; i > exp; i--)
                dp_buf_putc(b, '0');
            dp_buf_putn(b, digits, nd);
            return;
        }
        size_t whole = (size_t)exp + 1;
        for (size_t i = 0; i < whole; i++)
            dp_buf_putc(b, i < nd ? digits[i] : '0');
        if (nd > whole) {
            dp_buf_putc(b, '.');
            dp_buf_putn(b, digits + whole, nd - whole);
        } else if (!complex_part) {
            dp_buf_puts(b, ".0");
        }
        return;
    }
    dp_buf_putc(b, digits[0]);
    if (nd > 1) {
        dp_buf_putc(b, '.');
        dp_buf_putn(b, digits + 1, nd - 1);
    }
    dp_buf_printf(b, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
}

static void put_complex(dp_buf *b, double re, double im) {
    if (re == 0.0 && !signbit(re)) {
        put_float(b, im, 1);
        dp_buf_putc(b, 'j');
        return;
    }
    dp_buf_putc(b, '(');
    put_float(b, re, 1);
    if (!(im < 0 || (im == 0.0 && signbit(im))) || isnan(im))
        dp_buf_putc(b, '+');
    put_float(b, im, 1);
    dp_buf_puts(b, "j)");
}

/* Code points that str.isprintable() rejects, as far as they matter in
 * source code: controls, separators other than space, format characters,
 * surrogates and private use. */
static int unprintable(uint32_t cp) {
    return cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD || cp == 0x61C ||
           cp == 0x1680 || cp == 0x180E || (cp >= 0x2000 && cp <= 0x200F) ||
           (cp >= 0x2028 && cp <= 0x202F) || (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 ||
           (cp >= 0xD800 && cp <= 0xF8FF) || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB) ||
           cp >= 0xF0000;
}

/* Decodes one UTF-8 sequence (surrogates allowed); 0 if malformed. */
static size_t utf8_next(const uint8_t *s, size_t n, uint32_t *cp) {
    size_t k = s[0] < 0x80 ? 0 : (s[0] & 0xE0) == 0xC0 ? 1 : (s[0] & 0xF0) == 0xE0 ? 2
                                 : (s[0] & 0xF8) == 0xF0 ? 3 : 4;
    if (k == 4 || k >= n)
        return 0;
    uint32_t v = k == 0 ? s[0] : s[0] & (0x3F >> k);
    for (size_t j = 1; j <= k; j++) {
        if ((s[j] & 0xC0) != 0x80)
            return 0;
        v = v << 6 | (s[j] & 0x3F);
    }
    *cp = v;
    return k + 1;
}

static char pick_quote(const char *s, size_t n) {
    return memchr(s, '\'', n) != NULL && memchr(s, '"', n) == NULL ? '"' : '\'';
}

static int put_simple_escape(dp_buf *b, uint32_t c, char quote) {
    switch (c) {
    case '\\': dp_buf_puts(b, "\\\\"); return 1;
    case '\n': dp_buf_puts(b, "\\n"); return 1;
    case '\r': dp_buf_puts(b, "\\r"); return 1;
    case '\t': dp_buf_puts(b, "\\t"); return 1;
    default:
        if (c == (uint32_t)(unsigned char)quote) {
            dp_buf_putc(b, '\\');
            dp_buf_putc(b, quote);
            return 1;
        }
        return 0;
    }
}

static void put_str(dp_buf *b, const char *s, size_t n, size_t limit) {
    char quote = pick_quote(s, n);
    const uint8_t *u = (const uint8_t *)s;
    dp_buf_putc(b, quote);
    for (size_t i = 0; i < n && b->len < limit;) {
        uint32_t cp;
        size_t k = utf8_next(u + i, n - i, &cp);
        if (k == 0) { /* not UTF-8 (a live object's bad data): show the byte */
            dp_buf_printf(b, "\\x%02x", u[i]);
            i++;
            continue;
        }
        if (!put_simple_escape(b, cp, quote)) {
            if (!unprintable(cp))
                dp_buf_putn(b, s + i, k);
            else if (cp <= 0xFF)
                dp_buf_printf(b, "\\x%02x", (unsigned)cp);
            else if (cp <= 0xFFFF)
                dp_buf_printf(b, "\\u%04x", (unsigned)cp);
            else
                dp_buf_printf(b, "\\U%08x", (unsigned)cp);
        }
        i += k;
    }
    dp_buf_putc(b, quote);
}

static void put_bytes(dp_buf *b, const char *s, size_t n, size_t limit) {
    char quote = pick_quote(s, n);
    dp_buf_putc(b, 'b');
    dp_buf_putc(b, quote);
    for (size_t i = 0; i < n && b->len < limit; i++) {
        unsigned char c = (unsigned char)s[i];
        if (put_simple_escape(b, c, quote))
            continue;
        if (c < 0x20 || c >= 0x7F)
            dp_buf_printf(b, "\\x%02x", c);
        else
            dp_buf_putc(b, (char)c);
    }
    dp_buf_putc(b, quote);
}

static void repr_rec(const dp_const *c, dp_buf *b, size_t limit, int depth) {
    if (b->len >= limit)
        return;
    if (c == NULL || depth > REPR_MAX_DEPTH) {
        dp_buf_puts(b, "...");
        return;
    }
    switch (c->kind) {
    case DP_CONST_NONE: dp_buf_puts(b, "None"); return;
    case DP_CONST_TRUE: dp_buf_puts(b, "True"); return;
    case DP_CONST_FALSE: dp_buf_puts(b, "False"); return;
    case DP_CONST_ELLIPSIS: dp_buf_puts(b, "Ellipsis"); return;
    case DP_CONST_INT:
    case DP_CONST_OTHER: case DP_CONST_OBJECT: dp_buf_putn(b, c->text ? c->text : "?", c->text ? c->len : 1); return;
    case DP_CONST_FLOAT: put_float(b, c->f, 0); return;
    case DP_CONST_COMPLEX: put_complex(b, c->f, c->im); return;
    case DP_CONST_STR: put_str(b, c->text ? c->text : "", c->len, limit); return;
    case DP_CONST_BYTES: put_bytes(b, c->text ? c->text : "", c->len, limit); return;
    case DP_CONST_CODE:
        if (c->code == NULL)
            dp_buf_puts(b, "<code object>");
        else
            dp_buf_printf(b, "<code object %s, file \"%s\", line %d>", or_empty(c->code->name),
                          or_empty(c->code->filename), c->code->firstlineno);
        return;
    case DP_CONST_TUPLE:
    case DP_CONST_FROZENSET: {
        int fs = c->kind == DP_CONST_FROZENSET;
        if (fs && c->n == 0) {
            dp_buf_puts(b, "frozenset()");
            return;
        }
        dp_buf_puts(b, fs ? "frozenset({" : "(");
        for (size_t i = 0; i < c->n && b->len < limit; i++) {
            if (i > 0)
                dp_buf_puts(b, ", ");
            repr_rec(c->items[i], b, limit, depth + 1);
        }
        dp_buf_puts(b, fs ? "})" : c->n == 1 ? ",)" : ")");
        return;
    }
    }
    dp_buf_puts(b, "?");
}

/* Appends the repr of `c`; past `max` bytes it is cut (at a character
 * boundary) and ends in "...". */
void dp_const_repr(const dp_const *c, size_t max, dp_buf *out) {
    size_t start = out->len;
    size_t limit = max > SIZE_MAX - start ? SIZE_MAX : start + max;
    repr_rec(c, out, limit, 0);
    if (!dp_buf_ok(out) || out->len <= limit)
        return;
    size_t cut = limit;
    while (cut > start && ((unsigned char)out->data[cut] & 0xC0) == 0x80)
        cut--;
    buf_truncate(out, cut);
    dp_buf_puts(out, "...");
}

/* ---- line numbers ---- */

#define NO_LINE INT_MIN

/* starts[unit]: the line that begins at that code unit, or NO_LINE. */
typedef struct linestarts {
    int *starts;
    size_t nunits;
    long long last; /* the line of the previous start */
} linestarts;

/* Lines are summed in long long: a hostile table cannot overflow that
 * (at most 2**31 deltas of at most 2**32), and lines beyond int are dropped. */
static void mark_line(linestarts *ls, size_t offset, long long line) {
    if (line == ls->last || line <= INT_MIN || line > INT_MAX)
        return;
    ls->last = line;
    if (offset / 2 < ls->nunits)
        ls->starts[offset / 2] = (int)line;
}

/* 3.8-3.9 co_lnotab: (offset increment, signed line increment) pairs. */
static void lnotab_lines(const dp_code *co, linestarts *ls) {
    size_t addr = 0;
    long long line = co->firstlineno;
    for (size_t i = 0; i + 1 < co->linetablelen; i += 2) {
        if (co->linetable[i] != 0) {
            mark_line(ls, addr, line);
            addr += co->linetable[i];
        }
        line += (int8_t)co->linetable[i + 1];
    }
    mark_line(ls, addr, line);
}

/* 3.10 co_linetable: (length, signed line delta) pairs; -128 = no line. */
static void linetable310_lines(const dp_code *co, linestarts *ls) {
    size_t end = 0;
    long long line = co->firstlineno;
    for (size_t i = 0; i + 1 < co->linetablelen; i += 2) {
        size_t start = end;
        end += co->linetable[i];
        int8_t delta = (int8_t)co->linetable[i + 1];
        if (delta == -128)
            continue;
        line += delta;
        if (end > start)
            mark_line(ls, start, line);
    }
}

/* Little-endian 6-bit chunks, 0x40 = more (the 3.11+ location table). */
static int loc_varint(const uint8_t *p, size_t n, size_t *i, uint32_t *out) {
    uint32_t v = 0;
    for (unsigned shift = 0;; shift += 6) {
        if (*i >= n || shift > 30)
            return -1;
        uint8_t b = p[(*i)++];
        v |= (uint32_t)(b & 63) << shift;
        if (!(b & 64))
            break;
    }
    *out = v;
    return 0;
}

/* 3.11+ location table; returns the byte where it is malformed, or -1. */
static long loctable_lines(const dp_code *co, linestarts *ls) {
    const uint8_t *p = co->linetable;
    size_t n = co->linetablelen, i = 0, addr = 0;
    long long line = co->firstlineno;
    while (i < n) {
        size_t entry = i;
        uint8_t first = p[i++];
        if (!(first & 0x80))
            return (long)entry;
        int code = (first >> 3) & 15;
        size_t len = (size_t)(first & 7) + 1;
        uint32_t v;
        int has_line = code != 15;
        if (code == 13 || code == 14) {
            if (loc_varint(p, n, &i, &v) < 0)
                return (long)entry;
            line += (v & 1) ? -(long long)(v >> 1) : (long long)(v >> 1);
        } else if (code >= 10 && code <= 12) {
            line += code - 10;
        }
        if (has_line)
            mark_line(ls, addr, line);
        addr += len * 2;
        while (i < n && !(p[i] & 0x80)) /* columns: not shown */
            i++;
    }
    return -1;
}

/* ---- exception table (3.11+) ---- */

typedef struct exc_entry {
    uint32_t start, end, target, depth;
    int lasti;
} exc_entry;

/* Big-endian 6-bit chunks, 0x40 = more (the exception table). */
static int exc_varint(const uint8_t *p, size_t n, size_t *i, uint32_t *out) {
    uint32_t v = 0;
    for (;;) {
        if (*i >= n || v > (UINT32_MAX >> 6))
            return -1;
        uint8_t b = p[(*i)++];
        v = v << 6 | (b & 63);
        if (!(b & 64))
            break;
    }
    *out = v;
    return 0;
}

/* Fills `e` (room for exctablelen/4 entries); returns the count, and sets
 * *bad to the malformed byte, or -1. */
static size_t parse_exctable(const dp_code *co, exc_entry *e, long *bad) {
    size_t i = 0, k = 0;
    *bad = -1;
    while (i < co->exctablelen) {
        size_t at = i;
        uint32_t start, len, target, dl;
        if (exc_varint(co->exctable, co->exctablelen, &i, &start) < 0 ||
            exc_varint(co->exctable, co->exctablelen, &i, &len) < 0 ||
            exc_varint(co->exctable, co->exctablelen, &i, &target) < 0 ||
            exc_varint(co->exctable, co->exctablelen, &i, &dl) < 0 || len > UINT32_MAX / 2 ||
            start > UINT32_MAX / 2 - len || target > UINT32_MAX / 2) {
            *bad = (long)at;
            break;
        }
        e[k++] = (exc_entry){start * 2, (start + len) * 2, target * 2, dl >> 1, (int)(dl & 1)};
    }
    return k;
}

/* ---- instructions ---- */

typedef struct insn {
    size_t offset;
    unsigned opbyte;
    dp_opname op;
    uint32_t arg; /* with EXTENDED_ARG prefixes folded in */
    int hasarg;
    unsigned caches;
} insn;

typedef struct decoder {
    const dp_code *co;
    const dp_optable *t;
    size_t pos;
    uint32_t ext;
} decoder;

static int next_insn(decoder *d, insn *in) {
    if (d->pos + 1 >= d->co->codelen)
        return 0;
    in->offset = d->pos;
    in->opbyte = d->co->code[d->pos];
    in->op = (dp_opname)d->t->op[in->opbyte];
    in->hasarg = (d->t->flags[in->opbyte] & DP_OPF_HASARG) != 0;
    in->caches = d->t->caches[in->opbyte];
    if (in->hasarg) {
        in->arg = d->ext | d->co->code[d->pos + 1];
        d->ext = in->op == DPO_EXTENDED_ARG ? in->arg << 8 : 0;
    } else {
        in->arg = 0;
        d->ext = 0;
    }
    d->pos += 2 + 2 * (size_t)in->caches;
    return 1;
}

static int is_backward_jump(dp_opname op) {
    switch (op) {
    case DPO_JUMP_BACKWARD:
    case DPO_JUMP_BACKWARD_NO_INTERRUPT:
    case DPO_POP_JUMP_BACKWARD_IF_FALSE:
    case DPO_POP_JUMP_BACKWARD_IF_TRUE:
    case DPO_POP_JUMP_BACKWARD_IF_NONE:
    case DPO_POP_JUMP_BACKWARD_IF_NOT_NONE:
        return 1;
    default:
        return 0;
    }
}

/* The jump target's byte offset; 0 if `in` is no jump.  Arguments count
 * bytes before 3.10 and code units since; from 3.11 relative jumps start
 * after the inline caches and some go backward. */
static int jump_target(const decoder *d, const insn *in, long long *target) {
    uint8_t f = d->t->flags[in->opbyte];
    long long unit = d->co->py_minor >= 10 ? 2 : 1;
    if (f & DP_OPF_JABS) {
        *target = (long long)in->arg * unit;
        return 1;
    }
    if (f & DP_OPF_JREL) {
        long long delta = (long long)in->arg * unit;
        *target = (long long)in->offset + 2 + 2 * (long long)in->caches +
                  (is_backward_jump(in->op) ? -delta : delta);
        return 1;
    }
    return 0;
}

/* Fast-local names by index: co_varnames before 3.11, the localsplus
 * order (varnames, cells that are not arguments, free variables) since. */
typedef struct names_ctx {
    const char **fast;
    size_t nfast;
    const char **cellfree; /* < 3.11: cellvars + freevars */
    size_t ncellfree;
} names_ctx;

static int in_strs(const dp_strs *s, const char *name) {
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], name) == 0)
            return 1;
    return 0;
}

static int build_names(const dp_code *co, names_ctx *nx) {
    size_t total = co->varnames.n + co->cellvars.n + co->freevars.n;
    nx->fast = malloc((total ? total : 1) * sizeof *nx->fast);
    if (nx->fast == NULL)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < co->varnames.n; i++)
        nx->fast[k++] = co->varnames.v[i];
    size_t cf = k;
    for (size_t i = 0; i < co->cellvars.n; i++)
        if (co->py_minor < 11 || !in_strs(&co->varnames, co->cellvars.v[i]))
            nx->fast[k++] = co->cellvars.v[i];
    for (size_t i = 0; i < co->freevars.n; i++)
        nx->fast[k++] = co->freevars.v[i];
    if (co->py_minor >= 11) {
        nx->nfast = k;
        nx->cellfree = nx->fast;
        nx->ncellfree = k;
    } else {
        nx->nfast = co->varnames.n;
        nx->cellfree = nx->fast + cf;
        nx->ncellfree = k - cf;
    }
    return 0;
}

static void put_name(dp_buf *b, const char **v, size_t n, uint32_t i) {
    if (i < n)
        dp_buf_puts(b, v[i]);
    else
        dp_buf_printf(b, "<index %u out of range>", (unsigned)i);
}

static void put_flag_names(dp_buf *b, uint32_t arg, const char *const *names, int n) {
    int first = 1;
    for (int i = 0; i < n; i++) {
        if (arg & (1u << i)) {
            dp_buf_printf(b, "%s%s", first ? "" : ", ", names[i]);
            first = 0;
        }
    }
}

static const char *pick(const char *const *v, size_t n, uint32_t i) { return i < n ? v[i] : "?"; }
#define PICK(v, i) pick(v, sizeof v / sizeof *v, i)

static const char *const cmp_ops[] = {"<", "<=", "==", "!=", ">", ">=", "in", "not in",
                                      "is", "is not", "exception match", "BAD"};
static const char *const nb_ops[] = {"+", "&", "//", "<<", "@", "*", "%", "|", "**",
                                     ">>", "-", "/", "^", "+=", "&=", "//=", "<<=", "@=",
                                     "*=", "%=", "|=", "**=", ">>=", "-=", "/=", "^="};
static const char *const fn_flags[] = {"defaults", "kwdefaults", "annotations", "closure"};
static const char *const conversions[] = {"", "str", "repr", "ascii"};
static const char *const intrinsic1[] = {
    "INTRINSIC_1_INVALID", "INTRINSIC_PRINT", "INTRINSIC_IMPORT_STAR",
    "INTRINSIC_STOPITERATION_ERROR", "INTRINSIC_ASYNC_GEN_WRAP", "INTRINSIC_UNARY_POSITIVE",
    "INTRINSIC_LIST_TO_TUPLE", "INTRINSIC_TYPEVAR", "INTRINSIC_PARAMSPEC",
    "INTRINSIC_TYPEVARTUPLE", "INTRINSIC_SUBSCRIPT_GENERIC", "INTRINSIC_TYPEALIAS"};
static const char *const intrinsic2[] = {
    "INTRINSIC_2_INVALID", "INTRINSIC_PREP_RERAISE_STAR", "INTRINSIC_TYPEVAR_WITH_BOUND",
    "INTRINSIC_TYPEVAR_WITH_CONSTRAINTS", "INTRINSIC_SET_FUNCTION_TYPE_PARAMS",
    "INTRINSIC_SET_TYPEPARAM_DEFAULT"};

/* A name whose load also pushes NULL (or self), the way that version's
 * dis writes it. */
static void put_pushes_null(dp_buf *b, const dp_code *co, int pushes, uint32_t name,
                            const char *what) {
    if (pushes && co->py_minor <= 12)
        dp_buf_printf(b, "%s + ", what);
    put_name(b, co->names.v, co->names.n, name);
    if (pushes && co->py_minor > 12)
        dp_buf_printf(b, " + %s", what);
}

/* co_names operands; from 3.11 LOAD_GLOBAL and from 3.12 LOAD_ATTR and
 * LOAD_SUPER_ATTR keep flags in the low bits. */
static void put_name_arg(dp_buf *b, const dp_code *co, dp_opname op, uint32_t a) {
    if (op == DPO_LOAD_GLOBAL && co->py_minor >= 11)
        put_pushes_null(b, co, a & 1, a >> 1, "NULL");
    else if (op == DPO_LOAD_ATTR && co->py_minor >= 12)
        put_pushes_null(b, co, a & 1, a >> 1, "NULL|self");
    else if (op == DPO_LOAD_SUPER_ATTR)
        put_pushes_null(b, co, a & 1, a >> 2, "NULL|self");
    else
        put_name(b, co->names.v, co->names.n, a);
}

/* What the argument means, as dis shows it in parentheses ("" if nothing). */
static void put_argrepr(dp_buf *b, const decoder *d, const names_ctx *nx, const insn *in) {
    const dp_code *co = d->co;
    int minor = co->py_minor;
    uint32_t a = in->arg;
    long long target;
    if (jump_target(d, in, &target)) {
        dp_buf_printf(b, "to %lld", target);
        return;
    }
    switch (in->op) {
    case DPO_LOAD_CONST:
    case DPO_RETURN_CONST:
    case DPO_KW_NAMES:
        if (a < co->nconsts)
            dp_const_repr(co->consts[a], CONST_REPR_MAX, b);
        else
            dp_buf_printf(b, "<index %u out of range>", (unsigned)a);
        return;
    case DPO_LOAD_GLOBAL:
    case DPO_LOAD_ATTR:
    case DPO_LOAD_SUPER_ATTR:
    case DPO_LOAD_NAME:
    case DPO_STORE_NAME:
    case DPO_DELETE_NAME:
    case DPO_STORE_ATTR:
    case DPO_DELETE_ATTR:
    case DPO_STORE_GLOBAL:
    case DPO_DELETE_GLOBAL:
    case DPO_IMPORT_NAME:
    case DPO_IMPORT_FROM:
    case DPO_LOAD_METHOD:
    case DPO_LOAD_FROM_DICT_OR_GLOBALS:
        put_name_arg(b, co, in->op, a);
        return;
    case DPO_LOAD_FAST:
    case DPO_STORE_FAST:
    case DPO_DELETE_FAST:
    case DPO_LOAD_FAST_CHECK:
    case DPO_LOAD_FAST_AND_CLEAR:
        put_name(b, nx->fast, nx->nfast, a);
        return;
    case DPO_LOAD_FAST_LOAD_FAST:
    case DPO_STORE_FAST_LOAD_FAST:
    case DPO_STORE_FAST_STORE_FAST:
        put_name(b, nx->fast, nx->nfast, a >> 4);
        dp_buf_puts(b, ", ");
        put_name(b, nx->fast, nx->nfast, a & 15);
        return;
    case DPO_LOAD_DEREF:
    case DPO_STORE_DEREF:
    case DPO_DELETE_DEREF:
    case DPO_LOAD_CLOSURE:
    case DPO_LOAD_CLASSDEREF:
    case DPO_MAKE_CELL:
    case DPO_LOAD_FROM_DICT_OR_DEREF:
        put_name(b, nx->cellfree, nx->ncellfree, a);
        return;
    case DPO_COMPARE_OP:
        if (minor >= 13) {
            dp_buf_printf(b, (a & 16) ? "bool(%s)" : "%s", PICK(cmp_ops, a >> 5));
            return;
        }
        dp_buf_puts(b, PICK(cmp_ops, minor >= 12 ? a >> 4 : a));
        return;
    case DPO_IS_OP:
        dp_buf_puts(b, a ? "is not" : "is");
        return;
    case DPO_CONTAINS_OP:
        dp_buf_puts(b, a ? "not in" : "in");
        return;
    case DPO_BINARY_OP:
        dp_buf_puts(b, PICK(nb_ops, a));
        return;
    case DPO_FORMAT_VALUE:
        dp_buf_puts(b, conversions[a & 3]);
        if (a & 4)
            dp_buf_puts(b, (a & 3) ? ", with format" : "with format");
        return;
    case DPO_CONVERT_VALUE:
        dp_buf_puts(b, PICK(conversions, a));
        return;
    case DPO_MAKE_FUNCTION:
    case DPO_SET_FUNCTION_ATTRIBUTE:
        put_flag_names(b, a, fn_flags, 4);
        return;
    case DPO_CALL_INTRINSIC_1:
        dp_buf_puts(b, PICK(intrinsic1, a));
        return;
    case DPO_CALL_INTRINSIC_2:
        dp_buf_puts(b, PICK(intrinsic2, a));
        return;
    default:
        return;
    }
}

/* ---- one code object ---- */

static void put_header(dp_buf *b, const dp_code *co) {
    static const char *const flag_names[] = {
        "OPTIMIZED", "NEWLOCALS", "VARARGS", "VARKEYWORDS", "NESTED",
        "GENERATOR", "NOFREE", "COROUTINE", "ITERABLE_COROUTINE", "ASYNC_GENERATOR"};
    dp_buf_printf(b, "Disassembly of code object %s (name %s), file \"%s\", line %d:\n",
                  or_empty(co->qualname), or_empty(co->name), or_empty(co->filename),
                  co->firstlineno);
    dp_buf_printf(b, "  Python 3.%d; argcount %d, posonlyargcount %d, kwonlyargcount %d, "
                     "stacksize %d\n",
                  co->py_minor, co->argcount, co->posonlyargcount, co->kwonlyargcount,
                  co->stacksize);
    dp_buf_printf(b, "  flags 0x%08x", (unsigned)co->flags);
    if (co->flags & 0x3FF) {
        dp_buf_puts(b, " (");
        put_flag_names(b, (uint32_t)co->flags & 0x3FF, flag_names, 10);
        dp_buf_puts(b, ")");
    }
    dp_buf_putc(b, '\n');
    const struct {
        const char *label;
        const dp_strs *s;
    } lists[] = {{"varnames", &co->varnames},
                 {"cellvars", &co->cellvars},
                 {"freevars", &co->freevars}};
    for (size_t l = 0; l < 3; l++) {
        if (lists[l].s->n == 0)
            continue;
        dp_buf_printf(b, "  %s:", lists[l].label);
        for (size_t i = 0; i < lists[l].s->n; i++)
            dp_buf_printf(b, "%s %s", i ? "," : "", lists[l].s->v[i]);
        dp_buf_putc(b, '\n');
    }
    dp_buf_putc(b, '\n');
}

typedef struct listing {
    linestarts ls;
    uint8_t *is_target;
    exc_entry *exc;
    size_t nexc;
    names_ctx nx;
} listing;

static void listing_free(listing *l) {
    free(l->ls.starts);
    free(l->is_target);
    free(l->exc);
    free(l->nx.fast);
}

/* Line starts, jump targets and the exception table of one code object;
 * notes what was malformed.  -1 only when out of memory. */
static int analyse(const dp_code *co, const dp_optable *t, listing *l, dp_buf *notes) {
    size_t nunits = co->codelen / 2;
    l->ls.nunits = nunits;
    l->ls.last = (long long)INT_MIN - 1;
    l->ls.starts = malloc((nunits ? nunits : 1) * sizeof *l->ls.starts);
    l->is_target = calloc(nunits ? nunits : 1, 1);
    l->exc = malloc((co->exctablelen / 4 + 1) * sizeof *l->exc);
    if (l->ls.starts == NULL || l->is_target == NULL || l->exc == NULL ||
        build_names(co, &l->nx) < 0)
        return -1;
    for (size_t i = 0; i < nunits; i++)
        l->ls.starts[i] = NO_LINE;
    if (co->py_minor <= 9) {
        lnotab_lines(co, &l->ls);
    } else if (co->py_minor == 10) {
        linetable310_lines(co, &l->ls);
    } else {
        long bad_line = loctable_lines(co, &l->ls);
        if (bad_line >= 0)
            dp_buf_printf(notes, "  note: line table malformed at byte %ld\n", bad_line);
    }
    long bad = -1;
    l->nexc = co->exctable ? parse_exctable(co, l->exc, &bad) : 0;
    if (co->exctable && bad >= 0)
        dp_buf_printf(notes, "  note: exception table malformed at byte %ld\n", bad);
    for (size_t i = 0; i < l->nexc; i++)
        if (l->exc[i].target / 2 < nunits)
            l->is_target[l->exc[i].target / 2] = 1;
    decoder d = {co, t, 0, 0};
    insn in;
    long long target;
    while (next_insn(&d, &in))
        if (jump_target(&d, &in, &target) && target >= 0 && (unsigned long long)target / 2 < nunits)
            l->is_target[target / 2] = 1;
    if (co->codelen % 2)
        dp_buf_printf(notes, "  note: code is %zu bytes, an odd number: the last is ignored\n",
                      co->codelen);
    return 0;
}

/* One line as dis prints it: line number where a line starts, ">>" on jump
 * targets, offset, opname, argument and its meaning. */
static void put_insn(dp_buf *b, const decoder *d, const listing *l, const insn *in, int first) {
    int line = l->ls.starts[in->offset / 2];
    char lineno[16] = "", unknown[8];
    if (line != NO_LINE) {
        snprintf(lineno, sizeof lineno, "%d", line);
        if (!first)
            dp_buf_putc(b, '\n');
    }
    const char *marker = l->is_target[in->offset / 2] ? " >>" : "   ";
    const char *name = dp_opname_str[in->op];
    if (in->op == DPO_UNKNOWN) {
        snprintf(unknown, sizeof unknown, "<%u>", in->opbyte);
        name = unknown;
    }
    if (!in->hasarg) {
        dp_buf_printf(b, "%5s%s %5zu %s\n", lineno, marker, in->offset, name);
        return;
    }
    dp_buf_printf(b, "%5s%s %5zu %-24s %5u (", lineno, marker, in->offset, name, (unsigned)in->arg);
    size_t inner = b->len;
    put_argrepr(b, d, &l->nx, in);
    if (b->len == inner) /* nothing to say: drop the " (" */
        buf_truncate(b, inner - 2);
    else
        dp_buf_putc(b, ')');
    dp_buf_putc(b, '\n');
}

static int disasm_one(const dp_code *co, dp_buf *out, dp_error *err) {
    const dp_optable *t = dp_optable_for(co->py_minor);
    if (t == NULL)
        return dp_fail(err, -1, "no opcode table for Python 3.%d (supported: 3.%d to 3.%d)",
                       co->py_minor, DP_MIN_MINOR, DP_MAX_MINOR);
    listing l = {0};
    dp_buf notes;
    dp_buf_init(&notes);
    if (analyse(co, t, &l, &notes) < 0) {
        listing_free(&l);
        dp_buf_free(&notes);
        return dp_fail(err, -1, "out of memory disassembling %s", or_empty(co->qualname));
    }
    put_header(out, co);
    if (notes.len)
        dp_buf_putn(out, notes.data, notes.len);
    decoder d = {co, t, 0, 0};
    insn in;
    for (int first = 1; next_insn(&d, &in); first = 0)
        put_insn(out, &d, &l, &in, first);
    if (l.nexc) {
        dp_buf_puts(out, "ExceptionTable:\n");
        for (size_t i = 0; i < l.nexc; i++) {
            const exc_entry *e = &l.exc[i];
            dp_buf_printf(out, "  %u to %u -> %u [%u]%s\n", (unsigned)e->start,
                          (unsigned)(e->end >= 2 ? e->end - 2 : 0), (unsigned)e->target,
                          (unsigned)e->depth, e->lasti ? " lasti" : "");
        }
    }
    listing_free(&l);
    dp_buf_free(&notes);
    return 0;
}

/* Nested code objects follow their parent in constant order, as in dis;
 * one that constants share (marshal references) is listed once, at its
 * first use: the listing stays in proportion to the input (a DAG of code
 * objects used twice at each of n levels would list 2**n of them). */
typedef struct lister {
    dp_arena a;       /* for `listed` */
    dp_ptrmap listed; /* code objects listed so far */
    size_t budget;    /* instructions left to list */
} lister;

static int disasm_rec(lister *ls, const dp_code *co, dp_buf *out, dp_error *err, int depth) {
    if (depth >= DP_MAX_NESTING) /* depth counts from 0 */
        return dp_fail(err, -1, "code objects nested more than %d deep", DP_MAX_NESTING);
    if (dp_ptrmap_get(&ls->listed, (uintptr_t)co, 0, 0) != NULL) {
        dp_buf_printf(out, "Code object %s (name %s) again: listed above\n", or_empty(co->qualname),
                      or_empty(co->name));
        return 0;
    }
    if (dp_ptrmap_put(&ls->a, &ls->listed, (uintptr_t)co, 0, 0, (void *)co) < 0)
        return dp_fail(err, -1, "out of memory writing the disassembly");
    size_t cost = co->codelen / 2 + 1;
    if (cost > ls->budget)
        return dp_fail(err, -1, "more than %d instructions to list", DP_MAX_INSTRUCTIONS);
    ls->budget -= cost;
    if (disasm_one(co, out, err) < 0) {
        dp_error_where(err, or_empty(co->qualname));
        return -1;
    }
    for (size_t i = 0; i < co->nconsts; i++) {
        const dp_const *c = co->consts[i];
        if (c != NULL && c->kind == DP_CONST_CODE && c->code != NULL) {
            dp_buf_putc(out, '\n');
            if (disasm_rec(ls, c->code, out, err, depth + 1) < 0)
                return -1;
        }
    }
    return 0;
}

int dp_disasm(const dp_code *code, dp_buf *out, dp_error *err) {
    lister ls = {.budget = DP_MAX_INSTRUCTIONS};
    dp_arena_init(&ls.a);
    int rc = disasm_rec(&ls, code, out, err, 0);
    dp_arena_free(&ls.a);
    if (rc < 0)
        return -1;
    if (!dp_buf_ok(out))
        return dp_fail(err, -1, "out of memory writing the disassembly");
    return 0;
}
