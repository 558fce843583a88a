"""depyf.debug() under pdb, driven through stdin in a subprocess: a breakpoint set
on a line of a dumped file stops there, with live tensors to print.

The script first runs once to dump its files (their names are deterministic in
a fresh process); the second run pauses in depyf.debug(), where pdb receives
the breakpoint, continues, stops in the dumped file and prints a tensor.
"""
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch")

import depyf  # noqa: E402

pytestmark = pytest.mark.torch

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# Subprocesses import the depyf this test imported (the installed one under
# tools/test.sh, the checkout's in a developer build).
DEPYF_HOME = os.path.dirname(os.path.dirname(os.path.abspath(depyf.__file__)))

SCRIPT = """
import sys
import torch
import depyf

@torch.compile(backend=sys.argv[2])
def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b

def main(grad):
    torch.manual_seed(0)
    for _ in range(10):
        a = torch.randn(10, requires_grad=grad)
        b = torch.randn(10, requires_grad=grad)
        out = toy_example(a, b)
        if grad:
            out.sum().backward()

grad = sys.argv[2] != "eager"
with depyf.prepare_debug(sys.argv[1]):
    main(grad)
with depyf.debug(pause=sys.argv[3] == "pause"):
    a = torch.full((10,), 2.0, requires_grad=grad)
    out = toy_example(a, torch.ones(10, requires_grad=grad))
    if grad:
        out.sum().backward()
    print("RESULT", out.detach().tolist())
"""


def run(script, dump_dir, backend, pause, commands=""):
    env = dict(os.environ, PYTHONPATH=DEPYF_HOME + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, script, dump_dir, backend, pause], input=commands,
                          capture_output=True, text=True, timeout=600, env=env, cwd=REPO)


def line_of(path, pattern):
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if re.search(pattern, line):
                return number
    raise AssertionError("no line matching %r in %s" % (pattern, path))


def break_and_print(tmp_path, backend, filename, pattern, variable):
    """Dump, then stop at the first line matching `pattern` in `filename`; pdb's output."""
    script = str(tmp_path / "toy.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    dump_dir = str(tmp_path / "dump")
    first = run(script, dump_dir, backend, "nopause")
    assert first.returncode == 0, first.stderr
    path = os.path.join(dump_dir, filename)
    line = line_of(path, pattern)
    commands = "b %s:%d\nc\np %s\np type(%s).__name__\ncl\ny\nc\n" % (path, line, variable, variable)
    second = run(script, dump_dir, backend, "pause", commands)
    assert "RESULT" in second.stdout, second.stdout + second.stderr
    stop = "> %s(%d)" % (path, line)
    assert stop in second.stdout, second.stdout
    after_stop = second.stdout[second.stdout.index(stop):]
    assert re.search(r"\(Pdb\) tensor\(\[", after_stop), after_stop
    assert "(Pdb) 'Tensor'" in after_stop
    return after_stop


def test_breakpoint_in_the_captured_graph_hits_with_eager(tmp_path):
    out = break_and_print(tmp_path, "eager", "__compiled_fn_1.Captured_Graph.0.py",
                          r"= torch\.abs\(l_a_\)", "l_a_")
    assert "tensor([2., 2., 2." in out, "the live input of this call"


def test_breakpoints_in_forward_and_backward_graphs_hit_with_aot_eager(tmp_path):
    out = break_and_print(tmp_path, "aot_eager", "__compiled_fn_1.Forward_graph.0.py",
                          r"torch\.ops\.aten\.abs\.default\(primals_1\)", "primals_1")
    assert "tensor([2., 2., 2." in out
    break_and_print(tmp_path, "aot_eager", "__compiled_fn_1.Backward_graph.0.py",
                    r"= torch\.ops\.aten\.\w+\.\w+\(tangents_1", "tangents_1")


def test_breakpoint_in_the_transformed_code_hits(tmp_path):
    """Needs the decompiler: the transformed code's lines come from its line map."""
    out = break_and_print(tmp_path, "eager", "__transformed_code_0_for_toy_example.py",
                          r"__compiled_fn_1_\w+\(", "a")
    assert "tensor([2., 2., 2." in out
