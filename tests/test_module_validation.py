"""Module bodies are translation-validated like functions (src/core/validate.c,
dc_validate_module): the module's text, with its functions' and classes' bodies
as stubs, is compiled and compared with the module's bytecode; a module that
fails is printed as the state machine.  And a module that says `global x`
(itself, or in a function it defines) says so in the output too."""

import sys

import pytest

import depyf
from depyf import _core


def module_code(src):
    return compile(src, "<mod>", "exec", dont_inherit=True)


def run(code):
    """The module run with separate globals and locals (where STORE_NAME and
    STORE_GLOBAL differ); what each dict ends up holding."""
    g, loc = {}, {}
    exec(code, g, loc)
    g.pop("__builtins__", None)
    return plain(g), plain(loc)


def plain(ns):
    """ns with functions and classes by name (two runs make distinct objects)."""
    return {k: (type(v).__name__, v.__qualname__) if callable(v) and hasattr(v, "__qualname__") else v
            for k, v in ns.items()}


def decompiled_stats(src):
    _core.validation_stats(reset=True)
    out = depyf.decompile(module_code(src))
    return out, _core.validation_stats()


GLOBAL_MODULES = {
    "declared in a function only": (
        "cache = {}\n"
        "def fill(k):\n    global cache\n    cache[k] = k * 2\n"
        "fill(3)\n"
        "seen = cache\n"),
    "declared by the module itself": (
        "global counter\n"
        "counter = 1\n"
        "counter += 1\n"
        "del counter\n"
        "counter = 5\n"),
    "after a docstring and a future import": (
        '"""The doc."""\n'
        "from __future__ import annotations\n"
        "table = []\n"
        "def add(x: int) -> None:\n    global table\n    table = table + [x]\n"
        "add(1)\n"),
}


@pytest.mark.parametrize("name", sorted(GLOBAL_MODULES))
def test_a_global_declaration_is_kept_and_the_module_validates(name):
    src = GLOBAL_MODULES[name]
    out, stats = decompiled_stats(src)
    assert "__state" not in out, out
    assert stats["fallback"] == 0 and stats["unchecked"] == 0, (stats, out)
    assert "global " in out.split("def ")[0], out  # (at module level, before any def)
    assert run(module_code(out)) == run(module_code(src)), out


KINDS = (
    "import functools\n"
    "def plain(a, b=2, *args, c, **kw):\n    return a\n"
    "def gen(n):\n    for i in range(n):\n        yield i\n"
    "def gen_from(xs):\n    x = yield from xs\n    return x\n"
    "async def coro(x):\n    return await x\n"
    "async def agen(n):\n    for i in range(n):\n        yield i\n"
    "def outer():\n    def inner():\n        yield 1\n    return inner\n"
    "@functools.lru_cache(maxsize=None)\n"
    "def deco(x: int = 3) -> int:\n    return x\n"
    "class A(dict, metaclass=type):\n"
    "    def m(self):\n        return super().keys()\n"
    "    def g(self):\n        yield self\n"
    "try:\n    import json as j\nexcept ImportError:\n    j = None\nelse:\n"
    "    def loads(s):\n        yield j.loads(s)\n"
    "if __name__ == '__main__':\n    for k in range(3):\n        print(k)\n"
    "square = lambda v: v * v\n"
    "squares = [square(v) for v in range(4)]\n"
)


def test_every_kind_of_function_and_class_in_a_module_validates():
    # (the stubs keep each code object's signature and kind: a wrong one is refuted)
    out, stats = decompiled_stats(KINDS)
    assert "__state" not in out, out
    assert stats["fallback"] == 0 and stats["unchecked"] == 0, stats
    # the module and its named functions (lambdas and comprehensions count with their scope)
    assert stats["validated"] >= 11, stats
    g1, g2 = {}, {}
    exec(module_code(KINDS), g1)
    exec(module_code(out), g2)
    assert plain(g1) == plain(g2) and g1["squares"] == [0, 1, 4, 9]


# A module, and a wrong reading of it of the kind a structurer can make: the
# checker must refute each (on modules as on functions).
WRONG_MODULES = {
    "code after an if is not its else": (
        "if c:\n    a = 1\nelse:\n    b = 2\nz = 3\n",
        "if c:\n    a = 1\nelse:\n    b = 2\n    z = 3\n"),
    "a loop's else is not the code after it": (
        "for x in xs:\n    if x:\n        break\nelse:\n    y = 1\nz = 2\n",
        "for x in xs:\n    if x:\n        break\ny = 1\nz = 2\n"),
    "a handler's fallback is not the try's else": (
        "try:\n    import m\nexcept ImportError:\n    m = None\nelse:\n    n = m\n",
        "try:\n    import m\nexcept ImportError:\n    m = None\nn = m\n"),
    "a store to the module is not a store to a global": (
        "global x\nx = 1\n",
        "x = 1\n"),
    "a stub of another kind": (
        "def f():\n    yield 1\n",
        "def f():\n    pass\n"),
    "another signature": (
        "def f(a, *, b):\n    pass\n",
        "def f(a, b):\n    pass\n"),
}


@pytest.mark.parametrize("name", sorted(WRONG_MODULES))
def test_the_checker_refutes_a_wrong_module(name):
    original, wrong = WRONG_MODULES[name]
    assert _core.equivalent(module_code(original), module_code(original))[0] is True
    verdict, why = _core.equivalent(module_code(original), module_code(wrong))
    assert verdict is False, why


def test_an_empty_module_validates():
    out, stats = decompiled_stats("")
    assert stats == {"validated": 1, "fallback": 0, "unchecked": 0}
    assert run(module_code(out)) == run(module_code(""))


# ---- class bodies (dc_validate_class): a class statement where its qualified name says

def class_body(src, name):
    """The code object of the body of class `name` (a constant at any depth of src's module)."""
    todo = [module_code(src)]
    while todo:
        code = todo.pop()
        for c in code.co_consts:
            if hasattr(c, "co_code"):
                if c.co_name == name and not c.co_flags & 0x1:  # (no CO_OPTIMIZED: a class body)
                    return c
                todo.append(c)
    raise LookupError(name)


CLASSES = {
    "a private method is a def, not a lambda stored under its mangled name": (
        "class Table:\n"
        "    __cache = None\n"
        "    def __lookup(self, k):\n        return (self, k)\n"
        "    def get(self, k):\n        return self.__lookup(k)\n",
        "Table"),
    "a class in a function, its methods closing over the function's locals": (
        "def make(base, n):\n"
        "    class Made(base):\n"
        "        size = n\n"
        "        def grow(self):\n            return n + 1\n"
        "        def again(self):\n            return super().__repr__()\n"
        "    return Made\n",
        "Made"),
    "a class with a cell ending in an if (3.10+ copy the cell's return into both arms)": (
        "import signal\n"
        "class Base:\n"
        "    def setUp(self):\n        return super().__init_subclass__\n"
        "    if hasattr(signal, 'setitimer'):\n"
        "        alarm_time = 0.05\n"
        "        def set_alarm(self, seconds):\n            return ('timer', seconds)\n"
        "    else:\n"
        "        alarm_time = 2\n"
        "        def set_alarm(self, seconds):\n            return ('alarm', seconds)\n",
        "Base"),
    "nested classes, a docstring, a class on a late line": (
        "\n" * 40 +
        "class Outer:\n"
        "    '''Doc.'''\n"
        "    class Inner:\n"
        "        x = [i * 2 for i in range(3)]\n"
        "        def m(self):\n            yield self.x\n"
        "    y = Inner.x\n",
        "Inner"),
}


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_class_bodies_are_validated_and_print_structured(name):
    src, cls = CLASSES[name]
    out, stats = decompiled_stats(src)
    assert "__state" not in out, out
    assert stats["fallback"] == 0 and stats["unchecked"] == 0, (stats, out)
    # the class body checked on its own (with its whole module) is structured too
    _core.validation_stats(reset=True)
    body = depyf.decompile(class_body(src, cls))
    assert "__state" not in body and _core.validation_stats()["validated"] >= 1, body
    g1, g2 = {}, {}
    exec(module_code(src), g1)
    exec(module_code(out), g2)
    assert plain(g1) == plain(g2)


def classes_on_late_lines(count, spacing):
    """A module whose k-th class statement starts on line spacing * (k + 1)."""
    parts, line = [], 1
    for k in range(count):
        parts.append("\n" * (spacing * (k + 1) - line))
        parts.append("class C%d:\n    def m(self, x):\n        return x + %d\n" % (k, k))
        line = spacing * (k + 1) + 3
    return "".join(parts)


def test_classes_on_late_lines_cost_no_validation_budget():
    # 3.13 checks a class statement on the line its body records; the blank
    # lines before the 30 classes (14 MB in all, past the 1 MiB + 8 S budget)
    # are not source the budget pays for: every class and method is checked
    src = classes_on_late_lines(30, 30000)
    out, stats = decompiled_stats(src)
    assert stats == {"validated": 61, "fallback": 0, "unchecked": 0}, stats
    assert "__state" not in out, out
    ns = {}
    exec(module_code(out), ns)
    assert [ns["C%d" % k]().m(1) for k in range(30)] == list(range(1, 31))


def test_a_class_recorded_past_the_validation_limit_is_not_checked():
    # (the blank lines stay bounded by the limit: on 3.13 a class recorded on
    # a later line is not checked, and prints as it did before classes were)
    src = "\n" * (2 << 20) + "class Far:\n    def m(self):\n        return 1\n"
    out, stats = decompiled_stats(src)
    late = int(sys.version_info >= (3, 13))
    assert stats == {"validated": 3 - late, "fallback": 0, "unchecked": late}, stats
    assert "__state" not in out, out
    ns = {}
    exec(module_code(out), ns)
    assert ns["Far"]().m() == 1


def test_a_private_method_keeps_its_name():
    src = CLASSES["a private method is a def, not a lambda stored under its mangled name"][0]
    out = depyf.decompile(module_code(src))
    assert "def __lookup(self, k):" in out, out
    ns = {}
    exec(module_code(out), ns)
    assert ns["Table"]._Table__lookup.__name__ == "__lookup"
    assert ns["Table"]().get(3)[1] == 3
    # the wrong reading, a lambda stored under the mangled name, is refuted
    wrong = src.replace("    def __lookup(self, k):\n        return (self, k)\n",
                        "    _Table__lookup = lambda self, k: (self, k)\n")
    verdict, why = _core.equivalent(class_body(src, "Table"), class_body(wrong, "Table"))
    assert verdict is False, why
