"""Source shapes (issue 11): the cases of behaviour_cases_shapes.py
decompile without the state-machine fallback, asserts print as `assert`,
annotated assignments of module and class bodies as annotations, 3.13
docstrings indented with their body; module-level shapes are checked by
executing the original and the decompiled module and comparing the
namespaces."""
import sys

import pytest

import behaviour_cases
import depyf
from known_fallback import check_structured

SHAPE_CASES = [(fn, inputs) for fn, inputs in behaviour_cases.CASES if fn.__module__ == "behaviour_cases_shapes"]


def test_there_are_shape_cases():
    assert len(SHAPE_CASES) >= 8


@pytest.mark.parametrize("fn", [fn for fn, _ in SHAPE_CASES], ids=[fn.__name__ for fn, _ in SHAPE_CASES])
def test_no_state_machine(fn):
    check_structured(fn, False)


def _code_objects(code):
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            yield const
            yield from _code_objects(const)


def _run_module(source):
    # a module of its own in sys.modules (dataclasses looks its globals up there)
    import types
    module = types.ModuleType("shapes_module")
    sys.modules["shapes_module"] = module
    try:
        exec(compile(source, "<shapes module>", "exec"), module.__dict__)
    finally:
        del sys.modules["shapes_module"]
    namespace = dict(module.__dict__)
    namespace.pop("__builtins__", None)
    return namespace


DOCSTRINGS = '''\
"""Module doc.

  Indented line.
"""


def f(x):
    """Doc
    string.

      indented more
    """
    return x


class C:
    """Class doc.

    More.
    """

    def m(self):
        """One line."""

        def inner():
            """Inner
            doc
            """
        return inner


def g():
    """
    Starts on the second line.
    """


def h():
    """Only the first line
    """
'''


def test_docstrings_keep_their_value_and_indentation():
    code = compile(DOCSTRINGS, "<docstrings>", "exec")
    source = depyf.decompile(code)
    again = compile(source, "<decompiled>", "exec")
    docs = [c.co_consts[:1] for c in _code_objects(code)]
    assert docs == [c.co_consts[:1] for c in _code_objects(again)], source
    want, got = _run_module(DOCSTRINGS), _run_module(source)
    for name in ("f", "C", "g", "h"):
        assert got[name].__doc__ == want[name].__doc__, source
    assert got["C"].m.__doc__ == want["C"].m.__doc__
    assert got["__doc__"] == want["__doc__"]
    # indented with the body, as written (3.13 stores them dedented)
    assert '    """Doc\n    string.\n\n      indented more\n    """\n' in source, source
    assert '            """Inner\n            doc\n            """\n' in source, source


# --- assert: printed as `assert`, recompiling to the same bytecode ----------------------

ASSERTS = {
    "plain": "def f(x):\n    assert x is not None\n    return x",
    "message": "def f(x):\n    assert x > 0, f'bad {x!r}'\n    return x",
    "and, or, not": "def f(x, y):\n    assert x and y, 'both'\n    assert x or y\n    assert not x or y\n    return 1",
    "chained comparison": "def f(x, y, z):\n    assert x < y < z, 'chain'\n    assert 0.0 <= x <= 1.0\n    return 2",
    "in a for loop": "def f(xs):\n    for x in xs:\n        assert x > 0, x\n    return xs",
    "in a while loop": "def f(xs):\n    while xs:\n        xs = xs[1:]\n        assert xs != [3]\n    return xs",
    "ending both branches": "def f(x):\n    if x:\n        assert x > 1\n    else:\n        assert x is None, 'n'\n    g(x)",
    "inside an if in a loop": "def f(xs):\n    for x in xs:\n        g(x)\n        if x:\n            assert x > 2",
    "in a try body": "def f(x):\n    try:\n        assert x, 't'\n        y = 1\n    except KeyError:\n        y = 2\n    return y",
    "in a with body": "def f(x):\n    with x:\n        assert x.ok, 'm'",
    "with a walrus": "def f(x):\n    assert (x := x + 1) > 2\n    return x",
}
# the same bytecode up to the line table, on which these decompile as
# written but recompile (all on one line, see roundtrip.compile_in_context)
# to other code: their source is checked on code with its lines
WITH_LINES = {
    "false": ("def f(x):\n    if x:\n        assert False, 'never'\n    return x",
              "    if x:\n        assert False, 'never'\n"),
    "raise of its own": ("def f(x):\n    if x is None:\n        raise AssertionError('none')\n    return x",
                         "    if x is None:\n        raise AssertionError('none')\n"),
}


def _compiled(source):
    import ast
    import roundtrip
    return roundtrip.find_function(roundtrip.compile_in_context(ast.parse(source).body, roundtrip.Context()), (), "f")


@pytest.mark.parametrize("name", sorted(ASSERTS))
def test_assert_prints_as_assert(name):
    import roundtrip
    code = _compiled(ASSERTS[name])
    source = depyf.decompile(code)
    assert "__state" not in source, source
    assert "AssertionError" not in source, source
    assert source.count("assert ") == ASSERTS[name].count("assert "), source
    if name == "in a try body" and sys.version_info >= (3, 12):
        return  # the return after the try is copied into it (try.c's part)
    outcome, detail = roundtrip.roundtrip_one(depyf.decompile, code, code, roundtrip.Context())
    assert outcome == "identical", "%s\n%s" % (detail, source)


@pytest.mark.parametrize("name", sorted(WITH_LINES))
def test_assert_or_raise_told_by_lines(name):
    text, want = WITH_LINES[name]
    namespace = {}
    exec(compile(text, "<with lines>", "exec"), namespace)
    source = depyf.decompile(namespace["f"])
    assert want in source, source


# --- annotated assignments of module and class bodies -----------------------------------

ANNOTATED = '''\
import dataclasses
import typing
x: int = 3
y: str
z: "list[int]" = [1]
if x:
    w: typing.Optional[int] = None
else:
    w: float = 1.0
class Box:
    pass
box = Box()
box.attr: int = 5
@dataclasses.dataclass
class Point:
    a: int
    b: typing.List[int] = dataclasses.field(default_factory=list)
    c: "typing.Dict[str, int]" = None
    __private: int = 1
    def norm(self, scale: "float" = 1.0) -> int:
        return self.a
'''


def _namespace_view(ns):
    point = ns["Point"]
    return (ns["__annotations__"], ns["x"], ns["z"], ns["w"], ns["box"].attr, point.__annotations__,
            repr(point(1)), point.__dict__.get("_Point__private"), point.norm.__annotations__)


@pytest.mark.parametrize("future", [False, True], ids=["plain", "future annotations"])
def test_annotated_assignments(future):
    text = ("from __future__ import annotations\n" if future else "") + ANNOTATED
    source = depyf.decompile(compile(text, "<annotated>", "exec"))
    assert "__annotations__" not in source, source
    for line in ("x: int = 3\n", "y: str\n", "    a: int\n", "    w: float = 1.0\n"):
        assert line in source, source
    assert _namespace_view(_run_module(source)) == _namespace_view(_run_module(text))
