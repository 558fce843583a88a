"""Random functions of nested statements (if/elif/else, with, try/except/
else/finally, for and while loops with break and continue, return, raise and
yield) over a few kinds of expressions (and/or, conditionals, comprehensions),
for the differential test (test_random_programs.py) and as a measurement:

    python -m tests.random_programs [FIRST LAST [rich]]

prints how many of the functions of seeds FIRST..LAST (0..3000) decompile
to a state machine, and by which reason.  The rich flavour adds what the
plain one leaves out: a counter updated in place, walrus, chained and
membership tests, star unpacking, del, assert, f-strings, lambdas,
generator expressions, a closure over the function's variables, `with
... as`, for loops unpacking, exception chaining and, on 3.10+, match.  The shapes come from no one's
hand: nesting that a person rarely writes finds what the stdlib and
third-party round trips do not.

Every loop body starts by logging, and the log raises Budget past
LOG_LIMIT entries, so that each call ends; the finally blocks neither
return, raise nor leave a loop (which Python 3.14 warns about)."""
import inspect
import random
import sys

LOG_LIMIT = 200
ARGS = "c0, c1, c2, s0, s1, xs, x"
# inputs of each function: the conditions, the context managers' suppress
# flags, the loop's items and what step() gets
INPUTS = [
    (True, False, True, False, True, [1, 2], 1),
    (False, True, False, True, False, ["value", 1], "value"),
    (True, True, True, True, True, [], "key"),
    (False, False, False, False, False, ["key", "value", 3], 0),
]


class Budget(Exception):
    pass


TRACE = []  # every entry of every log, in order, during one call (outcome)


class Log(list):
    def append(self, item):
        if len(self) >= LOG_LIMIT:
            raise Budget()
        TRACE.append(item)
        super().append(item)


def step(log, x):
    """Logs x; raises the exception it names."""
    log.append(x)
    if x == "value":
        raise ValueError(x)
    if x == "key":
        raise KeyError(x)
    return x


class Ctx:
    """Logs enter and exit; suppresses exceptions when told to."""

    def __init__(self, log, suppress):
        self.log, self.suppress = log, suppress

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, kind, value, tb):
        self.log.append("exit %s" % (kind.__name__ if kind else None))
        return self.suppress


CONDITIONS = ["c0", "c1", "c2", "x", "c0 and c1", "c0 or not c2", "not c1", "x == 1",
              "c1 and (c2 or x)"]
EXPRESSIONS = ["[v for v in xs if v]", "x if c0 else c1", "c0 and x", "(x, c1 or c2)", "{v: 1 for v in xs if v}",
               "-x if x == 1 else x", "len(log) > 3"]


# the rich flavour's additions (n: a counter; g: a closure over x and n)
RICH_CONDITIONS = ["(y := step(log, x))", "0 < n < 3", "x in xs", "x is not None and n", "(n := n + 1) > 2",
                   "x not in (1, 'key')", "any(v == x for v in xs)", "not (c0 or n)"]
RICH_EXPRESSIONS = ["f'{x!r:.12}:{n}'", "(lambda v: v and c1)(x)", "sum(1 for v in xs if v)", "xs[1:]",
                    "xs[-1] if xs else n", "{x, n} if c2 else [*xs, n]", "n * 2 + 1", "{**{'k': x}, 'n': n}",
                    "[(v, w) for v in xs for w in (c0, c1) if w]"]
CLOSURE = ["def g(v):", "    nonlocal n", "    n += 1", "    return v if c0 else (x, n)"]


def _condition(r, ctx):
    return r.choice(CONDITIONS + RICH_CONDITIONS if ctx.get("rich") else CONDITIONS)


def _expression(r, ctx):
    if ctx.get("rich"):
        return r.choice(EXPRESSIONS + RICH_EXPRESSIONS + (["g(x)", "g(c1) or n"] if ctx.get("closure") else []))
    return r.choice(EXPRESSIONS)


def _rich_simple(r, p, ctx):
    k = r.randint(0, 8)
    if k == 0:
        return [p + "n += %d" % r.randint(1, 3)]
    if k == 1:
        return [p + "a, *b = xs", p + "log.append((a, b))"]
    if k == 2:
        return [p + "del y"]
    if k == 3:
        return [p + "assert %s, x" % _condition(r, ctx)]
    if k == 4 and not ctx.get("fin"):
        return [p + r.choice(["raise KeyError(x) from None", "raise ValueError(n)"] +
                             (["raise", "raise TypeError(n) from e"] if ctx.get("handler") else []))]
    if k == 5:
        return [p + "x = %s" % _expression(r, ctx)]
    if k == 6:
        return [p + "y = [*xs, x][%d]" % r.randint(-2, 1)]
    if k == 7 and ctx.get("closure"):
        return [p + "log.append(g(%s))" % r.choice(["x", "y", "n"])]
    return [p + "log.append(%s)" % _expression(r, ctx)]


def _simple(r, ind, ctx):
    p = "    " * ind
    if ctx.get("rich") and r.random() < 0.4:
        return _rich_simple(r, p, ctx)
    k = r.randint(0, 11)
    if ctx.get("fin") and k in (6, 7, 8):
        k = 0
    if k < 3:
        return [p + "log.append(%d)" % r.randint(0, 99)]
    if k == 3:
        return [p + "log.append(%s)" % _expression(r, ctx)]
    if k < 6:
        return [p + "x = step(log, x)"]
    if k == 10:
        return [p + "y = %s" % _expression(r, ctx)]
    if k == 11 and ctx.get("gen"):
        return [p + "yield %s" % r.choice(["x", "len(log)"])]
    if k == 6:
        return [p + "return %s" % r.choice(["1", "x", "log", "(x, log)", "None", "x and c0"])]
    if k == 7 and ctx.get("loop"):
        return [p + r.choice(["break", "continue"])]
    if k == 8:
        return [p + "raise ValueError(x)"]
    return [p + "y = x"]


def _block(r, depth, ind, ctx):
    out = []
    for _ in range(r.randint(1, 2 if depth > 1 else 3)):
        out += _statement(r, depth, ind, ctx)
        if out[-1].split()[0] in ("return", "raise", "break", "continue"):
            break
    return out


def _loop_body(r, depth, ind, ctx):
    return ["    " * ind + "log.append('loop')"] + _block(r, depth, ind, dict(ctx, loop=True))


def _statement(r, depth, ind, ctx):
    p = "    " * ind
    if depth <= 0 or r.random() < 0.35:
        return _simple(r, ind, ctx)
    if ctx.get("rich") and r.random() < 0.3:
        return _rich_statement(r, depth, ind, ctx)
    k = r.randint(0, 6)
    if k == 0:
        out = [p + "if %s:" % _condition(r, ctx)] + _block(r, depth - 1, ind + 1, ctx)
        while r.random() < 0.4:
            out += [p + "elif %s:" % _condition(r, ctx)] + _block(r, depth - 1, ind + 1, ctx)
        if r.random() < 0.5:
            out += [p + "else:"] + _block(r, depth - 1, ind + 1, ctx)
        return out
    if k == 1:
        return [p + "with Ctx(log, %s):" % r.choice(["s0", "s1"])] + _block(r, depth - 1, ind + 1, ctx)
    if k == 2:
        out = [p + "try:"] + _block(r, depth - 1, ind + 1, ctx)
        clauses = r.randint(0, 2)
        for _ in range(clauses):
            head = r.choice(["except ValueError:", "except (KeyError, TypeError) as e:", "except Exception:"])
            out += [p + head] + _block(r, depth - 1, ind + 1, dict(ctx, handler="as e" in head))
        if clauses and r.random() < 0.3:
            out += [p + "except:"] + _block(r, depth - 1, ind + 1, ctx)
        if clauses and r.random() < 0.3:
            out += [p + "else:"] + _block(r, depth - 1, ind + 1, ctx)
        if not clauses or r.random() < 0.3:
            out += [p + "finally:"] + _block(r, depth - 1, ind + 1, dict(ctx, fin=True))
        return out
    if k == 3:
        out = [p + "for i in xs:"] + _loop_body(r, depth - 1, ind + 1, ctx)
        if r.random() < 0.3:
            out += [p + "else:"] + _block(r, depth - 1, ind + 1, ctx)
        return out
    if k == 4:
        out = [p + "while %s:" % r.choice(["c0", "True", "x", "c1 and x"])] + _loop_body(r, depth - 1, ind + 1, ctx)
        if r.random() < 0.2:
            out += [p + "else:"] + _block(r, depth - 1, ind + 1, ctx)
        return out
    if k == 5:
        return [p + "if %s:" % _condition(r, ctx)] + _block(r, depth - 1, ind + 1, ctx) + _simple(r, ind, ctx)
    return _block(r, depth - 1, ind, ctx)


def _rich_statement(r, depth, ind, ctx):
    p = "    " * ind
    k = r.randint(0, 3 if MATCH else 2)
    if k == 0:
        head = r.choice(["with Ctx(log, s0) as cm:", "with Ctx(log, s1) as cm, Ctx(log, s0):"])
        return [p + head] + _block(r, depth - 1, ind + 1, ctx) + [p + "log.append(cm.suppress)"]
    if k == 1:
        out = [p + "for i, v in enumerate(xs):"] + _loop_body(r, depth - 1, ind + 1, ctx)
        return out + ([p + "else:"] + _block(r, depth - 1, ind + 1, ctx) if r.random() < 0.3 else [])
    if k == 2:
        return [p + "while (n := n + 1) < 4:"] + _loop_body(r, depth - 1, ind + 1, ctx)
    out = [p + "match %s:" % r.choice(["x", "xs", "(x, n)"])]
    cases = ["case 1 | 0:", "case 'value' if c1:", "case str(s):", "case [first, *rest]:", "case (a, 0):",
             "case {'k': a}:", "case int() as a if a > 0:"]
    for head in r.sample(cases, r.randint(1, 3)):
        out += [p + "    " + head] + _block(r, depth - 1, ind + 2, ctx)
    if r.random() < 0.5:
        out += [p + "    case _:"] + _block(r, depth - 1, ind + 2, ctx)
    return out


MATCH = sys.version_info >= (3, 10)


def program(seed, rich=False):
    """The source of function f for seed; rich: the rich flavour (module
    docstring)."""
    r = random.Random(seed)
    ctx = {"gen": r.random() < 0.2}
    head = ["log = Log()"]
    if rich:
        ctx.update(rich=True, closure=r.random() < 0.4)
        head += ["n = 0"] + (CLOSURE if ctx["closure"] else [])
    body = _block(r, 4, 1, ctx)
    return "def f(%s):\n%s\n%s\n    return log\n" % (ARGS, "\n".join("    " + l for l in head), "\n".join(body))


def namespace():
    return {"Log": Log, "step": step, "Ctx": Ctx, "Budget": Budget}


def function(source):
    """f defined by source, or None when it does not compile (a `continue`
    in a finally block before 3.8)."""
    ns = namespace()
    try:
        exec(compile(source, "<random>", "exec", dont_inherit=True), ns)
    except SyntaxError:
        return None
    return ns["f"]


def outcome(fn, args):
    """What fn(*args) does, as comparable data: its result, or the type and
    arguments of what it raised, with everything it logged."""
    TRACE.clear()
    try:
        result = fn(*args)
        result = ("returned", repr(list(result) if inspect.isgenerator(result) else result))
    except Exception as e:  # Budget included
        result = ("raised", type(e).__name__, e.args)
    return result + (list(TRACE),)


def main(argv):
    import collections
    import re

    import depyf

    first, last = (int(argv[0]), int(argv[1])) if len(argv) >= 2 else (0, 3000)
    rich = argv[2:] == ["rich"]
    reasons = collections.Counter()
    total = 0
    for seed in range(first, last):
        fn = function(program(seed, rich))
        if fn is None:
            continue
        total += 1
        source = depyf.decompile(fn)
        if "# depyf:" in source:
            line = next(l for l in source.splitlines() if "# depyf:" in l)
            reasons[re.sub(r"\d+", "N", line.split("(", 1)[-1].split(";")[0])] += 1
    print("Python %s: %d of %d functions are state machines (%.1f%%)" % (
        sys.version.split()[0], sum(reasons.values()), total, 100.0 * sum(reasons.values()) / max(total, 1)))
    for reason, n in reasons.most_common(12):
        print("%6d  %s" % (n, reason))


if __name__ == "__main__":
    main(sys.argv[1:])
