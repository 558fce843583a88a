"""The dump session behind prepare_debug and debug.

While a session is active, depyf listens to torch.compile and writes, into one
directory per process (rank_<r> under torchrun):

- `__transformed_code_<n>_for_<fn>.py`: Dynamo's transformed bytecode,
  decompiled, simplified where that is exact (depyf._simplify), its `def` on
  line 1.  When the file's form was checked, the bytecode hook hands Dynamo
  that form compiled from the file (same frame layout; depyf._recompile), so
  a debugger stops on every line and sees every name; otherwise Dynamo's own
  code object with `co_filename` set to the file and the line table rebuilt
  from the decompiler's offset -> line map (docs/readable-dynamo.md).
- `__compiled_fn_<n>.<Stage>.<k>.py`: every FX graph torch logs while compiling
  (Dynamo's captured graph, AOTAutograd's joint/forward/backward graphs,
  Inductor's pre/post grad graphs).  Each graph's forward is then executed from
  that file (same source), so breakpoints in it hit.
- `__compiled_fn_<n>.kernel_<k>.py`: Inductor's generated module, loaded from
  that file.
- at exit, `full_code_for_<fn>_<k>.py` for every function Dynamo compiled (see
  depyf.explain), and a short summary.

Nothing here may break the user's program: a failed decompilation leaves a
comment and the disassembly in the file and one warning; a failing hook is
logged once and torch goes on as without depyf.
"""

import contextlib
import logging
import os
import re
import sys
import tempfile
import threading
import weakref

from depyf import _decompiled, _linetable, _recompile
from depyf import _torch_internals as _ti
from depyf import explain
from depyf.report import record as _record

log = logging.getLogger("depyf")

_CAPTURED = re.compile(r"(__compiled_fn_\d+)(?:_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12})?$")
_COMPILED_FN_IN_TEXT = re.compile(r"(__compiled_fn_\d+)(?:_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12})?")

_lock = threading.RLock()
_dirs = {}  # real path -> DumpDir: numbering carries on when a directory is reused
_active = [None]  # the Session currently active, if any
_last_dir = [None]  # the DumpDir of the most recent prepare_debug, for debug()


def write_atomic(path, text):
    """Write `text` to `path` so that readers never see half a file."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".depyf-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class Transformed:
    """One transformed code object we saw: its number, file, and what runs.

    `dynamo`: Dynamo's code object; `code`: what runs in its place (the same,
    Dynamo's own pointed at the file, or the file's code compiled)."""

    def __init__(self, n, original, code, path, source, error, bridged, dynamo=None):
        self.n, self.original, self.code, self.path = n, original, code, path
        self.source, self.error, self.bridged = source, error, bridged
        self.dynamo = dynamo if dynamo is not None else code


class DumpDir:
    """Naming state of one dump directory within this process."""

    def __init__(self, path):
        self.path = path
        self.counts = {}
        self.transformed = {}  # id(code in the cache entry) -> Transformed
        self.full_code = {}  # id(original code) -> (file name, original code)
        self.graph_files = {}  # "__compiled_fn_<n>" -> [file names]
        self.compile_ids = {}  # Dynamo compile id -> "__compiled_fn_<n>"
        self.last_compiled_fn = None
        self.graph_texts = {}  # graph file name -> (title, body, gm.code) it holds now
        self.graph_by_code = {}  # FX code -> the graph file holding it
        self.graph_inputs = {}  # "__compiled_fn_<n>_<uuid>" -> its captured graph's input names
        self.bound_graphs = weakref.WeakKeyDictionary()  # GraphModule -> graph file it runs from
        self.recorder = _record.Recorder(self)  # depyf_manifest.json, read by `depyf report`

    def number(self, key):
        n = self.counts.get(key, 0)
        self.counts[key] = n + 1
        return n

    def write(self, filename, text):
        path = os.path.join(self.path, filename)
        write_atomic(path, text)
        return path


def dump_dir(path):
    """The DumpDir for `path` (made once per process), under rank_<r> when distributed."""
    rank = _ti.process_rank()
    if rank is not None:
        path = os.path.join(path, "rank_%d" % rank)
    os.makedirs(path, exist_ok=True)
    real = os.path.realpath(path)
    with _lock:
        if real not in _dirs:
            _dirs[real] = DumpDir(real)
        return _dirs[real]


def _header(*lines):
    return "".join("# %s\n" % line for line in lines)


_SIMPLIFIED = ("Simplified: values Dynamo moves through the stack and through lists it builds",
               "and takes apart are shown where they are used. This code, compiled, runs in",
               "place of Dynamo's bytecode (same operations on the same values; see",
               "depyf/_simplify.py), so every line here stops a debugger.")
_EXACT_COMPILED = ("Checked equivalent to Dynamo's bytecode (depyf's translation validation), this",
                   "code, compiled, runs in its place, so every line here stops a debugger.")
_SIMPLIFIED_READ = ("Simplified: values Dynamo moves through the stack and through lists it builds",
                    "and takes apart are shown where they are used.",
                    "What runs is Dynamo's bytecode itself (this form could not be compiled to run",
                    "in its place); its line numbers point at this file, so breakpoints set on the",
                    "lines it maps to are hit (see depyf.debug).")
_EXACT = ("What runs is Dynamo's bytecode itself; its line numbers point at this file,",
          "so breakpoints set on the lines it maps to are hit (see depyf.debug).")


def _trailer(original, lines):
    """The comment at the end of a transformed-code file (at the end: the def stays line 1)."""
    return "\n\n" + _header("Dynamo's transformed code for %s, decompiled by depyf." % original.co_name, *lines)


# Written when a feature is off because this torch lacks what it needs.
_UNAVAILABLE_FILE = "depyf_unavailable.txt"

_RUNS_HERE = _header("Whenever this graph's forward runs, it runs from this file (its exact",
                     "instructions, with this file behind them), so breakpoints here are hit.")
_READ_ONLY = _header("For reading: this graph's forward could not be pointed at this file.")


class Session:
    """Hooks into torch.compile while active; writes the dump; restores everything on exit."""

    def __init__(self, dd, summary=True, log_bytecode=False):
        self.dd = dd
        self.summary = summary
        self.log_bytecode = log_bytecode  # prepare_debug(log_bytecode=True): dump the code objects too
        self.failures = []  # (what, file) that could not be decompiled
        self.graphs = []  # compiled fns captured in this session
        self.recompilations = 0
        self.graph_breaks = 0  # compiled frames that end by calling a resume function
        self.unavailable = []  # (feature, the torch internal it lacks) switched off for this torch
        self._stack = None

    # -- lifetime
    def __enter__(self):
        with _lock:
            if _active[0] is not None:
                raise RuntimeError("depyf: prepare_debug/debug is already active; they do not nest")
            _active[0] = self
        stack = contextlib.ExitStack()
        hooks = (  # (what is dumped through it, how it is installed)
            ("every stage of every compile", lambda: stack.enter_context(_ti.compile_caches_disabled())),
            ("the user line of each guard", lambda: stack.callback(_ti.record_guard_sources())),
            ("Dynamo's transformed code as it is made (it is dumped at the end; breakpoints in it are not hit)",
             lambda: stack.callback(_ti.register_bytecode_hook(self.on_bytecode))),
            ("graphs", lambda: stack.callback(_ti.patch_graph_logging(self.on_graph))),
            ("graphs' forward code", lambda: stack.callback(_ti.patch_graph_recompile(self.on_recompile))),
            ("breakpoints in graphs the backend interprets (torch <= 2.9's aot_eager)", lambda: stack.callback(
                _ti.run_interpreted_graphs_as_code(lambda gm: gm in self.dd.bound_graphs))),
            ("Inductor's kernels", lambda: stack.callback(_ti.patch_output_code_loading(self.on_output_code))),
            ("the report's compile events", lambda: stack.callback(
                _ti.subscribe_compile_events(self.dd.recorder.on_compile_event))),
            ("debugger evaluations while stopped in compiled code (Dynamo compiled the debugger's frames)",
             lambda: stack.callback(_ti.skip_debugger_frames())),
        )
        try:
            for what, install in hooks:
                try:
                    install()
                except _ti.Unavailable as missing:  # this torch lacks it: that feature is off
                    self.unavailable.append((what, str(missing)))
            if self.unavailable:
                self.dd.write(_UNAVAILABLE_FILE, "".join(
                    "# Not dumped: %s (%s).\n" % pair for pair in self.unavailable))
        except BaseException:
            stack.close()
            _active[0] = None
            raise
        self._stack = stack
        return self

    def __exit__(self, *exc):
        try:
            self._stack.close()
        finally:
            _active[0] = None
        try:
            report = self.write_full_code()
            if self.summary:
                print(self.summary_text(report), file=sys.stderr)
            self.dd.recorder.finish()
        except Exception as err:  # the dump is a courtesy; the user's program goes on
            log.warning("depyf: could not finish the dump in %s (%s: %s)",
                        self.dd.path, type(err).__name__, err)
        return False

    def _failed(self, what, path, error):
        self.failures.append((what, path))
        if len(self.failures) == 1:
            log.warning("depyf: could not decompile %s (%s); %s holds its disassembly and the "
                        "program runs on unchanged. Later failures are counted in the summary.",
                        what, error, path)

    # -- Dynamo's bytecode
    def on_bytecode(self, original, code):
        """Dump the transformed code; return it pointed at the dumped file (same instructions)."""
        with _lock:
            if _ti.cache_entries(original):
                self.recompilations += 1
            if any(explain.RESUME_NAME.match(name) for name in code.co_names):
                self.graph_breaks += 1
            record = self.dump_transformed(original, code, bridge=True)
            self.dd.recorder.on_transformed(_ti.current_compile_id(), original, code, record.path,
                                            _ti.callers_outside_torch())
            return record.code if record.bridged else None

    def dump_transformed(self, original, code, bridge, scope=None):
        """Write `__transformed_code_<n>_for_<fn>.py`; with `bridge`, decide what runs.

        The file starts with the `def` (line 1 is the function's first line) and
        ends with a comment saying what it is.  When a checked form (the
        simplified one, else the validated decompilation) compiles to a
        function of Dynamo's frame layout, that compiled code runs: every line
        of the file stops a debugger, every name on it is a real variable.
        Otherwise Dynamo's own bytecode runs with its line numbers pointed at
        the file (the simplified form where there is one, else the exact one).
        """
        dd = self.dd
        label = explain.label_of(original.co_name)
        n = dd.number(("transformed", label))
        filename = "__transformed_code_%d_for_%s.py" % (n, label)
        path = os.path.join(dd.path, filename)
        name = "__transformed_code_%d_for_%s" % (n, label)
        result = _decompiled.decompile(code, name)
        what = "the transformed code of %s" % original.co_name
        if not result.ok:
            dd.write(filename, _decompiled.failure_text(code, result.error, what))
            self._failed(what, path, result.error)
            record = Transformed(n, original, code, path, None, result.error, False, code)
            dd.transformed[id(record.code)] = record
            return record
        if scope is None and bridge:
            scope = _ti.compiling_globals(code)
        exact = result.source.rstrip() + "\n"
        simple, line_of = _decompiled.simplify_transformed(code, exact, scope, dd.graph_inputs.get) or (None, None)
        forms = [(simple, _SIMPLIFIED)] if simple is not None else []
        if _decompiled.structured(exact):
            forms.append((exact, _EXACT_COMPILED))
        for form, note in forms:
            # (constants with no literal form become globals of the frame, bound below)
            bound = _decompiled.bind_named(form, result.named, scope)
            if bound is None:
                continue
            source, bindings = bound
            text = source + _trailer(original, note)
            runnable = _recompile.compile_like(code, text, path, name) if bridge else None
            if runnable is not None or not bridge:
                if runnable is not None:
                    scope.update(bindings)  # (before Dynamo first runs it)
                dd.write(filename, text)
                record = Transformed(n, original, runnable or code, path, source, None, runnable is not None, code)
                dd.transformed[id(record.code)] = record
                return record
        # Dynamo's own bytecode runs, its lines pointed at the file: the simplified form when
        # there is one (its lines through the exact form's), else the exact form
        linemap = result.linemap
        if simple is not None:
            source, note = simple, _SIMPLIFIED_READ
            linemap = [(offset, line_of(line)) for offset, line in linemap]
        else:
            source, note = exact, _EXACT
        dd.write(filename, source + _trailer(original, note))
        record = Transformed(n, original, code, path, source, None, False, code)
        if bridge:
            record.code, record.bridged = self._bridge(code, path, source, linemap)
        dd.transformed[id(record.code)] = record
        return record

    def _bridge(self, code, path, source, linemap):
        def_line = _first_def_line(source)
        if def_line is None or not linemap:
            return code, False
        try:
            moved = _linetable.retarget(code, path, def_line, linemap)
        except ValueError as err:
            log.warning("depyf: the line map of %s is unusable (%s); %s is for reading only",
                        code.co_name, err, path)
            return code, False
        return moved, True

    # -- FX graphs
    def on_graph(self, name, gm, _maybe_id):
        with _lock:
            dd = self.dd
            compile_id = _ti.current_compile_id()
            captured = _CAPTURED.match(name)
            if captured:
                fn, stage = captured.group(1), "Captured Graph"
                dd.graph_inputs[name] = _ti.graph_inputs(gm)
                dd.compile_ids[compile_id] = fn
                dd.last_compiled_fn = fn
                self.graphs.append(fn)
            else:
                inside = _COMPILED_FN_IN_TEXT.search(name)
                fn = inside.group(1) if inside else dd.compile_ids.get(compile_id, dd.last_compiled_fn)
                stage = _COMPILED_FN_IN_TEXT.sub("", name)
            if fn is None:
                return
            stage = re.sub(r"\W+", "_", stage).strip("_") or "graph"
            filename = "%s.%s.%d.py" % (fn, stage, dd.number(("graph", fn, stage)))
            title = _header("%s: %s (compile id %s)." % (
                fn, name if not captured else "Dynamo's captured graph", compile_id))
            self._write_graph(fn, filename, title, gm)

    def _write_graph(self, fn, filename, title, gm):
        """Dump gm readably (shapes on every value) and run its forward from that file.

        If the readable form does not compile to gm's exact instructions, the file
        holds gm.code itself instead, so what runs never changes.
        """
        dd = self.dd
        code = _ti.graph_code(gm)
        if filename not in dd.graph_files.setdefault(fn, []):
            dd.graph_files[fn].append(filename)
        dd.graph_by_code[code] = filename
        readable = "\n" + _ti.readable_graph(gm)
        for body in (readable, "\n" + code):
            dd.write(filename, title + _RUNS_HERE + body)
            dd.graph_texts[filename] = (title, body, code)
            if self._run_from_file(gm, filename):
                return
        dd.write(filename, title + _READ_ONLY + readable)
        dd.graph_texts[filename] = (title, readable, code)

    def _run_from_file(self, gm, filename):
        title, body, _code = self.dd.graph_texts[filename]
        path = os.path.join(self.dd.path, filename)
        if _ti.run_graph_from_file(gm, path, title + _RUNS_HERE + body):
            self.dd.bound_graphs[gm] = filename
            return True
        return False

    def on_recompile(self, gm):
        """Keep graphs running from their files when torch regenerates their forward.

        AOTAutograd compiles a deep copy of a logged graph (same code: it runs from
        the same file), and aot_eager then regenerates it with boxed arguments (a
        new calling convention for the same graph: the file is rewritten to it).
        """
        with _lock:
            dd = self.dd
            code = _ti.graph_code(gm)
            filename = dd.bound_graphs.get(gm)
            if filename is not None and _ti.is_boxed_codegen(gm) and dd.graph_texts[filename][2] != code:
                fn = filename.split(".", 1)[0]
                title = dd.graph_texts[filename][0] + _header(
                    "The backend then regenerated it to take its arguments as one list",
                    "(boxed calling convention): this is the code that runs.")
                self._write_graph(fn, filename, title, gm)
            elif code in dd.graph_by_code:
                self._run_from_file(gm, dd.graph_by_code[code])

    # -- Inductor
    def on_output_code(self, source, _path, linemap):
        with _lock:
            dd = self.dd
            fn = dd.compile_ids.get(_ti.current_compile_id(), dd.last_compiled_fn)
            if fn is None:
                return None
            filename = "%s.kernel_%d.py" % (fn, dd.number(("kernel", fn)))
            header = _header(
                "%s: the code Inductor generated for it (kernels and the `call` wrapper" % fn,
                "that runs them). Loaded from this file, so breakpoints in `call` are hit.")
            path = dd.write(filename, header + source)
            dd.graph_files.setdefault(fn, []).append(filename)
            return path, _ti.shift_linemap(linemap, header.count("\n"))

    # -- at exit
    def write_full_code(self):
        """Write full_code_for_<fn>_<k>.py for every function Dynamo compiled; report counts."""
        names = _SessionNames(self)
        report = {"functions": [], "resume": 0, "files": []}
        covered = set()
        codes = _ti.compiled_codes()
        ordered = ([c for c in codes if not c.co_name.startswith(explain.RESUME_CODE_PREFIX)]
                   + [c for c in codes if c.co_name.startswith(explain.RESUME_CODE_PREFIX)])
        for code in ordered:
            if id(code) in covered:
                continue
            try:
                seen = set()
                text = explain.explain_code(code, None, names, seen)
                covered |= seen
            except Exception as err:  # one function's explanation must not stop the others
                log.warning("depyf: could not explain %s (%s: %s)", code.co_name, type(err).__name__, err)
                continue
            filename = self.full_code_name(code)
            header = _header(
                "torch.compile's view of %s, explained by depyf: for each cache entry its" % code.co_name,
                "guards, its transformed code and the graphs it calls, then the original code and",
                "a dispatcher that checks the guards in order. Resume functions follow.")
            self.dd.write(filename, header + "\n" + text)
            report["functions"].append(code.co_name)
            report["resume"] += len(seen) - 1
            report["files"].append(filename)
        return report

    def full_code_name(self, code):
        dd = self.dd
        if id(code) not in dd.full_code:
            label = explain.label_of(code.co_name)
            dd.full_code[id(code)] = ("full_code_for_%s_%d.py" % (label, dd.number(("full", label))), code)
        return dd.full_code[id(code)][0]

    def summary_text(self, report):
        nfiles = sum(len(files) for fn, files in self.dd.graph_files.items() if fn in self.graphs)
        fns = report["functions"]
        lines = [
            "depyf: torch.compile artifacts dumped to %s" % self.dd.path,
            "  functions: %d%s, resume functions: %d" % (
                len(fns), " (%s)" % ", ".join(fns[:5]) + (", ..." if len(fns) > 5 else "") if fns else "",
                report["resume"]),
            "  graphs: %d (%d graph/kernel files), graph breaks: %d, recompilations: %d" % (
                len(self.graphs), nfiles, self.graph_breaks, self.recompilations),
        ]
        if self.failures:
            lines.append("  could not decompile %d piece(s); their files hold the disassembly"
                         % len(self.failures))
        for what, missing in self.unavailable:
            lines.append("  not dumped with this torch: %s (%s)" % (what, missing))
        return "\n".join(lines)


class _SessionNames(explain.OnDemandNames):
    """Explanation names that reuse the session's transformed-code files."""

    def __init__(self, session):
        super().__init__()
        self.session = session

    def transformed(self, original, code, scope=None):
        dd = self.session.dd
        with _lock:
            record = dd.transformed.get(id(code))
            if record is None:  # compiled before the session: dump it now, nothing to bridge
                record = self.session.dump_transformed(original, code, bridge=False, scope=scope)
        if record.source is not None:
            return record.n, record.source
        return record.n, explain.transformed_def(original, code, record.n,
                                                 _decompiled.Decompiled(error=record.error))

    def graph_note(self, name, scope):
        short = _CAPTURED.match(name)
        files = self.session.dd.graph_files.get(short.group(1) if short else name)
        if not files:
            return "# %s: a graph compiled before depyf started dumping (no graph files).\n" % name
        return "# %s: the graph this code calls; its stages are in\n%s" % (
            name, "".join("#   %s\n" % f for f in files))


def _first_def_line(source):
    for i, line in enumerate(source.splitlines(), 1):
        if re.match(r"(async\s+)?def\s", line):
            return i
    return None


def remember_dir(dd):
    _last_dir[0] = dd


def last_dir():
    return _last_dir[0]
