"""Behaviour cases for try/except/finally and with shapes of the 3.8-3.10
block-stack bytecode (SETUP_FINALLY, POP_EXCEPT, END_FINALLY, ...) that once
decompiled to the state-machine fallback although a structured form exists
(issue 11, found on third-party packages).  They run on every interpreter.
Imported by behaviour_cases.py, whose CASES they join; test_legacy_shapes.py
checks that none of them needs the fallback."""
from behaviour_cases import Ctx, case


def act(x):
    """x itself, or the exception x names ('k': KeyError, 'v': ValueError)."""
    if x == "k":
        raise KeyError(x)
    if x == "v":
        raise ValueError(x)
    return x


# --- loops whose body is a try with a `continue` out of an except clause -----

@case((["v", "k"],), ([1, "k"],), ([],), ([2],))
def loop_try_except_else_return(xs):
    # 3.8/3.9: the clause's `POP_EXCEPT; JUMP head` is no end of the loop
    # (the jump after the handler is, dead as the else returns); 3.10
    # places the else's return before the handlers
    log = []
    while True:
        try:
            x = act(xs.pop())
        except KeyError:
            log.append("k")
        except BaseException:
            log.append("b")
            raise
        else:
            return x, log


@case((["k", "k"],), ([3, "k"],), ([],))
def loop_try_one_clause_else_return(xs):
    log = []
    while True:
        try:
            x = act(xs.pop())
        except (KeyError, IndexError):
            log.append("k")
            if not xs:
                return None, log
        else:
            return x, log


@case((["k", 1, "k"],), ([5],), (["v"],), ([],))
def while_test_try_except_else_return(xs):
    log = []
    while xs:
        try:
            x = act(xs.pop())
        except KeyError:
            log.append("k")
        else:
            return x, log
    return "done", log


@case(([1, "k", 2],), (["v"],), ([],))
def loop_try_except_continue_then_code(xs):
    log = []
    while xs:
        try:
            x = act(xs.pop())
        except KeyError:
            log.append("k")
            continue
        log.append(x)
    return log


# --- `return v` leaving a try and the with around it --------------------------

@case(([1, 2],), ([],))
def with_try_return_except_raise(xs):
    # the return pops two blocks (POP_BLOCK; POP_BLOCK; SWAP; __exit__):
    # the code after the first POP_BLOCK is no copy of the code after the try
    from behaviour_cases import Ctx
    log = []
    with Ctx(log, "m"):
        try:
            return xs.pop(), log
        except IndexError:
            raise KeyError(len(log)) from None


@case(([1, 2],), ([],))
def with_try_return_except_return(xs):
    from behaviour_cases import Ctx
    log = []
    with Ctx(log, "m"):
        try:
            return xs.pop(), log
        except IndexError:
            return None, log


@case((["k", 4],), (["v"],), (["k", "k", 0],), ([],))
def loop_try_except_as_raise_else_return(xs):
    # 3.9: the dead `POP_EXCEPT; e = None; del e; JUMP head` after the
    # raise of an `except ... as e` clause is no end of the loop either
    from behaviour_cases import Ctx
    log = []
    with Ctx(log, "m"):
        while True:
            try:
                x = act(xs.pop())
            except KeyError:
                log.append("k")
            except (ValueError, IndexError) as exc:
                if not xs:
                    raise KeyError(type(exc).__name__) from None
                raise TypeError from exc
            else:
                return x, log


@case((["k", 1], []), (["k", "v"], []), ([], []))
def with_loop_try_else_return_none(xs, log):
    # the `return` leaves the loop and the with: `LOAD_CONST None;
    # RETURN_VALUE` after __exit__ is no copy of the code after the with
    from behaviour_cases import Ctx
    with Ctx(log, "m"):
        while True:
            try:
                log.append(act(xs.pop()))
            except KeyError:
                log.append("k")
            else:
                return
    log.append("never")


@case((1, ["k", 7]), (1, ["v"]), (0, []), (1, []))
def loop_in_if_try_else_return(p, xs):
    # 3.8/3.9: a speculative walk of the if as a conditional expression
    # consumed the loop's jump back; the loop is found again afterwards
    log = []
    if p:
        while True:
            try:
                x = act(xs.pop())
            except KeyError:
                log.append("k")
            else:
                return x, log
    else:
        return None, log


@case(([1, 2],), (["k", 3],), (["k"],), (["v", 1],))
def for_try_return_except_pass(xs):
    # `return v` in a for loop's try: POP_BLOCK; SWAP 2; POP_TOP (the
    # iterator); RETURN_VALUE is the body's own return
    for x in xs:
        try:
            return act(x)
        except KeyError:
            pass
    raise IndexError


@case(([1, 2], None), (["k", "3"], int), (["k", "x"], int), (["k"], None))
def for_try_return_except_continue(xs, conv):
    for x in xs:
        if conv is not None:
            try:
                return conv(act(x))
            except (KeyError, ValueError):
                continue
        return x
    return "none"


# --- 3.10 copies the normal exit of a with into each branch ending its body ---

@case((1, []), (0, []), (2, []))
def with_if_else_ending_the_function(f, log):
    from behaviour_cases import Ctx
    with Ctx(log, "m"):
        if f == 1:
            log.append("one")
        elif f:
            log.append("other")
        else:
            log.append("zero")


@case((1, []), (0, []))
def with_if_then_return_constant(f, log):
    from behaviour_cases import Ctx
    with Ctx(log, "m") as name:
        if f:
            log.append(name)
    return 7


@case((1, []), (0, []))
def async_with_if_else_ending_the_function(f, log):
    import asyncio

    class ACtx:
        async def __aenter__(self):
            log.append("enter")

        async def __aexit__(self, *exc):
            log.append("exit")

    async def run():
        async with ACtx():
            if f:
                log.append("yes")
            else:
                log.append("no")

    asyncio.run(run())
    return log


@case((["k"], []), ([1], []), (["v"], []))
def with_try_except_as_ending_the_function(xs, log):
    # 3.10: the try body and the clause each go to their own copy of the
    # with's exit
    from behaviour_cases import Ctx
    with Ctx(log, "m"):
        try:
            log.append(act(xs.pop()))
        except KeyError as exc:
            log.append(type(exc).__name__)


@case((["k"], []), ([1], []), (["v"], []))
def async_with_try_except_ending_the_function(xs, log):
    import asyncio

    class ACtx:
        async def __aenter__(self):
            log.append("enter")

        async def __aexit__(self, *exc):
            log.append("exit")

    async def run():
        async with ACtx():
            try:
                log.append(act(xs.pop()))
            except KeyError:
                log.append("k")

    asyncio.run(run())
    return log


# --- 3.10 copies the RERAISE closing a finally body into its branches --------

@case((1, [1]), (0, [1]), (1, ["k"]), (0, ["k"]))
def finally_with_if_else(flag, xs):
    log = []
    try:
        log.append(act(xs.pop()))
    finally:
        if flag:
            done = True
        else:
            done = False
    if not done:
        raise IndexError(log)
    return log


@case((1, [1]), (2, [1]), (0, ["k"]), (2, ["v"]))
def finally_with_if_elif_else_and_nested_try(flag, xs):
    log = []
    try:
        log.append(act(xs.pop()))
    finally:
        if flag == 1:
            log.append("one")
        elif flag:
            try:
                log.append(act("k"))
            except KeyError:
                log.append("inner")
        else:
            log.append("zero")
    return log


# --- 3.10 copies a small raise after a with into the end of its body ---------

@case((["k"], []), ([1], []))
def except_clause_with_then_reraise(xs, log):
    from behaviour_cases import Ctx
    try:
        log.append(act(xs.pop()))
    except BaseException:
        log.append("caught")
        with Ctx(log, "m"):
            log.append("inside")
        raise
    return log


@case(([1], []), ([], []))
def with_then_raise_ending_the_function(xs, log):
    from behaviour_cases import Ctx
    with Ctx(log, "m"):
        if xs:
            log.append(xs.pop())
    raise KeyError(len(log))


# --- statements nested in a finally body close their own handlers ------------

@case((["k"], []), ([1], []), (["v"], []))
def try_except_finally_with_a_with(xs, log):
    # 3.8: the END_FINALLY of the with's handler is not the finally's
    from behaviour_cases import Ctx
    try:
        log.append(act(xs.pop()))
    except KeyError:
        log.append("k")
        raise
    finally:
        with Ctx(log, "m"):
            log.append("fin")


@case(([1], []), (["k"], []), (["v"], []))
def finally_with_a_nested_try_finally(xs, log):
    try:
        log.append(act(xs.pop()))
    finally:
        try:
            log.append("inner")
        finally:
            log.append("innermost")
        log.append("after")


# --- 3.8: `return` in an except-as clause calls the name's cleanup -----------

@case((1, ["v"]), (1, [3]), (0, []), (1, ["k"]))
def except_as_clause_returning(flag, xs):
    log = []
    if flag:
        try:
            x = act(xs.pop())
        except (ValueError, IndexError) as e:
            log.append(type(e).__name__)
            return 0, log
    else:
        x = 2
    return x, log


@case((4, [1, 2, "k", 3]), (2, [1]), (3, []))
def for_try_except_break(n, xs):
    # 3.8/3.9: the break pops the iterator after POP_EXCEPT, then jumps
    log = []
    for _ in range(n):
        try:
            x = act(xs.pop(0))
        except (KeyError, IndexError):
            break
        log.append(x)
    return log


@case((["v"],), ([1, "k"],), ([2, 1],), ([1, "v"],))
def tries_whose_clauses_return_none(xs):
    # the second clause's `return None` is no code after the first try
    try:
        a = act(xs.pop())
    except ValueError:
        return None
    try:
        b = act(xs.pop())
    except (KeyError, IndexError):
        return None
    return a, b


# --- a try ending a loop body: its exits jump back, its handler follows -------

@case(([1, "k", 2],), (["v", 1],), ([],))
def while_true_ending_with_try_except(xs):
    log = []
    while True:
        if not xs:
            return log
        try:
            log.append(act(xs.pop()))
        except KeyError:
            pass


@case(([1, "k"],), ([2, 1],), ([],))
def while_ending_with_try_except_raise(xs):
    log = []
    while True:
        if not xs:
            break
        try:
            log.append(act(xs.pop()))
        except KeyError:
            raise ValueError(log)
    return log


@case(([1, 2],), ([1, "k"],), (["k"],))
def while_test_ending_with_try_except_raise(xs):
    log = []
    while xs:
        try:
            log.append(act(xs.pop()))
        except KeyError:
            raise ValueError(log)
    return log


@case((1, []), (0, []))
def with_if_return_none_early(flag, log):
    # `return` in a branch of the with body: after __exit__, `LOAD_CONST
    # None; RETURN_VALUE` is that return, not the code after the with
    from behaviour_cases import Ctx
    with Ctx(log, "m"):
        if flag:
            return
        log.append("rest")


@case((["k", "k"],), (["v", "k"],), ([1, "k"],), ([1],), (["k", "v"],))
def nested_except_returning(xs):
    # `return v` out of two except blocks: POP_EXCEPT; POP_EXCEPT; return
    log = []
    try:
        log.append(act(xs.pop()))
    except KeyError:
        try:
            log.append(act(xs.pop()))
        except KeyError:
            return False, log
    return True, log


@case(([], 1), (["x"], "k"))
def try_finally_around_a_with(log, q):
    # 3.10: the with's exit jumps to a copy of the code after the with
    # (POP_BLOCK, the finally body, return None)
    from behaviour_cases import Ctx
    try:
        with Ctx(log, "m"):
            log.append(act(q))
    finally:
        log.append("fin")


@case((1, ["v"], []), (1, [3], []), (0, [], []))
def if_try_except_as_return_then_code(flag, xs, log):
    # the clause's `return` is no copy of the function's final `return
    # None`: the code after the if must not run after the clause (3.8-3.10
    # printed `else: log.append('after')` and let the clause fall into it)
    if flag:
        try:
            log.append(act(xs.pop()))
        except (ValueError, IndexError) as exc:
            log.append(type(exc).__name__)
            return
    log.append("after")


@case((1, "7"), (1, "-3"), (1, "x"), (None, "7"))
def try_else_ending_an_if_branch(c, s):
    # the clause jumps past the if's else: the try's else is not the code up
    # to there (3.8/3.9 printed the if's `n = 5` inside it)
    if c is not None:
        try:
            n = int(s)
        except ValueError:
            n = None
        else:
            if n < 0:
                n = None
    else:
        n = 5
    return n


class _Guard:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")

    def __exit__(self, *exc):
        self.log.append("exit")


@case((["v", 1],), ([2],), (["v", "k"],))
def with_while_true_try_break_except(xs):
    # the body's normal exit `POP_BLOCK; JUMP <loop exit>` is a break (the
    # with's POP_BLOCK follows the loop), no else running to there
    log = []
    with _Guard(log):
        while True:
            try:
                log.append(act(xs.pop()))
                break
            except ValueError:
                log.append("again")
    return log


@case((None, "7"), ([], "7"), ([], "v"), ([], "k"), ([0], "-1"), ([0], "5"))
def if_try_except_as_reraise_else_if(p, s):
    # the clause and the else's if jump past the enclosing if's else: the
    # try's else is the rest of the if's branch
    if p is not None:
        if p == []:
            try:
                r = int(act(s))
            except ValueError as e:
                if e.args != ("v",):
                    raise
            else:
                if r > 0:
                    p.append(r)
        else:
            p = p + [1]
    else:
        p = None
    return p


@case((None, [1], ["k"]), (None, ["v"], ["k"]), (None, [2], ["v"]), (0, [3], ["v"]), (0, ["k"], []))
def finally_ending_with_a_nested_try_except(t, xs, ys):
    # 3.10 copies the finally body's closing RERAISE into the nested try's
    # exits but not into its path for an exception no clause matches: the
    # normal path's copy of the body reraises there too
    log = []
    try:
        log.append(act(xs.pop()))
    finally:
        log.append("fin")
        if t is None:
            try:
                log.append(act(ys.pop()))
            except KeyError:
                log.append("k")
    return log


@case(([1, 0, 0], {"a": 1}, "a"), ([0, 0], {}, "a"), ([0], {"a": 1}, "a"), ([1, 1, 0], {"a": 2}, "a"))
def while_true_if_else_try_except_continue(flags, d, k):
    # the loop's only jump back past the if is a continue out of an except
    # clause (3.10: to the NOP of the `while True` line); 3.8/3.9 close the
    # loop with a dead jump back after the else's return
    log = []
    while True:
        if flags.pop():
            log.append(len(flags))
        else:
            try:
                del d[k]
            except KeyError:
                log.append("k")
                if not flags:
                    return log
                continue
            else:
                return log, d


@case(([None], ["v"]), ([None], [1]), ([0], [2]), ([None], ["k"]))
def try_except_as_return_else_finally(box, xs):
    # the clause's return leaves the name's block, the handler, then the
    # finally's (`POP_BLOCK; POP_EXCEPT; e = None; del e; POP_BLOCK`):
    # the last POP_BLOCK is the finally's, whose body is copied there (3.9
    # printed that copy in the clause, running the finally body twice)
    log = []
    try:
        s = act(xs.pop())
    except ValueError as exc:
        log.append(str(exc))
        return log
    else:
        if box[0] is None:
            box[0] = s
        else:
            log.append(s)
    finally:
        log.append("fin")
    return log, box


# --- an except clause's return and a later copy of it --------------------------
# 3.10 copies a small exit block into the except clauses that jump to it: a
# clause's `return None` is read as a jump to the next `return None` only
# where the code after the statement runs into that one (else its own).

@case(("3",), ("v",), ("-4",))
def try_except_return_none_then_if_return_none(x):
    try:
        s = int(act(x))
    except ValueError:
        return None
    if s < 0:
        return None
    return s * 2


@case(("3", []), ("v", []), ("9", []))
def try_except_return_none_then_loop_return_none(x, log):
    # the loop's jump back enters the code before the copy
    try:
        n = int(act(x))
    except ValueError:
        return None
    while True:
        log.append(n)
        if n > 5:
            return None
        n += 1


@case(("3",), ("v",), (None,), ([1, 2, 3],), ([1],))
def try_return_except_return_none_or_pass(x):
    # the body returns: the clauses have no else to join through
    try:
        return int(act(x))
    except ValueError:
        return None
    except TypeError:
        pass
    n = len(x)
    if n > 2:
        return None
    return n


@case(("3", []), ("v", []), (None, []), ("k", ["x"]))
def try_except_else_then_if_return_none(x, log):
    try:
        s = int(act(x))
    except ValueError:
        log.append(1)
    except TypeError:
        return None
    except KeyError:
        pass
    else:
        log.append(s)
    if log:
        return None
    return len(log)


# --- `while True:` whose jumps back are continues out of except clauses -------
# 3.10 drops the dead jump back that 3.8/3.9 leave after such a body (it
# never falls through): the loop ends where its last try statement does.

@case((["3"],), (["x"],), (["4", "x"],), (["x", "x"],), ([],))
def while_true_try_break_except_as_continue_or_raise(xs):
    while True:
        try:
            fd = int(act(xs.pop()))
            break
        except ValueError as e:
            if xs:
                continue
            raise
    return fd


@case((["3"],), (["x"],), (["4", "x"],), (["x", "x"],), ([],))
def while_true_try_return_except_continue_or_raise(xs):
    while 1:
        try:
            return int(act(xs.pop()))
        except ValueError:
            if xs:
                continue
            raise


@case((["3"], []), (["x", "1"], []), (["4", "x"], []), (["x", "x"], []))
def while_true_try_break_then_code(xs, log):
    while True:
        log.append(len(xs))
        try:
            fd = int(act(xs.pop()))
            break
        except ValueError as e:
            if xs:
                continue
            raise
    if fd > 2:
        log.append(fd)
    return log


@case((["3", "x", "k", "1"], []), (["1", "2", "x", "3"], []), (["x"], []))
def for_while_true_try_except_continue_or_break(xs, log):
    # the body's last `break` falls into the loop's exit
    for n in range(3):
        while True:
            try:
                x = int(act(xs.pop()))
            except ValueError:
                continue
            except (KeyError, IndexError):
                break
            log.append(x)
            break
        log.append(n)
    return log


@case((["5", "s", "x", "s"], []), (["1", "x", "s"], []), (["x"], []))
def while_true_if_continue_then_try_except_continue(xs, log):
    while True:
        if xs and xs[-1] == "s":
            xs.pop()
            log.append("s")
            continue
        try:
            x = int(act(xs.pop()))
        except ValueError:
            continue
        return x, log


@case(([[1, 2], [3]], 2), ([[], [1]], 1), ([], 1))
def while_test_try_except_continue(lists, r):
    # a `while cond:` (its continue goes to the test, the loop's end to the
    # body): no `while True:` around it
    gens = [iter(x) for x in lists]
    level = 0
    out = []
    while gens:
        try:
            p = next(gens[-1])
        except StopIteration:
            gens.pop()
            level -= 1
            continue
        if level + 1 == r:
            out.append(p)
        else:
            level += 1
    return out, level


# --- an except clause's branches each with a copy of the way out --------------
# 3.10 copies `POP_EXCEPT; return x` into the end of every branch that jumps
# to it: the jumps go to the copy the clause falls into.

@case(("3",), ("k",), ("",))
def try_except_if_else_then_return(x):
    try:
        tokens = act(x)
    except KeyError:
        if x:
            tokens = [1]
        else:
            tokens = []
    return x, tokens


@case(("3", 1), ("k", 1), ("k", 0), ("v", None))
def try_except_nested_if_else_then_return(x, y):
    try:
        loc, tokens = act(x), y
    except (KeyError, ValueError):
        dv = y
        if dv is not None:
            if y:
                tokens = [dv, 1]
            else:
                tokens = [dv]
        else:
            tokens = []
    return x, tokens


@case(("3", 1), ("k", 1), ("k", 0), ("k", None))
def try_except_as_if_else_then_return(x, y):
    try:
        tokens = act(x)
    except KeyError as e:
        if y:
            tokens = [str(e), y]
        elif y is None:
            tokens = None
        else:
            tokens = [y]
    return x, tokens


@case(("3", 0, 0, []), ("3", 0, 1, []), ("v", 1, 1, []), ("v", 1, 0, []), ("v", 0, 1, []), ("v", 0, 0, []))
def try_except_as_if_else_nested_ifs_else_return(x, silent, cache, log):
    # conditional jumps go to copies of the clause's way out too
    try:
        rv = act(x)
    except ValueError as e:
        if silent:
            rv = None
            if cache:
                log.append(1)
        else:
            rv = str(e)
            if cache:
                log.append(2)
    else:
        if cache:
            log.append(3)
    return rv, log


# --- try/finally whose normal exit jumps on past the code after it ------------
# 3.9+: `POP_BLOCK; <finally copy>; JUMP X`, X threaded past the jump over
# an else: the jump is the enclosing statement's.

@case((0, 0, []), (1, 0, []), (0, 0, [1]), (1, 1, []))
def if_try_finally_elif_raise(exc_info, sent, log):
    if exc_info:
        try:
            if sent:
                raise ValueError(exc_info)
        finally:
            exc_info = None
    elif log:
        raise AssertionError("set")
    log.append(exc_info)
    return log


@case(([0, 1, 2], []), ([], []), ([3, 0], []))
def for_if_try_finally_else(xs, log):
    for x in xs:
        if x:
            try:
                log.append(x)
            finally:
                log.append("f")
        else:
            log.append("e")
    return log


@case(([1, 3], []), ([3, 3], []), ([], []))
def while_try_continue_finally_then_break(xs, log):
    while xs:
        x = xs.pop()
        try:
            log.append(x)
            if x == 3:
                continue
        finally:
            log.append("f")
        break
    return log


# --- the code after a try whose body only returns, copied into a clause -------
# 3.10 moves a small exit block that a clause jumps to into the clause (the
# body never reaches it): it is the code after the statement, not the
# clause's (a raise there would chain the exception handled).

@case(("v",), ("k",), ("3",))
def tries_returning_then_raise(x):
    try:
        return int(act(x))
    except ValueError:
        pass
    try:
        return act(x + x)
    except KeyError:
        pass
    raise LookupError(x)


@case(("3", 1), ("v", 2), ("k", 3), ("vv", 4))
def except_clause_try_return_except_pass_then_return(x, default):
    try:
        return int(act(x))
    except ValueError:
        try:
            act(x[1:])
            return False
        except (ValueError, IndexError):
            pass
        return default


# --- more copies of a way out, jumped to -------------------------------------

@case(("abc", []), ("", []), ("a", []))
def with_while_loop_ending_the_function(buffer, log):
    # the loop's test jumps to a copy of the with's exit
    if not buffer:
        return
    with Ctx(log, "w"):
        while buffer:
            log.append(buffer)
            buffer = buffer[1:]


@case((None, []), ([1], []), ([], []), ("ab", []))
def and_or_statement_ending_the_function(v, log):
    v is None or (log.append(v) or (hasattr(v, "__len__") and log.append(len(v))))


@case(([1, 2, 0], "k"), ([1, 0, 2], 3), (["k"], 3), ([3, 3, 3], "k"))
def try_while_loop_then_return_past_the_handler(xs, tail):
    # the loop's exits go to copies of `POP_BLOCK; return act(tail)`: the
    # return is after the statement, its KeyError not the clause's
    log = []
    try:
        log.append(act(xs.pop()))
        while xs and xs[-1]:
            log.append(act(xs.pop()))
    except KeyError as e:
        raise ValueError(str(e)) from e
    return act(tail), log


@case(("a", []), ("1", []), ("b", []))
def try_except_then_raise_copied_after_the_body(x, log):
    # 3.10 copies the `raise` after the statement to the end of the body
    # (after its POP_BLOCK) and into the clause: both are that code
    if x == "a":
        return None
    log.append(x)
    try:
        log.append(int(x))
    except ValueError:
        log.append("v")
    raise KeyError(x)


@case(("k", []), ("1", []))
def with_try_except_return_constant_then_return(x, log):
    # the clause's `return False` calls __exit__ on its own copy of the
    # stack: the with's __exit__ is still there for the return after
    with Ctx(log, "c") as s:
        try:
            act(x)
        except KeyError:
            return False
        return s == "c"


class KeyErrorAttrs:
    """An object whose missing attributes raise KeyError (dunders aside:
    copy.deepcopy looks for those)."""

    def __init__(self, **attrs):
        self.__dict__.update(attrs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise KeyError(name)

    def __repr__(self):
        return "KeyErrorAttrs(%s)" % ", ".join("%s=%r" % kv for kv in sorted(self.__dict__.items()))


@case(({"p.a": KeyErrorAttrs(Reader=1)}, "A"), ({"a": KeyErrorAttrs(Reader=2)}, "a"), ({"a": KeyErrorAttrs()}, "a"),
      ({}, "a"))
def try_except_try_except_as_raise_then_return_attribute(mods, name):
    # 3.10 copies `return module.Reader` after the inner try body's
    # POP_BLOCK and the clause's POP_EXCEPT: read inside that body, its
    # KeyError would become a LookupError (the structurer refuses that)
    name = name.lower()
    try:
        module = mods["p." + name]
    except KeyError:
        try:
            module = mods[name]
        except KeyError as err:
            raise LookupError(name) from err
    return module.Reader
