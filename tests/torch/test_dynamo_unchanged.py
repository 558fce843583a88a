"""prepare_debug changes nothing in what Dynamo does.

Every workload of torch_workloads.py runs once plainly and once inside
prepare_debug, and Dynamo's own record of what it did must be the same: its
counters (frames seen and compiled, graph breaks and their reasons, unique
graphs, resume functions, what it could not trace) and, for every code object
it compiled, the cache entries with the guards of each.  Two programs that run
torch's code from inside a compiled function check the places where depyf's
hooks run while Dynamo's frame evaluation is on (a backward inside the compiled
function compiles its graph right then; user code recompiles a graph module).

Both runs have AOTAutograd's and Inductor's on-disk caches off, as prepare_debug
has them (a cache hit would skip the stages it dumps): a compile that runs while
Dynamo's frame evaluation is on (that backward) runs more of torch's code when
it misses the cache, and Dynamo looks at those frames (and skips them).
"""
import contextlib
import gc
import io
import os
import re

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
import torch_workloads as wl  # noqa: E402
from depyf import _torch_internals as ti  # noqa: E402

pytestmark = pytest.mark.torch

# Counter groups that are not Dynamo's: AOTAutograd's and Inductor's (their caches, which
# prepare_debug turns off so that every stage runs and is dumped, and the matmuls Inductor
# compiled, none when a cache hit skipped the compile).
NOT_DYNAMO = {"inductor", "aot_autograd", "aten_mm_info"}
_ID = re.compile(r"\d{6,}")  # object ids in ID_MATCH / TYPE_MATCH guards differ between runs
# Names Dynamo numbers with process-wide counters (they go on across torch._dynamo.reset())
_NUMBERED = re.compile(r"(__builtins_dict___|___unnamed_scope_<id>_c)\d+")
_HINT = re.compile(r"\(HINT: .*\)\s*$", re.S)  # torch's advice on a recompilation, after the guard's comment

INDUCTOR = {"toy_grad", "mlp_training", "graph_breaks"}  # the workloads the suite compiles with inductor
CASES = [(name, backend) for name in wl.WORKLOADS for backend in ("eager", "aot_eager")]
CASES += [(name, "inductor") for name in wl.WORKLOADS if name in INDUCTOR]


def what_dynamo_did():
    """Dynamo's counters and, per compiled code object, its cache entries' guards."""
    counters = {group: dict(values) for group, values in torch._dynamo.utils.counters.items()
                if group not in NOT_DYNAMO and values}
    entries = {}
    for code in ti.compiled_codes():
        key = "%s:%s:%s" % (code.co_filename, code.co_firstlineno, code.co_name)
        # (each entry's guards as a sorted list: torch 2.9 orders one object's DICT_CONTAINS
        # guards differently from run to run, with or without depyf)
        entries.setdefault(key, []).append([
            sorted((guard.kind, _normal(guard.text)) for guard in ti.guards_of(entry))
            for entry in ti.cache_entries(code)])
    return counters, entries


def _normal(guard_text):
    """The guard's check (its comment, the user line, cut; torch's recompile hint kept) with
    numbered names made equal.  (Torch <= 2.8 writes a guard's user line only when the guard
    has one, which depyf records for the report: the hint then follows that comment.)"""
    check = guard_text.split("  #")[0]
    hint = _HINT.search(guard_text)
    if hint and hint.start() >= len(check):
        check += " " + hint.group(0)
    return _NUMBERED.sub(r"\1<n>", _ID.sub("<id>", " ".join(check.split())))


def run(program, with_depyf, dump_dir):
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    # No collection during the run: a finalizer of an earlier test's garbage run while
    # frame evaluation is on would be a frame Dynamo counts in one run only.
    gc.collect()
    gc.disable()
    try:
        with ti.compile_caches_disabled():
            if with_depyf:
                with contextlib.redirect_stderr(io.StringIO()), depyf.prepare_debug(str(dump_dir), report=False):
                    program()
            else:
                program()
    finally:
        gc.enable()
    return what_dynamo_did()


def assert_same(program, tmp_path):
    plain_counters, plain_entries = run(program, False, tmp_path)
    counters, entries = run(program, True, tmp_path)
    assert plain_counters.get("frames", {}).get("total"), "Dynamo saw no frame: nothing was compared"
    for group in set(counters) | set(plain_counters):
        assert counters.get(group) == plain_counters.get(group), group
    assert entries == plain_entries


@pytest.mark.parametrize("name,backend", CASES)
def test_workload_compiles_the_same_with_and_without_depyf(name, backend, tmp_path):
    assert_same(lambda: wl.WORKLOADS[name](lambda fn: torch.compile(fn, backend=backend)), tmp_path)


def backward_inside(x):
    loss = (x.sin() * 2).sum()
    loss.backward()  # a graph break; AOTAutograd compiles the backward graph now, Dynamo on
    return x.grad.clone() + 1


class Plus(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) + 1


def traces_and_recompiles(x):
    gm = torch.fx.symbolic_trace(Plus())  # torch's code runs eagerly, frame evaluation on
    y = gm(x)
    gm.recompile()  # Dynamo must see torch's own GraphModule.recompile here
    return gm(y) * 2


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_torch_code_run_from_a_compiled_function_is_not_traced_into_depyf(backend, tmp_path):
    def program():
        fn = torch.compile(backward_inside, backend=backend)
        for _ in range(2):
            fn(torch.randn(4, requires_grad=True))
        traced = torch.compile(traces_and_recompiles, backend=backend)
        traced(torch.randn(4))
        traced(torch.randn(4))

    # Torch's code run under frame evaluation does one-time work on its first run in a
    # process (lazy imports, caches filled), whose frames Dynamo counts: a first run
    # takes it, so that both compared runs see the same torch.
    run(program, False, tmp_path)
    assert_same(program, tmp_path)
    depyf_dir = os.path.dirname(depyf.__file__) + os.sep
    compiled = [(code.co_filename, code.co_name) for code in ti.compiled_codes()]
    assert len(compiled) == 5 and not [c for c in compiled if c[0].startswith(depyf_dir)], compiled
