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


def make_dump(path, functions=50, entries=4, ops=40, kernel_lines=150, rank=None):
    """A dump of functions x entries compiled graphs (each recompiled entry after the first,
    one graph break in every entry); returns the number of graphs."""
    os.makedirs(path, exist_ok=True)

    def write(name, text):
        with open(os.path.join(path, name), "w", encoding="utf-8") as f:
            f.write(text)

    compilations, manifest_functions, graphs, n = [], [], [], 0
    for f in range(functions):
        name = "layer_%d" % f
        where = {"name": name, "file": "/src/model.py", "line": 10 + 20 * f, "code": "c%d" % f}
        entry_records = []
        for e in range(entries):
            n += 1
            fn = "__compiled_fn_%d" % n
            transformed = "__transformed_code_%d_for_%s.py" % (e, name)
            write(transformed, "def __transformed_code_%d_for_%s(x):\n    graph_out_0 = %s_0f4c5794_7dd0_4ef9_84f8_e65a0c1e2f3a(x)\n"
                  "    return graph_out_0[0]\n" % (e, name, fn))
            files = []
            for stage in STAGES:
                files.append("%s.%s.0.py" % (fn, stage))
                write(files[-1], _graph_text(fn, stage, ops))
            for k, part in enumerate(("forward", "backward")):
                files.append("%s.AFTER_POST_GRAD.%d.py" % (fn, k))
                write(files[-1], _graph_text(fn, "post grad " + part, ops))
                files.append("%s.kernel_%d.py" % (fn, k))
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
        write("full_code_for_%s_0.py" % name, "# explained %s\n" % name)
        manifest_functions.append(dict(where, resume=False, full_code="full_code_for_%s_0.py" % name,
                                       source="def %s(x):\n    x = x * 2\n    print(x)\n    return x\n" % name,
                                       source_line=where["line"], entries=list(reversed(entry_records))))
    manifest = {"format": "depyf-manifest", "version": 1, "dump_dir": path, "rank": rank, "pid": 1,
                "python": "3.11.7", "torch": "2.13.0", "updated": "2026-01-01 00:00:00",
                "compilations": compilations, "graphs": graphs, "functions": manifest_functions}
    write("depyf_manifest.json", json.dumps(manifest))
    return n
