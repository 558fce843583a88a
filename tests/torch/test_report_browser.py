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
    assert "torch_dynamo_resume_in_graph_breaks_at_%d \u2014 entry 2" % wl.ITEM_LINE in recompiles, "the .item() value changed"
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


# Whether the user can see an element: each ancestor that clips (overflow other than
# visible) either holds it within its box, or scrolls and can bring it there (then, for the
# ancestors further out, the element is where that scrolling puts it).
REACHABLE = """
var el = arguments[0], b = el.getBoundingClientRect();
var r = {left: b.left, right: b.right, top: b.top, bottom: b.bottom};
if (!b.width || !b.height) return "not rendered";
for (var a = el.parentElement; a && a !== document.documentElement; a = a.parentElement) {
  var style = getComputedStyle(a), box = a.getBoundingClientRect(), scrolls = /auto|scroll/;
  var name = a.tagName.toLowerCase() + (a.className ? "." + String(a.className).split(" ").join(".") : "");
  var axes = [["overflowX", "left", "right", "scrollLeft", "scrollWidth"], ["overflowY", "top", "bottom", "scrollTop", "scrollHeight"]];
  for (var i = 0; i < 2; i++) {
    var ax = axes[i], lo = ax[1], hi = ax[2], overflow = style[ax[0]];
    if (overflow === "visible" || (r[lo] >= box[lo] - 1 && r[hi] <= box[hi] + 1)) continue;
    if (!scrolls.test(overflow)) return "cut off by " + name + " (" + ax[0] + ": " + overflow + ")";
    if (r[hi] - box[lo] + a[ax[3]] > a[ax[4]] + 1) return "beyond the scrolling of " + name;
    var size = r[hi] - r[lo];
    r[lo] = box[lo];
    r[hi] = Math.min(box[hi], box[lo] + size);
  }
}
return "";
"""


def _open_entry(driver, function_name, compile_id):
    """The function's page, and on it the entry card of `compile_id`."""
    rb.follow(driver, rb.wait_for(driver, "nav.side a", function_name))
    rb.wait_for(driver, "main h1", function_name)
    return rb.wait_for(driver, ".entry", "compile id %s" % compile_id)


def test_every_guard_shows_in_full_with_its_source_line(dump, browser):
    path, _ = dump
    manifest = json.loads((path / "depyf_manifest.json").read_text())
    guards = [(fn["name"], entry["compile_id"], guard) for fn in manifest["functions"]
              for entry in fn["entries"] for guard in entry["guards"]]
    longest = max(guards, key=lambda g: len(g[2]["expr"] or "") + len(g[2]["comment"]))
    with_line = max((g for g in guards if g[2]["expr"] and " # " in g[2]["comment"]), key=lambda g: len(g[2]["expr"]))
    rb.open_report(browser, path / "index.html")
    for name, compile_id, guard in (longest, with_line):
        rb.open_report(browser, path / "index.html")
        entry = _open_entry(browser, name, compile_id)
        entry.find_element("xpath", ".//summary[starts-with(normalize-space(), 'Guards')]").click()
        table = rb.wait_for(browser, "#%s table.guards" % entry.get_attribute("id"))
        shown = guard["expr"] or guard["comment"].split(" # ")[0]
        (row,) = [r for r in table.find_elements("css selector", "tr.guard")
                  if r.find_element("css selector", ".expr").get_attribute("textContent").startswith(shown)]
        expr = row.find_element("css selector", ".expr")
        assert browser.execute_script(REACHABLE, expr) == "", "%s: %s" % (guard["kind"], shown[:80])
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", row)
        assert expr.is_displayed()
        if guard is with_line[2]:
            source = row.find_element("css selector", ".src")
            code, where = guard["comment"].lstrip("# ").split(" # ")
            assert source.find_element("css selector", ".code").get_attribute("textContent") == code
            assert source.find_element("css selector", ".where").get_attribute("textContent") == where
            assert browser.execute_script(REACHABLE, source) == ""
            assert source.is_displayed()
            rb.screenshot(browser, "report_guards")
    assert rb.console_errors(browser) == []


def test_the_compile_stack_shows_every_frame_of_the_graph_break_traceback(dump, browser):
    path, _ = dump
    manifest = json.loads((path / "depyf_manifest.json").read_text())
    (first,) = [c for c in manifest["compilations"] if c["function"]["name"] == "graph_breaks"]
    (brk,) = first["graph_breaks"]
    frames = re.findall(r'^  File "(.*)", line (\d+), in (.*)$', brk["user_stack"], re.M)
    assert frames
    rb.open_report(browser, path / "index.html")
    entry = _open_entry(browser, "graph_breaks", first["compile_id"])
    entry.find_element("xpath", ".//summary[starts-with(normalize-space(), 'Compiled when called from')]").click()
    stack = entry.find_element("css selector", ".stack")
    folded = stack.find_elements("css selector", "details.folded")
    assert folded, "pytest's and torch's frames, folded"
    summaries = [d.find_element("css selector", "summary").text for d in folded]
    assert any(re.fullmatch(r"\d+ frames? (inside torch|in torch and libraries) \(folded\)", s) for s in summaries), summaries
    for details in folded:
        details.find_element("css selector", "summary").click()
    text = stack.text
    for file, line, name in frames[:-1]:  # (the last: the break's line in the compiled frame)
        assert "%s:%s in %s" % (file, line, name) in text
    assert "%s:%d in graph_breaks" % (wl.__file__, wl.graph_breaks.__code__.co_firstlineno) in text
    assert "NoneType" not in entry.text


def test_one_name_per_resume_function_in_files_summary_and_page(dump, browser):
    path, err = dump
    manifest = json.loads((path / "depyf_manifest.json").read_text())
    resumes = [fn for fn in manifest["functions"] if fn["resume"]]
    names = sorted({fn["name"] for fn in resumes})
    assert "torch_dynamo_resume_in_toy_example_at_%d" % (wl.toy_example.__code__.co_firstlineno + 2) in names
    (summary,) = [line for line in err.splitlines() if "resume functions:" in line]
    for name in names:
        assert any(f.startswith("__transformed_code_") and f.endswith("_for_%s.py" % name) for f in files(path))
        assert name in summary
    assert re.search(r"resume functions: %d \(" % len(resumes), summary), summary
    rb.open_report(browser, path / "index.html")
    side = [a.find_element("css selector", ".name") for a in browser.find_elements("css selector", "nav.side li a")]
    shown = [el.get_attribute("textContent") for el in side]
    assert sorted({s.split("\u00a0", 1)[-1].split("__resume_at_")[0] for s in shown if "resume" in s}) == names
    assert "resume at line" not in browser.find_element("css selector", "body").text
    # two resume functions Dynamo named alike: told apart by their globals, shown as a detail
    shared = [el for el in side if el.find_elements("css selector", "small.detail")]
    details = [el.find_element("css selector", "small.detail").get_attribute("textContent") for el in shared]
    # (one global per cache entry that calls it: toy_example was compiled twice)
    # (torch <= 2.8 appends a uuid to the name of a resume function's global)
    one = r"__resume_at_\d+_\d+(?:_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12})?"
    assert len(shared) >= 2 and all(re.fullmatch(r"%s(, %s)*" % (one, one), d) for d in details), details
    assert len(set(details)) == len(details), details
    rb.follow(browser, shared[0].find_element("xpath", ".."))
    title = rb.wait_for(browser, "main h1").text
    assert title.startswith(shared[0].get_attribute("textContent").split("\u00a0", 1)[-1].split("__resume_at_")[0])
    assert re.search(r"Bound to the globals? %s, the names? the transformed code calls it by" % details[0],
                     rb.wait_for(browser, "main .card").text)
