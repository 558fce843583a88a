"""The depyf package API: which code each kind of callable reaches the core
with, the errors it raises, the extension's conversion limits, threads."""

import functools
import importlib.util
import opcode
import os
import re
import subprocess
import sys
import threading
import types

import pytest

import depyf
from depyf import _core, decompiler

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def core_ready(fn, *args, **kwargs):
    """Calls a core function; skips the test while that part of the core is a stub."""
    try:
        return fn(*args, **kwargs)
    except (depyf.DecompilationError, ValueError) as e:
        if "not built yet" in str(e):
            pytest.skip(f"core not built yet: {e}")
        raise


def qualname_of(code):
    return getattr(code, "co_qualname", code.co_name)  # co_qualname is 3.11+


# ---- callables of every accepted kind -------------------------------------

def plain(x):
    return x + 1


lam = lambda y: y * 2  # noqa: E731


def _original(x):
    return x * 3


def passthrough(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


decorated_twice = passthrough(passthrough(_original))


def _cached(x):
    return x - 1


cached = functools.lru_cache(maxsize=None)(_cached)


async def coroutine_fn():
    return 1


def generator_fn():
    yield 1


class Widget:
    def method(self, a):
        return a

    @classmethod
    def cm(cls):
        return cls

    @staticmethod
    def sm():
        return 3

    def __call__(self, z):
        return z

    pm = functools.partialmethod(method, 1)


WIDGET = Widget()

ACCEPTED = [
    ("code object", plain.__code__, plain.__code__),
    ("function", plain, plain.__code__),
    ("lambda", lam, lam.__code__),
    ("async def", coroutine_fn, coroutine_fn.__code__),
    ("generator function", generator_fn, generator_fn.__code__),
    ("bound method", WIDGET.method, Widget.method.__code__),
    ("classmethod through the class", Widget.cm, Widget.__dict__["cm"].__func__.__code__),
    ("classmethod object", Widget.__dict__["cm"], Widget.__dict__["cm"].__func__.__code__),
    ("staticmethod object", Widget.__dict__["sm"], Widget.sm.__code__),
    ("partial", functools.partial(plain, 1), plain.__code__),
    ("partial of a bound method", functools.partial(WIDGET.method, 1), Widget.method.__code__),
    ("partial of a classmethod", functools.partial(Widget.cm), Widget.__dict__["cm"].__func__.__code__),
    ("partialmethod", Widget.__dict__["pm"], Widget.method.__code__),
    ("decorated twice", decorated_twice, _original.__code__),
    ("lru_cache", cached, _cached.__code__),
    ("callable object", WIDGET, Widget.__call__.__code__),
    ("partial of a callable object", functools.partial(WIDGET, 2), Widget.__call__.__code__),
]


@pytest.fixture
def reached(monkeypatch):
    """Replaces _core.decompile with a fake; returns the list of (code, indent) it saw."""
    seen = []

    def fake(code, indent=4, linemap=False, **defaults):
        seen.append((code, indent))
        return "fake source"

    monkeypatch.setattr(decompiler._core, "decompile", fake)
    return seen


@pytest.mark.parametrize("obj, code", [c[1:] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_each_callable_kind_reaches_the_core_with_its_code(reached, obj, code):
    assert depyf.decompile(obj) == "fake source"
    assert reached == [(code, 4)]


NAMED = [c for c in ACCEPTED if c[2].co_name != "<lambda>"]


@pytest.mark.parametrize("obj, code", [c[1:] for c in NAMED], ids=[c[0] for c in NAMED])
def test_each_callable_kind_decompiles_to_its_def(obj, code):
    source = core_ready(depyf.decompile, obj)
    assert re.match(rf"(async )?def {code.co_name}\(", source), source


def test_indent_is_passed_through(reached):
    depyf.decompile(plain, indent=2)
    assert reached == [(plain.__code__, 2)]


def test_wrapped_chain_is_followed_to_the_end():
    fn = _original
    for _ in range(decompiler.MAX_UNWRAP - 1):
        fn = passthrough(fn)
    assert decompiler.code_of(fn) is _original.__code__


def test_wrapped_cycle_is_a_value_error():
    def a():
        pass

    a.__wrapped__ = a
    with pytest.raises(ValueError, match="__wrapped__"):
        depyf.decompile(a)


# ---- a live function's defaults ---------------------------------------------

SENTINEL = object()


def with_defaults(a, b=2, c=SENTINEL, d=[1, {2: (3, None)}], e=len, *, f="x", g=object()):  # noqa: B006
    return a


def rebuilt(source, name):
    namespace = {"SENTINEL": SENTINEL}
    exec(source, namespace)
    return namespace[name]


def test_defaults_are_shown_as_literals_names_or_reprs():
    fn = rebuilt(core_ready(depyf.decompile, with_defaults), "with_defaults")
    assert fn.__defaults__ == (2, SENTINEL, [1, {2: (3, None)}], len)
    assert fn.__defaults__[1] is SENTINEL
    assert fn.__kwdefaults__ == {"f": "x"}  # g's default has no expression: g stays required


def test_positional_defaults_are_all_shown_or_none():
    def unshowable(a, b=1, c=object()):
        return a

    assert rebuilt(core_ready(depyf.decompile, unshowable), "unshowable").__defaults__ is None


def test_defaults_reach_the_core_through_wrappers():
    source = core_ready(depyf.Decompiler, functools.partial(with_defaults, 1)).source
    assert rebuilt(source, "with_defaults").__defaults__ == with_defaults.__defaults__


def test_defaults_of_the_wrong_type_are_refused():
    with pytest.raises(TypeError, match="defaults must be a tuple"):
        _core.decompile(plain.__code__, defaults=[1])
    with pytest.raises(TypeError, match="kwdefaults keys must be str"):
        _core.decompile(plain.__code__, kwdefaults={1: 2})


# ---- rejected objects: TypeError naming the type ---------------------------

REJECTED = [
    ("int", 42),
    ("str", "def f(): pass"),
    ("object", object()),
    ("builtin_function_or_method", len),
    ("builtin_function_or_method", [].append),
    ("module", types),
    ("type", Widget),
    ("partial", functools.partial(len)),
]


@pytest.mark.parametrize("type_name, obj", REJECTED, ids=[repr(o)[:40] for _, o in REJECTED])
def test_objects_without_bytecode_raise_type_error_naming_their_type(type_name, obj):
    with pytest.raises(TypeError, match=rf"^cannot decompile {type_name} object: "):
        depyf.decompile(obj)


def test_a_module_with_a_code_object_is_accepted(reached):
    module = types.ModuleType("m")
    module.__code__ = plain.__code__
    depyf.decompile(module)
    assert reached == [(plain.__code__, 4)]


def test_core_functions_take_only_code_objects():
    for fn in (_core.decompile, _core.disasm, _core.ir_dump):
        with pytest.raises(TypeError):
            fn(plain)


@pytest.mark.parametrize("indent", [0, -1, 17])
def test_indent_out_of_range_is_a_value_error(indent):
    with pytest.raises(ValueError, match="indent"):
        _core.decompile(plain.__code__, indent=indent)


# ---- Decompiler -------------------------------------------------------------

def test_decompiler_source_is_computed_once(reached):
    d = depyf.Decompiler(WIDGET.method, indent=8)
    assert d.code is Widget.method.__code__
    assert d.source == "fake source" and d.source == "fake source"
    assert reached == [(Widget.method.__code__, 8)]
    d.decompile()
    assert len(reached) == 2


def test_decompiler_from_pyc_hands_the_file_bytes_to_the_core(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(decompiler._core, "decompile_pyc", lambda data, indent=4: seen.append((data, indent)) or "m")
    path = tmp_path / "m.pyc"
    data = importlib.util.MAGIC_NUMBER + bytes(12) + b"some bytes"  # (its header is checked first)
    path.write_bytes(data)
    assert depyf.Decompiler.from_pyc(path, indent=3).source == "m"
    assert seen == [(data, 3)]


def test_decompile_pyc_of_a_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        decompiler.decompile_pyc(tmp_path / "missing.pyc")


# ---- DecompilationError -----------------------------------------------------

def test_decompilation_error_is_exported_and_has_default_attributes():
    assert depyf.DecompilationError is _core.DecompilationError
    assert issubclass(depyf.DecompilationError, Exception)
    assert depyf.DecompilationError.__module__ == "depyf"
    e = depyf.DecompilationError("x")
    assert (e.qualname, e.offset, e.reason) == (None, None, None)


def unusable_opcode():
    return max(b for b in range(256) if opcode.opname[b].startswith("<"))


def test_bad_bytecode_raises_decompilation_error_with_attributes():
    code = plain.__code__
    bad = code.replace(co_code=bytes([unusable_opcode(), 0]) * (len(code.co_code) // 2))
    with pytest.raises(depyf.DecompilationError) as info:
        _core.decompile(bad)
    e = info.value
    assert e.qualname == qualname_of(code)
    assert isinstance(e.reason, str) and e.reason
    if e.offset is None:
        assert str(e) == f"cannot decompile {e.qualname}: {e.reason}"
    else:
        assert isinstance(e.offset, int) and 0 <= e.offset < len(bad.co_code)
        assert str(e) == f"cannot decompile {e.qualname} at offset {e.offset}: {e.reason}"


def nested(levels):
    value = 0
    for _ in range(levels):
        value = (value,)
    return value


def outer():
    def inner():
        return 1
    return inner


def with_const(code, extra):
    return code.replace(co_consts=code.co_consts + (extra,))


# Nesting levels: the top code object is 0, its constants 1, a code object
# among them 1 and its constants 2, and so on, up to MAX_NESTING.
def test_constants_nested_too_deep_name_the_innermost_code_object():
    inner = next(c for c in outer.__code__.co_consts if isinstance(c, types.CodeType))
    bad_inner = with_const(inner, nested(_core.MAX_NESTING - 1))
    bad_outer = outer.__code__.replace(
        co_consts=tuple(bad_inner if c is inner else c for c in outer.__code__.co_consts))
    with pytest.raises(depyf.DecompilationError) as info:
        _core.decompile(bad_outer)
    assert info.value.qualname == qualname_of(inner)
    assert info.value.offset is None
    assert info.value.reason == f"constants nested deeper than {_core.MAX_NESTING} levels"


def test_constants_within_the_nesting_limit_are_converted():
    code = with_const(plain.__code__, nested(_core.MAX_NESTING - 1))
    try:
        _core.disasm(code)
    except depyf.DecompilationError as e:
        assert "nested deeper" not in e.reason


def test_code_objects_nested_too_deep_are_refused():
    code = plain.__code__
    for _ in range(_core.MAX_NESTING):
        code = with_const(plain.__code__, code)
    # (plain's own constants are shared by every level: converted once, they
    # are within the limit; the 101 code objects are not)
    with pytest.raises(depyf.DecompilationError, match=f"nested more than {_core.MAX_NESTING} deep"):
        _core.disasm(code)


def test_a_name_with_a_nul_character_is_refused():
    code = plain.__code__.replace(co_names=("a\0b",))
    with pytest.raises(depyf.DecompilationError, match="co_names contains a NUL character"):
        _core.decompile(code)


class Unprintable:
    def __repr__(self):
        raise RuntimeError("no repr")


class Interrupting:
    def __repr__(self):
        raise KeyboardInterrupt


def test_keyboard_interrupt_in_a_constant_repr_propagates():
    with pytest.raises(KeyboardInterrupt):
        _core.decompile(with_const(plain.__code__, Interrupting()))


def literals():
    return (1267650600228229401496703205376, -1180591620717411303424, 9223372036854775807,
            -9223372036854775808, "h\u00e9llo \ud800", b"\x00\xff", 1.5, -0.0, 1e999, 3j,
            (1, (2.5, None)), ..., True, False)


def test_literal_constants_survive_decompilation():
    source = core_ready(depyf.decompile, literals)
    namespace = {}
    exec(source, namespace)
    assert repr(namespace["literals"]()) == repr(literals())


def returns_placeholder():
    return "placeholder"


def test_a_constant_whose_repr_raises_is_shown_by_type_name():
    consts = returns_placeholder.__code__.co_consts
    code = returns_placeholder.__code__.replace(
        co_consts=tuple(Unprintable() if c == "placeholder" else c for c in consts))
    assert "<Unprintable object>" in core_ready(_core.disasm, code)


# ---- line map, IR dump, threads ---------------------------------------------

def branchy(x):
    if x > 0:
        y = x * 2
    else:
        y = -x
    return y


def test_linemap_maps_offsets_to_output_lines():
    source, linemap = core_ready(_core.decompile, branchy.__code__, linemap=True)
    assert isinstance(source, str) and isinstance(linemap, list) and linemap
    lines = source.count("\n") + 1
    offsets = [offset for offset, _ in linemap]
    assert offsets == sorted(offsets)
    for entry in linemap:
        assert type(entry) is tuple and len(entry) == 2
        offset, line = entry
        assert 0 <= offset < len(branchy.__code__.co_code) and offset % 2 == 0
        assert 1 <= line <= lines


def test_ir_dump_lists_the_top_level_code():
    text = core_ready(_core.ir_dump, branchy.__code__)
    assert "return" in text.lower()


def test_disasm_covers_nested_code_objects():
    text = core_ready(depyf.decompiler.disasm, outer)
    assert "inner" in text


def outcome(code):
    try:
        return "ok", _core.decompile(code)
    except depyf.DecompilationError as e:
        return "error", str(e)


def test_threads_decompiling_at_once_get_the_same_results():
    codes = [plain.__code__, branchy.__code__, outer.__code__, Widget.method.__code__, literals.__code__]
    expected = [outcome(c) for c in codes]
    mismatches = []

    def work():
        for _ in range(20):
            for code, want in zip(codes, expected):
                got = outcome(code)
                if got != want:
                    mismatches.append((code.co_name, got, want))

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mismatches == []


# ---- the package -----------------------------------------------------------

def test_import_depyf_does_not_import_torch():
    check = "import sys, depyf; depyf.decompile; print('torch' in sys.modules)"
    # (not from the checkout: before 3.11, `-c` puts the working directory first on sys.path)
    out = subprocess.run([sys.executable, "-c", check], cwd=os.path.dirname(os.path.dirname(depyf.__file__)),
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


WARNS_WHEN_COMPILED = """
import warnings
warnings.simplefilter("error")  # (-W error: before depyf, as a program's own filters are)
import depyf
from depyf import _core
source = "def f(x):\\n    return x is 1\\n"
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    f = compile(source, "m.py", "exec").co_consts[0]
before = _core.validation_stats()["validated"]
print(depyf.decompile(f).strip().splitlines()[-1], _core.validation_stats()["validated"] - before)
"""


def test_what_the_compiler_warns_about_in_the_checked_text_is_not_raised_or_printed():
    """`x is 1` makes compile() warn (an error under -W error); validation compiles the
    decompiled text, which says the same: depyf must neither print the warning nor fail."""
    out = subprocess.run([sys.executable, "-c", WARNS_WHEN_COMPILED], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(depyf.__file__)), check=True)
    assert out.stdout.split() == ["return", "x", "is", "1", "1"] and out.stderr == "", out


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        depyf.nonexistent  # noqa: B018


def test_lazy_names_are_listed():
    assert {"prepare_debug", "debug", "install", "uninstall", "explain"} <= set(dir(depyf))


@pytest.mark.parametrize("name, module", [("prepare_debug", "depyf.prepare"), ("debug", "depyf.prepare"),
                                          ("install", "depyf.logging_hook"),
                                          ("uninstall", "depyf.logging_hook"), ("explain", "depyf.explain")])
def test_lazy_names_come_from_their_modules(name, module):
    torch = pytest.importorskip("torch")
    if getattr(torch, "__file__", None) is None:  # a `torch` directory without torch installed
        pytest.skip("torch not installed")
    path = os.path.join(REPO, *module.split("."))
    if not os.path.exists(path + ".py") and not os.path.isdir(path):
        pytest.skip(f"{module} not written yet")
    value = getattr(depyf, name)
    assert value is sys.modules[module] or value is getattr(sys.modules[module], name)


def test_version_matches_pyproject():
    with open(os.path.join(REPO, "pyproject.toml")) as f:
        declared = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
    assert depyf.__version__ == declared
