"""Every statement line of a dumped transformed-code file stops a debugger.

Under prepare_debug, the code that runs in place of Dynamo's is compiled from
the dumped file whenever its form was checked (the structured decompilation is
translation-validated; its simplified form is exact by construction): then
each statement line is in the line table of the code object that actually
runs.  Elsewhere (the state machine, constants with no literal form), Dynamo's
own bytecode runs and the file says so.
"""
import pytest

torch = pytest.importorskip("torch")

import dump_helpers as dh  # noqa: E402
import torch_workloads as wl  # noqa: E402
from depyf import _dump  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.mark.parametrize("name,backend", [
    ("toy", "eager"), ("toy_grad", "aot_eager"), ("graph_breaks", "eager"), ("loop_break", "eager"),
    ("module_break", "aot_eager"), ("recompiled", "eager"), ("gpt", "eager"), ("resnet", "aot_eager"),
    ("bert", "eager"),
    ("closure_break", "eager"), ("context_break", "eager"),
])
def test_every_statement_line_of_the_running_code_stops(name, backend, tmp_path):
    expected = dh.plain(wl.WORKLOADS[name], backend)
    results, _printed = dh.under_prepare_debug(wl.WORKLOADS[name], backend, tmp_path)
    dh.assert_identical(results, expected)
    records = [r for r in _dump.last_dir().transformed.values() if r.source is not None]
    assert records
    compiled = 0
    for record in records:
        with open(record.path) as f:
            text = f.read()
        running = record.code
        assert running.co_filename == record.path, "breakpoints in the file must resolve to the running code"
        if running.co_code == record.dynamo.co_code:  # Dynamo's own bytecode: the file must say so
            assert "What runs is Dynamo's bytecode itself" in text
            # (only where no checked form could run: the state machine)
            assert "equivalent state machine" in text, text
            continue
        compiled += 1
        lines = set(dh.statement_lines(record.path))
        stops = {line for _start, _end, line in running.co_lines()}
        assert lines <= stops, (record.path, sorted(lines - stops))
    assert compiled == len(records), "every transformed code runs from its file"
