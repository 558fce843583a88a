"""3.12+ inlined comprehensions (PEP 709): list/set/dict comprehensions
compiled into the enclosing code.  Each shape is decompiled, the output must
recompile to the same bytecode (tests/roundtrip.py's comparison) and behave
like the original on every input."""
import ast
import asyncio
import copy
import inspect
import sys
from types import SimpleNamespace

import pytest

import depyf
import roundtrip

pytestmark = pytest.mark.skipif(sys.version_info < (3, 12), reason="comprehensions are inlined from 3.12 on")

# (source defining f, inputs: tuples of arguments)
FUNCTIONS = {
    "list": ("def f(xs):\n    return [x * 2 for x in xs]", [([1, 2, 3],), ([],)]),
    "set": ("def f(xs):\n    return {x % 3 for x in xs}", [([1, 2, 3, 4],), ([],)]),
    "dict": ("def f(xs):\n    return {str(x): x for x in xs}", [([1, 2],), ([],)]),
    "filter": ("def f(xs):\n    return [x for x in xs if x]", [([0, 1, 2, 0],)]),
    "negated filter": ("def f(xs):\n    return [x for x in xs if not x]", [([0, 1, None],)]),
    "is not filter": ("def f(xs):\n    return [x for x in xs if x is not None]", [([0, None, 2],)]),
    "not in filter": ("def f(xs, s):\n    return [x for x in xs if x not in s]", [([1, 2, 3], {2})]),
    "and filter": ("def f(xs):\n    return [x for x in xs if x and x > 1]", [([0, 1, 2, 3],)]),
    "or filter": ("def f(xs):\n    return [x for x in xs if x or x == 0]", [([0, None, 2, ''],)]),
    "and/or filter": ("def f(xs):\n    return [x for x in xs if x > 0 and (x % 2 or x == 4)]",
                      [([-1, 1, 2, 3, 4, 6],)]),
    "conditional filter": ("def f(xs, flag):\n    return [x for x in xs if (x > 1 if flag else x < 1)]",
                           [([0, 1, 2], True), ([0, 1, 2], False)]),
    "conditional element": ("def f(xs):\n    return [x if x else -1 for x in xs]", [([0, 1, 2],)]),
    "two fors": ("def f(xs, ys):\n    return [(x, y) for x in xs for y in ys]", [([1, 2], 'ab'), ([], 'a')]),
    "two fors, filter between": ("def f(xs):\n    return [y for x in xs if x for y in x if y != 'b']",
                                 [(['ab', '', 'cb'],)]),
    "dict from two fors": ("def f(xs, ys):\n    return {x: y for x in xs for y in ys if x != y}", [([1, 2], [2, 3])]),
    "unpacking target": ("def f(d):\n    return [k + v for k, v in d.items()]", [({'a': 'b', 'c': 'd'},)]),
    "starred target": ("def f(xs):\n    return [b for a, *b in xs]", [([(1, 2, 3), (4,)],)]),
    "attribute target, nothing saved": (
        "def f(o, xs):\n    return [o.a * 2 for o.a in xs], o.a", [(SimpleNamespace(), [1, 2])]),
    "subscript target": ("def f(box, xs):\n    return [box[0] for box[0] in xs], box", [([None], [1, 2])]),
    "nested in the element": ("def f(m):\n    return [[y * 2 for y in row] for row in m]", [([[1, 2], [3]],)]),
    "nested in an iterable": ("def f(m):\n    return [y for y in [x + 1 for x in m]]", [([1, 2],)]),
    "nested in a filter": ("def f(m, ok):\n    return [r for r in m if [v for v in r if v in ok]]",
                           [([[1], [2, 3], []], {3})]),
    "three levels": ("def f(n):\n    return [[[i * j * k for k in range(j)] for j in range(i)] for i in range(n)]",
                     [(4,), (0,)]),
    "closure over the variable": ("def f(xs):\n    return [g() for g in [lambda: x for x in xs]]", [([1, 2],)]),
    "closure over an outer local": (
        "def f(xs):\n    k = 10\n    fs = [lambda: x + k for x in xs]\n    k = 20\n    return [g() for g in fs]",
        [([1, 2],)]),
    "variable that is a cell outside": (
        "def f(xs):\n    x = 1\n    g = lambda: x\n    ys = [x for x in xs]\n    return ys, g(), x", [([5, 6],)]),
    "free variable of an inner function": (
        "def f(xs):\n    n = 3\n    def g():\n        return [x * n for x in xs]\n    return g()", [([1, 2],)]),
    "variable shadows a local": ("def f(xs):\n    x = 5\n    y = [x for x in xs]\n    return x, y", [([1, 2],)]),
    "walrus in the element": ("def f(xs):\n    r = [(y := x * 2) for x in xs]\n    return r, y", [([1, 2],)]),
    "walrus in a filter": ("def f(xs):\n    r = [x for x in xs if (last := x) > 1]\n    return r, last",
                           [([1, 2, 3],)]),
    "stored to a local": ("def f(m):\n    z = [[y for y in row] for row in m]\n    return z", [([[1], [2, 3]],)]),
    "stored to an attribute": ("def f(o, xs):\n    o.a = [x for x in xs]\n    return o.a",
                               [(SimpleNamespace(), [1, 2])]),
    "stored to a subscript": ("def f(d, xs):\n    d['k'] = {x for x in xs}\n    return d", [({}, [1, 1, 2])]),
    "chained assignment": ("def f(xs):\n    a = b = [x for x in xs]\n    return a is b, a", [([1],)]),
    "augmented assignment": ("def f(xs):\n    r = [0]\n    r += [x for x in xs]\n    return r", [([1, 2],)]),
    "unpacked assignment": ("def f(xs):\n    a, b = [x for x in xs], 1\n    return a, b", [([1],)]),
    "call argument": ("def f(xs):\n    return max([x for x in xs], default=None)", [([3, 1],), ([],)]),
    "expression statement": ("def f(xs):\n    out = []\n    [out.append(x) for x in xs]\n    return out",
                             [([1, 2],)]),
    "operand of and/or": ("def f(a, xs):\n    return a or [x for x in xs]", [(0, [1]), (2, [1])]),
    "later operand of a condition": (
        "def f(a, xs):\n    if a and [x for x in xs if x]:\n        return 1\n    return 2",
        [(1, [0, 1]), (1, [0]), (0, [1])]),
    "assert message": ("def f(xs):\n    assert all(xs), [x for x in xs if not x]\n    return 1",
                       [([1],), ([1, 0],)]),
    "in a for loop": ("def f(xs):\n    out = []\n    for x in xs:\n        out.append([x for x in range(x)])\n"
                      "    return out, x", [([1, 2],)]),
    "in a try body": ("def f(xs):\n    try:\n        y = [10 // x for x in xs]\n    except ZeroDivisionError:\n"
                      "        y = None\n    return y", [([1, 2],), ([1, 0],)]),
    "in an except handler": ("def f(m):\n    try:\n        return list(m.__all__)\n    except AttributeError:\n"
                             "        return [n for n in m if n[0] != '_']", [(['a', '_b'],)]),
    "raising inside": ("def f(xs):\n    x = 'saved'\n    try:\n        [1 // v for x in xs for v in x]\n"
                       "    except ZeroDivisionError:\n        return x\n    return None", [([[1], [0]],), ([],)]),
    "in a lambda": ("def f(xs):\n    g = lambda ys: [y + 1 for y in ys]\n    return g(xs)", [([1, 2],)]),
    "in a generator expression": ("def f(m):\n    return list(sum([y for y in row]) for row in m)",
                                  [([[1, 2], [3]],)]),
    "generator expression with filters": (
        "def f(xs):\n    return list(x for x in xs if x is not None and str(x) in '123')", [([1, None, 5],)]),
    "in a generator": ("def f(xs):\n    for x in xs:\n        yield [x * y for y in xs]", [([1, 2],)]),
    "global variable": ("def f(xs):\n    global g_inline_comp\n    g_inline_comp = 'kept'\n"
                        "    r = [g_inline_comp for g_inline_comp in xs]\n    return r, g_inline_comp", [([1, 2],)]),
    "many variables": ("def f(n):\n    return [(a, b, c, d, e) for a in range(n) for b in range(a) for c in range(b)"
                       " for d in range(c) for e in range(d)]", [(6,)]),
    "lambda default from the variable": ("def f(xs):\n    return [g() for g in [lambda x=x: x * 2 for x in xs]]",
                                         [([1, 2],)]),
    "starred in the element": ("def f(xs, t):\n    return [(*t, x) for x in xs]", [([1, 2], (0,))]),
    "in an f-string": ("def f(xs):\n    return f'{[x for x in xs]!r:>20}'", [([1, 2],)]),
    "in a with body": ("def f(xs):\n    import contextlib\n    with contextlib.nullcontext(xs) as ys:\n"
                       "        r = {y: [y] * y for y in ys}\n    return r", [([1, 2],)]),
    "in a match case": ("def f(v):\n    match v:\n        case [*items]:\n            return [i * 2 for i in items]\n"
                        "        case _:\n            return None", [([1, 2],), (5,)]),
    "in a while body": ("def f(n):\n    out = []\n    while True:\n        out.append({i for i in range(n)})\n"
                        "        n -= 1\n        if n <= 0:\n            break\n    return out", [(3,), (0,)]),
    "dict with a conditional value": ("def f(xs):\n    return {x: (x if x % 2 else -x) for x in xs if x}",
                                      [([0, 1, 2, 3],)]),
    "await in the element": ("async def f(xs):\n    async def one(v):\n        return v\n"
                             "    return [await one(x) for x in xs]", [([1, 2],)]),
    "await in a filter": ("async def f(xs):\n    async def ok(v):\n        return v > 1\n"
                          "    return [x for x in xs if await ok(x)]", [([1, 2, 3],)]),
    "async for": ("async def f(n):\n    async def gen():\n        for i in range(n):\n            yield i\n"
                  "    return [i * 2 async for i in gen() if i]", [(3,), (0,)]),
}

MODULE = """\
x = 'module x'
a = [x for x in range(3)]
b = {k: [j for j in range(k)] for k in range(3)}
after = x
"""

CLASS = """\
y = 2

class C:
    y = 3
    z = [x * y for x in range(3)]
    d = {k: [j * y for j in range(k)] for k in range(3)}
"""


def compiled(source):
    """Code of the module `source`, compiled the way the round trip compiles."""
    return roundtrip.compile_in_context(ast.parse(source).body, roundtrip.Context())


def run(fn, args):
    """What fn(*args) gives: its value (generators drained, coroutines run)
    or the type of what it raised."""
    args = copy.deepcopy(args)
    try:
        result = fn(*args)
        if inspect.isgenerator(result):
            result = list(result)
        elif inspect.iscoroutine(result):
            result = asyncio.run(result)
        return "returned", repr(result), repr(args)
    except Exception as e:
        return "raised", type(e)


def defined(source):
    namespace = {}
    exec(compile(source, "<test>", "exec"), namespace)
    return namespace["f"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_recompiles_identically(name):
    source, _ = FUNCTIONS[name]
    code = roundtrip.find_function(compiled(source), (), "f")
    outcome, detail = roundtrip.roundtrip_one(depyf.decompile, code, code, roundtrip.Context())
    assert outcome == "identical", "%s\n%s" % (detail, depyf.decompile(code))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_behaves_like_the_original(name):
    source, inputs = FUNCTIONS[name]
    original = defined(source)
    decompiled = depyf.decompile(original)
    new = defined(decompiled)
    for args in inputs:
        assert run(new, args) == run(original, args), decompiled


@pytest.mark.parametrize("source", [MODULE, CLASS], ids=["module", "class body"])
def test_module_code_recompiles_identically(source):
    code = compiled(source)
    decompiled = depyf.decompile(code)
    assert roundtrip.compare_code(code, compiled(decompiled)) is None, decompiled


def namespace_after(source):
    namespace = {}
    exec(compile(source, "<test>", "exec"), namespace)
    return {k: v for k, v in namespace.items() if k != "__builtins__"}


def test_module_code_behaves_like_the_original():
    # the module's x is restored after the comprehension that binds x
    assert namespace_after(depyf.decompile(compiled(MODULE))) == namespace_after(MODULE)
    want, got = namespace_after(CLASS)["C"], namespace_after(depyf.decompile(compiled(CLASS)))["C"]
    assert (got.z, got.d) == (want.z, want.d)


def test_cleanup_code_is_not_in_the_output():
    # the saving and restoring of the variable has no source form
    source = depyf.decompile(defined("def f(xs):\n    x = 1\n    y = [x for x in xs]\n    return x, y"))
    assert source == "def f(xs):\n    x = 1\n    y = [x for x in xs]\n    return x, y\n"
