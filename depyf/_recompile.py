"""Compile a dumped `def` into a code object that can run in Dynamo's place.

When Dynamo runs a cache entry, it copies the frame's arguments, cell and free
variables into a new frame for the transformed code *by position* (torch's
eval_frame: the transformed code keeps the original's parameters, cells and
free variables in order).  A replacement code object must therefore keep that
layout exactly; anything else is refused (None) and Dynamo's own bytecode runs.
Pure Python, no torch.
"""

import ast

__all__ = ["compile_like", "find_code", "same_layout"]

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
        tree = ast.parse(text, filename)
    except (SyntaxError, ValueError):
        return None
    fn = tree.body[0] if tree.body else None
    if not isinstance(fn, ast.FunctionDef) or fn.name != name:
        return None
    if code.co_freevars:
        outer = ast.parse("def __depyf_closure():\n    %s = None\n" % " = ".join(code.co_freevars)).body[0]
        outer.body += [fn, ast.Return(ast.Name(name, ast.Load()))]
        tree.body = [outer]  # (the wrapper's own lines are in its code, not in the function's)
    ast.fix_missing_locations(tree)
    try:
        module = compile(tree, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found = find_code(module, name)
    if found is None or not same_layout(code, found):
        return None
    return found


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
