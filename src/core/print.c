/* Precedence-aware printer: AST -> Python source.
 *
 * The output must recompile to the same bytecode and read like hand-written
 * code.  Where several spellings exist, the one valid in Python 3.8 is chosen
 * (the output may be compiled by any of 3.8-3.13).  Constants are spelled as
 * literals or as expressions the compiler constant-folds back to the very
 * same value (signed zeros, inf and nan included). */
#include "print.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nesting bound for expressions, statements, patterns and constants: hostile
 * input must fail with an error, never overflow the C stack. */
#define MAX_DEPTH 500

/* Precedence levels, loosest first (CPython's grammar).  An expression is
 * parenthesized when its own level is below the level its position needs. */
enum {
    PR_YIELD = -1, /* statement values: a bare `yield` and a bare tuple are fine */
    PR_TUPLE,
    PR_LAMBDA,
    PR_IFEXP,
    PR_OR,
    PR_AND,
    PR_NOT,
    PR_CMP,
    PR_BOR,
    PR_BXOR,
    PR_BAND,
    PR_SHIFT,
    PR_ARITH,
    PR_TERM,
    PR_FACTOR, /* unary + - ~ (and negative numeric constants) */
    PR_POWER,
    PR_AWAIT,
    PR_ATOM
};

/* Quote characters a string inside an f-string replacement field may not
 * use before 3.12. */
enum { Q_SINGLE = 1, Q_DOUBLE = 2 };

typedef struct pr {
    dp_printer *p;
    dp_buf *main;        /* the caller's buffer */
    dp_buf *out;         /* where text goes now: main, or scratch while trying f-string quotes */
    size_t scanned;      /* bytes of main already counted into p->line */
    int depth;
    int fs_nest;         /* > 0 inside an f-string replacement field */
    unsigned fs_forbid;  /* Q_* quote chars strings in replacement fields may not use */
    int fs_bad;          /* a replacement field broke the pre-3.12 rules */
    int fs_lenient;      /* printing with 3.12's rules (PEP 701) */
} pr;

static int expr(pr *r, const dp_node *e, int level);
static int block(pr *r, const dp_nodes *body, int level);

/* ------------------------------------------------------------------ */
/* output helpers                                                      */

static void put(pr *r, const char *s) { dp_buf_puts(r->out, s); }

const char *dp_unmangled(const char *cls, const char *name) {
    if (cls == NULL || name[0] != '_')
        return name;
    while (*cls == '_')
        cls++;
    size_t c = strlen(cls), n;
    const char *w = name + 1 + c;
    if (c == 0 || strncmp(name + 1, cls, c) != 0 || strncmp(w, "__", 2) != 0 || (n = strlen(w)) < 3 ||
        (w[n - 1] == '_' && w[n - 2] == '_') || strchr(w, '.'))
        return name;
    return w;
}

/* A name the compiler mangles (variable, attribute, parameter, import,
 * capture): as written in the class printed around it. */
static void put_name(pr *r, const char *s) { put(r, dp_unmangled(r->p->private_class, s)); }
static void putch(pr *r, char c) { dp_buf_putc(r->out, c); }

static void put_indent(pr *r, int level) {
    for (int i = 0; i < level * r->p->indent; i++)
        putch(r, ' ');
}

/* Brings p->line up to date with the text printed so far. */
static void sync_line(pr *r) {
    const dp_buf *b = r->main;
    for (; r->scanned < b->len; r->scanned++)
        if (b->data[r->scanned] == '\n')
            r->p->line++;
}

static int oom(pr *r) {
    if (dp_buf_over(r->out) || dp_buf_over(r->main))
        return dp_fail(r->p->err, -1, "the source is longer than its limit of %zu bytes",
                       dp_buf_over(r->main) ? r->main->limit : r->out->limit);
    if (!dp_buf_ok(r->out) || !dp_buf_ok(r->main))
        return dp_fail(r->p->err, -1, "out of memory while printing source");
    return 0;
}

/* put_const failed: the text could not grow, or the constant is too deep. */
static int const_failed(pr *r) {
    return oom(r) < 0 ? -1 : dp_fail(r->p->err, -1, "constant nested deeper than %d levels", MAX_DEPTH);
}

/* One level deeper; the walk also stops here once the text cannot grow
 * (past the output limit, a tree of shared nodes is not walked on). */
static int enter(pr *r) {
    if (++r->depth > MAX_DEPTH)
        return dp_fail(r->p->err, -1, "expression or block nested deeper than %d levels", MAX_DEPTH);
    return oom(r);
}

/* ------------------------------------------------------------------ */
/* numbers                                                             */

/* Python's repr() of a finite, non-negative double: the shortest digit
 * string that reads back as the same double, in fixed notation for
 * exponents -4..15 and scientific otherwise, always with '.' or 'e'. */
static void float_repr(char *dst, size_t cap, double v) {
    char tmp[48];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    /* tmp = d[<sep>ddd]e<sign>xx; the separator depends on the C locale */
    char digits[24];
    size_t nd = 0;
    const char *s = tmp;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9' && nd < sizeof digits - 1)
            digits[nd++] = *s;
    digits[nd] = '\0';
    int exp = *s == 'e' ? atoi(s + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0')
        digits[--nd] = '\0';

    size_t o = 0;
#define OUT(c) do { if (o + 1 < cap) dst[o++] = (c); } while (0)
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            OUT('0');
            OUT('.');
            for (int i = -1; i > exp; i--)
                OUT('0');
            for (size_t i = 0; i < nd; i++)
                OUT(digits[i]);
        } else {
            for (int i = 0; i <= exp; i++)
                OUT((size_t)i < nd ? digits[i] : '0');
            OUT('.');
            if ((size_t)exp + 1 < nd)
                for (size_t i = (size_t)exp + 1; i < nd; i++)
                    OUT(digits[i]);
            else
                OUT('0');
        }
        dst[o] = '\0';
    } else {
        OUT(digits[0]);
        if (nd > 1) {
            OUT('.');
            for (size_t i = 1; i < nd; i++)
                OUT(digits[i]);
        }
        dst[o] = '\0';
        snprintf(dst + o, cap - o, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    }
#undef OUT
}

/* The sign bit of the nan that inf - inf gives on this machine: the compiler
 * folds `1e309 - 1e309` with the same hardware operation. */
static int folded_nan_is_negative(void) {
    volatile double inf = HUGE_VAL;
    double n = inf - inf;
    return signbit(n) != 0;
}

static int nan_is_negated(double v) { return (signbit(v) != 0) != folded_nan_is_negative(); }

/* A double as a literal or a folded expression; `strip` drops a trailing
 * ".0" (the parts of a complex need no float marker). */
static void float_text(char *dst, size_t cap, double v, int strip) {
    if (isnan(v)) {
        /* no literal spells nan, but inf - inf folds to one */
        snprintf(dst, cap, "%s", nan_is_negated(v) ? "-(1e309 - 1e309)" : "(1e309 - 1e309)");
        return;
    }
    if (isinf(v)) { /* overflows to inf when read back */
        snprintf(dst, cap, "%s", signbit(v) ? "-1e309" : "1e309");
        return;
    }
    char txt[48];
    float_repr(txt, sizeof txt, fabs(v));
    size_t n = strlen(txt);
    if (strip && n > 2 && strcmp(txt + n - 2, ".0") == 0)
        txt[n - 2] = '\0';
    snprintf(dst, cap, "%s%s", signbit(v) ? "-" : "", txt);
}

static int float_prec(double v) {
    if (isnan(v))
        return nan_is_negated(v) ? PR_FACTOR : PR_ATOM;
    return signbit(v) ? PR_FACTOR : PR_ATOM;
}

enum { NUM_TEXT = 128 }; /* room for any float or complex spelling */

/* Complex numbers have no literal with a real part: spell each one as an
 * expression that folds to exactly (re, im), signed zeros included.  With
 * X = |re| and Y = |im|, float +/- complex adds or subtracts 0.0 on the
 * other part, so (X+Yj), (X-Yj), (-X+Yj), (-X-Yj) keep their signs except
 * where a zero part would flip; those cases negate a form that folds right.
 * Returns the precedence of the spelling. */
static int complex_text(char *dst, size_t cap, double re, double im) {
    char xs[48], ys[48];
    if (isnan(re) || isnan(im)) {
        /* no folded form; the call at least evaluates to an equal value */
        float_text(xs, sizeof xs, re, 0);
        float_text(ys, sizeof ys, im, 0);
        snprintf(dst, cap, "complex(%s, %s)", xs, ys);
        return PR_ATOM;
    }
    int sx = signbit(re) != 0, sy = signbit(im) != 0;
    double x = fabs(re), y = fabs(im);
    if (x == 0) /* where the source negates X, -0 would be the int 0 */
        snprintf(xs, sizeof xs, "%s", sx || sy ? "0.0" : "0");
    else
        float_text(xs, sizeof xs, x, 1);
    float_text(ys, sizeof ys, y, 1);

    if (!sx && !sy) {
        if (x == 0)
            snprintf(dst, cap, "%sj", ys);
        else
            snprintf(dst, cap, "(%s+%sj)", xs, ys);
        return PR_ATOM;
    }
    if (!sx) {
        if (y > 0) {
            snprintf(dst, cap, "(%s-%sj)", x == 0 ? "0" : xs, ys);
            return PR_ATOM;
        }
        snprintf(dst, cap, "-(-%s-0j)", xs);
        return PR_FACTOR;
    }
    if (!sy) {
        if (y == 0)
            snprintf(dst, cap, "(-%s-0j)", xs);
        else if (x > 0)
            snprintf(dst, cap, "(-%s+%sj)", xs, ys);
        else {
            snprintf(dst, cap, "-(0-%sj)", ys);
            return PR_FACTOR;
        }
        return PR_ATOM;
    }
    if (y > 0) {
        snprintf(dst, cap, "(-%s-%sj)", xs, ys);
        return PR_ATOM;
    }
    if (x == 0)
        snprintf(dst, cap, "-0j");
    else
        snprintf(dst, cap, "-(%s+0j)", xs);
    return PR_FACTOR;
}

/* ------------------------------------------------------------------ */
/* strings and bytes                                                   */

/* Decodes one UTF-8 sequence (lone surrogates allowed, as marshal keeps
 * them); returns its length, with *cp = UINT32_MAX for an invalid byte. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
    unsigned char b = s[0];
    size_t len;
    uint32_t c, min;
    if (b < 0x80) {
        *cp = b;
        return 1;
    } else if (b >= 0xC2 && b <= 0xDF) {
        len = 2, c = b & 0x1F, min = 0x80;
    } else if (b >= 0xE0 && b <= 0xEF) {
        len = 3, c = b & 0x0F, min = 0x800;
    } else if (b >= 0xF0 && b <= 0xF4) {
        len = 4, c = b & 0x07, min = 0x10000;
    } else {
        *cp = UINT32_MAX;
        return 1;
    }
    if (len > n) {
        *cp = UINT32_MAX;
        return 1;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = UINT32_MAX;
            return 1;
        }
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF) {
        *cp = UINT32_MAX;
        return 1;
    }
    *cp = c;
    return len;
}

/* Non-ASCII characters shown as escapes: invisible or confusable ones
 * (spaces, format and bidi controls, private use, surrogates), so that the
 * source stays readable and safe to display. */
static int escape_char(uint32_t c) {
    if (c < 0xA1 || c == 0xAD || c == 0x34F || c == 0x61C || c == 0x115F || c == 0x1160 ||
        c == 0x1680 || c == 0x180E || c == 0x3000 || c == 0x3164 || c == 0xFEFF || c == 0xFFA0)
        return 1;
    if ((c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) || (c >= 0x205F && c <= 0x206F))
        return 1;
    if ((c >= 0xD800 && c <= 0xF8FF) || (c >= 0xFFF0 && c <= 0xFFFC) || (c & 0xFFFE) == 0xFFFE)
        return 1;
    if ((c >= 0x1D173 && c <= 0x1D17A) || c >= 0xE0000)
        return 1;
    return 0;
}

static void put_code_escape(dp_buf *o, uint32_t c) {
    if (c < 0x100)
        dp_buf_printf(o, "\\x%02x", (unsigned)c);
    else if (c < 0x10000)
        dp_buf_printf(o, "\\u%04x", (unsigned)c);
    else
        dp_buf_printf(o, "\\U%08x", (unsigned)c);
}

/* The quote repr() would use, unless it is forbidden inside an f-string
 * replacement field and the other one is not. */
static char pick_quote(const char *s, size_t n, unsigned forbid) {
    int has_s = memchr(s, '\'', n) != NULL, has_d = memchr(s, '"', n) != NULL;
    char q = has_s && !has_d ? '"' : '\'';
    unsigned bit = q == '\'' ? Q_SINGLE : Q_DOUBLE;
    if (forbid & bit) {
        char other = q == '\'' ? '"' : '\'';
        if (!(forbid & (other == '\'' ? Q_SINGLE : Q_DOUBLE)))
            q = other;
    }
    return q;
}

/* The inside of a str literal quoted with q; f-string literal parts double
 * their braces. */
static void put_str_body(dp_buf *o, const char *text, size_t n, char q, int fstring) {
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < n) {
        unsigned char b = s[i];
        if (b < 0x80) {
            i++;
            if (b == '\\' || b == (unsigned char)q)
                dp_buf_putc(o, '\\'), dp_buf_putc(o, (char)b);
            else if (b == '\n')
                dp_buf_puts(o, "\\n");
            else if (b == '\r')
                dp_buf_puts(o, "\\r");
            else if (b == '\t')
                dp_buf_puts(o, "\\t");
            else if (b < 0x20 || b == 0x7F)
                put_code_escape(o, b);
            else if (fstring && (b == '{' || b == '}'))
                dp_buf_putc(o, (char)b), dp_buf_putc(o, (char)b);
            else
                dp_buf_putc(o, (char)b);
            continue;
        }
        uint32_t c;
        size_t len = utf8_next(s + i, n - i, &c);
        if (c == UINT32_MAX) /* not UTF-8 (never from marshal): keep the byte visible */
            dp_buf_printf(o, "\\x%02x", b);
        else if (escape_char(c))
            put_code_escape(o, c);
        else
            dp_buf_putn(o, text + i, len);
        i += len;
    }
}

static void put_quoted(dp_buf *o, const char *text, size_t n, unsigned forbid, int fstring) {
    char q = pick_quote(text, n, forbid);
    if (fstring)
        dp_buf_putc(o, 'f');
    dp_buf_putc(o, q);
    put_str_body(o, text, n, q, fstring);
    dp_buf_putc(o, q);
}

static void put_str(dp_buf *o, const char *text, size_t n, unsigned forbid) { put_quoted(o, text, n, forbid, 0); }

static void put_bytes(dp_buf *o, const char *text, size_t n, unsigned forbid) {
    char q = pick_quote(text, n, forbid);
    dp_buf_putc(o, 'b');
    dp_buf_putc(o, q);
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)text[i];
        if (b == '\\' || b == (unsigned char)q)
            dp_buf_putc(o, '\\'), dp_buf_putc(o, (char)b);
        else if (b == '\n')
            dp_buf_puts(o, "\\n");
        else if (b == '\r')
            dp_buf_puts(o, "\\r");
        else if (b == '\t')
            dp_buf_puts(o, "\\t");
        else if (b < 0x20 || b >= 0x7F)
            dp_buf_printf(o, "\\x%02x", b);
        else
            dp_buf_putc(o, (char)b);
    }
    dp_buf_putc(o, q);
}

/* ------------------------------------------------------------------ */
/* constants                                                           */

static int const_prec(const dp_const *c) {
    switch (c->kind) {
    case DP_CONST_INT:
        return c->text != NULL && c->text[0] == '-' ? PR_FACTOR : PR_ATOM;
    case DP_CONST_FLOAT:
        return float_prec(c->f);
    case DP_CONST_COMPLEX: {
        char txt[NUM_TEXT];
        return complex_text(txt, sizeof txt, c->f, c->im);
    }
    default:
        return PR_ATOM;
    }
}

/* `as_set`: print a frozenset as a set display; where a set display is the
 * right operand of `in` or a loop's iterable, the compiler turns it into
 * this frozenset constant.  Returns -1 only past MAX_DEPTH. */
static int name_of_nonliteral(dp_printer *p, dp_buf *o, const dp_const *c);

static int put_const(dp_printer *p, dp_buf *o, const dp_const *c, unsigned forbid, int depth, int as_set) {
    if (depth > MAX_DEPTH)
        return -1;
    switch (c->kind) {
    case DP_CONST_NONE: dp_buf_puts(o, "None"); return 0;
    case DP_CONST_TRUE: dp_buf_puts(o, "True"); return 0;
    case DP_CONST_FALSE: dp_buf_puts(o, "False"); return 0;
    case DP_CONST_ELLIPSIS: dp_buf_puts(o, "..."); return 0;
    case DP_CONST_INT: dp_buf_puts(o, c->text ? c->text : "0"); return 0;
    case DP_CONST_FLOAT:
    case DP_CONST_COMPLEX: {
        char txt[NUM_TEXT];
        if (c->kind == DP_CONST_FLOAT)
            float_text(txt, sizeof txt, c->f, 0);
        else
            complex_text(txt, sizeof txt, c->f, c->im);
        dp_buf_puts(o, txt);
        return 0;
    }
    case DP_CONST_STR: put_str(o, c->text ? c->text : "", c->text ? c->len : 0, forbid); return 0;
    case DP_CONST_BYTES: put_bytes(o, c->text ? c->text : "", c->text ? c->len : 0, forbid); return 0;
    case DP_CONST_TUPLE:
    case DP_CONST_FROZENSET: {
        int tuple = c->kind == DP_CONST_TUPLE;
        if (!tuple && c->n == 0) {
            dp_buf_puts(o, "frozenset()");
            return 0;
        }
        dp_buf_puts(o, tuple ? "(" : as_set ? "{" : "frozenset({");
        for (size_t i = 0; i < c->n; i++) {
            if (i)
                dp_buf_puts(o, ", ");
            /* (a tuple of marshal references to one tuple, n levels deep,
             * is 2**n items long: stop once the text cannot grow) */
            if (!dp_buf_ok(o) || put_const(p, o, c->items[i], forbid, depth + 1, 0) < 0)
                return -1;
        }
        dp_buf_puts(o, tuple ? (c->n == 1 ? ",)" : ")") : as_set ? "}" : "})");
        return 0;
    }
    case DP_CONST_CODE:
        /* a code object outside MAKE_FUNCTION has no literal */
        if (p != NULL)
            return name_of_nonliteral(p, o, c);
        if (c->code != NULL)
            dp_buf_printf(o, "<code object %s, file \"%s\", line %d>",
                          c->code->qualname && *c->code->qualname ? c->code->qualname
                                                                  : c->code->name ? c->code->name : "?",
                          c->code->filename ? c->code->filename : "?", c->code->firstlineno);
        else
            dp_buf_puts(o, "<code object>");
        return 0;
    case DP_CONST_OBJECT:
        if (p != NULL)
            return name_of_nonliteral(p, o, c);
        if (c->text != NULL) /* (listings show the repr) */
            dp_buf_putn(o, c->text, c->len);
        return 0;
    case DP_CONST_OTHER:
        if (c->text != NULL)
            dp_buf_putn(o, c->text, c->len);
        return 0;
    }
    dp_buf_puts(o, "<unknown constant>");
    return 0;
}

/* The name a constant with no literal form prints as (see dp_printer). */
static size_t slot_of(const dp_printer *p, const dp_const *c) {
    size_t h = (size_t)(((uintptr_t)c >> 4) * (uintptr_t)0x9E3779B97F4A7C15u), mask = p->nslots - 1;
    for (h &= mask; p->slots[h] != 0 && dp_printer_named(p, p->slots[h] - 1) != c; h = (h + 1) & mask)
        ;
    return h;
}

/* Makes room for one more name in the index (kept at most half full, so a
 * lookup is constant time: a program may load many such constants). */
static int grow_slots(dp_printer *p, size_t n) {
    if (2 * (n + 1) <= p->nslots)
        return 0;
    size_t cap = p->nslots ? 2 * p->nslots : 64;
    size_t *old = p->slots, oldcap = p->nslots;
    if ((p->slots = calloc(cap, sizeof *p->slots)) == NULL) {
        p->slots = old;
        return -1;
    }
    p->nslots = cap;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i] != 0)
            p->slots[slot_of(p, dp_printer_named(p, old[i] - 1))] = old[i];
    free(old);
    return 0;
}

static int name_of_nonliteral(dp_printer *p, dp_buf *o, const dp_const *c) {
    size_t n = dp_printer_nnamed(p);
    if (grow_slots(p, n) < 0)
        return dp_fail(p->err, -1, "out of memory"); /* (the error set first is the one reported) */
    size_t h = slot_of(p, c), k = p->slots[h] ? p->slots[h] - 1 : n;
    if (k == n) {
        dp_buf_putn(&p->named, (const char *)&c, sizeof c);
        if (!dp_buf_ok(&p->named))
            return dp_fail(p->err, -1, "out of memory");
        p->slots[h] = n + 1;
    }
    dp_buf_printf(o, DP_NONLITERAL_PREFIX "%zu", k);
    return 0;
}

/* A comment's text of the repr of a constant with no literal form: one
 * line, at most about 160 bytes (cut between UTF-8 characters). */
static void put_repr_comment(dp_buf *o, const dp_const *c) {
    dp_buf t;
    dp_buf_init(&t);
    t.limit = 4096; /* (160 bytes are kept) */
    put_const(NULL, &t, c, 0, 0, 0);
    size_t len = dp_buf_ok(&t) || dp_buf_over(&t) ? t.len : 0, cut = len;
    if (cut > 160) {
        cut = 160;
        while (cut > 0 && ((unsigned char)t.data[cut] & 0xC0) == 0x80)
            cut--;
    }
    for (size_t i = 0; i < cut; i++) {
        char ch = t.data[i];
        dp_buf_putc(o, (unsigned char)ch < 0x20 || ch == 0x7F ? ' ' : ch);
    }
    if (cut < len)
        dp_buf_puts(o, "...");
    dp_buf_free(&t);
}

/* Ends a line of code with `tail` and a newline, after a comment naming the
 * constants first used on it. */
static void end_line(pr *r, const char *tail) {
    put(r, tail);
    size_t n = dp_printer_nnamed(r->p);
    for (size_t k = r->p->commented; k < n; k++) {
        dp_buf_printf(r->out, "%s" DP_NONLITERAL_PREFIX "%zu: ", k == r->p->commented ? "  # " : "; ", k);
        put_repr_comment(r->out, dp_printer_named(r->p, k));
    }
    r->p->commented = n;
    putch(r, '\n');
}

void dp_print_const(dp_buf *out, const dp_const *c) {
    if (put_const(NULL, out, c, 0, 0, 0) < 0)
        dp_buf_puts(out, "<constant nested too deeply>");
}

/* ------------------------------------------------------------------ */
/* expression precedence                                               */

static const char *binop_text(int op) {
    static const char *const t[DP_BIN_COUNT] = {
        [DP_BIN_ADD] = "+", [DP_BIN_AND] = "&", [DP_BIN_FLOORDIV] = "//", [DP_BIN_LSHIFT] = "<<",
        [DP_BIN_MATMUL] = "@", [DP_BIN_MUL] = "*", [DP_BIN_MOD] = "%", [DP_BIN_OR] = "|",
        [DP_BIN_POW] = "**", [DP_BIN_RSHIFT] = ">>", [DP_BIN_SUB] = "-", [DP_BIN_TRUEDIV] = "/",
        [DP_BIN_XOR] = "^",
    };
    return op >= 0 && op < DP_BIN_COUNT ? t[op] : NULL;
}

static int binop_prec(int op) {
    switch (op) {
    case DP_BIN_OR: return PR_BOR;
    case DP_BIN_XOR: return PR_BXOR;
    case DP_BIN_AND: return PR_BAND;
    case DP_BIN_LSHIFT: case DP_BIN_RSHIFT: return PR_SHIFT;
    case DP_BIN_ADD: case DP_BIN_SUB: return PR_ARITH;
    case DP_BIN_POW: return PR_POWER;
    default: return PR_TERM;
    }
}

static const char *cmpop_text(int op) {
    static const char *const t[] = {"<", "<=", "==", "!=", ">", ">=", "in", "not in", "is", "is not"};
    return op >= 0 && op < (int)(sizeof t / sizeof t[0]) ? t[op] : NULL;
}

static int is_tuple_node(const dp_node *e) {
    return e->kind == E_TUPLE || (e->kind == E_CONST && e->cst != NULL && e->cst->kind == DP_CONST_TUPLE);
}

static int prec_of(const dp_node *e) {
    switch (e->kind) {
    case E_YIELD: case E_YIELD_FROM: return PR_YIELD;
    case E_TUPLE: return e->l1.n >= 2 ? PR_TUPLE : PR_ATOM;
    case E_LAMBDA: return PR_LAMBDA;
    case E_IFEXP: return PR_IFEXP;
    case E_BOOLOP: return e->op ? PR_OR : PR_AND;
    case E_UNARY: return e->op == DP_UN_NOT ? PR_NOT : PR_FACTOR;
    case E_COMPARE: return PR_CMP;
    case E_BINOP: return binop_prec(e->op);
    case E_AWAIT: return PR_AWAIT;
    case E_CONST: return e->cst ? const_prec(e->cst) : PR_ATOM;
    default: return PR_ATOM;
    }
}

/* Whether e prints with a leading sign (`- -a` reads badly: `-(-a)`). */
static int starts_with_sign(const dp_node *e) {
    return (e->kind == E_UNARY && (e->op == DP_UN_NEG || e->op == DP_UN_POS)) ||
           (e->kind == E_CONST && e->cst && const_prec(e->cst) == PR_FACTOR);
}

/* ------------------------------------------------------------------ */
/* expressions                                                         */

static int list(pr *r, const dp_nodes *l, int level) {
    for (int i = 0; i < l->n; i++) {
        if (i)
            put(r, ", ");
        if (expr(r, l->v[i], level) < 0)
            return -1;
    }
    return 0;
}

static int need(pr *r, const dp_node *e, const char *what) {
    if (e == NULL)
        return dp_fail(r->p->err, -1, "missing %s in AST", what);
    return 0;
}

/* A constant in a position where a set display becomes this frozenset (or
 * any other expression). */
static int expr_set_ok(pr *r, const dp_node *e, int level) {
    if (e != NULL && e->kind == E_CONST && e->cst && e->cst->kind == DP_CONST_FROZENSET && e->cst->n > 0) {
        if (put_const(r->p, r->out, e->cst, r->fs_forbid, r->depth, 1) < 0)
            return const_failed(r);
        return 0;
    }
    return expr(r, e, level);
}

static int args(pr *r, const dp_node *a, int lambda);

static int no_params(const dp_node *a) {
    return a->l1.n == 0 && a->l2.n == 0 && a->a == NULL && a->b == NULL && !a->op2;
}

static int keyword(pr *r, const dp_node *k) {
    if (k == NULL || k->kind != E_KEYWORD)
        return dp_fail(r->p->err, -1, "call keyword is not E_KEYWORD");
    if (need(r, k->a, "keyword value") < 0)
        return -1;
    if (k->s == NULL) {
        put(r, "**");
        return expr(r, k->a, PR_AWAIT);
    }
    put(r, k->s);
    putch(r, '=');
    return expr(r, k->a, PR_LAMBDA);
}

/* Call arguments: positional (E_STARRED for *x) then keywords. */
static int call_args(pr *r, const dp_nodes *pos, const dp_nodes *kw) {
    if (pos->n == 1 && kw->n == 0 && pos->v[0] != NULL && pos->v[0]->kind == E_GENEXP) {
        /* the sole argument: f(x for x in y) */
        const dp_node *g = pos->v[0];
        if (expr(r, g->a, PR_IFEXP) < 0)
            return -1;
        for (int i = 0; i < g->l1.n; i++)
            if (expr(r, g->l1.v[i], PR_ATOM) < 0)
                return -1;
        return 0;
    }
    if (list(r, pos, PR_LAMBDA) < 0)
        return -1;
    for (int i = 0; i < kw->n; i++) {
        if (i || pos->n)
            put(r, ", ");
        if (keyword(r, kw->v[i]) < 0)
            return -1;
    }
    return 0;
}

static int slice_bound(pr *r, const dp_node *b, int keep_none) {
    if (b == NULL)
        return 0;
    /* a[:2] loads None for the missing bound, like a[None:2] */
    if (!keep_none && b->kind == E_CONST && b->cst && b->cst->kind == DP_CONST_NONE)
        return 0;
    return expr(r, b, PR_IFEXP);
}

static int slice(pr *r, const dp_node *s) {
    if (slice_bound(r, s->a, 0) < 0)
        return -1;
    putch(r, ':');
    if (slice_bound(r, s->b, 0) < 0)
        return -1;
    if (s->c != NULL) {
        putch(r, ':');
        if (slice_bound(r, s->c, 1) < 0)
            return -1;
    }
    return 0;
}

static int index_item(pr *r, const dp_node *e) {
    if (e != NULL && e->kind == E_SLICE) {
        if (enter(r) < 0)
            return -1;
        int rc = slice(r, e);
        r->depth--;
        return rc;
    }
    return expr(r, e, PR_IFEXP);
}

/* The index of a subscript: d[a, b] and a[1:2, ::3] without parens; a tuple
 * with *x keeps them (d[*a, b] needs 3.11). */
static int subscript_index(pr *r, const dp_node *i) {
    if (i->kind == E_SLICE)
        return index_item(r, i);
    if (i->kind == E_TUPLE && i->l1.n > 0) {
        int has_slice = 0, has_star = 0;
        for (int k = 0; k < i->l1.n; k++) {
            if (need(r, i->l1.v[k], "tuple item") < 0)
                return -1;
            has_slice |= i->l1.v[k]->kind == E_SLICE;
            has_star |= i->l1.v[k]->kind == E_STARRED;
        }
        if (has_slice || (i->l1.n >= 2 && !has_star)) {
            for (int k = 0; k < i->l1.n; k++) {
                if (k)
                    put(r, ", ");
                if (index_item(r, i->l1.v[k]) < 0)
                    return -1;
            }
            if (i->l1.n == 1)
                putch(r, ',');
            return 0;
        }
    }
    if (i->kind == E_CONST && i->cst && i->cst->kind == DP_CONST_TUPLE && i->cst->n >= 2) {
        for (size_t k = 0; k < i->cst->n; k++) {
            if (k)
                put(r, ", ");
            if (put_const(r->p, r->out, i->cst->items[k], r->fs_forbid, r->depth, 0) < 0)
                return const_failed(r);
        }
        return 0;
    }
    return expr(r, i, PR_LAMBDA);
}

static int comprehension(pr *r, const dp_node *c) {
    if (c->kind != E_COMPREHENSION)
        return dp_fail(r->p->err, -1, "comprehension clause is not E_COMPREHENSION");
    if (need(r, c->a, "comprehension target") < 0 || need(r, c->b, "comprehension iterable") < 0)
        return -1;
    put(r, c->op ? " async for " : " for ");
    if (expr(r, c->a, PR_TUPLE) < 0)
        return -1;
    put(r, " in ");
    if (expr_set_ok(r, c->b, PR_OR) < 0)
        return -1;
    for (int i = 0; i < c->l1.n; i++) {
        put(r, " if ");
        if (expr(r, c->l1.v[i], PR_OR) < 0)
            return -1;
    }
    return 0;
}

static int fstring(pr *r, const dp_node *e);

/* Would CPython 3.11+'s AST optimizer turn `text % (v1, ..., vn)` into an
 * f-string?  It does when every spec is `%[flags][width][.precision]` then
 * s, r or a (width and precision of at most two digits), as many as the
 * values. */
static int percent_format_folds(const char *s, size_t n, int values) {
    int specs = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] != '%') {
            i++;
            continue;
        }
        if (i + 1 < n && s[i + 1] == '%') {
            i += 2;
            continue;
        }
        if (specs++ >= values)
            return 0;
        for (i++; i < n && (s[i] == '-' || s[i] == '+' || s[i] == ' ' || s[i] == '#' || s[i] == '0'); i++)
            ;
        for (int digits = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            if (++digits > 2)
                return 0;
        if (i < n && s[i] == '.')
            for (int digits = 0; ++i < n && s[i] >= '0' && s[i] <= '9';)
                if (++digits > 2)
                    return 0;
        if (i >= n || (s[i] != 's' && s[i] != 'r' && s[i] != 'a'))
            return 0;
        i++;
    }
    return specs == values;
}

/* Is e `'...' % (v, ...)` that 3.11+ would compile into an f-string, while
 * the bytecode computed the %-format (the source's left operand was an
 * f-string without fields, which the optimizer leaves alone)? */
static int keeps_percent_format(const pr *r, const dp_node *e) {
    const dp_node *left = e->a, *right = e->b;
    if (r->p->py_minor < 11 || e->op != DP_BIN_MOD || left == NULL || left->kind != E_CONST || left->cst == NULL ||
        left->cst->kind != DP_CONST_STR || left->cst->text == NULL || right == NULL || right->kind != E_TUPLE)
        return 0;
    for (int i = 0; i < right->l1.n; i++)
        if (right->l1.v[i] == NULL || right->l1.v[i]->kind == E_STARRED)
            return 0;
    return percent_format_folds(left->cst->text, left->cst->len, right->l1.n);
}

/* A chain a + b - c ... of one precedence level, printed without recursing
 * down its left spine (generated code can hold very long sums). */
static int binop_chain(pr *r, const dp_node *e) {
    int prec = binop_prec(e->op);
    size_t n = 0;
    const dp_node *leftmost = e;
    while (leftmost->kind == E_BINOP && leftmost->op != DP_BIN_POW && binop_prec(leftmost->op) == prec) {
        n++;
        leftmost = leftmost->a;
        if (need(r, leftmost, "left operand") < 0)
            return -1;
    }
    const dp_node **spine = malloc(n * sizeof *spine);
    if (spine == NULL)
        return dp_fail(r->p->err, -1, "out of memory while printing source");
    const dp_node *cur = e;
    for (size_t i = n; i-- > 0; cur = cur->a)
        spine[i] = cur;
    int rc = 0;
    if (n > 0 && keeps_percent_format(r, spine[0]))
        put_quoted(r->out, leftmost->cst->text, leftmost->cst->len, r->fs_forbid, 1); /* (`f'..%s..'`) */
    else
        rc = expr(r, leftmost, prec);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *op = binop_text(spine[i]->op);
        if (op == NULL || spine[i]->b == NULL) {
            rc = dp_fail(r->p->err, -1, "bad binary operator %d", spine[i]->op);
            break;
        }
        putch(r, ' ');
        put(r, op);
        putch(r, ' ');
        rc = expr(r, spine[i]->b, prec + 1);
    }
    free(spine);
    return rc;
}

/* The body of e, without the parentheses its position may add. */
/* The printer's groups of node kinds: SW_NOT_MINE for another group's,
 * SW_BREAK for a statement whose line is complete (stmt ends it). */
enum { SW_NOT_MINE = 0x10000, SW_BREAK };

/* Names, constants, attributes, subscripts, calls and operators (expr_inner): SW_NOT_MINE for the others. */
static int expr_atom(pr *r, const dp_node *e) {
    dp_error *err = r->p->err;
    switch (e->kind) {
    case E_NAME:
        if (e->s == NULL)
            return dp_fail(err, -1, "E_NAME without a name");
        put_name(r, e->s);
        return 0;
    case E_CONST:
        if (e->cst == NULL)
            return dp_fail(err, -1, "E_CONST without a constant");
        if (put_const(r->p, r->out, e->cst, r->fs_forbid, r->depth, 0) < 0)
            return const_failed(r);
        return 0;
    case E_ATTR:
        if (need(r, e->a, "attribute base") < 0 || e->s == NULL)
            return dp_fail(err, -1, "bad E_ATTR");
        /* 1.real would read as the float `1.` followed by a name */
        if (e->a->kind == E_CONST && e->a->cst && e->a->cst->kind == DP_CONST_INT) {
            putch(r, '(');
            if (expr(r, e->a, PR_TUPLE) < 0)
                return -1;
            putch(r, ')');
        } else if (expr(r, e->a, PR_ATOM) < 0) {
            return -1;
        }
        putch(r, '.');
        put_name(r, e->s);
        return 0;
    case E_SUBSCR:
        if (need(r, e->a, "subscript base") < 0 || need(r, e->b, "subscript index") < 0)
            return -1;
        if (expr(r, e->a, PR_ATOM) < 0)
            return -1;
        putch(r, '[');
        if (subscript_index(r, e->b) < 0)
            return -1;
        putch(r, ']');
        return 0;
    case E_SLICE:
        /* a slice object outside a subscript has no slice syntax */
        put(r, "slice(");
        for (int i = 0; i < 3; i++) {
            const dp_node *b = i == 0 ? e->a : i == 1 ? e->b : e->c;
            if (i)
                put(r, ", ");
            if (b == NULL)
                put(r, "None");
            else if (expr(r, b, PR_LAMBDA) < 0)
                return -1;
        }
        putch(r, ')');
        return 0;
    case E_CALL:
        if (need(r, e->a, "callee") < 0 || expr(r, e->a, PR_ATOM) < 0)
            return -1;
        putch(r, '(');
        if (call_args(r, &e->l1, &e->l2) < 0)
            return -1;
        putch(r, ')');
        return 0;
    case E_BINOP:
        if (binop_text(e->op) == NULL)
            return dp_fail(err, -1, "bad binary operator %d", e->op);
        if (need(r, e->a, "left operand") < 0 || need(r, e->b, "right operand") < 0)
            return -1;
        if (e->op != DP_BIN_POW)
            return binop_chain(r, e);
        /* ** is right-associative and binds a unary operator on its right */
        if (expr(r, e->a, PR_AWAIT) < 0)
            return -1;
        put(r, " ** ");
        return expr(r, e->b, PR_FACTOR);
    case E_UNARY:
        if (need(r, e->a, "operand") < 0)
            return -1;
        switch (e->op) {
        case DP_UN_NOT:
            put(r, "not ");
            return expr(r, e->a, PR_NOT);
        case DP_UN_POS: case DP_UN_NEG: case DP_UN_INVERT:
            putch(r, e->op == DP_UN_POS ? '+' : e->op == DP_UN_NEG ? '-' : '~');
            return expr(r, e->a, e->op != DP_UN_INVERT && starts_with_sign(e->a) ? PR_ATOM : PR_FACTOR);
        default:
            return dp_fail(err, -1, "bad unary operator %d", e->op);
        }
    case E_BOOLOP:
        if (e->l1.n < 2)
            return dp_fail(err, -1, "boolean operation with %d operands", e->l1.n);
        for (int i = 0; i < e->l1.n; i++) {
            if (i)
                put(r, e->op ? " or " : " and ");
            if (expr(r, e->l1.v[i], (e->op ? PR_OR : PR_AND) + 1) < 0)
                return -1;
        }
        return 0;
    case E_COMPARE:
        if (need(r, e->a, "comparison operand") < 0 || e->l1.n < 1 || e->ops == NULL)
            return dp_fail(err, -1, "bad comparison");
        if (expr(r, e->a, PR_CMP + 1) < 0)
            return -1;
        for (int i = 0; i < e->l1.n; i++) {
            const char *op = cmpop_text(e->ops[i]);
            if (op == NULL)
                return dp_fail(err, -1, "bad comparison operator %d", e->ops[i]);
            putch(r, ' ');
            put(r, op);
            putch(r, ' ');
            int in = e->ops[i] == DP_CMP_IN || e->ops[i] == DP_CMP_NOT_IN;
            if ((in ? expr_set_ok(r, e->l1.v[i], PR_CMP + 1) : expr(r, e->l1.v[i], PR_CMP + 1)) < 0)
                return -1;
        }
        return 0;
    default:
        return SW_NOT_MINE;
    }
}

/* Conditional expressions, assignment expressions, lambdas and displays (expr_inner): SW_NOT_MINE for the others. */
static int expr_display(pr *r, const dp_node *e) {
    dp_error *err = r->p->err;
    switch (e->kind) {
    case E_IFEXP:
        if (need(r, e->a, "condition") < 0 || need(r, e->b, "value") < 0 || need(r, e->c, "else value") < 0)
            return -1;
        if (expr(r, e->b, PR_OR) < 0)
            return -1;
        put(r, " if ");
        if (expr(r, e->a, PR_OR) < 0)
            return -1;
        put(r, " else ");
        return expr(r, e->c, PR_IFEXP);
    case E_NAMED:
        /* always parenthesized: required almost everywhere, and clearer */
        if (e->s == NULL || need(r, e->a, "named value") < 0)
            return dp_fail(err, -1, "bad E_NAMED");
        putch(r, '(');
        put_name(r, e->s);
        put(r, " := ");
        if (expr(r, e->a, PR_LAMBDA) < 0)
            return -1;
        putch(r, ')');
        return 0;
    case E_LAMBDA:
        if (need(r, e->b, "lambda body") < 0)
            return -1;
        put(r, "lambda");
        if (e->a != NULL && !no_params(e->a)) {
            putch(r, ' ');
            if (args(r, e->a, 1) < 0)
                return -1;
        }
        put(r, ": ");
        return expr(r, e->b, PR_LAMBDA);
    case E_TUPLE:
        if (e->l1.n == 0) {
            put(r, "()");
            return 0;
        }
        if (e->l1.n == 1) {
            putch(r, '(');
            if (expr(r, e->l1.v[0], PR_IFEXP) < 0)
                return -1;
            put(r, ",)");
            return 0;
        }
        return list(r, &e->l1, PR_IFEXP);
    case E_LIST:
        putch(r, '[');
        if (list(r, &e->l1, PR_LAMBDA) < 0)
            return -1;
        putch(r, ']');
        return 0;
    case E_SET:
        if (e->l1.n == 0) { /* no literal for an empty set */
            put(r, "set()");
            return 0;
        }
        putch(r, '{');
        if (list(r, &e->l1, PR_LAMBDA) < 0)
            return -1;
        putch(r, '}');
        return 0;
    case E_DICT:
        if (e->l1.n != e->l2.n)
            return dp_fail(err, -1, "dict with %d keys and %d values", e->l1.n, e->l2.n);
        putch(r, '{');
        for (int i = 0; i < e->l1.n; i++) {
            if (i)
                put(r, ", ");
            if (e->l1.v[i] == NULL) {
                put(r, "**");
                if (expr(r, e->l2.v[i], PR_AWAIT) < 0)
                    return -1;
                continue;
            }
            if (expr(r, e->l1.v[i], PR_IFEXP) < 0)
                return -1;
            put(r, ": ");
            if (expr(r, e->l2.v[i], PR_LAMBDA) < 0)
                return -1;
        }
        putch(r, '}');
        return 0;
    default:
        return SW_NOT_MINE;
    }
}

/* Starred values, f-strings, comprehensions, yield, await, raw text (expr_inner): SW_NOT_MINE for the others. */
static int expr_comp(pr *r, const dp_node *e) {
    dp_error *err = r->p->err;
    switch (e->kind) {
    case E_STARRED:
        if (need(r, e->a, "starred value") < 0)
            return -1;
        /* *(a + b): the grammar allows *a + b, nobody reads it right */
        putch(r, '*');
        return expr(r, e->a, PR_AWAIT);
    case E_JOINEDSTR:
    case E_FORMATTED:
        return fstring(r, e);
    case E_LISTCOMP: case E_SETCOMP: case E_GENEXP: case E_DICTCOMP: {
        const char *brackets = e->kind == E_LISTCOMP ? "[]" : e->kind == E_GENEXP ? "()" : "{}";
        if (need(r, e->a, "comprehension element") < 0 || e->l1.n < 1)
            return dp_fail(err, -1, "comprehension without a for clause");
        putch(r, brackets[0]);
        if (expr(r, e->a, PR_IFEXP) < 0)
            return -1;
        if (e->kind == E_DICTCOMP) {
            put(r, ": ");
            if (need(r, e->b, "comprehension value") < 0 || expr(r, e->b, PR_IFEXP) < 0)
                return -1;
        }
        for (int i = 0; i < e->l1.n; i++)
            if (expr(r, e->l1.v[i], PR_ATOM) < 0)
                return -1;
        putch(r, brackets[1]);
        return 0;
    }
    case E_COMPREHENSION:
        return comprehension(r, e);
    case E_YIELD:
        if (e->a == NULL) {
            put(r, "yield");
            return 0;
        }
        put(r, "yield ");
        return expr(r, e->a, PR_TUPLE);
    case E_YIELD_FROM:
        if (need(r, e->a, "yield from operand") < 0)
            return -1;
        put(r, "yield from ");
        return expr(r, e->a, PR_LAMBDA);
    case E_AWAIT:
        if (need(r, e->a, "await operand") < 0)
            return -1;
        put(r, "await ");
        return expr(r, e->a, PR_ATOM);
    case E_RAW:
        put(r, e->s ? e->s : "");
        return 0;
    default:
        return SW_NOT_MINE;
    }
}

static int expr_inner(pr *r, const dp_node *e) {
    dp_error *err = r->p->err;
    int res = expr_atom(r, e);
    if (res == SW_NOT_MINE)
        res = expr_display(r, e);
    if (res == SW_NOT_MINE)
        res = expr_comp(r, e);
    if (res == SW_NOT_MINE)
        return dp_fail(err, -1, "node kind %d is not an expression", e->kind);
    return res;
}

static int expr(pr *r, const dp_node *e, int level) {
    if (need(r, e, "expression") < 0 || enter(r) < 0)
        return -1;
    int paren = prec_of(e) < level;
    if (paren)
        putch(r, '(');
    int rc = expr_inner(r, e);
    if (paren && rc == 0)
        putch(r, ')');
    r->depth--;
    return rc;
}

/* ------------------------------------------------------------------ */
/* f-strings                                                           */

/* Before 3.12 a replacement field may not hold a backslash, a '#', a line
 * break or the enclosing quote. */
static int field_ok(const char *s, size_t n, const char *quote) {
    size_t ql = strlen(quote);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' || s[i] == '#' || s[i] == '\n' || s[i] == '\r')
            return 0;
        if (ql == 1 ? s[i] == quote[0] : (i + 3 <= n && memcmp(s + i, quote, 3) == 0))
            return 0;
    }
    return 1;
}

static int fstring_parts(pr *r, const dp_nodes *parts, const char *quote);

/* {value!conv:spec} */
static int formatted(pr *r, const dp_node *f, const char *quote) {
    if (need(r, f->a, "formatted value") < 0)
        return -1;
    putch(r, '{');
    size_t start = r->out->len;
    unsigned forbid = r->fs_forbid;
    if (!r->fs_lenient)
        r->fs_forbid |= quote[0] == '\'' ? Q_SINGLE : Q_DOUBLE;
    r->fs_nest++;
    int rc = expr(r, f->a, PR_IFEXP);
    r->fs_nest--;
    r->fs_forbid = forbid;
    if (rc < 0)
        return -1;
    dp_buf *o = r->out;
    if (o->len > start && o->data[start] == '{') {
        /* `{{` would be a literal brace: f'{ {1: 2} }' */
        dp_buf_putc(o, ' ');
        if (!dp_buf_ok(o))
            return oom(r);
        memmove(o->data + start + 1, o->data + start, o->len - start - 1);
        o->data[start] = ' ';
        putch(r, ' ');
    } else if (o->len > start && o->data[o->len - 1] == '}') {
        putch(r, ' ');
    }
    if (!r->fs_lenient && o->data && !field_ok(o->data + start, o->len - start, quote))
        r->fs_bad = 1;
    switch (f->op) {
    case 0: break;
    case 's': put(r, "!s"); break;
    case 'r': put(r, "!r"); break;
    case 'a': put(r, "!a"); break;
    default: return dp_fail(r->p->err, -1, "bad f-string conversion %d", f->op);
    }
    if (f->b != NULL) {
        if (f->b->kind != E_JOINEDSTR)
            return dp_fail(r->p->err, -1, "f-string format spec is not E_JOINEDSTR");
        putch(r, ':');
        if (enter(r) < 0)
            return -1;
        rc = fstring_parts(r, &f->b->l1, quote);
        r->depth--;
        if (rc < 0)
            return -1;
    }
    putch(r, '}');
    return 0;
}

static int fstring_parts(pr *r, const dp_nodes *parts, const char *quote) {
    for (int i = 0; i < parts->n; i++) {
        const dp_node *part = parts->v[i];
        if (need(r, part, "f-string part") < 0)
            return -1;
        if (part->kind == E_CONST) {
            if (part->cst == NULL || part->cst->kind != DP_CONST_STR)
                return dp_fail(r->p->err, -1, "f-string literal part is not a str constant");
            put_str_body(r->out, part->cst->text ? part->cst->text : "", part->cst->text ? part->cst->len : 0,
                         quote[0], 1);
        } else if (part->kind == E_FORMATTED) {
            if (formatted(r, part, quote) < 0)
                return -1;
        } else {
            return dp_fail(r->p->err, -1, "f-string part of kind %d", part->kind);
        }
    }
    return 0;
}

static int fstring_with(pr *r, const dp_node *e, const char *quote) {
    put(r, "f");
    put(r, quote);
    int rc = e->kind == E_FORMATTED ? formatted(r, e, quote) : fstring_parts(r, &e->l1, quote);
    put(r, quote);
    return rc;
}

/* `format(str(x), spec)` for one replacement field. */
static int format_call(pr *r, const dp_node *f) {
    if (need(r, f->a, "formatted value") < 0)
        return -1;
    put(r, "format(");
    const char *conv = f->op == 's' ? "str(" : f->op == 'r' ? "repr(" : f->op == 'a' ? "ascii(" : NULL;
    if (conv)
        put(r, conv);
    if (expr(r, f->a, PR_IFEXP) < 0)
        return -1;
    if (conv)
        putch(r, ')');
    if (f->b != NULL) {
        put(r, ", ");
        if (expr(r, f->b, PR_IFEXP) < 0)
            return -1;
    }
    putch(r, ')');
    return 0;
}

/* An f-string with no valid pre-3.12 spelling, as a sum of its literal
 * parts and format() calls: the same string, computed the same way. */
static int fstring_as_format(pr *r, const dp_node *e) {
    const dp_nodes *parts = &e->l1;
    if (e->kind == E_FORMATTED)
        return format_call(r, e);
    putch(r, '(');
    if (parts->n == 0)
        put(r, "''");
    for (int i = 0; i < parts->n; i++) {
        const dp_node *part = parts->v[i];
        if (i)
            put(r, " + ");
        if (need(r, part, "f-string part") < 0)
            return -1;
        int rc = part->kind == E_FORMATTED ? format_call(r, part) : expr(r, part, PR_IFEXP);
        if (rc < 0)
            return -1;
    }
    putch(r, ')');
    return 0;
}

/* The %-spec 3.11's optimizer makes field f's spec from (`%-5.2`, before
 * the conversion), written to buf: `[>]W[.P]` with W and P of one or two
 * digits, '>' unless the `-` flag justified left.  0 when f has another
 * spec. */
static int percent_spec(const dp_node *f, char *buf, size_t cap) {
    const dp_node *spec = f->b;
    if (spec != NULL && spec->kind == E_JOINEDSTR && spec->l1.n == 1)
        spec = spec->l1.v[0];
    if (spec == NULL) {
        snprintf(buf, cap, "%%");
        return 1;
    }
    if (spec->kind != E_CONST || spec->cst == NULL || spec->cst->kind != DP_CONST_STR || spec->cst->text == NULL)
        return 0;
    const char *t = spec->cst->text;
    size_t n = spec->cst->len, i = 0, w = 0, p = 0;
    int right = n > 0 && t[0] == '>';
    i += (size_t)right;
    while (i + w < n && w < 3 && t[i + w] >= '0' && t[i + w] <= '9')
        w++;
    size_t dot = i + w;
    if (dot < n && t[dot] == '.')
        while (dot + 1 + p < n && p < 3 && t[dot + 1 + p] >= '0' && t[dot + 1 + p] <= '9')
            p++;
    size_t used = dot + (dot < n && t[dot] == '.' ? 1 + p : 0);
    /* (no digit strings CPython would not write: a leading zero, '>' with
     * no width, a dot with no precision) */
    if (used != n || n == 0 || w > 2 || p > 2 || (w > 0 && t[i] == '0') || (right && w == 0) ||
        (dot < n && (p == 0 || (p > 1 && t[dot + 1] == '0'))))
        return 0;
    snprintf(buf, cap, "%%%s%.*s%.*s", w > 0 && !right ? "-" : "", (int)w, t + i, (int)(n - dot), t + dot);
    return 1;
}

/* Are the fields of f-string e all `{x!s}`, `{x!r}` or `{x!a}`, with no
 * spec but one the %-format spells?  3.11 compiles `'..%s..' % (x,)` into
 * such an f-string. */
static int percent_format_fits(const dp_node *e) {
    if (e->kind != E_JOINEDSTR)
        return 0;
    int fields = 0;
    char spec[16];
    for (int i = 0; i < e->l1.n; i++) {
        const dp_node *part = e->l1.v[i];
        if (part == NULL)
            return 0;
        if (part->kind == E_FORMATTED) {
            if ((part->op != 's' && part->op != 'r' && part->op != 'a') || !percent_spec(part, spec, sizeof spec))
                return 0;
            fields++;
        } else if (part->kind != E_CONST || part->cst == NULL || part->cst->kind != DP_CONST_STR) {
            return 0;
        }
    }
    return fields > 0;
}

/* The f-string as the %-format 3.11 compiled it from: the same bytecode
 * there, the same computation (str(), repr(), ascii() of each value)
 * before. */
static int fstring_as_percent(pr *r, const dp_node *e) {
    dp_buf fmt;
    dp_buf_init(&fmt);
    if (r->out->limit)
        fmt.limit = r->out->limit;
    for (int i = 0; i < e->l1.n; i++) {
        const dp_node *part = e->l1.v[i];
        if (part->kind == E_FORMATTED) {
            char spec[16];
            percent_spec(part, spec, sizeof spec - 1);
            size_t len = strlen(spec);
            spec[len] = (char)part->op;
            dp_buf_putn(&fmt, spec, len + 1);
            continue;
        }
        const char *t = part->cst->text ? part->cst->text : "";
        for (size_t k = 0; k < part->cst->len; k++)
            dp_buf_putn(&fmt, t[k] == '%' ? "%%" : t + k, t[k] == '%' ? 2 : 1);
    }
    if (!dp_buf_ok(&fmt)) {
        if (dp_buf_over(&fmt))
            r->out->oom = r->out->over = 1;
        dp_buf_free(&fmt);
        return oom(r);
    }
    putch(r, '(');
    put_str(r->out, fmt.len ? fmt.data : "", fmt.len, 0);
    dp_buf_free(&fmt);
    put(r, " % (");
    int fields = 0;
    for (int i = 0; i < e->l1.n; i++) {
        const dp_node *part = e->l1.v[i];
        if (part->kind != E_FORMATTED)
            continue;
        if (fields++)
            put(r, ", ");
        if (need(r, part->a, "formatted value") < 0 || expr(r, part->a, PR_IFEXP) < 0)
            return -1;
    }
    put(r, fields == 1 ? ",))" : "))");
    return 0;
}

/* An f-string (a lone E_FORMATTED is a one-field f-string).  Before 3.12 the
 * replacement fields may not reuse the outer quote nor hold backslashes, so
 * the outermost f-string tries each quote until every field fits. */
static int fstring(pr *r, const dp_node *e) {
    if (r->fs_nest > 0 && !r->fs_lenient) {
        /* nested: the quote must differ from every enclosing one */
        const char *q = !(r->fs_forbid & Q_SINGLE) ? "'" : !(r->fs_forbid & Q_DOUBLE) ? "\"" : NULL;
        if (q == NULL) {
            r->fs_bad = 1;
            q = "'";
        }
        return fstring_with(r, e, q);
    }
    if (r->fs_nest > 0 || r->fs_lenient)
        return fstring_with(r, e, "'");

    /* like repr(): double quotes first when the text has ' and no " */
    int has_s = 0, has_d = 0;
    for (int i = 0; e->kind == E_JOINEDSTR && i < e->l1.n; i++) {
        const dp_node *part = e->l1.v[i];
        if (part != NULL && part->kind == E_CONST && part->cst != NULL && part->cst->text != NULL) {
            has_s |= memchr(part->cst->text, '\'', part->cst->len) != NULL;
            has_d |= memchr(part->cst->text, '"', part->cst->len) != NULL;
        }
    }
    static const char *const single_first[] = {"'", "\"", "'''", "\"\"\""};
    static const char *const double_first[] = {"\"", "'", "\"\"\"", "'''"};
    const char *const *quotes = has_s && !has_d ? double_first : single_first;
    dp_buf *saved = r->out;
    for (size_t i = 0; i < 4; i++) {
        dp_buf scratch;
        dp_buf_init(&scratch);
        if (saved->limit) /* (what cannot fit where it goes is not printed here either) */
            scratch.limit = saved->limit - saved->len;
        r->out = &scratch;
        r->fs_bad = 0;
        int rc = fstring_with(r, e, quotes[i]);
        r->out = saved;
        if (rc < 0 || !dp_buf_ok(&scratch)) {
            if (dp_buf_over(&scratch))
                saved->oom = saved->over = 1;
            dp_buf_free(&scratch);
            return rc < 0 ? rc : oom(r);
        }
        if (!r->fs_bad) {
            dp_buf_putn(saved, scratch.data, scratch.len);
            dp_buf_free(&scratch);
            return 0;
        }
        dp_buf_free(&scratch);
    }
    /* No spelling is valid before 3.12 (say, a backslash inside a field).
     * For 3.12+ print the fields as they are (PEP 701 takes any
     * expression); for older targets (3.11 compiles `'%s\n' % (x,)` into
     * f-string bytecode) spell it as that %-format, or else the same
     * computation with format(). */
    if (r->p->py_minor >= 12) {
        r->fs_lenient = 1;
        int rc = fstring_with(r, e, quotes[0]);
        r->fs_lenient = 0;
        return rc;
    }
    return percent_format_fits(e) ? fstring_as_percent(r, e) : fstring_as_format(r, e);
}

/* ------------------------------------------------------------------ */
/* function and lambda parameters                                      */

static int arg(pr *r, const dp_node *a, int lambda, const char *star) {
    if (a == NULL || a->kind != E_ARG || a->s == NULL)
        return dp_fail(r->p->err, -1, "parameter is not an E_ARG with a name");
    put(r, star);
    put_name(r, a->s);
    int annotated = !lambda && a->a != NULL;
    if (annotated) {
        put(r, ": ");
        if (expr(r, a->a, PR_LAMBDA) < 0)
            return -1;
    }
    if (a->b != NULL) {
        put(r, annotated ? " = " : "=");
        if (expr(r, a->b, PR_LAMBDA) < 0)
            return -1;
    }
    return 0;
}

static int args(pr *r, const dp_node *a, int lambda) {
    if (a->kind != E_ARGUMENTS)
        return dp_fail(r->p->err, -1, "parameters are not E_ARGUMENTS");
    if (a->op < 0 || a->op > a->l1.n)
        return dp_fail(r->p->err, -1, "%d positional-only parameters of %d", a->op, a->l1.n);
    int n = 0;
#define SEP() do { if (n++) put(r, ", "); } while (0)
    for (int i = 0; i < a->l1.n; i++) {
        SEP();
        if (arg(r, a->l1.v[i], lambda, "") < 0)
            return -1;
        if (i + 1 == a->op) {
            SEP();
            putch(r, '/');
        }
    }
    if (a->a != NULL) {
        SEP();
        if (arg(r, a->a, lambda, "*") < 0)
            return -1;
    } else if (a->l2.n > 0 || a->op2) {
        SEP();
        putch(r, '*');
    }
    for (int i = 0; i < a->l2.n; i++) {
        SEP();
        if (arg(r, a->l2.v[i], lambda, "") < 0)
            return -1;
    }
    if (a->b != NULL) {
        SEP();
        if (arg(r, a->b, lambda, "**") < 0)
            return -1;
    }
#undef SEP
    return 0;
}

/* ------------------------------------------------------------------ */
/* match patterns                                                      */

enum { PAT_ANY, PAT_OR, PAT_CLOSED }; /* pattern precedence, loosest first */

static int pattern(pr *r, const dp_node *p, int level);

static int pattern_prec(const dp_node *p) {
    if (p->kind == P_AS && p->a != NULL)
        return PAT_ANY;
    if (p->kind == P_OR)
        return PAT_OR;
    return PAT_CLOSED;
}

static int patterns(pr *r, const dp_nodes *l) {
    for (int i = 0; i < l->n; i++) {
        if (i)
            put(r, ", ");
        if (pattern(r, l->v[i], PAT_ANY) < 0)
            return -1;
    }
    return 0;
}

static int pattern_inner(pr *r, const dp_node *p) {
    dp_error *err = r->p->err;
    switch (p->kind) {
    case P_VALUE:
        return expr(r, p->a, PR_LAMBDA);
    case P_SINGLETON:
        if (p->cst == NULL)
            return dp_fail(err, -1, "P_SINGLETON without a constant");
        dp_print_const(r->out, p->cst);
        return 0;
    case P_SEQUENCE:
        putch(r, '[');
        if (patterns(r, &p->l1) < 0)
            return -1;
        putch(r, ']');
        return 0;
    case P_MAPPING:
        if (p->l1.n != p->l2.n)
            return dp_fail(err, -1, "mapping pattern with %d keys and %d patterns", p->l1.n, p->l2.n);
        putch(r, '{');
        for (int i = 0; i < p->l1.n; i++) {
            if (i)
                put(r, ", ");
            if (expr(r, p->l1.v[i], PR_IFEXP) < 0)
                return -1;
            put(r, ": ");
            if (pattern(r, p->l2.v[i], PAT_ANY) < 0)
                return -1;
        }
        if (p->s != NULL) {
            if (p->l1.n)
                put(r, ", ");
            put(r, "**");
            put_name(r, p->s);
        }
        putch(r, '}');
        return 0;
    case P_CLASS:
        if (expr(r, p->a, PR_ATOM) < 0)
            return -1;
        putch(r, '(');
        if (patterns(r, &p->l1) < 0)
            return -1;
        for (int i = 0; i < p->l2.n; i++) {
            const dp_node *k = p->l2.v[i];
            if (k == NULL || k->kind != E_KEYWORD || k->s == NULL)
                return dp_fail(err, -1, "class pattern keyword is not E_KEYWORD");
            if (i || p->l1.n)
                put(r, ", ");
            put(r, k->s);
            putch(r, '=');
            if (pattern(r, k->a, PAT_ANY) < 0)
                return -1;
        }
        putch(r, ')');
        return 0;
    case P_STAR:
        putch(r, '*');
        put_name(r, p->s ? p->s : "_");
        return 0;
    case P_AS:
        if (p->a == NULL) {
            put_name(r, p->s ? p->s : "_");
            return 0;
        }
        if (p->s == NULL)
            return dp_fail(err, -1, "`as` pattern without a name");
        if (pattern(r, p->a, PAT_OR) < 0)
            return -1;
        put(r, " as ");
        put_name(r, p->s);
        return 0;
    case P_OR:
        if (p->l1.n < 2)
            return dp_fail(err, -1, "or-pattern with %d alternatives", p->l1.n);
        for (int i = 0; i < p->l1.n; i++) {
            if (i)
                put(r, " | ");
            if (pattern(r, p->l1.v[i], PAT_CLOSED) < 0)
                return -1;
        }
        return 0;
    default:
        return dp_fail(err, -1, "node kind %d is not a pattern", p->kind);
    }
}

static int pattern(pr *r, const dp_node *p, int level) {
    if (need(r, p, "pattern") < 0 || enter(r) < 0)
        return -1;
    int paren = pattern_prec(p) < level;
    if (paren)
        putch(r, '(');
    int rc = pattern_inner(r, p);
    if (paren && rc == 0)
        putch(r, ')');
    r->depth--;
    return rc;
}

/* ------------------------------------------------------------------ */
/* statements                                                          */

static void begin(pr *r, const dp_node *st, int level) {
    put_indent(r, level);
    if (r->p->on_stmt != NULL) {
        sync_line(r);
        r->p->on_stmt(r->p->ctx, st, r->p->line);
    }
}

static int is_def(const dp_node *st) { return st->kind == S_FUNCTIONDEF || st->kind == S_CLASSDEF; }

/* `keyword <expr>:` followed by the indented body. */
static int header_body(pr *r, const char *kw, const dp_node *e, int e_level, const dp_nodes *body, int level) {
    put(r, kw);
    if (e != NULL) {
        putch(r, ' ');
        if (expr(r, e, e_level) < 0)
            return -1;
    }
    end_line(r, ":");
    return block(r, body, level + 1);
}

static int else_body(pr *r, const char *kw, const dp_nodes *body, int level) {
    put_indent(r, level);
    put(r, kw);
    end_line(r, ":");
    return block(r, body, level + 1);
}

static int decorators(pr *r, const dp_nodes *l, int level) {
    for (int i = 0; i < l->n; i++) {
        putch(r, '@');
        if (expr(r, l->v[i], PR_IFEXP) < 0)
            return -1;
        putch(r, '\n');
        put_indent(r, level);
    }
    return 0;
}

/* The only statement of a block, looking through S_BLOCK wrappers. */
static const dp_node *sole_stmt(const dp_nodes *l) {
    while (l->n == 1 && l->v[0] != NULL && l->v[0]->kind == S_BLOCK)
        l = &l->v[0]->l1;
    return l->n == 1 ? l->v[0] : NULL;
}

static int stmt_if(pr *r, const dp_node *st, int level) {
    const char *kw = "if";
    for (;;) {
        if (need(r, st->a, "if condition") < 0 || header_body(r, kw, st->a, PR_IFEXP, &st->l1, level) < 0)
            return -1;
        const dp_node *sole = sole_stmt(&st->l2);
        if (sole != NULL && sole->kind == S_IF) {
            /* else: holding only an if prints as elif (a loop: chains can be long) */
            st = sole;
            begin(r, st, level);
            kw = "elif";
            continue;
        }
        if (st->l2.n > 0)
            return else_body(r, "else", &st->l2, level);
        return 0;
    }
}

static int stmt_try(pr *r, const dp_node *st, int level) {
    if (st->l2.n == 0 && st->l4.n == 0)
        return dp_fail(r->p->err, st->offset, "try without except or finally");
    put(r, "try:\n");
    if (block(r, &st->l1, level + 1) < 0)
        return -1;
    for (int i = 0; i < st->l2.n; i++) {
        const dp_node *h = st->l2.v[i];
        if (need(r, h, "except handler") < 0)
            return -1;
        if (h->kind != S_EXCEPT)
            return dp_fail(r->p->err, h->offset, "try handler is not S_EXCEPT");
        begin(r, h, level);
        put(r, st->op ? "except*" : "except");
        if (h->a != NULL) {
            putch(r, ' ');
            if (expr(r, h->a, PR_IFEXP) < 0)
                return -1;
            if (h->s != NULL) {
                put(r, " as ");
                put_name(r, h->s);
            }
        } else if (h->s != NULL || st->op) {
            return dp_fail(r->p->err, h->offset, "bare except with a name or star");
        }
        end_line(r, ":");
        if (block(r, &h->l1, level + 1) < 0)
            return -1;
    }
    if (st->l3.n > 0 && else_body(r, "else", &st->l3, level) < 0)
        return -1;
    if (st->l4.n > 0 && else_body(r, "finally", &st->l4, level) < 0)
        return -1;
    return 0;
}

static int stmt_with(pr *r, const dp_node *st, int level) {
    put(r, st->op ? "async with " : "with ");
    if (st->l1.n == 0)
        return dp_fail(r->p->err, st->offset, "with statement without items");
    for (int i = 0; i < st->l1.n; i++) {
        const dp_node *it = st->l1.v[i];
        if (need(r, it, "with item") < 0)
            return -1;
        if (it->kind != E_WITHITEM || it->a == NULL)
            return dp_fail(r->p->err, st->offset, "with item is not E_WITHITEM");
        if (i)
            put(r, ", ");
        /* 3.9+ would read `with (a, b):` as two context managers */
        int alone = st->l1.n == 1 && it->b == NULL && is_tuple_node(it->a);
        if (alone)
            putch(r, '(');
        if (expr(r, it->a, alone ? PR_LAMBDA : PR_IFEXP) < 0)
            return -1;
        if (alone)
            putch(r, ')');
        if (it->b != NULL) {
            put(r, " as ");
            if (expr(r, it->b, PR_LAMBDA) < 0)
                return -1;
        }
    }
    end_line(r, ":");
    return block(r, &st->l2, level + 1);
}

/* PEP 695 `[T: bound, U: (A, B), *Ts, **P, V = default]`; nothing when empty. */
static int type_params(pr *r, const dp_nodes *l) {
    if (l->n == 0)
        return 0;
    putch(r, '[');
    for (int i = 0; i < l->n; i++) {
        const dp_node *p = l->v[i];
        if (p == NULL || p->kind != E_TYPEPARAM || p->s == NULL || p->op < 0 || p->op > 2)
            return dp_fail(r->p->err, -1, "type parameter is not an E_TYPEPARAM with a name");
        if (i)
            put(r, ", ");
        put(r, p->op == 1 ? "*" : p->op == 2 ? "**" : "");
        put(r, p->s);
        if (p->a != NULL) {
            put(r, ": ");
            /* constraints are always a parenthesized tuple; a bound never is one */
            if (p->op2 && p->a->kind == E_TUPLE) {
                putch(r, '(');
                if (list(r, &p->a->l1, PR_LAMBDA) < 0)
                    return -1;
                putch(r, ')');
            } else if (expr(r, p->a, PR_LAMBDA) < 0) {
                return -1;
            }
        }
        if (p->b != NULL) {
            put(r, " = ");
            if (expr(r, p->b, PR_LAMBDA) < 0)
                return -1;
        }
    }
    putch(r, ']');
    return 0;
}

/* Prints `st` with `print`, its private names spelled as written inside the
 * class `private`; with NULL, every name as the bytecode spells it: a type
 * alias, and the header of a def or class with type parameters (PEP 695),
 * whose annotation scopes mangle only some names (3.13), or the names after
 * a generic class too (3.12.0-3.12.3, CPython gh-119395). */
static int in_class(pr *r, const char *private, int (*print)(pr *, const dp_node *, int), const dp_node *st,
                    int level) {
    const char *outer = r->p->private_class;
    r->p->private_class = private;
    int rc = print(r, st, level);
    r->p->private_class = outer;
    return rc;
}

static int def_body(pr *r, const dp_node *st, int level) { return block(r, &st->l1, level + 1); }

/* A def or class statement: its header (with type parameters, in no
 * class), then its body, in the class `private`. */
static int def_or_class(pr *r, const dp_node *st, int level, int (*header)(pr *, const dp_node *, int),
                        const char *private) {
    if ((st->l4.n > 0 ? in_class(r, NULL, header, st, level) : header(r, st, level)) < 0)
        return -1;
    return in_class(r, private, def_body, st, level);
}

static int stmt_typealias(pr *r, const dp_node *st, int level) {
    (void)level;
    if (st->s == NULL || need(r, st->a, "type alias value") < 0)
        return dp_fail(r->p->err, st->offset, "type alias without a name");
    put(r, "type ");
    put(r, st->s);
    if (type_params(r, &st->l4) < 0)
        return -1;
    put(r, " = ");
    if (expr(r, st->a, PR_LAMBDA) < 0)
        return -1;
    return SW_BREAK;
}

static int def_header(pr *r, const dp_node *st, int level) {
    if (st->s == NULL || st->c == NULL)
        return dp_fail(r->p->err, st->offset, "function without a name or parameters");
    if (decorators(r, &st->l2, level) < 0)
        return -1;
    put(r, st->op ? "async def " : "def ");
    put(r, st->s);
    if (type_params(r, &st->l4) < 0)
        return -1;
    putch(r, '(');
    if (args(r, st->c, 0) < 0)
        return -1;
    putch(r, ')');
    if (st->b != NULL) {
        put(r, " -> ");
        if (expr(r, st->b, PR_LAMBDA) < 0)
            return -1;
    }
    end_line(r, ":");
    return 0;
}

static int stmt_def(pr *r, const dp_node *st, int level) {
    return def_or_class(r, st, level, def_header, r->p->private_class);
}

static int class_header(pr *r, const dp_node *st, int level) {
    if (st->s == NULL)
        return dp_fail(r->p->err, st->offset, "class without a name");
    if (decorators(r, &st->l2, level) < 0)
        return -1;
    put(r, "class ");
    put(r, st->s);
    if (type_params(r, &st->l4) < 0)
        return -1;
    if (st->l3.n > 0) {
        putch(r, '(');
        for (int i = 0; i < st->l3.n; i++) {
            const dp_node *b = st->l3.v[i];
            if (need(r, b, "class base") < 0)
                return -1;
            if (i)
                put(r, ", ");
            if ((b->kind == E_KEYWORD ? keyword(r, b) : expr(r, b, PR_LAMBDA)) < 0)
                return -1;
        }
        putch(r, ')');
    }
    end_line(r, ":");
    return 0;
}

/* (the body's names are private to the class; its decorators and bases are not) */
static int stmt_class(pr *r, const dp_node *st, int level) {
    return def_or_class(r, st, level, class_header, st->s);
}

static int aliases(pr *r, const dp_nodes *l) {
    if (l->n == 0)
        return dp_fail(r->p->err, -1, "import without names");
    for (int i = 0; i < l->n; i++) {
        const dp_node *a = l->v[i];
        if (a == NULL || a->kind != E_ALIAS || a->s == NULL)
            return dp_fail(r->p->err, -1, "import name is not an E_ALIAS");
        if (i)
            put(r, ", ");
        put_name(r, a->s);
        if (a->b != NULL) {
            if (a->b->s == NULL)
                return dp_fail(r->p->err, -1, "import alias without a name");
            put(r, " as ");
            put_name(r, a->b->s);
        }
    }
    return 0;
}

static int names(pr *r, const char *kw, const dp_nodes *l) {
    put(r, kw);
    for (int i = 0; i < l->n; i++) {
        if (l->v[i] == NULL || l->v[i]->s == NULL)
            return dp_fail(r->p->err, -1, "%s without a name", kw);
        put(r, i ? ", " : " ");
        put_name(r, l->v[i]->s);
    }
    return 0;
}

static int stmt_match(pr *r, const dp_node *st, int level) {
    if (need(r, st->a, "match subject") < 0)
        return -1;
    put(r, "match ");
    if (expr(r, st->a, PR_TUPLE) < 0)
        return -1;
    end_line(r, ":");
    if (st->l1.n == 0)
        return dp_fail(r->p->err, st->offset, "match without cases");
    for (int i = 0; i < st->l1.n; i++) {
        const dp_node *c = st->l1.v[i];
        if (c == NULL || c->kind != S_CASE)
            return dp_fail(r->p->err, st->offset, "match case is not S_CASE");
        begin(r, c, level + 1);
        put(r, "case ");
        if (pattern(r, c->a, PAT_ANY) < 0)
            return -1;
        if (c->b != NULL) {
            put(r, " if ");
            if (expr(r, c->b, PR_IFEXP) < 0)
                return -1;
        }
        end_line(r, ":");
        if (block(r, &c->l1, level + 2) < 0)
            return -1;
    }
    return 0;
}

/* "# " before each line; a lone \r would end the comment for the tokenizer.
 * verbatim: the lines are code (the state machine's helper functions),
 * printed as they are at the statement's indentation. */
static void comment(pr *r, const char *s, int level, int verbatim) {
    const char *line = s ? s : "";
    for (;;) {
        size_t n = strcspn(line, "\r\n");
        if (!verbatim)
            put(r, n ? "# " : "#");
        dp_buf_putn(r->out, line, n);
        putch(r, '\n');
        line += n;
        if (*line == '\0')
            return;
        line += line[0] == '\r' && line[1] == '\n' ? 2 : 1;
        put_indent(r, level);
    }
}

/* A string statement (the compiler keeps one only as a docstring) prints
 * as """text""" when its text needs no escape: then the raw text reads back
 * the same, also through 3.13's docstring dedent (dedented text stays so). */
static int docstring_ok(const dp_const *c) {
    if (c->kind != DP_CONST_STR || c->text == NULL || c->len == 0 || c->text[0] == '"' ||
        c->text[c->len - 1] == '"')
        return 0;
    const unsigned char *s = (const unsigned char *)c->text;
    for (size_t i = 0; i < c->len;) {
        if (s[i] < 0x80) {
            if (s[i] == '\\' || (s[i] < 0x20 && s[i] != '\n' && s[i] != '\t') || s[i] == 0x7F)
                return 0;
            if (s[i] == '"' && i + 2 < c->len && s[i + 1] == '"' && s[i + 2] == '"')
                return 0;
            i++;
            continue;
        }
        uint32_t cp;
        size_t len = utf8_next(s + i, c->len - i, &cp);
        if (cp == UINT32_MAX || escape_char(cp))
            return 0;
        i += len;
    }
    return 1;
}

/* 3.13 strips the common indentation of a docstring's lines after the
 * first (whitespace-only lines aside) at compile time, so its constant is
 * already dedented: indenting every non-empty line after the first with the
 * body (the closing quotes too) gives the same constant back.  Text with no
 * other line that has content is printed as is (there is no common
 * indentation to strip), and so is text with a tab (3.13 would expand it:
 * its own docstrings never have one). */
static void put_docstring(pr *r, const dp_const *c, int level) {
    const char *s = c->text, *end = s + c->len;
    const char *nl = memchr(s, '\n', c->len);
    int indent = 0;
    for (const char *p = nl; r->p->py_minor >= 13 && p && p < end && !indent; p++)
        indent = *p != '\n' && *p != ' ';
    if (memchr(s, '\t', c->len))
        indent = 0;
    put(r, "\"\"\"");
    if (!indent) {
        dp_buf_putn(r->out, s, c->len);
    } else {
        for (const char *p = s; p < end;) {
            const char *e = memchr(p, '\n', (size_t)(end - p));
            e = e ? e + 1 : end;
            if (p > s && *p != '\n')
                put_indent(r, level);
            dp_buf_putn(r->out, p, (size_t)(e - p));
            p = e;
        }
        if (end[-1] == '\n') /* the closing quotes go with the body too */
            put_indent(r, level);
    }
    put(r, "\"\"\"");
}

/* One statement, starting with its indentation and ending with a newline. */
/* Simple statements (stmt): SW_NOT_MINE for the others. */
static int stmt_simple(pr *r, const dp_node *st, int level) {
    dp_error *err = r->p->err;
    switch (st->kind) {
    case S_EXPR:
        if (need(r, st->a, "expression") < 0)
            return -1;
        if (st->a->kind == E_CONST && st->a->cst && docstring_ok(st->a->cst)) {
            put_docstring(r, st->a->cst, level);
        } else if (expr(r, st->a, PR_YIELD) < 0) {
            return -1;
        }
        return SW_BREAK;
    case S_ASSIGN:
        if (st->l1.n == 0 || need(r, st->b, "assigned value") < 0)
            return dp_fail(err, st->offset, "assignment without targets");
        for (int i = 0; i < st->l1.n; i++) {
            if (expr(r, st->l1.v[i], PR_TUPLE) < 0)
                return -1;
            put(r, " = ");
        }
        if (expr(r, st->b, PR_YIELD) < 0)
            return -1;
        return SW_BREAK;
    case S_AUGASSIGN:
        if (binop_text(st->op) == NULL)
            return dp_fail(err, st->offset, "bad augmented operator %d", st->op);
        if (need(r, st->a, "target") < 0 || need(r, st->b, "value") < 0 || expr(r, st->a, PR_ATOM) < 0)
            return -1;
        putch(r, ' ');
        put(r, binop_text(st->op));
        put(r, "= ");
        if (expr(r, st->b, PR_YIELD) < 0)
            return -1;
        return SW_BREAK;
    case S_ANNASSIGN:
        if (need(r, st->a, "target") < 0 || need(r, st->b, "annotation") < 0)
            return -1;
        /* (x): int does not record x in __annotations__ */
        if (st->a->kind == E_NAME && !st->op) {
            putch(r, '(');
            if (expr(r, st->a, PR_ATOM) < 0)
                return -1;
            putch(r, ')');
        } else if (expr(r, st->a, PR_ATOM) < 0) {
            return -1;
        }
        put(r, ": ");
        if (expr(r, st->b, PR_LAMBDA) < 0)
            return -1;
        if (st->c != NULL) {
            put(r, " = ");
            if (expr(r, st->c, PR_LAMBDA) < 0)
                return -1;
        }
        return SW_BREAK;
    case S_DELETE:
        if (st->l1.n == 0)
            return dp_fail(err, st->offset, "del without targets");
        put(r, "del ");
        if (list(r, &st->l1, PR_IFEXP) < 0)
            return -1;
        return SW_BREAK;
    case S_PASS: put(r, "pass"); return SW_BREAK;
    case S_BREAK: put(r, "break"); return SW_BREAK;
    case S_CONTINUE: put(r, "continue"); return SW_BREAK;
    case S_RETURN:
        put(r, "return");
        if (st->a != NULL) {
            putch(r, ' ');
            if (expr(r, st->a, PR_TUPLE) < 0)
                return -1;
        }
        return SW_BREAK;
    case S_RAISE:
        put(r, "raise");
        if (st->a == NULL && st->b != NULL)
            return dp_fail(err, st->offset, "raise with a cause but no exception");
        if (st->a != NULL) {
            putch(r, ' ');
            if (expr(r, st->a, PR_IFEXP) < 0)
                return -1;
        }
        if (st->b != NULL) {
            put(r, " from ");
            if (expr(r, st->b, PR_IFEXP) < 0)
                return -1;
        }
        return SW_BREAK;
    case S_GLOBAL:
    case S_NONLOCAL:
        if (st->l1.n == 0)
            return dp_fail(err, st->offset, "global/nonlocal without names");
        if (names(r, st->kind == S_GLOBAL ? "global" : "nonlocal", &st->l1) < 0)
            return -1;
        return SW_BREAK;
    case S_IMPORT:
        put(r, "import ");
        if (aliases(r, &st->l1) < 0)
            return -1;
        return SW_BREAK;
    case S_IMPORTFROM:
        if (st->op < 0 || (st->op == 0 && st->s == NULL))
            return dp_fail(err, st->offset, "from-import without a module");
        put(r, "from ");
        for (int i = 0; i < st->op; i++)
            putch(r, '.');
        put_name(r, st->s ? st->s : "");
        put(r, " import ");
        if (aliases(r, &st->l1) < 0)
            return -1;
        return SW_BREAK;
    default:
        return SW_NOT_MINE;
    }
}

/* Compound statements, type aliases, asserts and comments (stmt): SW_NOT_MINE for the others. */
static int stmt_compound(pr *r, const dp_node *st, int level) {
    switch (st->kind) {
    case S_IF:
        return stmt_if(r, st, level);
    case S_WHILE:
        if (need(r, st->a, "while condition") < 0 || header_body(r, "while", st->a, PR_IFEXP, &st->l1, level) < 0)
            return -1;
        return st->l2.n > 0 ? else_body(r, "else", &st->l2, level) : 0;
    case S_FOR:
        if (need(r, st->a, "for target") < 0 || need(r, st->b, "for iterable") < 0)
            return -1;
        put(r, st->op ? "async for " : "for ");
        if (expr(r, st->a, PR_TUPLE) < 0)
            return -1;
        put(r, " in ");
        if (expr_set_ok(r, st->b, PR_IFEXP) < 0)
            return -1;
        end_line(r, ":");
        if (block(r, &st->l1, level + 1) < 0)
            return -1;
        return st->l2.n > 0 ? else_body(r, "else", &st->l2, level) : 0;
    case S_TRY:
        return stmt_try(r, st, level);
    case S_WITH:
        return stmt_with(r, st, level);
    case S_FUNCTIONDEF:
        return stmt_def(r, st, level);
    case S_CLASSDEF:
        return stmt_class(r, st, level);
    case S_TYPEALIAS:
        return in_class(r, NULL, stmt_typealias, st, level);
    case S_ASSERT:
        if (need(r, st->a, "assert condition") < 0)
            return -1;
        put(r, "assert ");
        if (expr(r, st->a, PR_IFEXP) < 0)
            return -1;
        if (st->b != NULL) {
            put(r, ", ");
            if (expr(r, st->b, PR_IFEXP) < 0)
                return -1;
        }
        return SW_BREAK;
    case S_MATCH:
        return stmt_match(r, st, level);
    case S_COMMENT:
        comment(r, st->s, level, st->op == 1);
        return 0;
    default:
        return SW_NOT_MINE;
    }
}

static int stmt(pr *r, const dp_node *st, int level) {
    dp_error *err = r->p->err;
    begin(r, st, level);
    int res = stmt_simple(r, st, level);
    if (res == SW_NOT_MINE)
        res = stmt_compound(r, st, level);
    if (res == SW_NOT_MINE)
        return dp_fail(err, st->offset, "node kind %d is not a statement", st->kind);
    if (res != SW_BREAK)
        return res;
    end_line(r, "");
    return 0;
}

/* ------------------------------------------------------------------ */
/* blocks                                                              */

/* Whether a block holds a statement once S_BLOCKs are spliced in
 * (comments alone do not make a valid body). */
static int has_code(pr *r, const dp_nodes *body, int *out) {
    if (enter(r) < 0)
        return -1;
    *out = 0;
    for (int i = 0; i < body->n && !*out; i++) {
        const dp_node *st = body->v[i];
        if (st == NULL) {
            r->depth--;
            return dp_fail(r->p->err, -1, "NULL statement in block");
        }
        if (st->kind == S_BLOCK) {
            if (has_code(r, &st->l1, out) < 0)
                return -1;
        } else if (st->kind != S_COMMENT) {
            *out = 1;
        }
    }
    r->depth--;
    return 0;
}

typedef struct block_state {
    int printed;  /* statements printed so far in this block */
    int prev_def; /* the previous one was a def or class */
} block_state;

/* Prints body's statements, splicing S_BLOCKs; one blank line sets a def
 * or class apart from its neighbours (two at module level, as PEP 8). */
static int splice(pr *r, const dp_nodes *body, int level, block_state *bs) {
    if (enter(r) < 0)
        return -1;
    for (int i = 0; i < body->n; i++) {
        const dp_node *st = body->v[i];
        if (st == NULL)
            return dp_fail(r->p->err, -1, "NULL statement in block");
        if (st->kind == S_BLOCK) {
            if (splice(r, &st->l1, level, bs) < 0)
                return -1;
            continue;
        }
        if (bs->printed && (is_def(st) || bs->prev_def))
            put(r, level == 0 ? "\n\n" : "\n");
        if (stmt(r, st, level) < 0)
            return -1;
        bs->printed++;
        bs->prev_def = is_def(st);
    }
    r->depth--;
    return 0;
}

static int block(pr *r, const dp_nodes *body, int level) {
    int code;
    if (has_code(r, body, &code) < 0)
        return -1;
    block_state bs = {0, 0};
    if (splice(r, body, level, &bs) < 0)
        return -1;
    if (!code && level > 0) {
        put_indent(r, level);
        put(r, "pass\n");
    }
    return oom(r);
}

/* ------------------------------------------------------------------ */
/* public entry points                                                 */

void dp_printer_init(dp_printer *p, dp_buf *out, int indent, dp_error *err) {
    p->out = out;
    p->indent = indent > 0 ? indent : 4;
    p->line = 1;
    p->err = err;
    p->on_stmt = NULL;
    p->ctx = NULL;
    p->py_minor = 0;
    p->private_class = NULL;
    dp_buf_init(&p->named);
    p->commented = 0;
    p->slots = NULL;
    p->nslots = 0;
}

size_t dp_printer_nnamed(const dp_printer *p) {
    return dp_buf_ok(&p->named) ? p->named.len / sizeof(const dp_const *) : 0;
}

const dp_const *dp_printer_named(const dp_printer *p, size_t k) {
    const dp_const *c = NULL;
    if (k < dp_printer_nnamed(p))
        memcpy(&c, p->named.data + k * sizeof c, sizeof c);
    return c;
}

void dp_printer_free(dp_printer *p) {
    dp_buf_free(&p->named);
    free(p->slots);
    p->slots = NULL;
    p->nslots = 0;
}

static void pr_init(pr *r, dp_printer *p) {
    memset(r, 0, sizeof *r);
    r->p = p;
    r->main = r->out = p->out;
    r->scanned = p->out->len;
}

int dp_print_block(dp_printer *p, const dp_nodes *body, int level) {
    pr r;
    pr_init(&r, p);
    int rc = block(&r, body, level);
    sync_line(&r);
    return rc < 0 ? -1 : oom(&r);
}

int dp_print_expr(dp_printer *p, const dp_node *e) {
    pr r;
    pr_init(&r, p);
    int rc = expr(&r, e, PR_YIELD);
    sync_line(&r);
    return rc < 0 ? -1 : oom(&r);
}
