"""prepare_debug on the seed's toy example, for the three backends.

Inputs that require grad and a second input size: graph breaks (the branch on
`b.sum() < 0`), resume functions, forward and backward graphs.  The dump must
name files the way existing scripts expect, link every transformed code to its
graph files, hold only compilable Python, and change no result.
"""
import re

import pytest

torch = pytest.importorskip("torch")

import dump_helpers as dh  # noqa: E402
import torch_workloads as wl  # noqa: E402

pytestmark = pytest.mark.torch

BACKENDS = ["eager", "aot_eager", "inductor"]
STAGES = {
    "eager": {"Captured_Graph"},
    "aot_eager": {"Captured_Graph", "Joint_graph", "Forward_graph", "Backward_graph"},
    "inductor": {"Captured_Graph", "Joint_graph", "Forward_graph", "Backward_graph",
                 "BEFORE_PRE_GRAD", "AFTER_POST_GRAD", "kernel"},
}


@pytest.fixture(scope="module", params=BACKENDS)
def dumped(request, tmp_path_factory):
    backend = request.param
    dump_dir = tmp_path_factory.mktemp("dump_" + backend)
    expected = dh.plain(wl.run_toy_grad, backend)
    results, printed = dh.under_prepare_debug(wl.run_toy_grad, backend, dump_dir)
    return backend, dump_dir, results, expected, printed


def test_results_are_exactly_those_without_depyf(dumped):
    backend, _dir, results, expected, _printed = dumped
    dh.assert_identical(results, expected)
    dh.assert_close(results, dh.eager(wl.run_toy_grad))


def test_file_names_follow_the_original_scheme(dumped):
    _backend, dump_dir, *_ = dumped
    names = dh.files(dump_dir)
    assert "full_code_for_toy_example_0.py" in names
    assert "__transformed_code_0_for_toy_example.py" in names
    resume = [n for n in names if re.match(r"__transformed_code_\d+_for_torch_dynamo_resume_in_toy_example_at_\d+\.py$", n)]
    assert len(resume) >= 2, names  # both sides of the branch
    for name in names:
        assert re.match(r"(full_code_for_\w+_\d+|__transformed_code_\d+_for_\w+|"
                        r"__compiled_fn_\d+\.(\w+\.\d+|kernel_\d+))\.py$", name), name


def stages_torch_logs(backend):
    """The graph stages of STAGES that this torch logs: Inductor's graph before its pre-grad
    passes (`BEFORE PRE GRAD`) since torch 2.7, not in 2.6."""
    import inspect

    import torch._inductor.compile_fx as compile_fx

    if backend == "inductor" and "BEFORE PRE GRAD" not in inspect.getsource(compile_fx):
        return STAGES[backend] - {"BEFORE_PRE_GRAD"}
    return STAGES[backend]


def test_each_transformed_code_links_to_the_graph_stages_that_ran(dumped):
    backend, dump_dir, *_ = dumped
    names = dh.files(dump_dir)
    transformed = [n for n in names if n.startswith("__transformed_code_")]
    called = set()
    for name in transformed:
        called.update(dh.compiled_fns_called(dh.read(dump_dir, name)))
    assert len(called) >= 3, called  # the function and both resume functions
    for fn in called:
        stages = dh.stage_files(dump_dir, fn)
        assert stages_torch_logs(backend) <= set(stages), (fn, sorted(stages))
        if backend == "eager":
            assert "Forward_graph" not in stages
    graph_fns = {n.split(".")[0] for n in names if n.startswith("__compiled_fn_")}
    assert graph_fns == called


def test_every_dumped_file_compiles(dumped):
    dh.assert_every_file_compiles(dumped[1])


def test_graph_files_hold_the_graph_code(dumped):
    backend, dump_dir, *_ = dumped
    for name in dh.files(dump_dir):
        if ".Captured_Graph." in name:
            text = dh.read(dump_dir, name)
            assert "def forward(self" in text and ("torch.abs" in text or "mul" in text)
        if ".Backward_graph." in name:
            assert "tangents_1" in dh.read(dump_dir, name)
        if ".kernel_" in name:
            text = dh.read(dump_dir, name)
            assert re.search(r"^(def call\(|call = )", text, re.M), name
            assert "cpp_pybinding" in text or "extern \"C\"" in text, "the C++ kernels are included"


def test_full_code_explains_guards_transformed_code_and_dispatch(dumped):
    _backend, dump_dir, *_ = dumped
    text = dh.read(dump_dir, "full_code_for_toy_example_0.py")
    assert re.search(r"^def __guard_0_for_toy_example\(L, G, \*\*___kwargs_ignored\):", text, re.M)
    guard_lines = [line for line in text.splitlines() if "__guard_hit = __guard_hit and" in line]
    assert any("L['a']" in line and "x = a / (torch.abs(a) + 1)" in line for line in guard_lines), \
        "guards carry the source line they came from"
    assert re.search(r"^def __transformed_code_0_for_toy_example\(a, b\):", text, re.M)
    assert re.search(r"^def toy_example\(a, b\):\n    x = a / \(torch.abs\(a\) \+ 1\)", text, re.M)
    dispatch = text[text.index("def transformed_toy_example(a, b):"):]
    assert "if __guard_0_for_toy_example(__local_dict, __global_dict):" in dispatch
    assert "return __transformed_code_0_for_toy_example(a, b)" in dispatch
    resume_sections = re.findall(r"^def transformed___resume_at_\d+_\d+(?:_[0-9a-f_]{36})?\(", text, re.M)
    assert len(resume_sections) >= 2, "resume functions after the graph break are explained too"


def test_summary_names_functions_graphs_breaks_and_path(dumped):
    _backend, dump_dir, _results, _expected, printed = dumped
    assert str(dump_dir) in printed
    assert re.search(r"functions: 1 \(toy_example\), resume functions: [23]", printed), printed
    assert re.search(r"graphs: [3-9] \(\d+ graph/kernel files\), graph breaks: [1-9]", printed), printed
    assert re.search(r"recompilations: \d+", printed), printed


def test_transformed_code_files_hold_decompiled_source(dumped):
    """Needs the decompiler: each file is the def itself, not a disassembly."""
    _backend, dump_dir, *_ = dumped
    for name in dh.files(dump_dir):
        if name.startswith("__transformed_code_"):
            text = dh.read(dump_dir, name)
            assert "could not decompile" not in text, text[:400]
            assert re.search(r"^def __transformed_code_\d+_for_\w+\(", text, re.M), name


def _stops(y):
    raise ValueError("depyf test: the code after the graph break stops here")


def breaks_then_stops(x):
    y = x + 1
    print("depyf test: a print breaks the graph")
    _stops(y)  # (the resume function Dynamo made for this line gets no cache entry)
    return y * 2


def test_summary_names_a_resume_function_without_cache_entries(tmp_path):
    def workload(compile_fn):
        with pytest.raises(ValueError, match="the code after the graph break stops here"):
            compile_fn(breaks_then_stops)(torch.ones(3))
        return []

    _results, printed = dh.under_prepare_debug(workload, "eager", tmp_path / "dump")
    resume = "torch_dynamo_resume_in_breaks_then_stops_at_%d" % (breaks_then_stops.__code__.co_firstlineno + 2)
    assert "functions: 1 (breaks_then_stops), resume functions: 1 (%s)" % resume in printed, printed
    (run,) = dh.report_data(tmp_path / "dump")["runs"]
    (shown,) = [fn for fn in run["functions"] if fn["name"] == resume]  # (its failed compile, and where it is called)
    assert [c["fail"] is not None for c in shown["compilations"]] == [True], shown
    assert run["counts"]["resume_functions"] == 1
