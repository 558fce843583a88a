"""Every committed .pyc fixture (tests/data/pyc, made by
tools/make_pyc_fixtures.py from the behaviour cases by each CPython 3.8-3.13)
decompiles with whatever Python runs the tests.  Where the fixture's own
interpreter is present, that interpreter compiles the output and runs the
recovered behaviour cases against the original ones; elsewhere the output
must equal the committed `.expected.py`."""
import glob
import os
import re
import subprocess
import sys

import pytest

from depyf.decompiler import decompile_pyc

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "data", "pyc")
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
from make_pyc_fixtures import SOURCES, fixture_name, interpreters  # noqa: E402

# The .pyc of every (source, version) pair make_pyc_fixtures.py writes.
EXPECTED_FIXTURES = [fixture_name(src, minor) for src, needs in SOURCES for minor in range(needs, 14)]

# Runs under the fixture's interpreter: the recovered module must compile
# and its behaviour cases must give what the original cases give.
RUN_RECOVERED = r'''
import importlib.util, signal, sys
recovered_path, original_path = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
import behaviour_cases as shared  # match cases register into its CASES
from behaviour_outcome import call

def cases_of(name, path):
    before = len(shared.CASES)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    own = getattr(module, "CASES", None)
    return own if own is not None and own is not shared.CASES else shared.CASES[before:]

def comparable(outcome):
    # an exception class defined by the cases exists once per loaded module
    if outcome[0] == "raised" and outcome[1].__module__ in ("original", "recovered"):
        return ("raised", outcome[1].__qualname__)
    return outcome

original = cases_of("original", original_path)
recovered = cases_of("recovered", recovered_path)
assert len(original) == len(recovered) > 0, (len(original), len(recovered))
signal.alarm(120)  # a recovered loop that never ends fails the fixture
for (fn, inputs), (rfn, rinputs) in zip(original, recovered):
    assert fn.__name__ == rfn.__name__, (fn.__name__, rfn.__name__)
    for args, rargs in zip(inputs, rinputs):
        got, want = comparable(call(rfn, rargs)), comparable(call(fn, args))
        assert got == want, (fn.__name__, args, got, want)
print(len(original))
'''


def test_every_version_has_its_fixtures():
    missing = [name for name in EXPECTED_FIXTURES if not os.path.exists(os.path.join(FIXTURES, name))]
    assert not missing, "run tools/make_pyc_fixtures.py: %s" % missing


@pytest.mark.parametrize("name", EXPECTED_FIXTURES)
def test_fixture_decompiles_into_source_its_version_runs(name, tmp_path):
    pyc = os.path.join(FIXTURES, name)
    source = decompile_pyc(pyc)
    minor = int(re.search(r"cpython-3(\d+)\.pyc$", name).group(1))
    python = interpreters().get(minor)
    if python is None:
        with open(pyc[:-4] + ".expected.py", encoding="utf-8") as f:
            assert source == f.read()
        return
    recovered = tmp_path / "recovered.py"
    recovered.write_text(source, encoding="utf-8")
    original = os.path.join(FIXTURES, "src", name.split(".")[0] + ".py")
    run = subprocess.run([python, "-c", RUN_RECOVERED, str(recovered), original, HERE],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert int(run.stdout) > 0


def test_no_stray_fixture_files():
    """Every file in tests/data/pyc is a fixture, its expected output, or a source."""
    allowed = set(EXPECTED_FIXTURES) | {n[:-4] + ".expected.py" for n in EXPECTED_FIXTURES}
    stray = [os.path.basename(p) for p in glob.glob(os.path.join(FIXTURES, "*"))
             if os.path.isfile(p) and os.path.basename(p) not in allowed]
    assert not stray
