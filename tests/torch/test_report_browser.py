"""The HTML report of a real dump, opened in headless Chromium: from a function to its
forward graph and its Inductor kernel, graph breaks, recompilations and search."""
import contextlib
import io
import json
import os
import re

import pytest

torch = pytest.importorskip("torch")

import depyf  # noqa: E402
import report_browser as rb  # noqa: E402
import torch_workloads as wl  # noqa: E402
from dump_helpers import compiler, files, read  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    """graph_breaks (two breaks, a recompiled resume function) and toy_grad (backward, a
    new input size) compiled by Inductor inside prepare_debug."""
    path = tmp_path_factory.mktemp("report") / "dump"
    torch._dynamo.reset()
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        with depyf.prepare_debug(str(path)):
            wl.run_graph_breaks(compiler("inductor"))
            wl.run_toy_grad(compiler("inductor"))
    return path, err.getvalue()


@pytest.fixture(scope="module")
def browser():
    with rb.chromium() as driver:
        yield driver


def _count(driver, name):
    return int(rb.wait_for(driver, "#count-%s .num" % name).text)


def test_prepare_debug_writes_a_self_contained_page(dump):
    path, err = dump
    assert "depyf: report: %s" % (path / "index.html") in err
    html = (path / "index.html").read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "no CDN, no network"
    manifest = json.loads((path / "depyf_manifest.json").read_text())
    assert [f["name"] for f in manifest["functions"] if not f["resume"]] == ["graph_breaks", "toy_example"]


def test_counts_at_the_top_match_the_dump(dump, browser):
    path, _ = dump
    rb.open_report(browser, path / "index.html")
    names = files(path)
    graphs = {n.split(".")[0] for n in names if n.startswith("__compiled_fn_")}
    assert _count(browser, "functions") == 2
    assert _count(browser, "graphs") == len(graphs)
    assert _count(browser, "kernels") == len([n for n in names if ".kernel_" in n])
    assert _count(browser, "graph_breaks") >= 3, "print, .item(), and toy_example's data-dependent if"
    assert _count(browser, "recompilations") >= 1


def test_from_a_function_to_its_forward_graph_and_kernel(dump, browser):
    path, _ = dump
    rb.open_report(browser, path / "index.html")
    rb.follow(browser, rb.wait_for(browser, "nav.side a", "toy_example"))
    rb.wait_for(browser, "main h1", "toy_example")
    original = rb.wait_for(browser, ".entry .pane", "Original source")
    assert "def toy_example(a, b):" in original.text
    assert "b = b * -1" in original.text
    transformed = rb.wait_for(browser, ".entry .pane", "Transformed code")
    assert "def __transformed_code_0_for_toy_example(a, b):" in transformed.text
    assert "b.sum() < 0" in rb.wait_for(browser, ".entry .graph-break").text

    rb.follow(browser, rb.wait_for(browser, ".entry a.graph-link"))
    pipeline = rb.wait_for(browser, "#pipeline")
    graph = rb.wait_for(browser, "main h1").text.split()[0]
    assert re.fullmatch(r"__compiled_fn_\d+", graph)

    rb.follow(browser, pipeline.find_element("css selector", '[data-stage="Forward_graph"]'))
    shown = rb.wait_for(browser, "#stage-view", "Forward").text
    forward_file = read(path, "%s.Forward_graph.0.py" % graph)
    assert forward_file.splitlines()[0] in shown, "the forward graph file's own text"
    assert "def forward(self" in shown

    rb.follow(browser, rb.wait_for(browser, '#pipeline [data-stage="kernel"]'))
    shown = rb.wait_for(browser, "#stage-view", "Kernels").text
    kernel_file = read(path, "%s.kernel_0.py" % graph)
    assert kernel_file.splitlines()[0] in shown
    assert "def call(" in shown and "async_compile" in shown
    assert browser.find_elements("css selector", "#stage-view .hk"), "highlighted"
    rb.screenshot(browser, "report_kernel")
    rb.back(browser)
    rb.back(browser)
    rb.wait_for(browser, "#stage-view", "Captured graph")
    assert rb.console_errors(browser) == []


def test_graph_breaks_and_recompilations_have_their_reasons(dump, browser):
    path, _ = dump
    rb.open_report(browser, path / "index.html")
    rb.follow(browser, rb.wait_for(browser, "#count-graph_breaks"))
    breaks = rb.wait_for(browser, "main .card", "Graph breaks").text
    assert "torch_workloads.py:%d" % wl.PRINT_LINE in breaks and 'print("depyf workload' in breaks
    assert "torch_workloads.py:%d" % wl.ITEM_LINE in breaks and "item()" in breaks
    rb.follow(browser, rb.wait_for(browser, "#count-recompilations"))
    recompiles = rb.wait_for(browser, "main .card", "Recompilations").text
    assert "toy_example \u2014 entry 2" in recompiles
    # (torch <= 2.6 names the tensor by its source, L['a'])
    assert re.search(r"tensor '(?:a|L\['a'\])' size mismatch at index 0\. expected 10, actual 8", recompiles), recompiles
    assert "resume at line %d" % wl.ITEM_LINE in recompiles, "the .item() value changed"
    rb.screenshot(browser, "report_recompilations")


def test_function_page_shows_stack_guards_and_dispatch_order(dump, browser):
    path, _ = dump
    rb.open_report(browser, path / "index.html")
    rb.follow(browser, rb.wait_for(browser, "nav.side a", "toy_example"))
    entries = browser.find_elements("css selector", ".entry")
    assert len(entries) == 2, "size 10, then size 8"
    assert "recompilation" in entries[1].text
    rb.screenshot(browser, "report_function")
    rb.wait_for(browser, "summary", "Compiled when called from").click()
    assert "run_toy_grad" in rb.wait_for(browser, ".stack").text
    rb.wait_for(browser, "summary", "Guards").click()
    assert "L['a']" in rb.wait_for(browser, "table.guards").text
    assert "entry 2 \u2192 entry 1" in rb.wait_for(browser, "main .card").text, "the newest entry is checked first"


def test_search_box_searches_every_file(dump, browser):
    path, _ = dump
    rb.open_report(browser, path / "index.html")
    box = rb.wait_for(browser, "#search")
    box.send_keys("cpp_fused")
    rb.wait_for(browser, "main h2", "Search: cpp_fused")  # not the view of a prefix typed so far
    first_hit = rb.wait_for(browser, ".hit")
    assert "cpp_fused" in first_hit.text
    rb.follow(browser, first_hit)
    assert "cpp_fused" in rb.wait_for(browser, "pre.code .ln.target").text
    browser.execute_script("window.scrollTo(0, 0)")  # the hit's line was scrolled into view
    rb.follow(browser, rb.wait_for(browser, ".crumbs a", "__compiled_fn_"))
    assert "Kernels" in rb.wait_for(browser, "#pipeline .step.on").text, "back to the kernel's graph"


def test_paths_are_shown_for_editors_and_breakpoints(dump, browser):
    path, _ = dump
    rb.open_report(browser, path / "index.html")
    rb.follow(browser, rb.wait_for(browser, "nav.side a", "graph_breaks"))
    paths = [el.text for el in browser.find_elements("css selector", ".path .p")]
    assert any(p.endswith("torch_workloads.py:%d" % wl.graph_breaks.__code__.co_firstlineno) for p in paths)
    assert str(path / "__transformed_code_0_for_graph_breaks.py") in paths
    assert os.path.isfile(path / "__transformed_code_0_for_graph_breaks.py")
