"""Under torchrun (2 ranks, gloo on CPU) each rank dumps into its own rank_<r>/
directory and nothing collides."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")

import depyf  # noqa: E402

pytestmark = pytest.mark.torch

# Subprocesses import the depyf this test imported (the installed one under
# tools/test.sh, the checkout's in a developer build).
DEPYF_HOME = os.path.dirname(os.path.dirname(os.path.abspath(depyf.__file__)))

SCRIPT = """
import sys
import torch
import torch.distributed as dist
import depyf

dist.init_process_group("gloo")
rank = dist.get_rank()

@torch.compile(backend="aot_eager")
def step(x, w):
    return torch.tanh(x @ w).sum()

w = torch.full((4, 4), 0.1, requires_grad=True)
with depyf.prepare_debug(sys.argv[1]):
    loss = step(torch.full((2, 4), float(rank + 1)), w)
    loss.backward()
grad = w.grad.clone()
dist.all_reduce(grad)
with open(sys.argv[2] % rank, "w") as f:  # ranks share stdout: lines may interleave
    f.write(str(round(grad.sum().item(), 4)))
dist.destroy_process_group()
"""


def test_each_rank_writes_its_own_directory(tmp_path):
    script = tmp_path / "ranks.py"
    script.write_text(SCRIPT)
    dump_dir = tmp_path / "dump"
    env = dict(os.environ, PYTHONPATH=DEPYF_HOME + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         str(script), str(dump_dir), str(tmp_path / "grad_sum_%d.txt")],
        capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    sums = [(tmp_path / ("grad_sum_%d.txt" % rank)).read_text() for rank in (0, 1)]
    assert sums[0] == sums[1], "all_reduce saw both ranks' gradients"
    assert sorted(os.listdir(dump_dir)) == ["index.html", "rank_0", "rank_1"], "one report over both ranks"
    for rank in ("rank_0", "rank_1"):
        names = os.listdir(dump_dir / rank)
        assert "full_code_for_step_0.py" in names, (rank, names)
        assert any(n.endswith(".Forward_graph.0.py") for n in names)
        assert any(n.endswith(".Backward_graph.0.py") for n in names)
        assert not [n for n in names if n.startswith(".depyf-")], "no temporary files left"
    assert "artifacts dumped to %s" % (dump_dir / "rank_0") in proc.stderr
    assert "artifacts dumped to %s" % (dump_dir / "rank_1") in proc.stderr
