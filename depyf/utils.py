"""Helpers the original depyf offered in `depyf.utils`, with the same signatures.

Where the original's result was wrong, these give the right one (README:
"Compatibility with the original depyf").  No torch.
"""

import os

from depyf import _decompiled
from depyf.decompiler import MAX_UNWRAP, DecompilationError, Decompiler, unwrap_once

__all__ = ["get_function_signature", "collect_all_code_objects", "safe_create_directory",
           "get_code_owner", "decompile_ensure"]


def get_function_signature(code_obj, overwite_fn_name=None, *, overwrite_fn_name=None):
    """The `def` line of a code object, `"def name(params):\\n"`, with its `/`, `*`,
    `*args`, keyword-only and `**kwargs` markers where they belong.

    The name is `overwrite_fn_name` (or `overwite_fn_name`, the original's spelling),
    else the code's own made valid (`<lambda>` -> `_lambda`).  A comprehension's
    implicit argument `.0` is named `comp_arg_0`.
    """
    name = overwrite_fn_name if overwrite_fn_name is not None else overwite_fn_name
    varnames = tuple("comp_arg_" + n[1:] if n.startswith(".") else n for n in code_obj.co_varnames)
    params, _call = _decompiled.signature_of(code_obj.replace(co_varnames=varnames))
    return "def %s(%s):\n" % (name if name is not None else _decompiled.def_name(code_obj.co_name), params)


def collect_all_code_objects(code):
    """`code` and every code object nested in its constants, depth first, `code` first."""
    found = [code]
    for const in code.co_consts:
        if isinstance(const, type(code)):
            found.extend(collect_all_code_objects(const))
    return found


def safe_create_directory(path):
    """Create `path` and its parents; another process creating it at the same time is fine."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        if not os.path.isdir(path):
            raise


def get_code_owner(fn):
    """The object whose `__code__` is `fn`'s code and can be replaced.

    Follows bound methods to their function, decorators to what they wrap
    (`__wrapped__`), partials to their function and callable objects to their
    class's `__call__`.  `a.method.__code__` cannot be assigned; the owner's,
    `A.method.__code__`, can.  An object with no Python code is returned as is.
    """
    for _ in range(MAX_UNWRAP):
        inner = unwrap_once(fn)
        if inner is None and not hasattr(fn, "__code__"):
            call = getattr(fn, "__call__", None)
            inner = getattr(call, "__func__", None)  # (a callable object's own __call__)
        if inner is None:
            return fn
        fn = inner
    raise ValueError("get_code_owner: more than %d wrappers (a __wrapped__ cycle?)" % MAX_UNWRAP)


def decompile_ensure(fn, overwite_fn_name=None, *, overwrite_fn_name=None):
    """The decompiled source of `fn` (a code object or callable), or, when it cannot be
    decompiled, its `def` line with a body saying so: never raises DecompilationError."""
    name = overwrite_fn_name if overwrite_fn_name is not None else overwite_fn_name
    try:
        return Decompiler(fn).decompile(overwrite_fn_name=name)
    except DecompilationError:
        code = fn if hasattr(fn, "co_code") else Decompiler(fn).code
        return get_function_signature(code, overwrite_fn_name=name) + "    'Failed to decompile.'\n"
