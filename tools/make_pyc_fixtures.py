"""Writes tests/data/pyc/: the project's behaviour cases compiled to .pyc by
every CPython 3.8-3.13 this machine has, beside the sources they came from
and what depyf (run by the Python running this script) decompiles each into.

    python3 tools/make_pyc_fixtures.py

tests/test_pyc_fixtures.py decompiles every fixture with the host Python:
the output must compile under the fixture's own version where that
interpreter is present, and equal the committed `.expected.py` otherwise
(so a machine without, say, 3.8 still checks the 3.8 fixtures).  Rerun
this script after an intended change of the decompiler's output; it keeps
fixtures of versions absent here as they are.
"""
import glob
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "pyc")
# (source in tests/, first minor version whose syntax it needs)
SOURCES = [("behaviour_cases.py", 8), ("behaviour_cases_match.py", 10)]


def interpreters():
    """{minor: path} of the CPythons 3.8-3.13 found under pyenv."""
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = {}
    for py in sorted(glob.glob(os.path.join(root, "versions", "3.*", "bin", "python"))):
        minor = int(os.path.basename(os.path.dirname(os.path.dirname(py))).split(".")[1])
        if 8 <= minor <= 13:
            found[minor] = py
    return found


def fixture_name(source, minor):
    return "%s.cpython-3%d.pyc" % (source[:-3], minor)


def main():
    sys.path.insert(0, ROOT)
    from depyf.decompiler import decompile_pyc  # noqa: E402 (from this checkout)

    os.makedirs(os.path.join(OUT, "src"), exist_ok=True)
    for source, _ in SOURCES:
        shutil.copyfile(os.path.join(ROOT, "tests", source), os.path.join(OUT, "src", source))
    for minor, py in sorted(interpreters().items()):
        for source, needs in SOURCES:
            if minor < needs:
                continue
            pyc = os.path.join(OUT, fixture_name(source, minor))
            # Compiled by that interpreter, so the .pyc has its magic number and
            # bytecode; the unchecked-hash form makes the file independent of
            # the source's mtime; a fixed hash seed fixes the order of the
            # frozensets the compiler makes of `x in {'a', 'b'}`, so that an
            # unchanged source gives an unchanged fixture.
            subprocess.run([py, "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], "
                            "cfile=sys.argv[2], doraise=True, invalidation_mode="
                            "py_compile.PycInvalidationMode.UNCHECKED_HASH)",
                            os.path.join(OUT, "src", source), pyc], check=True,
                           env=dict(os.environ, PYTHONHASHSEED="0"))
            try:
                text = decompile_pyc(pyc)
            except Exception as e:  # noqa: BLE001 (reported; the test fails on it too)
                print("cannot decompile %s: %s" % (os.path.relpath(pyc, ROOT), e))
                continue
            with open(pyc[:-4] + ".expected.py", "w", encoding="utf-8") as f:
                f.write(text)
            print("wrote", os.path.relpath(pyc, ROOT))


if __name__ == "__main__":
    main()
