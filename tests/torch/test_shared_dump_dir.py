"""Several processes, one dump directory; and a rerun into a used one.

Processes that dump into one directory at once (or the children of one
multiprocessing parent) number their files apart: nothing is overwritten, and
the manifest the report reads covers every process.  A later run removes the
files the last run wrote, and only those.
"""
import json
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch")

import dump_helpers as dh  # noqa: E402
import report_browser as rb  # noqa: E402
from depyf.report import build  # noqa: E402

pytestmark = pytest.mark.torch

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dump_program.py")


def start(*args):
    return subprocess.Popen([sys.executable, PROGRAM] + [str(a) for a in args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def finish(*procs):
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err[-3000:]


def manifest(dump_dir):
    with open(os.path.join(dump_dir, build.MANIFEST), encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def three_at_once(tmp_path_factory):
    """Three processes that compiled the same program into one directory at the same time."""
    root = tmp_path_factory.mktemp("three")
    dump, barrier = root / "dump", root / "barrier"
    barrier.mkdir()
    finish(*[start(dump, "graph_breaks", barrier, 3) for _ in range(3)])
    return dump


def assert_every_process_kept_its_work(dump_dir, processes):
    data = manifest(dump_dir)
    pids = [p["pid"] for p in data["processes"]]
    assert len(pids) == processes, pids
    names = dh.files(dump_dir)
    assert sorted(data["files"]) == sorted(names + [build.MANIFEST]), "every file is listed, no other"
    dh.assert_every_file_compiles(dump_dir)
    full = [n for n in names if n.startswith("full_code_for_graph_breaks_")]
    assert len(full) == processes, names
    transformed = [n for n in names if n.startswith("__transformed_code_")]
    assert transformed and len(transformed) % processes == 0, transformed
    for pid in pids:  # each process's compilations, each with the transformed file it wrote
        mine = [c for c in data["compilations"] if c["pid"] == pid and c["transformed"]]
        assert mine and all(c["compile_id"].startswith("[pid %s] " % pid) for c in mine), mine
        assert all(c["transformed"] in names for c in mine)
    files_of = [set(c["transformed"] for c in data["compilations"] if c["pid"] == pid) for pid in pids]
    assert not set.intersection(*files_of), "no file is any two processes'"
    assert [fn["pid"] for fn in data["functions"] if fn["name"] == "graph_breaks"] == pids
    runs = dh.report_data(dump_dir)["runs"]
    assert [run["label"] for run in runs] == ["process %s" % pid for pid in pids], "the report shows each process's work"
    for pid, run in zip(pids, runs):
        own = {f for g in data["graphs"] if g["pid"] == pid for f in g["files"]}
        assert {s["file"] for g in run["graphs"] for s in g["stages"]} == own, "its graphs, of its own files"
        assert [c["compile_id"] for fn in run["functions"] for c in fn["compilations"]][0] == "0/0"


def test_three_processes_at_once_overwrite_nothing(three_at_once):
    assert_every_process_kept_its_work(three_at_once, 3)


def test_the_report_shows_each_process_apart(three_at_once, browser):
    """The page the last process wrote: one tab per process; its graph __compiled_fn_<n>
    (each process has one by that name) shows that process's files only."""
    data = manifest(three_at_once)
    pids = [p["pid"] for p in data["processes"]]
    rb.open_report(browser, three_at_once / build.INDEX)
    assert [t.text for t in browser.find_elements("css selector", "#ranks button")] == ["process %s" % p for p in pids]
    rows = rb.wait_for(browser, "#runs-card", "3 processes").find_elements("css selector", "tr[data-run]")
    assert len({tuple(r.text.split()[2:]) for r in rows}) == 1, "the same program: the same counts in each"
    first = [c for c in data["compilations"] if c["function"]["name"] == "graph_breaks"]
    for i, pid in enumerate(pids):
        (mine,) = [c for c in first if c["pid"] == pid]
        graph = mine["graphs"][0]
        (files,) = [g["files"] for g in data["graphs"] if g["pid"] == pid and g["name"] == graph]
        (captured,) = [f for f in files if ".Captured_Graph." in f]
        rb.open_report(browser, three_at_once / build.INDEX, "#/%d/fn/f0" % i)
        rb.wait_for(browser, "main h1", "graph_breaks")
        entry = rb.wait_for(browser, ".entry", "compile id 0/0")
        assert mine["transformed"] in entry.find_element("css selector", ".split").text
        rb.follow(browser, entry.find_element("css selector", "a.graph-link"))
        rb.wait_for(browser, "main h1", graph)
        steps = [s.get_attribute("data-stage") for s in browser.find_elements("css selector", "#pipeline .step")]
        assert steps.count("Captured_Graph") == 1, steps
        assert captured in rb.wait_for(browser, "#stage-view .ptitle").text
        assert dh.read(three_at_once, captured).splitlines()[0] in rb.wait_for(browser, "#stage-view").text
    rb.screenshot(browser, "report_three_processes")
    assert rb.console_errors(browser) == []


def test_children_of_one_multiprocessing_parent_are_one_run(tmp_path):
    dump = tmp_path / "dump"
    finish(start(dump, "graph_breaks", "--children", 3))  # each child ends before the next starts
    assert_every_process_kept_its_work(dump, 3)


def test_a_rerun_removes_the_last_runs_files_and_no_other(tmp_path):
    dump = tmp_path / "dump"
    finish(start(dump, "graph_breaks"))
    first = set(dh.files(dump))
    assert any(re.match(r"__transformed_code_\d+_for_torch_dynamo_resume_in_graph_breaks", n) for n in first)
    foreign = {"notes.txt": "mine\n", "__transformed_code_0_for_toy_example.py": "# my own file, same pattern\n"}
    for name, text in foreign.items():
        (dump / name).write_text(text)

    finish(start(dump, "toy"))
    names = set(dh.files(dump))
    assert not names & first, "nothing of the last run is left"
    for name, text in foreign.items():
        assert (dump / name).read_text() == text, "a file depyf did not write is kept as it was"
    assert "__transformed_code_1_for_toy_example.py" in names, "numbered past the file that was there"
    assert not [c for c in manifest(dump)["compilations"] if (c["function"] or {}).get("name") == "graph_breaks"]
    (run,) = dh.report_data(dump)["runs"]
    assert [fn["name"] for fn in run["functions"] if not fn["resume"]] == ["toy_example"], "this run only"
    assert sorted(f["name"] for f in run["files"]) == sorted(set(manifest(dump)["files"]) - {build.MANIFEST})
    assert run["counts"]["files"] == len(run["files"])


def test_the_report_leaves_out_files_depyf_did_not_write_in_its_last_run(tmp_path, browser):
    dump = tmp_path / "dump"
    finish(start(dump, "graph_breaks"))
    stale = [n for n in dh.files(dump) if n.startswith("__compiled_fn_")][0]
    # (as if an older depyf had written them: no list of them, so the rerun leaves them all)
    os.unlink(dump / ".depyf" / [n for n in os.listdir(dump / ".depyf") if n.endswith(".files")][0])
    (dump / "notes.txt").write_text("the user's own notes\n")  # (and `stale`: depyf no longer lists it)
    finish(start(dump, "toy"))
    assert (dump / stale).is_file() and stale not in manifest(dump)["files"]
    rb.open_report(browser, dump / build.INDEX, "#/0/files")
    shown = rb.wait_for(browser, "main .card", "All files").text
    assert "notes.txt" not in shown and stale not in shown
    assert "__transformed_code_0_for_toy_example.py" in shown
    graphs = {n.split(".")[0] for n in manifest(dump)["files"] if n.startswith("__compiled_fn_")}
    assert int(rb.wait_for(browser, "#count-graphs .num").text) == len(graphs)
