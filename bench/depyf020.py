"""The original depyf 0.20.0 in a venv of its own (bench/.venv-depyf020), to
measure against.  It has our import name, so it only ever runs in that venv's
interpreter, in a subprocess.

    python bench/depyf020.py      # creates or checks the venv, prints its python
"""
import os
import subprocess
import sys

VERSION = "0.20.0"
VENV = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".venv-depyf020")
PYTHON = os.path.join(VENV, "bin", "python")


def isolated_env():
    """An environment in which the venv sees none of this checkout's paths."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def _installed():
    probe = "import importlib.metadata as m; print(m.version('depyf'))"
    result = subprocess.run([PYTHON, "-I", "-c", probe], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, universal_newlines=True, env=isolated_env())
    return result.returncode == 0 and result.stdout.strip() == VERSION


def ensure_venv(python=sys.executable):
    """Creates the venv (with `python`'s version) and installs depyf 0.20.0
    unless it is there already; returns the venv's interpreter."""
    if not os.path.exists(PYTHON):
        subprocess.run([python, "-m", "venv", VENV], check=True)
    if not _installed():
        subprocess.run([PYTHON, "-m", "pip", "install", "-q", "depyf==" + VERSION],
                       check=True, env=isolated_env())
    return PYTHON


if __name__ == "__main__":
    print(ensure_venv())
