"""The C unit tests (tests/c/test_*.c) through the Makefile, so that a pytest
run covers them too: `make ctest`, and `make ctest-san` (ASan+UBSan) when
DEPYF_SANITIZE is set."""
import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_make(target):
    # The sanitizer stage preloads libasan into Python; make and the compiler
    # must not inherit that.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    result = subprocess.run(["make", "-C", REPO, "--no-print-directory", target], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True)
    assert result.returncode == 0, "make %s failed:\n%s" % (target, result.stdout[-20000:])


def test_c_unit_tests():
    run_make("ctest")


@pytest.mark.skipif(not os.environ.get("DEPYF_SANITIZE"), reason="set DEPYF_SANITIZE=1 to run")
def test_c_unit_tests_under_asan_and_ubsan():
    run_make("ctest-san")
