"""PEP 695 generics (3.12+): `def f[T](...)`, `class C[T]: ...` and `type A[T]
= ...` compile to a hidden `<generic parameters of NAME>` function that makes
the type parameters and the definition.  Each form must decompile to the PEP
695 syntax, recompile to the same bytecode, and behave the same: type
parameters (kinds, names, bounds, constraints, 3.13 defaults), alias values,
annotations and results.  The same holds through the state-machine fallback,
and a scope of an unknown form fails with a clear error."""
import ast
import sys
import types

import pytest

if sys.version_info < (3, 12):
    pytest.skip("PEP 695 syntax is 3.12+", allow_module_level=True)

import typing

import depyf
from depyf import _core
import roundtrip

# name -> (source, expressions evaluated after running it, text the output must hold)
CASES = {
    "function": (
        "def first[T](xs: list[T]) -> T:\n    return xs[0]\n",
        ["first([3, 4])"], ["def first[T](xs: list[T]) -> T:"]),
    "class": (
        "class Box[T]:\n    def __init__(self, v: T):\n        self.v = v\n\n    def get(self) -> T:\n"
        "        return self.v\n",
        ["Box(5).get()", "Box[int]", "Box.__parameters__"], ["class Box[T]:"]),
    "type aliases": (
        "type Alias[K] = dict[K, int]\ntype X = int | None\n",
        ["Alias[str]", "X.__value__"], ["type Alias[K] = dict[K, int]", "type X = int | None"]),
    "bounds, constraints, *Ts and **P": (
        "def b[T: int, U: (int, str), V: ('a', 'b'), *Ts, **P](x: T = 1) -> tuple[*Ts]:\n    return x\n",
        ["b()", "b(5)"], ["def b[T: int, U: (int, str), V: ('a', 'b'), *Ts, **P](x: T = 1)"]),
    "defaults": (
        "def d[T](a: T = 1, *, k: T = 2, **kw) -> T:\n    return a + k\n"
        "def e[T](a=[1], *, b={'x': 2}):\n    return a, b\n",
        ["d()", "d(3, k=4)", "e()", "e.__kwdefaults__"], ["def d[T](a: T = 1, *, k: T = 2, **kw) -> T:"]),
    "decorators": (
        "def deco(f):\n    f.tag = 1\n    return f\n\n@deco\ndef g[T](x: T) -> T:\n    return x\n\n"
        "@deco\nclass C[T]:\n    pass\n",
        ["g.tag", "C.tag", "g(2)"], ["@deco\ndef g[T](x: T) -> T:", "@deco\nclass C[T]:"]),
    "generic method and alias in a class": (
        "class Q:\n    k = int\n\n    def m[T: k](self, t: T) -> k:\n        return t\n\n    type Al = k\n",
        ["Q().m(3)", "Q.Al.__value__", "Q.m.__type_params__[0].__bound__"],
        ["def m[T: k](self, t: T) -> k:", "type Al = k"]),
    "generic class with bases and a metaclass": (
        "class Base[T]:\n    pass\n\nclass Meta(type):\n    pass\n\n"
        "class Box[T](Base[T], metaclass=Meta):\n    def get[U](self, u: U) -> T:\n        return u\n\n"
        "    def plain(self) -> T:\n        return 1\n",
        ["type(Box)", "Box.__orig_bases__", "Box().get(3)", "Box.__mro__"],
        ["class Box[T](Base[T], metaclass=Meta):", "def get[U](self, u: U) -> T:"]),
    "nested generic functions": (
        "def nest(a):\n    def g[T](x: T = a) -> T:\n        def h[U](y: U) -> tuple[T, U]:\n"
        "            return (x, y, a)\n        return h\n    return g\n",
        ["nest(1)()(2)", "nest(1).__type_params__", "nest(1)().__type_params__", "nest(1).__annotations__"],
        ["def g[T](x: T = a) -> T:", "def h[U](y: U) -> tuple[T, U]:"]),
    "super in a generic class": (
        "class S[T]:\n    def m(self):\n        return super().__repr__ is not None\n\n    class Inner:\n        x = 1\n",
        ["S().m()", "S.Inner.x"], ["class S[T]:"]),
    "async and generator": (
        "async def af[T](x: T) -> T:\n    return x\n\ndef gen[T](x: T):\n    yield x\n",
        ["list(gen(3))", "af.__type_params__"], ["async def af[T](x: T) -> T:", "def gen[T](x: T):"]),
    "starred bases": (
        "bases = (dict,)\nclass St[T](*bases, metaclass=type):\n    pass\n",
        ["St.__orig_bases__", "St.__mro__"], ["class St[T](*bases, metaclass=type):"]),
    "type aliases in a function": (
        "def clos(a):\n    type L = list[a]\n    type M[K] = dict[K, a]\n    return L, M\n",
        ["clos(int)[0].__value__", "clos(int)[1].__value__", "clos(int)[1].__type_params__"],
        ["    type L = list[a]", "    type M[K] = dict[K, a]"]),
    "docstring and closure": (
        "def doc[T](x: T) -> T:\n    'docstring'\n    f = lambda: x\n    return f()\n",
        ["doc(3)", "doc.__doc__"], ["def doc[T](x: T) -> T:"]),
}
if sys.version_info >= (3, 13):
    CASES["type parameter defaults"] = (
        "def f[T = int, *Ts = *tuple[int, ...], **P = [int, str]](x: T) -> T:\n    return x\n"
        "type A[T = str] = list[T]\nclass C[T: int = bool]:\n    pass\n",
        ["f(1)", "A.__type_params__[0].__default__", "f.__type_params__[1].__default__"],
        ["def f[T = int, *Ts = *tuple[int, ...], **P = [int, str]](x: T) -> T:", "type A[T = str] = list[T]",
         "class C[T: int = bool]:"])


def param(p):
    """A type parameter as comparable data (its bound etc. evaluated)."""
    d = [type(p).__name__, p.__name__]
    if isinstance(p, typing.TypeVar):
        d += [repr(p.__bound__), repr(p.__constraints__)]
    if sys.version_info >= (3, 13) and p.has_default():
        d.append(repr(p.__default__))
    return d


def describe(v, depth=0):
    """What a value defines: type parameters, alias value, annotations, and
    the same of a class's members."""
    d = {"repr": repr(v) if not isinstance(v, (types.FunctionType, type)) else getattr(v, "__qualname__", "")}
    if hasattr(v, "__type_params__"):
        d["type_params"] = [param(p) for p in v.__type_params__]
    if isinstance(v, typing.TypeAliasType):
        d["value"] = repr(v.__value__)
    if isinstance(v, types.FunctionType):
        d["annotations"] = repr(v.__annotations__)
        d["defaults"] = repr((v.__defaults__, v.__kwdefaults__))
    if isinstance(v, type) and depth < 3:
        d["members"] = {k: describe(m, depth + 1) for k, m in vars(v).items()
                        if isinstance(m, (types.FunctionType, type, typing.TypeAliasType))}
        d["bases"] = repr(getattr(v, "__orig_bases__", v.__bases__))
    return d


def run(source):
    ns = {"__name__": "pep695_case"}
    exec(compile(source, "<case>", "exec"), ns)
    return ns


def outcome(ns, checks):
    defined = {k: describe(v) for k, v in ns.items() if not k.startswith("__")}
    results = []
    for expr in checks:
        try:
            results.append(repr(eval(expr, ns)))
        except Exception as e:  # the same exception is the same behaviour
            results.append("raised %s: %s" % (type(e).__name__, e))
    return defined, results


def flat(source):
    """`source` compiled with every location on line 1 (as tests/roundtrip.py
    compares): the bytecode then depends on the structure alone."""
    return roundtrip.compile_in_context(ast.parse(source).body, roundtrip.Context())


@pytest.mark.parametrize("name", sorted(CASES))
def test_recompiles_identically_and_behaves_alike(name):
    source, checks, texts = CASES[name]
    out = depyf.decompile(compile(source, "<case>", "exec"))
    assert "no structured form" not in out and "generic parameters" not in out, out
    for text in texts:
        assert text in out, out
    assert outcome(run(out), checks) == outcome(run(source), checks), out
    code = flat(source)
    diff = roundtrip.compare_code(code, flat(depyf.decompile(code)))
    assert diff is None, "%s\n%s" % (diff, out)


def _wrapped(source):
    """The case's source as the body of a function returning its names."""
    body = "".join("    " + line if line.strip() else line for line in source.splitlines(True))
    return "def w():\n%s    return {k: v for k, v in locals().items()}\n" % body


@pytest.mark.parametrize("name", sorted(CASES))
def test_state_machine_fallback_behaves_alike(name):
    source, checks, _ = CASES[name]
    module = compile(_wrapped(source), "<case>", "exec")
    w = [c for c in module.co_consts if isinstance(c, types.CodeType)][0]
    if sys.version_info < (3, 13) and any(line.startswith("class ") and "[" in line.split(":")[0]
                                          for line in source.splitlines()):
        # 3.12.0-3.12.3 mangle the names compiled after a generic class in the
        # same scope, the state machine's own too: it must refuse
        with pytest.raises(depyf.DecompilationError, match="gh-119395"):
            _core.decompile(w, force_fallback=True)
        return
    out = _core.decompile(w, force_fallback=True)
    assert "generic parameters" not in out, out
    want, got = run(_wrapped(source))["w"](), run(out)["w"]()
    want.update(__name__="pep695_case")
    got.update(__name__="pep695_case")
    assert outcome(got, checks) == outcome(want, checks), out


def test_unknown_scope_form_fails_cleanly():
    # a function that only looks like a type parameter scope (renamed code)
    module = compile("v = (lambda: 42)()\n", "<case>", "exec")
    mk = [c for c in module.co_consts if isinstance(c, types.CodeType)][0]
    fake = mk.replace(co_name="<generic parameters of v>", co_qualname="<generic parameters of v>")
    module = module.replace(co_consts=tuple(fake if c is mk else c for c in module.co_consts))
    with pytest.raises(depyf.DecompilationError, match="type parameter scope"):
        depyf.decompile(module)


def test_starred_vararg_annotation_fails_cleanly_or_behaves_alike():
    # `*args: *Ts` (PEP 646) inside a type parameter scope
    source = "def f[*Ts](*args: *Ts) -> tuple[*Ts]:\n    return args\n"
    try:
        out = depyf.decompile(compile(source, "<case>", "exec"))
    except depyf.DecompilationError:
        return
    assert outcome(run(out), ["f(1, 2)"]) == outcome(run(source), ["f(1, 2)"]), out
