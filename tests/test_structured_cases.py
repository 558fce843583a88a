"""Behaviour cases (behaviour_cases.py) whose shapes once fell back to the
state machine on some interpreter although a structured form exists (issue
11: found on third-party packages): each must now decompile without it.
test_behaviour.py checks that they behave like the originals."""
import pytest

import behaviour_cases
import depyf

# the header of the state machine, whether no structured form was found or
# the one found failed validation
FALLBACK_NOTE = "this is an equivalent state machine"

STRUCTURED = [
    # 3.12/3.13: the await of __aexit__ is longer (CLEANUP_THROW, END_SEND)
    "async_with",
    "async_with_plain_and_nested",
    "async_with_in_async_for",
    "async_with_in_async_generator",
    # 3.10/3.11: an inner if jumping to a copy of the function's `return None`
    "nested_ifs_ending_the_function",
    "nested_ifs_with_and_ending_the_function",
    # 3.12/3.13: a while test at the bottom whose exits are copies of `return None`
    "while_loops_ending_the_function",
    # 3.8/3.9: the dead `JUMP head` after an if/else whose branches both jump
    "while_true_with_else_break",
    "async_generator_while_true_with_else_break",
    # 3.8/3.9 raised, later versions printed the state machine: a bool op
    # whose jump was threaded to the join of a conditional expression
    "bool_op_in_an_arm_of_a_conditional_expression",
    "bool_ops_in_both_arms_returned",
    # 3.12/3.13: END_ASYNC_FOR at the function's end, after the loop's exit
    "async_for_inside_if",
    "async_for_inside_if_ending_the_function",
    # 3.12/3.13: an async comprehension inside a block, whose statement goes
    # on in cold code after END_ASYNC_FOR at the function's end
    "async_comprehension_inside_if_stored_on_an_object",
    "async_comprehension_inside_if_returned",
    "async_comprehension_inside_if_then_more_code",
    # 3.10+: `CALL; RETURN_VALUE` copied into both arms of a conditional
    # expression whose callable was loaded before the test
    "conditional_argument_of_a_returned_call",
    "conditional_argument_of_a_returned_method_call",
    "conditional_argument_after_its_callable_was_fetched",
    # every version: a literal dict unpacked into a display or a call's
    # keywords was printed as items, which compile to other code
    "dict_display_starting_with_a_literal_unpacked",
    "call_keywords_starting_with_a_literal_unpacked",
    # 3.10: a with in a while loop whose body breaks, the code after the loop
    # copied after __exit__
    "while_loop_retrying_under_a_suppressing_with",
]

BY_NAME = {fn.__name__: fn for fn, _ in behaviour_cases.CASES}


@pytest.mark.parametrize("name", STRUCTURED)
def test_case_decompiles_without_the_fallback(name):
    source = depyf.decompile(BY_NAME[name])
    assert FALLBACK_NOTE not in source, source
