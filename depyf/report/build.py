"""Build the report page of a dump directory (no torch needed).

The page is depyf/report/assets/report.html with the stylesheet, the scripts
and the data filled in.  The data is one JSON object describing each run (one
per rank directory, or the dump directory itself); every file's text is
embedded separately and only parsed when the page shows or searches it, so a
dump with hundreds of graphs still opens at once.
"""

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
    """Write dump_dir/index.html for the dump in `dump_dir`; return its path."""
    dump_dir = os.path.abspath(os.fspath(dump_dir))
    if not os.path.isdir(dump_dir):
        raise ReportError("not a directory")
    html = render(dump_dir)
    path = os.path.join(dump_dir, INDEX)
    # Atomic: ranks of a distributed run each rewrite the page when they finish.
    fd, tmp = tempfile.mkstemp(dir=dump_dir, prefix=".depyf-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
            f.write(html)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def render(dump_dir):
    """The report page of `dump_dir` as HTML text."""
    bodies = []
    runs = [_run(label, path, bodies) for label, path in _run_dirs(dump_dir)]
    data = {"dir": dump_dir, "generated": time.strftime("%Y-%m-%d %H:%M:%S"), "runs": runs}
    with open(os.path.join(_ASSETS, "report.html"), encoding="utf-8") as f:
        page = f.read()
    parts = {
        "TITLE": _html_escape("depyf report: %s" % os.path.basename(dump_dir) or dump_dir),
        "STYLE": _asset("report.css"),
        "SCRIPT": _asset("highlight.js") + "\n" + _asset("report.js"),
        "DATA": _script_json(data),
        "BODIES": "\n".join('<script type="application/json" id="b%d">%s</script>' % (i, _script_json(text))
                            for i, text in enumerate(bodies)),
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


def _load_manifest(path):
    try:
        manifest = json.loads(read_regular(os.path.join(path, MANIFEST), follow_symlinks=False).decode("utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) and manifest.get("format") == "depyf-manifest" else None


def _run(label, path, bodies):
    manifest = _load_manifest(path)
    files = _files(path, bodies)
    by_name = {f["name"]: f for f in files}
    graphs = _graphs(files, manifest)

    def text_of(name):
        return bodies[by_name[name]["body"]] if name in by_name else None

    functions = None
    if manifest:
        try:
            functions = _functions(manifest, text_of)
        except (KeyError, TypeError, ValueError, AttributeError):  # written by another depyf version
            manifest = None
    if functions is None:
        functions = _functions_from_names(files, text_of)
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
        meta = {k: manifest.get(k) for k in ("python", "torch", "pid", "rank", "updated")}
    return {"label": label, "dir": path, "meta": meta, "files": files, "graphs": graphs,
            "functions": functions, "counts": counts}


def _files(path, bodies):
    files = []
    for name in sorted(os.listdir(path), key=_natural_key):
        full = os.path.join(path, name)
        if name.startswith(".") or name in (INDEX, MANIFEST) or not os.path.isfile(full):
            continue
        try:
            with RegularFile(full, limit=None, follow_symlinks=False) as f:
                raw, size = f.read(MAX_EMBEDDED + 1), f.size
        except OSError:
            continue
        text = raw[:MAX_EMBEDDED].decode("utf-8", "replace")
        if size > MAX_EMBEDDED:
            text += "\n# ... (cut here by the report: the file has %d bytes; open it for the rest)\n" % size
        bodies.append(text)
        files.append({"name": name, "path": full, "size": size, "kind": _kind(name),
                      "body": len(bodies) - 1, "lines": text.count("\n") + 1})
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
    """Every __compiled_fn_<n> with its stage files in pipeline order."""
    graphs = {}
    for f in files:
        match = _GRAPH_FILE.match(f["name"])
        if not match:
            continue
        fn, kernel, stage, index = match.groups()
        stage = "kernel" if kernel is not None else stage
        index = int(kernel if kernel is not None else index)
        graphs.setdefault(fn, []).append((stage, index, f))
    compile_ids = {}
    for g in (manifest or {}).get("graphs") or []:
        if isinstance(g, dict):
            compile_ids[g.get("name")] = g.get("compile_id")
    out = []
    for fn in sorted(graphs, key=_natural_key):
        stages = sorted(graphs[fn], key=lambda s: (_STAGE_ORDER.get(s[0], len(_STAGES) - 1.5), s[0], s[1]))
        has_backward = any(stage == "Backward_graph" for stage, _i, _f in stages)
        out.append({"name": fn, "compile_id": compile_ids.get(fn),
                    "stages": [_stage(stage, index, f, has_backward, len([s for s in stages if s[0] == stage]))
                               for stage, index, f in stages]})
    return out


def _stage(stage, index, f, has_backward, same_stage):
    known = {name: (label, step) for name, label, step in _STAGES}
    label, step = known.get(stage, (stage.replace("_", " "), "other"))
    note = None
    if step in ("postgrad", "kernel") and has_backward and same_stage == 2:
        note = ("forward", "backward")[index] if index < 2 else None  # Inductor compiles forward first
    if same_stage > 1 and note is None:
        note = "#%d" % index
    return {"stage": stage, "label": label, "step": step, "note": note, "file": f["name"]}


def _is_recompile(compile_id):
    match = re.search(r"(\d+)/(\d+)$", compile_id or "")
    return bool(match) and int(match.group(2)) > 0


def _key(where):
    return where.get("code") or "%s:%s:%s" % (where.get("file"), where.get("line"), where.get("name"))


def _functions(manifest, text_of):
    """Functions with their compilations (in order), merging the live cache entries at exit."""
    functions, order = {}, []

    def function(where):
        key = _key(where)
        if key not in functions:
            functions[key] = {"id": "f%d" % len(order), "name": where.get("name"), "file": where.get("file"),
                              "line": where.get("line"), "resume": str(where.get("name", "")).startswith(
                                  "torch_dynamo_resume_in_"),
                              "full_code": None, "source": None, "source_line": None,
                              "compilations": [], "check_order": None, "parent": None}
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
    return [functions[key] for key in order]


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
                "source_line": None, "compilations": [], "check_order": None, "parent": None})
            if pattern is _FULL_CODE_FILE:
                fn["full_code"] = fn["full_code"] or f["name"]
            else:
                fn["compilations"].append({
                    "compile_id": None, "stack": [], "graph_breaks": [], "recompile_reasons": [],
                    "guards": None, "guards_text": None, "transformed": f["name"],
                    "graphs": _graphs_called(text_of(f["name"])),
                    "resumes": [], "fail": None, "in_cache": None})
    return list(functions.values())
