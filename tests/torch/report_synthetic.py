"""Synthetic dumps for the report tests that need no torch: the files and the
depyf_manifest.json a prepare_debug run of that size would write (same names,
same manifest fields, realistic file sizes)."""

import json
import os

STAGES = ("Captured_Graph", "Joint_graph", "Forward_graph", "Backward_graph")


def _graph_text(fn, stage, ops):
    lines = ["# %s: %s (synthetic).\n" % (fn, stage), "\n", "class GraphModule(torch.nn.Module):\n",
             '    def forward(self, arg0_1: "f32[64][1]cpu", arg1_1: "f32[64][1]cpu"):\n']
    for i in range(ops):
        lines.append('        mul_%d: "f32[64][1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, arg1_1);  '
                     "arg%d_1 = None\n" % (i, i % 2))
    lines.append("        return (mul_%d,)\n" % (ops - 1))
    return "".join(lines)


def _kernel_text(fn, k, size):
    body = "".join("    out_ptr0[x%d] = in_ptr0[x%d] * in_ptr1[x%d];  // step %d\n" % (i % 4, i % 4, i % 4, i)
                   for i in range(size))
    return ("# %s: the code Inductor generated for it.\n# AOT ID: ['%d_forward']\n"
            "cpp_fused_mul_%d = async_compile.cpp_pybinding(['const float*', 'float*'], r'''\n"
            "extern \"C\" void kernel(const float* in_ptr0, const float* in_ptr1, float* out_ptr0)\n{\n%s}\n''')\n\n"
            "def call(args):\n    arg0_1, arg1_1 = args\n    buf0 = empty_strided_cpu((64, ), (1, ), torch.float32)\n"
            "    cpp_fused_mul_%d(arg0_1, arg1_1, buf0)\n    return (buf0, )\n" % (fn, k, k, body, k))


def make_dump(path, functions=50, entries=4, ops=40, kernel_lines=150, rank=None, pids=None):
    """A dump of functions x entries compiled graphs (each recompiled entry after the first,
    one graph break in every entry); returns the number of graphs.

    With `pids`, that many processes dumped the same program into `path` at once, as
    prepare_debug in each would: each numbers its files past the others' (its graph
    `__compiled_fn_1` is `__compiled_fn_1.Captured_Graph.<k>.py` with its own k), and
    the manifest is the merged one (see depyf.report.record.merge)."""
    os.makedirs(path, exist_ok=True)
    parts = [_process_dump(path, functions, entries, ops, kernel_lines, rank, pid, i, len(pids or [1]))
             for i, pid in enumerate(pids or [1])]
    manifest = parts[0] if pids is None else _merged(parts)
    with open(os.path.join(path, "depyf_manifest.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(manifest))
    return functions * entries


def add_file(path, name, text):
    """Write one more file into the synthetic dump in `path`, listed in its manifest as a
    file depyf wrote (the report shows no other)."""
    with open(os.path.join(path, name), "w", encoding="utf-8") as f:
        f.write(text)
    manifest_path = os.path.join(path, "depyf_manifest.json")
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    manifest["files"].append(name)
    with open(manifest_path, "w", encoding="utf-8") as f:
        f.write(json.dumps(manifest))


def _process_dump(path, functions, entries, ops, kernel_lines, rank, pid, process, processes):
    """The files of process number `process` of `processes` (its k-th file of a kind is
    numbered process + k * processes) and its manifest."""
    written = []

    def write(name, text):
        written.append(name)
        with open(os.path.join(path, name), "w", encoding="utf-8") as f:
            f.write(text)

    def nth(k):
        return process + k * processes

    compilations, manifest_functions, graphs, n = [], [], [], 0
    for f in range(functions):
        name = "layer_%d" % f
        where = {"name": name, "file": "/src/model.py", "line": 10 + 20 * f, "code": "c%d" % f}
        entry_records = []
        for e in range(entries):
            n += 1
            fn = "__compiled_fn_%d" % n
            transformed = "__transformed_code_%d_for_%s.py" % (nth(e), name)
            write(transformed, "def __transformed_code_%d_for_%s(x):\n    graph_out_0 = %s_0f4c5794_7dd0_4ef9_84f8_e65a0c1e2f3a(x)\n"
                  "    return graph_out_0[0]\n" % (nth(e), name, fn))
            files = []
            for stage in STAGES:
                files.append("%s.%s.%d.py" % (fn, stage, nth(0)))
                write(files[-1], _graph_text(fn, "%s of process %s" % (stage, pid), ops))
            for k, part in enumerate(("forward", "backward")):
                files.append("%s.AFTER_POST_GRAD.%d.py" % (fn, nth(k)))
                write(files[-1], _graph_text(fn, "post grad " + part, ops))
                files.append("%s.kernel_%d.py" % (fn, nth(k)))
                write(files[-1], _kernel_text(fn, k, kernel_lines))
            graphs.append({"name": fn, "compile_id": "%d/%d" % (f, e), "files": files})
            compilations.append({
                "compile_id": "%d/%d" % (f, e), "function": where,
                "stack": [{"file": "/src/train.py", "line": 5, "name": "<module>", "code": "train()"},
                          {"file": "/src/model.py", "line": where["line"], "name": name, "code": None}],
                "graph_breaks": [{"file": "/src/model.py", "line": where["line"] + 2,
                                  "reason": "Encountered graph break\nFailed to trace builtin operator\n"
                                            "  Explanation: print is not traceable",
                                  "user_stack": "", "code": "print(x)"}],
                "recompile_reasons": ["%d/%d: tensor 'x' size mismatch at index 0" % (f, e - 1)] if e else [],
                "guards_text": None, "transformed": transformed, "graphs": [fn], "fail": None,
                "finished": True})
            entry_records.append({"compile_id": "%d/%d" % (f, e), "transformed": transformed,
                                  "guards": [{"kind": "TENSOR_MATCH", "expr": "check_tensor(L['x'])",
                                              "comment": "x = layer(x)"}], "resumes": []})
        full_code = "full_code_for_%s_%d.py" % (name, nth(0))
        write(full_code, "# explained %s\n" % name)
        manifest_functions.append(dict(where, resume=False, full_code=full_code,
                                       source="def %s(x):\n    x = x * 2\n    print(x)\n    return x\n" % name,
                                       source_line=where["line"], entries=list(reversed(entry_records))))
    process_keys = {"rank": rank, "pid": pid, "python": "3.11.7", "torch": "2.13.0", "updated": "2026-01-01 00:00:00"}
    return dict(process_keys, format="depyf-manifest", version=1, dump_dir=path, compilations=compilations,
                graphs=graphs, functions=manifest_functions, files=written + ["depyf_manifest.json"],
                processes=[dict(process_keys, files=written + ["depyf_manifest.json"])])


def _merged(parts):
    """The manifest the processes of one run leave: each record says its process, and
    compile ids and code keys start with "[pid <pid>] "."""
    merged = dict(parts[0], pid=", ".join(str(p["pid"]) for p in parts), rank=None,
                  processes=[p["processes"][0] for p in parts], compilations=[], graphs=[], functions=[],
                  files=sorted({name for p in parts for name in p["files"]}))
    for part in parts:
        tag, pid = "[pid %s] " % part["pid"], part["pid"]
        for c in part["compilations"]:
            merged["compilations"].append(dict(c, pid=pid, compile_id=tag + c["compile_id"],
                                               function=dict(c["function"], code=tag + c["function"]["code"])))
        merged["graphs"] += [dict(g, pid=pid, compile_id=tag + g["compile_id"]) for g in part["graphs"]]
        merged["functions"] += [dict(fn, pid=pid, code=tag + fn["code"],
                                     entries=[dict(e, compile_id=tag + e["compile_id"]) for e in fn["entries"]])
                                for fn in part["functions"]]
    return merged
