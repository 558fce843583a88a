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
import dump_helpers as dh  # noqa: E402

pytestmark = pytest.mark.torch

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
                          capture_output=True, text=True, timeout=1200, env=env,  # (a hang guard)
                          cwd=os.path.dirname(script))


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
                          r"__compiled_fn_1(?:_\w+)?\(", "a")
    assert "tensor([2., 2., 2." in out


def test_pdb_steps_through_every_line_of_the_transformed_code_and_a_resume_function(tmp_path):
    """`n` on every line of the toy example's transformed code, into the resume function it
    calls, printing a variable named as in the user's function at each stop."""
    script = str(tmp_path / "toy.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    dump_dir = str(tmp_path / "dump")
    first = run(script, dump_dir, "eager", "nopause")
    assert first.returncode == 0, first.stderr
    main = os.path.join(dump_dir, "__transformed_code_0_for_toy_example.py")
    resumes = sorted(os.path.join(dump_dir, n) for n in os.listdir(dump_dir)
                     if re.match(r"__transformed_code_\d+_for_torch_dynamo_resume_in_toy_example_at_\d+\.py$", n))
    assert len(resumes) == 2
    main_lines = dh.statement_lines(main)
    assert len(main_lines) <= 8, "the toy example's transformed code reads like the function"
    # a breakpoint on the first statement of each: the code that runs has the file's lines
    commands = "".join("b %s:%d\n" % (p, dh.statement_lines(p)[0]) for p in [main] + resumes) + "c\n"
    # every statement of the body is a stop but the branch's own return, which ends the body
    # in its place when taken (torch 2.15's profiler branch is not taken: no profiler runs)
    main_stops = len(dh.top_level_statement_lines(main))
    commands += "p a\nn\n" * main_stops  # the last `n` runs the return's call: into the resume function
    commands += "p x\np b\nn\n" * 2 + "cl\ny\nc\n"
    second = run(script, dump_dir, "eager", "pause", commands)
    assert "RESULT" in second.stdout, second.stdout + second.stderr
    out = second.stdout
    stops = re.findall(r"> (\S+?)\((\d+)\)", out)
    in_main = [int(line) for path, line in stops if path == main]
    assert in_main[:main_stops] == [line for line in main_lines if line in in_main][:main_stops]
    assert len(set(in_main)) == main_stops, (in_main, main_lines, out)
    assert set(in_main) <= set(main_lines)
    resume_stops = [(path, int(line)) for path, line in stops if path in resumes]
    assert len(resume_stops) >= 2, out
    ran = resume_stops[0][0]
    assert [line for _p, line in resume_stops[:2]] == dh.statement_lines(ran)[:2], (resume_stops, out)
    # every `p` printed a live tensor: the names on these lines are variables of the running code
    printed = re.findall(r"\(Pdb\) (\S+)", out)
    assert printed.count("tensor([2.,") >= main_stops, out
    assert "NameError" not in out and "*** " not in out, out
