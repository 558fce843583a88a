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
import json
import logging
import os
import re
import sys
import tempfile
import threading
import time
import weakref

try:
    import fcntl
except ImportError:  # (not on Windows: no lock, the processes of a run still number apart)
    fcntl = None

from depyf import _core, _decompiled, _linetable, _recompile
from depyf import _simplify  # noqa: F401  (loaded with the dumper, not while Dynamo's first call waits)
from depyf import _torch_internals as _ti
from depyf import explain
from depyf.report import record as _record

log = logging.getLogger("depyf")

_CAPTURED = re.compile(r"(__compiled_fn_\d+)(?:_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12})?$")
_COMPILED_FN_IN_TEXT = re.compile(r"(__compiled_fn_\d+)(?:_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12})?")

_lock = threading.RLock()
_dirs = {}  # (pid, real path) -> DumpDir: numbering carries on when a directory is reused
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
    """Naming state of one dump directory within this process (see _Run for the others)."""

    def __init__(self, path):
        self.path = path
        self.run = _Run(path)
        self.counts = {}
        self.written = set()  # names of the files this process wrote here
        self.transformed = {}  # id(code in the cache entry) -> Transformed
        self.full_code = {}  # id(original code) -> (file name, original code)
        self.graph_files = {}  # "__compiled_fn_<n>" -> [file names]
        self.compile_ids = {}  # Dynamo compile id -> "__compiled_fn_<n>"
        self.last_compiled_fn = None
        self.graph_texts = {}  # graph file name -> (title, note, body): body a str, or a FrozenGraph to print
        self.bound_files = set()  # graph files some graph module's forward runs from
        self.graph_inputs = {}  # "__compiled_fn_<n>_<uuid>" -> its captured graph's input names
        self.recorder = _record.Recorder(self)  # depyf_manifest.json, read by `depyf report`

    def claim(self, key, name_of):
        """(n, name_of(n)) for the first n, from this process's count for `key` on, whose file
        no process has made in this directory yet; the file is made (empty) and is ours."""
        n = self.counts.get(key, 0)
        while True:
            name = name_of(n)
            try:
                os.close(os.open(os.path.join(self.path, name), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            except FileExistsError:  # another process's (or a file depyf did not write): never touched
                n += 1
                continue
            self.counts[key] = n + 1
            self._note(name)
            return n, name

    def write(self, filename, text):
        self._note(filename)
        path = os.path.join(self.path, filename)
        write_atomic(path, text)
        return path

    def _note(self, filename):
        if filename not in self.written:
            self.written.add(filename)
            self.run.note_written(filename)

    def runs_here(self, gm):
        """The name of the file of this directory gm's forward runs from, else None."""
        path = _ti.graph_file(gm)
        return os.path.basename(path) if path and os.path.dirname(path) == self.path else None


class _Run:
    """The processes that dump into one directory, told apart in its `.depyf/` folder.

    Processes dumping into a directory at the same time (or children of one
    multiprocessing parent that is still running) form one run: each numbers its
    files past those that exist, so none is overwritten, and the manifest covers
    them all.  A process that starts dumping when no process of the last run is
    alive starts a new run: it first removes the files that run wrote (each
    process lists them in `.depyf/<process>.files`), never any other file.
    """

    def __init__(self, path):
        self.folder = os.path.join(path, _RUN_FOLDER)
        os.makedirs(self.folder, exist_ok=True)
        pid = os.getpid()
        self.key = "%d-%s" % (pid, _process_start(pid) or "%d" % (time.time() * 1e6))
        parent = _parent_process()
        with self.locked():
            if not any(self._alive(record) for record in self._records()):
                self._remove_last_run(path)
            write_atomic(self._file(".json"), json.dumps(
                {"pid": pid, "start": _process_start(pid), "parent": parent}))
        self._files = open(self._file(".files"), "a", encoding="utf-8")

    def _file(self, suffix, key=None):
        return os.path.join(self.folder, (key or self.key) + suffix)

    @contextlib.contextmanager
    def locked(self):
        """Holds the directory's lock (where the platform has fcntl.flock)."""
        with open(os.path.join(self.folder, "lock"), "a") as lock:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_EX)
            yield  # (closing the file releases the lock)

    def note_written(self, filename):
        self._files.write(filename + "\n")
        self._files.flush()

    def _records(self):
        """(key, (pid, start, parent)) of every process of the last or current run."""
        records = {}
        for name in os.listdir(self.folder):
            if name.endswith(".json") and not name.endswith(".manifest.json"):
                try:
                    with open(os.path.join(self.folder, name), encoding="utf-8") as f:
                        record = json.load(f)
                    records[name[:-len(".json")]] = (record["pid"], record["start"], record["parent"])
                except (OSError, ValueError, KeyError, TypeError):
                    continue  # (being written by its process: that one is alive)
        return records.items()

    @staticmethod
    def _alive(item):
        _key, (pid, start, parent) = item
        return _is_running(pid, start) or (parent is not None and _is_running(*parent))

    def _remove_last_run(self, path):
        for key, _record in self._records():
            try:
                with open(self._file(".files", key), encoding="utf-8") as f:
                    names = set(f.read().split("\n"))
            except OSError:
                names = set()
            for name in names:
                full = os.path.join(path, name)
                if name and os.sep not in name and os.path.isfile(full):
                    with contextlib.suppress(OSError):
                        os.unlink(full)
            for suffix in (".files", ".manifest.json", ".json"):
                with contextlib.suppress(OSError):
                    os.unlink(self._file(suffix, key))
        _remove_report_page(path)

    def manifest_parts(self):
        """The manifests the processes of this run saved (see depyf.report.record)."""
        parts = []
        for name in sorted(os.listdir(self.folder)):
            if name.endswith(".manifest.json"):
                try:
                    with open(os.path.join(self.folder, name), encoding="utf-8") as f:
                        parts.append(json.load(f))
                except (OSError, ValueError):
                    continue
        return parts

    def save_manifest_part(self, text):
        write_atomic(self._file(".manifest.json"), text)


_RUN_FOLDER = ".depyf"  # (the report leaves out names starting with a dot)
_REPORT_PAGE = "index.html"
_REPORT_MARK = b'<meta name="generator" content="depyf report">'


def _remove_report_page(path):
    """Remove the last run's report page (a page depyf report wrote, by its generator tag)."""
    page = os.path.join(path, _REPORT_PAGE)
    try:
        with open(page, "rb") as f:
            ours = _REPORT_MARK in f.read(4096)
        if ours:
            os.unlink(page)
    except OSError:
        pass


def _process_start(pid):
    """When process `pid` started (Linux's /proc), to tell it from a later one with its pid."""
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError, ValueError):
        return None


def _is_running(pid, start):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (it exists, owned by someone else)
        pass
    return start is None or _process_start(pid) in (None, start)


def _parent_process():
    """[pid, start] of the multiprocessing parent that started this process, else None."""
    import multiprocessing

    parent = multiprocessing.parent_process()
    if parent is None or parent.pid is None:
        return None
    return [parent.pid, _process_start(parent.pid)]


def dump_dir(path):
    """The DumpDir for `path` (made once per process), under rank_<r> when distributed."""
    rank = _ti.process_rank()
    if rank is not None:
        path = os.path.join(path, "rank_%d" % rank)
    os.makedirs(path, exist_ok=True)
    real = os.path.realpath(path)
    with _lock:
        key = (os.getpid(), real)  # (a forked child starts its own)
        if key not in _dirs or not os.path.isdir(_dirs[key].run.folder):  # (or the directory was emptied)
            _dirs[key] = DumpDir(real)
        return _dirs[key]


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

    def __init__(self, dd, summary=True, log_bytecode=False, lazy=True):
        self.dd = dd
        self.summary = summary
        self.log_bytecode = log_bytecode  # also write the three disassemblies of each transformed code
        # Lazy: a graph's text is printed, and its forward (as first looked up) pointed at its
        # file, when the session ends, not while torch compiles or runs the first call.
        self.lazy = lazy
        self.waiting = []  # weak references to graph modules whose forward waits to be looked up
        self.kept = []  # (weak reference to a graph module, current_forward of it then, its binding)
        self.printed = {}  # first node -> [FrozenGraph printed]: a graph logged again unchanged is printed once
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
            ("breakpoints in graphs the backend interprets (torch <= 2.9's aot_eager)", lambda: stack.callback(
                _ti.run_interpreted_graphs_as_code(self.dd.runs_here))),
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
            if self.lazy:
                _ti.check_graph_freezing()
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
            self.finish_graphs()
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
        record = self._dump_transformed(original, code, bridge, scope)
        if self.log_bytecode:
            self._write_bytecode(record)
        return record

    def _write_bytecode(self, record):
        """`<transformed file>.original_bytecode`, `.transformed_bytecode` (Dynamo's) and
        `.decompiled_and_compiled_back_bytecode` (the file's def compiled): disassemblies."""
        name = os.path.basename(record.path)
        back = record.code if record.code is not record.dynamo else None  # (compiled from the file, runs)
        if back is None:
            try:
                with open(record.path, encoding="utf-8") as f:
                    module = compile(f.read(), record.path, "exec", dont_inherit=True)
                back = _recompile.find_code(module, os.path.splitext(name)[0])
            except (OSError, SyntaxError, ValueError) as err:
                back = "%s: %s" % (type(err).__name__, err)
            if not hasattr(back, "co_code"):
                back = "# %s does not compile back to a function (%s)\n" % (name, back)
        for suffix, code in (("original", record.original), ("transformed", record.dynamo),
                             ("decompiled_and_compiled_back", back)):
            text = code if isinstance(code, str) else _core.disasm(code)
            self.dd.write("%s.%s_bytecode" % (name, suffix), text)

    def _dump_transformed(self, original, code, bridge, scope=None):
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
        n, filename = dd.claim(("transformed", label), lambda k: "__transformed_code_%d_for_%s.py" % (k, label))
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
            _k, filename = dd.claim(("graph", fn, stage), lambda k: "%s.%s.%d.py" % (fn, stage, k))
            title = _header("%s: %s (compile id %s)." % (
                fn, name if not captured else "Dynamo's captured graph", compile_id))
            self._write_graph(fn, filename, title, gm)

    def _write_graph(self, fn, filename, title, gm):
        """Dump gm readably (shapes on every value); its forward is to run from that file.

        The readable text shows the graph as it is when torch logs it: in a lazy session
        it is kept (a FrozenGraph) and printed when the session ends, and gm's forward as
        first looked up (when its code exists) is pointed at the file then: the first call,
        which runs aot_eager's graphs at once, waits for neither.
        """
        dd = self.dd
        if filename not in dd.graph_files.setdefault(fn, []):
            dd.graph_files[fn].append(filename)
        self._set_text(filename, title, _RUNS_HERE, self._graph_body(gm))
        if _ti.watch_graph(gm, os.path.join(dd.path, filename), _on_recompile) and not _ti.needs_codegen(gm):
            self._when_forward_runs(gm, lambda gm, kept: self._bind(gm, filename, kept))

    def _graph_body(self, gm):
        """gm's readable text as it is now: kept to print later where it can be, else printed."""
        frozen = _ti.freeze_graph(gm) if self.lazy else None
        return frozen if frozen is not None else "\n" + _ti.readable_graph(gm)

    def _set_text(self, filename, title, note, body):
        self.dd.graph_texts[filename] = (title, note, body)
        if isinstance(body, str):
            self.dd.write(filename, title + note + body)

    def _text(self, filename):
        """(title, note, body) of a graph file, its body printed (and the file written) now."""
        dd = self.dd
        title, note, body = dd.graph_texts[filename]
        if not isinstance(body, str):
            body = "\n" + self._print_frozen(body)
            self._set_text(filename, title, note, body)
        return title, note, body

    def _print_frozen(self, frozen):
        """frozen.readable(), printed once for a graph logged several times unchanged."""
        if frozen.first is None:
            return frozen.readable()
        printed = self.printed.setdefault(frozen.first, [])
        for other in printed:
            if other.same(frozen):
                return other.readable()
        printed.append(frozen)
        return frozen.readable()

    def _when_forward_runs(self, gm, bind):
        """bind(gm, kept) for gm's forward as it is when first looked up (calling gm does that;
        for the others, when the session ends): in a lazy session that forward is kept then
        (kept: its function and source) and bound when the session ends, so no graph is
        printed during the first call; binding swaps that function's code, so what torch
        looked up runs from the file too.  Else bind(gm, None) now."""
        def keep(gm):
            with _lock:
                self.kept.append((weakref.ref(gm), _ti.current_forward(gm), bind))

        if self.lazy and _ti.on_first_forward(gm, keep):
            self.waiting.append(weakref.ref(gm))
        else:
            bind(gm, None)

    def finish_graphs(self):
        """At the end of the session: bind the forwards kept, print the texts not printed."""
        waiting, self.waiting = self.waiting, []
        for ref in waiting:
            gm = ref()
            if gm is not None:
                _ti.run_waiting_forward(gm)  # (kept now)
        kept, self.kept = self.kept, []
        with _lock:
            for ref, then, bind in kept:
                gm = ref()
                if gm is None:
                    continue
                try:
                    bind(gm, then)
                except Exception as err:  # one graph must not stop the others (its forward runs torch's code)
                    log.warning("depyf: could not point the forward of %s at its file (%s: %s)",
                                _ti.graph_file(gm), type(err).__name__, err)
            for filename, (title, _note, body) in list(self.dd.graph_texts.items()):
                if not isinstance(body, str):
                    try:
                        self._text(filename)
                    except Exception as err:  # one graph's text must not stop the others
                        log.warning("depyf: could not print the graph of %s (%s: %s)",
                                    filename, type(err).__name__, err)
                        self._set_text(filename, title, _READ_ONLY, "\n# depyf could not print this graph.\n")
            self.printed.clear()  # (the frozen graphs hold torch's nodes and values)

    def _bind(self, gm, filename, kept=None):
        """Run gm's forward (`kept`: the forward function and source torch had made when
        the binding was asked for; None: the current one) from its file.  If the file's
        form does not compile to that forward's exact instructions and no graph runs from
        it yet, the file is given the forward's own code (else it says it is for reading),
        so what runs never changes."""
        dd = self.dd
        forward, source = kept or (None, _ti.graph_code(gm))
        if self._run_from_file(gm, filename, forward) or filename in dd.bound_files:
            return
        title, _note, body = self._text(filename)
        self._set_text(filename, title, _RUNS_HERE, "\n" + source)
        if not self._run_from_file(gm, filename, forward):
            self._set_text(filename, title, _READ_ONLY, body)

    def _run_from_file(self, gm, filename, forward=None):
        title, note, body = self._text(filename)
        path = os.path.join(self.dd.path, filename)
        if note is _RUNS_HERE and _ti.run_graph_from_file(gm, path, title + note + body, forward):
            self.dd.bound_files.add(filename)
            return True
        return False

    def on_recompile(self, gm):
        """torch generated the forward of a graph that is to run from a dump file, or copied it.

        AOTAutograd compiles a deep copy of a logged graph (same code: it runs from
        the same file), and aot_eager then regenerates it to take its arguments as
        one list (boxed calling convention: new code for the same graph, the file
        is rewritten to it, as the graph is now, unless the file already runs it).
        """
        with _lock:
            filename = self.dd.runs_here(gm)
            if filename is None or _ti.needs_codegen(gm):
                return  # (a lazy graph module is bound when it generates its code)
            boxed = self._graph_body(gm) if _ti.is_boxed_codegen(gm) else None
            self._when_forward_runs(gm, lambda gm, kept: self._bind_regenerated(gm, filename, boxed, kept))

    def _bind_regenerated(self, gm, filename, boxed, kept):
        dd = self.dd
        body = dd.graph_texts[filename][2]
        forward = kept[0] if kept else None
        # (a graph kept unprinted with an unboxed code generator never runs a boxed forward: not printed for that)
        if boxed is not None and not (
                (isinstance(body, str) or _ti.is_boxed_codegen(body)) and self._run_from_file(gm, filename, forward)):
            title = dd.graph_texts[filename][0] + _header(
                "The backend then regenerated it to take its arguments as one list",
                "(boxed calling convention): this is the code that runs.")
            self._set_text(filename, title, _RUNS_HERE, boxed)
            dd.bound_files.discard(filename)
        self._bind(gm, filename, kept)

    # -- Inductor
    def on_output_code(self, source, _path, linemap):
        with _lock:
            dd = self.dd
            fn = dd.compile_ids.get(_ti.current_compile_id(), dd.last_compiled_fn)
            if fn is None:
                return None
            _k, filename = dd.claim(("kernel", fn), lambda k: "%s.kernel_%d.py" % (fn, k))
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
        report = {"functions": [], "resume": 0, "resume_names": [], "files": []}
        covered = set()
        codes = _ti.compiled_codes()
        ordered = ([c for c in codes if not c.co_name.startswith(explain.RESUME_CODE_PREFIX)]
                   + [c for c in codes if c.co_name.startswith(explain.RESUME_CODE_PREFIX)])
        for code in ordered:
            if id(code) in covered:
                continue
            try:
                seen = {}
                text = explain.explain_code(code, None, names, seen)
                covered.update(seen)
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
            report["resume_names"] += [c.co_name for c in seen.values() if c is not code]  # (also those never run)
            report["files"].append(filename)
        return report

    def full_code_name(self, code):
        dd = self.dd
        if id(code) not in dd.full_code:
            label = explain.label_of(code.co_name)
            _k, name = dd.claim(("full", label), lambda k: "full_code_for_%s_%d.py" % (label, k))
            dd.full_code[id(code)] = (name, code)
        return dd.full_code[id(code)][0]

    def summary_text(self, report):
        nfiles = sum(len(files) for fn, files in self.dd.graph_files.items() if fn in self.graphs)
        fns = report["functions"]
        lines = [
            "depyf: torch.compile artifacts dumped to %s" % self.dd.path,
            "  functions: %d%s, resume functions: %d%s" % (
                len(fns), _names(fns), report["resume"], _names(report["resume_names"])),
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


def _names(names, shown=5):
    """The summary's list ` (a, b x2, ...)`: names as the files and the report give them, each
    once with its count (Dynamo names the resume functions after one line alike)."""
    counts = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    parts = [name + (" x%d" % n if n > 1 else "") for name, n in counts.items()]
    return " (%s)" % ", ".join(parts[:shown] + ["..."] * (len(parts) > shown)) if parts else ""


def _on_recompile(gm):
    """A graph module depyf runs from a file was recompiled (see Session.on_recompile)."""
    session = _active[0]
    if session is not None:
        session.on_recompile(gm)


def _first_def_line(source):
    for i, line in enumerate(source.splitlines(), 1):
        if re.match(r"(async\s+)?def\s", line):
            return i
    return None


def remember_dir(dd):
    _last_dir[0] = dd


def last_dir():
    return _last_dir[0]
