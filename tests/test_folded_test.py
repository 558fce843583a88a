"""The constant of a folded `if __debug__:` (src/core/folded_test.c).

On 3.10 and 3.11 the test compiles to `LOAD_CONST True; POP_JUMP_IF_FALSE`,
which the peephole pass deletes, leaving True in co_consts where the test
was compiled.  Output without the `if` recompiles to a pool one constant
short, every later index one off; the decompiler puts the statement at that
place under `if True:` (never `if __debug__:`, which -O would drop), at the
top level and in nested code objects alike.  Where the pool is not numbered
in first-use order (code made with code.replace, Dynamo's code) or the
output has a True of its own, no `if True:` may appear.  3.8/3.9 drop the
test before adding its constant and 3.12+ drop unused constants: there the
output needs nothing and must still recompile identically."""
import ast
import sys
import types

import pytest

import depyf
import roundtrip

KEEPS_TRUE = sys.version_info[:2] in ((3, 10), (3, 11))
# 3.13 removes the constant too, but the deleted test still ends a basic
# block, and superinstructions (STORE_FAST_LOAD_FAST) form within a block
# only: with no constant to find the place by, the output recompiles
# equivalent, not identical
SPLITS_BLOCKS = sys.version_info >= (3, 13)

# Each source defines `run()`, which returns what the code did.
SHAPES = {
    "top level of a function": (
        "def f(x):\n"
        "    a = 1\n"
        "    if __debug__:\n"
        "        b = 2\n"
        "    return (a, b, 3, x)\n"
        "def run():\n"
        "    return f('x')\n"),
    "in a nested function": (
        "def outer(x):\n"
        "    a = 'a'\n"
        "    def inner(y):\n"
        "        b = 'b'\n"
        "        if __debug__:\n"
        "            c = 'c'\n"
        "        return (b, c, 'd', y)\n"
        "    return inner(a)\n"
        "def run():\n"
        "    return outer(0)\n"),
    "in a method": (
        "class C:\n"
        "    def m(self, log):\n"
        "        log.append('start')\n"
        "        if __debug__:\n"
        "            log.append('debug')\n"
        "            self.seen = 42\n"
        "        log.append('end')\n"
        "        return log\n"
        "def run():\n"
        "    c = C()\n"
        "    return c.m([]), c.seen\n"),
    "several in one function": (
        "def f(log):\n"
        "    log.append(1)\n"
        "    if __debug__:\n"
        "        log.append(2)\n"
        "    log.append(3)\n"
        "    if __debug__:\n"
        "        log.append(4)\n"
        "    for k in range(5, 7):\n"
        "        if __debug__:\n"
        "            log.append(k)\n"
        "    return log\n"
        "def run():\n"
        "    return f([])\n"),
    "in a loop of a function": (
        "def f(items):\n"
        "    out = []\n"
        "    for x in items:\n"
        "        out.append(x)\n"
        "        if __debug__:\n"
        "            out.append('checked')\n"
        "    return out\n"
        "def run():\n"
        "    return f([1, 2])\n"),
    "around a for loop": (
        "def f(log):\n"
        "    log.append('a')\n"
        "    if __debug__:\n"
        "        for k in range(5, 7):\n"
        "            log.append(k)\n"
        "    return log\n"
        "def run():\n"
        "    return f([])\n"),
    "around a with": (
        "class M:\n"
        "    def __init__(self, log):\n"
        "        self.log = log\n"
        "    def __enter__(self):\n"
        "        self.log.append('enter')\n"
        "        return self\n"
        "    def __exit__(self, *exc):\n"
        "        self.log.append('exit')\n"
        "def f(log):\n"
        "    log.append('a')\n"
        "    if __debug__:\n"
        "        with M(log) as m:\n"
        "            log.append('in')\n"
        "    return log\n"
        "def run():\n"
        "    return f([])\n"),
    "around a while and a try": (
        "def f(log):\n"
        "    log.append('a')\n"
        "    if __debug__:\n"
        "        while len(log) < 3:\n"
        "            log.append('w')\n"
        "        try:\n"
        "            log.append('t')\n"
        "        except KeyError:\n"
        "            log.append('k')\n"
        "    return log\n"
        "def run():\n"
        "    return f([])\n"),
    "at module level": (
        "log = ['begin']\n"
        "if __debug__:\n"
        "    log.append('debug')\n"
        "log.append('end')\n"
        "def run():\n"
        "    return log\n"),
}


if sys.version_info >= (3, 10):
    SHAPES["around a match"] = (
        "def f(log, x):\n"
        "    log.append('a')\n"
        "    if __debug__:\n"
        "        match x['k']:\n"
        "            case 1:\n"
        "                log.append('one')\n"
        "            case _:\n"
        "                log.append('other')\n"
        "    return log\n"
        "def run():\n"
        "    return f([], {'k': 1}), f([], {'k': 2})\n")


def compiled(source):
    return roundtrip.compile_in_context(ast.parse(source).body, roundtrip.Context())


def run_source(source):
    namespace = {"__name__": "folded_test_case"}
    exec(compile(source, "<case>", "exec", dont_inherit=True), namespace)
    return namespace["run"]()


def recompiles_identically(code, source):
    new = compiled(source)
    return roundtrip.compare_code(code, new)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_folded_debug_test_recompiles_identically(name):
    code = compiled(SHAPES[name])
    source = depyf.decompile(code)
    assert "no structured form" not in source, source
    assert "__debug__" not in source, source
    if KEEPS_TRUE:
        assert "if True:" in source, source
    else:
        assert "if True:" not in source, source
    assert run_source(source) == run_source(SHAPES[name])
    if SPLITS_BLOCKS:
        pytest.skip("3.13: the folded test leaves a block boundary and no constant")
    diff = recompiles_identically(code, source)
    assert diff is None, "%s\n%s" % (diff, source)


@pytest.mark.skipif(SPLITS_BLOCKS, reason="3.13: the folded test leaves a block boundary and no constant")
def test_nested_function_round_trip():
    # the round trip's own comparison, from the outer function
    code = roundtrip.find_function(compiled(SHAPES["in a nested function"]), (), "outer")
    outcome, detail = roundtrip.roundtrip_one(depyf.decompile, code, code, roundtrip.Context())
    assert outcome == "identical", "%s\n%s" % (detail, depyf.decompile(code))


def test_first_test_gets_the_if():
    # one True for both tests: only the first place needs it
    code = compiled(SHAPES["several in one function"])
    source = depyf.decompile(code)
    assert source.count("if True:") == (1 if KEEPS_TRUE else 0), source
    assert source.index("append(2)") > source.index("if True:") if KEEPS_TRUE else True


NEGATIVE = {
    # `while True:` leaves its True unread too: the output's own True
    "a real while True": (
        "def f(log):\n"
        "    log.append('a')\n"
        "    if __debug__:\n"
        "        log.append('b')\n"
        "    n = 0\n"
        "    while True:\n"
        "        n += 1\n"
        "        if n > 2:\n"
        "            break\n"
        "    log.append(n)\n"
        "    return log\n"
        "def run():\n"
        "    return f([])\n"),
    # a default True the peephole pass folds into a tuple, its own
    # constant left unread
    "a default True folded into a tuple": (
        "def outer(log):\n"
        "    log.append('a')\n"
        "    def g(p=True):\n"
        "        return p\n"
        "    log.append(g())\n"
        "    return log\n"
        "def run():\n"
        "    return outer([])\n"),
    # the function loads True itself
    "a True of its own": (
        "def f(log):\n"
        "    log.append('a')\n"
        "    if __debug__:\n"
        "        log.append('b')\n"
        "    log.append(True)\n"
        "    return log\n"
        "def run():\n"
        "    return f([])\n"),
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_no_if_true_where_the_output_has_a_true(name):
    code = compiled(NEGATIVE[name])
    source = depyf.decompile(code)
    assert "if True:" not in source, source
    assert "__debug__" not in source, source
    compile(source, "<decompiled>", "exec")
    assert run_source(source) == run_source(NEGATIVE[name])


def swapped_constants(code, i, j):
    """`code` with co_consts[i] and co_consts[j] swapped, its loads along:
    the same behaviour from a pool not numbered in first-use order."""
    consts = list(code.co_consts)
    consts[i], consts[j] = consts[j], consts[i]
    raw = bytearray(code.co_code)
    import dis
    for ins in dis.get_instructions(code):
        if ins.opcode in dis.hasconst and ins.arg in (i, j):
            assert raw[ins.offset + 1] == ins.arg  # (no EXTENDED_ARG in these small functions)
            raw[ins.offset + 1] = j if ins.arg == i else i
    return code.replace(co_consts=tuple(consts), co_code=bytes(raw))


def test_no_if_true_in_a_pool_not_in_first_use_order():
    source = (
        "def f(log):\n"
        "    log.append('p')\n"
        "    if __debug__:\n"
        "        log.append('q')\n"
        "    log.append('r')\n"
        "    return log\n")
    namespace = {}
    exec(compile(source, "<case>", "exec", dont_inherit=True), namespace)
    f = namespace["f"]
    consts = f.__code__.co_consts
    p, r = consts.index("p"), consts.index("r")
    code = swapped_constants(f.__code__, p, r)
    g = types.FunctionType(code, {})
    assert g([]) == f([]) == ["p", "q", "r"]
    out = depyf.decompile(code)
    assert "if True:" not in out, out
    assert "__debug__" not in out, out
    ns = {}
    exec(compile(out, "<decompiled>", "exec"), ns)
    assert ns["f"]([]) == ["p", "q", "r"]
    # the same code with the compiler's pool does get it
    plain = depyf.decompile(f.__code__)
    assert ("if True:" in plain) == KEEPS_TRUE, plain


def test_no_if_true_when_another_constant_is_unread():
    # an extra constant nobody loads (as Dynamo's code keeps the original's pool)
    def f(log):
        log.append("p")
        if __debug__:
            log.append("q")
        return log

    code = f.__code__.replace(co_consts=f.__code__.co_consts + ("unused",))
    out = depyf.decompile(code)
    assert "if True:" not in out, out
    ns = {}
    exec(compile(out, "<decompiled>", "exec"), ns)
    assert ns["f"]([]) == ["p", "q"]
