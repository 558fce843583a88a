"""depyf.explain.dump_src: the explained source of a compiled function as one string
(guards, transformed code, the graphs it calls, resume functions, dispatcher)."""
import re

import pytest

torch = pytest.importorskip("torch")

import torch_workloads as wl  # noqa: E402
from depyf.explain import dump_src  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def explained():
    torch._dynamo.reset()
    compiled = torch.compile(wl.toy_example, backend="eager")
    for _ in range(10):
        compiled(torch.randn(10), torch.randn(10))
    return dump_src(compiled)


def test_it_is_python(explained):
    compile(explained, "explained_code.py", "exec", dont_inherit=True)


def test_it_holds_guards_graphs_transformed_code_and_dispatch(explained):
    assert re.search(r"^def __guard_0_for_toy_example\(L, G, \*\*___kwargs_ignored\):", explained, re.M)
    assert "check_tensor(L['a'], Tensor" in explained
    assert re.search(r"^def __transformed_code_0_for_toy_example\(a, b\):", explained, re.M)
    graphs = re.findall(r"^def (__compiled_fn_\d+(?:_\w+)?)\(self, ", explained, re.M)
    assert len(graphs) == 3, "the eager backend's graphs, as FX code"
    assert "torch.abs(l_a_)" in explained
    assert re.search(r"^def transformed_toy_example\(a, b\):", explained, re.M)
    assert explained.count("#============ end of") == 3, "toy_example and its two resume functions"
    assert re.search(r"^def __resume_at_\d+_\d+(?:_[0-9a-f_]{36})?\(", explained, re.M)


def test_dump_src_accepts_the_original_function_and_compiled_modules():
    torch._dynamo.reset()
    compiled = torch.compile(wl.toy_example, backend="eager")
    compiled(torch.ones(3), torch.ones(3))
    assert "def transformed_toy_example(a, b):" in dump_src(wl.toy_example)
    gpt = wl.TinyGPT(layers=1)
    compiled_gpt = torch.compile(gpt, backend="eager")
    compiled_gpt(torch.randint(0, 64, (1, 4)))
    text = dump_src(compiled_gpt)
    assert re.search(r"^def transformed_forward\(self, idx\):", text, re.M)
    assert "__guard_0_for_forward" in text
    linear = torch.compile(torch.nn.Linear(2, 2), backend="eager")
    linear(torch.ones(1, 2))
    assert "__guard_0_for_inner" in dump_src(linear), "torch.nn modules run in Dynamo's wrapper"


def test_transformed_code_is_decompiled_not_a_stub(explained):
    """Needs the decompiler."""
    assert "could not decompile" not in explained
    assert "raise NotImplementedError" not in explained
