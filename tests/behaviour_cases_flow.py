"""Behaviour cases for plain control-flow shapes (no exception handling)
that once fell back to the state machine on some interpreter although a
structured form exists (issue 11, third-party packages).  Imported by
behaviour_cases.py, whose CASES they join; tests/test_structured_flow.py
checks that none of them needs the fallback."""
from behaviour_cases import case

BOOLS = [(a, b, c, d) for a in (0, 1) for b in (0, 1) for c in (0, 2) for d in ("", "x")]


@case(*BOOLS)
def and_of_a_nested_and_or(a, b, c, d):
    # docutils Body.parse_option_marker: the furthest jump target (`d`) is
    # inside the right operand of the outer `and`
    out = []
    if a and ((b and not c) or d):
        out.append(1)
    if (a or b) and ((c and d) or not a):
        out.append(2)
    x = a and ((b and c) or d)
    out.append(x)
    if not a and (not (b or c) or d == "pyparsing"):
        out.append(3)
    return out
