"""depyf_manifest.json, what the report reads: written while compilations happen, and
holding each compilation's stack, graph breaks, recompile reasons, guards and files."""
import contextlib
import io
import json
import os
import re

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
import torch_workloads as wl  # noqa: E402
from dump_helpers import compiler  # noqa: E402

pytestmark = pytest.mark.torch


def _manifest(path):
    return json.loads((path / "depyf_manifest.json").read_text())


@pytest.fixture(scope="module")
def manifest(tmp_path_factory):
    path = tmp_path_factory.mktemp("manifest")
    torch._dynamo.reset()
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        with depyf.prepare_debug(str(path), report=False):
            wl.run_graph_breaks(compiler("aot_eager"))
    return _manifest(path)


class _Printing(torch.nn.Module):
    def forward(self, x):
        y = x + 1
        print("depyf test: a print breaks the graph")
        if y.sum() > 0:  # (a data-dependent branch: a break Dynamo reports with no exception)
            y = y * 2
        return y


@pytest.fixture(scope="module")
def module_manifest(tmp_path_factory):
    """A compiled nn.Module with a graph break: nn.Module's __call__ frames sit between the
    caller and forward."""
    path = tmp_path_factory.mktemp("module_manifest")
    torch._dynamo.reset()
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        with depyf.prepare_debug(str(path), report=False):
            torch.compile(_Printing(), backend="eager")(torch.ones(3))
    return _manifest(path)


def _compilations_of(manifest, name):
    return [c for c in manifest["compilations"] if c["function"]["name"] == name]


def test_it_is_written_while_the_block_runs(tmp_path):
    torch._dynamo.reset()
    with contextlib.redirect_stderr(io.StringIO()):
        with depyf.prepare_debug(str(tmp_path), report=False):
            torch.compile(wl.toy_example, backend="eager")(torch.ones(4), torch.ones(4))
            during = _manifest(tmp_path)
    assert [c["function"]["name"] for c in during["compilations"]][:1] == ["toy_example"]
    assert during["compilations"][0]["transformed"] == "__transformed_code_0_for_toy_example.py"
    assert during["functions"] == [], "cache entries are added when the block ends"
    assert [f["name"] for f in _manifest(tmp_path)["functions"]][:1] == ["toy_example"]


def test_graph_breaks_carry_their_reason_and_source_line(manifest):
    (first,) = _compilations_of(manifest, "graph_breaks")
    (brk,) = first["graph_breaks"]
    assert brk["file"] == wl.__file__ and brk["line"] == wl.graph_breaks.__code__.co_firstlineno + 2
    assert brk["code"] == 'print("depyf workload: a print breaks the graph")'
    assert "print" in brk["reason"] and "Traceback" not in brk["reason"], "Dynamo's own traceback is dropped"
    (after_print,) = _compilations_of(manifest, "torch_dynamo_resume_in_graph_breaks_at_%d" % wl.PRINT_LINE)
    assert "item" in after_print["graph_breaks"][0]["reason"]  # (torch 2.7 words it "Tensor.item")


def _traceback_frames(text):
    return [(path, int(line), name) for path, line, name in
            re.findall(r'^  File "(.*)", line (\d+), in (.*)$', text, re.M)]


def _as_torch_names_it(frame):
    """(torch's traceback calls a resume function's frame by the function it resumes)"""
    path, line, name = frame
    return path, line, re.sub(r"^torch_dynamo_resume_in_(\w+)_at_\d+$", r"\1", name)


@pytest.mark.parametrize("which", ["manifest", "module_manifest"])
def test_the_compile_stack_has_every_frame_of_the_graph_break_traceback(request, which):
    manifest = request.getfixturevalue(which)
    breaks = 0
    for compilation in manifest["compilations"]:
        for brk in compilation["graph_breaks"]:
            traceback = _traceback_frames(brk["user_stack"])
            stack = [_as_torch_names_it((f["file"], f["line"], f["name"])) for f in compilation["stack"]]
            assert traceback and stack
            # the traceback's last frame is the break's line in the compiled frame; the stack's,
            # the compiled frame's first line
            assert traceback[-1][::2] == stack[-1][::2]
            frames = iter(stack[:-1])
            missing = [frame for frame in traceback[:-1] if frame not in frames]  # (in order)
            assert not missing, "frames of the traceback the compile stack lacks: %s" % missing
            breaks += 1
    assert breaks >= 1
    if which == "module_manifest":
        (forward,) = _compilations_of(manifest, "forward")
        assert any(f["origin"] == "torch" and f["name"] == "_call_impl" for f in forward["stack"]), \
            "nn.Module.__call__ is in the stack, marked as torch's"


def test_graph_break_tracebacks_end_with_the_users_frame(module_manifest):
    """(Dynamo appends traceback.format_exc(): "NoneType: None" after a break it reports with
    no exception, such as a data-dependent branch)"""
    breaks = [b for c in module_manifest["compilations"] for b in c["graph_breaks"]]
    assert len(breaks) == 2, "the print, the branch"
    for brk in breaks:
        lines = brk["user_stack"].rstrip().splitlines()
        last = max(i for i, line in enumerate(lines) if line.startswith("  File "))
        assert lines[last].endswith("line %d, in forward" % brk["line"])
        code, *carets = lines[last + 1:]  # (the carets under it: Python 3.11+)
        assert code.strip() == brk["code"] and all(set(line.strip()) <= set("^~") for line in carets), lines[last:]


def test_guards_name_where_torch_made_them_never_depyf(manifest):
    """A guard with no user line (global state, the default device) is named after the frame
    that added it: torch's, not the wrapper depyf puts around GuardsSet.add."""
    comments = [g["comment"] for fn in manifest["functions"] for e in fn["entries"] for g in e["guards"]]
    assert any(re.search(r"\.py:\d+ in \w+$", c) for c in comments)
    assert not [c for c in comments if re.search(r"\bdepyf/\w+\.py:\d+ in ", c)], "depyf's own frames"


def test_recompilations_carry_their_reasons(manifest):
    after_item = _compilations_of(manifest, "torch_dynamo_resume_in_graph_breaks_at_%d" % wl.ITEM_LINE)
    assert len(after_item) >= 2, "the .item() value differs between calls"
    assert [c["compile_id"].split("/")[1] for c in after_item] == [str(i) for i in range(len(after_item))]
    assert after_item[0]["recompile_reasons"] == []
    assert all(c["recompile_reasons"] for c in after_item[1:])


def test_each_compilation_knows_its_stack_files_and_graphs(manifest):
    (first,) = _compilations_of(manifest, "graph_breaks")
    # (the list comprehension calling it is a frame of its own before 3.12)
    names = [frame["name"] for frame in first["stack"] if frame["name"] != "<listcomp>" and not frame["origin"]]
    assert names[-3:] == ["manifest", "run_graph_breaks", "graph_breaks"], "the callers, then the compiled frame"
    origins = {frame["origin"] for frame in first["stack"]}
    assert origins == {None, "torch", "library"}, "torch.compile's wrapper and pytest's frames are there, marked"
    inside_torch = os.path.join(os.path.dirname(torch.__file__), "")
    assert all((frame["origin"] == "torch") == frame["file"].startswith(inside_torch) for frame in first["stack"])
    assert first["guards_text"] and "TREE_GUARD_MANAGER" in first["guards_text"]
    (graph,) = first["graphs"]
    files = {g["name"]: g["files"] for g in manifest["graphs"]}
    assert "%s.Captured_Graph.0.py" % graph in files[graph]
    assert "%s.Forward_graph.0.py" % graph in files[graph]


def test_functions_list_cache_entries_in_check_order_with_guards_and_resumes(manifest):
    functions = {f["name"]: f for f in manifest["functions"]}
    top = functions["graph_breaks"]
    assert not top["resume"] and top["full_code"] == "full_code_for_graph_breaks_0.py"
    assert top["source"].startswith("def graph_breaks(x):") and top["source_line"] == top["line"]
    (entry,) = top["entries"]
    assert any("L['x']" in (g["expr"] or "") for g in entry["guards"])
    (resume,) = entry["resumes"]
    assert resume["name"] == "torch_dynamo_resume_in_graph_breaks_at_%d" % wl.PRINT_LINE
    recompiled = functions["torch_dynamo_resume_in_graph_breaks_at_%d" % wl.ITEM_LINE]
    ids = [e["compile_id"] for e in recompiled["entries"]]
    assert ids == sorted(ids, reverse=True), "Dynamo checks the newest entry first"
    assert recompiled["resume"] and "def " in recompiled["source"], "decompiled, not read from the file"


def test_compile_events_come_from_dynamos_structured_trace():
    import logging

    from depyf import _torch_internals as ti

    trace_log = logging.getLogger("torch.__trace")
    before = (list(trace_log.handlers), trace_log.level, trace_log.propagate)
    events = []
    torch._dynamo.reset()
    unsubscribe = ti.subscribe_compile_events(events.append)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            torch.compile(wl.graph_breaks, backend="eager")(torch.ones(3))
    finally:
        unsubscribe()
    assert (list(trace_log.handlers), trace_log.level, trace_log.propagate) == before, "logger restored"
    first = [e for e in events if e["compile_id"] == "0/0"]
    assert [e["kind"] for e in first if e["kind"] != "guards"][0] == "start"
    assert first[-1]["kind"] == "end" and first[-1]["name"] == "graph_breaks" and first[-1]["fail"] is None
    (brk,) = {(e["file"], e["line"]) for e in first if e["kind"] == "graph_break"}
    assert brk == (wl.__file__, wl.graph_breaks.__code__.co_firstlineno + 2)
    events.clear()
    torch.compile(wl.toy_example, backend="eager")(torch.ones(3), torch.ones(3))
    assert events == [], "nothing after unsubscribing"
