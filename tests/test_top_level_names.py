"""A code object decompiled on its own whose name is no identifier
(`<lambda>`, `<genexpr>`: issue 12) prints as Python: a lambda whose body is
one value (a generator's too) as a `lambda` expression, anything else as a def under a valid
name; `def_name` names the def (the torch layer's transformed code)."""
import pytest

import depyf
from depyf import _core


def run(source, name):
    ns = {}
    exec(compile(source, "<decompiled>", "exec"), ns)
    return ns[name]


def test_a_lambda_prints_as_a_lambda_expression_with_its_defaults():
    fn = lambda x, *rest, k=3: (x + k, rest)  # noqa: E731
    source = depyf.decompile(fn)
    assert source.startswith("lambda "), source
    new = eval(compile(source, "<decompiled>", "eval"))
    assert new(1) == fn(1) and new(1, 2, k=5) == fn(1, 2, k=5)


def test_a_lambda_with_a_conditional_body():
    fn = lambda x: "neg" if x < 0 else x * 2  # noqa: E731
    new = eval(depyf.decompile(fn))
    assert [new(v) for v in (-1, 0, 4)] == [fn(v) for v in (-1, 0, 4)]


def test_a_generator_lambda_prints_as_a_lambda_and_behaves_as_one():
    fn = lambda n: (yield n + 1)  # noqa: E731
    source = depyf.decompile(fn)
    assert source.startswith("lambda n:"), source
    new = eval(compile(source, "<decompiled>", "eval"))
    gen, orig = new(1), fn(1)
    assert next(gen) == next(orig) == 2
    for g in (gen, orig):
        with pytest.raises(StopIteration) as stop:
            g.send("sent")
        assert stop.value.value == "sent"


def test_a_stop_iteration_leaves_a_generator_lambda_as_it_does_the_original():
    # 3.12 and 3.13 wrap a generator def's body in a handler that turns a
    # StopIteration into a RuntimeError, and a generator lambda's not: as a
    # def the lambda would raise another exception
    fn = lambda it: (yield next(it))  # noqa: E731
    new = eval(compile(depyf.decompile(fn), "<decompiled>", "eval"))
    raised = []
    for f in (fn, new):
        with pytest.raises((StopIteration, RuntimeError)) as info:
            next(f(iter([])))
        raised.append(info.type)
    assert raised[0] is raised[1]


def test_a_comprehension_code_object_prints_as_a_def_taking_the_iterator():
    code = (x * 2 for x in [1]).gi_code
    source = depyf.decompile(code)
    assert source.startswith("def genexpr(__iter):"), source
    assert list(run(source, "genexpr")(iter([1, 2, 3]))) == [2, 4, 6]


def test_def_name_names_the_def():
    source = _core.decompile((lambda x: x + 1).__code__, def_name="renamed")
    assert source.startswith("def renamed(x):"), source
    assert run(source, "renamed")(2) == 3
    with pytest.raises(ValueError, match="identifier"):
        _core.decompile((lambda x: x).__code__, def_name="not a name")
    with pytest.raises(TypeError):
        _core.decompile((lambda x: x).__code__, def_name=3)
