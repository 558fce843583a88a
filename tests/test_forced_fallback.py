"""The state-machine fallback (fallback.c) on ordinary code, under every
interpreter: each behaviour case, printed as a state machine
(`force_fallback=True`), must still behave like the original on every input."""
import sys

import pytest

import behaviour_cases
import test_behaviour
from depyf import _core

# Not done yet, and the decompiler says so: 3.8's finally machinery
# (BEGIN_FINALLY, END_FINALLY, CALL_FINALLY, WITH_CLEANUP_*) has no
# state-machine form, and 3.10's COPY_DICT_WITHOUT_KEYS is not lifted.
NOT_YET = {(3, 8): "is not supported by the state-machine fallback yet",
           (3, 10): "unsupported opcode COPY_DICT_WITHOUT_KEYS"}


@pytest.mark.parametrize("fn, inputs", behaviour_cases.CASES, ids=[fn.__name__ for fn, _ in behaviour_cases.CASES])
def test_forced_fallback_behaves_like_the_original(fn, inputs):
    try:
        text = _core.decompile(fn.__code__, force_fallback=True)
    except _core.DecompilationError as e:
        if NOT_YET.get(sys.version_info[:2], "\0") in str(e):
            pytest.skip(str(e))
        raise
    scope = {}
    exec(compile(text, "<fallback %s>" % fn.__name__, "exec"), fn.__globals__, scope)
    new = scope[fn.__name__]
    for args in inputs:
        want, got = test_behaviour.outcome(fn, args), test_behaviour.outcome(new, args)
        assert got == want, "on input %r:\nwant %r\ngot  %r\nstate machine:\n%s" % (args, want, got, text)


def test_the_option_really_forces_the_state_machine():
    def plain(a):
        return a + 1

    assert "__state" not in _core.decompile(plain.__code__)
    assert "__state" in _core.decompile(plain.__code__, force_fallback=True)
