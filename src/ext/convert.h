/* Live code object -> the core's model (code.h), read through the code
 * object's attributes (never through `dis` text).  Everything is copied into
 * the arena, so the core can run without the GIL and without touching any
 * Python object. */
#ifndef DEPYF_EXT_CONVERT_H
#define DEPYF_EXT_CONVERT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Through depyf.h: CPython 3.8-3.10 ship their own "code.h", which an include
 * path could pick instead of the core's. */
#include "depyf.h"

/* Returns 0, or -1 with either a Python exception set (MemoryError,
 * an exception from an attribute, KeyboardInterrupt from a repr ...) or, when
 * no exception is set, `err` describing what the model cannot hold (nesting
 * deeper than DP_MAX_NESTING, a name with a NUL character). */
int dpx_code_from_py(PyObject *code, dp_arena *a, dp_code **out, dp_error *err);

/* Any value, converted like a constant of a top-level code object.  With
 * repr_is_source (a live function's defaults, whose objects the Python
 * layer made to repr as the expression to show) an object with no literal
 * form is a DP_CONST_OTHER, else a DP_CONST_OBJECT.  Returns -1 like
 * dpx_code_from_py. */
int dpx_const_from_py(PyObject *value, int repr_is_source, dp_arena *a, dp_const **out, dp_error *err);

#endif
