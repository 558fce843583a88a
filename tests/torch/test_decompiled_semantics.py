"""Semantic proof for the decompiler on Dynamo's bytecode: the decompiled transformed
code, recompiled and run in place of Dynamo's bytecode, computes exactly what
Dynamo's own code computes, on every workload.

depyf itself never runs recompiled code (it keeps Dynamo's instructions and only
re-points their line table); this test is what shows the decompiled files say
what really runs.
"""
import textwrap
import types

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
import dump_helpers as dh  # noqa: E402
import torch_workloads as wl  # noqa: E402
from depyf import _torch_internals as ti  # noqa: E402

pytestmark = pytest.mark.torch


def recompiled(code):
    """Decompile `code` and compile the source back into a code object to run instead."""
    source = depyf.decompile(code)
    if code.co_freevars:  # closures: define it inside a function that owns those cells
        source = "def __depyf_outer():\n%s%s\n    return %s\n" % (
            "".join("    %s = None\n" % name for name in code.co_freevars),
            textwrap.indent(source, "    "), code.co_name)
    module = compile(source, "<decompiled %s>" % code.co_name, "exec", dont_inherit=True)
    found = [c for c in module.co_consts if isinstance(c, types.CodeType)]
    if code.co_freevars:
        found = [c for c in found[0].co_consts if isinstance(c, types.CodeType)]
    [new] = [c for c in found if c.co_name == code.co_name]
    assert new.co_freevars == code.co_freevars, (new.co_freevars, code.co_freevars)
    return new


@pytest.mark.parametrize("name", sorted(wl.WORKLOADS))
def test_decompiled_transformed_code_computes_what_dynamo_computes(name):
    workload = wl.WORKLOADS[name]
    expected = dh.plain(workload, "eager")
    substituted, failures = [], []

    def run_decompiled_instead(original, code):
        try:
            new = recompiled(code)
        except Exception as exc:  # reported below: the hook wrapper would swallow it
            failures.append("%s: %s: %s" % (original.co_name, type(exc).__name__, exc))
            return None
        substituted.append(original.co_name)
        return new

    torch._dynamo.reset()
    remove = ti.register_bytecode_hook(run_decompiled_instead)
    try:
        results = workload(dh.compiler("eager"))
    finally:
        remove()
    assert not failures, failures
    assert substituted, "Dynamo compiled nothing"
    dh.assert_identical(results, expected)
    dh.assert_close(results, dh.eager(workload))
