"""`match` statements (src/core/match.c): every pattern kind, guards,
nesting and the ways a case body can end.  Each function is decompiled, the
output recompiled, and it must give the same normalized bytecode as the
original source (tests/roundtrip.py) and the same results on several
subjects.  The sources are strings so that this module imports before 3.10."""
import ast
import contextlib
import copy
import sys
import textwrap
import types

import pytest

import depyf
import roundtrip

pytestmark = pytest.mark.skipif(sys.version_info < (3, 10), reason="no match statement before 3.10")


class Point:
    __match_args__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __repr__(self):
        return "Point(%r, %r)" % (self.x, self.y)


class Color:
    RED = "red"
    GREEN = "green"


ns = types.SimpleNamespace(Point=Point, KEY="key", ZERO=0, suppress=contextlib.suppress)
GLOBALS = {"Point": Point, "Color": Color, "ns": ns, "counter": 0}

POINTS = (Point(0, 0), Point(1, 5), Point(2, 2), Point("a", 0), Point([1], {"k": 2}))
SEQUENCES = ([], [1], [1, 2], (1, 2, 3), [1, 2, 3, 4], [[1, 2], 3], "ab", (5, "x"), [Point(1, 1)])
MAPPINGS = ({}, {"k": 1}, {"k": [1, 2], "v": 0}, {"kind": "a", "v": 1}, {"key": 2, "x": 3}, {"v": 1, "w": 2})
SCALARS = (None, True, False, 0, 1, 2, -3, 2.5, 1 + 2j, "red", "text", b"raw", "green")
SUBJECTS = SCALARS + SEQUENCES + MAPPINGS + POINTS

CASES = {
    "literals": """
def f(v):
    match v:
        case 0:
            return "zero"
        case 1 | 2:
            return "small"
        case -3:
            return "negative"
        case 2.5 | (1 + 2j):
            return "float or complex"
        case "text" | b"raw":
            return "text"
    return "none"
""",
    "singletons_and_default": """
def f(v):
    match v:
        case None:
            return "none"
        case True:
            return "true"
        case False:
            return "false"
        case _:
            return "other"
""",
    "dotted_values": """
def f(v):
    match v:
        case Color.RED:
            return 1
        case Color.GREEN | ns.KEY:
            return 2
        case ns.ZERO:
            return 3
    return 0
""",
    "capture_last": """
def f(v):
    match v:
        case 1:
            return "one"
        case other:
            return ("other", other)
""",
    "fixed_sequences": """
def f(v):
    match v:
        case []:
            return "empty"
        case [x]:
            return ("one", x)
        case [1, y]:
            return ("starts with 1", y)
        case (a, b, c):
            return (c, b, a)
        case _:
            return "other"
""",
    "starred_sequences": """
def f(v):
    match v:
        case [*rest]:
            return ("all", rest)
    return None
""",
    "star_positions": """
def f(v):
    match v:
        case [1, *rest, last]:
            return ("one..", rest, last)
        case [first, *_]:
            return ("first", first)
    return "no"
""",
    "star_wildcards": """
def f(v):
    match v:
        case [_, _]:
            return "two"
        case [1, *_, 4]:
            return "one to four"
        case [*_, 3]:
            return "ends with 3"
        case [a, _, *_]:
            return ("at least two", a)
        case [*_]:
            return "sequence"
    return "not a sequence"
""",
    "nested_sequences": """
def f(v):
    match v:
        case [[a, b], c]:
            return ("nested", a, b, c)
        case [Point(x=x), *_]:
            return ("point first", x)
    return None
""",
    "mappings": """
def f(v):
    match v:
        case {"kind": "a", "v": value}:
            return ("a", value)
        case {ns.KEY: 2, **rest}:
            return ("key", rest)
        case {"k": [_, *others]}:
            return ("k", others)
        case {"v": 0 | 1 as small, **rest}:
            return (small, rest)
        case {}:
            return "mapping"
    return "not a mapping"
""",
    "mapping_rest_only": """
def f(v):
    match v:
        case {**everything}:
            return everything
    return "no"
""",
    "classes": """
def f(v):
    match v:
        case Point(0, 0):
            return "origin"
        case Point(x=1, y=y):
            return ("x is one", y)
        case Point(x, y) if x == y:
            return ("diagonal", x)
        case ns.Point(x=str() as name):
            return ("named", name)
        case int(n) | float(n):
            return ("number", n)
        case Point():
            return "point"
    return "unknown"
""",
    "or_with_captures": """
def f(v):
    match v:
        case [a, b] | [b, a, _]:
            return (a, b)
        case (1, x) | {"x": x}:
            return x
        case Point(x=p, y=q) | [Point(p, q)]:
            return (p, q)
    return "none"
""",
    "as_patterns": """
def f(v):
    match v:
        case [int() as i, str() as s] as whole:
            return (i, s, whole)
        case (1 | 2) as n:
            return n
        case {"k": [1, *_] as inner}:
            return inner
    return None
""",
    "guards": """
def f(v):
    match v:
        case int(n) if n > 1 and n < 10 or n == -3:
            return "int range"
        case [x, y] if not x or y:
            return "pair"
        case str() as s if 0 < len(s) < 4:
            return "short"
        case x if x is None:
            return "none"
        case _:
            return "other"
""",
    "guard_on_last_case": """
def f(v):
    match v:
        case 1:
            return "one"
        case [x] if x:
            return "true one"
    return "no"
""",
    # reads as `x = v; if x == 2: ...`: the same bytecode
    "guarded_capture_then_default": """
def f(v):
    match v:
        case x if x == 2:
            return "two"
        case _:
            return "other"
""",
    "fall_through_bodies": """
def f(v):
    log = []
    match v:
        case 1:
            log.append("one")
        case [x, *_]:
            log.append(x)
        case {"k": k}:
            log.append(k)
        case _:
            log.append("default")
    log.append("after")
    return log
""",
    "fall_through_no_default": """
def f(v):
    result = "none"
    match v:
        case 0 | 1:
            result = "bit"
        case Point(x=x):
            result = x
    return result
""",
    "match_ends_function": """
def f(v, log):
    match v:
        case 1:
            log.append(1)
        case [x] if x:
            log.append(x)
""",
    "raise_in_body": """
def f(v):
    match v:
        case None:
            raise ValueError("none")
        case [*_]:
            return "seq"
    return "other"
""",
    "in_for_loop": """
def f(v):
    out = []
    for item in [v, 1, [2, 3], None]:
        match item:
            case None:
                break
            case 1:
                continue
            case [a, *_]:
                out.append(a)
            case _:
                out.append("other")
    return out
""",
    "in_for_loop_last_statement": """
def f(v):
    out = []
    for item in [v, 1, [2]]:
        match item:
            case 1:
                out.append(1)
            case [a]:
                out.append(a)
    return out
""",
    "in_while_loop": """
def f(v):
    n = 0
    while n < 5:
        n += 1
        match v:
            case [x, *rest]:
                v = rest
            case _:
                break
    return n
""",
    "in_if_else": """
def f(v):
    if v is not None:
        match v:
            case 1:
                return "one"
            case [x]:
                return x
    else:
        return "none"
    return "after"
""",
    "nested_match": """
def f(v):
    match v:
        case [x, y]:
            match x:
                case 1:
                    return ("one", y)
                case _:
                    return ("other", y)
        case _:
            return None
""",
    "in_try": """
def f(v):
    try:
        match v:
            case [x]:
                return 1 / x
            case _:
                return None
    except ZeroDivisionError:
        return "zero"
""",
    "tuple_subject": """
def f(v):
    match v, len(str(v)):
        case (0, _):
            return "zero"
        case (_, 1):
            return "one char"
    return "other"
""",
    "global_capture": """
def f(v):
    global counter
    match v:
        case [counter]:
            return counter
    return None
""",
    "or_keyword_orders": """
def f(v):
    match v:
        case Point(x=a, y=b) | Point(y=b, x=a, z=_):
            return (a, b)
        case [x] | x:
            return x
""",
    "wildcard_guard_first": """
def f(v):
    match v:
        case _ if v == 1:
            return "one"
        case [*_]:
            return "seq"
        case _:
            return "other"
""",
    "pass_bodies": """
def f(v):
    r = 0
    match v:
        case 1:
            pass
        case [_]:
            r = 1
        case _:
            pass
    return r
""",
    "bodies_with_statements": """
def f(v):
    out = []
    match v:
        case [*items]:
            for i in items:
                if i:
                    out.append(i)
            else:
                out.append("done")
        case {"k": k}:
            while k:
                k = k[1:] if isinstance(k, list) else 0
                out.append(k)
        case _:
            try:
                out.append(1 / 0)
            except ZeroDivisionError:
                out.append("zero")
    return out
""",
    "deep_nesting": """
def f(v):
    match v:
        case [[[a, [b, *c]], {"k": (d, e) | [d, e, _]}], Point(x=[f_, *_], y={"y": g} as h)]:
            return (a, b, c, d, e, f_, g, h)
        case [[x, *_], *_]:
            return x
    return None
""",
    "star_captures": """
def f(v):
    match v:
        case [a, *mid, b, c]:
            return (a, mid, b, c)
        case (*head, last):
            return (head, last)
    return None
""",
    "class_wildcards": """
def f(v):
    match v:
        case Point(_, 0):
            return "y zero"
        case Point(1, _):
            return "x one"
        case Point(_, _) as p:
            return p
    return None
""",
    "continue_in_while": """
def f(v):
    out = []
    items = list(v) if isinstance(v, (list, tuple)) else [v]
    while items:
        item = items.pop()
        match item:
            case int(n) if n > 1:
                continue
            case int(n):
                out.append(n)
            case str() as s:
                out.append(s)
                break
    return out
""",
    "in_with_block": """
def f(v):
    with ns.suppress(ValueError):
        match v:
            case [x]:
                raise ValueError(x)
            case {"k": k}:
                return k
    return "out"
""",
    "negated_guards": """
def f(v):
    match v:
        case [x, y] if not (x and y):
            return "not both"
        case [x, y] if x is not None and y is None:
            return "only x"
        case Point(x=x) if x in (0, 1) or x not in [2]:
            return "pt"
    return "no"
""",
    "subject_expression": """
def f(v):
    match str(v)[:2]:
        case "No":
            return 1
        case "Tr" | "Fa":
            return 2
    return 3
""",
    "in_else_branch": """
def f(v):
    if v == 0:
        r = "zero"
    else:
        match v:
            case [x]:
                r = x
            case _:
                r = "other"
    return r
""",
    # shapes found by generating random match statements
    "default_before_else": """
def f(v):
    r = []
    if v != "b":
        match v:
            case _ if 0 < len(str(v)) < 3:
                r.append(0)
            case 2:
                r.append(1)
            case _:
                r.append("default")
    else:
        r.append("else")
    return r
""",
    "guard_then_pass_before_default": """
def f(v):
    r = []
    match v:
        case {"b": 1}:
            r.append(0)
        case n0 if n0 and v:
            pass
        case _:
            return "default"
    return r
""",
    "empty_guarded_last_case": """
def f(v):
    r = []
    match v:
        case {"c": True}:
            pass
        case None if v is None:
            pass
    return r
""",
    "guarded_wildcard_then_default": """
def f(v):
    match v:
        case 0:
            return "zero"
        case _ if v == 1:
            return "one"
        case _:
            return "default"
""",
    "mapping_alternative": """
def f(v):
    r = []
    match v:
        case 1 | {} | {"a": _}:
            r.append(0)
    r.append("after")
    return r
""",
    "nested_mapping_rest": """
def f(v):
    match v:
        case {"c": n0, "a": {"a": n1}, **n2}:
            return (n0, n1, n2)
    return None
""",
    "reordered_pops": """
def f(v):
    match v:
        case Point({"a": (-1) as n0, "c": _}, 2 | None | "b", y=(2, {"a": n1})):
            return (n0, n1)
    return None
""",
    "continue_then_fall_into_loop_test": """
def f(v):
    r = []
    n = 0
    while n < 2:
        n += 1
        match v:
            case n0 if v or not v:
                r.append((0, n0))
                continue
            case n0:
                r.append((1, n0))
    return r
""",
    "continue_then_code_after": """
def f(v):
    r = []
    for v in [v, v]:
        match v:
            case "a" if v:
                r.append(3)
                continue
            case False:
                pass
        r.append("after")
    return r
""",
    "last_case_falls_out_of_loop": """
def f(v):
    r = []
    n = 0
    while n < 2:
        n += 1
        match v:
            case 2:
                r.append(2)
                continue
            case n0:
                r.append((3, n0))
                break
    return r
""",
}

# From 3.12 on CPython copies short blocks that return into every jump to
# them and lays out loops differently; for these cases that changes how
# the statements around or inside the match (loops, with, chained
# comparisons, returns after it) come out, not the match itself.
ELSEWHERE_FROM_3_12 = {
    "in_for_loop": "`break` to a copied `return`",
    "in_while_loop": "3.12 while loops",
    "in_if_else": "`return` copied into the if",
    "bodies_with_statements": "3.12 while loops",
    "continue_in_while": "3.12 while loops",
    "in_with_block": "3.12 with blocks",
    "in_else_branch": "`return` copied into the branches (3.13)",
    "continue_then_fall_into_loop_test": "3.12 while loops",
}


# 3.10 copies a case body that returns into the failure path of the case
# before it, and threads jumps to returns differently: these come out
# different, or as the state machine (FALLBACK_3_10), and behave the same.
DIFFERENT_IN_3_10 = {
    "in_for_loop": "`break` to a copied `return`",
    "in_if_else": "`return` copied into the if",
    "or_keyword_orders": "an or-pattern of class patterns that capture in different orders",
}
FALLBACK_3_10 = {"or_keyword_orders"}

# cases whose bytecode is also that of plain statements, which they become
PLAIN_IF = {"guarded_capture_then_default"}


def build(name):
    """The original function, and its reference code object compiled (with
    its context) the way the round trip compiles the decompiled source."""
    source = textwrap.dedent(CASES[name]).strip() + "\n"
    namespace = dict(GLOBALS)
    exec(compile(source, "<match case %s>" % name, "exec"), namespace)
    fn = namespace["f"]
    context = roundtrip.Context()
    tree = ast.parse(source)
    reference = roundtrip.find_function(roundtrip.compile_in_context(tree.body, context), (), "f")
    return fn, reference, context


def outcome(fn, subject):
    args = (copy.deepcopy(subject),) if fn.__code__.co_argcount == 1 else (copy.deepcopy(subject), [])
    try:
        return ("returned", repr(fn(*args)), repr(args))
    except Exception as e:
        return ("raised", type(e))


def elsewhere(name):
    if sys.version_info >= (3, 12) and name in ELSEWHERE_FROM_3_12:
        pytest.skip(ELSEWHERE_FROM_3_12[name])


def bytecode_params():
    gaps = DIFFERENT_IN_3_10 if sys.version_info[:2] == (3, 10) else {}
    return [pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=gaps[name])) if name in gaps else name
            for name in sorted(CASES)]


@pytest.mark.parametrize("name", bytecode_params())
def test_bytecode_is_identical(name):
    elsewhere(name)
    fn, reference, context = build(name)
    result, detail = roundtrip.roundtrip_one(depyf.decompile, fn.__code__, reference, context)
    assert result == "identical", "%s\n%s" % (detail, depyf.decompile(fn))


@pytest.mark.parametrize("name", sorted(CASES))
def test_behaviour_is_identical(name):
    elsewhere(name)
    fn, _, _ = build(name)
    source = depyf.decompile(fn)
    fallback = sys.version_info[:2] == (3, 10) and name in FALLBACK_3_10
    assert ("depyf: no structured form" in source) == fallback, source
    assert fallback or ("match " in source) != (name in PLAIN_IF), source
    namespace = dict(GLOBALS)
    exec(compile(source, "<decompiled %s>" % name, "exec"), namespace)
    decompiled = namespace["f"]
    for subject in SUBJECTS:
        assert outcome(decompiled, subject) == outcome(fn, subject), (subject, source)


def test_every_case_tells_subjects_apart():
    # a case whose function gives one answer for all subjects could not fail
    for name in CASES:
        fn, _, _ = build(name)
        assert len({outcome(fn, s) for s in SUBJECTS}) > 1, name


def test_module_level_match():
    source = textwrap.dedent("""
        match subject:
            case [a, b, *c]:
                kind = ("seq", a, b, c)
            case {"k": [q, _]}:
                kind = ("map", q)
            case _:
                kind = None
        """)
    code = compile(source, "<module>", "exec")
    text = depyf.decompile(code)
    diff = roundtrip.compare_code(roundtrip.compile_in_context(ast.parse(source).body, roundtrip.Context()),
                                  roundtrip.compile_in_context(ast.parse(text).body, roundtrip.Context()))
    assert diff is None, "%s\n%s" % (diff, text)
    for subject in ([1, 2, 3], {"k": [4, 5]}, 7):
        want, got = {"subject": subject}, {"subject": subject}
        exec(code, want)
        exec(compile(text, "<decompiled>", "exec"), got)
        assert want["kind"] == got["kind"]


def test_not_a_match():
    # a chained assignment also starts with COPY 1 and stores; followed by a
    # condition it reads like `case b as a if ...`
    def f(v):
        a = b = v
        return a, b

    def g(v, check):
        a = b = v
        assert not check(a)
        return b

    assert "match" not in depyf.decompile(f)
    assert "match" not in depyf.decompile(g)


def test_comparison_is_not_a_match():
    # one comparison consuming the subject is the code of a lone value or
    # singleton case too: it reads as the `if` (never a match nobody wrote)
    def f(xs, s):
        n = 0
        for x in xs:
            n += 1
            if x is None:
                return -1
            if x == "s" and s:
                break
            elif x is False:
                n += 10
            else:
                n += 100
        return n

    assert "match" not in depyf.decompile(f)
