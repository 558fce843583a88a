"""Round trip of real code: decompile every function of a stdlib corpus,
recompile the output and compare the two code objects on normalized bytecode.

    python -m tests.roundtrip [--modules json/decoder ...] [--show-failures N]

Each module runs in a worker subprocess that reports every function before and
after it is decompiled; a worker that stays silent past the time limit is
killed (the function counts as hung), one that dies counts its function as
crashed, and a fresh worker goes on with the next function.  So a hang or a
crash in the C core is reported, never freezes or kills the run.

Only the standard library is imported here: the benchmark also loads this
file into the original depyf's venv.
"""
import argparse
import ast
import bisect
import copy
import dis
import importlib
import json
import os
import select
import subprocess
import symtable
import sys
import sysconfig
import tempfile
import time
import __future__

CORPUS = [
    "json/decoder", "json/encoder", "argparse", "collections/__init__", "typing",
    "inspect", "dataclasses", "ast", "tarfile", "email/message", "email/utils",
    "http/client", "asyncio/base_events", "logging/__init__", "os", "difflib",
    "textwrap", "string", "heapq", "bisect", "functools", "contextlib", "shutil",
    "pathlib", "urllib/parse", "csv", "configparser", "fractions", "statistics", "enum",
]
# Held-out corpora, no fix made against them when each was first measured:
# `--corpus other` (2026-11-28), `--corpus third` (2026-11-29).
HELD_OUT = {
    "other": [
        "subprocess", "threading", "pickle", "pydoc", "smtplib", "imaplib", "optparse", "gettext", "locale",
        "calendar", "_pydecimal", "ftplib", "mailbox", "pprint", "random", "socket", "ssl", "tempfile", "trace",
        "uuid", "wave", "xml/dom/minidom", "xml/etree/ElementTree", "unittest/case", "urllib/request",
        "http/server", "concurrent/futures/_base", "codecs",
    ],
    "third": [
        "pdb", "dis", "tokenize", "traceback", "warnings", "weakref", "selectors", "sched", "shlex", "cmd", "copy",
        "doctest", "filecmp", "fileinput", "fnmatch", "getopt", "glob", "gzip", "ipaddress", "mimetypes",
        "modulefinder", "platform", "plistlib", "poplib", "queue", "socketserver", "symtable", "asyncio/tasks",
        "asyncio/streams", "email/_header_value_parser", "logging/handlers", "multiprocessing/pool",
        "importlib/_bootstrap_external", "html/parser",
    ],
}
# Where a module of the list became a package, the file that holds its code.
_MOVED = {"pathlib": "pathlib/_local"}

DEFAULT_DECOMPILER = "depyf:decompile"


def simplified(code):
    """depyf's simplified form (`--decompiler tests.roundtrip:simplified`)."""
    import depyf

    return depyf.decompile(code, simplify=True)
DEFAULT_TIMEOUT = 20.0  # seconds per function; generous for ASan builds
_STARTUP_TIMEOUT = 120.0  # worker: interpreter start, imports, compiling the module

_CO_OPTIMIZED = 0x1
_CO_NEWLOCALS = 0x2
_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag

# Carry no semantics: padding, prefixes and the interpreter's own markers.
_IGNORED_OPS = {"NOP", "CACHE", "EXTENDED_ARG", "RESUME"}
_JUMP_OPS = set(dis.hasjrel) | set(dis.hasjabs) | set(getattr(dis, "hasjump", ()))

OUTCOMES = ("identical", "different", "uncompilable", "raised", "hung", "crashed")


# --- the corpus -------------------------------------------------------------

def module_path(name, stdlib=None):
    """The source file of corpus module `name` in the running interpreter's stdlib."""
    stdlib = stdlib or sysconfig.get_paths()["stdlib"]
    path = os.path.join(stdlib, name + ".py")
    if not os.path.exists(path) and name in _MOVED:
        path = os.path.join(stdlib, _MOVED[name] + ".py")
    return path


def _is_code(obj):
    return hasattr(obj, "co_code")


def _is_function_code(code):
    return code.co_flags & (_CO_OPTIMIZED | _CO_NEWLOCALS) == (_CO_OPTIMIZED | _CO_NEWLOCALS)


def iter_functions(module_code, defs):
    """Yields (class_path, code) for every `def` at module level or in a class
    body, recursing through nested classes.  `defs` is `def_nodes()` of the
    module's source: code objects that come from no `def` (lambdas,
    comprehensions, 3.12's `type X = ...`) are left out; inside functions
    they are compared as nested code."""
    def walk(code, class_path):
        for const in code.co_consts:
            if not _is_code(const) or const.co_name.startswith("<"):
                continue
            if not _is_function_code(const):
                yield from walk(const, class_path + (const.co_name,))
            elif (const.co_name, const.co_firstlineno) in defs:
                yield class_path, const
    return list(walk(module_code, ()))


def qualname_of(class_path, code):
    return ".".join(class_path + (code.co_name,))


# --- compiling in the original's context -------------------------------------

class Context:
    """What a function's bytecode depends on beyond its own `def`: the classes
    around it (private-name mangling, `__class__` cells, qualnames), the
    module's `from __future__` flags, and which module-level names are bound by
    an import (CPython 3.11+ compiles `mod.f()` differently for those)."""

    def __init__(self, class_path=(), imported=(), future_flags=0):
        self.class_path = tuple(class_path)
        self.imported = tuple(imported)
        self.future_flags = future_flags


def module_context(source, path, module_code):
    """The module-level part of the Context of every function in a module."""
    table = symtable.symtable(source, path, "exec")
    imported = sorted(s.get_name() for s in table.get_symbols() if s.is_imported())
    return imported, module_code.co_flags & _FUTURE_FLAGS


def _flatten_locations(tree):
    # CPython 3.11+ lays out some jumps and exits by line number; on one line
    # the bytecode depends on the code's structure alone.
    for node in ast.walk(tree):
        if "lineno" in node._attributes:
            node.lineno = node.end_lineno = 1
            node.col_offset = node.end_col_offset = 0
    return tree


def compile_in_context(statements, context):
    """Compiles `statements` (AST nodes) inside `class A:` / `class B:` ... as
    named by `context.class_path`, after imports of `context.imported`, with
    every location on line 1.  Works on the AST, not on text, so that
    indenting never changes a multi-line string constant."""
    depth = len(context.class_path)
    skeleton = "".join(" " * i + "class %s:\n" % name for i, name in enumerate(context.class_path))
    tree = ast.parse(skeleton + " " * depth + "pass\n")
    holder = tree
    for _ in context.class_path:
        holder = holder.body[0]
    holder.body = list(statements) or holder.body
    if context.imported:
        tree.body.insert(0, ast.parse("import " + ", ".join(context.imported)).body[0])
    _flatten_locations(tree)
    return compile(tree, "<decompiled>", "exec", flags=context.future_flags, dont_inherit=True)


def find_function(module_code, class_path, name):
    """The code object of function `name` inside the classes of `class_path`."""
    code = module_code
    for cls in class_path:
        code = next((c for c in code.co_consts
                     if _is_code(c) and not _is_function_code(c) and c.co_name == cls), None)
        if code is None:
            return None
    return next((c for c in code.co_consts
                 if _is_code(c) and _is_function_code(c) and c.co_name == name), None)


def _first_line(node):
    # Since 3.8 a decorated function's code starts at its first decorator.
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


def def_nodes(tree):
    """{(name, first line): the `def` node} of every function in `tree`."""
    return {(n.name, _first_line(n)): n for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


# --- comparing code objects ---------------------------------------------------

def const_key(value):
    """A comparable key: equal keys mean equal constants of equal types.
    Floats go by repr so that -0.0 != 0.0 and nan == nan; code objects by
    name (their bodies are compared recursively by `compare_code`)."""
    if _is_code(value):
        return ("code", value.co_name)
    if isinstance(value, (float, complex)):
        return (type(value).__name__, repr(value))
    if isinstance(value, tuple):
        return ("tuple", tuple(const_key(v) for v in value))
    if isinstance(value, frozenset):
        return ("frozenset", tuple(sorted((const_key(v) for v in value), key=repr)))
    return (type(value).__name__, value)


def _index_of(offsets, offset):
    """Instruction index of a jump target: the first kept instruction at or
    after `offset` (a target may be a dropped NOP or EXTENDED_ARG)."""
    return bisect.bisect_left(offsets, offset)


def normalized_instructions(code):
    """[(opname, arg, argval key)] without the ignored opcodes, with jump
    targets as indices into this list."""
    kept = [i for i in dis.get_instructions(code) if i.opname not in _IGNORED_OPS]
    offsets = [i.offset for i in kept]
    out = []
    for ins in kept:
        if ins.opcode in _JUMP_OPS:
            out.append((ins.opname, "->", _index_of(offsets, ins.argval)))
        else:
            out.append((ins.opname, ins.arg, const_key(ins.argval)))
    return out, offsets


def normalized_exception_table(code, offsets):
    """3.11+: the exception table with offsets turned into instruction indices
    and neighbouring entries with the same handler merged."""
    if not hasattr(code, "co_exceptiontable"):
        return []
    rows = []
    for e in dis._parse_exception_table(code):
        row = [_index_of(offsets, e.start), _index_of(offsets, e.end),
               _index_of(offsets, e.target), e.depth, e.lasti]
        if row[0] == row[1]:
            continue
        if rows and rows[-1][1] == row[0] and rows[-1][2:] == row[2:]:
            rows[-1][1] = row[1]
        else:
            rows.append(row)
    return [tuple(r) for r in rows]


_COMPARED_ATTRS = ("co_name", "co_qualname", "co_argcount", "co_posonlyargcount",
                   "co_kwonlyargcount", "co_flags", "co_varnames", "co_cellvars",
                   "co_freevars", "co_names")


def _show(ins):
    if ins is None:
        return "(end of code)"
    opname, arg, val = ins
    if arg == "->":
        return "%s -> #%d" % (opname, val)
    return "%s %s (%r)" % (opname, arg, val[1] if len(val) == 2 else val)


def _first_difference(want_ins, got_ins):
    """Index of the first differing instruction, or None.  Operations are
    compared before jump targets: a target differs because of a difference
    further on, and that is the one worth showing."""
    def untargeted(ins):
        return [i[:2] if i[1] == "->" else i for i in ins]
    for a, b in ((untargeted(want_ins), untargeted(got_ins)), (want_ins, got_ins)):
        for n in range(max(len(a), len(b))):
            if n >= len(a) or n >= len(b) or a[n] != b[n]:
                return n
    return None


def compare_code(want, got, where=None):
    """None when `got` matches `want`, else a description of the first
    difference (recursing into nested code objects)."""
    where = where or getattr(want, "co_qualname", want.co_name)
    for attr in _COMPARED_ATTRS:
        a, b = getattr(want, attr, None), getattr(got, attr, None)
        if a != b:
            return "%s: %s differs: %r != %r" % (where, attr, a, b)
    want_ins, want_offsets = normalized_instructions(want)
    got_ins, got_offsets = normalized_instructions(got)
    n = _first_difference(want_ins, got_ins)
    if n is not None:
        a = want_ins[n] if n < len(want_ins) else None
        b = got_ins[n] if n < len(got_ins) else None
        return "%s: instruction #%d: want %s, got %s" % (where, n, _show(a), _show(b))
    want_consts = [const_key(c) for c in want.co_consts]
    got_consts = [const_key(c) for c in got.co_consts]
    if want_consts != got_consts:
        return "%s: co_consts differ: %r != %r" % (where, want.co_consts, got.co_consts)
    want_table = normalized_exception_table(want, want_offsets)
    got_table = normalized_exception_table(got, got_offsets)
    if want_table != got_table:
        return "%s: exception table (start, end, target, depth, lasti) differs: %r != %r" % (
            where, want_table, got_table)
    for a, b in zip(want.co_consts, got.co_consts):
        if _is_code(a):
            diff = compare_code(a, b, where + "." + a.co_name)
            if diff:
                return diff
    return None


def roundtrip_one(decompile, code, reference, context):
    """(outcome, detail) for one function: identical / different /
    uncompilable / raised.  `code` is what the decompiler gets; `reference`
    is the function's real source compiled by `compile_in_context`, which
    its decompiled output must match."""
    try:
        source = decompile(code)
        if not isinstance(source, str):
            raise TypeError("the decompiler returned %s, not str" % type(source).__name__)
    except Exception as e:  # the decompiler's failure is the result
        return "raised", "%s: %s" % (type(e).__name__, e)
    try:
        module_code = compile_in_context(ast.parse(source, "<decompiled>").body, context)
    except Exception as e:  # SyntaxError, or one found by the compiler
        return "uncompilable", "%s: %s" % (type(e).__name__, e)
    new = find_function(module_code, context.class_path, code.co_name)
    if new is None:
        return "different", "the output defines no function %r" % code.co_name
    diff = compare_code(reference, new)
    return ("different", diff) if diff else ("identical", "")


def load_callable(spec):
    """`module:attr` -> the object (the decompiler under test)."""
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


# --- worker: one module, one JSON line per event --------------------------------

def prepare_module(path):
    """[(class_path, code, reference, context)] for every function of the
    module at `path`: the code object the decompiler gets, and the reference
    its output must match (see `roundtrip_one`)."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    module_code = compile(source, path, "exec", dont_inherit=True)
    imported, future_flags = module_context(source, path, module_code)
    nodes = def_nodes(ast.parse(source, path))
    prepared = []
    for class_path, code in iter_functions(module_code, nodes):
        context = Context(class_path, imported, future_flags)
        node = copy.deepcopy(nodes[code.co_name, code.co_firstlineno])
        reference = find_function(compile_in_context([node], context), class_path, code.co_name)
        prepared.append((class_path, code, reference, context))
    return prepared


def worker(path, decompiler_spec, skip):
    # The protocol gets its own copy of stdout; whatever the decompiler
    # prints goes to stderr and cannot corrupt it.
    channel = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    def emit(obj):
        channel.write(json.dumps(obj) + "\n")
        channel.flush()

    prepared = prepare_module(path)
    decompile = load_callable(decompiler_spec)
    for n, (class_path, code, reference, context) in enumerate(prepared):
        if n < skip:
            continue
        emit({"start": n, "qualname": qualname_of(class_path, code)})
        outcome, detail = roundtrip_one(decompile, code, reference, context)
        emit({"done": n, "outcome": outcome, "detail": detail})
    emit({"end": len(prepared)})


# --- parent: supervising workers ---------------------------------------------

class ModuleReport:
    def __init__(self, name):
        self.name = name
        self.results = []  # (qualname, outcome, detail), in corpus order

    def count(self, outcome):
        return sum(1 for r in self.results if r[1] == outcome)

    @property
    def total(self):
        return len(self.results)

    @property
    def compiled(self):
        return self.count("identical") + self.count("different")


def _worker_env():
    # The worker must import the same depyf (and fakes) as this process.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in sys.path)  # '' is the cwd
    return env


class _Lines:
    """Lines of a worker's stdout with a time limit per line.  Reads the raw
    pipe: a buffered file object could hold a line that select() cannot see."""

    def __init__(self, proc):
        self.fd, self.buf = proc.stdout.fileno(), b""

    def next(self, timeout):
        """The next line, '' at end of output, None when silent past `timeout`."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return ""
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode("utf-8")


def _stop(proc):
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    proc.stdout.close()


def run_module(name, decompiler_spec=DEFAULT_DECOMPILER, timeout=DEFAULT_TIMEOUT):
    """Round-trips every function of corpus module `name` in worker processes."""
    report = ModuleReport(name)
    path = module_path(name)
    next_fn = 0
    while True:
        with tempfile.TemporaryFile(mode="w+") as errors:
            proc = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--worker", path,
                 "--decompiler", decompiler_spec, "--skip", str(next_fn)],
                stdout=subprocess.PIPE, stderr=errors, env=_worker_env())
            lines = _Lines(proc)
            current, limit, finished = None, _STARTUP_TIMEOUT, False
            try:
                while True:
                    line = lines.next(limit)
                    if line is None:  # silent past the limit
                        if current is None:  # our own work, between functions
                            raise RuntimeError("round-trip worker for %s stopped answering" % name)
                        report.results.append((current, "hung", "no result after %gs" % timeout))
                        break
                    if not line:  # died
                        proc.wait()
                        errors.seek(0)
                        tail = errors.read()[-2000:]
                        if current is None:
                            raise RuntimeError("round-trip worker for %s failed:\n%s" % (name, tail))
                        report.results.append(
                            (current, "crashed", "exit status %s; %s" % (proc.returncode, tail.strip())))
                        break
                    event = json.loads(line)
                    if "start" in event:
                        current, limit = event["qualname"], timeout
                    elif "done" in event:
                        report.results.append((current, event["outcome"], event["detail"]))
                        current, limit = None, timeout
                    elif "end" in event:
                        finished = True
                        break
            finally:
                _stop(proc)
        if finished:
            return report
        next_fn = len(report.results)


def run_corpus(modules=CORPUS, decompiler_spec=DEFAULT_DECOMPILER, timeout=DEFAULT_TIMEOUT):
    """One ModuleReport per module, in order."""
    return [run_module(name, decompiler_spec, timeout) for name in modules]


# --- reporting ------------------------------------------------------------------

def _pct(part, whole):
    return 100.0 * part / whole if whole else 100.0


def totals(reports):
    """{'total', 'compiled', and one count per outcome} over all modules."""
    out = {"total": sum(r.total for r in reports), "compiled": sum(r.compiled for r in reports)}
    for outcome in OUTCOMES:
        out[outcome] = sum(r.count(outcome) for r in reports)
    return out


def identical_percent(reports):
    t = totals(reports)
    return _pct(t["identical"], t["total"])


_ROW = "%-22s %6s %10s %9s %7s %5s %8s"


def format_row(name, total, identical, compiled, raised, hung, crashed):
    return _ROW % (name, total, "%.1f%%" % _pct(identical, total), "%.1f%%" % _pct(compiled, total),
                   raised, hung, crashed)


def format_table(reports):
    lines = [_ROW % ("module", "funcs", "identical", "compile", "raised", "hung", "crashed")]
    for r in reports:
        lines.append(format_row(r.name, r.total, r.count("identical"), r.compiled,
                                r.count("raised"), r.count("hung"), r.count("crashed")))
    t = totals(reports)
    lines.append(format_row("TOTAL", t["total"], t["identical"], t["compiled"],
                            t["raised"], t["hung"], t["crashed"]))
    return "\n".join(lines)


def failures(reports):
    """[(module, qualname, outcome, detail)] for every non-identical function."""
    return [(r.name, q, o, d) for r in reports for (q, o, d) in r.results if o != "identical"]


def format_failures(reports, limit):
    rows = failures(reports)
    lines = ["%s %s [%s]\n    %s" % (m, q, o, d.replace("\n", "\n    ")) for m, q, o, d in rows[:limit]]
    if len(rows) > limit:
        lines.append("... and %d more" % (len(rows) - limit))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.roundtrip", description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", nargs="+", default=None, metavar="MODULE",
                    help="corpus modules, as paths below the stdlib without .py (default: the 30 of CORPUS)")
    ap.add_argument("--corpus", choices=sorted(HELD_OUT), help="a held-out corpus instead (HELD_OUT)")
    ap.add_argument("--show-failures", type=int, default=0, metavar="N",
                    help="print the first difference of the first N failing functions")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                    help="seconds one function may take before it counts as hung")
    ap.add_argument("--decompiler", default=DEFAULT_DECOMPILER, metavar="MODULE:FUNCTION",
                    help="the decompiler under test (default: %(default)s)")
    ap.add_argument("--worker", metavar="PATH", help=argparse.SUPPRESS)
    ap.add_argument("--skip", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.decompiler, args.skip)
        return 0
    started = time.monotonic()
    modules = args.modules or (HELD_OUT[args.corpus] if args.corpus else CORPUS)
    reports = run_corpus(modules, args.decompiler, args.timeout)
    print("Python %d.%d, decompiler %s, %.1fs" % (sys.version_info[0], sys.version_info[1],
                                                  args.decompiler, time.monotonic() - started))
    print(format_table(reports))
    if args.show_failures:
        print()
        print(format_failures(reports, args.show_failures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
