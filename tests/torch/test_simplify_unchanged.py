"""The simplifier of Dynamo's transformed code was made cheaper without changing what it
prints: on the transformed code of every workload, its text and line map are those of the
simplifier of BASELINE (read with git, tests/torch/simplify_inputs.py).

When a change of the simplifier's output is meant, move BASELINE to the commit that makes it.
"""

import pytest

import simplify_inputs
import torch_workloads as wl
from depyf import _fold_uses, _simplify

BASELINE = "7ca3472"  # (the simplifier before one walk served all its passes)


@pytest.fixture(scope="module")
def baseline():
    simplify_mapped = simplify_inputs.simplifier_at(BASELINE)
    if simplify_mapped is None:
        pytest.skip("no git checkout holding commit %s" % BASELINE)
    return simplify_mapped


@pytest.fixture(scope="module")
def inputs():
    return simplify_inputs.record(sorted(wl.WORKLOADS), "eager")


def test_the_simplified_transformed_code_is_what_the_baseline_printed(baseline, inputs):
    simplified = set()
    for name, given in inputs:
        expected = simplify_inputs.replay(baseline, given)
        assert simplify_inputs.replay(_simplify.simplify_mapped, given) == expected, (name, given["source"])
        if expected is not None:
            simplified.add(name)
    assert simplified == set(wl.WORKLOADS)  # (each workload's code is compared simplified, not only refused)


def test_the_name_counts_the_passes_keep_are_those_of_the_tree(inputs, monkeypatch):
    """The passes after the symbolic run rename and move names and count them as they go
    (one walk instead of one each): what folding is given is what a fresh count finds."""
    real, checked = _fold_uses.fold_single_uses, []

    def fold_single_uses(fn, params, relaxed, counts):
        checked.append(counts == _simplify._names(fn))
        return real(fn, params, relaxed, counts)

    monkeypatch.setattr(_fold_uses, "fold_single_uses", fold_single_uses)
    renamed = 0
    for name, given in inputs:
        text, _lines = simplify_inputs.replay(_simplify.simplify_mapped, given)
        renamed += "graph_out_" in given["source"] and "= graph_out_" in text  # (a graph output named)
    assert checked and all(checked)
    assert renamed  # (the passes that rename ran)
