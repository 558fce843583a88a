"""The original depyf's (0.20.0) public names that need no torch: each imports from where it
did, takes the original's arguments and does what it did, right where the original was wrong
(README: "Compatibility with the original depyf").  The torch ones: tests/torch/test_compat_torch.py."""

import functools
import importlib.metadata
import inspect
import os
import re
import subprocess
import sys
import threading
import types

import pytest

import depyf
import depyf.decompiler
import depyf.utils
from depyf.decompiler import DecompilationError, Decompiler

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def params(fn):
    return list(inspect.signature(fn).parameters)


def broken(fn):
    """`fn`'s code with bytecode no Python could run (an opcode number no version uses)."""
    code = fn.__code__
    return code.replace(co_code=bytes([255, 0]) * (len(code.co_code) // 2))


def all_kinds(a, /, b, c=1, *args, d, e=2, **kw):
    return (a, b, c, args, d, e, kw)


def exec_def(source, name, scope=None):
    namespace = dict(scope or {})
    exec(compile(source, "<test>", "exec"), namespace)
    return namespace[name]


# ---- depyf.decompiler -------------------------------------------------------------

def test_decompiler_decompilation_error_is_depyfs_and_is_raised_for_bad_bytecode():
    assert depyf.decompiler.DecompilationError is depyf.DecompilationError
    with pytest.raises(depyf.decompiler.DecompilationError) as info:
        Decompiler(broken(all_kinds)).decompile()
    assert info.value.qualname == "all_kinds" and info.value.reason


def test_decompile_takes_the_original_keywords_and_the_right_spelling():
    assert params(Decompiler.decompile)[:4] == ["self", "indentation", "temp_prefix", "overwite_fn_name"]
    source = Decompiler(all_kinds).decompile(indentation=2, overwite_fn_name="renamed")
    assert source.startswith("def renamed(a, /, b, c=1, *args, d, e=2, **kw):\n  return ")
    renamed = exec_def(source, "renamed")
    assert renamed(1, 2, 3, 4, d=5, z=6) == all_kinds(1, 2, 3, 4, d=5, z=6)
    assert Decompiler(all_kinds).decompile(overwrite_fn_name="renamed") == Decompiler(all_kinds).decompile(
        indentation=4, overwite_fn_name="renamed")
    with pytest.raises(TypeError, match="give one"):
        Decompiler(all_kinds).decompile(overwite_fn_name="x", overwrite_fn_name="y")


def test_decompile_twice_gives_the_same_source():
    # (the original's lru_cache on decompile() appended the body again on a second call)
    d = Decompiler(all_kinds)
    assert d.decompile(indentation=2) != d.decompile() == d.decompile() == depyf.decompile(all_kinds)


def test_a_lambda_under_a_given_name_is_a_def():
    source = Decompiler(lambda q, r=3: q * r).decompile(overwite_fn_name="times")
    assert source.startswith("def times(q, r=3):")
    assert exec_def(source, "times")(5) == 15


def test_temp_prefix_must_start_identifiers():
    for bad in ("1x", "a-b", "", 3):
        with pytest.raises(ValueError, match="temp_prefix"):
            Decompiler(all_kinds).decompile(temp_prefix=bad)
    # code without temporaries is unchanged by any valid prefix
    assert Decompiler(all_kinds).decompile(temp_prefix="tmp_") == Decompiler(all_kinds).decompile()


def test_supported_opnames_are_the_instructions_the_core_translates():
    import dis

    names = Decompiler.supported_opnames()
    assert names == [n for n in dis.opname if n in names], "in opcode order"
    assert {"LOAD_FAST", "STORE_FAST", "RETURN_VALUE", "EXTENDED_ARG"} <= set(names)
    assert not [n for n in names if n.startswith(("<", "INSTRUMENTED_")) or n == "CACHE"]
    # every instruction of real code is among them
    used = {i.opname for fn in (all_kinds, inspect.getsource, functools.reduce, re.sub)
            if hasattr(fn, "__code__") for i in dis.get_instructions(fn)}
    assert used <= set(names)
    # and each is one the C lifter handles for this Python (checked where the sources are)
    table = os.path.join(REPO, "src", "core", "opcodes", "table_3_%d.c" % sys.version_info[1])
    lift = os.path.join(REPO, "src", "core", "lift.c")
    if not (os.path.exists(table) and os.path.exists(lift)):
        pytest.skip("no C sources next to the tests")
    with open(table) as f:
        mapped = set(re.findall(r"\] = DPO_(\w+)", f.read().split(".op = {")[1]))
    with open(lift) as f:
        text = f.read()
    simple = set(re.findall(r"\[DPO_(\w+)\] = \{", text.split("SIMPLE[DPO_COUNT]")[1].split("};")[0]))
    handled = simple | set(re.findall(r"case DPO_(\w+):", text)) | {"EXTENDED_ARG"}  # (decoded before lifting)
    assert set(names) <= mapped & handled
    assert (mapped & handled) - {"CACHE"} <= set(names)


# ---- Decompiler.decompile_and_compile_like -----------------------------------------

def reference(a, b):
    return a + b


def replacement(a, b):
    x = a * b
    return [x - 1, a]


def test_decompile_and_compile_like_without_a_file_keeps_the_reference_name():
    assert params(Decompiler.decompile_and_compile_like) == [
        "code_to_decompile", "reference_code", "indentation", "temp_prefix", "filepath_template"]
    code = Decompiler.decompile_and_compile_like(replacement.__code__, reference.__code__)
    assert (code.co_name, code.co_filename) == ("reference", "noname")
    assert types.FunctionType(code, globals())(3, 4) == replacement(3, 4)


def test_decompile_and_compile_like_writes_one_file_per_distinct_source(tmp_path):
    template = str(tmp_path / "__transformed_code_%s_for_reference.py")
    first = Decompiler.decompile_and_compile_like(replacement.__code__, reference.__code__,
                                                  indentation=2, filepath_template=template)
    path = template % 0
    assert first.co_filename == path and first.co_name == "__transformed_code_0_for_reference"
    with open(path) as f:
        text = f.read()
    assert text.startswith("def __transformed_code_0_for_reference(a, b):\n  x = a * b\n")
    assert types.FunctionType(first, globals())(3, 4) == replacement(3, 4)
    # a debugger sees the file's lines: the code's first line is the def's
    assert first.co_firstlineno == 1
    again = Decompiler.decompile_and_compile_like(replacement.__code__, reference.__code__,
                                                  indentation=2, filepath_template=template)
    assert again.co_filename == path and sorted(os.listdir(tmp_path)) == [os.path.basename(path)]
    other = Decompiler.decompile_and_compile_like(reference.__code__, reference.__code__,
                                                  filepath_template=template)
    assert other.co_filename == template % 1 and other.co_name == "__transformed_code_1_for_reference"
    assert types.FunctionType(other, globals())(3, 4) == 7


def closure_pair():
    y = 10

    def uses(a):
        return a + y

    def also_uses(a):
        z = a * y
        return z

    return uses, also_uses


def test_decompile_and_compile_like_reads_free_variables_from_the_closure(tmp_path):
    uses, also_uses = closure_pair()
    code = Decompiler.decompile_and_compile_like(also_uses.__code__, uses.__code__,
                                                 filepath_template=str(tmp_path / "clo_%s.py"))
    assert code.co_freevars == ("y",)
    assert types.FunctionType(code, globals(), None, None, uses.__closure__)(3) == 30


def test_decompile_and_compile_like_keeps_constants_that_have_no_literal(tmp_path):
    marker = object()

    def returns_constant(a, b):
        return [a, "placeholder", (b, "placeholder")]

    swap = tuple(marker if c == "placeholder" else c for c in returns_constant.__code__.co_consts)
    code = returns_constant.__code__.replace(co_consts=swap)
    assert "_depyf_const_" in Decompiler(code).decompile()
    back = Decompiler.decompile_and_compile_like(code, reference.__code__,
                                                 filepath_template=str(tmp_path / "k_%s.py"))
    result = types.FunctionType(back, globals())(1, 2)
    assert result[0] == 1 and result[1] is marker and result[2][1] is marker


def test_decompile_and_compile_like_refuses_another_layout():
    def three(a, b, c):
        return a

    with pytest.raises(DecompilationError, match="laid out like"):
        Decompiler.decompile_and_compile_like(three.__code__, reference.__code__)


def test_decompile_and_compile_like_refuses_a_template_whose_names_are_no_identifiers(tmp_path):
    with pytest.raises(ValueError, match="identifier"):
        Decompiler.decompile_and_compile_like(replacement.__code__, reference.__code__,
                                              filepath_template=str(tmp_path / "my-code_%s.py"))


# ---- depyf.utils -------------------------------------------------------------------

def test_utils_signatures_are_the_originals():
    assert params(depyf.utils.get_function_signature)[:2] == ["code_obj", "overwite_fn_name"]
    assert params(depyf.utils.collect_all_code_objects) == ["code"]
    assert params(depyf.utils.safe_create_directory) == ["path"]
    assert params(depyf.utils.get_code_owner) == ["fn"]
    assert params(depyf.utils.decompile_ensure)[:2] == ["fn", "overwite_fn_name"]


def comprehension_code():
    """A comprehension's own code object (3.12+ inlines list comprehensions: a generator
    expression keeps its code object on every version)."""
    return next(c for c in compile("(x for x in y)", "<c>", "exec").co_consts if hasattr(c, "co_code"))


@pytest.mark.parametrize("fn", [all_kinds, lambda q, *r: q, reference, closure_pair, comprehension_code()],
                         ids=["every kind", "lambda", "plain", "nested defs", "comprehension"])
def test_get_function_signature_is_a_def_with_the_same_parameters(fn):
    code = getattr(fn, "__code__", fn)
    header = depyf.utils.get_function_signature(code)
    assert re.fullmatch(r"def \w+\(.*\):\n", header)
    made = exec_def(header + "    pass\n", header[4:header.index("(")])
    if code.co_name.startswith("<genexpr"):  # (its implicit argument `.0`)
        assert header == "def genexpr(comp_arg_0):\n", header
        return
    real = [(p.name, p.kind) for p in inspect.signature(types.FunctionType(code, {})).parameters.values()]
    assert [(p.name, p.kind) for p in inspect.signature(made).parameters.values()] == real
    assert depyf.utils.get_function_signature(code, "other").startswith("def other(")
    assert depyf.utils.get_function_signature(code, overwrite_fn_name="other").startswith("def other(")


def test_get_function_signature_keeps_keyword_only_and_positional_only_markers():
    # (the original printed `def all_kinds(a, b, c, d, e, *args, **kw)`: d and e became positional)
    assert depyf.utils.get_function_signature(all_kinds.__code__) == \
        "def all_kinds(a, /, b, c, *args, d, e, **kw):\n"


def test_collect_all_code_objects_is_depth_first_from_the_code():
    found = depyf.utils.collect_all_code_objects(closure_pair.__code__)
    assert [c.co_name for c in found] == ["closure_pair", "uses", "also_uses"]
    assert found[0] is closure_pair.__code__


class Owner:
    def method(self):
        return 1

    def __call__(self):
        return 2


def decorate(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)
    return wrapper


@decorate
def decorated():
    return 3


@pytest.mark.parametrize("given, owner", [
    (Owner().method, Owner.method), (Owner(), Owner.__call__), (functools.partial(all_kinds, 1), all_kinds),
    (functools.lru_cache()(reference), reference), (decorated, decorated.__wrapped__), (reference, reference),
    (len, len), (Owner, Owner)],
    ids=["bound method", "callable object", "partial", "lru_cache", "decorator", "function", "builtin", "class"])
def test_get_code_owner_finds_the_object_whose_code_can_be_replaced(given, owner):
    assert depyf.utils.get_code_owner(given) is owner


def test_replacing_the_owners_code_changes_what_the_bound_method_runs():
    obj = Owner()
    owner = depyf.utils.get_code_owner(obj.method)
    saved = owner.__code__
    try:
        owner.__code__ = (lambda self: 41).__code__
        assert obj.method() == 41
    finally:
        owner.__code__ = saved


def test_get_code_owner_stops_at_a_wrapper_cycle():
    class Loop:
        pass

    loop = Loop()
    loop.__wrapped__ = loop
    with pytest.raises(ValueError, match="cycle"):
        depyf.utils.get_code_owner(loop)


def test_safe_create_directory_from_many_threads_and_over_a_file(tmp_path):
    target = tmp_path / "a" / "b" / "c"
    errors = []

    def make():
        try:
            depyf.utils.safe_create_directory(str(target))
        except Exception as e:  # pragma: no cover - what the test is looking for
            errors.append(e)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and target.is_dir()
    depyf.utils.safe_create_directory(str(target))  # again: nothing to do
    (tmp_path / "file").write_text("")
    with pytest.raises(FileExistsError):
        depyf.utils.safe_create_directory(str(tmp_path / "file"))


def test_decompile_ensure_gives_source_or_a_def_that_says_it_failed():
    source = depyf.utils.decompile_ensure(reference.__code__, "again")
    assert exec_def(source, "again")(2, 5) == 7
    failed = depyf.utils.decompile_ensure(broken(all_kinds))
    assert failed == "def all_kinds(a, /, b, c, *args, d, e, **kw):\n    'Failed to decompile.'\n"
    exec_def(failed, "all_kinds")  # it compiles


# ---- the package ---------------------------------------------------------------------

def test_version_is_0_1_0_everywhere():
    assert depyf.__version__ == "0.1.0"
    try:
        installed = importlib.metadata.version("depyf")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("depyf is not installed (a developer build)")
    assert installed == "0.1.0"


def test_the_torch_free_modules_do_not_import_torch():
    check = "import sys, depyf.utils, depyf.decompiler; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", check], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
