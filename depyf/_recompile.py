"""Compile a dumped `def` into a code object that can run in Dynamo's place.

When Dynamo runs a cache entry, it copies the frame's arguments, cell and free
variables into a new frame for the transformed code *by position* (torch's
eval_frame: the transformed code keeps the original's parameters, cells and
free variables in order).  A replacement code object must therefore keep that
layout exactly; anything else is refused (None) and Dynamo's own bytecode runs.
Pure Python, no torch.
"""

import ast
import io
import os
import tokenize
import warnings

__all__ = ["compile_like", "find_code", "same_layout", "decompile_and_compile_like"]

# co_flags that change how a frame is set up or what calling it returns
_KIND_FLAGS = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200  # *args, **kw, generator, coroutine, ...


def _nargs(code):
    return (code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04)
            + bool(code.co_flags & 0x08))


def same_layout(a, b):
    """True when a frame set up for `a` by position is a valid frame for `b`."""
    n = _nargs(a)
    return (a.co_argcount == b.co_argcount and a.co_kwonlyargcount == b.co_kwonlyargcount
            and getattr(a, "co_posonlyargcount", 0) == getattr(b, "co_posonlyargcount", 0)
            and (a.co_flags & _KIND_FLAGS) == (b.co_flags & _KIND_FLAGS)
            and a.co_varnames[:n] == b.co_varnames[:n] and _nargs(b) == n
            and a.co_cellvars == b.co_cellvars and a.co_freevars == b.co_freevars)


def compile_like(code, text, filename, name):
    """The code of `def name` at the top of `text`, compiled as `filename`, laid out as `code`.

    Lines keep their numbers in `text`, so a debugger shows `filename` at the
    right line.  Free variables are bound by an enclosing function, as the
    original closure bound them.  None when the text does not compile to a
    function of the same layout.
    """
    try:
        if code.co_freevars:
            tree = ast.parse(text, filename)
            fn = tree.body[0] if tree.body else None
            if not isinstance(fn, ast.FunctionDef) or fn.name != name:
                return None
            outer = ast.parse("def __depyf_closure():\n    %s = None\n" % " = ".join(code.co_freevars)).body[0]
            outer.body += [fn, ast.Return(ast.Name(name, ast.Load()))]
            tree.body = [outer]  # (the wrapper's own lines are in its code, not in the function's)
            module = compile(ast.fix_missing_locations(tree), filename, "exec", dont_inherit=True)
        else:  # (from the text: no syntax tree in Python objects, no locations to fix)
            module = compile(text, filename, "exec", dont_inherit=True)
            if not _defines_first(module, name):
                return None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found = find_code(module, name)
    if found is None or not same_layout(code, found):
        return None
    return found


def _defines_first(module, name):
    """Is function `name` the first the module's code defines?"""
    first = next((c for c in module.co_consts if hasattr(c, "co_code")), None)
    return first is not None and first.co_name == name


def find_code(code, name, depth=0):
    """The code object of function `name` defined in `code` (or nested two deep), else None."""
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            if const.co_name == name:
                return const
            if depth < 2:
                found = find_code(const, name, depth + 1)
                if found is not None:
                    return found
    return None


def decompile_and_compile_like(code, reference, indent=4, temp_prefix="__temp_", filepath_template=None):
    """`code` decompiled and compiled back, laid out like `reference` (see
    depyf.Decompiler.decompile_and_compile_like, the original depyf's API).

    With `filepath_template` (a path with one `%s`), the source goes to the first
    file `filepath_template % n` (n = 0, 1, ...) that is free or already holds
    this very source, and the function is named after the file (the part of its
    name before the first dot), so a debugger shows that file.  Without it, the
    function keeps `reference`'s name and its file name is "noname".  Constants
    with no literal form (the `_depyf_const_<k>` of the source) are constants of
    the code returned, as in `code`.  Raises DecompilationError when `code` cannot
    be decompiled or its source does not compile to `reference`'s layout.
    """
    from depyf import _core, _decompiled

    placeholder = "__depyf_place_holder__"
    source, named = _core.decompile(code, indent=indent, stable_globals=True, def_name=placeholder, named=True)
    source = _decompiled.rename_temps(source, temp_prefix, code)
    if filepath_template is None:
        name, filename = _decompiled.def_name(reference.co_name), "noname"
        text = _decompiled.rename_names(source, {placeholder: name})
    else:
        name, filename, text = _claim_file(filepath_template, source, placeholder)
    # (the names of constants with no literal form become string constants, replaced below)
    marks = {"_depyf_const_%d" % k: repr("\0depyf const %d" % k) for k in range(len(named))}
    with warnings.catch_warnings():  # ('<str>'(...) compiles with a SyntaxWarning)
        warnings.simplefilter("ignore", SyntaxWarning)
        compiled = compile_like(reference, _decompiled.rename_names(text, marks), filename, name)
    if compiled is None:
        raise _core.DecompilationError(
            "the source of %s does not compile to a function laid out like %s (its arguments, "
            "cell and free variables), so it cannot run in its place" % (code.co_name, reference.co_name))
    values = {"\0depyf const %d" % k: value for k, value in enumerate(named)}
    compiled, used = _put_constants(compiled, values)
    names = {t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.NAME}
    wanted = {"\0depyf const %d" % k for k in range(len(named)) if "_depyf_const_%d" % k in names}
    if wanted - used:  # (a constant the compiler folded away with its placeholder)
        raise _core.DecompilationError("a constant of %s with no literal form could not be put back "
                                       "into the compiled source" % code.co_name)
    return compiled


def _claim_file(template, source, placeholder):
    """(function name, file name, text): the first file of `template` that is free
    (written now, exclusively, as other processes may be doing the same) or already
    holds the same text."""
    from depyf import _decompiled

    for count in range(1 << 20):
        filename = template % count
        name = os.path.basename(filename).split(".")[0]
        if not name.isidentifier():
            raise ValueError("filepath_template must name files whose name (before the first dot) is "
                             "an identifier, not %r" % filename)
        text = _decompiled.rename_names(source, {placeholder: name})
        try:
            with open(filename, "x", encoding="utf-8") as f:
                f.write(text)
            return name, filename, text
        except FileExistsError:
            with open(filename, encoding="utf-8") as f:
                if f.read() == text:
                    return name, filename, text
    raise ValueError("no free file name left for %r" % template)


def _put_constants(code, values):
    """(`code` with each string constant that is a key of `values`, also inside tuples,
    frozensets and nested code, replaced by its value; the keys replaced)."""
    used = set()

    def put(const):
        if type(const) is str and const in values:
            used.add(const)
            return values[const]
        if type(const) is tuple:
            return tuple(put(c) for c in const)
        if type(const) is frozenset:
            return frozenset(put(c) for c in const)
        if hasattr(const, "co_code"):
            return const.replace(co_consts=tuple(put(c) for c in const.co_consts))
        return const

    return put(code), used

