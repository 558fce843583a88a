"""prepare_debug on real workloads: an MLP training step, nn.TransformerEncoderLayer
with varying batch and sequence lengths, a function with graph breaks (a print
and a branch on .item()), and a small GPT-style model.

Each must compute exactly what it computes without depyf, and leave a dump of
compilable files covering every compiled function and graph.
"""
import re

import pytest

torch = pytest.importorskip("torch")

import dump_helpers as dh  # noqa: E402
import torch_workloads as wl  # noqa: E402

pytestmark = pytest.mark.torch

CASES = [
    ("mlp_training", "aot_eager"),
    ("mlp_training", "inductor"),
    ("transformer_dynamic", "aot_eager"),
    ("graph_breaks", "eager"),
    ("gpt", "aot_eager"),
]


@pytest.mark.parametrize("name,backend", CASES)
def test_workload_is_unchanged_and_fully_dumped(name, backend, tmp_path):
    workload = wl.WORKLOADS[name]
    expected = dh.plain(workload, backend)
    results, printed = dh.under_prepare_debug(workload, backend, tmp_path)
    dh.assert_identical(results, expected)
    dh.assert_close(results, dh.eager(workload))

    names = dh.files(tmp_path)
    dh.assert_every_file_compiles(tmp_path)
    assert any(n.startswith("full_code_for_") for n in names)
    transformed = [n for n in names if n.startswith("__transformed_code_")]
    called = set()
    for n in transformed:
        called.update(dh.compiled_fns_called(dh.read(tmp_path, n)))
    graphs = int(re.search(r"graphs: (\d+)", printed).group(1))
    assert graphs >= 1 and len(called) == graphs, (called, printed)
    for fn in called:
        stages = dh.stage_files(tmp_path, fn)
        assert "Captured_Graph" in stages
        if backend != "eager":
            assert {"Forward_graph", "Backward_graph"} <= set(stages), (fn, stages)
        if backend == "inductor":
            assert len(stages["kernel"]) == 2, "forward and backward kernels"


def test_graph_breaks_are_counted_and_explained(tmp_path):
    _results, printed = dh.under_prepare_debug(wl.run_graph_breaks, "eager", tmp_path)
    assert re.search(r"graph breaks: ([2-9])", printed), printed
    text = dh.read(tmp_path, "full_code_for_graph_breaks_0.py")
    assert text.count("#============ end of") >= 3, "the function and its resume functions"
    assert re.search(r"^def __resume_at_\d+_\d+(?:_[0-9a-f_]{36})?\(", text, re.M)


def test_dynamic_batch_and_sequence_lengths_share_one_symbolic_graph(tmp_path):
    _results, printed = dh.under_prepare_debug(wl.run_transformer_dynamic, "aot_eager", tmp_path)
    assert "recompilations: 1" in printed, "the second shape makes the graph dynamic"
    forwards = [n for n in dh.files(tmp_path) if ".Forward_graph." in n]
    assert any(re.search(r'"f32\[s\d+, s\d+, 16\]', dh.read(tmp_path, n)) for n in forwards), \
        "batch and sequence length are symbolic in the last graph"
