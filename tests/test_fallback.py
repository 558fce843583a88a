"""The always-correct fallback (src/core/fallback.c).

Bytecode that no compiler wrote (torch.compile's transformed code keeps
values on the stack across jumps, hand-made code jumps into loops) has no
structured form: the decompiler rebuilds it as a state machine.  Each test
assembles such bytecode by hand, decompiles it, runs the source and compares
its behaviour with the original: results, exception types, and the order of
side effects (through a `trace` global that records what it is called with).

The programs are 3.11 bytecode (the interpreter of CI); the assembler below
reads one instruction per line, `label:` lines, and `.exc start end handler
depth [lasti]` exception-table entries.
"""
import ast
import copy
import dis
import opcode
import random
import sys
import types

import pytest

import depyf
import exception_table
from behaviour_outcome import drain

if sys.version_info[:2] != (3, 11):
    pytest.skip("hand-assembled 3.11 bytecode (test_forced_fallback.py runs everywhere)",
                allow_module_level=True)

FALLBACK_NOTE = "no structured form was found"

# --- a small assembler ------------------------------------------------------------------------

_JUMPS = {  # virtual jump -> (forward form, backward form)
    "JUMP": ("JUMP_FORWARD", "JUMP_BACKWARD"),
    "JUMP_IF_FALSE": ("POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE"),
    "JUMP_IF_TRUE": ("POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_TRUE"),
    "JUMP_IF_NONE": ("POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NONE"),
    "JUMP_IF_NOT_NONE": ("POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE"),
    "FOR_ITER": ("FOR_ITER", None),
    "JUMP_IF_FALSE_OR_POP": ("JUMP_IF_FALSE_OR_POP", None),
    "JUMP_IF_TRUE_OR_POP": ("JUMP_IF_TRUE_OR_POP", None),
}
_BINOPS = {symbol: k for k, (_, symbol) in enumerate(opcode._nb_ops)}


class Program:
    """Assembles a function body for the signature and locals of `template`."""

    def __init__(self, template, source):
        self.template = template
        self.varnames = template.__code__.co_varnames
        self.consts, self.names = [], []
        self.items, self.exc = [], []  # items: (opname, arg) or (None, label)
        for line in source.strip().splitlines():
            line = line.split("#")[0].strip()
            if not line:
                continue
            if line.endswith(":"):
                self.items.append((None, line[:-1]))
            elif line.startswith(".exc "):
                start, end, target, depth, *lasti = line.split()[1:]
                self.exc.append((start, end, target, int(depth), bool(lasti)))
            else:
                name, _, arg = line.partition(" ")
                self.items.extend(self._instruction(name, arg.strip()))

    def _index(self, table, value):
        for k, v in enumerate(table):
            if type(v) is type(value) and v == value:
                return k
        table.append(value)
        return len(table) - 1

    def _instruction(self, name, arg):
        if name == "LOAD_CONST":
            return [(name, self._index(self.consts, ast.literal_eval(arg)))]
        if name in ("LOAD_FAST", "STORE_FAST", "DELETE_FAST"):
            return [(name, self.varnames.index(arg))]
        if name == "LOAD_GLOBAL":
            null = arg.startswith("NULL+")
            return [(name, self._index(self.names, arg.removeprefix("NULL+")) << 1 | null)]
        if name in ("LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "STORE_GLOBAL", "IMPORT_NAME", "IMPORT_FROM"):
            return [(name, self._index(self.names, arg))]
        if name == "BINARY_OP":
            return [(name, _BINOPS[arg])]
        if name == "COMPARE_OP":
            return [(name, dis.cmp_op.index(arg))]
        if name == "CALL":
            return [("PRECALL", int(arg)), ("CALL", int(arg))]
        if name in _JUMPS:
            return [(name, arg)]
        return [(name, int(arg) if arg else 0)]

    def _layout(self, ext):
        """Code-unit positions of instructions and labels, given the number of
        EXTENDED_ARG prefixes per instruction."""
        pos, at, labels = 0, {}, {}
        for k, (name, arg) in enumerate(self.items):
            if name is None:
                labels[arg] = pos
                continue
            at[k] = pos
            real = _JUMPS[name][0] if name in _JUMPS else name
            pos += ext.get(k, 0) + 1 + opcode._inline_cache_entries[opcode.opmap[real]]
        return at, labels, pos

    def _resolve(self, at, labels, ext):
        out = {}
        for k, (name, arg) in enumerate(self.items):
            if name is None:
                continue
            if name in _JUMPS:
                after = at[k] + ext.get(k, 0) + 1
                forward, backward = _JUMPS[name]
                if labels[arg] >= after:
                    name, arg = forward, labels[arg] - after
                else:
                    assert backward, "%s cannot jump backward" % name
                    name, arg = backward, after - labels[arg]
            out[k] = (name, arg)
        return out

    def code(self):
        ext = {}
        while True:  # EXTENDED_ARG prefixes move everything after them
            at, labels, _ = self._layout(ext)
            resolved = self._resolve(at, labels, ext)
            need = {k: (arg.bit_length() - 1) // 8 for k, (_, arg) in resolved.items() if arg > 255}
            if need == ext:
                break
            ext = need
        raw = bytearray()
        for k, (name, arg) in sorted(resolved.items()):
            for shift in range(ext.get(k, 0), 0, -1):
                raw += bytes([opcode.opmap["EXTENDED_ARG"], (arg >> (8 * shift)) & 255])
            raw += bytes([opcode.opmap[name], arg & 255])
            raw += bytes(2 * opcode._inline_cache_entries[opcode.opmap[name]])
        table = []
        for start, end, target, depth, lasti in self.exc:
            s = labels[start]
            table += list(exception_table.entry(s, labels[end] - s, labels[target], depth, lasti))
        return self.template.__code__.replace(
            co_code=bytes(raw), co_consts=tuple(self.consts), co_names=tuple(self.names),
            co_exceptiontable=bytes(table), co_linetable=b"", co_stacksize=64)

    def function(self, namespace):
        return types.FunctionType(self.code(), namespace, self.template.__name__)


# --- running both ------------------------------------------------------------------------------

def outcome(fn, args, namespace):
    """What fn(*args) does: its (drained) result or exception type, and what it
    passed to trace() in which order."""
    namespace["TRACE"] = []
    try:
        result = ("returned", repr(drain(fn(*copy.deepcopy(args)))))
    except Exception as e:
        result = ("raised", type(e))
    return result, namespace["TRACE"]


def trace(value):
    TRACE.append(value)
    return value


TRACE = []


def fresh_namespace(**extra):
    ns = {"trace": trace, "TRACE": [], "__builtins__": __builtins__}
    ns["trace"] = types.FunctionType(trace.__code__, ns)
    ns.update(extra)
    return ns


def decompilations(fn):
    """The default decompilation of fn, and its state machine when the
    extension can force the fallback (dp_options.force_fallback)."""
    texts = [depyf.decompile(fn)]
    try:
        forced = depyf._core.decompile(fn.__code__, force_fallback=True)
    except TypeError as e:
        if "force_fallback" not in str(e):
            raise
    else:
        assert FALLBACK_NOTE in forced, forced
        texts.append(forced)
    return texts


def check(template, source, inputs, **globals_):
    """Assembles `source`, decompiles it and compares the original with every
    decompilation on every input."""
    ns = fresh_namespace(**globals_)
    original = Program(template, source).function(ns)
    for text in decompilations(original):
        scope = {}
        exec(compile(text, "<decompiled>", "exec"), ns, scope)
        decompiled = scope[template.__name__]
        for args in inputs:
            want = outcome(original, args, ns)
            got = outcome(decompiled, args, ns)
            assert got == want, "on %r:\nwant %r\ngot  %r\n%s" % (args, want, got, text)


def check_structured(template, source, inputs):
    """check(), and the default decompilation must be structured (not the state machine)."""
    check(template, source, inputs)
    text = depyf.decompile(Program(template, source).function(fresh_namespace()))
    assert FALLBACK_NOTE not in text, text
    return text


# --- values left on the stack ------------------------------------------------------------------

def f_abc(a, b, c):
    pass


def test_value_kept_across_a_conditional_jump():
    # `a` is pushed before the test and used by both branches
    check(f_abc, """
        RESUME 0
        LOAD_FAST a
        LOAD_FAST b
        JUMP_IF_FALSE other
        LOAD_FAST c
        BINARY_OP +
        RETURN_VALUE
    other:
        LOAD_CONST 100
        BINARY_OP *
        RETURN_VALUE
    """, [(1, True, 2), (3, False, 0), ("x", 1, "y"), ("x", 0, None), (1, True, "s")])


def test_branches_join_with_values_on_the_stack():
    # each branch pushes a different value; the join adds them to what stayed below
    check(f_abc, """
        RESUME 0
        LOAD_FAST a
        LOAD_FAST b
        JUMP_IF_TRUE yes
        LOAD_CONST 10
        JUMP join
    yes:
        LOAD_FAST c
    join:
        BINARY_OP -
        RETURN_VALUE
    """, [(1, 0, 5), (1, 1, 5), (1.5, [], 2), ([1], 1, 2)])


def test_or_pop_jumps_keep_their_operand():
    check(f_abc, """
        RESUME 0
        LOAD_FAST a
        LOAD_FAST b
        JUMP_IF_FALSE_OR_POP done
        LOAD_FAST c
    done:
        BUILD_TUPLE 2
        RETURN_VALUE
    """, [(1, 0, 2), (1, 7, 2), (None, "", "z"), (None, "b", "z")])


def f_n(n):
    i = acc = 0


def test_jump_into_the_middle_of_a_loop():
    # an irreducible loop: entered at its test when n is odd, at its body else
    check(f_n, """
        RESUME 0
        LOAD_CONST 0
        STORE_FAST i
        LOAD_FAST n
        LOAD_CONST 2
        BINARY_OP %
        JUMP_IF_TRUE test
    body:
        LOAD_GLOBAL NULL+trace
        LOAD_FAST i
        CALL 1
        POP_TOP
        LOAD_FAST i
        LOAD_CONST 1
        BINARY_OP +=
        STORE_FAST i
    test:
        LOAD_FAST i
        LOAD_FAST n
        COMPARE_OP <
        JUMP_IF_TRUE body
        LOAD_FAST i
        RETURN_VALUE
    """, [(0,), (1,), (4,), (7,), ("x",)])


def f_xs(xs):
    pass


def test_accumulator_on_the_stack_across_a_for_loop():
    # the running total never leaves the stack: [acc, iterator, item] each round
    check(f_xs, """
        RESUME 0
        LOAD_CONST 0
        LOAD_FAST xs
        GET_ITER
    loop:
        FOR_ITER done
        SWAP 2
        SWAP 3
        BINARY_OP +
        SWAP 2
        JUMP loop
    done:
        RETURN_VALUE
    """, [([],), ([1, 2, 3],), ((5,),), (["a"],), (3,)])


# --- torch.compile's transformed code ----------------------------------------------------------

def f_x(x):
    a = b = None


def test_compiled_graph_results_stay_on_the_stack():
    # Dynamo-style: the graph's outputs are unpacked, one is kept on the stack
    # while a guard-like test picks which resume function gets it
    graph = lambda x: (x * 2, x + 1)  # noqa: E731
    resume_pos = lambda b, a: ("pos", a, b)  # noqa: E731
    resume_neg = lambda b: ("neg", b)  # noqa: E731
    check(f_x, """
        RESUME 0
        LOAD_GLOBAL NULL+__compiled_fn_1
        LOAD_FAST x
        CALL 1
        UNPACK_SEQUENCE 2
        STORE_FAST a
        LOAD_FAST a
        LOAD_CONST 0
        COMPARE_OP >
        JUMP_IF_FALSE negative
        LOAD_GLOBAL NULL+__resume_at_20_2
        SWAP 2
        SWAP 3
        LOAD_FAST a
        CALL 2
        RETURN_VALUE
    negative:
        LOAD_GLOBAL NULL+__resume_at_30_3
        SWAP 2
        SWAP 3
        CALL 1
        RETURN_VALUE
    """, [(3,), (-2,), (0,), ("s",)],
        __compiled_fn_1=graph, __resume_at_20_2=resume_pos, __resume_at_30_3=resume_neg)


# --- evaluation order --------------------------------------------------------------------------

def test_side_effects_keep_their_order_through_stack_shuffles():
    # values computed early are consumed late, in swapped order, after a store
    check(f_abc, """
        RESUME 0
        LOAD_GLOBAL NULL+trace
        LOAD_FAST a
        CALL 1
        LOAD_GLOBAL NULL+trace
        LOAD_FAST b
        CALL 1
        SWAP 2
        LOAD_GLOBAL NULL+trace
        LOAD_FAST c
        CALL 1
        STORE_FAST c
        COPY 2
        BINARY_OP -
        BINARY_OP *
        RETURN_VALUE
    """, [(1, 2, 3), (5, 0, 1), ("a", 2, 0), (1, "b", 2)])


CONSTANT_POPPED_AT_THE_JOIN = """
        RESUME 0
        LOAD_CONST 0
        STORE_FAST c
        LOAD_FAST a
        JUMP_IF_FALSE no
        LOAD_GLOBAL NULL+trace
        LOAD_FAST b
        CALL 1
        STORE_FAST c
        LOAD_CONST None
        JUMP join
    no:
        LOAD_CONST None
    join:
        NOP
        POP_TOP
        LOAD_FAST c
        RETURN_VALUE
"""


def test_a_constant_each_branch_pushes_and_the_join_pops_is_no_value():
    # torch 2.15 wraps its profiler markers so: `if p: t = enter(); None` / `else:
    # None`, then POP_TOP.  Structured, the branches are plain statements.
    text = check_structured(f_abc, CONSTANT_POPPED_AT_THE_JOIN, [(1, "x", 0), (0, "y", 0), ([], 2, 0)])
    assert "None" not in text, text


RETURN_OVER_A_LIST = """
        RESUME 0
        LOAD_GLOBAL NULL+trace
        LOAD_FAST a
        CALL 1
        LOAD_FAST b
        BUILD_LIST 1
        SWAP 2
        RETURN_VALUE
"""


def test_a_value_left_below_the_returned_one_is_still_built():
    # torch 2.9 returns a graph's output over the list of nested frame values it built
    check_structured(f_abc, RETURN_OVER_A_LIST, [(1, 2, 0), ("x", None, 0)])


UNPACKED_ITEM_AS_A_TEST = """
        RESUME 0
        LOAD_FAST a
        UNPACK_SEQUENCE 2
        STORE_FAST b
        JUMP_IF_FALSE no
        LOAD_FAST b
        RETURN_VALUE
    no:
        LOAD_CONST 0
        RETURN_VALUE
"""


def test_an_unpacked_item_used_as_a_value_is_structured():
    # torch 2.6 unpacks a graph's outputs and branches on one right away:
    # `x, __temp_1 = graph(...)` then `if __temp_1:`
    check_structured(f_abc, UNPACKED_ITEM_AS_A_TEST, [((1, 2), 0, 0), ((3, 0), 0, 0), (("s", ""), 0, 0), ([1], 0, 0)])


TWO_STORES_OVER_A_VALUE = """
        RESUME 0
        LOAD_GLOBAL NULL+trace
        LOAD_FAST a
        CALL 1
        LOAD_GLOBAL NULL+trace
        LOAD_FAST b
        CALL 1
        LOAD_CONST 3
        STORE_FAST c
        STORE_FAST b
        LOAD_FAST b
        LOAD_FAST c
        BUILD_TUPLE 3
        RETURN_VALUE
"""


def test_a_value_left_below_two_stores_is_computed_first():
    # Dynamo (torch 2.6) leaves a call's callable on the stack while it stores two
    # locals at once: printed as `b, c = ...`, the value below must come first (and
    # be structured: the validator refused the reordered form)
    check_structured(f_abc, TWO_STORES_OVER_A_VALUE, [(1, 2, 0), ("x", "y", None)])


# --- exceptions --------------------------------------------------------------------------------

def seen_exception():
    """What sys.exc_info() says inside a handler (it must be the handled one)."""
    return type(sys.exc_info()[1]).__name__


def test_handler_with_a_value_below_the_exception():
    # 5 stays on the stack through the try; the handler sees it below the
    # exception and must run inside the except clause (sys.exc_info())
    check(f_x, """
        RESUME 0
        LOAD_CONST 5
    try:
        LOAD_CONST 10
        LOAD_FAST x
        BINARY_OP //
    tried:
        BUILD_TUPLE 2
        RETURN_VALUE
    handler:
        PUSH_EXC_INFO
        LOAD_GLOBAL ZeroDivisionError
        CHECK_EXC_MATCH
        JUMP_IF_FALSE reraise
        POP_TOP
        LOAD_GLOBAL NULL+seen
        CALL 0
        SWAP 2
        POP_EXCEPT
        BUILD_TUPLE 2
        RETURN_VALUE
    reraise:
        RERAISE 0
    cleanup:
        COPY 3
        POP_EXCEPT
        RERAISE 1
    end:
        .exc try tried handler 1
        .exc handler cleanup cleanup 2 lasti
    """, [(2,), (0,), ("s",), (None,)], seen=seen_exception)


def test_handler_loops_back_into_the_protected_code():
    # retry until the division works; the counter lives on the stack
    check(f_x, """
        RESUME 0
        LOAD_FAST x
    again:
        LOAD_CONST 100
        SWAP 2
    try:
        BINARY_OP //
    tried:
        RETURN_VALUE
    handler:
        PUSH_EXC_INFO
        POP_TOP
        POP_EXCEPT
    handled:
        LOAD_GLOBAL NULL+trace
        LOAD_CONST 'retry'
        CALL 1
        POP_TOP
        LOAD_CONST 1
        JUMP again
    cleanup:
        COPY 3
        POP_EXCEPT
        RERAISE 1
    end:
        .exc try tried handler 0
        .exc handler handled cleanup 1 lasti
    """, [(4,), (0,), (-3,)])


# --- exception state and object lifetimes (ordinary functions: every decompilation) ----------

def check_function(fn, inputs, run=None):
    """Compares fn with each of its decompilations on every input; `run`
    turns a function and arguments into comparable data."""
    run = run or (lambda f, args: outcome(f, args, fn.__globals__))
    for text in decompilations(fn):
        scope = {}
        exec(compile(text, "<decompiled>", "exec"), fn.__globals__, scope)
        new = scope[fn.__name__]
        for args in inputs:
            want, got = run(fn, args), run(new, args)
            assert got == want, "on %r:\nwant %r\ngot  %r\n%s" % (args, want, got, text)


def handler_sees_its_exception(x):
    try:
        return 10 // x
    except ZeroDivisionError:
        return type(sys.exc_info()[1]).__name__, seen_exception()


def test_handlers_run_while_their_exception_is_handled():
    check_function(handler_sees_its_exception, [(2,), (0,)])


def clear_context_and_raise(exc):
    try:
        raise exc
    finally:
        exc.__context__ = None


def reraise_unmatched(exc):
    try:
        clear_context_and_raise(exc)
    except KeyError:
        return "caught"


def in_a_handler(fn, args):
    """Calls fn while the caller handles an IndexError: what fn raises and
    the __context__ it carries."""
    try:
        raise IndexError("outer")
    except IndexError:
        try:
            return ("returned", fn(*args))
        except Exception as e:
            return ("raised", type(e), repr(e.__context__))


def test_reraise_keeps_the_exception_context():
    # RERAISE leaves __context__ alone; `raise e` would set it to the IndexError
    check_function(reraise_unmatched, [(ValueError("v"),), (KeyError("k"),)], run=in_a_handler)


def break_out_of_a_generator(log):
    def numbers():
        try:
            yield 1
            yield 2
        finally:
            log.append("closed")
    for _ in numbers():
        break
    log.append("after the loop")
    return log


def test_generator_is_closed_where_the_loop_drops_it():
    check_function(break_out_of_a_generator, [([],)])


class Noisy:
    def __init__(self, log):
        self.log = log

    def __del__(self):
        self.log.append("freed")


def handle_and_return(log):
    keep = Noisy(log)  # noqa: F841 (freed when the frame ends)
    try:
        raise KeyError(1)
    except KeyError:
        pass
    return "done"


def when_freed(fn, args):
    """The order of fn's result and the finalization of its locals, with the
    cyclic collector off: an exception kept in a variable of the frame would
    keep the frame (and Noisy) alive in a cycle."""
    import gc

    log = []
    gc.disable()
    try:
        fn(log)
        log.append("returned")
    finally:
        gc.enable()
        gc.collect()
    return log


def test_handled_exceptions_do_not_keep_the_frame_alive():
    check_function(handle_and_return, [((),)], run=when_freed)


# --- generators --------------------------------------------------------------------------------

def g_x(x):
    yield


def test_generator_keeps_a_value_across_yield():
    check(g_x, """
        RETURN_GENERATOR
        POP_TOP
        RESUME 0
        LOAD_FAST x
        LOAD_CONST 1
        YIELD_VALUE
        RESUME 1
        POP_TOP
        LOAD_FAST x
        LOAD_CONST 2
        BINARY_OP *
        YIELD_VALUE
        RESUME 1
        POP_TOP
        LOAD_CONST 3
        BINARY_OP +
        RETURN_VALUE
    """, [(1,), ("a",), (None,)])


# --- a try entered with values on the stack ----------------------------------------------------
# Dynamo's code at a graph break inside a with block: the values it passes on to
# the resume function stay on the stack across the with's try/finally, whose
# handler starts at depth 0.  Structured: the values go into temporaries.

TRY_WITH_CARRIED_VALUES = """
        RESUME 0
        LOAD_FAST a
        LOAD_CONST 7
        BUILD_TUPLE 2
        PUSH_NULL
        LOAD_FAST c
        LOAD_FAST b
        LOAD_GLOBAL NULL+trace
        LOAD_CONST 'enter'
        CALL 1
        POP_TOP
    body:
        NOP
        CALL 1
    body_end:
        LOAD_GLOBAL NULL+trace
        LOAD_CONST 'exit'
        CALL 1
        POP_TOP
        LOAD_CONST None
        JUMP after
    handler:
        PUSH_EXC_INFO
        LOAD_GLOBAL NULL+trace
        LOAD_CONST 'exit'
        CALL 1
        POP_TOP
        RERAISE 0
    cleanup:
        COPY 3
        POP_EXCEPT
        RERAISE 1
    after:
        NOP
        POP_TOP
        BUILD_TUPLE 2
        RETURN_VALUE
    end:
        .exc body body_end handler 0
        .exc handler cleanup cleanup 1 lasti
"""


def test_try_entered_with_values_on_the_stack_is_structured():
    text = check_structured(f_abc, TRY_WITH_CARRIED_VALUES,
                            [(1, "5", int), ("x", "y", int), ([1], 3.7, str), (None, 2, None)])
    tree = ast.parse(text)
    assert any(isinstance(n, ast.Try) and n.finalbody for n in ast.walk(tree)), text


# --- invalid bytecode is an error, never a crash -----------------------------------------------

@pytest.mark.parametrize("source, message", [
    ("""
        RESUME 0
        LOAD_FAST a
        JUMP_IF_FALSE join
        LOAD_CONST 1
    join:
        RETURN_VALUE
    """, "stack depth|stack underflow"),
    ("""
        RESUME 0
        BINARY_OP +
        RETURN_VALUE
    """, "underflow"),
])
def test_invalid_bytecode_is_reported(source, message):
    fn = Program(f_abc, source).function(fresh_namespace())
    with pytest.raises(depyf.DecompilationError, match=message):
        depyf.decompile(fn)


# --- random programs ---------------------------------------------------------------------------

def f_xyz(x, y, z):
    i = j = 0


class RandomProgram:
    """A random function of ints with forward jumps that join with values on
    the stack, bounded loops, stack shuffles, calls of trace() and divisions
    that may raise."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.lines = ["RESUME 0", "LOAD_CONST 0", "STORE_FAST i", "LOAD_CONST 0", "STORE_FAST j"]
        self.depth = 0
        self.labels = 0
        self.pending = []  # (label, depth the jump arrives with)

    def emit(self, line, effect):
        self.lines.append(line)
        self.depth += effect

    def label(self):
        self.labels += 1
        return "L%d" % self.labels

    def value(self):
        choice = self.rng.randrange(4)
        if choice == 0:
            self.emit("LOAD_CONST %d" % self.rng.randrange(-3, 5), 1)
        elif choice == 1:
            self.emit("LOAD_FAST %s" % self.rng.choice("xyz"), 1)
        elif choice == 2:
            self.emit("LOAD_GLOBAL NULL+trace", 2)
            self.emit("LOAD_FAST %s" % self.rng.choice("xyzij"), 1)
            self.emit("CALL 1", -2)
        else:
            self.emit("LOAD_FAST i", 1)

    def step(self):
        r = self.rng.random()
        if self.depth < 2 or r < 0.3:
            self.value()
        elif r < 0.5:
            self.emit("BINARY_OP %s" % self.rng.choice(["+", "-", "*", "//", "%", "^"]), -1)
        elif r < 0.6:
            self.emit("SWAP %d" % self.rng.randint(2, self.depth), 0)
        elif r < 0.68 and self.depth < 8:
            self.emit("COPY %d" % self.rng.randint(1, self.depth), 1)
        elif r < 0.75:
            self.emit("STORE_FAST i", -1)  # j counts the loops
        elif r < 0.85:
            target = self.label()
            self.emit("JUMP_IF_%s %s" % (self.rng.choice(["TRUE", "FALSE"]), target), -1)
            self.pending.append((target, self.depth))
        elif self.pending:
            self.land()
        else:
            self.emit("POP_TOP", -1)

    def land(self):
        target, depth = self.pending.pop(self.rng.randrange(len(self.pending)))
        while self.depth < depth:
            self.value()
        while self.depth > depth:
            self.emit("POP_TOP", -1)
        self.lines.append(target + ":")

    def loop(self):
        """A loop counting j to 3 whose body keeps the stack balanced."""
        top, self.pending_outer = self.label(), self.pending
        self.pending = []
        self.emit("LOAD_CONST 0", 1)
        self.emit("STORE_FAST j", -1)
        self.lines.append(top + ":")
        base = self.depth
        for _ in range(self.rng.randrange(1, 8)):
            self.step()
        while self.pending:
            self.land()
        while self.depth > base:
            self.emit("STORE_FAST i", -1)
        while self.depth < base:
            self.value()
        for line in ["LOAD_FAST j", "LOAD_CONST 1", "BINARY_OP +", "STORE_FAST j",
                     "LOAD_FAST j", "LOAD_CONST 3", "COMPARE_OP <"]:
            self.lines.append(line)
        self.lines.append("JUMP_IF_TRUE %s" % top)
        self.pending = self.pending_outer

    def source(self):
        for _ in range(self.rng.randrange(5, 40)):
            if self.rng.random() < 0.05:
                self.loop()
            else:
                self.step()
        while self.pending:
            self.land()
        self.value()
        self.lines.append("BUILD_TUPLE %d" % self.depth)
        self.lines.append("RETURN_VALUE")
        return "\n".join(self.lines)


@pytest.mark.parametrize("seed", range(150))
def test_random_program_behaves_like_the_original(seed):
    source = RandomProgram(seed).source()
    inputs = [(0, 1, 2), (3, -2, 7), (-1, 0, 0), (5, 5, -4)]
    check(f_xyz, source, inputs)
