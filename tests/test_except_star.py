"""`except*` (PEP 654, 3.11+; src/core/try_star.c): several clauses, with
and without `as`, with else and finally, clauses that raise, statements in
loops and nested in each other.  Each function must decompile to a
structured form (translation validation passed: no state machine), print
`except*`, and behave as the original: the same results and the same
exception groups raised (their types, messages and nesting).  Shapes the
structurer may not read on every version must still decompile (as the state
machine, src/core/fallback_star.c) and behave the same, and so must every
case printed as the state machine on purpose.  The sources are strings so
that this module imports before 3.11."""
import sys

import pytest

import depyf
from depyf import _core

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="no except* before 3.11")

HELPERS = '''
def g(kinds):
    """Raises a group of the exceptions `kinds` names, if any; ["!", k]
    raises the exception k names alone (except* wraps it in a group)."""
    made = {"v": ValueError, "t": TypeError, "o": OSError, "k": KeyError}
    if kinds and kinds[0] == "!":
        raise made[kinds[1]]("alone")
    if kinds:
        raise ExceptionGroup("eg", [made[k](k) for k in kinds])
    return len(kinds or ())

class Manager:
    """An async context manager that lets exceptions through."""
    async def __aenter__(self):
        return self
    async def __aexit__(self, *exc):
        return False
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
    # the body returns: the code after the statement is reached only from
    # the handler (3.12+ inlines it there)
    "body_returns": """
def f(kinds):
    log = []
    try:
        g(kinds)
        return "body"
    except* ValueError as e:
        log.append(len(e.exceptions))
    except* TypeError:
        log.append("t")
    return log
""",
    "body_returns_in_finally": """
def f(kinds):
    log = []
    try:
        try:
            g(kinds)
            return log
        except* ValueError:
            log.append("v")
        finally:
            log.append("fin")
    except* TypeError:
        log.append("t")
    return log
""",
    "bare_raise_keeps_the_matched_part": """
def f(kinds):
    try:
        g(kinds)
    except* ValueError:
        raise
    except* TypeError:
        pass
    return "done"
""",
    "raise_in_clauses": """
def f(kinds):
    try:
        g(kinds)
    except* ValueError as e:
        raise e
    except* TypeError as e:
        raise KeyError("new") from e
    return "done"
""",
    "body_always_raises": """
def f(kinds):
    match, rest = None, None
    try:
        try:
            g(kinds)
            raise OSError("body")
        except* ValueError as e:
            match = e
    except Exception as e:
        rest = e
    return repr(match), repr(rest)
""",
    "async_with_else": """
async def f(kinds):
    log = []
    async with Manager():
        try:
            g(kinds)
        except* ValueError as e:
            log.append(len(e.exceptions))
        else:
            log.append("else")
    return log
""",
    "body_returns_in_loop": """
def f(kinds):
    log = []
    for i in range(2):
        try:
            g(kinds)
            return log
        except* ValueError as e:
            log.append(i)
    return log
""",
    "nested_in_clauses": """
def f(kinds):
    try:
        try:
            g(kinds)
        except* TypeError as e:
            7
        except* OSError:
            9
        except* ValueError:
            raise
    except* ValueError:
        try:
            raise TypeError(14)
        except* OSError:
            16
        except* TypeError as e:
            18
    return 0
""",
}

# Shapes that must decompile and behave the same on every version, as a
# structured form or, where the structurer cannot read them yet, as the
# state machine.
ANY_FORM_CASES = {
    "nested_body_always_raises": """
def f(kinds):
    try:
        try:
            raise ExceptionGroup("eg", [ValueError(5), TypeError("bad type")])
        except* TypeError as e:
            7
        except* OSError:
            9
        except* ValueError:
            raise
    except* ValueError:
        try:
            g(kinds)
        except* OSError:
            16
        except* TypeError as e:
            18
    return 0
""",
    "plain_try_in_clause_then_raise": """
def f(kinds):
    log = []
    try:
        g(kinds)
    except* ValueError:
        try:
            raise KeyError("inner")
        except KeyError:
            log.append("k")
        raise
    return log
""",
    "nested_with_returns": """
def f(kinds):
    match, rest = None, None
    try:
        try:
            g(kinds or ["t", "v"])
        except* ValueError as e:
            match = e
    except Exception as e:
        rest = e
    return match, rest
""",
    "in_with_in_loop": """
import contextlib
def f(kinds):
    out = []
    for bad in (OSError, KeyError):
        with contextlib.nullcontext(bad):
            try:
                try:
                    g(kinds)
                except* TypeError:
                    pass
                except* bad:
                    raise
            except Exception as e:
                out.append(repr(e))
    return out
""",
    "body_cannot_raise": """
def f(kinds):
    hit_except = hit_finally = False
    try:
        pass
    except* BaseException:
        hit_except = True
    finally:
        hit_finally = True
    return hit_except, hit_finally, kinds
""",
}

INPUTS = (None, [], ["v"], ["t"], ["v", "t"], ["o"], ["k"], ["v", "v"], ["t", "o"], ["v", "k", "t"], ["!", "v"],
          ["!", "k"])


def shape(exc):
    """What an exception says, its group's members included."""
    if isinstance(exc, BaseExceptionGroup):
        return (type(exc).__name__, exc.message, tuple(shape(e) for e in exc.exceptions))
    return (type(exc).__name__, str(exc))


def outcome(fn, arg):
    try:
        result = fn(list(arg) if arg is not None else None)
        if hasattr(result, "__await__"):  # (a coroutine that awaits nothing that suspends)
            try:
                result.send(None)
            except StopIteration as stop:
                result = stop.value
        return ("returned", repr(result))
    except BaseException as exc:  # (every raise is a result to compare)
        return ("raised", shape(exc))


def build(source, text=None):
    """The case's namespace; with `text`, its f is the decompiled one."""
    namespace = {}
    exec(compile(HELPERS + source, "<case>", "exec"), namespace)
    if text is not None:
        exec(compile(text, "<decompiled>", "exec"), namespace)
    return namespace


def check_behaves_the_same(source, text):
    outcomes = [outcome(build(source)["f"], arg) for arg in INPUTS]
    decompiled = build(source, text)["f"]
    assert [outcome(decompiled, arg) for arg in INPUTS] == outcomes, text
    assert len(set(map(repr, outcomes))) > 1  # (the inputs take more than one way)


@pytest.mark.parametrize("name", sorted(CASES))
def test_except_star_behaviour(name):
    text = depyf.decompile(build(CASES[name])["f"])
    assert "except*" in text and "depyf:" not in text, text
    check_behaves_the_same(CASES[name], text)


@pytest.mark.parametrize("name", sorted(ANY_FORM_CASES))
def test_except_star_shapes_decompile_in_some_form(name):
    text = depyf.decompile(build(ANY_FORM_CASES[name])["f"])  # (raises nothing)
    check_behaves_the_same(ANY_FORM_CASES[name], text)


@pytest.mark.parametrize("name", sorted(CASES) + sorted(ANY_FORM_CASES))
def test_except_star_as_state_machine(name):
    """The state machine's form of except* (fallback_star.c): the same
    results and exception groups, also for a bare `raise` in a clause (it
    re-raises the matched part only) and groups split by later clauses."""
    source = CASES.get(name) or ANY_FORM_CASES[name]
    text = _core.decompile(build(source)["f"].__code__, force_fallback=True)
    assert "depyf:" in text and "star_match(" in text, text
    assert "sys.exc_info() is the whole group caught" in text, text  # its one difference, said where it is printed
    check_behaves_the_same(source, text)


def test_module_level_except_star():
    source = HELPERS + "try:\n    g(kinds)\nexcept* KeyError as e:\n    got = len(e.exceptions)\nelse:\n    got = 0\n"
    text = depyf.decompile(compile(source, "<module>", "exec"))
    assert "except* KeyError as e:" in text, text
    for kinds in ([], ["k", "k"]):
        want, got = {"kinds": kinds}, {"kinds": kinds}
        exec(compile(source, "<module>", "exec"), want)
        exec(compile(text, "<decompiled>", "exec"), got)
        assert want["got"] == got["got"]
