"""Block-stack shapes (3.8-3.10 try/except/finally and with): the cases of
behaviour_cases_legacy.py decompile without the state-machine fallback, and
their structured form passes translation validation (test_behaviour.py checks
that they behave like the originals)."""
import sys

import pytest

import behaviour_cases
from known_fallback import check_structured

LEGACY_CASES = [fn for fn, _ in behaviour_cases.CASES if fn.__module__ == "behaviour_cases_legacy"]


def test_there_are_legacy_cases():
    assert len(LEGACY_CASES) >= 4


# still the (correct) state machine on these versions (test_no_state_machine
# fails when one is structured there now)
FALLS_BACK_ON = {
    "try_except_as_return_else_finally": {(3, 10)},  # unstructured jump (the else's if)
    "with_while_loop_ending_the_function": {(3, 10)},  # unstructured backward jump (exits to two copies)
    # 3.11+ shapes (try.c, stmt.c), left to their paths:
    "for_while_true_try_except_continue_or_break": {(3, 11), (3, 12), (3, 13)},  # unstructured jump
    "while_try_continue_finally_then_break": {(3, 12), (3, 13)},  # conditional jump past its enclosing block
    "tries_returning_then_raise": {(3, 12)},  # fails validation (the raise placed in the clause)
    "and_or_statement_ending_the_function": {(3, 11), (3, 12), (3, 13)},  # one value expected
    "finally_ending_with_a_nested_try_except": {(3, 13)},  # finally block left without its copy
}


# cases of a shape the structurer may refuse (test_behaviour.py checks that
# they behave like the originals)
MAY_FALL_BACK = {
    "try_except_try_except_as_raise_then_return_attribute",  # 3.10: code after the inner body's POP_BLOCK
}


@pytest.mark.parametrize("fn", LEGACY_CASES, ids=[fn.__name__ for fn in LEGACY_CASES])
def test_no_state_machine(fn):
    if fn.__name__ in MAY_FALL_BACK:
        pytest.skip("behaviour only")
    check_structured(fn, sys.version_info[:2] in FALLS_BACK_ON.get(fn.__name__, ()))
