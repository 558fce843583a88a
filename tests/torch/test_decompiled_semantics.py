"""Semantic proof for the decompiler on Dynamo's bytecode: the decompiled transformed
code, recompiled and run in place of Dynamo's bytecode, computes exactly what
Dynamo's own code computes, on every workload; so does its simplified form (what
prepare_debug dumps and runs).

Constants with no literal form (`_depyf_const_<k>`) are bound in the frame's
globals, as prepare_debug binds them (depyf._decompiled.bind_named).
"""
import textwrap
import types

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
import dump_helpers as dh  # noqa: E402
import torch_workloads as wl  # noqa: E402
from depyf import _decompiled, _recompile  # noqa: E402
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
    # Dynamo fills the frame by position: a closure whose printed form leaves a free
    # variable unused cannot run in its place (depyf then runs Dynamo's own code)
    return new if _recompile.same_layout(code, new) else None


@pytest.mark.parametrize("name", sorted(wl.WORKLOADS))
def test_decompiled_transformed_code_computes_what_dynamo_computes(name):
    workload = wl.WORKLOADS[name]
    expected = dh.plain(workload, "eager")
    substituted, failures, state_machines = [], [], []

    def run_decompiled_instead(original, code):
        source = depyf.decompile(code)
        # Dynamo's code reads as structured code, on every Python and torch (its reserved
        # globals, such as the graph's __compiled_fn_*, may be read later than the bytecode
        # reads them; torch <= 2.11's resume function of a closure, made as a value inside
        # the call that uses it, is the checked call of the function type).
        if not _decompiled.structured(source):
            state_machines.append(original.co_name)
        if "_depyf_const_" in source:
            return None
        try:
            new = recompiled(code)
        except Exception as exc:  # reported below: the hook wrapper would swallow it
            failures.append("%s: %s: %s" % (original.co_name, type(exc).__name__, exc))
            return None
        if new is not None:
            substituted.append(original.co_name)
        return new

    torch._dynamo.reset()
    remove = ti.register_bytecode_hook(run_decompiled_instead)
    try:
        results = workload(dh.compiler("eager"))
    finally:
        remove()
    assert not failures, failures
    assert not state_machines, state_machines
    assert substituted, "Dynamo compiled nothing"
    dh.assert_identical(results, expected)
    dh.assert_close(results, dh.eager(workload))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("name", sorted(wl.WORKLOADS))
def test_simplified_transformed_code_computes_what_dynamo_computes(name, backend):
    workload = wl.WORKLOADS[name]
    expected = dh.plain(workload, backend)
    substituted, failures = [], []

    def run_simplified_instead(original, code):
        try:
            fn_name = _decompiled.def_name(code.co_name)
            exact = _decompiled.decompile(code, fn_name)
            scope = ti.compiling_globals(code)
            simple = _decompiled.simplify_transformed(code, exact.source, scope)
            if simple is None:
                return None
            text, bindings = _decompiled.bind_named(simple[0], exact.named, scope)
            new = _recompile.compile_like(code, text, "<simplified %s>" % original.co_name, fn_name)
            assert new is not None, simple
            scope.update(bindings)
        except Exception as exc:  # reported below: the hook wrapper would swallow it
            failures.append("%s: %s: %s" % (original.co_name, type(exc).__name__, exc))
            return None
        substituted.append(original.co_name)
        return new

    torch._dynamo.reset()
    remove = ti.register_bytecode_hook(run_simplified_instead)
    try:
        results = workload(dh.compiler(backend))
    finally:
        remove()
    assert not failures, failures
    dh.assert_identical(results, expected)
    dh.assert_close(results, dh.eager(workload))
    assert substituted, "nothing simplified"
