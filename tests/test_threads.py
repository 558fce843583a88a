"""Decompiling from many Python threads at once gives exactly what one
thread gives, and the extension lets other threads run while it works (it
releases the GIL around the C core).  On a free-threaded build (3.13t) the
module must not turn the GIL back on.  Run with `python -P -m pytest`."""
import py_compile
import random
import sys
import sysconfig
import threading

import pytest

import behaviour_cases
import depyf
from depyf.decompiler import decompile_pyc

THREADS = 8
ROUNDS = 3


def outcome(fn):
    """What one decompilation gives: the text, or the error's type and message."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the same failure is part of the result
        return type(e).__name__, str(e)


def jobs(tmp_path):
    """(name, callable) pairs: every behaviour case, and a .pyc of the module."""
    out = [(fn.__qualname__, (lambda f=fn: depyf.decompile(f))) for fn, _ in behaviour_cases.CASES]
    pyc = str(tmp_path / "behaviour_cases.pyc")
    py_compile.compile(behaviour_cases.__file__, cfile=pyc, doraise=True)
    out.append(("behaviour_cases.pyc", lambda: decompile_pyc(pyc)))
    return out


def test_many_threads_get_what_one_thread_gets(tmp_path):
    work = jobs(tmp_path)
    assert len(work) > 50
    expected = {name: outcome(fn) for name, fn in work}
    assert sum(1 for kind, _ in expected.values() if kind == "ok") > len(work) // 2
    mismatches, failures = [], []
    start = threading.Barrier(THREADS)

    def worker(seed):
        try:
            order = list(work) * ROUNDS
            random.Random(seed).shuffle(order)  # different functions at the same moment
            start.wait()
            for name, fn in order:
                got = outcome(fn)
                if got != expected[name]:
                    mismatches.append((name, got, expected[name]))
        except BaseException as e:  # noqa: BLE001 - reported below
            failures.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert mismatches == [], mismatches[:3]


def long_function():
    """A function of some 60k instructions: its decompilation takes a while."""
    body = "".join("    if x > %d:\n        y = y + %d\n    else:\n        y = -y\n" % (i, i)
                   for i in range(6000))
    ns = {}
    exec(compile("def f(x):\n    y = 0\n" + body + "    return y\n", "<long>", "exec"), ns)
    return ns["f"]


def test_other_threads_run_while_one_decompiles():
    fn = long_function()
    ticks = [0]
    seen = {}
    done = threading.Event()

    def decompile():
        before = ticks[0]
        seen["text"] = depyf.decompile(fn)
        seen["ticks"] = ticks[0] - before
        done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    try:
        t = threading.Thread(target=decompile)
        t.start()
        while not done.is_set():
            ticks[0] += 1
        t.join()
    finally:
        sys.setswitchinterval(old)
    assert seen["text"].startswith("def f(x):")
    # the C core runs without the GIL: this thread kept counting meanwhile
    assert seen["ticks"] > 0


@pytest.mark.skipif(not sysconfig.get_config_var("Py_GIL_DISABLED"),
                    reason="needs a free-threaded (3.13t) build")
def test_free_threaded_build_keeps_the_gil_off():
    from depyf import _core  # noqa: F401 - importing it is the test
    assert not sys._is_gil_enabled()
