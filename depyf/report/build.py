"""Build the report page of a dump directory (no torch needed).

The page is depyf/report/assets/report.html with the stylesheet, the scripts
and the data filled in.  The data is one JSON object describing each run: one
per rank directory (or the dump directory itself), and within one, one per
process when several processes dumped into it.  A run shows only the files its
manifest lists (those depyf wrote in its last run), not whatever else the
directory holds.  Every file's text is embedded separately (once) and only
parsed when the page shows or searches it, so a dump with hundreds of graphs
still opens at once.
"""

import collections
import contextlib
import json
import os
import re
import tempfile
import time

from .._files import RegularFile, read_regular

MANIFEST = "depyf_manifest.json"
INDEX = "index.html"
MAX_EMBEDDED = 4 * 1024 * 1024  # bytes of one file shown in the page; larger ones are cut

_ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets")
_RANK_DIR = re.compile(r"rank_(\d+)$")
_GRAPH_FILE = re.compile(r"(__compiled_fn_\d+)\.(?:kernel_(\d+)|(\w+?)\.(\d+))\.py$")
_TRANSFORMED_FILE = re.compile(r"__transformed_code_(\d+)_for_(\w+)\.py$")
_FULL_CODE_FILE = re.compile(r"full_code_for_(\w+)_(\d+)\.py$")
_AOT_ID = re.compile(r"^# AOT ID: \['\d+_(\w+)'\]", re.M)

# Graph stages in pipeline order: (file stage name, label, step of the pipeline).
_STAGES = [
    ("Captured_Graph", "Captured graph", "capture"),
    ("pre_insert_deferred_runtime_asserts", "Before runtime asserts", "capture"),
    ("tensorify_python_scalars", "Scalars as tensors", "capture"),
    ("BEFORE_PRE_GRAD", "Pre-grad passes (before)", "pregrad"),
    ("AFTER_PRE_GRAD", "Pre-grad passes (after)", "pregrad"),
    ("Joint_graph", "Joint graph", "joint"),
    ("Forward_graph", "Forward", "forward"),
    ("Backward_graph", "Backward", "backward"),
    ("AFTER_POST_GRAD", "Post-grad", "postgrad"),
    ("kernel", "Kernels", "kernel"),
]
_STAGE_ORDER = {name: i for i, (name, _label, _step) in enumerate(_STAGES)}


class ReportError(Exception):
    """The directory cannot be reported on; the message says why."""


def write_report(dump_dir):
    """Write dump_dir/index.html for the dump in `dump_dir`; return its path.

    ReportError (and nothing written) when `dump_dir` is no directory or holds no dump.
    """
    dump_dir = os.path.abspath(os.fspath(dump_dir))
    if not os.path.isdir(dump_dir):
        raise ReportError("not a directory")
    if not any(_is_dump(path) for _label, path in _run_dirs(dump_dir)):
        raise ReportError("not a depyf dump (no %s, no __transformed_code_*, full_code_for_* or "
                          "__compiled_fn_* file); nothing written" % MANIFEST)
    path = os.path.join(dump_dir, INDEX)
    # Ranks of a distributed run, and processes sharing a directory, each rewrite the page
    # when they finish: a page made from a manifest that another process has rewritten since
    # may have replaced that process's newer page, so it is made again.
    for _attempt in range(_MAX_REWRITES):
        read = _manifest_versions(dump_dir)
        _write_atomic(path, render(dump_dir))
        if _manifest_versions(dump_dir) == read:
            break
    return path


_MAX_REWRITES = 5


def _manifest_versions(dump_dir):
    """What tells each manifest of the dump apart from a rewritten one (each is replaced whole)."""
    versions = []
    for _label, path in _run_dirs(dump_dir):
        try:
            st = os.stat(os.path.join(path, MANIFEST))
            versions.append((st.st_ino, st.st_mtime_ns, st.st_size))
        except OSError:
            versions.append(None)
    return versions


def _write_atomic(path, html):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".depyf-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
            f.write(html)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def render(dump_dir):
    """The report page of `dump_dir` as HTML text."""
    texts = _Texts()
    runs = [run for label, path in _run_dirs(dump_dir) for run in _runs(label, path, texts)]
    data = {"dir": dump_dir, "generated": time.strftime("%Y-%m-%d %H:%M:%S"), "runs": runs,
            "runs_are": "processes" if any(run["pid_label"] for run in runs) else "ranks"}
    with open(os.path.join(_ASSETS, "report.html"), encoding="utf-8") as f:
        page = f.read()
    parts = {
        "TITLE": _html_escape("depyf report: %s" % os.path.basename(dump_dir) or dump_dir),
        "STYLE": _asset("report.css"),
        "SCRIPT": _asset("highlight.js") + "\n" + _asset("report.js"),
        "DATA": _script_json(data),
        "BODIES": "\n".join('<script type="application/json" id="b%d">%s</script>' % (i, _script_json(text))
                            for i, text in enumerate(texts.bodies)),
    }
    return re.sub(r"\{\{(\w+)\}\}", lambda m: parts[m.group(1)], page)


def _asset(name):
    with open(os.path.join(_ASSETS, name), encoding="utf-8") as f:
        return f.read()


def _html_escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _script_json(value):
    """JSON safe inside <script>: `<` only occurs in strings, where \\u003c means the same."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def _run_dirs(dump_dir):
    """[(label, directory)]: the rank_<r> directories of a distributed run, else the directory."""
    ranks = []
    for name in os.listdir(dump_dir):
        match = _RANK_DIR.match(name)
        if match and os.path.isdir(os.path.join(dump_dir, name)):
            ranks.append((int(match.group(1)), name))
    if ranks:
        return [("rank %d" % r, os.path.join(dump_dir, name)) for r, name in sorted(ranks)]
    return [("", dump_dir)]


def _is_dump(path):
    """Whether depyf.prepare_debug wrote into `path`: its manifest, or files named as it names them."""
    try:
        names = os.listdir(path)
    except OSError:
        return False
    return any(name == MANIFEST or _kind(name) != "other" for name in names)


def _load_manifest(path):
    try:
        manifest = json.loads(read_regular(os.path.join(path, MANIFEST), follow_symlinks=False).decode("utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) and manifest.get("format") == "depyf-manifest" else None


def _runs(label, path, texts):
    """The runs the page shows for one directory: one, or one per process when several
    processes dumped into it (their merged manifest is split again)."""
    manifest = _load_manifest(path)
    parts = _process_parts(manifest) if manifest else []
    if not parts:
        return [_run(label, None, path, manifest, texts)]
    return [_run(label, part["pid"], path, part, texts) for part in parts]


_PROCESS_KEYS = ("pid", "rank", "python", "torch", "updated")


def _process_parts(manifest):
    """[the manifest of each process] of a manifest several processes wrote (see
    depyf.report.record.merge), with compile ids as Dynamo's logs in that process give
    them (and code keys as that process's manifest gives them); [] for one process's
    manifest, or one this depyf cannot split."""
    processes = manifest.get("processes")
    if not isinstance(processes, list) or len(processes) < 2:
        return []
    try:
        parts = []
        for process in processes:
            pid, tag = process["pid"], "[pid %s] " % process["pid"]

            def mine(key):
                return [r for r in manifest.get(key) or [] if r.get("pid") == pid]

            def own(record, key):
                value = record.get(key)
                return dict(record, **{key: value[len(tag):]}) if str(value).startswith(tag) else record

            def own_function(c):
                return dict(own(c, "compile_id"), function=c["function"] and own(c["function"], "code"))

            def own_entry(e):
                return dict(own(e, "compile_id"), resumes=[own(r, "code") for r in e.get("resumes") or []])

            parts.append(dict(
                manifest, processes=[process], **{k: process.get(k) for k in _PROCESS_KEYS},
                compilations=[own_function(c) for c in mine("compilations")],
                graphs=[own(g, "compile_id") for g in mine("graphs")],
                functions=[dict(own(fn, "code"), entries=[own_entry(e) for e in fn.get("entries") or []])
                           for fn in mine("functions")],
                files=process.get("files", manifest.get("files"))))
        return parts
    except (KeyError, TypeError, AttributeError):  # written by another depyf version
        return []


def _run(label, pid, path, manifest, texts):
    """One run of the page: one process's work in `path`, or, with `pid` None, all of it."""
    listed = _listed(manifest)
    files = _files(path, listed, texts)
    by_name = {f["name"]: f for f in files}

    def text_of(name):
        return texts.bodies[by_name[name]["body"]] if name in by_name else None

    functions = None
    if manifest:
        try:
            functions = _functions(manifest, text_of)
        except (KeyError, TypeError, ValueError, AttributeError):  # written by another depyf version
            manifest = None
    if functions is None:
        functions = _functions_from_names(files, text_of)
    graphs = _graphs(files, manifest)
    compilations = [c for fn in functions for c in fn["compilations"]]
    counts = {
        "functions": sum(1 for fn in functions if not fn["resume"]),
        "resume_functions": sum(1 for fn in functions if fn["resume"]),
        "graphs": len(graphs),
        "graph_breaks": sum(len(c["graph_breaks"]) for c in compilations),
        "recompilations": sum(1 for c in compilations if _is_recompile(c["compile_id"])),
        "kernels": sum(1 for g in graphs for s in g["stages"] if s["step"] == "kernel"),
        "files": len(files),
    }
    meta = None
    if manifest:
        meta = {k: manifest.get(k) for k in _PROCESS_KEYS}
    pid_label = None if pid is None else "process %s" % pid
    return {"label": " \u00b7 ".join(part for part in (label, pid_label) if part), "pid_label": pid_label,
            "dir": path, "listed": listed is not None, "meta": meta, "files": files, "graphs": graphs,
            "functions": functions, "counts": counts}


def _listed(manifest):
    """The names of the files the manifest says depyf wrote (this run's), else None (the
    manifest is missing or older: then every file of the directory is shown)."""
    names = (manifest or {}).get("files")
    if not isinstance(names, list):
        return None
    return [n for n in names if isinstance(n, str) and n == os.path.basename(n) and n not in ("", ".", "..")]


class _Texts:
    """The file texts the page embeds, each once (the processes of a run can share a file)."""

    def __init__(self):
        self.bodies = []
        self._index = {}  # path -> (index in bodies, size)

    def read(self, path):
        """(index of the text of the regular file `path`, its size in bytes); OSError if none."""
        if path not in self._index:
            with RegularFile(path, limit=None, follow_symlinks=False) as f:
                raw, size = f.read(MAX_EMBEDDED + 1), f.size
            text = raw[:MAX_EMBEDDED].decode("utf-8", "replace")
            if size > MAX_EMBEDDED:
                text += "\n# ... (cut here by the report: the file has %d bytes; open it for the rest)\n" % size
            self.bodies.append(text)
            self._index[path] = (len(self.bodies) - 1, size)
        return self._index[path]


def _files(path, names, texts):
    """The files of `path` named in `names` (all of them when None) that the page shows."""
    files = []
    for name in sorted(set(os.listdir(path) if names is None else names), key=_natural_key):
        full = os.path.join(path, name)
        if name.startswith(".") or name in (INDEX, MANIFEST) or not os.path.isfile(full):
            continue
        try:
            body, size = texts.read(full)
        except OSError:
            continue
        files.append({"name": name, "path": full, "size": size, "kind": _kind(name),
                      "body": body, "lines": texts.bodies[body].count("\n") + 1})
    return files


def _natural_key(name):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _kind(name):
    if _GRAPH_FILE.match(name):
        return "kernel" if ".kernel_" in name else "graph"
    if _TRANSFORMED_FILE.match(name):
        return "transformed"
    if _FULL_CODE_FILE.match(name):
        return "full_code"
    return "other"


def _graphs(files, manifest):
    """Every __compiled_fn_<n> with its stage files in pipeline order: the files the
    manifest gives it, else those named after it."""
    present = {f["name"]: f for f in files}
    graphs, compile_ids, claimed = {}, {}, set()
    for g in (manifest or {}).get("graphs") or []:
        if not isinstance(g, dict) or not isinstance(g.get("name"), str):
            continue
        compile_ids.setdefault(g["name"], g.get("compile_id"))
        for name in g.get("files") or []:
            if isinstance(name, str) and name in present and name not in claimed and _GRAPH_FILE.match(name):
                claimed.add(name)
                graphs.setdefault(g["name"], []).append(present[name])
    for f in files:
        match = _GRAPH_FILE.match(f["name"])
        if match and f["name"] not in claimed:
            graphs.setdefault(match.group(1), []).append(f)
    out = []
    for fn in sorted(graphs, key=_natural_key):
        stages = []
        for f in graphs[fn]:
            _name, kernel, stage, index = _GRAPH_FILE.match(f["name"]).groups()
            stages.append(("kernel", int(kernel), f) if kernel is not None else (stage, int(index), f))
        stages.sort(key=lambda s: (_STAGE_ORDER.get(s[0], len(_STAGES) - 1.5), s[0], s[1]))
        has_backward = any(stage == "Backward_graph" for stage, _i, _f in stages)
        count, nth, views = collections.Counter(stage for stage, _i, _f in stages), collections.Counter(), []
        for stage, _i, f in stages:  # (a file's place among its stage's, not its number: processes number apart)
            views.append(_stage(stage, nth[stage], f, has_backward, count[stage]))
            nth[stage] += 1
        out.append({"name": fn, "compile_id": compile_ids.get(fn), "stages": views})
    return out


def _stage(stage, nth, f, has_backward, same_stage):
    """The page's view of one stage file, the `nth` (from 0) of `same_stage` files of that stage."""
    known = {name: (label, step) for name, label, step in _STAGES}
    label, step = known.get(stage, (stage.replace("_", " "), "other"))
    note = None
    if step in ("postgrad", "kernel") and has_backward and same_stage == 2:
        note = ("forward", "backward")[nth]  # Inductor compiles forward first
    elif same_stage > 1:
        note = "#%d" % nth
    return {"stage": stage, "label": label, "step": step, "note": note, "file": f["name"]}


def _is_recompile(compile_id):
    match = re.search(r"(\d+)/(\d+)$", compile_id or "")
    return bool(match) and int(match.group(2)) > 0


def _place(where):
    return "%s:%s:%s" % (where.get("file"), where.get("line"), where.get("name"))


def _function_keys(manifest):
    """key(where): what tells the function at `where` apart: its code object ("code"), or,
    for a compile that failed before Dynamo made code (no code object named), the one code
    object known at its place, if only one is (Dynamo names resume functions after a line)."""
    wheres = [c["function"] for c in manifest.get("compilations") or [] if c.get("function")]
    for fn in manifest.get("functions") or []:
        wheres += [fn] + [r for e in fn.get("entries") or [] for r in e.get("resumes") or []]
    codes = {}
    for where in wheres:
        if where.get("code") not in (None, _place(where)):
            codes.setdefault(_place(where), set()).add(where["code"])
    known = {place: found.pop() for place, found in codes.items() if len(found) == 1}

    def key(where):
        place = _place(where)
        return known.get(place, place) if where.get("code") in (None, place) else where["code"]
    return key


def _functions(manifest, text_of):
    """Functions with their compilations (in order), merging the live cache entries at exit."""
    functions, order = {}, []
    key_of = _function_keys(manifest)

    def function(where):
        key = key_of(where)
        if key not in functions:
            functions[key] = {"id": "f%d" % len(order), "name": where.get("name"), "file": where.get("file"),
                              "line": where.get("line"), "resume": str(where.get("name", "")).startswith(
                                  "torch_dynamo_resume_in_"),
                              "full_code": None, "source": None, "source_line": None,
                              "compilations": [], "check_order": None, "parent": None, "globals": []}
            order.append(key)
        return functions[key]

    compilations = {}
    for c in manifest.get("compilations") or []:
        if not c.get("function"):
            continue  # a compile that never got to its frame (nothing to show)
        record = dict(c, guards=None, resumes=[], in_cache=None)
        compilations[c["compile_id"]] = record
        function(c["function"])["compilations"].append(record)
    for info in manifest.get("functions") or []:
        fn = function(info)
        fn.update(full_code=info.get("full_code"), source=info.get("source"),
                  source_line=info.get("source_line"), check_order=[])
        for c in fn["compilations"]:
            c["in_cache"] = False
        for entry in info.get("entries") or []:
            record = compilations.get(entry.get("compile_id"))
            if record is None:  # compiled before depyf was listening
                record = {"compile_id": entry.get("compile_id"), "function": None, "stack": [],
                          "graph_breaks": [], "recompile_reasons": [], "guards_text": None,
                          "transformed": entry.get("transformed"), "graphs": [], "fail": None,
                          "finished": True}
                compilations[record["compile_id"]] = record
                fn["compilations"].append(record)
            record.update(guards=entry.get("guards"), resumes=entry.get("resumes") or [], in_cache=True)
            record["transformed"] = record.get("transformed") or entry.get("transformed")
            fn["check_order"].append(record["compile_id"])
    for key in order:
        fn = functions[key]
        fn["compilations"].sort(key=lambda c: _compile_order(c["compile_id"]))
        for c in fn["compilations"]:
            if not c["graphs"] and c.get("transformed"):
                c["graphs"] = _graphs_called(text_of(c["transformed"]))
            for r in c["resumes"]:
                target = function(r)
                r["id"] = target["id"]
                target["parent"] = target["parent"] or fn["id"]
                if r.get("global") and r["global"] not in target["globals"]:
                    target["globals"].append(r["global"])
            if c["guards"]:
                c["guards"] = [_guard_view(g) for g in c["guards"]]
    return [functions[key] for key in order]


# The end of a guard's comment: where Dynamo made it (`path:line in function`).
_GUARD_WHERE = re.compile(r"#\s*([^#]*:\d+ in [^#]*?)\s*$")


def _guard_view(guard):
    """A guard as the page shows it: "kind"; "expr", the Python expression it checks, or
    None (checked in C++); "check", the rest of what Dynamo says about it (the C++ check,
    an ID_MATCH's type); "code", the user's source line it comes from; "where"."""
    comment = guard.get("comment") or ""
    match = _GUARD_WHERE.search(comment)
    where = match.group(1) if match else None
    check, _, code = (comment[:match.start()] if match else comment).partition("#")
    return {"kind": guard.get("kind"), "expr": guard.get("expr"), "check": check.strip() or None,
            "code": code.strip() or None, "where": where}


def _graphs_called(text):
    """The __compiled_fn_<n> a transformed-code text calls, in order of first call."""
    found = []
    for name in re.findall(r"(__compiled_fn_\d+)(?![.\d])", text or ""):
        if name not in found:
            found.append(name)
    return found


def _compile_order(compile_id):
    return [int(n) for n in re.findall(r"\d+", compile_id or "")]


def _functions_from_names(files, text_of):
    """Without a manifest (an older dump): functions from full_code_* and transformed-code names."""
    functions = {}
    for f in files:
        for pattern in (_FULL_CODE_FILE, _TRANSFORMED_FILE):
            match = pattern.match(f["name"])
            if not match:
                continue
            label = match.group(2) if pattern is _TRANSFORMED_FILE else match.group(1)
            fn = functions.setdefault(label, {
                "id": "f%d" % len(functions), "name": label, "file": None, "line": None,
                "resume": label.startswith("torch_dynamo_resume_in_"), "full_code": None, "source": None,
                "source_line": None, "compilations": [], "check_order": None, "parent": None,
                "globals": []})
            if pattern is _FULL_CODE_FILE:
                fn["full_code"] = fn["full_code"] or f["name"]
            else:
                fn["compilations"].append({
                    "compile_id": None, "stack": [], "graph_breaks": [], "recompile_reasons": [],
                    "guards": None, "guards_text": None, "transformed": f["name"],
                    "graphs": _graphs_called(text_of(f["name"])),
                    "resumes": [], "fail": None, "in_cache": None})
    return list(functions.values())
