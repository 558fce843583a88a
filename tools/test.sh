#!/usr/bin/env bash
# The whole test suite, as CI runs it; stops at the first failing stage.
#  0. the wheels (tools/build_wheels.sh: one per CPython 3.8-3.13 here,
#     auditwheel-repaired and checked) and the sdist, installed once into a
#     clean venv (a build from source); every venv below but .venv-asan
#     installs the wheel, so the tests test what users install
#  1. .venv (Python 3.11) with the wheel and its `test` extra (pytest, torch
#     2.13.0, debugpy, selenium), and Debian's chromium for the report tests.
#     torch==2.13.0 is the CPU build only on this project's machines, whose
#     pip finds torch-2.13.0+cpu in a local folder; elsewhere PyPI gives the
#     CUDA build unless PIP_EXTRA_INDEX_URL names PyTorch's CPU wheel index
#     (README, Set up)
#  2. make ctest: the C unit tests; a 20 s fuzz run per harness (clang's
#     libFuzzer); the C unit tests under valgrind
#  3. pytest over tests/
#  4. .venv-torch-2.14: depyf with torch 2.14.1 (a CUDA build on this machine's
#     disk; it runs on the CPU), and pytest over tests/torch
#  5. .venv-asan: depyf built with ASan+UBSan, without torch
#  6. make ctest-san: the C unit tests under ASan+UBSan
#  7. pytest under ASan+UBSan, without the torch tests
#  8. for every other supported CPython this machine has (3.8-3.13): its wheel
#     in a clean .venv-3.X, and pytest without the torch tests, run from
#     outside the checkout
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/venv.sh

# each stage's header says when it started (minutes into the run)
stage() { printf '\n=== [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

stage "wheels for every CPython 3.8-3.13 here, and the sdist (built from source in a clean venv)"
CHECK_SDIST=1 tools/build_wheels.sh dist
# wheel_for X.Y: the wheel built for that Python
wheel_for() { ls dist/depyf-*-cp"${1/./}"-cp"${1/./}"-*.whl; }

stage "install the wheel with its test extra into .venv, and headless Chromium for the report tests"
make_venv .venv
# (--force-reinstall: pip takes a wheel of the installed version as installed)
.venv/bin/python -m pip install -q "$(wheel_for 3.11)[test]" meson ninja  # meson, ninja: tools/dev_build.sh
.venv/bin/python -m pip install -q --force-reinstall --no-deps "$(wheel_for 3.11)"
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
fi

stage "C unit tests"
# (the core is compiled once, on every core, into the archive the tests link)
make -j"$(nproc)" ctest

stage "fuzz smoke run (fuzz/README.md) and the C unit tests under valgrind"
if ! command -v clang >/dev/null || ! command -v valgrind >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang valgrind
fi
make -j"$(nproc)" fuzz-smoke FUZZ_SMOKE_TIME=20
make ctest-valgrind

# Tests import the installed depyf, never the source tree's ./depyf (which
# has no extension): no Python started from here puts the working directory
# on sys.path, the test's subprocesses included.
export PYTHONSAFEPATH=1

# tests/test_c_units.py (make ctest from pytest) is left out: the make
# stages run those tests.
stage "pytest"
.venv/bin/python -m pytest -q --ignore=tests/test_c_units.py tests

stage "torch 2.14.1: install depyf and torch 2.14.1 into .venv-torch-2.14, pytest over tests/torch"
make_venv .venv-torch-2.14
# (the `test` extra without its torch pin)
.venv-torch-2.14/bin/python -m pip install -q torch==2.14.1 'pytest>=7' debugpy tabulate 'selenium>=4.10'
.venv-torch-2.14/bin/python -m pip install -q --force-reinstall --no-deps "$(wheel_for 3.11)"
.venv-torch-2.14/bin/python -m pytest -q tests/torch

stage "install depyf built with ASan+UBSan into .venv-asan"
make_venv .venv-asan
.venv-asan/bin/python -m pip install -q pytest
.venv-asan/bin/python -m pip install -q . \
    -Csetup-args=-Db_sanitize=address,undefined -Csetup-args=-Db_lundef=false

stage "C unit tests under ASan+UBSan"
make -j"$(nproc)" ctest-san

stage "pytest under ASan+UBSan"
# Python itself is not instrumented: the sanitizer runtimes are preloaded, and
# leak checks are off (CPython keeps memory until exit by design).
LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" \
ASAN_OPTIONS=detect_leaks=0 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    .venv-asan/bin/python -m pytest -q -m "not torch" --ignore=tests/torch --ignore=tests/test_c_units.py tests

root=$PWD
outside=$(mktemp -d)
trap 'rm -rf "$outside"' EXIT
for py in $(other_pythons); do
    tag=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    stage "Python $tag ($py): its wheel in a clean .venv-$tag, pytest without the torch tests"
    rm -rf ".venv-$tag"
    "$py" -m venv ".venv-$tag"
    ".venv-$tag/bin/python" -m pip install -q pytest "$(wheel_for "$tag")"
    # The tests that run the other interpreters themselves (test_lift,
    # test_legacy_try: pyenv's pythons, without depyf) import the checkout's
    # depyf: ./depyf gets this interpreter's extension too, from its wheel.
    "$py" -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(".", [n for n in z.namelist() if n.startswith("depyf/_core.")])' "$(wheel_for "$tag")"
    # Run from outside the checkout: before 3.11 (no PYTHONSAFEPATH) Python
    # puts the working directory first on sys.path; this way every test of
    # this process and of the `python -m depyf` it starts imports the wheel.
    (cd "$outside" &&
     "$root/.venv-$tag/bin/python" -c 'import depyf, sys; sys.exit("site-packages" not in depyf.__file__ and "depyf imported from " + depyf.__file__)' &&
     "$root/.venv-$tag/bin/python" -m pytest -q -p no:cacheprovider -m "not torch" \
        --ignore="$root/tests/torch" --ignore="$root/tests/test_c_units.py" "$root/tests")
done
