"""Block-stack shapes (3.8-3.10 try/except/finally and with): the cases of
behaviour_cases_legacy.py decompile without the state-machine fallback, and
their structured form passes translation validation (test_behaviour.py checks
that they behave like the originals)."""
import sys

import pytest

import behaviour_cases
import depyf

LEGACY_CASES = [fn for fn, _ in behaviour_cases.CASES if fn.__module__ == "behaviour_cases_legacy"]


def test_there_are_legacy_cases():
    assert len(LEGACY_CASES) >= 4


# still the (correct) state machine from these versions on: 3.12+ exception
# shapes are try.c's part, not this file's
STILL_FALLING_BACK = {
    "loop_try_except_else_return": (3, 12),          # cannot structure PUSH_EXC_INFO here
    "loop_try_one_clause_else_return": (3, 12),      # cannot structure PUSH_EXC_INFO here
    "while_test_try_except_else_return": (3, 12),    # cannot structure PUSH_EXC_INFO here
    "loop_try_except_continue_then_code": (3, 12),   # stack underflow at RERAISE
    "loop_try_except_as_raise_else_return": (3, 12), # cannot structure PUSH_EXC_INFO here
    "with_loop_try_else_return_none": (3, 12),       # cannot structure PUSH_EXC_INFO here
    "loop_in_if_try_else_return": (3, 12),           # cannot structure PUSH_EXC_INFO here
    "for_try_return_except_pass": (3, 12),           # an interpreter-only value was kept in the structure
    "for_try_return_except_continue": (3, 12),       # an interpreter-only value was kept in the structure
    "finally_with_if_else": (3, 12),                 # finally block left without its copy
    "try_except_finally_with_a_with": (3, 12),       # finally block left without its copy
    "finally_with_a_nested_try_finally": (3, 12),    # finally block left without its copy
    "tries_whose_clauses_return_none": (3, 12),      # stack underflow at RERAISE
    "while_true_ending_with_try_except": (3, 12),    # unstructured jump
    "if_try_except_as_return_then_code": (3, 12),    # try statement runs past its enclosing block
    "with_try_return_except_raise": (3, 12),         # an interpreter-only value was kept in the structure
    "with_try_return_except_return": (3, 12),        # an interpreter-only value was kept in the structure
    "with_while_true_try_break_except": (3, 12),     # cannot structure PUSH_EXC_INFO here
    "finally_ending_with_a_nested_try_except": (3, 12),  # finally block left without its copy
    "finally_with_if_elif_else_and_nested_try": (3, 12),  # finally block left without its copy
    "while_true_if_else_try_except_continue": (3, 12),  # stack underflow at RERAISE
}


# still the (correct) state machine on these versions only
FALLS_BACK_ON = {
    "try_except_as_return_else_finally": {(3, 10), (3, 11)},  # unstructured jump (the else's if)
    "with_while_loop_ending_the_function": {(3, 10)},  # unstructured backward jump (exits to two copies)
    # 3.11+ shapes (try.c, stmt.c), left to their paths:
    "try_except_return_none_then_if_return_none": {(3, 12), (3, 13)},  # conditional jump past its enclosing block
    "try_except_return_none_then_loop_return_none": {(3, 12), (3, 13)},  # conditional jump past its enclosing block
    "for_while_true_try_except_continue_or_break": {(3, 11), (3, 12), (3, 13)},  # unstructured jump
    "while_try_continue_finally_then_break": {(3, 12), (3, 13)},  # conditional jump past its enclosing block
    "tries_returning_then_raise": {(3, 12)},  # fails validation (the raise placed in the clause)
    "try_except_then_raise_copied_after_the_body": {(3, 12)},  # fails validation (the raise placed in the clause)
    "and_or_statement_ending_the_function": {(3, 11), (3, 12), (3, 13)},  # one value expected
    "try_while_loop_then_return_past_the_handler": {(3, 12), (3, 13)},  # conditional jump past its enclosing block
    "try_except_if_else_then_return": {(3, 13)},  # duplicated code with no place to join
    "try_except_nested_if_else_then_return": {(3, 13)},  # duplicated code with no place to join
    "try_except_as_if_else_then_return": {(3, 13)},  # duplicated code with no place to join
    "try_except_as_if_else_nested_ifs_else_return": {(3, 13)},  # duplicated code with no place to join
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
    if sys.version_info[:2] in FALLS_BACK_ON.get(fn.__name__, ()):
        pytest.xfail("known: still the state machine on Python %d.%d" % sys.version_info[:2])
    since = STILL_FALLING_BACK.get(fn.__name__)
    if since and sys.version_info >= since:
        pytest.xfail("known: still the state machine on Python %d.%d+" % since)
    source = depyf.decompile(fn)
    assert "__state" not in source, source
    assert "# depyf:" not in source, source
