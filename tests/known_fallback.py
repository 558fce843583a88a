"""The shape tests' known state machines: a case listed as still printing
the state machine on the running Python must still print it (else the test
fails, so that the list follows the decompiler and cannot hide a case that
is structured now); every other case must be structured."""
import pytest

import depyf


def is_state_machine(source):
    return "__state" in source or "# depyf:" in source


def check_structured(fn, known_to_fall_back):
    source = depyf.decompile(fn)
    if known_to_fall_back:
        assert is_state_machine(source), "%s is structured now: take it off the known list\n%s" % (fn.__name__, source)
        pytest.xfail("known: still the state machine on this version")
    assert not is_state_machine(source), source
