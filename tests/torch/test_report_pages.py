"""Report pages for the dumps that are not one busy process: nothing compiled, several
ranks, an older dump without manifest; the `depyf report` command and report=False."""
import contextlib
import io
import json
import os
import subprocess
import sys

import pytest

import report_browser as rb
import report_synthetic

import depyf
from depyf.report import write_report

DEPYF_HOME = os.path.dirname(os.path.dirname(os.path.abspath(depyf.__file__)))


def _prepare_debug_with(path, body, **options):
    torch = pytest.importorskip("torch")
    torch._dynamo.reset()
    with contextlib.redirect_stderr(io.StringIO()):
        with depyf.prepare_debug(str(path), **options):
            body(torch)


def test_nothing_compiled_says_so(tmp_path, browser):
    dump = tmp_path / "dump"
    _prepare_debug_with(dump, lambda torch: torch.ones(3) * 2)
    assert (dump / "index.html").is_file()
    rb.open_report(browser, dump / "index.html")
    page = rb.wait_for(browser, "#nothing-compiled").text
    assert "Nothing was compiled" in page
    for name in ("functions", "graphs", "graph_breaks", "recompilations", "kernels"):
        assert rb.wait_for(browser, "#count-%s .num" % name).text == "0"
    rb.screenshot(browser, "report_empty")


def test_report_false_writes_no_page(tmp_path):
    dump = tmp_path / "dump"
    _prepare_debug_with(dump, lambda torch: torch.compile(lambda x: x + 1, backend="eager")(torch.ones(2)),
                        report=False)
    assert (dump / "depyf_manifest.json").is_file()
    assert not (dump / "index.html").exists()


def test_ranks_each_have_their_tab(tmp_path, browser):
    dump = tmp_path / "dump"
    report_synthetic.make_dump(str(dump / "rank_0"), functions=2, entries=1, rank=0)
    report_synthetic.make_dump(str(dump / "rank_1"), functions=3, entries=2, rank=1)
    rb.open_report(browser, write_report(str(dump)))
    tabs = browser.find_elements("css selector", "#ranks button")
    assert [t.text for t in tabs] == ["rank 0", "rank 1"]
    assert rb.wait_for(browser, "#count-graphs .num").text == "2"
    rb.follow(browser, tabs[1])
    rb.wait_for(browser, "#where", "rank_1")
    assert rb.wait_for(browser, "#count-graphs .num").text == "6"
    assert rb.wait_for(browser, "#count-recompilations .num").text == "3"
    rb.screenshot(browser, "report_ranks")
    rows = browser.find_elements("css selector", "main tr[data-run]")
    assert [r.text.split()[:3] for r in rows] == [["rank", "0", "2"], ["rank", "1", "3"]], "functions per rank"
    rb.follow(browser, rows[0])
    rb.wait_for(browser, "#where", "rank_0")


def _side_count(driver, heading):
    """The number the side bar gives next to `heading` (Functions, Graphs, Files)."""
    rb.wait_for(driver, "nav.side h3")
    return int(driver.find_element("xpath", "//nav//h3[starts-with(normalize-space(), '%s')]/span" % heading).text)


def test_processes_of_one_run_each_have_their_tab(tmp_path, browser):
    """Three processes dumped into one directory: each one's graph __compiled_fn_1 is its own
    (its files numbered apart from the others'), never the three merged into one."""
    dump = tmp_path / "dump"
    pids = [101, 202, 303]
    report_synthetic.make_dump(str(dump), functions=2, entries=1, pids=pids)
    manifest = json.loads((dump / "depyf_manifest.json").read_text())
    index = write_report(str(dump))
    rb.open_report(browser, index)
    tabs = browser.find_elements("css selector", "#ranks button")
    assert [t.text for t in tabs] == ["process %d" % pid for pid in pids]
    rows = rb.wait_for(browser, "#runs-card", "3 processes dumped into this directory").find_elements(
        "css selector", "tr[data-run]")
    assert [r.text.split()[:4] for r in rows] == [["process", str(pid), "2", "2"] for pid in pids], "functions, graphs"
    for i, pid in enumerate(pids):
        mine = [g for g in manifest["graphs"] if g["pid"] == pid and g["name"] == "__compiled_fn_1"]
        (own,) = [f for f in mine[0]["files"] if ".Captured_Graph." in f]
        rb.open_report(browser, index, "#/%d/graph/__compiled_fn_1" % i)
        assert "on" in rb.wait_for(browser, "#ranks button", "process %d" % pid).get_attribute("class")
        steps = browser.find_elements("css selector", "#pipeline .step")
        assert [s.get_attribute("data-stage") for s in steps].count("Captured_Graph") == 1, "this process's only"
        assert [s.find_element("css selector", "small").text for s in steps
                if s.get_attribute("data-stage") == "AFTER_POST_GRAD"] == ["forward", "backward"], \
            "told apart by their order, not their numbers"
        shown = rb.wait_for(browser, "#stage-view", "Captured_Graph of process %d" % pid)
        assert own in shown.find_element("css selector", ".ptitle").text
        (process,) = [p for p in manifest["processes"] if p["pid"] == pid]
        assert _side_count(browser, "Files") == len(process["files"]) - 1, "its files, without the manifest"
        rb.open_report(browser, index, "#/%d/fn/f0" % i)
        assert "compile id 0/0" in rb.wait_for(browser, ".entry .head").text, "as Dynamo's logs in that process say"
    rb.screenshot(browser, "report_processes")
    assert rb.console_errors(browser) == []


def test_files_depyf_did_not_write_in_its_last_run_are_neither_counted_nor_linked(tmp_path, browser):
    dump = tmp_path / "dump"
    report_synthetic.make_dump(str(dump), functions=1, entries=1)
    listed = json.loads((dump / "depyf_manifest.json").read_text())["files"]
    foreign = {"notes.txt": "the user's notes, stale_or_foreign\n",
               "__transformed_code_9_for_layer_0.py": "def stale_or_foreign(x):\n    return __compiled_fn_77(x)\n",
               "__compiled_fn_77.Captured_Graph.0.py": "# stale_or_foreign graph of an earlier run\n",
               "full_code_for_layer_0_7.py": "# stale_or_foreign\n"}
    for name, text in foreign.items():
        (dump / name).write_text(text)
    index = write_report(str(dump))
    rb.open_report(browser, index)
    assert rb.wait_for(browser, "#count-graphs .num").text == "1"
    side = rb.wait_for(browser, "nav.side").text
    assert "__compiled_fn_77" not in side
    assert _side_count(browser, "Files") == len(listed) - 1, "every file the manifest lists but itself"
    rb.follow(browser, rb.wait_for(browser, "nav.side a", "Browse all files"))
    shown = rb.wait_for(browser, "main .card", "All files").text
    assert "left out" in shown
    assert not [name for name in foreign if name in shown]
    assert "__transformed_code_0_for_layer_0.py" in shown
    rb.wait_for(browser, "#search").send_keys("stale_or_foreign")
    assert "No file contains" in rb.wait_for(browser, "main .card", "Search: stale_or_foreign").text
    for view in ("file/notes.txt", "file/__transformed_code_9_for_layer_0.py", "graph/__compiled_fn_77"):
        rb.open_report(browser, index, "#/0/" + view)
        assert rb.wait_for(browser, "main h2").text.startswith("No such"), view


def test_a_page_made_while_another_process_rewrote_the_manifest_is_made_again(tmp_path, monkeypatch):
    """Processes of one run each write the page when they finish: one that read the manifest
    before another process's last save must not leave its older page over the newer one."""
    from depyf.report import build

    dump = tmp_path / "dump"
    report_synthetic.make_dump(str(dump), functions=1, entries=1)
    real, pages = build.render, []

    def render_meanwhile_rewritten(path):
        html = real(path)
        if not pages:  # another process saves its last manifest (atomically, as depyf does)
            manifest = json.loads((dump / "depyf_manifest.json").read_text())
            manifest["updated"] = "written by the last save"
            (dump / "manifest.tmp").write_text(json.dumps(manifest))
            os.replace(dump / "manifest.tmp", dump / "depyf_manifest.json")
        pages.append(html)
        return html

    monkeypatch.setattr(build, "render", render_meanwhile_rewritten)
    index = write_report(str(dump))
    assert len(pages) == 2
    assert "written by the last save" in open(index, encoding="utf-8").read()


@pytest.mark.parametrize("manifest", [None, '{"format": "depyf-manifest", "compilations": [1, 2]}', "{trunc"])
def test_a_dump_without_a_usable_manifest_still_shows_its_files(tmp_path, browser, manifest):
    dump = tmp_path / "dump"
    report_synthetic.make_dump(str(dump), functions=2, entries=2)
    os.unlink(dump / "depyf_manifest.json")
    if manifest is not None:
        (dump / "depyf_manifest.json").write_text(manifest)
    rb.open_report(browser, write_report(str(dump)))
    assert rb.wait_for(browser, "#count-graphs .num").text == "4"
    assert "no depyf_manifest.json this depyf can read" in rb.wait_for(browser, "main").text
    rb.follow(browser, rb.wait_for(browser, "nav.side a", "layer_1"))
    assert "__compiled_fn_3" in rb.wait_for(browser, ".entry a.graph-link").text


def test_cli_writes_the_report_and_rejects_a_missing_directory(tmp_path):
    dump = tmp_path / "dump"
    report_synthetic.make_dump(str(dump), functions=1, entries=1)
    env = dict(os.environ, PYTHONPATH=DEPYF_HOME + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cli = [sys.executable, "-m", "depyf", "report"]
    done = subprocess.run(cli + [str(dump)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert str(dump / "index.html") in done.stdout
    html = (dump / "index.html").read_text()
    assert '"name":"__compiled_fn_1"' in html
    missing = subprocess.run(cli + [str(tmp_path / "nowhere")], capture_output=True, text=True, env=env)
    assert missing.returncode == 2
    assert missing.stderr.strip() == "depyf: %s: not a directory" % (tmp_path / "nowhere")


@pytest.mark.parametrize("layout", ["empty", "other files", "empty rank directories"])
def test_cli_refuses_a_folder_with_no_dump_and_writes_nothing(tmp_path, layout):
    folder = tmp_path / "folder"
    folder.mkdir()
    if layout == "other files":
        (folder / "notes.py").write_text("x = 1\n")
        (folder / "index.html").write_text("<p>the user's own page</p>")
    elif layout == "empty rank directories":
        (folder / "rank_0").mkdir()
        (folder / "rank_1").mkdir()
    before = sorted((p.relative_to(folder), p.stat().st_mtime_ns) for p in folder.rglob("*"))
    env = dict(os.environ, PYTHONPATH=DEPYF_HOME + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-m", "depyf", "report", str(folder)], capture_output=True, text=True, env=env)
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("depyf: %s: not a depyf dump (no depyf_manifest.json" % folder), line
    assert sorted((p.relative_to(folder), p.stat().st_mtime_ns) for p in folder.rglob("*")) == before, "nothing written"


def test_file_texts_cannot_break_out_of_the_page(tmp_path, browser):
    """Dumped code is data: `</script>` or HTML in a file shows as text."""
    dump = tmp_path / "dump"
    report_synthetic.make_dump(str(dump), functions=1, entries=1)
    hostile = "x = '</script><script>window.pwned = 1</script><b>bold</b>'\n"
    (dump / "__compiled_fn_1.Captured_Graph.0.py").write_text(hostile)
    manifest = json.loads((dump / "depyf_manifest.json").read_text())
    manifest["functions"][0]["source"] = "def layer_0(x):  # </script><img src=x onerror=alert(1)>\n"
    (dump / "depyf_manifest.json").write_text(json.dumps(manifest))
    rb.open_report(browser, write_report(str(dump)), "#/0/graph/__compiled_fn_1")
    assert "</script><script>window.pwned = 1</script><b>bold</b>" in rb.wait_for(browser, "#stage-view").text
    assert browser.execute_script("return window.pwned === undefined")
    rb.open_report(browser, str(dump / "index.html"), "#/0/fn/f0")
    assert "<img src=x onerror=alert(1)>" in rb.wait_for(browser, ".entry .pane").text


def test_report_files_are_the_package_data(tmp_path):
    """The page needs no file outside depyf/report/assets (installed with the package)."""
    assets = os.path.join(os.path.dirname(os.path.abspath(depyf.__file__)), "report", "assets")
    assert sorted(os.listdir(assets)) == ["highlight.js", "report.css", "report.html", "report.js"]
    dump = tmp_path / "dump"
    report_synthetic.make_dump(str(dump), functions=1, entries=1)
    html = open(write_report(str(dump)), encoding="utf-8").read()
    for name in ("highlight.js", "report.css", "report.js"):
        with open(os.path.join(assets, name), encoding="utf-8") as f:
            assert f.read() in html, "%s is inlined" % name


def test_the_report_is_written_also_when_the_block_raises(tmp_path):
    dump = tmp_path / "dump"

    def fails(torch):
        torch.compile(lambda x: x * 3, backend="eager")(torch.ones(2))
        raise KeyError("the user's own error")

    with pytest.raises(KeyError, match="the user's own error"):
        _prepare_debug_with(dump, fails)
    assert '"graphs":[{"name":"__compiled_fn_' in (dump / "index.html").read_text()
