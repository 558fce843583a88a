"""Decompile code objects, Python callables and .pyc files to source text."""

import builtins
import functools
import types

from . import _core
from ._files import RegularFile, UnreadableFile
from ._core import DecompilationError

__all__ = ["DecompilationError", "Decompiler", "code_of", "decompile", "decompile_pyc", "disasm", "disasm_pyc"]

TEMP_PREFIX = "__temp_"  # how the core names the temporaries it invents: __temp_<n>

# Longest chain of wrappers (`__wrapped__`, partials, methods) followed to
# reach a code object; a longer one is almost certainly a cycle.
MAX_UNWRAP = 100


def _no_bytecode(obj, why):
    return TypeError(f"cannot decompile {type(obj).__qualname__} object: {why}")


def unwrap_once(obj):
    """What `obj` wraps (`__wrapped__`, a partial's function, a method's function), or None."""
    wrapped = getattr(obj, "__wrapped__", None)
    if wrapped is not None:
        return wrapped
    if isinstance(obj, (functools.partial, functools.partialmethod)):
        return obj.func
    if isinstance(obj, (types.MethodType, classmethod, staticmethod)):
        return obj.__func__
    return None


def _unwrap(obj):
    """(code object behind `obj`, the function holding it or None); see `code_of`."""
    current = obj
    followed_call = False
    for _ in range(MAX_UNWRAP):
        if isinstance(current, types.CodeType):
            return current, None
        inner = unwrap_once(current)
        if inner is not None:
            current = inner
            continue
        code = getattr(current, "__code__", None)
        if isinstance(code, types.CodeType):
            return code, current if isinstance(current, types.FunctionType) else None
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


def code_of(obj):
    """The code object behind `obj`.

    Accepts a code object, a function, a bound method, a classmethod or
    staticmethod, a functools.partial of any of these, a decorated function
    (follows `__wrapped__`) and a callable object (uses `type(obj).__call__`).
    Anything else raises TypeError naming its type.
    """
    return _unwrap(obj)[0]


class _Expression:
    """A default value that prints as the source text `text` (its repr)."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


_LITERAL_TYPES = (int, float, complex, str, bytes, bool, type(None), type(Ellipsis))
_NONE = object()  # "no expression" (None is a literal)


# Most items a default may print as (a tuple or list holding one tuple
# twice, n levels deep, prints 2**n items): past it the default is not shown.
MAX_DEFAULT_ITEMS = 100_000


def _small_enough_for_repr(value):
    """Whether `value`'s repr visits at most MAX_DEFAULT_ITEMS items of builtin containers."""
    todo, seen = [value], 0
    while todo:
        v = todo.pop()
        if type(v) in (list, tuple, set, frozenset):
            items = v
        elif type(v) is dict:
            items = [*v.keys(), *v.values()]
        else:
            continue
        seen += len(items)
        if seen > MAX_DEFAULT_ITEMS:
            return False
        todo.extend(items)
    return True


class _Defaults:
    """Turns default values into what decompile() prints for them (see `shown`)."""

    def __init__(self, namespaces):
        self.namespaces = namespaces
        self.names = None  # id -> (the first name bound to it, it): made when first needed
        self.memo = {}  # id -> (value, shown, items printed): a tuple met twice is looked at once

    def shown(self, value, depth=1):
        """`value`, or something that prints as an expression for it, or _NONE.

        Literals print as themselves; another object as a name it is bound to in
        the namespaces, else as its repr when that parses as an expression.  A
        tuple nested deeper than the decompiler takes (MAX_NESTING) has none.
        """
        return self._shown(value, depth)[0]

    def _shown(self, value, depth):
        """(shown, the number of items it prints as)"""
        if type(value) in _LITERAL_TYPES:
            return value, 1
        known = self.memo.get(id(value))
        if known is not None and known[0] is value:
            return known[1:]
        size = 1
        if type(value) is tuple:
            # (the items of a tuple at depth MAX_NESTING would be too deep for the decompiler)
            parts = [(_NONE, 1)] if value and depth >= _core.MAX_NESTING else [self._shown(v, depth + 1) for v in value]
            size += sum(n for _, n in parts)
            items = tuple(i for i, _ in parts)
            shown = _NONE if size > MAX_DEFAULT_ITEMS or any(i is _NONE for i in items) else items
        elif type(value) is frozenset and all(type(v) in _LITERAL_TYPES for v in value):
            shown, size = value, 1 + len(value)
        else:
            shown = self._named_or_repr(value)
        self.memo[id(value)] = (value, shown, size)
        return shown, size

    def _named_or_repr(self, value):
        if self.names is None:  # (an index: a default may hold many objects)
            self.names = {}
            for namespace in self.namespaces:
                for name, bound in namespace.items():
                    if isinstance(name, str) and name.isidentifier():
                        self.names.setdefault(id(bound), (name, bound))
        bound = self.names.get(id(value))
        if bound is not None and bound[1] is value:
            return _Expression(bound[0])
        if not _small_enough_for_repr(value):
            return _NONE
        try:
            text = repr(value)
            compile(text, "<default>", "eval")
        except Exception:  # (a repr too deep to compile raises RecursionError or MemoryError)
            return _NONE
        return _Expression(text)


def _defaults_of(function):
    """decompile() keyword arguments for the defaults of a live function.

    Positional defaults are shown only when all of them can be; each keyword-only
    default when it can be (one left out still gives a valid `def`).
    """
    if function is None:
        return {}
    defaults = _Defaults((function.__globals__, vars(builtins)))
    options = {}
    if function.__defaults__:
        shown = defaults.shown(function.__defaults__)
        if shown is not _NONE:
            options["defaults"] = shown
    if function.__kwdefaults__:
        # (each value sits in a (name, value) pair of a tuple: two levels down)
        shown = {name: defaults.shown(v, 3) for name, v in function.__kwdefaults__.items()}
        options["kwdefaults"] = {name: v for name, v in shown.items() if v is not _NONE}
    return options


def decompile(obj, indent=4, simplify=False):
    """Source of `obj` (see `code_of`): a `def` statement, or module source for a module's code.

    For a live function the `def` shows its defaults, as literals, as names
    they are bound to, or as their repr (see `_defaults_of`).

    Raises, and nothing else (docs/limits.md): TypeError when `obj` has no
    bytecode or an argument has the wrong type; ValueError for an argument
    out of range (`indent` is 1 to 16); DecompilationError when the bytecode
    cannot be decompiled or the input passes a limit (nesting, or the work or
    output in proportion to its size), its message naming the limit or the
    bytecode offset; MemoryError, naming the memory limit, past it.

    `simplify=True` folds the temporaries the decompiler had to invent
    (values kept on the stack, lists built and taken apart) where that is
    exact; see depyf._simplify.  The text is then printed by `ast.unparse`
    (Python 3.9+; on 3.8, and wherever the simplifier's model does not hold,
    the exact form is returned).
    """
    code, function = _unwrap(obj)
    source = _core.decompile(code, indent=indent, **_defaults_of(function))
    if simplify:
        from . import _simplify

        params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                                  + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)]
        simpler = _simplify.simplify(source, code.co_varnames, params)
        if simpler is not None:
            return simpler
    return source


def disasm(obj):
    """Disassembly of the code behind `obj` and of every code object nested in it."""
    return _core.disasm(code_of(obj))


def _read(path):
    """The bytes of the .pyc file at `path`, read as depyf reads hostile files: a
    regular file (a FIFO would block, /dev/zero never end) of at most
    _files.MAX_INPUT_SIZE bytes, its 16-byte header checked before the rest is read.
    OSError as open() raises it (FileNotFoundError ...), ValueError for a bad header."""
    try:
        with RegularFile(path) as f:
            header = f.read(16)
            _core.check_pyc_header(header)
            return header + f.read()
    except UnreadableFile as e:
        raise OSError(e.errno, e.strerror, str(path)) from None


def decompile_pyc(path, indent=4):
    """Module source of the .pyc file at `path` (CPython 3.8-3.13).

    Raises OSError when the file cannot be read (not a regular file: a FIFO,
    a device; larger than 256 MiB), ValueError when it is not a valid .pyc
    file (the message names the byte of the file), otherwise as `decompile`.
    """
    return _core.decompile_pyc(_read(path), indent=indent)


def disasm_pyc(path):
    """Disassembly of the .pyc file at `path` (CPython 3.8-3.13).

    Raises OSError when the file cannot be read (not a regular file, too
    large), ValueError when it is not a valid .pyc file.
    """
    return _core.disasm_pyc(_read(path))


class Decompiler:
    """Decompiles one code object (see `code_of`), or the module of one .pyc file.

    Also takes the original depyf's calls: `decompile(indentation=...,
    temp_prefix=..., overwite_fn_name=...)`, `Decompiler.supported_opnames()` and
    `Decompiler.decompile_and_compile_like(...)`.
    """

    def __init__(self, obj, indent=4):
        self.code, self._function = _unwrap(obj)
        self.indent = indent
        self._pyc = None

    @classmethod
    def from_pyc(cls, path, indent=4):
        """A Decompiler for the .pyc file at `path`, which is read now."""
        self = cls.__new__(cls)
        self.code = self._function = None
        self.indent = indent
        self._pyc = _read(path)
        return self

    def decompile(self, indentation=None, temp_prefix=TEMP_PREFIX, overwite_fn_name=None,
                  *, overwrite_fn_name=None):
        """The source text, decompiled anew on every call.

        `indentation`: spaces per level (default: this Decompiler's `indent`);
        `temp_prefix`: the temporaries the decompiler invents are named
        `<temp_prefix><n>`; `overwrite_fn_name` (or `overwite_fn_name`, the
        original depyf's spelling): the name of the printed `def`, which is then a
        `def` even for a lambda.
        """
        indent = self.indent if indentation is None else indentation
        if overwite_fn_name is not None and overwrite_fn_name is not None and overwite_fn_name != overwrite_fn_name:
            raise TypeError("overwite_fn_name and overwrite_fn_name name the same thing; give one")
        name = overwrite_fn_name if overwrite_fn_name is not None else overwite_fn_name
        if self._pyc is not None:
            if name is not None:
                raise TypeError("a .pyc file holds a module, which has no function name to overwrite")
            source = _core.decompile_pyc(self._pyc, indent=indent)
        else:
            options = _defaults_of(self._function)
            if name is not None:
                options["def_name"] = name
            source = _core.decompile(self.code, indent=indent, **options)
        if temp_prefix == TEMP_PREFIX:
            return source
        from . import _decompiled  # (not at import: `import depyf` stays light)

        return _decompiled.rename_temps(source, temp_prefix, self.code)

    @functools.cached_property
    def source(self):
        """The source text, decompiled on first access."""
        return self.decompile()

    @staticmethod
    def supported_opnames():
        """The running Python's opcode names that the decompiler translates: every
        instruction a code object's `co_code` can hold, in opcode order.  (Not CACHE,
        the inline cache entries after an instruction, read as part of it; not the
        INSTRUMENTED_* forms nor the interpreter's own ops, which only ever appear in
        its runtime copy of the code.)"""
        import dis

        return [name for code, name in enumerate(dis.opname)
                if code < 256  # (3.12+ lists the compiler's pseudo-instructions past 255)
                and not name.startswith(("<", "INSTRUMENTED_")) and name not in _NOT_INSTRUCTIONS]

    @staticmethod
    def decompile_and_compile_like(code_to_decompile, reference_code, indentation=4,
                                   temp_prefix=TEMP_PREFIX, filepath_template=None):
        """`code_to_decompile` decompiled, written to a file and compiled back, laid out
        like `reference_code` (same arguments, cell and free variables), so that it can
        run in place of code of that layout (Dynamo's transformed code in place of the
        function it came from).  See depyf._recompile.decompile_and_compile_like."""
        from . import _recompile

        return _recompile.decompile_and_compile_like(code_to_decompile, reference_code, indentation,
                                                     temp_prefix, filepath_template)


# Opcode names that are no instruction of a code object: inline cache entries (3.11+), and
# ops only the interpreter puts into its runtime copy of the code (3.12+).
_NOT_INSTRUCTIONS = frozenset({"CACHE", "ENTER_EXECUTOR", "EXIT_INIT_CHECK", "INTERPRETER_EXIT", "RESERVED"})
