"""Trust on shapes nobody wrote: random functions of nested statements
(random_programs.py) are decompiled, as users get them (the structured form
where the checker proved it, else the state machine) and as the forced
state machine, and each must behave as the original on every input: the
same result or exception, and the same log of what ran.  Both flavours of
the generator: the plain one, and the rich one (more kinds of statements
and expressions, a closure, match on 3.10+)."""

import pytest

import behaviour_outcome
import random_programs
from depyf import _core

SEEDS = range(0, 1000)
CALL_LIMIT = 10  # seconds: a decompiled loop that never logs would never end


def outcome(fn, args):
    """random_programs.outcome, failing the test past CALL_LIMIT."""
    try:
        return behaviour_outcome.within(CALL_LIMIT, random_programs.outcome, fn, args)
    except behaviour_outcome.CallTimeout:
        pytest.fail("%s%r did not return within %ds" % (fn.__name__, args, CALL_LIMIT))


def decompiled(fn, force_fallback):
    source = _core.decompile(fn.__code__, force_fallback=force_fallback, validate=not force_fallback)
    ns = random_programs.namespace()
    exec(compile(source, "<decompiled>", "exec", dont_inherit=True), ns)
    return ns["f"], source


@pytest.mark.parametrize("rich", [False, True], ids=["plain", "rich"])
@pytest.mark.parametrize("force_fallback", [False, True], ids=["as-printed", "state-machine"])
def test_random_functions_behave_as_their_decompiled_source(force_fallback, rich):
    checked = 0
    for seed in SEEDS:
        original = random_programs.function(random_programs.program(seed, rich))
        if original is None:
            continue
        new, source = decompiled(original, force_fallback)
        for args in random_programs.INPUTS:
            want, got = outcome(original, args), outcome(new, args)
            assert got == want, "seed %d, input %r:\nwant %r\ngot  %r\nsource:\n%s\ndecompiled:\n%s" % (
                seed, args, want, got, random_programs.program(seed, rich), source)
        checked += 1
    assert checked > len(SEEDS) * 9 // 10
