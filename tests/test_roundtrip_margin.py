"""Shapes behind the round trip's differences on stdlib modules outside the
30-module corpus (subprocess, gettext, ftplib, mailbox, random, optparse,
tempfile, imaplib, xml.etree...): each must decompile to a structure that
recompiles to the same bytecode (tests/roundtrip.py's comparison, the code
decompiled with its real lines, the reference compiled on one line) and
behaves like the original on a few inputs."""
import ast
import sys

import pytest

import depyf
import roundtrip

SHAPES = {
    # `if a or b: break`: CPython threads the first test's jump through the
    # then-branch's jump straight to the loop's exit (on 3.8/3.9 that is not
    # the bytecode of `if a: break` then `if b: break`)
    "or-test of a break": (
        "def f(t, log):\n    while True:\n        x = t.pop()\n        if x == 1 or not x:\n            break\n"
        "        log.append(x)\n    return log",
        [([3, 0, 2], []), ([5, 1, 4], []), ([2, 7, 1, 9], [])]),
    "or-test of a break with a call": (
        "def f(t, log):\n    i = 0\n    while i < len(t):\n        c = t[i]\n        i = i + 1\n"
        "        if c == '\"':\n            if i >= len(t) or t[i] != '\"':\n                break\n"
        "            i = i + 1\n        log.append(c)\n    return log, i",
        [('ab"c', []), ('a""b"', []), ('x"', [])]),
    # an elif ending a loop body, the if's jump threaded on to the loop's
    # head: `elif c:`, not `else: if not c: continue`
    "elif ending a loop body": (
        "def f(result):\n    depth = 0\n    for c in result:\n        if c == '(':\n            depth += 1\n"
        "            if depth > 2:\n                raise ValueError('deep')\n        elif c == ')':\n"
        "            depth -= 1\n    return depth",
        [('(()', ), ('((()))', ), ('', )]),
    # 3.8/3.9: a then-part that raises keeps a dead jump to the loop's head
    "if raise elif else ending a loop body": (
        "def f(opts, log):\n    for opt in opts:\n        if len(opt) < 2:\n            raise ValueError(opt)\n"
        "        elif len(opt) == 2:\n            if not opt[0] == '-':\n                raise ValueError(opt)\n"
        "            log.append(opt)\n        else:\n            log.append(opt + '!')\n    return log",
        [(['-a', '--bc'], []), (['x'], []), (['ab'], [])]),
    # 3.8/3.9: `return` on the if's line is written source, not the
    # implicit return of the function copied there
    "if return on one line then code": (
        "def f(self, log):\n    if self: return\n    log.append(1)\n    if len(log) > 1:\n        log.append(2)",
        [(0, []), (1, []), (0, [5])]),
    # 3.12+: an else clause is compiled before the handlers, the code after
    # the statement after them; where no name tells, the order of the
    # constants does
    "try except else returning constants": (
        "def f(fn, g):\n    try:\n        g(fn)\n    except OSError:\n        return False\n"
        "    else:\n        return True",
        [(1, abs), ('x', abs), (-2, abs)]),
    "try except raise else": (
        "def f(t, g):\n    months = ('a', 'b')\n    try:\n        n = months.index(t[:1]) + 1\n"
        "    except ValueError:\n        raise ValueError('bad %r' % t)\n    else:\n        m = g(t[1:], n)\n"
        "        return (m, n) + (7, 8)",
        [('a1', max), ('b', max), ('c', max)]),
    # 3.10+: a `return None` written after all other code is one block the
    # branches jump to; the implicit one would be copied into each
    "written return None after a loop": (
        "def f(node, g):\n    c = g(node)\n    while c is not None:\n        if c > 3:\n            return c\n"
        "        c = g(c)\n    return None",
        [(1, lambda c: c + 1 if c < 9 else None), (1, lambda c: None)]),
    "written return None after an if": (
        "def f(a, b):\n    o = a.get(b) or a.get(-b)\n    if o and o.bit_length() > 2:\n        return o\n"
        "    return None",
        [({1: 8}, 1), ({-1: 8}, 1), ({}, 1), ({1: 1}, 1)]),
    # 3.10+: None is the last constant (after the docstring): the returns
    # of None before code with constants of its own are copies of the
    # implicit one, a `break`, an `elif ...: pass`, an if falling off the end
    "break ending a loop at the end": (
        "def f(cls, log):\n    \"\"\"Doc.\"\"\"\n    for c in cls:\n        if 'a' in c:\n            break\n"
        "        if 'b' in c:\n            log.append(c)\n            break\n        log.append('c')",
        [(['x', 'b'], []), (['a', 'b'], []), (['x', 'y'], [])]),
    "elif pass else raise at the end": (
        "def f(m, log):\n    \"\"\"Doc.\"\"\"\n    if isinstance(m, int):\n        log.append(m + 1)\n"
        "    elif isinstance(m, str):\n        pass\n    else:\n        raise TypeError('no: %s' % type(m))",
        [(1, []), ('s', []), (2.5, [])]),
    "nested elif at the end": (
        "def f(k, v, log):\n    \"\"\"Doc.\"\"\"\n    if k != 'x':\n        log.append(k)\n"
        "    if k.lower() == 'connection':\n        if v == 'close':\n            log.append(True)\n"
        "        elif v == 'keep':\n            log.append(False)",
        [('connection', 'close', []), ('connection', 'keep', []), ('x', 'close', []), ('a', 'b', [])]),
}


# 3.8/3.9 print the else clause of such a try after the statement
# (try_legacy.c; test_py312_shapes.py)
IDENTICAL_SINCE = {
    "try except else returning constants": (3, 10),
    "try except raise else": (3, 10),
}


def compiled(source):
    return roundtrip.compile_in_context(ast.parse(source).body, roundtrip.Context())


def _function(source, flat):
    if flat:
        return roundtrip.find_function(compiled(source), (), "f")
    return roundtrip.find_function(compile(source, "<shape>", "exec", dont_inherit=True), (), "f")


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shape_recompiles_identically(name):
    if sys.version_info < IDENTICAL_SINCE.get(name, (3,)):
        pytest.skip("not read back identically before Python %d.%d" % IDENTICAL_SINCE[name])
    source = SHAPES[name][0]
    code, reference = _function(source, False), _function(source, True)
    text = depyf.decompile(code)
    assert "no structured form" not in text, text
    outcome, detail = roundtrip.roundtrip_one(depyf.decompile, code, reference, roundtrip.Context())
    assert outcome == "identical", "%s\n%s" % (detail, text)


def _outcome(fn, args):
    args = [list(a) if isinstance(a, list) else a for a in args]
    try:
        return "returned", fn(*args), args
    except Exception as e:
        return "raised", type(e), str(e)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shape_behaves_like_the_original(name):
    source, inputs = SHAPES[name]
    original, ns = {}, {}
    exec(compile(source, "<shape>", "exec", dont_inherit=True), original)
    exec(compile(depyf.decompile(original["f"]), "<decompiled>", "exec", dont_inherit=True), ns)
    for args in inputs:
        assert _outcome(ns["f"], args) == _outcome(original["f"], args), args
