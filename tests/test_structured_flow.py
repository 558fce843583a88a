"""Plain control-flow shapes (issue 11): the cases of behaviour_cases_flow.py
decompile without the state-machine fallback on every interpreter
(test_behaviour.py checks that they behave like the originals)."""
import pytest

import behaviour_cases
import depyf

FLOW_CASES = [fn for fn, _ in behaviour_cases.CASES if fn.__module__ == "behaviour_cases_flow"]


def test_there_are_flow_cases():
    assert len(FLOW_CASES) >= 1


@pytest.mark.parametrize("fn", FLOW_CASES, ids=[fn.__name__ for fn in FLOW_CASES])
def test_no_state_machine(fn):
    source = depyf.decompile(fn)
    assert "__state" not in source, source
