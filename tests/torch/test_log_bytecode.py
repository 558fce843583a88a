"""log_bytecode: next to each transformed-code file, the disassembly of the original
code, of Dynamo's transformed code, and of the dumped file's def compiled back
(prepare_debug(..., log_bytecode=True) passes it to the session)."""
import contextlib
import io
import os
import re

import pytest

torch = pytest.importorskip("torch")

import dump_helpers as dh  # noqa: E402
import torch_workloads as wl  # noqa: E402
from depyf import _core, _dump  # noqa: E402

pytestmark = pytest.mark.torch

SUFFIXES = ("original_bytecode", "transformed_bytecode", "decompiled_and_compiled_back_bytecode")


def dump(tmp_path, log_bytecode):
    torch._dynamo.reset()
    with contextlib.redirect_stderr(io.StringIO()), _dump.Session(_dump.dump_dir(str(tmp_path)),
                                                                  log_bytecode=log_bytecode):
        wl.run_graph_breaks(lambda fn: torch.compile(fn, backend="eager"))
    return dh.files(tmp_path)


def test_three_disassemblies_next_to_each_transformed_code(tmp_path):
    names = dump(tmp_path, True)
    transformed = [n for n in names if re.match(r"__transformed_code_\d+_for_\w+\.py$", n)]
    assert len(transformed) >= 3, names
    for name in transformed:
        texts = {suffix: dh.read(tmp_path, "%s.%s" % (name, suffix)) for suffix in SUFFIXES}
        assert "Disassembly of code object graph_breaks" in texts["original_bytecode"] or \
            "torch_dynamo_resume_in_graph_breaks" in texts["original_bytecode"], texts["original_bytecode"]
        def_name = name[:-len(".py")]
        back = texts["decompiled_and_compiled_back_bytecode"]
        assert 'file "%s"' % os.path.join(str(tmp_path), name) in back and def_name in back, back
        assert "__compiled_fn_" in texts["transformed_bytecode"], "Dynamo's code calls its graph"
        with open(os.path.join(str(tmp_path), name), encoding="utf-8") as f:
            module = compile(f.read(), name, "exec")
        compiled_back = next(c for c in module.co_consts if getattr(c, "co_name", None) == def_name)
        assert _core.disasm(compiled_back).split("\n", 1)[1] == back.split("\n", 1)[1], \
            "the file's def, compiled: the same instructions"


def test_off_by_default(tmp_path):
    assert not [n for n in dump(tmp_path, False) if n.endswith("_bytecode")]
