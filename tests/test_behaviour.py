"""Behaviour: every function of behaviour_cases.py is decompiled, the source
is executed in a fresh namespace over the same module globals, and the
original and the decompiled function must give the same outcome on every
input: the same result (generators drained, coroutines and async generators
run with asyncio), the same mutations of the arguments, or the same
exception type."""
import faulthandler

import pytest

import behaviour_cases
import behaviour_outcome
import depyf
from depyf import _core
from depyf.decompiler import _defaults_of

CASES = behaviour_cases.CASES
CALL_LIMIT = 10  # seconds: a decompiled loop that never ends fails its case
CASE_LIMIT = 120  # seconds: a decompile that never returns ends the run


def outcome(fn, args):
    """behaviour_outcome.call(fn, args), failing the test past CALL_LIMIT."""
    try:
        return behaviour_outcome.within(CALL_LIMIT, behaviour_outcome.call, fn, args)
    except behaviour_outcome.CallTimeout:
        pytest.fail("%s%r did not return within %ds" % (fn.__name__, args, CALL_LIMIT))


def decompiled_function(fn, validate=True):
    if validate:
        source = depyf.decompile(fn)
    else:
        source = _core.decompile(fn.__code__, validate=False, **_defaults_of(fn))
    namespace = {}
    try:
        exec(compile(source, "<decompiled %s>" % fn.__name__, "exec"), fn.__globals__, namespace)
    except SyntaxError as e:
        pytest.fail("the decompiled source does not compile: %s\n%s" % (e, source))
    assert fn.__name__ in namespace, "the decompiled source defines no %s:\n%s" % (fn.__name__, source)
    return namespace[fn.__name__], source


def test_case_count():
    assert len(CASES) >= 90


def test_every_case_can_fail():
    # Each case must tell its function from one that does nothing.
    def does_nothing(*args):
        return None

    for fn, inputs in CASES:
        assert any(outcome(fn, args) != outcome(does_nothing, args) for args in inputs), fn.__name__


# Translation validation refuses a wrong structured form of the running
# interpreter's own bytecode only, not of a .pyc of another version: the
# structurer alone must be right, so each case also runs with it off.
@pytest.mark.parametrize("validate", [True, False], ids=["validated", "unvalidated"])
@pytest.mark.parametrize("fn, inputs", CASES, ids=[fn.__name__ for fn, _ in CASES])
def test_decompiled_function_behaves_like_the_original(fn, inputs, validate):
    # The C core cannot be interrupted: past the limit, print where it is and exit.
    faulthandler.dump_traceback_later(CASE_LIMIT, exit=True)
    try:
        new, source = decompiled_function(fn, validate)
        for args in inputs:
            want, got = outcome(fn, args), outcome(new, args)
            assert got == want, "on input %r:\nwant %r\ngot  %r\ndecompiled source:\n%s" % (
                args, want, got, source)
    finally:
        faulthandler.cancel_dump_traceback_later()
