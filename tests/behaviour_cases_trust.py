"""Behaviour cases for shapes the structurer once printed wrong (a form
that compiles but computes something else), found by translation
validation on third-party packages (issue 11).  Where no structured form is
found the state machine is right too: these only ask for the same
behaviour, validated or not (tests/test_behaviour.py runs both ways).
Imported by behaviour_cases.py, whose CASES they join."""
import sys

from behaviour_cases import case
from behaviour_cases_exc import _step


# --- code after a try that CPython copies into an except clause (3.12+
# inlines a small exit block into the clause's jump to it, after its
# POP_EXCEPT): printed inside the clause it would run while the exception is
# still handled ---------------------------------------------------------------

def _exc_now():
    return sys.exc_info()[0]


@case(("value", "key", []), ("key", 1, []), ("key", "value", []))
def clause_falls_to_a_copied_bare_raise(x, y, log):
    # the bare raise re-raises the outer exception, not the inner one
    try:
        _step(log, x)
    except KeyError:
        try:
            _step(log, y)
        except ValueError:
            log.append("inner")
        raise


@case(("key", []), (1, []), ("value", []))
def clause_falls_to_a_copied_return_of_a_call(x, log):
    try:
        return _step(log, x)
    except KeyError:
        pass
    return _exc_now()


@case(("key", []), (1, []))
def clause_falls_to_a_copied_raise_with_context(x, log):
    try:
        try:
            return _step(log, x)
        except KeyError:
            pass
        raise ValueError("after")
    except ValueError as e:
        return type(e.__context__)
