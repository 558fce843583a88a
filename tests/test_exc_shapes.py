"""Exception-handling shapes (issue 11): the cases of behaviour_cases_exc.py
decompile to structured code, without the state machine, on 3.11+.
test_behaviour.py checks on every version, with validation on and off, that
they behave like the originals; here validation of the running interpreter's
bytecode is on, so a structured form that does not compute the same prints
the state machine and fails."""
import sys

import pytest

import behaviour_cases
from known_fallback import check_structured

# (and a case of behaviour_cases_trust.py structured since: 3.10 and 3.12+
# copy a bare `raise` after a nested try into its clause, after POP_EXCEPT)
EXC_CASES = [fn for fn, _ in behaviour_cases.CASES
             if fn.__module__ == "behaviour_cases_exc" or fn.__name__ == "clause_falls_to_a_copied_bare_raise"]

# still the (correct) state machine on these minor versions: case -> versions
# (test_structured fails when one is structured there now)
KNOWN_FALLBACK = {
    "while_loop_ending_a_try_body": {10},  # each loop exit has its own POP_BLOCK and copy of what follows
    "while_loop_as_the_whole_try_body": {10},
    "with_ending_in_a_continue": {12, 13},
    # a finally body holding a try whose clauses end the body (3.11: the
    # handler placed past the closing RERAISE is not taken; was a wrong
    # structured form before, refused now)
    "finally_holding_a_try_except": {10, 11},  # 3.10: finally block left without its copy
    "return_in_try_finally_holding_a_try": {9, 10, 11},
    "finally_holding_a_try_finally_and_withs": {10, 11},
    "loop_with_a_finally_holding_a_with": {9},
    "with_holding_a_finally_ending_in_an_and_test": {10},  # finally block left without its copy
    # finally bodies ending in a raise or return (3.11: malformed finally block)
    "finally_ending_in_a_raise": {10, 11},
    "finally_ending_in_a_return": {8, 9, 10, 11},
    "try_except_finally_returning": {8, 9, 10, 11},
    "async_finally_ending_in_an_awaited_return": {8, 9, 10, 11},
    # a with in a loop whose body breaks, and the code after the loop, only
    # a break reaches, placed after __exit__ (3.10), or a with's suppressed
    # way on as the loop's only way back to its test at the bottom (3.12+)
    "for_loop_retrying_under_a_suppressing_with": {10},
    "while_true_retrying_under_a_suppressing_with": {10},
    "while_loop_retrying_under_a_suppressing_with_then_code": {12, 13},
    "while_else_breaking_from_a_with_in_an_if_branch": {10},
}


def test_there_are_exc_cases():
    assert len(EXC_CASES) >= 2


@pytest.mark.parametrize("fn", EXC_CASES, ids=[fn.__name__ for fn in EXC_CASES])
def test_structured(fn):
    check_structured(fn, sys.version_info[1] in KNOWN_FALLBACK.get(fn.__name__, ()))
