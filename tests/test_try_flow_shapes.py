"""Loops holding try statements (issue 11): the cases of
behaviour_cases_try_flow.py decompile to structured code, without the state
machine.  test_behaviour.py checks on every version, with validation on and
off, that they behave like the originals; here validation of the running
interpreter's bytecode is on, so a structured form that does not compute the
same prints the state machine and fails."""
import sys

import pytest

import behaviour_cases
import depyf
from known_fallback import check_structured

TRY_FLOW_CASES = [fn for fn, _ in behaviour_cases.CASES if fn.__module__ == "behaviour_cases_try_flow"]

# still the (correct) state machine on these minor versions: case -> versions
KNOWN_FALLBACK = {
    # 3.12 places the code after the try (reached only from the clauses)
    # among the handlers' blocks, where no join is looked for: refused, not
    # read into the except clause
    "try_else_returning_in_an_if_in_an_except_clause": {8, 9, 10, 12},  # 3.8-3.10: a value flows out of the branch
    "code_after_the_try_reached_only_from_its_clauses": {8, 9, 12, 13},
    # 3.10: the clause's continue jumps back to the head both loops share
    # ("except clause jumps backwards")
    "continue_in_except_clause_of_while_true_starting_a_while_body": {10},
}


def test_there_are_try_flow_cases():
    assert len(TRY_FLOW_CASES) >= 2


@pytest.mark.parametrize("fn", TRY_FLOW_CASES, ids=[fn.__name__ for fn in TRY_FLOW_CASES])
def test_structured(fn):
    check_structured(fn, sys.version_info[1] in KNOWN_FALLBACK.get(fn.__name__, ()))


# CPython's asyncio/__main__.py on 3.12/3.13 (its whole module printed as the
# state machine): a `while True:` under `if __name__ == "__main__":` whose
# except clause continues, the try followed by a break.
RETRY_MODULE = '''
log = []
def step():
    log.append(len(log))
    if len(log) < 3:
        raise KeyError(len(log))
if __name__ == "__main__":
    while True:
        try:
            step()
        except KeyError:
            log.append("again")
            continue
        break
    log.append("after")
'''


def test_retry_loop_in_a_main_block_is_structured_and_behaves():
    code = compile(RETRY_MODULE, "<mod>", "exec", dont_inherit=True)
    source = depyf.decompile(code)
    assert "__state" not in source and "depyf:" not in source, source
    want, got = {"__name__": "__main__"}, {"__name__": "__main__"}
    exec(code, want)
    exec(compile(source, "<decompiled>", "exec"), got)
    assert got["log"] == want["log"] == [0, "again", 2, "after"], source
