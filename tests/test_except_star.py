"""`except*` (PEP 654, 3.11+; src/core/try_star.c): several clauses, with
and without `as`, with else and finally, clauses that raise, statements in
loops and nested in each other.  Each function must decompile to a
structured form (translation validation passed: no state machine), print
`except*`, and behave as the original: the same results and the same
exception groups raised (their types, messages and nesting).  The sources
are strings so that this module imports before 3.11."""
import sys

import pytest

import depyf

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="no except* before 3.11")

HELPERS = '''
def g(kinds):
    """Raises a group of the exceptions `kinds` names, if any."""
    made = {"v": ValueError, "t": TypeError, "o": OSError, "k": KeyError}
    if kinds:
        raise ExceptionGroup("eg", [made[k](k) for k in kinds])
    return len(kinds or ())
'''

CASES = {
    "two_clauses": """
def f(kinds):
    log = []
    try:
        g(kinds)
    except* ValueError as e:
        log.append(("v", len(e.exceptions)))
    except* TypeError:
        log.append("t")
    return log
""",
    "else_finally": """
def f(kinds):
    log = []
    try:
        log.append(g(kinds))
    except* ValueError:
        log.append(1)
    else:
        log.append(2)
    finally:
        log.append(3)
    return log
""",
    "clauses_raise": """
def f(kinds):
    try:
        g(kinds)
    except* ValueError as e:
        raise KeyError("from v")
    except* (TypeError, OSError) as e:
        if len(e.exceptions) > 1:
            raise
    return "done"
""",
    "for_loop_continue": """
def f(kinds):
    log = []
    for k in kinds or ["-"]:
        try:
            if k == "-":
                continue
            g([k])
        except* ValueError as e:
            log.append(("v", k))
        except* TypeError:
            pass
    return log
""",
    "while_loop": """
def f(kinds):
    n, log = len(kinds or ()), []
    while n:
        n -= 1
        try:
            g(kinds[n:n + 1])
            log.append(n)
        except* Exception as e:
            log.append(str(e.exceptions[0]))
    return log
""",
    "branches_in_clause": """
def f(kinds):
    log = []
    try:
        g(kinds)
    except* ValueError as e:
        if len(kinds) > 1:
            log.append("many")
        else:
            log.append("one")
    return log
""",
    "nested": """
def f(kinds):
    log = []
    try:
        try:
            g(kinds)
        except* ValueError:
            log.append("inner")
    except* TypeError as t:
        log.append(("outer", len(t.exceptions)))
    return log
""",
    "pass_clause_then_code": """
def f(kinds):
    try:
        g(kinds)
    except* OSError:
        pass
    x = len(kinds or ())
    return x * 2
""",
}

INPUTS = (None, [], ["v"], ["t"], ["v", "t"], ["o"], ["k"], ["v", "v"], ["t", "o"], ["v", "k", "t"])


def shape(exc):
    """What an exception says, its group's members included."""
    if isinstance(exc, BaseExceptionGroup):
        return (type(exc).__name__, exc.message, tuple(shape(e) for e in exc.exceptions))
    return (type(exc).__name__, str(exc))


def outcome(fn, arg):
    try:
        return ("returned", fn(list(arg) if arg is not None else None))
    except BaseException as exc:  # (every raise is a result to compare)
        return ("raised", shape(exc))


def build(source):
    namespace = {}
    exec(compile(HELPERS + source, "<case>", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("name", sorted(CASES))
def test_except_star_behaviour(name):
    original = build(CASES[name])["f"]
    text = depyf.decompile(original)
    assert "except*" in text and "depyf:" not in text, text
    decompiled = build(text)["f"]
    outcomes = [outcome(original, arg) for arg in INPUTS]
    assert [outcome(decompiled, arg) for arg in INPUTS] == outcomes, text
    assert len(set(map(repr, outcomes))) > 2  # (the inputs tell the clauses apart)


def test_module_level_except_star():
    source = HELPERS + "try:\n    g(kinds)\nexcept* KeyError as e:\n    got = len(e.exceptions)\nelse:\n    got = 0\n"
    text = depyf.decompile(compile(source, "<module>", "exec"))
    assert "except* KeyError as e:" in text, text
    for kinds in ([], ["k", "k"]):
        want, got = {"kinds": kinds}, {"kinds": kinds}
        exec(compile(source, "<module>", "exec"), want)
        exec(compile(text, "<decompiled>", "exec"), got)
        assert want["got"] == got["got"]
