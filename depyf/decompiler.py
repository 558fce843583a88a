"""Decompile code objects, Python callables and .pyc files to source text."""

import functools
import types

from . import _core

# Longest chain of wrappers (`__wrapped__`, partials, methods) followed to
# reach a code object; a longer one is almost certainly a cycle.
MAX_UNWRAP = 100


def _no_bytecode(obj, why):
    return TypeError(f"cannot decompile {type(obj).__qualname__} object: {why}")


def code_of(obj):
    """The code object behind `obj`.

    Accepts a code object, a function, a bound method, a classmethod or
    staticmethod, a functools.partial of any of these, a decorated function
    (follows `__wrapped__`) and a callable object (uses `type(obj).__call__`).
    Anything else raises TypeError naming its type.
    """
    current = obj
    followed_call = False
    for _ in range(MAX_UNWRAP):
        if isinstance(current, types.CodeType):
            return current
        wrapped = getattr(current, "__wrapped__", None)
        if wrapped is not None:
            current = wrapped
            continue
        if isinstance(current, (functools.partial, functools.partialmethod)):
            current = current.func
            continue
        if isinstance(current, (types.MethodType, classmethod, staticmethod)):
            current = current.__func__
            continue
        code = getattr(current, "__code__", None)
        if isinstance(code, types.CodeType):
            return code
        if isinstance(current, types.ModuleType):
            raise _no_bytecode(obj, "a module keeps no code object; decompile its .pyc file instead")
        if isinstance(current, type):
            raise _no_bytecode(obj, "a class keeps no code object; decompile one of its methods")
        if not callable(current):
            raise _no_bytecode(obj, "expected a code object or a Python callable")
        if followed_call:
            raise _no_bytecode(obj, "it has no Python bytecode")
        followed_call = True
        current = type(current).__call__
    raise ValueError(f"cannot decompile {type(obj).__qualname__} object: "
                     f"more than {MAX_UNWRAP} wrappers (a __wrapped__ cycle?)")


def decompile(obj, indent=4):
    """Source of `obj` (see `code_of`): a `def` statement, or module source for a module's code.

    Raises DecompilationError when the bytecode cannot be decompiled.
    """
    return _core.decompile(code_of(obj), indent=indent)


def disasm(obj):
    """Disassembly of the code behind `obj` and of every code object nested in it."""
    return _core.disasm(code_of(obj))


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def decompile_pyc(path, indent=4):
    """Module source of the .pyc file at `path` (CPython 3.8-3.13).

    Raises ValueError when the file is not a valid .pyc file.
    """
    return _core.decompile_pyc(_read(path), indent=indent)


def disasm_pyc(path):
    """Disassembly of the .pyc file at `path` (CPython 3.8-3.13).

    Raises ValueError when the file is not a valid .pyc file.
    """
    return _core.disasm_pyc(_read(path))


class Decompiler:
    """Decompiles one code object (see `code_of`), or the module of one .pyc file."""

    def __init__(self, obj, indent=4):
        self.code = code_of(obj)
        self.indent = indent
        self._pyc = None

    @classmethod
    def from_pyc(cls, path, indent=4):
        """A Decompiler for the .pyc file at `path`, which is read now."""
        self = cls.__new__(cls)
        self.code = None
        self.indent = indent
        self._pyc = _read(path)
        return self

    def decompile(self):
        """The source text, decompiled anew on every call."""
        if self._pyc is not None:
            return _core.decompile_pyc(self._pyc, indent=self.indent)
        return _core.decompile(self.code, indent=self.indent)

    @functools.cached_property
    def source(self):
        """The source text, decompiled on first access."""
        return self.decompile()
