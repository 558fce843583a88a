"""prepare_debug prints a graph's readable text, and points its forward at the file, when the
block ends, not while torch compiles or runs the first call: each file must still hold the
graph as torch logged it, and every graph's forward runs from its file after the block,
whether it ran inside the block (through a forward torch kept) or never ran."""
import os
import re
import sys

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
import dump_helpers as dh  # noqa: E402
from depyf import _dump  # noqa: E402
from depyf import _torch_internals as ti  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def act(x):
    return torch.relu(x) * 2 + 1


def _captured_file(path):
    names = [n for n in dh.files(path) if re.match(r"__compiled_fn_\d+\.Captured_Graph\.0\.py$", n)]
    assert len(names) == 1, dh.files(path)
    return os.path.join(str(path), names[0])


def test_a_graph_changed_after_it_was_logged_shows_its_logged_form(tmp_path):
    logged, graphs = [], []

    def backend(gm, example_inputs):
        logged.append(ti.readable_graph(gm))  # (Dynamo logged it just before calling the backend)
        graphs.append(gm)
        for node in gm.graph.nodes:  # a pass that rewrites the graph in place, as torch's do
            if node.target is torch.relu:
                node.target = torch.sigmoid
                node.meta["val"] = torch.empty(0)
        return lambda *args: (act(*args),)  # (as a backend that lowers the graph: never runs it)

    x = torch.randn(4, 3)
    with depyf.prepare_debug(str(tmp_path), report=False):
        out = torch.compile(act, backend=backend)(x)
    assert torch.equal(out, act(x))
    assert "sigmoid" in ti.readable_graph(graphs[0])  # (the graph did change)
    with open(_captured_file(tmp_path), encoding="utf-8") as f:
        text = f.read()
    assert logged[0] in text
    assert "relu" in text and "sigmoid" not in text


def test_a_graph_whose_forward_never_ran_has_its_file_and_runs_from_it_after_the_block(tmp_path):
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        assert gm.code  # (its forward is generated, as by a backend that runs it later)
        return lambda *args: (act(*args),)  # (gm itself is never called)

    x = torch.randn(4, 3)
    with depyf.prepare_debug(str(tmp_path), report=False):
        out = torch.compile(act, backend=backend)(x)
    assert torch.equal(out, act(x))
    path = _captured_file(tmp_path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert ti.readable_graph(graphs[0]) in text  # (the graph did not change)
    assert graphs[0].forward.__code__.co_filename == path
    assert torch.equal(graphs[0](x)[0], act(x))


def test_a_forward_that_ran_in_the_block_runs_from_its_file_after_it(tmp_path):
    from torch._dynamo.backends.common import aot_autograd

    graphs = []

    def forward_compiler(gm, example_inputs):
        graphs.append(gm)
        return gm.forward  # (kept by torch's runtime wrapper: looked up once, inside the block)

    x = torch.randn(4, 3, requires_grad=True)
    compiled = torch.compile(act, backend=aot_autograd(fw_compiler=forward_compiler))
    with depyf.prepare_debug(str(tmp_path), report=False):
        compiled(x)
        assert not graphs[0].forward.__code__.co_filename.startswith(str(tmp_path))  # (torch's code meanwhile)
    path = graphs[0].forward.__code__.co_filename
    assert os.path.dirname(path) == str(tmp_path) and os.path.basename(path).startswith("__compiled_fn_")
    with open(path, encoding="utf-8") as f:
        assert ti.readable_graph(graphs[0]) in f.read()
    ran = []

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code.co_filename == path:
            ran.append(frame.f_code.co_name)
        return None

    sys.settrace(tracer)
    try:
        out = compiled(x)
    finally:
        sys.settrace(None)
    assert torch.equal(out, act(x)) and ran == ["forward"]


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(6, 8), torch.nn.Linear(8, 3)

    def forward(self, x):
        return torch.tanh(self.b(torch.relu(self.a(x)))).sum()


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_lazy_and_eager_printing_write_the_same_graph_files(tmp_path, backend):
    """Every stage's file (debug() prints each graph at once) with forward and backward run."""
    torch.manual_seed(0)
    model, x = Mlp(), torch.randn(5, 6)
    texts, grads = {}, {}
    for lazy in (True, False):
        torch._dynamo.reset()
        model.zero_grad()
        where = tmp_path / ("lazy" if lazy else "eager")
        with _dump.Session(_dump.dump_dir(str(where)), summary=False, lazy=lazy):
            torch.compile(model, backend=backend)(x).backward()
        grads[lazy] = [p.grad.clone() for p in model.parameters()]
        texts[lazy] = {_numbered(name): _numbered(dh.read(where, name)) for name in dh.files(where)
                       if name.startswith("__compiled_fn_") and ".kernel_" not in name}
    assert texts[True] and texts[True] == texts[False]
    assert all(torch.equal(a, b) for a, b in zip(grads[True], grads[False]))


def _numbered(text):
    """text with Dynamo's graph numbers (which go on across resets) and uuids left out."""
    return re.sub(r"__compiled_fn_\d+(_[0-9a-f_]{36})?", "__compiled_fn_N", text)
