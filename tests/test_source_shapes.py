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

SHAPE_CASES = [(fn, inputs) for fn, inputs in behaviour_cases.CASES if fn.__module__ == "behaviour_cases_shapes"]


def test_there_are_shape_cases():
    assert len(SHAPE_CASES) >= 8


@pytest.mark.parametrize("fn", [fn for fn, _ in SHAPE_CASES], ids=[fn.__name__ for fn, _ in SHAPE_CASES])
def test_no_state_machine(fn):
    source = depyf.decompile(fn)
    assert "__state" not in source, source


def _code_objects(code):
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            yield const
            yield from _code_objects(const)


def _run_module(source):
    namespace = {"__name__": "shapes_module"}
    exec(compile(source, "<shapes module>", "exec"), namespace)
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
