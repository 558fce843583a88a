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
    page = build.render(str(dump_dir))
    assert all("[pid %s] " % pid in page for pid in pids), "the report shows each process's work"


def test_three_processes_at_once_overwrite_nothing(tmp_path):
    dump, barrier = tmp_path / "dump", tmp_path / "barrier"
    barrier.mkdir()
    finish(*[start(dump, "graph_breaks", barrier, 3) for _ in range(3)])
    assert_every_process_kept_its_work(dump, 3)


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
    assert '"name":"graph_breaks"' not in build.render(str(dump)), "the report shows this run only"
