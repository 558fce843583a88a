"""Every torch internal depyf touches, each behind one small function.

torch.compile offers no stable API for what depyf shows, so these functions
reach into Dynamo, FX, AOTAutograd and Inductor.  Keeping them here means a
torch release that moves one thing breaks one function.  Nothing checks the
torch version: each internal is probed where it is used, by what it offers.
A hook whose internal this torch lacks raises Unavailable when installed; the
caller switches that one feature off and says so (see depyf/_dump.py).

Every patch returned here is undone by calling it (`restore()`); every hook
wrapper calls torch's original code whatever our callback does, and a callback
that raises is logged once and otherwise ignored.
"""

import collections
import contextlib
import copy
import gc
import inspect
import logging
import os
import re
import sys
import types
import weakref

import torch
import torch._dynamo
import torch._dynamo.convert_frame
import torch._dynamo.eval_frame
import torch._dynamo.utils
import torch.fx

log = logging.getLogger("depyf")


class Unavailable(Exception):
    """This torch lacks an internal that one depyf feature needs (the message names it)."""


def _require(owner, name, where):
    """owner.name, or Unavailable naming `where.name`."""
    value = getattr(owner, name, None)
    if value is None:
        raise Unavailable("torch %s has no %s.%s" % (torch.__version__, where, name))
    return value


_reported = set()


def _callback_failed(what, exc):
    """One warning per failing hook and process; the program goes on as without depyf."""
    if what not in _reported:
        _reported.add(what)
        log.warning("depyf: the %s hook failed (%s: %s); torch goes on as without depyf "
                    "(later failures of this hook are not logged)", what, type(exc).__name__, exc)


# ---------------------------------------------------------------- keeping Dynamo out

# Torch calls depyf's hooks from its own code, and that code may run while Dynamo's
# frame evaluation is on: a backward that runs inside a compiled function compiles
# its graph right then (AOTAutograd compiles backward lazily), logging and the
# structured trace run, graph modules are recompiled.  Dynamo would then compile the
# hooks' frames as user code (more frames, graph breaks, resume functions in depyf).
# So every function torch may call is marked as one Dynamo skips (`outside_dynamo`),
# and depyf's own work runs with frame evaluation off (`_call_safely`), while torch's
# original function still runs as it would without depyf.
_eval_frame = getattr(torch._C._dynamo, "eval_frame", None)
# torch 2.6-2.15: torch._C._dynamo.eval_frame.set_eval_frame(callback) -> the previous one
_set_eval_frame = getattr(_eval_frame, "set_eval_frame", None)
# torch >= 2.6 (FrameExecStrategy): torch._dynamo.eval_frame.skip_code; older ones had it in C
_skip_code = (getattr(torch._dynamo.eval_frame, "skip_code", None)
              or getattr(_eval_frame, "skip_code", None))


def outside_dynamo(fn):
    """Mark fn's code so that Dynamo never compiles a frame of it; returns fn."""
    if _skip_code is not None:
        _skip_code(fn.__code__)
    return fn


@outside_dynamo
def _call_safely(what, callback, *args):
    """callback(*args) with Dynamo's frame evaluation off; None (and a warning) if it raised.

    The cyclic garbage collector waits meanwhile: what depyf allocates and frees again
    (syntax trees, text) then starts no collection, which would move torch's live
    objects toward the next full collection (a few tenths of a second in a process that
    holds torch); collection goes on as usual once the callback returns."""
    prior = _set_eval_frame(None) if _set_eval_frame is not None else None
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        return callback(*args)
    except Exception as exc:  # a depyf bug must never reach the user's program
        _callback_failed(what, exc)
        return None
    finally:
        if collecting:
            gc.enable()
        if _set_eval_frame is not None:
            _set_eval_frame(prior)


def _set_attr(obj, name, value):
    """Set obj.name and return the function that puts the old value back."""
    had = name in vars(obj)
    old = vars(obj).get(name)
    setattr(obj, name, value)

    def restore():
        if had:
            setattr(obj, name, old)
        else:
            delattr(obj, name)
    return restore


# ---------------------------------------------------------------- Dynamo bytecode

def register_bytecode_hook(hook):
    """Call hook(original_code, transformed_code) after Dynamo transforms a frame.

    The hook may return a replacement code object (or None to keep Dynamo's).
    Returns the function that removes the hook.
    """
    @outside_dynamo
    def safe_hook(code, new_code):
        replacement = _call_safely("bytecode", hook, code, new_code)
        return replacement if isinstance(replacement, type(new_code)) else None

    register = _require(torch._dynamo.convert_frame, "register_bytecode_hook", "torch._dynamo.convert_frame")
    handle = register(safe_hook)
    return handle.remove


def register_raw_bytecode_hook(hook):
    """Register hook(original_code, transformed_code) as torch calls it: what it returns
    and raises reach Dynamo unchanged (the original depyf's wrapper class, and the code
    built on it, rely on that).  Returns the function that removes the hook."""
    register = _require(torch._dynamo.convert_frame, "register_bytecode_hook", "torch._dynamo.convert_frame")
    return register(hook).remove


def compiling_frame_locals(code):
    """Inside the bytecode hook: the locals (arguments) of the frame Dynamo is compiling
    into `code`'s transformed code, or None when not found.

    Dynamo's convert_frame passes that frame down as a local of its own frames below the
    hook (`frame` in torch 2.2-2.13's `_compile`); it is found by what it is, an object
    whose class has `f_code` and `f_locals` and whose code is `code`, not by names."""
    def is_the_frame(value):
        kind = type(value)
        return hasattr(kind, "f_code") and hasattr(kind, "f_locals") and value.f_code is code

    frame = _local_below_hook(is_the_frame)
    return None if frame is None else frame.f_locals


def compiling_globals(code):
    """Inside the bytecode hook: the globals of the frame Dynamo compiled into `code`.

    Dynamo binds the graphs and resume functions `code` calls in that dict
    before the hook runs; it is a local of one of Dynamo's frames below the hook
    (found by what it holds, not by the frame's name).  None when not found.
    """
    wanted = [n for n in code.co_names if n.startswith(("__compiled_fn", "__resume_at"))]
    if not wanted:
        return None
    return _local_below_hook(lambda value: type(value) is dict and all(n in value for n in wanted))


def _local_below_hook(wanted, depth=64):
    """The first local variable of the frames below the caller's caller (at most `depth`
    of them, innermost first) for which wanted(value) holds, or None."""
    frame = sys._getframe(2)
    try:
        for _ in range(depth):
            if frame is None:
                return None
            for value in frame.f_locals.values():
                if wanted(value):
                    return value
            frame = frame.f_back
    finally:
        del frame  # no reference cycle through the stack
    return None


def callers_outside_torch():
    """Inside the bytecode hook: the frames of the program that led to the compile, outermost
    first, as (file, line, name): every frame outside torch.compile's machinery (above
    Dynamo's frame conversion), torch's own frames there included (`nn.Module.__call__`,
    torch.compile's wrapper), as in Dynamo's graph-break traceback.  (Torch's structured
    trace has such a stack too, but on Python 3.13 with torch 2.13 it drops the caller of a
    compiled frame called from a list comprehension.)"""
    # Dynamo's frame callback lives in torch/_dynamo/convert_frame.py (torch 2.x): its outermost
    # frame is where the program's own stack ends.
    machinery = getattr(torch._dynamo.convert_frame, "__file__", None)
    inner_first = []
    frame = sys._getframe(1)
    try:
        while frame is not None and len(inner_first) < 1000:
            inner_first.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
            frame = frame.f_back
    finally:
        del frame  # no reference cycle through the stack
    ends = [i for i, (path, _line, _name) in enumerate(inner_first) if path == machinery]
    if ends:
        return inner_first[ends[-1] + 1:][::-1]
    # (a torch that converts frames elsewhere: the frames outside torch and depyf)
    skip = tuple(os.path.dirname(m.__file__) + os.sep for m in (torch, sys.modules["depyf"]))
    return [f for f in inner_first if not f[0].startswith(skip)][::-1]


def bytecode_logger():
    """The logger Dynamo writes ORIGINAL/MODIFIED BYTECODE to (TORCH_LOGS=+bytecode)."""
    return _require(torch._dynamo.convert_frame, "bytecode_log", "torch._dynamo.convert_frame")


def compiled_codes():
    """Original code objects that Dynamo transformed and that are still alive, oldest first."""
    seen, codes = set(), []
    orig_code_map = _require(torch._dynamo.utils, "orig_code_map", "torch._dynamo.utils")
    for code in list(orig_code_map.values.values()):
        if id(code) not in seen:
            seen.add(id(code))
            codes.append(code)
    return codes


CacheEntry = collections.namedtuple("CacheEntry", "code compile_id guard_manager")


def cache_entries(code):
    """Dynamo's cache entries for `code`, in the order its dispatcher checks them."""
    entries = _require(torch._dynamo.eval_frame, "_debug_get_cache_entry_list", "torch._dynamo.eval_frame")(code)
    return [CacheEntry(e.code, str(getattr(e, "compile_id", "?")), getattr(e, "guard_manager", None))
            for e in entries]


def entry_globals(entry):
    """The globals of the frame the entry was compiled for (where resume functions live)."""
    scope = getattr(entry.guard_manager, "global_scope", None) or {}  # (None: no guard manager)
    found = scope.get("G")
    return found if isinstance(found, dict) else None


Guard = collections.namedtuple("Guard", "kind text")


def guards_of(entry):
    """Every leaf guard of the entry's guard manager tree, in check order.

    Each is a Guard(kind, text) where text is a verbose code part as Dynamo
    prints it: a Python expression, then `# user source line  # file:line`.
    """
    import torch._C._dynamo.guards as guard_types

    if entry.guard_manager is None:
        return []
    DictGuardManager = guard_types.DictGuardManager
    RelationalGuard = getattr(guard_types, "RelationalGuard", None)
    root = entry.guard_manager.root
    guards, seen_relational = [], []  # relational guards sit under several managers: show once

    def relational_seen(guard):
        if RelationalGuard is None:  # (torch <= 2.7 exports no such type: one check, one text)
            key = (type(guard).__name__, tuple(guard.verbose_code_parts()))
            if key in seen_relational:
                return True
            seen_relational.append(key)
            return False
        if not isinstance(guard, RelationalGuard):
            return False
        if any(guard is seen for seen in seen_relational):
            return True
        seen_relational.append(guard)
        return False

    def leaves(mgr):
        for guard in mgr.get_leaf_guards():
            if relational_seen(guard):
                continue
            for text in guard.verbose_code_parts():
                guards.append(Guard(type(guard).__name__, text))

    def visit(mgr, depth=0):
        if mgr is None or depth > 200:
            return
        leaves(mgr)
        if isinstance(mgr, DictGuardManager):
            for _idx, (key_mgr, value_mgr) in sorted(mgr.get_key_value_managers().items()):
                visit(key_mgr, depth + 1)
                visit(value_mgr, depth + 1)
        for child in mgr.get_child_managers():
            visit(child, depth + 1)

    visit(root)
    for guard in getattr(root, "get_epilogue_lambda_guards", list)():
        for text in guard.verbose_code_parts():
            guards.append(Guard(type(guard).__name__, text))
    return guards


def record_guard_sources():
    """Give every guard Dynamo installs the user line it came from, as torch >= 2.9 always
    does (torch <= 2.8 records it only while guards are logged).  Returns the restore."""
    from torch._guards import GuardsSet, TracingContext

    original = _require(GuardsSet, "add", "torch._guards.GuardsSet")
    if "user_stack" in getattr(getattr(original, "__code__", None), "co_names", ()):
        return lambda: None  # (this torch's own `add` records it: a wrapper would only cost time)
    extract = _require(TracingContext, "extract_stack", "torch._guards.TracingContext")

    def record(guard):  # (after torch's add: the line comes from Dynamo's tracing state, not this stack)
        if getattr(guard, "user_stack", False) is None:
            guard.user_stack = extract()

    # Torch names a guard with no user line after the frame that called `add`, `skip` frames
    # up (`skip` since torch 2.1; probed): one more, so that it is torch's frame and
    # not this wrapper.
    try:
        takes_skip = "skip" in inspect.signature(original).parameters
    except (TypeError, ValueError):
        takes_skip = False

    @outside_dynamo
    def add(self, guard, *args, **kwargs):
        if takes_skip:
            kwargs["skip"] = kwargs.get("skip", 0) + 1
        result = original(self, guard, *args, **kwargs)
        if getattr(guard, "user_stack", False) is None:  # (torch >= 2.9 has set it: nothing to do)
            _call_safely("guard sources", record, guard)
        return result

    return _set_attr(GuardsSet, "add", add)


def unwrap_compiled(obj):
    """The function whose code Dynamo compiled for a torch.compile'd object.

    Accepts what torch.compile returns for a function or an nn.Module, the
    original function, a bound method, or a module compiled in place.  For
    torch.nn's own modules Dynamo compiles a small wrapper frame (`inner`)
    around the module; that wrapper is returned when it holds the cache entries.
    """
    from torch._dynamo.eval_frame import OptimizedModule, innermost_fn

    candidates = []
    if isinstance(obj, OptimizedModule):
        candidates.append(obj.forward)
        obj = obj._orig_mod
    if isinstance(obj, torch.nn.Module):
        if hasattr(obj, "_compiled_call_impl") and obj._compiled_call_impl is not None:
            candidates.append(obj._compiled_call_impl)
        obj = type(obj).forward
    candidates.append(obj)
    functions = []
    for candidate in candidates:
        fn = innermost_fn(candidate)
        fn = getattr(fn, "__func__", fn)
        if isinstance(getattr(fn, "__code__", None), type(unwrap_compiled.__code__)):
            functions.append(fn)
    if not functions:
        raise TypeError("depyf: expected a function or nn.Module compiled by torch.compile, got %s"
                        % type(obj).__name__)
    for fn in functions:
        if cache_entries(fn.__code__):
            return fn
    return functions[-1]


def graph_module_of(compiled_fn):
    """The FX GraphModule a `__compiled_fn_*` global runs directly (eager backend), else None."""
    fn = compiled_fn
    for _ in range(20):
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, torch.fx.GraphModule):
            return owner
        fn = getattr(fn, "_torchdynamo_orig_callable", None) or getattr(fn, "__wrapped__", None)
        if fn is None:
            return None
    return None


def graph_inputs(gm):
    """The input names of an FX graph, as its forward's parameters (Dynamo's placeholders)."""
    return tuple(str(n.target) for n in gm.graph.nodes if n.op == "placeholder")


def current_compile_id():
    """The Dynamo compile id ("frame/attempt") being compiled right now, or None."""
    current = getattr(torch._guards.CompileContext, "current_compile_id", None)
    cid = current() if current is not None else None
    return None if cid is None else str(cid)


# ---------------------------------------------------------------- FX graphs

def patch_graph_logging(callback):
    """Call callback(name, gm, maybe_id) whenever torch formats a graph for its logs.

    Dynamo (captured graph, named after its `__compiled_fn_*`), AOTAutograd
    (joint, forward, backward) and Inductor (pre/post grad) all go through
    `lazy_format_graph_code`, whether or not logging is enabled.  Torch modules
    import the function by name, so every torch module binding it is patched.
    """
    import torch.fx._utils

    original = _require(torch.fx._utils, "lazy_format_graph_code", "torch.fx._utils")

    @outside_dynamo
    def logged(name, gm, maybe_id=None, **kwargs):
        _call_safely("graph logging", callback, name, gm, maybe_id)
        return original(name, gm, maybe_id, **kwargs)

    _rebind_everywhere("lazy_format_graph_code", original, logged)
    return lambda: _rebind_everywhere("lazy_format_graph_code", logged, original)


def _rebind_everywhere(name, old, new):
    """Every torch module whose global `name` is `old` gets `new` instead (torch
    modules import such functions by name; the defining module is among them,
    so modules imported later bind `new` too)."""
    for modname, module in list(sys.modules.items()):
        if modname.startswith("torch") and module is not None:
            if getattr(module, "__dict__", {}).get(name) is old:
                setattr(module, name, new)


_GRAPH_FILE = "_depyf_graph_file"  # set on a graph module's own class: the file it runs from


def graph_file(gm):
    """The file gm's forward runs from, or is to run from once generated (see watch_graph)."""
    return vars(type(gm)).get(_GRAPH_FILE)


def needs_codegen(gm):
    """Whether gm is a lazy graph module whose forward is not generated yet (torch 2.6-2.15's
    _LazyGraphModule generates it on first call, or when its code is read)."""
    pending = getattr(gm, "_needs_recompile", None)
    return bool(pending is not None and pending())


def watch_graph(gm, path, callback):
    """Note that gm's forward is to run from `path`; call callback(gm) whenever torch
    generates gm's forward (recompile, a lazy graph module's first code), and callback(copy)
    for each deep copy (AOTAutograd compiles one of its backward), which inherits `path`.

    Only gm changes: GraphModule gives every instance its own class, and the hooks
    go on that class (never on GraphModule itself, whose recompile user code may
    call inside a compiled function, where Dynamo must see torch's own method).
    Returns False for a graph module without a class of its own."""
    cls = type(gm)
    if not cls.__qualname__.endswith("GraphModuleImpl"):
        return False
    setattr(cls, _GRAPH_FILE, path)
    if "recompile" in vars(cls):
        return True

    @outside_dynamo
    def recompile(self, *args, **kwargs):
        result = super(cls, self).recompile(*args, **kwargs)
        _call_safely("FX recompile", callback, self)
        return result

    @outside_dynamo
    def real_recompile(self, *args, **kwargs):
        result = super(cls, self)._real_recompile(*args, **kwargs)
        _call_safely("FX recompile", callback, self)
        return result

    def watch_copy(copy):
        if watch_graph(copy, vars(cls).get(_GRAPH_FILE), callback):
            callback(copy)

    @outside_dynamo
    def copied(copy):
        _call_safely("FX deep copy", watch_copy, copy)

    @outside_dynamo
    def deepcopy(self, memo):
        copy = super(cls, self).__deepcopy__(memo)
        _call_safely("FX deep copy", watch_copy, copy)
        return copy

    cls.recompile = recompile
    if hasattr(cls, "_real_recompile"):  # (a lazy graph module generates its code through it)
        cls._real_recompile = real_recompile
    copied.depyf = True
    hooks = getattr(gm, "_deepcopy_hooks", None)  # (GraphModule._register_deepcopy_hook; torch 2.6 has none)
    if isinstance(hooks, list):
        if not any(getattr(h, "depyf", False) for h in hooks):
            hooks.append(copied)  # (copies inherit the list: copies of copies are seen too)
    else:  # (torch 2.6: no deep-copy hooks; a copy gets a class of its own, watched in turn)
        cls.__deepcopy__ = deepcopy
    return True


def watch_every_recompile(callback):
    """Call callback(gm) after every GraphModule.recompile(), of any graph module (the
    program's own torch.fx graphs included); returns the function that undoes it.

    Only prepare_debug(clean_wild_fx_code=False) asks for this, as the original depyf
    did: it patches GraphModule itself, which watch_graph avoids.  The wrapper is one
    Dynamo skips, so a compiled function that calls recompile() breaks its graph
    there as it does on torch's own method."""
    original = torch.fx.GraphModule.recompile

    @outside_dynamo
    def recompile(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        _call_safely("FX recompile", callback, self)
        return result

    return _set_attr(torch.fx.GraphModule, "recompile", recompile)


def graph_code(gm):
    """The Python source of gm.forward as FX generated it (what runs)."""
    return gm.code


def readable_graph(gm):
    """gm as Dynamo logs it: a GraphModule class whose forward annotates every value
    with its dtype, (symbolic) shape, stride and device.  AOTAutograd names its
    graph classes `<lambda>`, which is not Python: such a class is printed as
    `GraphModule` so that the file compiles."""
    text = gm.print_readable(print_output=False, include_stride=True, include_device=True,
                             colored=False)
    return re.sub(r"^class (?![A-Za-z_]\w*\()[^(\n]*\(", "class GraphModule(", text,
                  count=1, flags=re.M)


# The printed form of readable_graph, kept to be printed later.  FX prints a graph at some
# 50 us a node (its code generator annotates every value); keeping what that printer reads
# costs about 1 us a node.  Torch rewrites a graph in place after logging it (the passes
# that follow the log), so what is kept is a copy: every node's op, target, arguments,
# name, type and meta items (torch replaces meta values, it does not change them), the
# graph's code generator, and the same of each graph submodule.  The nodes go into one flat
# list, so that keeping a graph makes no new object per node for the garbage collector.
_SYM_TYPES = (torch.SymInt, torch.SymFloat, torch.SymBool)
_NODE_FIELDS = 7  # node, op, target, args, kwargs, name, type; then the meta's size, keys, values


class FrozenGraph:
    """A graph module as readable_graph prints it, kept now, printed later (`readable()`)."""

    __slots__ = ("name", "codegen", "flat", "first", "children", "_text")

    def __init__(self, name, codegen, flat, children):
        self.name, self.codegen, self.flat, self.children = name, codegen, flat, children
        self.first = flat[0] if flat else None  # the first node (graphs are compared from it)
        self._text = None

    def nodes(self):
        """(node, op, target, args, kwargs, name, type, meta) of each node, as when frozen."""
        flat, at = self.flat, 0
        while at < len(flat):
            size = flat[at + _NODE_FIELDS]
            keys = flat[at + _NODE_FIELDS + 1:at + _NODE_FIELDS + 1 + size]
            values = flat[at + _NODE_FIELDS + 1 + size:at + _NODE_FIELDS + 1 + 2 * size]
            yield tuple(flat[at:at + _NODE_FIELDS]) + (dict(zip(keys, values)),)
            at += _NODE_FIELDS + 1 + 2 * size

    def readable(self):
        """readable_graph(gm) of gm as it was when frozen (printed once)."""
        if self._text is None:
            self._text = readable_graph(_StandIn(self))
        return self._text

    def same(self, other):
        """True when `other` keeps the very same graph state (the same graph logged twice,
        unchanged in between): it prints the same."""
        if (self.name != other.name or type(self.codegen) is not type(other.codegen)
                or vars(self.codegen) != vars(other.codegen) or len(self.flat) != len(other.flat)
                or len(self.children) != len(other.children)):
            return False
        if any(x is not y for x, y in zip(self.flat, other.flat)):  # (the sizes are small ints)
            return False
        return all(n == m and x.same(y) for (n, x), (m, y) in zip(self.children, other.children))


def freeze_graph(gm):
    """gm's readable form as it is now, as a FrozenGraph to print later, or None where it
    must be printed now (readable_graph): a graph with symbolic values (a SymInt prints its
    expression as the shape environment has simplified it by the time it is printed), with
    FX_GRAPH_SHOW_META set (every meta value printed), or on a torch where a frozen graph
    does not print as the graph did (checked once per process on a small graph)."""
    if not _freezing_prints_the_same() or os.environ.get("FX_GRAPH_SHOW_META", "0") == "1":
        return None
    return _freeze(gm)


def check_graph_freezing():
    """Make freeze_graph's once-per-process check now (prepare_debug's start), so that no
    compile waits for it."""
    _freezing_prints_the_same()


def _freeze(gm):
    graph = gm.graph
    flat = []
    for node in graph.nodes:
        meta = node.meta
        if _printed_symbolically(meta.get("val", meta.get("tensor_meta", meta.get("example_value")))):
            return None
        flat += (node, node.op, node.target, node.args, node.kwargs, node.name, node.type, len(meta))
        flat += meta.keys()
        flat += meta.values()
    children = []
    for name, child in gm.named_children():
        if isinstance(child, torch.fx.GraphModule):
            frozen = _freeze(child)
            if frozen is None:
                return None
            children.append((name, frozen))
    return FrozenGraph(gm._get_name(), copy.copy(graph._codegen), flat, children)


def _printed_symbolically(value):
    """Whether FX's printer shows `value` (a node's meta value) with symbols."""
    if isinstance(value, torch.Tensor):
        return value._has_symbolic_sizes_strides
    if isinstance(value, _SYM_TYPES):
        return True
    shape = getattr(value, "shape", None)  # (TensorMetadata)
    return shape is not None and not all(isinstance(size, int) for size in shape)


def _thaw(frozen):
    """A new graph with the frozen nodes (their names, meta and code generator)."""
    graph = torch.fx.Graph()
    graph._codegen = frozen.codegen
    new = {}
    for node, op, target, args, kwargs, name, type_expr, meta in frozen.nodes():
        made = graph.create_node(op, target, torch.fx.node.map_arg(args, new.__getitem__),
                                 torch.fx.node.map_arg(kwargs, new.__getitem__), name, type_expr)
        if made.name != name:
            raise ValueError("FX renamed %s to %s" % (name, made.name))
        made.meta = meta
        new[node] = made
    return graph


class _StandIn(torch.fx.GraphModule):
    """What GraphModule.print_readable reads of a graph module (its graph, its name, its
    graph submodules), from a FrozenGraph: no module is built (building one generates code)."""

    def __init__(self, frozen):  # (nn.Module's own state is never read by the printer)
        self.__dict__.update(_graph=_thaw(frozen), _depyf_name=frozen.name,
                             _depyf_children=[(name, _StandIn(child)) for name, child in frozen.children])

    def _get_name(self):
        return self.__dict__["_depyf_name"]

    def named_children(self):
        return iter(self.__dict__["_depyf_children"])


_frozen_prints_same = []


def _freezing_prints_the_same():
    """Once per process: a small graph with a submodule prints the same frozen as live."""
    if not _frozen_prints_same:
        try:
            gm = _small_graph_module()
            gm.add_submodule("inner", _small_graph_module())
            for node in gm.graph.nodes:
                node.meta["val"] = torch.empty(2, 2)
            same = _freeze(gm).readable() == readable_graph(gm)
        except Exception:  # (this torch's printer reads something else: print every graph now)
            same = False
        _frozen_prints_same.append(same)
    return _frozen_prints_same[0]


def _small_graph_module():
    """A graph module with every kind of node, built by hand (tracing one costs ten times more)."""
    import operator

    root = torch.nn.Module()
    root.register_buffer("w", torch.ones(2, 2))
    graph = torch.fx.Graph()
    x, w = graph.placeholder("x"), graph.get_attr("w")
    product = graph.call_function(torch.relu, (graph.call_function(operator.matmul, (x, w)),))
    graph.output(graph.call_function(operator.add, (graph.call_method("sum", (product, 0)), 1)))
    return torch.fx.GraphModule(root, graph)


# ---------------------------------------------------------------- a graph's first forward

class _WaitingForward:
    """A graph module class's `forward` while a callback waits for its first lookup."""

    def __init__(self, forward, gm, callback):
        self.forward = forward  # what torch generated (what runs)
        self.gm = weakref.ref(gm)
        self.callback = callback

    def __get__(self, obj, owner=None):
        if obj is None:  # a lookup on the class (torch's lazy graph module compares cls.forward)
            return self.forward
        cls = type(obj)
        run_waiting_forward(obj)
        return vars(cls)["forward"].__get__(obj, cls)


outside_dynamo(_WaitingForward.__get__)


def on_first_forward(gm, callback):
    """Call callback(gm) when gm's forward is first looked up on gm (calling gm does that),
    or at run_waiting_forward(gm), whichever comes first; until then gm's forward is what
    torch generated, and the callback may install another (run_graph_from_file).  A later
    call replaces the waiting callback.  Only gm's own class changes; a lookup on the class
    gives torch's forward.  False (and nothing waits) for a graph module without a class of
    its own, or whose forward is not generated yet."""
    cls = type(gm)
    current = vars(cls).get("forward")
    if not cls.__qualname__.endswith("GraphModuleImpl") or current is None or needs_codegen(gm):
        return False
    if isinstance(current, _WaitingForward):
        current.gm, current.callback = weakref.ref(gm), callback
    else:
        cls.forward = _WaitingForward(current, gm, callback)
    return True


@outside_dynamo
def run_waiting_forward(gm):
    """Run the callback waiting for gm's first forward (see on_first_forward), if any."""
    cls = type(gm)
    waiting = vars(cls).get("forward")
    if isinstance(waiting, _WaitingForward):
        cls.forward = waiting.forward
        owner = waiting.gm()
        if owner is not None:
            _call_safely("graph binding", waiting.callback, owner)


def current_forward(gm):
    """(gm's forward function, its source) as torch generated them: what runs now."""
    return vars(type(gm)).get("forward"), gm.code


def is_boxed_codegen(gm):
    """True when gm's forward (or a FrozenGraph's) takes one list of arguments (aot_eager's
    boxed convention)."""
    import torch.fx.graph

    boxed = getattr(torch.fx.graph, "_BoxedCodeGen", None)  # (torch <= 2.9 boxes by a wrapper instead)
    codegen = gm.codegen if isinstance(gm, FrozenGraph) else gm.graph._codegen
    return boxed is not None and isinstance(codegen, boxed)


def run_interpreted_graphs_as_code(runs_from_file):
    """While installed, `torch.fx.Interpreter(gm).boxed_run(args)` calls gm's forward when
    runs_from_file(gm).  Torch <= 2.9's aot_eager interprets its forward and backward
    graphs node by node (`boxed_nop`), so no line of their files would run; gm's forward
    runs the same operations in the same order.  Returns the restore."""
    import torch.fx.graph

    if getattr(torch.fx.graph, "_BoxedCodeGen", None) is not None:
        return lambda: None  # (torch >= 2.10 runs aot_eager's graphs as code: nothing to do)
    interpreter = torch.fx.Interpreter
    original = _require(interpreter, "boxed_run", "torch.fx.Interpreter")

    @outside_dynamo
    def boxed_run(self, args_list):
        if type(self) is interpreter and _call_safely("interpreted graphs", runs_from_file, self.module):
            args = list(args_list)
            args_list.clear()  # (as boxed_run does: the caller's list no longer holds the inputs)
            return self.module.forward(*args)
        return original(self, args_list)

    return _set_attr(interpreter, "boxed_run", boxed_run)


def run_graph_from_file(gm, path, text, forward=None):
    """Make gm.forward (or `forward`, a forward function of gm's class torch made earlier)
    the forward that `text` defines, compiled as file `path`.

    `text` holds either gm.code or gm's readable form (a class with a forward).
    The function is installed only when its bytecode is exactly that of
    gm.code's forward (annotations and comments compile to nothing), so the
    instructions that run do not change; only now a real file is behind them.
    GraphModule gives every instance its own class, so only this gm changes.  The code
    of gm's forward function is swapped (its globals stay FX's), so a forward torch
    looked up before (a bound method it kept) runs from the file too.
    Returns whether gm now runs from `path`.
    """
    cls = type(gm)
    if not cls.__qualname__.endswith("GraphModuleImpl") or needs_codegen(gm):
        return False
    reference = forward or vars(cls).get("forward")  # what FX compiled from gm.code: what runs without depyf
    if not isinstance(reference, types.FunctionType):
        return False
    forward = _defined_forward(text, path, reference.__globals__)
    if forward is None or not same_instructions(forward.__code__, reference.__code__):
        return False
    reference.__code__ = forward.__code__
    return True


def _defined_forward(text, path, fx_globals):
    namespace = dict(fx_globals, __file__=path)
    try:
        exec(compile(text, path, "exec", dont_inherit=True), namespace)
    except Exception:  # not runnable as it stands: the file stays for reading only
        return None
    defined = [name for name, value in namespace.items()
               if name != "__file__" and fx_globals.get(name, _MISSING) is not value]
    if "forward" in defined and callable(namespace["forward"]):
        return namespace["forward"]
    for name in defined:
        value = namespace[name]
        if isinstance(value, type) and callable(vars(value).get("forward")):
            return vars(value)["forward"]
    return None


_MISSING = object()


def same_instructions(a, b):
    """Whether two code objects run the same instructions on the same names and constants."""
    fields = ("co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars",
              "co_argcount", "co_kwonlyargcount", "co_flags")
    if any(getattr(a, f) != getattr(b, f) for f in fields) or len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, type(a)) and isinstance(y, type(a)):
            if not same_instructions(x, y):
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True


# ---------------------------------------------------------------- Inductor

def patch_output_code_loading(callback):
    """Let callback(source, path, linemap) redirect Inductor's generated wrapper module.

    Inductor loads the Python module it generates for a graph (with its `call`
    function and its C++/Triton kernels as source strings) through
    PyCodeCache.load_by_key_path.  The callback may return (new_path,
    new_linemap) to load the same source from another file, or None.
    """
    from torch._inductor.codecache import PyCodeCache

    loader = PyCodeCache.__dict__.get("load_by_key_path")
    if not isinstance(loader, classmethod):
        raise Unavailable("torch %s has no classmethod PyCodeCache.load_by_key_path" % torch.__version__)
    original = loader.__func__

    @outside_dynamo
    def load_by_key_path(cls, key, path, linemap=None, attrs=None, **kwargs):
        if linemap is not None:  # only wrapper modules of a compiled graph carry a line map
            redirect = _call_safely("Inductor code loading", _redirect, callback, path, linemap)
            if redirect is not None:
                path, linemap = redirect
        return original(cls, key, path, linemap, attrs, **kwargs)

    return _set_attr(PyCodeCache, "load_by_key_path", classmethod(load_by_key_path))


_WRAPPER_CALL = re.compile(r"^(def call\(|call = )", re.M)


def _redirect(callback, path, linemap):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    if not _WRAPPER_CALL.search(source):
        return None
    return callback(source, path, linemap)


def shift_linemap(linemap, lines):
    """Inductor's [(line, node info)] moved down by `lines`."""
    return [(line + lines, info) for line, info in linemap]


@contextlib.contextmanager
def compile_caches_disabled():
    """Turn off AOTAutograd's and Inductor's on-disk caches.

    A cache hit skips the stages depyf dumps (joint/forward/backward graphs,
    post-grad graph), so while dumping every stage must really run.
    """
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    with contextlib.ExitStack() as stack:
        for config, key in ((functorch_config, "enable_autograd_cache"), (inductor_config, "fx_graph_cache")):
            if hasattr(config, key):  # (a torch without that cache has nothing to turn off)
                stack.enter_context(config.patch(**{key: False}))
        yield


# Debuggers' own packages: what runs while a debugger stops in compiled code.
_DEBUGGER_PACKAGES = ("debugpy", "pydevd", "_pydevd_bundle", "_pydev_bundle", "_pydevd_frame_eval", "pydevd_plugins")


def skip_debugger_frames():
    """Keep Dynamo out of a debugger's own frames while depyf is active; returns restore().

    Stopped at a breakpoint in compiled code (a dumped transformed-code or graph
    file), a debugger runs its own Python in that thread, where Dynamo's frame
    callback is still set: Dynamo compiles the debugger's functions.  Torch 2.6
    fails on debugpy's (`NameError: name 'long'` from pydevd_xml), so its
    `evaluate` never answers; later releases trace them and fall back.  pdb,
    in the stdlib, is skipped already.  Only the debuggers' directories are
    added to Dynamo's skip list (trace_rules.SKIP_DIRS, torch 2.1 to 2.15):
    nothing of the user's program is compiled differently.
    """
    import importlib.util

    import torch._dynamo.trace_rules as trace_rules

    skip_dirs = _require(trace_rules, "SKIP_DIRS", "torch._dynamo.trace_rules")
    recompile = _require(trace_rules, "_recompile_re", "torch._dynamo.trace_rules")
    added = []
    for name in _DEBUGGER_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        for location in (spec.submodule_search_locations or []) if spec else []:
            path = location.replace(os.sep, "/").rstrip("/") + "/"
            if path not in skip_dirs:
                skip_dirs.append(path)
                added.append(path)
    if added:
        recompile()

    def restore():
        for path in added:
            with contextlib.suppress(ValueError):
                skip_dirs.remove(path)
        if added:
            recompile()
    return restore


# ---------------------------------------------------------------- distributed

def process_rank():
    """This process's rank when several processes run (torchrun, initialized group), else None."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        return dist.get_rank()
    if int(os.environ.get("WORLD_SIZE", "1")) > 1 and "RANK" in os.environ:
        return int(os.environ["RANK"])
    return None


# ------------------------------------------------- the compile log, for the report

_GRAPH_BREAK_AT = re.compile(r"Graph break in user code at (.*):(\d+)\s*$", re.M)


# The structured-trace records the report reads.  Torch builds every record's
# payload (graph printouts, generated code) as soon as anyone listens, which
# costs more than all of depyf's own hooks: only these are let through while
# depyf is the only listener.
_GUARDS_RECORD = "dynamo_cpp_guards_str"
_TRACE_RECORDS = {"dynamo_start", "compilation_metrics", _GUARDS_RECORD}
_TRACE_ARTIFACTS = {"recompile_reasons", "dynamo_graph_break_reason"}


def subscribe_compile_events(callback):
    """Call callback(event) for what Dynamo's structured trace reports about each frame compile.

    The structured trace is torch's own log of a compilation (what TORCH_TRACE
    and tlparse use); it is produced only while a handler is attached, so it
    runs only while subscribed.  Each event is a dict with "kind" and
    "compile_id" (as Dynamo prints it, "frame/count"):
    - "start": "stack", the frames that led to the compiled frame (outermost
      first, the compiled frame last), each {"file", "line", "name", "code"};
    - "graph_break": "file", "line", "reason", "user_stack" (text);
    - "recompile": "reasons", why the existing cache entries did not match;
    - "guards": "text", the guard tree built for the new cache entry (delivered when
      unsubscribing: printing it costs more than the rest);
    - "end": "name", "file", "line" of the compiled code, "fail" (None or why
      the compile failed).
    Returns the function that unsubscribes (and restores the trace logger).
    """
    import torch._logging._internal as logging_internal

    trace_log = _require(logging_internal, "trace_log", "torch._logging._internal")
    original = _require(logging_internal, "trace_structured", "torch._logging._internal")

    class Handler(logging.Handler):
        @outside_dynamo
        def emit(self, record):
            _call_safely("structured trace", _forward_trace_record, callback, record)

    handler = Handler()
    old_level, old_propagate = trace_log.level, trace_log.propagate
    trace_log.propagate = False  # never into the user's root handlers
    if not trace_log.isEnabledFor(logging.DEBUG):
        trace_log.setLevel(logging.DEBUG)
    trace_log.addHandler(handler)

    def wanted(name, metadata_fn):
        if name in _TRACE_RECORDS:
            return True
        if name != "artifact":
            return False
        metadata = metadata_fn()
        return isinstance(metadata, dict) and metadata.get("name") in _TRACE_ARTIFACTS

    # The guard tree's text is the dearest record to print and the report's fallback
    # only (it lists each cache entry's guards, read at the end): printed when
    # unsubscribing, the payload kept until then with its compile id.
    from torch._guards import CompileContext

    later = []
    current_compile_id = getattr(CompileContext, "current_compile_id", None)

    def defer_guards(kwargs):
        compile_id = kwargs.get("compile_id") or current_compile_id()
        payload_fn = kwargs.get("payload_fn")
        if compile_id is not None and callable(payload_fn):
            later.append((str(compile_id), payload_fn))

    def guards_event(compile_id, payload_fn):
        callback({"kind": "guards", "text": str(payload_fn()).strip("\n"), "compile_id": compile_id})

    @outside_dynamo
    def selective(name, metadata_fn=dict, **kwargs):
        if trace_log.handlers != [handler]:
            return original(name, metadata_fn, **kwargs)
        if name == _GUARDS_RECORD and current_compile_id is not None:
            _call_safely("structured trace", defer_guards, kwargs)
            return None
        if _call_safely("structured trace", wanted, name, metadata_fn):
            return original(name, metadata_fn, **kwargs)
        return None

    _rebind_everywhere("trace_structured", original, selective)

    def unsubscribe():
        _rebind_everywhere("trace_structured", selective, original)
        trace_log.removeHandler(handler)
        trace_log.setLevel(old_level)
        trace_log.propagate = old_propagate
        for compile_id, payload_fn in later:
            _call_safely("structured trace", guards_event, compile_id, payload_fn)
        later.clear()
    return unsubscribe


def _forward_trace_record(callback, record):
    metadata = getattr(record, "metadata", None)
    if not isinstance(metadata, dict) or metadata.get("frame_id") is None:
        return
    from torch._guards import CompileId

    fields = {"frame_id": metadata["frame_id"], "frame_compile_id": metadata.get("frame_compile_id")}
    try:
        compile_id = str(CompileId(compiled_autograd_id=metadata.get("compiled_autograd_id"), **fields))
    except TypeError:  # (torch <= 2.6: no compiled autograd id)
        compile_id = str(CompileId(**fields))
    payload = getattr(record, "payload", None)
    event = _trace_event(metadata, payload)
    if event is not None:
        event["compile_id"] = compile_id
        callback(event)


def _trace_event(metadata, payload):
    if "dynamo_start" in metadata:
        return {"kind": "start", "stack": _trace_stack(metadata["dynamo_start"].get("stack") or [])}
    if "compilation_metrics" in metadata:
        m = metadata["compilation_metrics"]
        fail = m.get("fail_reason")
        return {"kind": "end", "name": m.get("co_name"), "file": m.get("co_filename"),
                "line": m.get("co_firstlineno"),
                "fail": "%s: %s" % (m.get("fail_type"), fail) if fail else None}
    if "dynamo_cpp_guards_str" in metadata and payload:
        return {"kind": "guards", "text": payload.strip("\n")}
    artifact = (metadata.get("artifact") or {}).get("name")
    if artifact == "recompile_reasons" and payload:
        import json

        try:
            reasons = json.loads(payload)
        except ValueError:
            reasons = payload
        return {"kind": "recompile", "reasons": [str(r) for r in reasons] if isinstance(reasons, list)
                else [str(reasons)]}
    if artifact == "dynamo_graph_break_reason" and payload:
        return _graph_break_event(payload)
    return None


def _trace_stack(frames):
    from torch._logging.structured import INTERN_TABLE

    names = {index: text for text, index in INTERN_TABLE.items()}
    return [{"file": names.get(f.get("filename"), "?"), "line": f.get("line"),
             "name": f.get("name"), "code": f.get("loc")} for f in frames]


def _graph_break_event(text):
    """Dynamo's graph-break report: where, why, and the user frames (its own traceback dropped)."""
    where = _GRAPH_BREAK_AT.search(text)
    body = text[where.end():] if where else text
    reason, _, rest = body.partition("User code traceback:")
    # Torch appends traceback.format_exc() to the report (torch 2.13, and the releases before
    # it that have this artifact): Dynamo's own traceback, or, when no exception is being
    # handled, the line "NoneType: None".
    user_stack = rest.split("Traceback (most recent call last):")[0]
    user_stack = re.sub(r"(?:^|\n)NoneType: None\s*$", "", user_stack.rstrip())
    reason = reason.strip()
    if reason.startswith("Graph Break Reason:"):
        reason = reason[len("Graph Break Reason:"):].strip()
    return {"kind": "graph_break", "file": where.group(1) if where else None,
            "line": int(where.group(2)) if where else None, "reason": reason,
            "user_stack": user_stack.strip("\n")}
