/* depyf._core: the C core behind a small Python API.  Each call converts its
 * input into a model in one arena, runs the core without the GIL (the core
 * touches no Python object), turns the result or error into Python objects,
 * and frees everything it allocated on every path. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "depyf.h"
#include "equiv.h"
#include "ir.h"

typedef struct modstate {
    PyObject *DecompilationError;
    dp_validation_stats stats; /* process-wide (per interpreter) validation counts */
} modstate;

typedef enum job { JOB_DECOMPILE, JOB_DISASM, JOB_IR_DUMP, JOB_IR_DUMP_EFFECTS } job;

/* What the caller asked for. */
typedef struct request {
    job what;
    int indent, linemap;
    PyObject *defaults;   /* decompile of a live function: exact tuple, or NULL */
    PyObject *kwdefaults; /* exact dict of str -> value, or NULL */
    int force_fallback;   /* tests: every function as fallback.c's state machine */
    int validate;         /* check structured functions against their bytecode */
    int stable_globals;   /* ... taking global reads as stable (Dynamo's code) */
    PyObject *def_name;   /* str, or NULL */
    int named;            /* also return the objects of the constants the output names */
    Py_ssize_t memory_limit; /* bytes, 0: DP_ARENA_DEFAULT_LIMIT (tests reach the limit with it) */
} request;

/* Everything one call owns; released by call_free on every path. */
typedef struct call {
    dp_arena arena;
    dp_buf out;
    dp_error err;
    dp_linemap linemap;
    dp_named_out named;         /* (dp_options.named) */
    PyThreadState *ts;          /* saved while the core runs without the GIL */
    dp_validation_stats stats;  /* this call's validation counts */
} call;

static void call_init(call *c) {
    dp_arena_init(&c->arena);
    dp_buf_init(&c->out);
    dp_error_init(&c->err);
    memset(&c->linemap, 0, sizeof c->linemap);
    memset(&c->named, 0, sizeof c->named);
    memset(&c->stats, 0, sizeof c->stats);
    c->ts = NULL;
}

static void call_free(call *c) {
    dp_arena_free(&c->arena);
    dp_buf_free(&c->out);
    free(c->linemap.entries);
    free(c->named.v);
}

static PyObject *decode(const char *s, size_t n) {
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "replace");
}

/* Raises DecompilationError(qualname, offset, reason) from a core error. */
static PyObject *raise_core_error(PyObject *module, const dp_error *err, const char *fallback_where) {
    PyObject *type = ((modstate *)PyModule_GetState(module))->DecompilationError;
    const char *where = err->where[0] ? err->where : fallback_where;
    const char *reason = err->msg[0] ? err->msg : "unknown error";
    PyObject *qualname = decode(where, strlen(where));
    PyObject *why = decode(reason, strlen(reason));
    PyObject *offset = Py_None;
    if (err->offset >= 0)
        offset = PyLong_FromLong(err->offset);
    else
        Py_INCREF(offset);
    PyObject *msg = NULL, *exc = NULL;
    if (qualname == NULL || why == NULL || offset == NULL)
        goto done;
    msg = err->offset >= 0 ? PyUnicode_FromFormat("cannot decompile %U at offset %d: %U", qualname, err->offset, why)
                           : PyUnicode_FromFormat("cannot decompile %U: %U", qualname, why);
    if (msg == NULL)
        goto done;
    exc = PyObject_CallFunctionObjArgs(type, msg, NULL);
    if (exc == NULL || PyObject_SetAttrString(exc, "qualname", qualname) < 0 ||
        PyObject_SetAttrString(exc, "offset", offset) < 0 || PyObject_SetAttrString(exc, "reason", why) < 0)
        goto done;
    PyErr_SetObject(type, exc);
done:
    Py_XDECREF(qualname);
    Py_XDECREF(why);
    Py_XDECREF(offset);
    Py_XDECREF(msg);
    Py_XDECREF(exc);
    return NULL;
}

/* The core reports running out of memory (or over its memory budget) with
 * messages that start this way; they become MemoryError. */
static int out_of_memory(const call *c) {
    static const char prefix[] = "out of memory";
    return c->arena.failed || (!dp_buf_ok(&c->out) && !dp_buf_over(&c->out)) ||
           strncmp(c->err.msg, prefix, sizeof prefix - 1) == 0;
}

/* MemoryError with a message that says which memory ran out. */
static PyObject *raise_memory_error(const call *c) {
    char why[200];
    dp_arena_why(&c->arena, "reading the input", why, sizeof why);
    PyErr_SetString(PyExc_MemoryError, c->err.msg[0] != '\0' && strcmp(c->err.msg, "out of memory") != 0 &&
                                           !c->arena.failed ? c->err.msg : why);
    return NULL;
}

/* A failed job: out of memory, or what the core reported. */
static PyObject *raise_job_error(PyObject *module, const call *c, const char *fallback_where) {
    if (out_of_memory(c))
        return raise_memory_error(c);
    return raise_core_error(module, &c->err, fallback_where);
}

/* The core part of a job: no Python object may be touched here. */
static int run_job(call *c, job what, const dp_code *code, const dp_options *opt) {
    switch (what) {
    case JOB_DECOMPILE:
        return dp_decompile(code, opt, &c->out, &c->err);
    case JOB_DISASM:
        return dp_disasm(code, &c->out, &c->err);
    case JOB_IR_DUMP: case JOB_IR_DUMP_EFFECTS: {
        dp_irfunc f;
        if (dp_lift(&c->arena, code, &f, &c->err) < 0)
            return -1;
        dp_ir_dump_ex(&f, what == JOB_IR_DUMP_EFFECTS, &c->out);
        return 0;
    }
    }
    return dp_fail(&c->err, -1, "unknown job");
}

static PyObject *linemap_list(const dp_linemap *lm) {
    PyObject *list = PyList_New((Py_ssize_t)lm->n);
    if (list == NULL)
        return NULL;
    for (size_t i = 0; i < lm->n; i++) {
        PyObject *pair = Py_BuildValue("(ii)", (int)lm->entries[i].offset, (int)lm->entries[i].line);
        if (pair == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, pair);
    }
    return list;
}

/* The objects the output names _depyf_const_0, _depyf_const_1, ... (their
 * dp_const's origin: borrowed from the code object's constants, which the
 * caller holds). */
static PyObject *named_tuple(const dp_named_out *named) {
    PyObject *t = PyTuple_New((Py_ssize_t)named->n);
    for (size_t k = 0; t != NULL && k < named->n; k++) {
        PyObject *o = named->v[k]->origin ? (PyObject *)named->v[k]->origin : Py_None;
        Py_INCREF(o);
        PyTuple_SET_ITEM(t, (Py_ssize_t)k, o);
    }
    return t;
}

/* The job's output as str, or a tuple of it and what was asked for besides:
 * the line map, the named constants (in that order). */
static PyObject *job_result(call *c, const request *rq) {
    if (!dp_buf_ok(&c->out))
        return raise_memory_error(c);
    PyObject *text = PyUnicode_DecodeUTF8(c->out.data ? c->out.data : "", (Py_ssize_t)c->out.len, "surrogatepass");
    if (text == NULL && PyErr_ExceptionMatches(PyExc_MemoryError)) {
        PyErr_Clear();
        return PyErr_Format(PyExc_MemoryError, "out of memory: the %zu bytes of source do not fit in a str",
                            c->out.len);
    }
    if (text == NULL || !(rq->linemap || rq->named))
        return text;
    PyObject *lines = rq->linemap ? linemap_list(&c->linemap) : NULL;
    PyObject *named = rq->named ? named_tuple(&c->named) : NULL;
    PyObject *result = NULL;
    if ((lines != NULL || !rq->linemap) && (named != NULL || !rq->named))
        result = lines && named ? PyTuple_Pack(3, text, lines, named) : PyTuple_Pack(2, text, lines ? lines : named);
    Py_DECREF(text);
    Py_XDECREF(lines);
    Py_XDECREF(named);
    return result;
}

/* The validation hook (depyf.h dp_compile_fn): runs with the GIL taken
 * back from the core's thread for the time of one compile.  The blank
 * lines before the source are added here, outside the core's validation
 * budget (the core bounds first_line): a class 3.13 records on a late line
 * costs no more of the budget than one on line 1. */
static int compile_hook(void *ctx, const char *src, long first_line, int flags, dp_arena *a, dp_code **out,
                        char *why, size_t whylen) {
    call *c = ctx;
    size_t blank = first_line > 1 ? (size_t)(first_line - 1) : 0, len = strlen(src);
    char *padded = blank > 0 ? malloc(blank + len + 1) : NULL;
    if (blank > 0 && padded == NULL) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    if (padded != NULL) {
        memset(padded, '\n', blank);
        memcpy(padded + blank, src, len + 1);
    }
    PyEval_RestoreThread(c->ts);
    PyCompilerFlags cf = _PyCompilerFlags_INIT;
    cf.cf_flags = flags & PyCF_MASK;
    int rc = -1;
    PyObject *co = Py_CompileStringExFlags(padded ? padded : src, "<depyf validation>", Py_file_input, &cf, 0);
    free(padded);
    if (co == NULL) {
        rc = PyErr_ExceptionMatches(PyExc_SyntaxError) ? 1 : -1;
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyObject *text = value ? PyObject_Str(value) : NULL;
        const char *u = text ? PyUnicode_AsUTF8(text) : NULL;
        snprintf(why, whylen, "does not compile: %.150s", u ? u : "?");
        Py_XDECREF(text);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        PyErr_Clear();
    } else {
        dp_error err;
        dp_error_init(&err);
        rc = dpx_code_from_py(co, a, out, &err) < 0 ? -1 : 0;
        if (rc < 0)
            snprintf(why, whylen, "could not read the recompiled code");
        PyErr_Clear();
        Py_DECREF(co);
    }
    c->ts = PyEval_SaveThread();
    return rc;
}

static dp_options options_for(call *c, const request *rq) {
    dp_options opt = {0};
    c->arena.limit = (size_t)rq->memory_limit;
    opt.memory_limit = (size_t)rq->memory_limit;
    opt.indent = rq->indent;
    opt.linemap = rq->linemap ? &c->linemap : NULL;
    opt.named = rq->named ? &c->named : NULL;
    opt.force_fallback = rq->force_fallback;
    if (rq->validate && rq->what == JOB_DECOMPILE) {
        opt.compile = compile_hook;
        opt.compile_ctx = c;
        opt.compile_minor = PY_MINOR_VERSION;
        opt.stats = &c->stats;
        opt.stable_globals = rq->stable_globals;
    }
    /* (the str object outlives the call: the arguments hold it) */
    opt.def_name = rq->def_name ? PyUnicode_AsUTF8(rq->def_name) : NULL;
    return opt;
}

static void add_stats(PyObject *module, const call *c) {
    dp_validation_stats *st = &((modstate *)PyModule_GetState(module))->stats;
    st->validated += c->stats.validated;
    st->fallback += c->stats.fallback;
    st->unchecked += c->stats.unchecked;
}

/* The live defaults in the core's shape: a tuple, and a tuple of (name,
 * value) pairs.  Returns -1 like dpx_code_from_py. */
static int convert_defaults(call *c, const request *rq, dp_options *opt) {
    dp_const *converted;
    if (rq->defaults != NULL) {
        if (dpx_const_from_py(rq->defaults, 1, &c->arena, &converted, &c->err) < 0)
            return -1;
        opt->defaults = converted;
    }
    if (rq->kwdefaults != NULL) {
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(rq->kwdefaults, &pos, &key, &value))
            if (!PyUnicode_CheckExact(key)) {
                PyErr_Format(PyExc_TypeError, "kwdefaults keys must be str, not %.100s", Py_TYPE(key)->tp_name);
                return -1;
            }
        PyObject *items = PyDict_Items(rq->kwdefaults);
        PyObject *pairs = items == NULL ? NULL : PyList_AsTuple(items);
        Py_XDECREF(items);
        if (pairs == NULL)
            return -1;
        int rc = dpx_const_from_py(pairs, 1, &c->arena, &converted, &c->err);
        Py_DECREF(pairs);
        if (rc < 0)
            return -1;
        opt->kwdefaults = converted;
    }
    return 0;
}

static PyObject *run_on_code(PyObject *module, PyObject *code, const request *rq) {
    call c;
    call_init(&c);
    PyObject *result = NULL;
    dp_code *model = NULL;
    dp_options opt = options_for(&c, rq);
    if (dpx_code_from_py(code, &c.arena, &model, &c.err) < 0 || convert_defaults(&c, rq, &opt) < 0) {
        if (!PyErr_Occurred())
            raise_core_error(module, &c.err, model != NULL ? model->qualname : "<code>");
        goto done;
    }
    c.ts = PyEval_SaveThread();
    int rc = run_job(&c, rq->what, model, &opt);
    PyEval_RestoreThread(c.ts);
    add_stats(module, &c);
    if (rc < 0)
        raise_job_error(module, &c, model->qualname);
    else
        result = job_result(&c, rq);
done:
    call_free(&c);
    return result;
}

/* .pyc problems (bad magic, truncation, bad marshal data) are ValueErrors
 * about the file; a failure on the code inside is a DecompilationError. */
static PyObject *run_on_pyc(PyObject *module, const Py_buffer *data, const request *rq) {
    call c;
    call_init(&c);
    PyObject *result = NULL;
    dp_code *model = NULL;
    dp_options opt = options_for(&c, rq);
    int read_rc, rc = -1;
    c.ts = PyEval_SaveThread();
    read_rc = dp_read_pyc(&c.arena, data->buf, (size_t)data->len, &model, &c.err);
    if (read_rc == 0)
        rc = run_job(&c, rq->what, model, &opt);
    PyEval_RestoreThread(c.ts);
    add_stats(module, &c);
    if (read_rc < 0) {
        if (out_of_memory(&c))
            raise_memory_error(&c);
        else
            PyErr_SetString(PyExc_ValueError, c.err.msg[0] ? c.err.msg : "not a valid .pyc file");
    } else if (rc < 0) {
        raise_job_error(module, &c, model->qualname);
    } else {
        result = job_result(&c, rq);
    }
    call_free(&c);
    return result;
}

/* indent: an int from 1 to 16 (TypeError for another type, ValueError
 * for another int however big). */
static int parse_indent(PyObject *obj, int *indent) {
    if (obj == NULL)
        return 0;
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "indent must be an int, not %.100s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow;
    long v = PyLong_AsLongAndOverflow(obj, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow || v < 1 || v > 16) {
        PyErr_Format(PyExc_ValueError, "indent must be between 1 and 16, not %S", obj);
        return -1;
    }
    *indent = (int)v;
    return 0;
}

/* memory_limit (tests): None or a non-negative int of bytes. */
static int parse_memory_limit(PyObject *obj, Py_ssize_t *limit) {
    if (obj == NULL || obj == Py_None)
        return 0;
    Py_ssize_t v = PyLong_Check(obj) ? PyLong_AsSsize_t(obj) : -1;
    if (v < 0) {
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "memory_limit must be None or a non-negative int of bytes, not %R", obj);
        }
        return -1;
    }
    *limit = v;
    return 0;
}

PyDoc_STRVAR(decompile_doc,
"decompile(code, indent=4, linemap=False, defaults=None, kwdefaults=None, force_fallback=False,\n"
"          validate=True, stable_globals=False, def_name=None, named=False, memory_limit=None)\n--\n\n"
"Source of a code object: a `def` statement for a function, module source for a module.\n"
"A function whose name is no identifier prints under a valid one (`<lambda>` as `_lambda`,\n"
"or as a `lambda` expression when its body is one value); def_name (an identifier)\n"
"names the def instead.\n"
"With linemap=True, return (source, [(offset, line), ...]): the output line each\n"
"bytecode offset of the top-level code object was printed on, sorted by offset.\n"
"defaults (a tuple) and kwdefaults (a dict) are a live function's __defaults__ and\n"
"__kwdefaults__, shown in the `def`; a value with no literal form is shown as its repr.\n"
"force_fallback=True (for tests) prints every function as the equivalent state machine\n"
"otherwise used only for bytecode that fits no if/while/try shape.\n"
"validate=True (the default) compiles every structured function of the running Python's\n"
"version and compares it with its bytecode; one that is not equivalent is printed as the\n"
"state machine instead (see validation_stats()).  stable_globals=True lets validation\n"
"take every read of a global as giving one value throughout (true of the names Dynamo\n"
"binds for its transformed code), so that such reads may move in the output; reads of the\n"
"names Dynamo binds (__compiled_fn_*, __resume_at_*, __import_*, __builtins_dict___*)\n"
"are always taken so.\n"
"named=True: a constant with no literal form (a live object Dynamo loads, a code object\n"
"outside a function definition) prints as the name _depyf_const_<k>; also return the\n"
"tuple of those objects, k-th at k, after the source (and the line map), so that the\n"
"caller can bind the names and run the output.\n"
"memory_limit (bytes, for tests): the memory budget instead of the default 2 GiB.\n"
"Raises DecompilationError when the code cannot be decompiled or the input passes a limit\n"
"(docs/limits.md: nesting, work and output in proportion to the input), MemoryError (its\n"
"message naming the limit) past the memory budget, TypeError or ValueError for arguments.");

/* None -> NULL; otherwise `obj` must be exactly of `type`. */
static int optional_arg(PyObject **obj, PyTypeObject *type, const char *name) {
    if (*obj == Py_None) {
        *obj = NULL;
        return 0;
    }
    if (Py_TYPE(*obj) != type) {
        PyErr_Format(PyExc_TypeError, "%s must be a %s or None, not %.100s", name, type->tp_name,
                     Py_TYPE(*obj)->tp_name);
        return -1;
    }
    return 0;
}

static PyObject *core_decompile(PyObject *module, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"code",           "indent",   "linemap",        "defaults", "kwdefaults",
                             "force_fallback", "validate", "stable_globals", "def_name", "named",
                             "memory_limit",   NULL};
    PyObject *code, *indent = NULL, *memory_limit = NULL;
    request rq = {JOB_DECOMPILE, 4, 0, Py_None, Py_None, 0, 1, 0, Py_None, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|OpOOpppOpO:decompile", kwlist, &PyCode_Type, &code, &indent,
                                     &rq.linemap, &rq.defaults, &rq.kwdefaults, &rq.force_fallback, &rq.validate,
                                     &rq.stable_globals, &rq.def_name, &rq.named, &memory_limit) ||
        parse_indent(indent, &rq.indent) < 0 || parse_memory_limit(memory_limit, &rq.memory_limit) < 0 ||
        optional_arg(&rq.defaults, &PyTuple_Type, "defaults") < 0 ||
        optional_arg(&rq.kwdefaults, &PyDict_Type, "kwdefaults") < 0 ||
        optional_arg(&rq.def_name, &PyUnicode_Type, "def_name") < 0)
        return NULL;
    if (rq.def_name && !PyUnicode_IsIdentifier(rq.def_name)) {
        PyErr_Format(PyExc_ValueError, "def_name must be an identifier, not %R", rq.def_name);
        return NULL;
    }
    if (rq.def_name && PyUnicode_AsUTF8(rq.def_name) == NULL)
        return NULL;
    return run_on_code(module, code, &rq);
}

PyDoc_STRVAR(disasm_doc,
"disasm(code)\n--\n\n"
"Disassembly of a code object and of every code object nested in it.");

static PyObject *core_disasm(PyObject *module, PyObject *code) {
    if (!PyCode_Check(code))
        return PyErr_Format(PyExc_TypeError, "disasm() expects a code object, not %.100s", Py_TYPE(code)->tp_name);
    request rq = {JOB_DISASM, 4, 0, NULL, NULL, 0, 0, 0, NULL, 0, 0};
    return run_on_code(module, code, &rq);
}

PyDoc_STRVAR(ir_dump_doc,
"ir_dump(code, effects=False)\n--\n\n"
"The version-neutral IR of a code object (not of the code objects nested in it).\n"
"effects=True ends each instruction's line with its stack effect from the core's op\n"
"table: ` ; IN>OUT` (values taken, values left), then ` | IN>OUT` for its jump\n"
"where that differs, or ` ; ?` where no effect is fixed.");

static PyObject *core_ir_dump(PyObject *module, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"code", "effects", NULL};
    PyObject *code;
    int effects = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|p:ir_dump", kwlist, &code, &effects))
        return NULL;
    if (!PyCode_Check(code))
        return PyErr_Format(PyExc_TypeError, "ir_dump() expects a code object, not %.100s", Py_TYPE(code)->tp_name);
    request rq = {effects ? JOB_IR_DUMP_EFFECTS : JOB_IR_DUMP, 4, 0, NULL, NULL, 0, 0, 0, NULL, 0, 0};
    return run_on_code(module, code, &rq);
}

PyDoc_STRVAR(decompile_pyc_doc,
"decompile_pyc(data, indent=4, validate=True, memory_limit=None)\n--\n\n"
"Module source of the contents of a .pyc file written by CPython 3.8-3.13.\n"
"validate, memory_limit: as for decompile(); only a .pyc of the running Python's version\n"
"is validated.\n"
"Raises ValueError when `data` is not a valid .pyc file (the message names the byte), and\n"
"otherwise as decompile().");

static PyObject *core_decompile_pyc(PyObject *module, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"data", "indent", "validate", "memory_limit", NULL};
    Py_buffer data;
    PyObject *indent = NULL, *memory_limit = NULL;
    request rq = {JOB_DECOMPILE, 4, 0, NULL, NULL, 0, 1, 0, NULL, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*|OpO:decompile_pyc", kwlist, &data, &indent, &rq.validate,
                                     &memory_limit))
        return NULL;
    PyObject *result = parse_indent(indent, &rq.indent) < 0 || parse_memory_limit(memory_limit, &rq.memory_limit) < 0
                           ? NULL
                           : run_on_pyc(module, &data, &rq);
    PyBuffer_Release(&data);
    return result;
}

PyDoc_STRVAR(check_pyc_header_doc,
"check_pyc_header(header)\n--\n\n"
"The Python minor version (8 to 13) of a .pyc file whose first 16 bytes (or more) are\n"
"`header`: the checks decompile_pyc makes on them, so that a caller can refuse a file\n"
"(a sparse file, a device) before reading the rest.  Raises ValueError as decompile_pyc\n"
"does for a bad header.");

static PyObject *core_check_pyc_header(PyObject *module, PyObject *arg) {
    (void)module;
    Py_buffer data;
    if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0)
        return NULL;
    dp_error err;
    dp_error_init(&err);
    int minor = 0;
    int rc = dp_check_pyc_header(data.buf, (size_t)data.len, &minor, &err);
    PyBuffer_Release(&data);
    if (rc < 0)
        return PyErr_Format(PyExc_ValueError, "%s", err.msg);
    return PyLong_FromLong(minor);
}

PyDoc_STRVAR(disasm_pyc_doc,
"disasm_pyc(data)\n--\n\n"
"Disassembly of the contents of a .pyc file written by CPython 3.8-3.13.\n"
"Raises ValueError when `data` is not a valid .pyc file.");

static PyObject *core_disasm_pyc(PyObject *module, PyObject *arg) {
    Py_buffer data;
    if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0)
        return NULL;
    request rq = {JOB_DISASM, 4, 0, NULL, NULL, 0, 0, 0, NULL, 0, 0};
    PyObject *result = run_on_pyc(module, &data, &rq);
    PyBuffer_Release(&data);
    return result;
}

PyDoc_STRVAR(equivalent_doc,
"equivalent(orig, cand, stable_globals=False, named=())\n--\n\n"
"Translation validation: (True, '') when code object `cand` does what `orig` does\n"
"(the same observable operations in the same order on the same values, the same\n"
"exception handling), (False, reason) when not, (None, reason) when the check\n"
"could not be made.  Both must come from the same Python version.  stable_globals:\n"
"as for decompile().  named: the objects that `cand` reads as the globals\n"
"_depyf_const_0, _depyf_const_1, ... (how decompile() prints constants with no\n"
"literal form).");

static PyObject *core_equivalent(PyObject *module, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"orig", "cand", "stable_globals", "named", NULL};
    PyObject *a, *b, *named_objs = NULL;
    int stable_globals = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!|pO!:equivalent", kwlist, &PyCode_Type, &a, &PyCode_Type, &b,
                                     &stable_globals, &PyTuple_Type, &named_objs))
        return NULL;
    call c;
    call_init(&c);
    dp_code *ma = NULL, *mb = NULL;
    PyObject *result = NULL;
    Py_ssize_t nnamed = named_objs ? PyTuple_GET_SIZE(named_objs) : 0;
    const dp_const **named = nnamed ? dp_alloc_array(&c.arena, (size_t)nnamed, sizeof *named) : NULL;
    if (nnamed && named == NULL) {
        raise_memory_error(&c);
        goto done;
    }
    for (Py_ssize_t k = 0; k < nnamed; k++) {
        dp_const *v;
        if (dpx_const_from_py(PyTuple_GET_ITEM(named_objs, k), 0, &c.arena, &v, &c.err) < 0) {
            if (!PyErr_Occurred())
                raise_core_error(module, &c.err, "<named>");
            goto done;
        }
        named[k] = v;
    }
    if (dpx_code_from_py(a, &c.arena, &ma, &c.err) < 0 || dpx_code_from_py(b, &c.arena, &mb, &c.err) < 0) {
        if (!PyErr_Occurred())
            raise_core_error(module, &c.err, "<code>");
        goto done;
    }
    char why[400];
    int r;
    dp_named_consts nc = {named, (size_t)nnamed};
    Py_BEGIN_ALLOW_THREADS
    r = dp_equivalent_named(ma, mb, stable_globals ? DP_EQ_STABLE_GLOBALS : 0, &nc, why, sizeof why);
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("(Os)", r == 1 ? Py_True : r == 0 ? Py_False : Py_None, why);
done:
    call_free(&c);
    return result;
}

PyDoc_STRVAR(validation_stats_doc,
"validation_stats(reset=False)\n--\n\n"
"Counts since the module was loaded (or last reset) of functions whose structured\n"
"form was checked equivalent to their bytecode ('validated'), was not and was printed\n"
"as the state machine instead ('fallback'), or could not be checked ('unchecked').");

static PyObject *core_validation_stats(PyObject *module, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"reset", NULL};
    int reset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p:validation_stats", kwlist, &reset))
        return NULL;
    dp_validation_stats *st = &((modstate *)PyModule_GetState(module))->stats;
    PyObject *d = Py_BuildValue("{slslsl}", "validated", st->validated, "fallback", st->fallback, "unchecked",
                                st->unchecked);
    if (d && reset)
        memset(st, 0, sizeof *st);
    return d;
}

static PyMethodDef core_methods[] = {
    {"validation_stats", (PyCFunction)(void (*)(void))core_validation_stats, METH_VARARGS | METH_KEYWORDS,
     validation_stats_doc},
    {"equivalent", (PyCFunction)(void (*)(void))core_equivalent, METH_VARARGS | METH_KEYWORDS, equivalent_doc},
    {"decompile", (PyCFunction)(void (*)(void))core_decompile, METH_VARARGS | METH_KEYWORDS, decompile_doc},
    {"disasm", core_disasm, METH_O, disasm_doc},
    {"ir_dump", (PyCFunction)(void (*)(void))core_ir_dump, METH_VARARGS | METH_KEYWORDS, ir_dump_doc},
    {"decompile_pyc", (PyCFunction)(void (*)(void))core_decompile_pyc, METH_VARARGS | METH_KEYWORDS,
     decompile_pyc_doc},
    {"disasm_pyc", core_disasm_pyc, METH_O, disasm_pyc_doc},
    {"check_pyc_header", core_check_pyc_header, METH_O, check_pyc_header_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(error_doc,
"The decompiler could not handle a code object.\n\n"
"Attributes: qualname (of the innermost code object concerned), offset (bytecode\n"
"offset, or None) and reason.");

static int core_exec(PyObject *module) {
    modstate *st = PyModule_GetState(module);
    PyObject *attrs = Py_BuildValue("{sOsOsO}", "qualname", Py_None, "offset", Py_None, "reason", Py_None);
    if (attrs == NULL)
        return -1;
    st->DecompilationError = PyErr_NewExceptionWithDoc("depyf.DecompilationError", error_doc, NULL, attrs);
    Py_DECREF(attrs);
    if (st->DecompilationError == NULL)
        return -1;
    Py_INCREF(st->DecompilationError);
    if (PyModule_AddObject(module, "DecompilationError", st->DecompilationError) < 0) {
        Py_DECREF(st->DecompilationError);
        return -1;
    }
    return PyModule_AddIntConstant(module, "MAX_NESTING", DP_MAX_NESTING);
}

static int core_traverse(PyObject *module, visitproc visit, void *arg) {
    Py_VISIT(((modstate *)PyModule_GetState(module))->DecompilationError);
    return 0;
}

static int core_clear(PyObject *module) {
    Py_CLEAR(((modstate *)PyModule_GetState(module))->DecompilationError);
    return 0;
}

static void core_free(void *module) { core_clear(module); }

static PyModuleDef_Slot core_slots[] = {
    {Py_mod_exec, (void *)core_exec},
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#if PY_VERSION_HEX >= 0x030D0000
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT,
    "depyf._core",
    "The C core of depyf: decompile and disassemble code objects and .pyc files.",
    sizeof(modstate),
    core_methods,
    core_slots,
    core_traverse,
    core_clear,
    core_free,
};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&core_module); }
