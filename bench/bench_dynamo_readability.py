"""How readable and how steppable the dumped transformed code is.

    PYTHONSAFEPATH=1 .venv/bin/python bench/bench_dynamo_readability.py [--backend inductor]

Runs every workload of tests/torch/torch_workloads.py (toy examples, graph
breaks, closures, context managers, loops, modules, recompilations, an MLP, a
transformer layer, a small GPT) under `depyf.prepare_debug`, and for every
transformed code object Dynamo made compares:

- before: the exact decompilation of Dynamo's bytecode (`depyf.decompile`);
- after: what the dump file holds.

Per workload: statements and distinct invented names (`__temp_<n>`, `tmp_<n>`,
and the state machine's `__t<n>`/`__state`) before and after, and the share of
the dump files' statement lines that are in the line table of the code that
actually runs (a breakpoint on such a line stops).  Not a test: it asserts
nothing.
"""
import argparse
import ast
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "torch"))

import torch  # noqa: E402

import depyf  # noqa: E402
from depyf import _dump  # noqa: E402
import dump_helpers  # noqa: E402
import torch_workloads  # noqa: E402

INVENTED = re.compile(r"(__temp_\d+|tmp_\d+|__t\d+|__state)$")


def function_of(text):
    """The first top-level def of `text` (a decompiled or dumped file)."""
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node
    return None


def measure(text):
    """(statements, set of invented names, statement line numbers) of the def in `text`."""
    fn = function_of(text)
    if fn is None:
        return 0, set(), set()
    statements = dump_helpers.running_statements(fn)
    names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and INVENTED.match(n.id)}
    return len(statements), names, {n.lineno for n in statements}


def run_workload(name, backend):
    torch._dynamo.reset()
    dump = tempfile.mkdtemp(prefix="depyf-readability-")
    with depyf.prepare_debug(dump, report=False):
        torch_workloads.WORKLOADS[name](lambda f: torch.compile(f, backend=backend))
    dd = _dump.last_dir()
    row = dict(codes=0, before=0, after=0, names_before=0, names_after=0, lines=0, stopping=0, compiled=0)
    for record in dd.transformed.values():
        if record.source is None:
            continue
        row["codes"] += 1
        before, names_before, _ = measure(depyf.decompile(record.dynamo))
        with open(record.path) as f:
            after, names_after, lines = measure(f.read())
        running = record.code
        steps = {line for _start, _end, line in running.co_lines()} if running.co_filename == record.path else set()
        row["before"] += before
        row["after"] += after
        row["names_before"] += len(names_before)
        row["names_after"] += len(names_after)
        row["lines"] += len(lines)
        row["stopping"] += len(lines & steps)
        row["compiled"] += record.code.co_code != record.dynamo.co_code  # not Dynamo's instructions
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="eager")
    args = parser.parse_args()
    print("torch %s, Python %s, backend %s" % (torch.__version__, sys.version.split()[0], args.backend))
    header = "%-20s %5s %13s %17s %15s %8s" % ("workload", "codes", "statements", "invented names",
                                                "lines stopping", "compiled")
    print(header)
    total = dict(codes=0, before=0, after=0, names_before=0, names_after=0, lines=0, stopping=0, compiled=0)
    for name in sorted(torch_workloads.WORKLOADS):
        row = run_workload(name, args.backend)
        for key in total:
            total[key] += row[key]
        print("%-20s %5d %6d -> %4d %8d -> %4d %8d/%-6d %8d" % (
            name, row["codes"], row["before"], row["after"], row["names_before"], row["names_after"],
            row["stopping"], row["lines"], row["compiled"]))
    print("%-20s %5d %6d -> %4d %8d -> %4d %8d/%-6d %8d" % (
        "total", total["codes"], total["before"], total["after"], total["names_before"], total["names_after"],
        total["stopping"], total["lines"], total["compiled"]))
    print("statements: %.0f%% fewer; invented names: %.0f%% fewer; statement lines that stop: %.1f%%; "
          "transformed codes running from their file's compiled code: %d of %d" % (
              100.0 * (1 - total["after"] / max(total["before"], 1)),
              100.0 * (1 - total["names_after"] / max(total["names_before"], 1)),
              100.0 * total["stopping"] / max(total["lines"], 1), total["compiled"], total["codes"]))


if __name__ == "__main__":
    main()
