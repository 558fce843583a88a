"""Each function of depyf._torch_internals against the installed torch.

When a torch release moves one internal, exactly one of these tests names it.
"""
import logging
import sys

import pytest

torch = pytest.importorskip("torch")

from depyf import _torch_internals as ti  # noqa: E402

pytestmark = pytest.mark.torch


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def straight(a, b):
    return torch.sin(a) * b + 1


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("owner, name, lost", [
    ("torch._dynamo.convert_frame", "register_bytecode_hook", "Dynamo's transformed code as it is made"),
    ("torch.fx._utils", "lazy_format_graph_code", "graphs"),
    ("torch._logging._internal", "trace_structured", "the report's compile events"),
])
def test_a_torch_without_an_internal_loses_that_feature_only(owner, name, lost, monkeypatch, tmp_path, capsys):
    # depyf checks no torch version: each hook probes what it needs, and a torch that lacks
    # it (an older or newer release) switches that feature off, says so, and nothing else changes
    import importlib

    import depyf
    monkeypatch.delattr(importlib.import_module(owner), name)
    expected = toy_example(torch.ones(3), -torch.ones(3))
    with depyf.prepare_debug(str(tmp_path)):
        got = torch.compile(toy_example, backend="eager")(torch.ones(3), -torch.ones(3))
    assert torch.equal(got, expected)
    err = capsys.readouterr().err
    line = [x for x in err.splitlines() if "not dumped with this torch: " + lost in x]
    assert len(line) == 1 and line[0].endswith("(torch %s has no %s.%s)" % (torch.__version__, owner, name)), err
    note = (tmp_path / "depyf_unavailable.txt").read_text()
    assert lost in note and name in note
    dumped = sorted(p.name for p in tmp_path.iterdir())
    assert any(n.startswith("__transformed_code_") for n in dumped)  # (without the hook: from the cache)
    assert any(n.startswith("__compiled_fn_") for n in dumped) == (lost != "graphs")


def test_bytecode_hook_sees_each_transformed_frame_and_may_replace_it():
    seen = []

    def hook(original, code):
        seen.append(original.co_name)
        return code.replace(co_filename="/nowhere/replaced.py")

    remove = ti.register_bytecode_hook(hook)
    try:
        compiled = torch.compile(straight, backend="eager")
        out = compiled(torch.ones(3), torch.ones(3))
    finally:
        remove()
    assert seen == ["straight"]
    assert torch.equal(out, straight(torch.ones(3), torch.ones(3)))
    [entry] = ti.cache_entries(straight.__code__)
    assert entry.code.co_filename == "/nowhere/replaced.py"
    torch.compile(toy_example, backend="eager")(torch.ones(3), torch.ones(3))
    assert seen == ["straight"], "a removed hook is not called again"


@pytest.mark.hook_failures_expected
def test_a_hook_that_raises_is_logged_once_and_dynamo_goes_on(caplog):
    def hook(original, code):
        raise RuntimeError("boom")

    ti._reported.discard("bytecode")
    remove = ti.register_bytecode_hook(hook)
    try:
        with caplog.at_level(logging.WARNING, logger="depyf"):
            out = torch.compile(toy_example, backend="eager")(torch.ones(3), -torch.ones(3))
    finally:
        remove()
    assert torch.equal(out, toy_example(torch.ones(3), -torch.ones(3)))
    warnings = [r for r in caplog.records if "bytecode hook failed" in r.getMessage()]
    assert len(warnings) == 1 and "boom" in warnings[0].getMessage()


def test_compiled_codes_cache_entries_and_their_globals():
    compiled = torch.compile(toy_example, backend="eager")
    compiled(torch.ones(3), torch.ones(3))
    compiled(torch.ones(4, 2), torch.ones(4, 2))  # new rank: a recompilation
    assert toy_example.__code__ in ti.compiled_codes()
    entries = ti.cache_entries(toy_example.__code__)
    assert len(entries) == 2
    assert all(e.compile_id.endswith(("/0", "/1")) for e in entries)
    assert {e.compile_id for e in entries} != {entries[0].compile_id}
    assert ti.entry_globals(entries[0]) is globals()


def guarded_example(a, b):
    x = a / (torch.abs(a) + 1)
    return x * b


def test_guards_are_python_text_with_the_user_line_they_came_from():
    restore = ti.record_guard_sources()  # (as a dump does: torch <= 2.8 keeps the line only while logging guards)
    try:
        torch.compile(guarded_example, backend="eager")(torch.ones(3), torch.ones(3))
    finally:
        restore()
    assert "record_guard_sources" not in repr(torch._guards.GuardsSet.add), "restored"
    guards = ti.guards_of(ti.cache_entries(guarded_example.__code__)[0])
    kinds = {g.kind for g in guards}
    assert {"TENSOR_MATCH", "ID_MATCH", "GLOBAL_STATE"} <= kinds
    tensor_a = [g.text for g in guards if g.kind == "TENSOR_MATCH" and "L['a']" in g.text]
    assert tensor_a and "x = a / (torch.abs(a) + 1)" in tensor_a[0]
    aliasing = [g for g in guards if g.kind == "NO_TENSOR_ALIASING"]
    assert len(aliasing) == 1, "a relational guard under several managers is listed once"


def test_graph_logging_reports_every_stage_and_is_restored():
    names = []
    restore = ti.patch_graph_logging(lambda name, gm, maybe_id: names.append((name, type(gm))))
    try:
        a = torch.randn(4, requires_grad=True)
        torch.compile(straight, backend="aot_eager")(a, torch.randn(4)).sum().backward()
    finally:
        restore()
    stages = [name for name, _ in names]
    assert any(name.startswith("__compiled_fn_") for name in stages)
    assert {"Joint graph", "Forward graph", "Backward graph"} <= set(stages)
    assert all(issubclass(t, torch.fx.GraphModule) for _, t in names)
    original = torch.fx._utils.lazy_format_graph_code
    for name, module in sys.modules.items():
        bound = vars(module).get("lazy_format_graph_code") if name.startswith("torch") else None
        assert bound is None or bound is original, name


def test_graph_watch_is_on_that_graph_module_only_and_boxed_codegen(tmp_path):
    import copy

    from torch.fx._lazy_graph_module import _LazyGraphModule

    seen = []
    gm = torch.fx.symbolic_trace(torch.nn.Linear(2, 2))
    other = torch.fx.symbolic_trace(torch.nn.Linear(2, 2))
    assert ti.watch_graph(gm, str(tmp_path / "g.py"), seen.append)
    gm.recompile()
    other.recompile()
    assert seen == [gm] and ti.graph_file(gm) == str(tmp_path / "g.py") and ti.graph_file(other) is None
    assert torch.fx.GraphModule.recompile.__module__ == "torch.fx.graph_module", "GraphModule itself unchanged"
    duplicate = copy.deepcopy(gm)
    assert seen[-1] is duplicate and ti.graph_file(duplicate) == ti.graph_file(gm), "copies are watched"
    lazy = _LazyGraphModule(gm, gm.graph)
    assert ti.watch_graph(lazy, str(tmp_path / "lazy.py"), seen.append) and ti.needs_codegen(lazy)
    lazy(torch.ones(2))  # a lazy graph module generates its code on its first call
    assert seen[-1] is lazy and not ti.needs_codegen(lazy)
    del seen[1:]
    assert not ti.is_boxed_codegen(gm)
    boxed = getattr(torch.fx.graph, "_BoxedCodeGen", None)
    if boxed is None:  # (torch <= 2.9: AOTAutograd boxes a graph by a wrapper, not by its codegen)
        return
    gm.graph.set_codegen(boxed())
    gm.recompile()
    assert ti.is_boxed_codegen(gm) and seen == [gm, gm]


def test_run_graph_from_file_runs_the_same_instructions_from_that_file(tmp_path):
    def module(x, w):
        return torch.relu(x @ w) * 2

    torch.manual_seed(0)
    gm = torch.fx.symbolic_trace(module)
    x = (torch.randn(2, 3), torch.randn(3, 3))
    expected = gm(*x)
    for i, text in enumerate(["# header line\n" + ti.graph_code(gm), ti.readable_graph(gm)]):
        path = str(tmp_path / ("graph_%d.py" % i))
        with open(path, "w") as f:
            f.write(text)
        assert ti.run_graph_from_file(gm, path, text)
        assert type(gm).forward.__code__.co_filename == path
        assert torch.equal(gm(*x), expected)
    changed = ti.graph_code(gm).replace("relu", "sigmoid")
    assert not ti.run_graph_from_file(gm, str(tmp_path / "other.py"), changed), \
        "source that compiles to other instructions is refused"
    assert type(gm).forward.__code__.co_filename == path
    other = torch.fx.symbolic_trace(module)
    assert type(other).forward.__code__.co_filename != path, "only that graph module changed"


def test_readable_graph_shows_shapes_of_every_value():
    gm = torch.fx.symbolic_trace(torch.nn.Linear(3, 2))
    from torch.fx.passes.shape_prop import ShapeProp
    ShapeProp(gm).propagate(torch.randn(4, 3))
    text = ti.readable_graph(gm)
    assert "class " in text and "def forward(self" in text
    assert 'linear: "f32[4, 2]' in text, text


def test_output_code_loading_can_load_inductor_wrapper_from_another_file(tmp_path):
    redirected = []

    def callback(source, path, linemap):
        new_path = str(tmp_path / ("kernel_%d.py" % len(redirected)))
        with open(new_path, "w") as f:
            f.write("# moved\n" + source)
        redirected.append(new_path)
        return new_path, ti.shift_linemap(linemap, 1)

    from torch._inductor.codecache import PyCodeCache
    original = PyCodeCache.__dict__["load_by_key_path"]
    restore = ti.patch_output_code_loading(callback)
    try:
        with ti.compile_caches_disabled():
            out = torch.compile(straight, backend="inductor")(torch.ones(3), torch.ones(3))
    finally:
        restore()
    assert PyCodeCache.__dict__["load_by_key_path"] is original
    assert torch.allclose(out, straight(torch.ones(3), torch.ones(3)))
    assert len(redirected) == 1
    assert any(getattr(m, "__file__", None) == redirected[0] for m in PyCodeCache.modules)


def test_compile_caches_disabled_restores_the_config():
    import torch._functorch.config as fconfig
    import torch._inductor.config as iconfig
    before = (fconfig.enable_autograd_cache, iconfig.fx_graph_cache)
    with ti.compile_caches_disabled():
        assert (fconfig.enable_autograd_cache, iconfig.fx_graph_cache) == (False, False)
    assert (fconfig.enable_autograd_cache, iconfig.fx_graph_cache) == before


def test_debugger_frames_are_skipped_by_dynamo_only_while_depyf_is_active(tmp_path):
    """A debugger stopped in compiled code runs its own functions in that thread; Dynamo
    must not compile them (torch 2.6 failed on debugpy's and never answered `evaluate`)."""
    import importlib.util

    import torch._dynamo.trace_rules as trace_rules

    debugpy = importlib.util.find_spec("debugpy")
    if debugpy is None:
        pytest.skip("debugpy is not installed")
    debugger_file = debugpy.submodule_search_locations[0] + "/server/cli.py"
    user_file = str(tmp_path / "model.py")
    assert not trace_rules.check_file(debugger_file).skipped
    restore = ti.skip_debugger_frames()
    try:
        assert trace_rules.check_file(debugger_file).skipped
        assert not trace_rules.check_file(user_file).skipped  # the program itself is compiled as before
    finally:
        restore()
    assert not trace_rules.check_file(debugger_file).skipped


def test_process_rank_follows_torchrun(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert ti.process_rank() is None
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    assert ti.process_rank() == 1
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert ti.process_rank() is None


class UserModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.linear(x).relu()


def test_unwrap_compiled_finds_the_frame_dynamo_compiled():
    compiled = torch.compile(straight, backend="eager")
    assert ti.unwrap_compiled(compiled) is straight
    assert ti.unwrap_compiled(straight) is straight
    user = torch.compile(UserModule(), backend="eager")
    user(torch.ones(1, 2))
    assert ti.unwrap_compiled(user).__code__ is UserModule.forward.__code__
    builtin = torch.compile(torch.nn.Linear(2, 2), backend="eager")
    builtin(torch.ones(1, 2))
    fn = ti.unwrap_compiled(builtin)
    assert ti.cache_entries(fn.__code__), "torch.nn modules run inside Dynamo's wrapper frame"
    with pytest.raises(TypeError):
        ti.unwrap_compiled(42)


def test_graph_module_of_an_eager_compiled_fn_and_the_compile_id():
    ids = []
    restore = ti.patch_graph_logging(lambda name, gm, _: ids.append(ti.current_compile_id()))
    try:
        torch.compile(straight, backend="eager")(torch.ones(3), torch.ones(3))
    finally:
        restore()
    assert ids and all(i is not None and "/" in i for i in ids)
    assert ti.current_compile_id() is None
    names = [n for n in straight.__globals__ if n.startswith("__compiled_fn_")]
    latest = max(names, key=lambda n: int(n.split("_")[4]))
    gm = ti.graph_module_of(straight.__globals__[latest])
    assert isinstance(gm, torch.fx.GraphModule) and "torch.sin" in ti.graph_code(gm)
    assert ti.graph_module_of(len) is None


def test_bytecode_logger_is_dynamos():
    logger = ti.bytecode_logger()
    assert isinstance(logger, logging.Logger) and "bytecode" in logger.name
