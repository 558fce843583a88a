"""Constants with no literal form (issue 12): Dynamo's code loads any object
as a constant (a code object, a torch.device, a dict of globals).  The
decompiler prints each as the name _depyf_const_<k>, with a comment on the
line of its first use showing its repr, so the output is Python; the
validator reads those names as the constants they stand for."""
import re
import types

import pytest

import depyf
from depyf import _core

NAMED = re.compile(r"(_depyf_const_\d+): (.*?)(?=; _depyf_const_\d+: |$)", re.M)


class Token:
    """An object with no literal form whose repr spans two lines."""

    def __init__(self, tag):
        self.tag = tag

    def __repr__(self):
        return "Token(\n%r)" % self.tag

    def __eq__(self, other):
        return isinstance(other, Token) and other.tag == self.tag

    __hash__ = object.__hash__


def with_consts(fn, mapping):
    """fn's code with the constants in `mapping` replaced."""
    code = fn.__code__
    return code.replace(co_consts=tuple(mapping.get(c, c) if isinstance(c, (int, str)) and not isinstance(c, bool)
                                        else c for c in code.co_consts))


def named_in(source):
    """{name: the repr text its comment shows}."""
    names = {}
    for line in source.splitlines():
        if "  # _depyf_const_" in line:
            for name, text in NAMED.findall(line.split("  # ", 1)[1]):
                names[name] = text
    return names


def run_decompiled(source, name, bindings):
    ns = dict(bindings)
    exec(compile(source, "<decompiled>", "exec"), ns)
    return ns[name]


def pair(a, b):
    return (a, b)


def calls_twice(g):
    first = g(101, "tag-b")
    return first, g("tag-a", 102)


def test_objects_print_as_names_with_their_repr_on_the_line_of_first_use():
    a, b = Token("a"), Token("b")
    code = with_consts(calls_twice, {"tag-a": a, "tag-b": b})
    source = depyf.decompile(code)
    assert "this is an equivalent state machine" not in source, source
    names = named_in(source)
    assert sorted(names.values()) == ["Token( 'a')", "Token( 'b')"], source
    for line in source.splitlines():  # every comment stays on one line
        assert not line.startswith(("'", "Token")), source
    by_repr = {"Token( 'a')": a, "Token( 'b')": b}
    bindings = {name: by_repr[text] for name, text in names.items()}
    original = types.FunctionType(code, {})
    new = run_decompiled(source, "calls_twice", bindings)
    assert new(pair) == original(pair) == ((101, b), (a, 102))


def test_a_code_object_constant_is_named_and_the_function_still_validates():
    def f(g):
        return g(7)

    inner = (lambda: 0).__code__
    code = f.__code__.replace(co_consts=tuple(inner if c == 7 else c for c in f.__code__.co_consts))
    source = depyf.decompile(code)
    assert "this is an equivalent state machine" not in source, source
    (name, text), = named_in(source).items()
    assert text.startswith("<code object") and "lambda" in text, source
    new = run_decompiled(source, "f", {name: inner})
    assert new(lambda c: c) is inner


def test_every_printed_file_compiles_even_in_the_state_machine():
    def h(x):
        if x:
            return 5
        return (6, 7)

    code = h.__code__.replace(co_consts=tuple(Token(c) if c in (5, (6, 7)) else c for c in h.__code__.co_consts))
    source = depyf.decompile(code)
    compile(source, "<decompiled>", "exec")
    assert len(named_in(source)) == 2, source


def test_the_checker_tells_named_constants_apart():
    a, b = Token("a"), Token("b")
    orig = with_consts(calls_twice, {"tag-a": a, "tag-b": b})
    ns = {}
    exec("def calls_twice(g):\n    first = g(101, _depyf_const_0)\n    return first, g(_depyf_const_1, 102)\n", ns)
    cand = ns["calls_twice"].__code__
    assert _core.equivalent(orig, cand, named=(b, a)) == (True, "")
    assert _core.equivalent(orig, cand, named=(a, b))[0] is False
    assert _core.equivalent(orig, cand)[0] is False  # a global read is no constant
    assert _core.equivalent(orig, cand, named=(b,))[0] is False  # no object for _depyf_const_1


@pytest.mark.parametrize("bad", ["_depyf_const_01", "_depyf_const_", "_depyf_const_1x"])
def test_only_the_printers_exact_names_count(bad):
    orig = with_consts(calls_twice, {"tag-b": Token("b")})
    ns = {}
    exec("def calls_twice(g):\n    first = g(101, %s)\n    return first, g('tag-a', 102)\n" % bad, ns)
    assert _core.equivalent(orig, ns["calls_twice"].__code__, named=(Token("b"),) * 2)[0] is False


def test_one_object_loaded_twice_has_one_name():
    token = Token("same")

    def twice(g):
        g(501)
        return g(501)

    code = twice.__code__.replace(co_consts=tuple(token if c == 501 else c for c in twice.__code__.co_consts))
    source = depyf.decompile(code)
    assert list(named_in(source)) == ["_depyf_const_0"] and source.count("_depyf_const_0") == 3, source
    seen = []
    assert run_decompiled(source, "twice", {"_depyf_const_0": token})(lambda v: seen.append(v) or v) is token
    assert seen == [token, token]


def test_the_core_returns_the_objects_behind_the_names():
    a, b = Token("a"), Token("b")
    code = with_consts(calls_twice, {"tag-a": a, "tag-b": b})
    source, named = _core.decompile(code, named=True)
    assert source == depyf.decompile(code)
    bindings = {"_depyf_const_%d" % k: obj for k, obj in enumerate(named)}
    assert all(named_in(source)[name] == repr(obj).replace("\n", " ") for name, obj in bindings.items())
    assert run_decompiled(source, "calls_twice", bindings)(pair) == ((101, b), (a, 102))
    source2, linemap, named2 = _core.decompile(code, named=True, linemap=True)
    assert (source2, named2) == (source, named) and linemap
    assert _core.decompile(calls_twice.__code__, named=True)[1] == ()


def test_bind_named_picks_names_the_scope_has_free_or_bound_to_the_same_object():
    from depyf import _decompiled
    a, b = Token("a"), Token("b")
    code = with_consts(calls_twice, {"tag-a": a, "tag-b": b})
    source, named = _core.decompile(code, named=True)
    scope = {"_depyf_const_0": "taken", "_depyf_const_2": named[1]}
    text, bindings = _decompiled.bind_named(source, named, scope)
    # _depyf_const_0 is taken by another object; _depyf_const_2 already holds the second one
    assert bindings == {"_depyf_const_1": named[0], "_depyf_const_2": named[1]}
    assert set(named_in(text)) == set(bindings), text
    scope.update(bindings)
    exec(compile(text, "<bound>", "exec"), scope)
    assert scope["calls_twice"](pair) == ((101, b), (a, 102))
    assert scope["_depyf_const_0"] == "taken"
    # nothing to bind: unchanged; something to bind but no scope, or an object missing: refused
    assert _decompiled.bind_named("def f():\n    return 1\n", (), None) == ("def f():\n    return 1\n", {})
    assert _decompiled.bind_named(source, named, None) is None
    assert _decompiled.bind_named(source, named[:1], {}) is None
