"""The dump's manifest: what torch.compile did, machine-readable, for `depyf report`.

A Recorder belongs to one dump directory (depyf._dump.DumpDir).  While a
session is active it collects, per Dynamo compile id: the stack that triggered
the compilation, why it recompiled, its graph breaks (reason and source line),
its guards, the transformed-code file and the graphs it calls.  At the end of a
session it adds every compiled function with its cache entries in the order
Dynamo checks them.  `depyf_manifest.json` is rewritten (atomically) when a
compilation finishes (at most once a second: later ones are saved by a timer)
and at the end of each session.  See depyf.report.build for the reader.
"""

import functools
import inspect
import json
import logging
import os
import platform
import re
import threading
import time

import torch

from depyf import _decompiled, explain
from depyf import _torch_internals as _ti

MANIFEST = "depyf_manifest.json"
FORMAT_VERSION = 1
# seconds: after the first compilation's (at once: a live run can be looked at), a long
# run of compilations rewrites the manifest at most this often, inside the user's calls
SAVE_INTERVAL = 5.0

_COMPILED_FN = re.compile(r"(__compiled_fn_\d+)(?:_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12})?$")


def _where(code):
    """Where a code object comes from; "code" tells apart code objects with the same name and
    line (Dynamo makes one resume function per graph break, all named after the break's line)."""
    return {"name": code.co_name, "file": code.co_filename, "line": code.co_firstlineno,
            "code": "%x" % id(code)}


class Recorder:
    """Collects the manifest of one dump directory; `save` writes it."""

    def __init__(self, dd):
        self.dd = dd
        self._lock = threading.RLock()
        self.compilations = {}  # compile id -> record, in the order compilations started
        self.functions = []
        self._saved_at = None  # time.monotonic() of the last save
        self._timer = None  # the pending save, when compilations finish in quick succession

    def _compilation(self, compile_id):
        record = self.compilations.get(compile_id)
        if record is None:
            record = self.compilations[compile_id] = {
                "compile_id": compile_id, "function": None, "stack": [], "graph_breaks": [],
                "recompile_reasons": [], "guards_text": None, "transformed": None, "graphs": [],
                "fail": None, "finished": False}
        return record

    def on_compile_event(self, event):
        """One event of depyf._torch_internals.subscribe_compile_events."""
        with self._lock:
            record = self._compilation(event["compile_id"])
            kind = event["kind"]
            if kind == "start":  # (on_transformed's stack, when there is one, is kept)
                record["stack"] = record["stack"] or [dict(f, origin=_origin(f["file"])) for f in event["stack"]]
            elif kind == "graph_break":
                brk = {k: event[k] for k in ("file", "line", "reason", "user_stack")}
                brk["code"] = _source_line(event["file"], event["line"])
                if brk not in record["graph_breaks"]:  # Dynamo restarts the analysis: same break again
                    record["graph_breaks"].append(brk)
            elif kind == "recompile":
                record["recompile_reasons"] = event["reasons"]
            elif kind == "guards":
                record["guards_text"] = event["text"]
            elif kind == "end":
                record["function"] = record["function"] or {
                    "name": event["name"], "file": event["file"], "line": event["line"]}
                record["fail"] = event["fail"]
                record["finished"] = True
                self._save_soon()

    def on_transformed(self, compile_id, original, code, path, callers=None):
        """Dynamo transformed `original` into `code`, dumped as `path`; `callers`: the frames
        (file, line, name) that led to the compile, outermost first, when known."""
        if compile_id is None:
            return
        with self._lock:
            record = self._compilation(compile_id)
            if callers:  # (the stack, from the frames themselves: the compiled frame last)
                frames = list(callers) + [(original.co_filename, original.co_firstlineno, original.co_name)]
                record["stack"] = [{"file": f, "line": line, "name": name, "code": _source_line(f, line),
                                    "origin": _origin(f)} for f, line, name in frames]
            record["function"] = _where(original)
            record["transformed"] = os.path.basename(path)
            for name in code.co_names:
                match = _COMPILED_FN.match(name)
                if match and match.group(1) not in record["graphs"]:
                    record["graphs"].append(match.group(1))

    def finish(self):
        """At the end of a session: every compiled function and its cache entries; save."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self.functions = [self._function(code) for code in _ti.compiled_codes()]
            self.save()

    def _save_soon(self):
        if self._saved_at is None or time.monotonic() - self._saved_at >= SAVE_INTERVAL:
            self.save()
        elif self._timer is None:
            self._timer = threading.Timer(SAVE_INTERVAL, self._timed_save)
            self._timer.daemon = True
            self._timer.start()

    def _timed_save(self):
        with self._lock:
            self._timer = None
            try:
                self.save()
            except Exception as err:  # a background thread: report, never raise
                logging.getLogger("depyf").warning("depyf: could not write %s in %s (%s: %s)",
                                                   MANIFEST, self.dd.path, type(err).__name__, err)

    def _function(self, code):
        dd = self.dd
        entries = []
        for entry in _ti.cache_entries(code):
            record = dd.transformed.get(id(entry.code))
            scope = _ti.entry_globals(entry) or {}
            resumes = []
            for name in entry.code.co_names:
                target = scope.get(name)
                if explain.RESUME_NAME.match(name) and callable(target) and hasattr(target, "__code__"):
                    resumes.append(dict(_where(target.__code__), **{"global": name}))
            guards = []
            for guard in _ti.guards_of(entry):
                text = " ".join(guard.text.split())
                if text:
                    expr, comment = explain.split_guard(text)
                    guards.append({"kind": guard.kind, "expr": expr, "comment": comment})
            entries.append({"compile_id": entry.compile_id,
                            "transformed": os.path.basename(record.path) if record else None,
                            "guards": guards, "resumes": resumes})
        resume = code.co_name.startswith(explain.RESUME_CODE_PREFIX)
        source, first_line = _original_source(code, resume)
        full = dd.full_code.get(id(code))
        return dict(_where(code), resume=resume, full_code=full[0] if full else None,
                    source=source, source_line=first_line, entries=entries)

    def manifest(self):
        dd = self.dd
        fn_compile_ids = {}
        for compile_id, fn in dd.compile_ids.items():
            fn_compile_ids.setdefault(fn, compile_id)
        graphs = [{"name": fn, "compile_id": fn_compile_ids.get(fn), "files": list(files)}
                  for fn, files in sorted(dd.graph_files.items(), key=lambda kv: _fn_number(kv[0]))]
        return {
            "format": "depyf-manifest", "version": FORMAT_VERSION,
            "dump_dir": dd.path, "rank": _ti.process_rank(), "pid": os.getpid(),
            "python": platform.python_version(), "torch": torch.__version__,
            "updated": time.strftime("%Y-%m-%d %H:%M:%S"),
            "compilations": list(self.compilations.values()),
            "graphs": graphs, "functions": self.functions, "files": sorted(self.dd.written),
        }

    def save(self):
        """Save this process's manifest, then the directory's: every process of the run in one."""
        with self._lock:
            self._saved_at = time.monotonic()
            run = self.dd.run
            run.save_manifest_part(json.dumps(self.manifest(), indent=1))
            with run.locked():
                self.dd.write(MANIFEST, json.dumps(merge(run.manifest_parts()), indent=1))


_PROCESS_KEYS = ("pid", "rank", "python", "torch", "updated")


def merge(parts):
    """One manifest for the processes that dumped into one directory (one part each).

    With one process it is that process's manifest.  With several, each record says
    its process ("pid"), and compile ids and code keys are prefixed with
    "[pid <pid>] " (each process numbers its compilations from 0/0).  "processes"
    lists them, each with the files it wrote; "files" holds every file the run wrote
    (a rerun removes those only).
    """
    parts = sorted(parts, key=lambda p: (p.get("rank") is None, p.get("rank") or 0, p.get("pid") or 0))
    processes = [dict({k: p.get(k) for k in _PROCESS_KEYS}, files=p.get("files") or []) for p in parts]
    if len(parts) == 1:
        return dict(parts[0], processes=processes)
    merged = dict(parts[0], pid=", ".join(str(p.get("pid")) for p in parts), rank=None,
                  updated=max(str(p.get("updated")) for p in parts), processes=processes,
                  compilations=[], graphs=[], functions=[], files=[])
    for part in parts:
        tag = "[pid %s] " % part.get("pid")

        def tagged(where):
            key = where.get("code") or "%s:%s:%s" % (where.get("file"), where.get("line"), where.get("name"))
            return dict(where, code=tag + key)

        def compile_id(cid):
            return None if cid is None else tag + str(cid)

        for c in part.get("compilations") or []:
            merged["compilations"].append(dict(c, pid=part.get("pid"), compile_id=compile_id(c.get("compile_id")),
                                               function=tagged(c["function"]) if c.get("function") else None))
        for g in part.get("graphs") or []:
            merged["graphs"].append(dict(g, pid=part.get("pid"), compile_id=compile_id(g.get("compile_id"))))
        for fn in part.get("functions") or []:
            entries = [dict(e, compile_id=compile_id(e.get("compile_id")),
                            resumes=[tagged(r) for r in e.get("resumes") or []]) for e in fn.get("entries") or []]
            merged["functions"].append(dict(tagged(fn), pid=part.get("pid"), entries=entries))
        merged["files"] += [f for f in part.get("files") or [] if f not in merged["files"]]
    return merged


def _fn_number(name):
    match = re.search(r"\d+", name)
    return int(match.group()) if match else -1


def _library_dirs():
    """(torch's package directory, the directories of the standard library and installed packages)."""
    import sysconfig

    paths = sysconfig.get_paths()
    libraries = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return os.path.dirname(os.path.realpath(torch.__file__)), tuple(os.path.join(p, "") for p in libraries)


@functools.lru_cache(maxsize=4096)
def _origin(path):
    """Whose code a frame of the program's stack runs: "torch", "library" (the standard
    library, installed packages) or None (the program's own)."""
    if not path:
        return None
    if path.startswith("<frozen "):  # (stdlib modules frozen into the interpreter, 3.11+)
        return "library"
    torch_dir, libraries = _LIBRARY_DIRS
    real = os.path.realpath(path)
    if real.startswith(os.path.join(torch_dir, "")):
        return "torch"
    return "library" if real.startswith(libraries) else None


_LIBRARY_DIRS = _library_dirs()


def _source_line(path, line):
    import linecache

    if not path or not line:
        return None
    return linecache.getline(path, line).strip() or None


def _original_source(code, generated):
    """(source, number of its first line) of the user's function; decompiled for resume functions."""
    if not generated:
        try:
            lines, first = inspect.getsourcelines(code)
            return "".join(lines), first
        except (OSError, TypeError):
            pass
    result = _decompiled.decompile(code)
    return (result.source if result.ok else None), None
