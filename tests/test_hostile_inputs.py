"""Hostile inputs through the API (issue 17, docs/limits.md): every failure is
one of the documented exceptions with a message naming the limit or the
offset, and work stays in proportion to the input.  No timing is asserted:
where cost was the bug, the work done is counted (validation_stats, the
limit an input fails on before doing more)."""

import dis
import importlib.util
import marshal
import random
import re
import sys
import textwrap
import types

import pytest

import depyf
from depyf import _core

HEADER = importlib.util.MAGIC_NUMBER + b"\0" * 12


def pyc_of(code):
    return HEADER + marshal.dumps(code)


def function_code(src, name="f"):
    return next(c for c in compile(src, "<test>", "exec").co_consts
                if isinstance(c, types.CodeType) and c.co_name == name)


def shared_levels(levels):
    """A function making one code object twice at each of `levels` levels
    (marshal references share objects so): 2**levels uses of the leaf."""
    maker = function_code("def f():\n    def g():\n        pass\n    def h():\n        pass\n    return g, h\n")
    code = function_code("def g():\n    return 'leaf'\n", "g")
    for _ in range(levels):
        code = maker.replace(co_consts=tuple(code if isinstance(c, types.CodeType) else c
                                             for c in maker.co_consts))
    return code


def module_of(code):
    module = compile("def f(): pass\n", "<test>", "exec")
    return module.replace(co_consts=tuple(code if isinstance(c, types.CodeType) else c
                                          for c in module.co_consts))


# ---- item 1: shared code objects -------------------------------------------------------------

def test_shared_code_objects_print_each_use():
    source = _core.decompile(shared_levels(4))
    assert source.count("'leaf'") == 16
    compile(source, "<decompiled>", "exec")


def test_shared_code_objects_past_the_work_limit_fail_naming_it():
    with pytest.raises(depyf.DecompilationError) as info:
        _core.decompile(shared_levels(30))
    assert info.value.reason.startswith("the work limit: decompiling needs more than")
    assert "once per use" in info.value.reason
    data = pyc_of(module_of(shared_levels(30)))
    with pytest.raises(depyf.DecompilationError, match="the work limit"):
        _core.decompile_pyc(data)
    # the listing shows each code object once
    listing = _core.disasm_pyc(data)
    assert listing.count("Disassembly of code object") == 32
    assert listing.count("listed above") == 30


def test_shared_code_objects_are_converted_once():
    # (a live DAG was copied into a tree of 2**30 code objects: out of memory)
    with pytest.raises(depyf.DecompilationError, match="the work limit"):
        depyf.decompile(shared_levels(45))


# ---- a def nested in loops: decompiled once, not once per speculation ------------------------

def test_defs_nested_in_loops_are_decompiled_once():
    depth = 20
    body = "return 1"
    for k in range(depth):
        body = (f"while x:\n    if y:\n        def f{k}():\n{textwrap.indent(body, ' ' * 12)}\n"
                f"        x = f{k}\n    else:\n        break\nreturn x")
    code = function_code("def top(x, y):\n" + textwrap.indent(body, "    "), "top")
    _core.validation_stats(reset=True)
    source = _core.decompile(code)
    stats = _core.validation_stats(reset=True)
    compile(source, "<decompiled>", "exec")
    if sys.version_info[:2] == (3, 11):  # (validation runs for the running version)
        assert stats == {"validated": depth + 1, "fallback": 0, "unchecked": 0}


# ---- item 6: only documented exceptions ------------------------------------------------------

def f(a=1):
    return a


def with_default(value):
    g = types.FunctionType(f.__code__, {}, "f", (value,))
    return g


def test_a_default_nested_deeper_than_the_limit_is_left_out():
    t = ()
    for _ in range(100_000):
        t = (t,)
    source = depyf.decompile(with_default(t))
    assert source.startswith("def f(a):")


def test_a_default_within_the_limit_is_shown():
    t = ()
    for _ in range(_core.MAX_NESTING - 2):
        t = (t,)
    source = depyf.decompile(with_default(t))
    assert eval(source[len("def f(a="):source.index("):\n")]) == t


@pytest.mark.parametrize("container", [tuple, list])
def test_a_default_printing_as_too_many_items_is_left_out(container):
    t = container([1])
    for _ in range(80):
        t = container([t, t])
    source = depyf.decompile(with_default(t))
    assert source.startswith("def f(a):")


@pytest.mark.parametrize("indent", [10**20, -(10**20), 0, 17])
def test_an_indent_out_of_range_is_a_value_error(indent):
    with pytest.raises(ValueError, match=f"indent must be between 1 and 16, not {indent}"):
        depyf.decompile(f, indent=indent)
    with pytest.raises(ValueError, match="indent must be between 1 and 16"):
        _core.decompile_pyc(pyc_of(module_of(f.__code__)), indent=indent)


@pytest.mark.parametrize("indent", ["4", 4.0, None])
def test_an_indent_of_another_type_is_a_type_error(indent):
    with pytest.raises(TypeError, match="indent must be an int"):
        depyf.decompile(f, indent=indent)


def test_the_memory_limit_is_a_memory_error_naming_it():
    code = compile("\n".join(f"def g{k}(x):\n    return x + {k}\n" for k in range(500)), "<test>", "exec")
    for call in (lambda: _core.decompile(code, memory_limit=256 << 10),
                 lambda: _core.decompile_pyc(pyc_of(code), memory_limit=256 << 10)):
        with pytest.raises(MemoryError) as info:
            call()
        assert re.match(r"out of memory: .* needs more than its memory limit of 256 KiB", str(info.value))


def test_a_memory_limit_of_another_type_is_refused():
    with pytest.raises(ValueError, match="memory_limit"):
        _core.decompile(f.__code__, memory_limit=-1)


# ---- item 7: messages -------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["and", "or"])
def test_long_flat_boolean_chains_decompile(op):
    terms = 3000
    code = function_code(f"def f():\n    return {f' {op} '.join(f'a{k}' for k in range(terms))}\n")
    _core.validation_stats(reset=True)
    source = _core.decompile(code)
    assert source.count(f" {op} ") == terms - 1
    namespace = {f"a{k}": k % 7 != 6 or op == "and" for k in range(terms)}
    exec(source, namespace)
    assert namespace["f"]() == types.FunctionType(code, namespace)()
    if sys.version_info[:2] == (3, 11):
        assert _core.validation_stats(reset=True)["validated"] == 1


def test_nesting_past_the_region_limit_names_that_limit():
    # (3.11 makes each arm of `a if c else b if c else ...` a value region in
    # the one before; 3.8-3.10 copy the `return` into every arm and 3.12+
    # compiles the chain so that it is not nested: then it decompiles)
    limit = 4 * _core.MAX_NESTING
    deep = " if c else ".join(f"a{k}" for k in range(limit + 1))
    code = function_code(f"def f(c):\n    return {deep}\n")
    nested = sum(ins.opname == "RETURN_VALUE" for ins in dis.get_instructions(code)) == 1
    try:
        _core.decompile(code)
    except depyf.DecompilationError as e:
        assert e.reason == f"blocks and expressions nested more than {limit} deep"
    else:
        assert not nested or sys.version_info >= (3, 12), "the chain should have passed the region limit"


def bytes_keyword_name():
    def call():
        return g(x=1)  # noqa: F821
    names = tuple(c for c in call.__code__.co_consts if isinstance(c, tuple))
    assert names == (("x",),)
    return call.__code__.replace(co_consts=tuple((b"\xff\xfe",) if c == ("x",) else c
                                                 for c in call.__code__.co_consts))


@pytest.mark.skipif(sys.version_info < (3, 11), reason="keyword names are a constant from 3.11 on")
def test_a_bytes_keyword_name_is_an_error_naming_the_offset():
    code = bytes_keyword_name()
    with pytest.raises(depyf.DecompilationError) as info:
        _core.decompile(code)
    assert info.value.offset is not None
    assert "keyword argument name 0 of the call is not an identifier" in info.value.reason
    # in a .pyc file: the byte of the file the bytes constant is at
    data = pyc_of(module_of(code))
    at = data.index(b"\x02\x00\x00\x00\xff\xfe") - 1  # its type code, then its length
    assert data[at] & 0x7F == ord("s")
    with pytest.raises(depyf.DecompilationError, match=f"the constant at byte {at} of the file"):
        _core.decompile_pyc(data)


def test_bad_marshal_data_names_the_byte_of_the_file():
    with pytest.raises(ValueError, match="bad marshal data at byte 16: unknown type code 0x07"):
        _core.decompile_pyc(HEADER + b"\x07")
    data = pyc_of(compile("x = 'text'\n", "<test>", "exec"))
    cut = len(data) - 3
    with pytest.raises(ValueError, match=r"marshal data truncated at byte \d+"):
        _core.decompile_pyc(data[:cut])


def test_damaged_pycs_raise_only_documented_exceptions():
    data = pyc_of(compile(open(depyf.decompiler.__file__, encoding="utf-8").read(), "decompiler.py", "exec"))
    rng = random.Random(17)
    for _ in range(300):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(16, len(damaged))] = rng.choice([0xFF, 0x80, 0xC3, 0x73, 0xF3, rng.randrange(256)])
        for call in (_core.decompile_pyc, _core.disasm_pyc):
            try:
                call(bytes(damaged))
            except (ValueError, depyf.DecompilationError) as e:
                assert not isinstance(e, UnicodeError), e
                assert str(e)
            except MemoryError as e:
                assert str(e)


def test_a_pyc_header_is_checked_alone():
    # (the command line refuses a file from its first 16 bytes, before reading the rest)
    data = pyc_of(f.__code__)
    assert _core.check_pyc_header(data[:16]) == sys.version_info[1]
    with pytest.raises(ValueError, match="not a .pyc file: 15 bytes"):
        _core.check_pyc_header(data[:15])
    with pytest.raises(ValueError, match="magic number"):
        _core.check_pyc_header(b"\0" * (1 << 20))


def test_the_pyc_api_reads_only_regular_files(tmp_path):
    import os

    fifo = tmp_path / "fifo.pyc"
    os.mkfifo(fifo)  # (open() would block until a writer came)
    with pytest.raises(OSError, match="a FIFO"):
        depyf.decompiler.decompile_pyc(str(fifo))
    with pytest.raises(OSError, match="a character device"):
        depyf.decompiler.disasm_pyc("/dev/zero")
    sparse = tmp_path / "sparse.pyc"
    with open(sparse, "wb") as fh:
        fh.truncate(1 << 31)  # 2 GiB of nothing, refused on its size before a byte is read
    with pytest.raises(OSError, match="too large"):
        depyf.decompiler.decompile_pyc(str(sparse))
    bad = tmp_path / "bad.pyc"
    bad.write_bytes(b"\0" * 64)
    with pytest.raises(ValueError, match="not a .pyc file"):
        depyf.Decompiler.from_pyc(str(bad))


@pytest.mark.skipif(sys.version_info < (3, 10), reason="3.8/3.9 keep every value of a display on the stack, "
                    "which each conditional copies: quadratic still (docs/limits.md)")
def test_a_display_with_a_conditional_in_every_value_needs_memory_in_proportion():
    # Each conditional expression is walked on copies of the stack, which hold the
    # dict being built; copying that dict before each addition (to keep the copies
    # apart) was quadratic: 24,000 values needed more than 8 KiB each (about 3 now).
    n = 24000
    src = "def f(a, b, c):\n    return {%s}\n" % ", ".join("'k%d': (a if c else b)" % i for i in range(n))
    out = _core.decompile(function_code(src), validate=False, memory_limit=n * 8 << 10)
    assert "depyf:" not in out and out.count(" if c else b") == n
