"""Trust on shapes nobody wrote: random functions of nested statements
(random_programs.py) are decompiled, and each must behave as the original on
every input: the same result or exception, and the same log of what ran.
Three ways: as users get them (the structured form where the checker proved
it, else the state machine); as the forced state machine; and unvalidated,
the structured form as it is printed for a .pyc of another Python, which
the running interpreter cannot check.  Both flavours of the generator: the
plain one, and the rich one (more kinds of statements and expressions, a
closure, match on 3.10+)."""
import sys

import pytest

import behaviour_outcome
import random_programs
from depyf import _core

SEEDS = range(0, 1000)
CALL_LIMIT = 10  # seconds: a decompiled loop that never logs would never end
MODES = {"as-printed": dict(validate=True), "state-machine": dict(force_fallback=True, validate=False),
         "unvalidated": dict(validate=False)}
# Structured forms known to compute something else, which validation refuses
# (users of the same Python get the state machine): (minor, rich) -> seeds.
# The test fails when one is right now: take it off the list.
KNOWN_WRONG_UNVALIDATED = {
    (8, True): {629},
    (9, True): {629},
    (12, False): {849},  # a with whose body never completes, in a try: its suppressed way on lost
    (12, True): {421, 877},
    (13, False): {849},
    (13, True): {421, 877},
}


def outcome(fn, args):
    """random_programs.outcome, failing the test past CALL_LIMIT."""
    try:
        return behaviour_outcome.within(CALL_LIMIT, random_programs.outcome, fn, args)
    except behaviour_outcome.CallTimeout:
        pytest.fail("%s%r did not return within %ds" % (fn.__name__, args, CALL_LIMIT))


def decompiled(fn, mode):
    source = _core.decompile(fn.__code__, **MODES[mode])
    ns = random_programs.namespace()
    exec(compile(source, "<decompiled>", "exec", dont_inherit=True), ns)
    return ns["f"], source


def behaves_alike(original, new):
    return all(outcome(original, args) == outcome(new, args) for args in random_programs.INPUTS)


@pytest.mark.parametrize("rich", [False, True], ids=["plain", "rich"])
@pytest.mark.parametrize("mode", list(MODES))
def test_random_functions_behave_as_their_decompiled_source(mode, rich):
    known = KNOWN_WRONG_UNVALIDATED.get((sys.version_info[1], rich), set()) if mode == "unvalidated" else set()
    checked = 0
    for seed in SEEDS:
        original = random_programs.function(random_programs.program(seed, rich))
        if original is None:
            continue
        new, source = decompiled(original, mode)
        if seed in known:
            assert not behaves_alike(original, new), "seed %d is right now: take it off the known list" % seed
            continue
        for args in random_programs.INPUTS:
            want, got = outcome(original, args), outcome(new, args)
            assert got == want, "seed %d, input %r:\nwant %r\ngot  %r\nsource:\n%s\ndecompiled:\n%s" % (
                seed, args, want, got, random_programs.program(seed, rich), source)
        checked += 1
    assert checked > len(SEEDS) * 9 // 10
