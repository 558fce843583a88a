"""Control-flow shapes that 3.12 and 3.13 compile differently from 3.11: a
while loop tested again at the bottom by a forward jump and a JUMP back, the
end of a loop body compiled as `if not c: continue`, TO_BOOL, stores that a
later one in the same target overwrites, class bodies' bookkeeping stores.
Each shape must decompile to a structure (no state-machine fallback) that
recompiles to the same bytecode (tests/roundtrip.py's comparison).  The
shapes compile alike on 3.11, which must keep them too; behaviour of the same
shapes is checked by the cases at the end of behaviour_cases.py."""
import ast
import sys

import pytest

import depyf
from depyf import _core
import roundtrip

SHAPES = {
    "while": "def f(n):\n    while n > 0:\n        n -= 1\n    return n",
    "while with an and test": "def f(a, b):\n    while a and b:\n        a = g(a)\n    return a",
    "while whose exit is a copied return":
        "def f(t, p):\n    while t:\n        if t is not p:\n            p.append(t)",
    "while with continue": (
        "def f(n):\n    while n:\n        n -= 1\n        if n == 3:\n            continue\n        g(n)\n"
        "    return n"),
    "not in ending a for body":
        "def f(t, p):\n    for x in t:\n        if x not in p:\n            p.append(x)",
    "is not ending a while body": (
        "def f(t, p):\n    while t:\n        t = g(t)\n        if t is not p:\n            p.append(t)"),
    "negated test ending nested loops": (
        "def f(a):\n    for t in a:\n        if g(t):\n            for x in t:\n                if x not in a:\n"
        "                    a.append(x)\n            continue\n        g(t)"),
    "not not as a value": "def f(a, b):\n    x = not not a\n    return x, not not a or b, b and not not a",
    "repeated names in a for target": "def f(rows):\n    return [tag for tag, _, _ in rows]",
    "repeated names in an assignment": "def f(t):\n    a, b, a = t\n    *_, x, _ = t\n    return a, b, x",
    "with": "def f(m, g):\n    with m:\n        g()\n    with m as x:\n        return g(x)",
    "try/finally before the code after an outer try": (
        "def f(stage, log):\n    try:\n        try:\n            g(stage)\n        except KeyError:\n"
        "            log.append(1)\n        finally:\n            log.append(2)\n    except OSError:\n"
        "        log.append(3)\n    if stage:\n        g(stage)\n    return log"),
    # 3.12+: the JUMP back of `if c: rest` ending a loop body comes from
    # the jump normalization, which no handler covers (a `continue` is
    # covered): the exception table tells the two spellings apart
    "if ending loop bodies in a generator": (
        "def f(t):\n    for x in t:\n        if g(x):\n            yield x\n        elif isinstance(x, list):\n"
        "            for y in x:\n                if g(y):\n                    yield y"),
    "if ending a loop body in a try": (
        "def f(t, p):\n    try:\n        for x in t:\n            if x:\n                p.append(x)\n"
        "    except KeyError:\n        pass\n    return p"),
    "continue in a generator": (
        "def f(t):\n    for x in t:\n        if not g(x):\n            continue\n        yield x"),
    # the return after a loop, copied into the break's jump: the value is
    # computed after the iterator is popped, which a `return` in the loop
    # does before
    "break to a copied return": (
        "def f(t, m):\n    r = []\n    for x in t:\n        if m is not None and x > m:\n            break\n"
        "        r.append(x)\n    return r"),
    "code after a try whose clause returns": (
        "def f(doc):\n    try:\n        lines = doc.split()\n    except AttributeError:\n        return None\n"
        "    m = len(lines)\n    return m"),
    "return of a local from a loop": (
        "def f(t, m):\n    r = []\n    for x in t:\n        if x > m:\n            return r\n"
        "        r.append(x)\n    return r"),
}


def compiled(source):
    return roundtrip.compile_in_context(ast.parse(source).body, roundtrip.Context())


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shape_recompiles_identically(name):
    code = roundtrip.find_function(compiled(SHAPES[name]), (), "f")
    source = depyf.decompile(code)
    assert "no structured form" not in source, source
    outcome, detail = roundtrip.roundtrip_one(depyf.decompile, code, code, roundtrip.Context())
    assert outcome == "identical", "%s\n%s" % (detail, source)


# Where every except clause leaves (continue, return), the code after the
# try body may be its else clause or the code after the statement; 3.12+
# tells them apart by co_names, numbered in the order the compiler meets
# them: it compiles an else clause before the handlers.  (3.8/3.9 are left
# out: there an else clause leaves an implicit `return None` after the
# statement, which try_legacy.c does not read yet.)
ELSE_SHAPES = {
    "else of a try whose clause continues": (
        "def f(assigned, wrapped, wrapper):\n    for attr in assigned:\n        try:\n"
        "            value = getattr(wrapped, attr)\n        except AttributeError:\n            pass\n"
        "        else:\n            setattr(wrapper, attr, value)\n    return wrapper"),
    "else of a try whose clause returns": (
        "def f(doc):\n    try:\n        lines = doc.split()\n    except AttributeError:\n        return None\n"
        "    else:\n        m = len(lines)\n        return m"),
}


@pytest.mark.skipif(sys.version_info < (3, 10), reason="3.8/3.9 print the else clause after the statement")
@pytest.mark.parametrize("name", sorted(ELSE_SHAPES))
def test_try_else_shape_recompiles_identically(name):
    code = roundtrip.find_function(compiled(ELSE_SHAPES[name]), (), "f")
    source = depyf.decompile(code)
    outcome, detail = roundtrip.roundtrip_one(depyf.decompile, code, code, roundtrip.Context())
    assert outcome == "identical", "%s\n%s" % (detail, source)


# A return after branches that CPython copies into the branches that jump
# to it: the copy keeps the statement's line, and 3.13 forms
# superinstructions within a basic block only (the code falling into the
# return is a block apart from it), so the return must be printed once,
# after the branches.  Decompiled from code with its real lines, compared
# with the reference on one line (tests/roundtrip.py).
SHARED_RETURNS = {
    "after an if/else": (
        "def f(q, n):\n    if q >= 0:\n        a = n << q\n        b = 1\n    else:\n        a = n >> q\n"
        "        b = 1 << -q\n    return a / b"),
    "after a nested if/else": (
        "def f(host, port):\n    host, d, port = host.rpartition(':')\n    if not d:\n        host = port\n"
        "    elif port:\n        if port.isdigit():\n            nport = int(port)\n        else:\n"
        "            nport = None\n        return host, nport\n    return host, d"),
    "after an elif chain": (
        "def f(a, g):\n    if a is None:\n        r = g(1)\n    elif a == 1:\n        r = g(2)\n    elif a == 2:\n"
        "        r = '...'\n    else:\n        r = g(a)\n    return r"),
    "written in each branch": (
        "def f(q, n):\n    if q >= 0:\n        a = n << q\n        return a\n    a = n >> q\n    return a"),
}


@pytest.mark.parametrize("name", sorted(SHARED_RETURNS))
def test_shared_return_printed_once(name):
    source = SHARED_RETURNS[name]
    code = roundtrip.find_function(compile(source, "<shape>", "exec", dont_inherit=True), (), "f")
    reference = roundtrip.find_function(compiled(source), (), "f")
    outcome, detail = roundtrip.roundtrip_one(depyf.decompile, code, reference, roundtrip.Context())
    assert outcome == "identical", "%s\n%s" % (detail, depyf.decompile(code))


def test_not_not_keeps_the_bool():
    # 3.13 compiles both `not not a` and a test of `a` with TO_BOOL; only the
    # first gives a bool, so the output must keep it
    def f(a):
        return not not a

    ns = {}
    exec(depyf.decompile(f), ns)
    assert ns["f"]([1]) is True and ns["f"]("") is False


def test_class_body_bookkeeping_is_not_source():
    # 3.13 stores __static_attributes__ and __firstlineno__ in class bodies
    def f():
        class C:
            def __init__(self):
                self.x = 1
        return C

    source = depyf.decompile(f)
    assert "__static_attributes__" not in source and "__firstlineno__" not in source, source


@pytest.mark.skipif(sys.version_info < (3, 12), reason="LOAD_FROM_DICT_OR_GLOBALS is 3.12+")
def test_class_namespace_read_lifts_to_a_name_load():
    # a type alias in a class body reads names from the class namespace,
    # then the globals: `LOAD_DEREF __classdict__; LOAD_FROM_DICT_OR_GLOBALS`
    module = compile("class D:\n    type B = int\n", "<shape>", "exec")
    body = next(c for c in module.co_consts if hasattr(c, "co_code"))
    alias = next(c for c in body.co_consts if hasattr(c, "co_code"))
    ops = [line.split()[3:5] for line in _core.ir_dump(alias).splitlines()]
    assert ["LOAD_NAME", "int"] in ops and ["LOAD_DEREF", "__classdict__"] not in ops
