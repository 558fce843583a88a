#include "convert.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ptrmap.h"

typedef struct conv {
    dp_arena *a;
    dp_error *err;
    int repr_is_source; /* see dpx_const_from_py */
    /* objects converted so far -> their dp_const: an object referenced
     * twice (code objects and tuples loaded from marshal data share their
     * references) is converted once, so that a DAG stays one */
    dp_ptrmap done;
    PyObject *keep; /* a list holding every key of `done` alive (an attribute
                       may be made anew on each access: its address must not
                       be reused while it is a key) */
} conv;

static int no_memory(const conv *cv) {
    char why[200];
    dp_arena_why(cv->a, "converting the code object", why, sizeof why);
    PyErr_SetString(PyExc_MemoryError, why);
    return -1;
}

/* Records `value` as what `o` converts to (key (o, tag)). */
static int remember(conv *cv, PyObject *o, uintptr_t tag, void *value) {
    if (cv->keep == NULL && (cv->keep = PyList_New(0)) == NULL)
        return -1;
    if (PyList_Append(cv->keep, o) < 0)
        return -1;
    return dp_ptrmap_put(cv->a, &cv->done, (uintptr_t)o, tag, 0, value) < 0 ? no_memory(cv) : 0;
}

static int conv_code(conv *cv, PyObject *co, int depth, dp_code **out);

static int copy_bytes(conv *cv, const char *s, Py_ssize_t n, const char **text, size_t *len) {
    char *p = dp_strndup(cv->a, s, (size_t)n);
    if (p == NULL)
        return no_memory(cv);
    *text = p;
    if (len != NULL)
        *len = (size_t)n;
    return 0;
}

/* Is str `o` ASCII in its compact form (before 3.12 a str may not be ready:
 * then it takes the general path)? */
static int ascii_str(PyObject *o) {
#if PY_VERSION_HEX < 0x030C0000
    if (!PyUnicode_IS_READY(o))
        return 0;
#endif
    return PyUnicode_IS_ASCII(o);
}

/* A copy of str or bytes `o` made once (shared text stays shared, as the
 * size of an input counts it once: code.h): key (o, 1 + kind of copy). */
static int copy_once(conv *cv, PyObject *o, int utf8, const char **text, size_t *len) {
    size_t *known = dp_ptrmap_get(&cv->done, (uintptr_t)o, 1 + (uintptr_t)utf8, 0);
    if (known != NULL) {
        memcpy(text, known + 1, sizeof *text);
        if (len != NULL)
            *len = known[0];
        return 0;
    }
    size_t n;
    if (utf8 && ascii_str(o)) {
        /* ASCII text is its own UTF-8: copied without an encoded bytes object */
        if (copy_bytes(cv, (const char *)PyUnicode_DATA(o), PyUnicode_GET_LENGTH(o), text, &n) < 0)
            return -1;
    } else {
        PyObject *b = utf8 ? PyUnicode_AsEncodedString(o, "utf-8", "surrogatepass") : (Py_INCREF(o), o);
        if (b == NULL)
            return -1;
        int rc = copy_bytes(cv, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b), text, &n);
        Py_DECREF(b);
        if (rc < 0)
            return -1;
    }
    if (len != NULL)
        *len = n;
    /* (the length, then the pointer) */
    size_t *entry = dp_alloc(cv->a, sizeof(size_t) + sizeof *text);
    if (entry == NULL)
        return no_memory(cv);
    entry[0] = n;
    memcpy(entry + 1, text, sizeof *text);
    return remember(cv, o, 1 + (uintptr_t)utf8, entry);
}

/* UTF-8; "surrogatepass" keeps lone surrogates, which str constants may hold. */
static int copy_str(conv *cv, PyObject *s, const char **text, size_t *len) {
    return copy_once(cv, s, 1, text, len);
}

/* Identifiers and qualnames end up as C strings: a NUL inside would silently
 * shorten them, so it is refused. */
static int copy_name(conv *cv, PyObject *s, const char *what, const char **out) {
    size_t len;
    if (!PyUnicode_Check(s)) {
        PyErr_Format(PyExc_TypeError, "%s must be str, not %.100s", what, Py_TYPE(s)->tp_name);
        return -1;
    }
    if (copy_str(cv, s, out, &len) < 0)
        return -1;
    if (strlen(*out) != len)
        return dp_fail(cv->err, -1, "%s contains a NUL character", what);
    return 0;
}

static int name_attr(conv *cv, PyObject *co, const char *attr, const char **out) {
    PyObject *v = PyObject_GetAttrString(co, attr);
    if (v == NULL)
        return -1;
    int rc = copy_name(cv, v, attr, out);
    Py_DECREF(v);
    return rc;
}

static int bytes_attr(conv *cv, PyObject *co, const char *attr, const uint8_t **data, size_t *len) {
    PyObject *v = PyObject_GetAttrString(co, attr);
    if (v == NULL)
        return -1;
    int rc = -1;
    if (!PyBytes_Check(v))
        PyErr_Format(PyExc_TypeError, "%s must be bytes, not %.100s", attr, Py_TYPE(v)->tp_name);
    else
        rc = copy_once(cv, v, 0, (const char **)data, len);
    Py_DECREF(v);
    return rc;
}

static int strs_attr(conv *cv, PyObject *co, const char *attr, dp_strs *out) {
    PyObject *t = PyObject_GetAttrString(co, attr);
    if (t == NULL)
        return -1;
    int rc = -1;
    if (!PyTuple_Check(t)) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple, not %.100s", attr, Py_TYPE(t)->tp_name);
        goto done;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(t);
    out->v = dp_alloc_array(cv->a, (size_t)n + 1, sizeof *out->v);
    if (out->v == NULL) {
        no_memory(cv);
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (copy_name(cv, PyTuple_GET_ITEM(t, i), attr, &out->v[i]) < 0)
            goto done;
    out->n = (size_t)n;
    rc = 0;
done:
    Py_DECREF(t);
    return rc;
}

/* Decimal when it fits in int64; otherwise hex(), because str() of a huge
 * int raises past sys.get_int_max_str_digits() (3.11+). */
static int int_text(conv *cv, PyObject *o, dp_const *c) {
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (!overflow) {
        char small[32];
        int n = snprintf(small, sizeof small, "%lld", v);
        return copy_bytes(cv, small, n, &c->text, &c->len);
    }
    PyObject *h = PyNumber_ToBase(o, 16);
    if (h == NULL)
        return -1;
    int rc = copy_str(cv, h, &c->text, &c->len);
    Py_DECREF(h);
    return rc;
}

/* repr() runs arbitrary code and may raise; ordinary exceptions fall back to
 * a placeholder, KeyboardInterrupt and friends propagate. */
static int other_text(conv *cv, PyObject *o, dp_const *c) {
    PyObject *r = PyObject_Repr(o);
    if (r == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            return -1;
        PyErr_Clear();
        r = PyUnicode_FromFormat("<%s object>", Py_TYPE(o)->tp_name);
        if (r == NULL)
            return -1;
    }
    int rc = copy_str(cv, r, &c->text, &c->len);
    Py_DECREF(r);
    return rc;
}

static int conv_const(conv *cv, PyObject *o, int depth, dp_const **out);

/* Tuples and frozensets; `items` is a sequence from PySequence_Fast. */
static int conv_items(conv *cv, PyObject *items, int depth, dp_const *c) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    c->items = dp_alloc_array(cv->a, (size_t)n + 1, sizeof *c->items);
    if (c->items == NULL)
        return no_memory(cv);
    for (Py_ssize_t i = 0; i < n; i++)
        if (conv_const(cv, PySequence_Fast_GET_ITEM(items, i), depth + 1, &c->items[i]) < 0)
            return -1;
    c->n = (size_t)n;
    return 0;
}

/* Literal kinds are checked by exact type: a subclass (an IntEnum member, a
 * namedtuple, torch.Size) written as a plain literal would change its type,
 * so it becomes DP_CONST_OBJECT with its repr (DP_CONST_OTHER where the
 * repr is the source to print: cv->repr_is_source). */
static dp_const_kind kind_of(const conv *cv, PyObject *o) {
    if (o == Py_None)
        return DP_CONST_NONE;
    if (o == Py_True)
        return DP_CONST_TRUE;
    if (o == Py_False)
        return DP_CONST_FALSE;
    if (o == Py_Ellipsis)
        return DP_CONST_ELLIPSIS;
    if (PyLong_CheckExact(o))
        return DP_CONST_INT;
    if (PyFloat_CheckExact(o))
        return DP_CONST_FLOAT;
    if (PyComplex_CheckExact(o))
        return DP_CONST_COMPLEX;
    if (PyUnicode_CheckExact(o))
        return DP_CONST_STR;
    if (PyBytes_CheckExact(o))
        return DP_CONST_BYTES;
    if (PyTuple_CheckExact(o))
        return DP_CONST_TUPLE;
    if (PyFrozenSet_CheckExact(o))
        return DP_CONST_FROZENSET;
    if (PyCode_Check(o))
        return DP_CONST_CODE;
    return cv->repr_is_source ? DP_CONST_OTHER : DP_CONST_OBJECT;
}

/* Code objects are constants too, so this one check bounds all nesting. */
static int conv_const(conv *cv, PyObject *o, int depth, dp_const **out) {
    if ((*out = dp_ptrmap_get(&cv->done, (uintptr_t)o, 0, 0)) != NULL)
        return 0;
    if (depth > DP_MAX_NESTING)
        return dp_fail(cv->err, -1, "constants nested deeper than %d levels", DP_MAX_NESTING);
    dp_const_kind kind = kind_of(cv, o);
    dp_const *c = dp_const_new(cv->a, kind);
    if (c == NULL)
        return no_memory(cv);
    if (remember(cv, o, 0, c) < 0)
        return -1;
    c->origin = o;
    *out = c;
    switch (kind) {
    case DP_CONST_NONE:
    case DP_CONST_TRUE:
    case DP_CONST_FALSE:
    case DP_CONST_ELLIPSIS:
        return 0;
    case DP_CONST_INT:
        return int_text(cv, o, c);
    case DP_CONST_FLOAT:
        c->f = PyFloat_AS_DOUBLE(o);
        return 0;
    case DP_CONST_COMPLEX:
        c->f = PyComplex_RealAsDouble(o);
        c->im = PyComplex_ImagAsDouble(o);
        return 0;
    case DP_CONST_STR:
        return copy_str(cv, o, &c->text, &c->len);
    case DP_CONST_BYTES:
        return copy_once(cv, o, 0, &c->text, &c->len);
    case DP_CONST_TUPLE:
    case DP_CONST_FROZENSET: {
        PyObject *items = PySequence_Fast(o, "constant is not iterable");
        if (items == NULL)
            return -1;
        int rc = conv_items(cv, items, depth, c);
        Py_DECREF(items);
        return rc;
    }
    case DP_CONST_CODE:
        return conv_code(cv, o, depth, &c->code);
    case DP_CONST_OTHER:
    case DP_CONST_OBJECT:
        return other_text(cv, o, c);
    }
    return dp_fail(cv->err, -1, "unknown constant kind");
}

static int conv_consts(conv *cv, PyObject *co, int depth, dp_code *c) {
    PyObject *t = PyObject_GetAttrString(co, "co_consts");
    if (t == NULL)
        return -1;
    int rc = -1;
    if (!PyTuple_Check(t)) {
        PyErr_Format(PyExc_TypeError, "co_consts must be a tuple, not %.100s", Py_TYPE(t)->tp_name);
        goto done;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(t);
    c->consts = dp_alloc_array(cv->a, (size_t)n + 1, sizeof *c->consts);
    if (c->consts == NULL) {
        no_memory(cv);
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (conv_const(cv, PyTuple_GET_ITEM(t, i), depth + 1, &c->consts[i]) < 0)
            goto done;
    c->nconsts = (size_t)n;
    rc = 0;
done:
    Py_DECREF(t);
    return rc;
}

static int conv_fields(conv *cv, PyObject *co, int depth, dp_code *c) {
    if (name_attr(cv, co, "co_filename", &c->filename) < 0)
        return -1;
    /* int fields of every PyCodeObject 3.8-3.13, read directly: through
     * getattr each would cost a str, a lookup and an int object */
    const PyCodeObject *pc = (const PyCodeObject *)co;
    c->argcount = pc->co_argcount;
    c->posonlyargcount = pc->co_posonlyargcount;
    c->kwonlyargcount = pc->co_kwonlyargcount;
    c->stacksize = pc->co_stacksize;
    c->flags = pc->co_flags;
    c->firstlineno = pc->co_firstlineno;
    if (strs_attr(cv, co, "co_names", &c->names) < 0 ||
        strs_attr(cv, co, "co_varnames", &c->varnames) < 0 ||
        strs_attr(cv, co, "co_cellvars", &c->cellvars) < 0 ||
        strs_attr(cv, co, "co_freevars", &c->freevars) < 0)
        return -1;
    if (bytes_attr(cv, co, "co_code", &c->code, &c->codelen) < 0)
        return -1;
#if PY_VERSION_HEX >= 0x030B0000
    if (bytes_attr(cv, co, "co_exceptiontable", &c->exctable, &c->exctablelen) < 0)
        return -1;
#endif
#if PY_VERSION_HEX >= 0x030A0000
    /* co_lnotab is deprecated from 3.10 on (and warns from 3.12 on). */
    if (bytes_attr(cv, co, "co_linetable", &c->linetable, &c->linetablelen) < 0)
        return -1;
#else
    if (bytes_attr(cv, co, "co_lnotab", &c->linetable, &c->linetablelen) < 0)
        return -1;
#endif
    return conv_consts(cv, co, depth, c);
}

/* A code object is as deep as the constant holding it (the top one is 0);
 * its constants are one level deeper. */
static int conv_code(conv *cv, PyObject *co, int depth, dp_code **out) {
    dp_code *c = dp_code_new(cv->a);
    if (c == NULL)
        return no_memory(cv);
    c->py_minor = PY_MINOR_VERSION;
    if (name_attr(cv, co, "co_name", &c->name) < 0)
        return -1;
#if PY_VERSION_HEX >= 0x030B0000
    if (name_attr(cv, co, "co_qualname", &c->qualname) < 0)
        return -1;
#else
    c->qualname = c->name;
#endif
    if (conv_fields(cv, co, depth, c) < 0) {
        /* the innermost code object names the error (where is set once) */
        dp_error_where(cv->err, c->qualname);
        return -1;
    }
    *out = c;
    return 0;
}

int dpx_code_from_py(PyObject *code, dp_arena *a, dp_code **out, dp_error *err) {
    conv cv = {a, err, 0, {0}, NULL};
    if (!PyCode_Check(code)) {
        PyErr_Format(PyExc_TypeError, "expected a code object, not %.100s", Py_TYPE(code)->tp_name);
        return -1;
    }
    int rc = conv_code(&cv, code, 0, out);
    Py_XDECREF(cv.keep);
    return rc;
}

int dpx_const_from_py(PyObject *value, int repr_is_source, dp_arena *a, dp_const **out, dp_error *err) {
    conv cv = {a, err, repr_is_source, {0}, NULL};
    int rc = conv_const(&cv, value, 1, out);
    Py_XDECREF(cv.keep);
    return rc;
}
