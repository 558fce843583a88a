"""Running workloads plain, compiled and under prepare_debug, and reading a dump."""

import ast
import contextlib
import io
import json
import os
import re

import torch

import depyf


def compiler(backend, **options):
    return lambda fn: torch.compile(fn, backend=backend, **options)


def eager(workload):
    torch._dynamo.reset()
    return workload(lambda fn: fn)


def plain(workload, backend, **options):
    torch._dynamo.reset()
    return workload(compiler(backend, **options))


def under_prepare_debug(workload, backend, dump_dir, **options):
    """(results, what prepare_debug printed) for `workload` compiled inside prepare_debug."""
    torch._dynamo.reset()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        with depyf.prepare_debug(str(dump_dir)):
            results = workload(compiler(backend, **options))
    return results, err.getvalue()


def assert_identical(got, expected):
    """The program computed exactly the same tensors."""
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert torch.equal(g, e), (g, e)


def assert_close(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-5)


REPORT_FILES = ("index.html", "depyf_manifest.json")  # depyf report's page and what it reads


def files(dump_dir):
    """The dumped files (the report's own files and depyf's `.depyf/` bookkeeping left out)."""
    return sorted(n for n in os.listdir(dump_dir) if n not in REPORT_FILES and not n.startswith("."))


def report_data(dump_dir):
    """What the report page of the dump shows (the JSON the page renders)."""
    from depyf.report import build

    page = build.render(str(dump_dir))
    return json.loads(re.search(r'<script type="application/json" id="depyf-data">(.*?)</script>', page, re.S).group(1))


def read(dump_dir, name):
    with open(os.path.join(dump_dir, name), encoding="utf-8") as f:
        return f.read()


def compiled_fns_called(text):
    """The `__compiled_fn_<n>` numbers a (decompiled or disassembled) text calls."""
    # (torch >= 2.8 appends a uuid to the global's name: `__compiled_fn_1_<uuid>`)
    return sorted(set(re.findall(r"(__compiled_fn_\d+)(?:_[0-9a-f]{8}_|\b)", text)))


def stage_files(dump_dir, compiled_fn):
    """{stage: [files]} of one compiled fn's graph and kernel files."""
    stages = {}
    for name in files(dump_dir):
        match = re.match(re.escape(compiled_fn) + r"\.(?:(kernel)_\d+|(\w+)\.\d+)\.py$", name)
        if match:
            stages.setdefault(match.group(1) or match.group(2), []).append(name)
    return stages


def assert_every_file_compiles(dump_dir):
    for name in files(dump_dir):
        compile(read(dump_dir, name), os.path.join(dump_dir, name), "exec", dont_inherit=True)


def running_statements(fn):
    """The statements of def `fn` that run code: not fn itself, its docstring, nor what an
    `if False:` holds (the decompiler's way to keep a free variable; it compiles to nothing)."""
    first = fn.body[0]
    docstring = first if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                          and isinstance(first.value.value, str)) else None
    dead = {id(n) for stmt in ast.walk(fn) if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Constant)
            and stmt.test.value is False for n in ast.walk(stmt)}
    return [n for n in ast.walk(fn) if isinstance(n, ast.stmt) and n not in (fn, docstring) and id(n) not in dead]


def top_level_statement_lines(path):
    """Sorted line numbers of the running statements directly in the body of the def a dumped
    file starts with (not those inside its branches)."""
    with open(path) as f:
        fn = ast.parse(f.read()).body[0]
    running = {id(n) for n in running_statements(fn)}
    return sorted({n.lineno for n in fn.body if id(n) in running})


def statement_lines(path):
    """Sorted line numbers of the running statements of the def a dumped file starts with."""
    with open(path) as f:
        fn = ast.parse(f.read()).body[0]
    return sorted({n.lineno for n in running_statements(fn)})
