"""Dynamo's transformed code, kept as marshalled code objects (tests/data/dynamo/,
`<workload>.cpython-3X.marshal`, from tests/torch/torch_workloads.py under the
torch release named below), decompiled without torch on the Python that made it.

- context_break (torch 2.13.0): a graph break inside `with torch.no_grad()`.
  Dynamo's code enters the with's try/finally with the values it passes on to
  the resume function still on the stack, and its handler drops them: no
  compiler writes that.  It must come out structured and checked (translation
  validation, with Dynamo's globals taken as stable), not as the state machine.
"""
import ast
import glob
import marshal
import os
import sys

import pytest

from depyf import _core

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "dynamo")
TAG = "cpython-%d%d" % sys.version_info[:2]
FILES = sorted(glob.glob(os.path.join(DATA, "*.%s.marshal" % TAG)))


@pytest.mark.skipif(not FILES, reason="no Dynamo bytecode kept for Python %d.%d" % sys.version_info[:2])
@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(p) for p in FILES])
def test_dynamo_code_is_structured_and_checked(path):
    with open(path, "rb") as f:
        code = marshal.load(f)
    before = _core.validation_stats()
    source = _core.decompile(code, stable_globals=True)
    after = _core.validation_stats()
    assert "state machine" not in source, source
    assert after["validated"] == before["validated"] + 1, (before, after)  # validated, not just printed
    tree = ast.parse(source)
    tries = [n for n in ast.walk(tree) if isinstance(n, ast.Try)]
    assert tries and all(t.finalbody and not t.handlers for t in tries), source
