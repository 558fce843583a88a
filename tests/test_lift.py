"""The lifter (bytecode -> version-neutral IR) on real code objects, through
`depyf._core.ir_dump`.

For every code object of a stdlib corpus the IR must agree with `dis`
(source lines, jump targets, exception handlers) and be stack-consistent:
simulating the stack effects of the core's op table (irop.c, printed by
`ir_dump(code, effects=True)`) along every edge never underflows and gives
every instruction a single depth.  That is what the structurer relies on,
and it catches a wrong translation of any opcode or a wrong table entry.

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

INSTR = re.compile(r"^\s*(\d+)\s+(\d+)\s+(-|\d+)([* ]) (>>|  ) (\S+)(.*?)(?: -> (\d+))?"
                   r"(?: ; (\?|\d+>\d+)(?: \| (\d+>\d+))?)?$")
EXC = re.compile(r"^exc (\d+)\.\.(\d+) -> (\d+) depth (\d+)( lasti)?$")

Instr = collections.namedtuple("Instr", "offset line start target_flag op operands target effect jump_effect")


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
        _, off, lno, star, flag, op, rest, target, effect, jump_effect = m.groups()
        effect = None if effect in (None, "?") else tuple(int(v) for v in effect.split(">"))
        jump_effect = effect if jump_effect is None else tuple(int(v) for v in jump_effect.split(">"))
        ins.append(Instr(int(off), None if lno == "-" else int(lno), star == "*", flag == ">>", op,
                         rest.split(), None if target is None else int(target), effect, jump_effect))
    return ins, exc


# ---------------------------------------------------------------- stack effects

TERMINATORS = {"RETURN_VALUE", "RAISE", "RERAISE", "JUMP"}


def stack_problems(ins, exc, stacksize):
    """Simulates stack depths over every edge with the effects of the core's
    op table (falling through, and taking the jump or entering a SETUP_*'s
    handler); returns a list of problems."""
    if any(i.effect is None for i in ins):  # 3.8's finally machinery: no fixed effect
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
        pops, pushes = cur.effect
        if d - pops < 0:
            problems.append("%d %s: underflow" % (i, cur.op))
            continue
        if cur.target is not None:
            reach(cur.target, d - cur.jump_effect[0] + cur.jump_effect[1], "%d" % i)
        if cur.op not in TERMINATORS:
            reach(i + 1, d - pops + pushes, "%d" % i)
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
            ins, exc = parse_dump(ir_dump(co, effects=True))
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
