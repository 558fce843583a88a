/* Translation validation of one decompiled function (issue 11): its `def`
 * is printed alone, wrapped so that it compiles to a code object of the
 * same kind (free variables bound by an enclosing function, a class around
 * it when it uses `__class__`), compiled by the caller's hook and compared
 * with the original bytecode by dp_equivalent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dc.h"
#include "equiv.h"
#include "print.h"

#define WRAPPER "__depyf_validate"

int dc_wants_validation(const dc_shared *sh, const dp_code *code, int module) {
    const dp_options *o = sh->opt;
    /* (the hook compiles with the running Python: only its own version's
     * bytecode can be compared) */
    return o && o->compile && o->compile_minor == code->py_minor &&
           (module || (dc_is_identifier(code->name) && strcmp(code->name, WRAPPER) != 0));
}

/* The function (or, with `function` 0, class body) code object named
 * `name` exactly `depth` levels of constants below `c`. */
static const dp_code *find_at(const dp_code *c, const char *name, int depth, int function) {
    for (size_t k = 0; k < c->nconsts; k++) {
        const dp_const *x = c->consts[k];
        if (x->kind != DP_CONST_CODE)
            continue;
        if (depth == 1 && strcmp(x->code->name, name) == 0 && !(x->code->flags & DP_CO_OPTIMIZED) == !function)
            return x->code;
        const dp_code *r = depth > 1 ? find_at(x->code, name, depth - 1, function) : NULL;
        if (r)
            return r;
    }
    return NULL;
}

static void indent(dp_buf *b, int level) {
    for (int k = 0; k < level; k++)
        dp_buf_puts(b, "    ");
}

/* Source that compiles `def` (the function of `code`) in a context like its
 * own: free variables bound by an enclosing def, and a class that mangles
 * names as `private` does (for the names it spells as written there), or a
 * class `_` (which mangles no name) for its `__class__`.  The class is
 * named `__` and private's name without its leading underscores: the same
 * mangling, and a name the def cannot read (a name the def reads, `datetime`
 * in a method of class datetime, bound by the wrapper would be a free
 * variable).  Returns the nesting level of the def. */
static int wrap(dp_buf *b, const dp_code *code, const char *private) {
    int level = 0, cls = 0, nfree = 0;
    for (size_t k = 0; k < code->freevars.n; k++) {
        if (strcmp(code->freevars.v[k], "__class__") == 0)
            cls = 1;
        else
            nfree++;
    }
    if (nfree) {
        dp_buf_puts(b, "def " WRAPPER "():\n    ");
        for (size_t k = 0; k < code->freevars.n; k++)
            if (strcmp(code->freevars.v[k], "__class__") != 0) {
                dp_buf_puts(b, code->freevars.v[k]);
                dp_buf_puts(b, " = ");
            }
        dp_buf_puts(b, "None\n");
        level = 1;
    }
    if (cls || private) {
        indent(b, level);
        while (private && *private == '_')
            private++;
        dp_buf_puts(b, private ? "class __" : "class _");
        dp_buf_puts(b, private ? private : "");
        dp_buf_puts(b, ":\n");
        level++;
    }
    return level;
}

static int is_name_load(int op) {
    return op == IR_LOAD_FAST || op == IR_LOAD_GLOBAL || op == IR_LOAD_NAME || op == IR_LOAD_DEREF;
}

/* An attribute load on the value of a name: its name, and 1 when it is a
 * method's (a call compiled as `n.attr(...)` with the method form). */
typedef struct {
    const char *name;
    int method;
} attr_base;

static int by_name(const void *a, const void *b) {
    return strcmp(((const attr_base *)a)->name, ((const attr_base *)b)->name);
}

/* 3.11+ (lay.no_method_calls_on_imports) compiles `n.attr(...)` without
 * the method form when the module imports a name n (any n of that
 * spelling, even a local: the compiler looks it up in the module's symbol
 * table): the imports of the original module, not in the function, decide
 * that.  Names whose attributes the
 * code loads, never as methods, are imported in the wrapper module (not
 * run: only compiled), so a call on them compiles as the original's.  It
 * changes nothing else about the code: the comparison is as strict. */
static void import_names(dp_buf *b, const dc *d) {
    if (!d->lay.no_method_calls_on_imports)
        return;
    attr_base *v = dp_alloc_array(d->sh->ar, (size_t)d->n + 1, sizeof *v);
    int n = 0;
    for (int j = 1; v != NULL && j < d->n; j++) {
        const char *name = d->in[j - 1].name;
        if ((d->in[j].op == IR_LOAD_ATTR || d->in[j].op == IR_LOAD_METHOD) && is_name_load(d->in[j - 1].op) &&
            name != NULL && dc_is_identifier(name))
            v[n++] = (attr_base){name, d->in[j].op == IR_LOAD_METHOD};
    }
    if (n == 0)
        return;
    qsort(v, (size_t)n, sizeof *v, by_name);
    for (int k = 0; k < n;) {
        int e = k, method = 0;
        for (; e < n && strcmp(v[e].name, v[k].name) == 0; e++)
            method |= v[e].method;
        if (!method) {
            dp_buf_puts(b, "import ");
            dp_buf_puts(b, v[k].name);
            dp_buf_puts(b, "\n");
        }
        k = e;
    }
}

/* Prints `block` after the text already in `src` (at `level`), compiles
 * it through the caller's hook (the text starting on line `first_line`)
 * and compares the code object found in the
 * result (the module itself when `name` is NULL, else the function, or
 * class body, `name` `depth` constants down) with d->code: 1 equivalent,
 * 0 not, -1 not checked. */
static int compile_and_compare(dc *d, dp_buf *src, long first_line, dp_nodes *block, int level, const char *name,
                               int depth, const char *private, char *why, size_t whylen) {
    const dp_code *code = d->code;
    const dp_options *o = d->sh->opt;
    dp_error err;
    dp_error_init(&err);
    dp_printer p;
    dp_printer_init(&p, src, 4, &err);
    p.py_minor = code->py_minor; /* output language: the syntax the code's Python accepts */
    p.private_class = private;
    int r = -1;
    int printed = dp_print_block(&p, block, level);
    dp_arena ar;
    dp_arena_init(&ar);
    /* (the constants the printer named, for the checker) */
    dp_named_consts named = {NULL, dp_printer_nnamed(&p)};
    const dp_const **v = named.n ? dp_alloc_array(&ar, named.n, sizeof *v) : NULL;
    for (size_t k = 0; v != NULL && k < named.n; k++)
        v[k] = dp_printer_named(&p, k);
    named.v = v;
    dp_printer_free(&p);
    if (dp_buf_over(src)) {
        snprintf(why, whylen, "the validation limit of %zu bytes of source is spent", src->limit);
        goto out;
    }
    if (printed < 0 || !dp_buf_ok(src) || (named.n > 0 && v == NULL)) {
        snprintf(why, whylen, "could not print: %s", printed < 0 ? err.msg : "out of memory");
        goto out;
    }
    if (src->len == 0) /* (an empty module prints nothing: the hook needs a text) */
        dp_buf_puts(src, "\n");
    if (!dp_buf_ok(src) || src->data == NULL) {
        snprintf(why, whylen, "out of memory");
        goto out;
    }
    dp_code *mod = NULL;
    int c = o->compile(o->compile_ctx, src->data, first_line, code->flags, &ar, &mod, why, whylen);
    if (c == 1) {
        r = 0; /* printed source that does not compile is wrong too */
    } else if (c == 0 && mod) {
        const dp_code *cand = name ? find_at(mod, name, depth, !d->is_class_body) : mod;
        /* (a lambda decompiled on its own has the name its def would print with, `_lambda`) */
        int lambda = cand && name && strcmp(name, "<lambda>") == 0 && strcmp(cand->name, code->name) != 0;
        dp_code *renamed = lambda ? dp_alloc(&ar, sizeof *renamed) : NULL;
        if (renamed) {
            *renamed = *cand;
            renamed->name = code->name;
            cand = renamed;
        }
        if (cand == NULL)
            snprintf(why, whylen, "recompiled function not found");
        else
            r = dp_equivalent_named(code, cand, o->stable_globals ? DP_EQ_STABLE_GLOBALS : 0, &named, why, whylen);
    }
out:
    dp_arena_free(&ar);
    return r;
}

int dc_validate(dc *d, dp_node *def, char *why, size_t whylen) {
    dc_shared *sh = d->sh;
    /* (the budget is paid before the text is printed: a function's text
     * holds its nested functions', printed again for each) */
    if (sh->use.validation >= sh->validation_limit) {
        snprintf(why, whylen, "the validation limit of %zu bytes of source is spent", sh->validation_limit);
        return -1;
    }
    /* (printed inside its class, the def spells private names as written there) */
    const char *private = dc_private_class(d);
    if (private && !dc_is_identifier(private)) {
        snprintf(why, whylen, "its class's name %.100s is no identifier", private);
        return -1;
    }
    dp_buf src;
    dp_buf_init(&src);
    src.limit = sh->validation_limit - sh->use.validation;
    import_names(&src, d);
    int level = wrap(&src, d->code, private);
    dp_nodes one = {&def, 1, 1};
    const char *name = def->kind == S_FUNCTIONDEF ? d->code->name : "<lambda>";
    int r = compile_and_compare(d, &src, 1, &one, level, name, level + 1, private, why, whylen);
    sh->use.validation = dp_buf_over(&src) ? sh->validation_limit : sh->use.validation + src.len;
    dp_buf_free(&src);
    return r;
}

/* ---- module bodies ---- */

#define MAX_STUB_DEPTH 2000

static dp_node *copy_node(dc *d, const dp_node *n) {
    dp_node *c = dc_node(d, n->kind);
    if (c != NULL) {
        size_t seq = c->seq;
        *c = *n;
        c->seq = seq;
    }
    return c;
}

/* The body a stub of `def` keeps: what makes the code object's kind. */
static int stub_body(dc *d, const dp_node *def, dp_nodes *out) {
    *out = (dp_nodes){0};
    dp_node *s = dc_node(d, S_PASS);
    int generator = 0;
    for (int k = 0; def->kind == S_FUNCTIONDEF && k < def->l1.n && !generator; k++)
        generator = dc_has_yield(def->l1.v[k], 0);
    if (generator) {
        if ((s = dc_node(d, S_EXPR)) != NULL && (s->a = dc_node(d, E_YIELD)) == NULL)
            return -1;
    }
    return dc_add(d, out, s);
}

/* `n` with the bodies of the functions and classes in it (not in its
 * expressions: a lambda is compared in full) replaced by stubs; n itself
 * when it holds none.  NULL when out of memory or too deep. */
static dp_node *stubbed(dc *d, dp_node *n, int depth) {
    if (!dp_in_body(n) || depth > MAX_STUB_DEPTH)
        return depth > MAX_STUB_DEPTH ? NULL : n;
    if ((n->kind == S_FUNCTIONDEF || n->kind == S_CLASSDEF) && n->l4.n > 0)
        return n; /* (PEP 695: the body's uses of the type parameters make the cells of the
                   * `<generic parameters of ...>` function, compared in full) */
    if (n->kind == S_FUNCTIONDEF || n->kind == S_CLASSDEF) {
        dp_node *c = copy_node(d, n);
        return c == NULL || stub_body(d, n, &c->l1) < 0 ? NULL : c;
    }
    dp_nodes *ls[4] = {&n->l1, &n->l2, &n->l3, &n->l4};
    dp_nodes out[4] = {{0}};
    int changed = 0;
    for (int l = 0; l < 4; l++)
        for (int k = 0; k < ls[l]->n; k++) {
            dp_node *x = stubbed(d, ls[l]->v[k], depth + 1);
            if (x == NULL && ls[l]->v[k] != NULL)
                return NULL;
            changed |= x != ls[l]->v[k];
            if (dp_nodes_push(d->sh->ar, &out[l], x) < 0)
                return NULL;
        }
    if (!changed)
        return n;
    dp_node *c = copy_node(d, n);
    if (c != NULL)
        c->l1 = out[0], c->l2 = out[1], c->l3 = out[2], c->l4 = out[3];
    return c;
}

/* A module body is validated whole, once, with the bodies of its
 * functions and classes as stubs: the checker compares those code objects
 * here by name and signature only (each function was validated on its
 * own), so compiling their bodies again would only cost time.  What a
 * body changes in the module's code (a `global` in a function) is printed
 * in the module itself (module_globals).  The text is bounded by the
 * output limit, not by the functions' budget. */
int dc_validate_module(dc *d, dp_nodes *body, char *why, size_t whylen) {
    dp_nodes stubs = {0};
    for (int k = 0; k < body->n; k++) {
        dp_node *x = stubbed(d, body->v[k], 0);
        if (x == NULL || dc_add(d, &stubs, x) < 0) {
            snprintf(why, whylen, "the module is too deep or too large to check");
            return -1;
        }
    }
    dp_buf src;
    dp_buf_init(&src);
    src.limit = d->sh->output_limit;
    int r = compile_and_compare(d, &src, 1, &stubs, 0, NULL, 0, NULL, why, whylen);
    dp_buf_free(&src);
    return r;
}

/* ---- class bodies ---- */

/* The constant of kind `kind` the class body stores first into `name`
 * (the compiler's `__qualname__`, 3.13's `__firstlineno__` and
 * `__static_attributes__`), or NULL. */
static const dp_const *class_stored(const dc *d, const char *name, dp_const_kind kind) {
    for (int i = 1; i < d->n; i++)
        if (d->in[i].op == IR_STORE_NAME && d->in[i].name && strcmp(d->in[i].name, name) == 0 &&
            d->in[i - 1].op == IR_LOAD_CONST && d->in[i - 1].cst && d->in[i - 1].cst->kind == kind)
            return d->in[i - 1].cst;
    return NULL;
}

/* The `__qualname__` the class body's prologue stores. */
static const char *class_qualname(const dc *d) {
    const dp_const *c = class_stored(d, "__qualname__", DP_CONST_STR);
    return c ? c->text : NULL;
}

/* 3.13 stores the class statement's first line in the class as
 * `__firstlineno__`: the line on which to start the `level` lines that wrap
 * the class statement so that it starts on that line; 1 before 3.13, -1
 * when it cannot start there.  (The hook adds the blank lines before it,
 * outside the budget: bounded by the validation limit, they take no more
 * memory than the source of one validation could.) */
static long wrapper_first_line(const dc *d, int level) {
    if (!d->lay.class_records_lines_attrs)
        return 1;
    const dp_const *c = class_stored(d, "__firstlineno__", DP_CONST_INT);
    char *end;
    long line = c ? strtol(c->text, &end, 10) : -1;
    return c == NULL || *end != '\0' || line <= level || line > (1L << 30) ||
                   (size_t)(line - level) > d->sh->validation_limit
               ? -1
               : line - level;
}

/* 3.13 records in the class the attributes its methods store on `self`
 * (as written: `self.__x` records `__x`): does it record any? */
static int records_attributes(const dc *d) {
    const dp_const *c =
        d->lay.class_records_lines_attrs ? class_stored(d, "__static_attributes__", DP_CONST_TUPLE) : NULL;
    return c != NULL && c->n > 0;
}

/* Source that puts a class statement where its qualified name says
 * (`f.<locals>.A.B`: a def f, a class A, then the class B), the class
 * body's free variables parameters of the innermost def; its level, or -1
 * when the name cannot be rebuilt so. */
static int class_wrap(dp_buf *b, const dc *d, const char *qualname) {
    char part[256];
    int level = 0, ndefs = 0, defs[64];
    const char *parts[64];
    size_t lens[64];
    for (const char *p = qualname; *p;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (dot == NULL)
            break; /* (the class itself) */
        if (len == 0 || len >= sizeof part || level == 64)
            return -1;
        p = dot + 1;
        int def = strncmp(p, "<locals>", 8) == 0 && (p[8] == '.' || p[8] == '\0');
        if (def) {
            p += p[8] ? 9 : 8;
            ndefs = level + 1;
        }
        parts[level] = dot - len;
        lens[level] = len;
        defs[level++] = def;
    }
    if (d->code->freevars.n > 0 && ndefs == 0)
        return -1;
    for (size_t k = 0; k < d->code->freevars.n; k++)
        if (!dc_is_identifier(d->code->freevars.v[k]) || strcmp(d->code->freevars.v[k], "__class__") == 0)
            return -1;
    for (int k = 0; k < level; k++) {
        memcpy(part, parts[k], lens[k]);
        part[lens[k]] = '\0';
        if (!dc_is_identifier(part))
            return -1;
        indent(b, k);
        dp_buf_puts(b, defs[k] ? "def " : "class ");
        dp_buf_puts(b, part);
        dp_buf_puts(b, defs[k] ? "(" : ":\n");
        for (size_t q = 0; defs[k] && k + 1 == ndefs && q < d->code->freevars.n; q++) {
            dp_buf_puts(b, q ? ", " : "");
            dp_buf_puts(b, d->code->freevars.v[q]);
        }
        if (defs[k])
            dp_buf_puts(b, "):\n");
    }
    return level;
}

/* A class body is validated as a class statement placed where its
 * qualified name says, compiled and compared with the body's code (its
 * methods were validated on their own; here they are compared by name and
 * signature, and printed as stubs unless they close over cells of the
 * body, or 3.13 records the attributes they store).  On 3.13 the class
 * statement starts on the line the body records. */
int dc_validate_class(dc *d, dp_nodes *body, char *why, size_t whylen) {
    dc_shared *sh = d->sh;
    const dp_code *code = d->code;
    const char *qualname = class_qualname(d);
    if (qualname == NULL) {
        snprintf(why, whylen, "the class body stores no __qualname__");
        return -1;
    }
    if (sh->use.validation >= sh->validation_limit) {
        snprintf(why, whylen, "the validation limit of %zu bytes of source is spent", sh->validation_limit);
        return -1;
    }
    /* (a cell or free variable of the body is there for its methods' closures) */
    int full = code->cellvars.n > 0 || code->freevars.n > 0 || records_attributes(d);
    dp_nodes block = {0};
    for (int k = 0; k < body->n; k++) {
        dp_node *x = full ? body->v[k] : stubbed(d, body->v[k], 0);
        if (x == NULL || dc_add(d, &block, x) < 0) {
            snprintf(why, whylen, "the class is too deep or too large to check");
            return -1;
        }
    }
    if (block.n == 0 && dc_add(d, &block, dc_node(d, S_PASS)) < 0) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    dp_buf src, wrapper;
    dp_buf_init(&src);
    dp_buf_init(&wrapper);
    src.limit = sh->validation_limit - sh->use.validation;
    int r = -1;
    int level = class_wrap(&wrapper, d, qualname);
    long first_line = level < 0 ? 1 : wrapper_first_line(d, level);
    const char *name = strrchr(qualname, '.') ? strrchr(qualname, '.') + 1 : qualname;
    if (level < 0 || !dc_is_identifier(name)) {
        snprintf(why, whylen, "the class's qualified name %.100s cannot be rebuilt", qualname);
    } else if (first_line < 0) {
        snprintf(why, whylen, "the class statement cannot start on the line its body records");
    } else if (!dp_buf_ok(&wrapper)) {
        snprintf(why, whylen, "out of memory");
    } else {
        if (wrapper.len > 0)
            dp_buf_putn(&src, wrapper.data, wrapper.len);
        indent(&src, level);
        dp_buf_puts(&src, "class ");
        dp_buf_puts(&src, name);
        dp_buf_puts(&src, ":\n");
        r = compile_and_compare(d, &src, first_line, &block, level + 1, name, level + 1, dc_private_class(d), why,
                                whylen);
        sh->use.validation = dp_buf_over(&src) ? sh->validation_limit : sh->use.validation + src.len;
    }
    dp_buf_free(&wrapper);
    dp_buf_free(&src);
    return r;
}
