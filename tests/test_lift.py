"""The lifter (bytecode -> version-neutral IR) on real code objects, through
`depyf._core.ir_dump`.

For every code object of a stdlib corpus the IR must agree with `dis`
(source lines, jump targets, exception handlers) and be stack-consistent:
simulating the stack effects ir.h documents along every edge never
underflows and gives every instruction a single depth.  That is what the
structurer relies on, and it catches a wrong translation of any opcode.

The same check runs under each other installed interpreter whose build of
the extension is importable (`python tests/test_lift.py --check`, printing a
JSON summary); the others are skipped.
"""
import collections
import dis
import glob
import json
import os
import re
import subprocess
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
V = sys.version_info[:2]

# Modules with classes, closures, comprehensions, async, try/with, match.
CORPUS = [
    "argparse", "asyncio/tasks", "contextlib", "dataclasses", "functools", "json/decoder",
    "typing", "email/message", "collections/__init__", "inspect", "ast", "tarfile",
    "asyncio/base_events", "pathlib", "enum", "traceback",
]

INSTR = re.compile(r"^\s*(\d+)\s+(\d+)\s+(-|\d+)([* ]) (>>|  ) (\S+)(.*?)(?: -> (\d+))?$")
EXC = re.compile(r"^exc (\d+)\.\.(\d+) -> (\d+) depth (\d+)( lasti)?$")

Instr = collections.namedtuple("Instr", "offset line start target_flag op operands target")


def parse_dump(text):
    """(instructions, exception entries) of an ir_dump listing."""
    ins, exc = [], []
    for line in text.split("\n")[:-1]:  # str.splitlines would also split inside string constants
        m = EXC.match(line)
        if m:
            exc.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)), bool(m.group(5))))
            continue
        m = INSTR.match(line)
        if not m:
            raise ValueError("unparsable IR line: %r" % line)
        _, off, lno, star, flag, op, rest, target = m.groups()
        ins.append(Instr(int(off), None if lno == "-" else int(lno), star == "*", flag == ">>", op,
                         rest.split(), None if target is None else int(target)))
    return ins, exc


# ---------------------------------------------------------------- stack effects

def _int(operands, i=0, default=0):
    try:
        return int(operands[i])
    except (IndexError, ValueError):
        return default


def stack_effect(ins):
    """(pops, pushes) of one IR instruction as documented in ir.h."""
    op, a = ins.op, ins.operands
    fixed = {
        "NOP": (0, 0), "LOAD_CONST": (0, 1), "LOAD_NAME": (0, 1), "LOAD_GLOBAL": (0, 1), "LOAD_FAST": (0, 1),
        "LOAD_DEREF": (0, 1), "LOAD_CLASSDEREF": (0, 1), "LOAD_CLOSURE": (0, 1), "LOAD_FAST_AND_CLEAR": (0, 1),
        "STORE_NAME": (1, 0), "STORE_GLOBAL": (1, 0), "STORE_FAST": (1, 0), "STORE_DEREF": (1, 0),
        "DELETE_NAME": (0, 0), "DELETE_GLOBAL": (0, 0), "DELETE_FAST": (0, 0), "DELETE_DEREF": (0, 0),
        "LOAD_ATTR": (1, 1), "LOAD_METHOD": (1, 2), "STORE_ATTR": (2, 0), "DELETE_ATTR": (1, 0),
        "PUSH_NULL": (0, 1), "LOAD_ASSERTION_ERROR": (0, 1), "LOAD_BUILD_CLASS": (0, 1), "LOAD_LOCALS": (0, 1),
        "BINARY_OP": (2, 1), "UNARY": (1, 1), "COMPARE": (2, 1), "IS": (2, 1), "CONTAINS": (2, 1),
        "BINARY_SUBSCR": (2, 1), "STORE_SUBSCR": (3, 0), "DELETE_SUBSCR": (2, 0), "BINARY_SLICE": (3, 1),
        "STORE_SLICE": (4, 0), "SET_FUNCTION_ATTRIBUTE": (2, 1), "CALL_INTRINSIC_1": (1, 1),
        "CALL_INTRINSIC_2": (2, 1), "LIST_APPEND": (1, 0), "SET_ADD": (1, 0), "MAP_ADD": (2, 0),
        "LIST_EXTEND": (1, 0), "SET_UPDATE": (1, 0), "DICT_UPDATE": (1, 0), "DICT_MERGE": (1, 0),
        "LIST_TO_TUPLE": (1, 1), "CONVERT_VALUE": (1, 1), "POP_TOP": (1, 0), "SWAP": (0, 0),
        "RETURN_VALUE": (1, 0), "JUMP": (0, 0), "POP_JUMP_IF_FALSE": (1, 0), "POP_JUMP_IF_TRUE": (1, 0),
        "POP_JUMP_IF_NONE": (1, 0), "POP_JUMP_IF_NOT_NONE": (1, 0), "GET_ITER": (1, 1),
        "RERAISE": (1, 0), "RETURN_GENERATOR": (0, 0), "YIELD_VALUE": (1, 1), "GET_YIELD_FROM_ITER": (1, 1),
        "GET_AWAITABLE": (1, 1), "YIELD_FROM": (1, 1), "GET_AITER": (1, 1), "GET_ANEXT": (1, 2),
        "END_ASYNC_FOR": (2, 0), "BEFORE_ASYNC_WITH": (1, 2), "ASYNC_GEN_WRAP": (1, 1),
        "STOPITERATION_ERROR": (1, 1), "PUSH_EXC_INFO": (1, 2), "POP_EXCEPT": (1, 0),
        "CHECK_EXC_MATCH": (2, 2), "CHECK_EG_MATCH": (2, 2), "PREP_RERAISE_STAR": (2, 1),
        "BEFORE_WITH": (1, 2), "WITH_EXCEPT_START": (0, 1), "IMPORT_NAME": (2, 1), "IMPORT_FROM": (1, 2),
        "IMPORT_STAR": (1, 0), "SETUP_ANNOTATIONS": (0, 0), "PRINT_EXPR": (1, 0), "MATCH_CLASS": (3, 1),
        "MATCH_MAPPING": (1, 2), "MATCH_SEQUENCE": (1, 2), "MATCH_KEYS": (2, 3), "GET_LEN": (1, 2),
    }
    if op in fixed:
        return fixed[op]
    n = _int(a)
    if op == "LOAD_SUPER_ATTR":  # operands: name [flags]
        return 3, 2 if _int(a, 1) & 1 else 1
    if op == "CALL":
        return n + (2 if "pair" in a else 1), 1
    if op == "CALL_EX":
        return (2 if "pair" in a else 1) + 1 + (n & 1), 1
    if op == "MAKE_FUNCTION":
        return 1 + bin(n).count("1"), 1
    if op in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE", "BUILD_UNPACK"):
        return n, 1
    if op == "BUILD_MAP":
        return 2 * n, 1
    if op == "BUILD_CONST_KEY_MAP":
        return n + 1, 1
    if op == "FORMAT_VALUE":
        return 2 if n & 4 else 1, 1
    if op == "UNPACK_SEQUENCE":
        return 1, n
    if op == "UNPACK_EX":
        return 1, (n & 0xFF) + (n >> 8) + 1
    if op == "COPY":
        return n, n + 1
    if op == "RAISE":
        return n, 0
    raise KeyError(op)


TERMINATORS = {"RETURN_VALUE", "RAISE", "RERAISE", "JUMP"}
# Before 3.11 an exception handler starts with 6 values above the block's
# level (3 of them the previous exception) and these ops handle 3 at a time.
BLOCK_ERA = {"POP_EXCEPT": (3, 0), "RERAISE": (3, 0), "END_ASYNC_FOR": (7, 0), "POP_BLOCK": (0, 0)}
SETUP = {"SETUP_FINALLY": (0, 6), "SETUP_WITH": (1, 6), "SETUP_ASYNC_WITH": (0, 5)}  # (fall through, handler)
# 3.8's finally blocks push and pop a variable number of values: not simulated.
DYNAMIC = {"BEGIN_FINALLY", "END_FINALLY", "CALL_FINALLY", "POP_FINALLY", "WITH_CLEANUP_START",
           "WITH_CLEANUP_FINISH"}


def stack_problems(ins, exc, stacksize, minor=V[1]):
    """Simulates stack depths over every edge; returns a list of problems."""
    if any(i.op in DYNAMIC for i in ins):
        return []
    depth = {0: 0}
    work, problems = [0], []

    def reach(j, d, why):
        if not 0 <= j < len(ins):
            problems.append("%s leaves the code" % why)
        elif d < 0:
            problems.append("%s: stack underflow" % why)
        elif j not in depth:
            depth[j] = d
            work.append(j)
        elif depth[j] != d:
            problems.append("%s: depth %d meets %d at %d" % (why, d, depth[j], j))

    while work and len(problems) < 5:
        i = work.pop()
        d, cur = depth[i], ins[i]
        for start, end, target, edepth, lasti in exc:
            if start <= i < end:
                if d < edepth:
                    problems.append("%d: depth %d below handler depth %d" % (i, d, edepth))
                reach(target, edepth + 1 + lasti, "handler of %d" % i)
        if cur.op in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):  # [v] -> [v] if jumping, else []
            reach(cur.target, d, "%d" % i)
            reach(i + 1, d - 1, "%d" % i)
            continue
        if cur.op == "FOR_ITER":  # [it] -> [it, next], or [] at the target
            reach(cur.target, d - 1, "%d" % i)
            reach(i + 1, d + 1, "%d" % i)
            continue
        if cur.op in SETUP:
            reach(cur.target, d + SETUP[cur.op][1], "%d" % i)
            reach(i + 1, d + SETUP[cur.op][0], "%d" % i)
            continue
        pops, pushes = BLOCK_ERA[cur.op] if minor <= 10 and cur.op in BLOCK_ERA else stack_effect(cur)
        after = d - pops + pushes
        if d - pops < 0:
            problems.append("%d %s: underflow" % (i, cur.op))
            continue
        if cur.target is not None:
            reach(cur.target, after, "%d" % i)
        if cur.op not in TERMINATORS:
            reach(i + 1, after, "%d" % i)
    # ir.h's forms may hold one or two values more than CPython's own counting
    if max(depth.values()) > stacksize + 2:
        problems.append("max depth %d > co_stacksize %d" % (max(depth.values()), stacksize))
    return problems


# ---------------------------------------------------------------- agreement with dis

def lines_by_offset(co):
    """Source line of each byte offset, as the running interpreter sees it."""
    n = len(co.co_code)
    res = [None] * n
    if V >= (3, 11):
        for i, pos in enumerate(co.co_positions()):
            res[2 * i] = pos[0]
    elif V == (3, 10):
        for s, e, l in co.co_lines():
            for o in range(s, min(e, n)):
                res[o] = l
    else:
        cur, starts = None, dict(dis.findlinestarts(co))
        for o in range(n):
            cur = starts.get(o, cur)
            res[o] = cur
    return res


def dis_problems(co, ins, exc):
    problems = []
    lines = lines_by_offset(co)
    for i in ins:
        if lines[i.offset] != i.line:
            problems.append("line of %d: %s, dis says %s" % (i.offset, i.line, lines[i.offset]))
    first_at = {}
    for k, i in enumerate(ins):
        first_at.setdefault(i.offset, k)
    starts = sorted(first_at)
    jumps = set(dis.hasjrel) | set(dis.hasjabs)
    for I in dis.get_instructions(co):
        if I.opcode not in jumps:
            continue
        # the IR offset of an instruction is where its EXTENDED_ARG prefix starts
        start = max(o for o in starts if o <= I.offset)
        k = first_at[start]
        targets = [j.target for j in ins[k:] if j.offset == start and j.target is not None]
        if not targets:
            if I.opname in ("SEND", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_BACKWARD"):
                continue  # folded into IR_YIELD_FROM
            problems.append("%d %s lost its jump" % (I.offset, I.opname))
            continue
        want = I.argval
        if I.opname == "FOR_ITER" and V >= (3, 12):  # the IR target is past END_FOR (and POP_TOP)
            want += 2 if V == (3, 12) else 4
        if ins[targets[0]].offset != want:
            problems.append("%d %s jumps to %d, dis says %d" % (I.offset, I.opname, ins[targets[0]].offset, want))
    for start, end, target, _, _ in exc:
        if not (0 <= start < end <= len(ins) and ins[target].target_flag):
            problems.append("bad exception entry %d..%d -> %d" % (start, end, target))
    return problems


def walk(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            for sub in walk(c):
                yield sub


def corpus_code_objects():
    stdlib = os.path.dirname(os.__file__)
    for name in CORPUS:
        path = os.path.join(stdlib, name + ".py")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            top = compile(f.read(), path, "exec")
        for co in walk(top):
            yield name, co


def check_corpus(ir_dump):
    """{"code_objects": n, "problems": [...]} over the corpus of this interpreter."""
    n, problems = 0, []
    for name, co in corpus_code_objects():
        n += 1
        where = "%s:%s" % (name, getattr(co, "co_qualname", co.co_name))
        try:
            ins, exc = parse_dump(ir_dump(co))
        except Exception as e:  # a lift error is a problem like any other
            problems.append("%s: %s" % (where, e))
            continue
        for p in dis_problems(co, ins, exc) + stack_problems(ins, exc, co.co_stacksize):
            problems.append("%s: %s" % (where, p))
    return {"code_objects": n, "problems": problems[:20], "count": len(problems)}


if __name__ == "__main__":
    if sys.argv[1:] != ["--check"]:
        sys.exit("usage: python tests/test_lift.py --check")
    sys.path.insert(0, ROOT)
    try:
        from depyf._core import ir_dump
    except ImportError as e:
        print(json.dumps({"skip": str(e)}))
        sys.exit(0)
    print(json.dumps(check_corpus(ir_dump)))
    sys.exit(0)

# ---------------------------------------------------------------- tests

import pytest  # noqa: E402  (the script mode above runs without pytest)

core = pytest.importorskip("depyf._core")
if not hasattr(core, "ir_dump"):
    pytest.skip("depyf._core.ir_dump is not built yet", allow_module_level=True)


def ir(fn):
    return parse_dump(core.ir_dump(fn.__code__))


def ops(fn):
    return [i.op for i in ir(fn)[0] if i.op != "NOP"]


def test_corpus_agrees_with_dis_and_is_stack_consistent():
    result = check_corpus(core.ir_dump)
    assert result["code_objects"] > 1000
    assert result["count"] == 0, result["problems"]


def other_interpreters():
    found = {}
    for py in sorted(glob.glob("/root/.pyenv/versions/3.*/bin/python")):
        minor = int(py.split("/")[-3].split(".")[1])
        if 8 <= minor <= 13 and minor != V[1]:
            found[minor] = py
    return [found[m] for m in sorted(found)]


@pytest.mark.parametrize("python", other_interpreters(), ids=lambda p: p.split("/")[-3])
def test_corpus_under_other_interpreters(python):
    res = subprocess.run([python, os.path.abspath(__file__), "--check"], capture_output=True, text=True,
                         cwd=ROOT, timeout=600)
    if res.returncode != 0 and "No module named" in res.stderr:
        pytest.skip("no usable extension build for %s" % python)
    assert res.returncode == 0, res.stderr[-2000:]
    result = json.loads(res.stdout.strip().splitlines()[-1])
    if "skip" in result:
        pytest.skip("no extension build for %s: %s" % (python, result["skip"]))
    assert result["code_objects"] > 1000
    assert result["count"] == 0, result["problems"]


# Real functions: what the structurer can count on, checked under the running interpreter.

def test_keyword_call_is_one_call_with_the_names():
    def f(g, a):
        return g(a, key=1)

    calls = [i for i in ir(f)[0] if i.op == "CALL"]
    assert len(calls) == 1
    assert calls[0].operands[0] == "2"
    assert "kw=('key',)" in calls[0].operands


def test_method_call_is_a_pair():
    def f(o):
        return o.m(1)

    assert ops(f)[-3:] == ["LOAD_CONST", "CALL", "RETURN_VALUE"]
    assert "LOAD_METHOD" in ops(f)
    call = [i for i in ir(f)[0] if i.op == "CALL"][0]
    assert "pair" in call.operands


def test_await_is_one_yield_from():
    async def f(x):
        return await x

    body = ops(f)
    if body[-2:] == ["STOPITERATION_ERROR", "RERAISE"]:
        body = body[:-2]  # 3.12+: the coroutine's own StopIteration handler
    assert body.count("YIELD_FROM") == 1
    assert "YIELD_VALUE" not in body and "JUMP" not in body
    assert body[-2:] == ["YIELD_FROM", "RETURN_VALUE"]


def test_yield_from_result_is_used_directly():
    def f(x):
        r = yield from x
        return r

    body = ops(f)
    i = body.index("YIELD_FROM")
    assert body[i - 1] == "GET_YIELD_FROM_ITER" and body[i + 1] == "STORE_FAST"


def test_except_clause_matches_like_3_11():
    def f(a):
        try:
            a()
        except (KeyError, ValueError):
            return 1

    body = ops(f)
    i = body.index("CHECK_EXC_MATCH")
    assert body[i - 3:i] == ["LOAD_GLOBAL", "LOAD_GLOBAL", "BUILD_TUPLE"]
    assert body[i + 1] == "POP_JUMP_IF_FALSE"
    assert "COPY" not in body[:i]


def test_for_loop_target_is_after_the_loop():
    def f(xs):
        for x in xs:
            g(x)  # noqa: F821
        return 0

    ins, _ = ir(f)
    loop = [i for i in ins if i.op == "FOR_ITER"][0]
    after = ins[loop.target]
    assert after.op == "LOAD_CONST" and ins[loop.target + 1].op == "RETURN_VALUE"
    assert after.target_flag


def test_lines_start_where_statements_start():
    def f(a):
        b = a + 1
        c = b * 2
        return c

    first = f.__code__.co_firstlineno
    starts = [(i.line - first, i.op) for i in ir(f)[0] if i.start and i.op != "NOP"]
    assert starts == [(1, "LOAD_FAST"), (2, "LOAD_FAST"), (3, "LOAD_FAST")]


@pytest.mark.skipif(V < (3, 11), reason="exception tables exist from 3.11 on (the block stack before)")
def test_exception_table_is_in_ir_indices():
    def f(a):
        try:
            return a()
        finally:
            a.close()

    ins, exc = ir(f)
    assert exc
    for start, end, target, depth, lasti in exc:
        assert 0 <= start < end <= len(ins)
        assert ins[target].target_flag


def test_lift_error_is_a_decompilation_error():
    def f():
        return 1

    bad = f.__code__.replace(co_code=bytes([dis.opmap["NOP"], 0, 0, 0]))
    with pytest.raises(Exception) as info:
        core.ir_dump(bad)
    assert "offset 2" in str(info.value) or getattr(info.value, "offset", None) == 2
