"""Behaviour cases for control flow around try statements (loops whose body
holds one, except clauses whose branches leave the clause) and loops ending
an if branch, shapes that once decompiled to the state-machine fallback on
3.12/3.13 although a structured form exists (issue 11, found on third-party
packages).  Imported by behaviour_cases.py, whose CASES they join;
tests/test_try_flow_shapes.py checks that none of them needs the fallback
(nor fails validation)."""
import sys

from behaviour_cases import case
from behaviour_cases_exc import _step


def _get(log, xs):
    """Pops and logs the next item; raises the exception it names, if any."""
    return _step(log, xs.pop(0) if xs else None)


QUEUES = [([1, 2, None],), ([1, "value", 3, None],), (["key", 4, None],), (["value", "key", None],), ([None],),
          ([5, "key"],)]


# --- `while True:` whose body holds a try/except: 3.12+ places the except
# clause after the function, from where it jumps back into the loop body ---

@case(*QUEUES)
def while_true_with_try_except_then_code(xs):
    # anyio WorkerThread.run, httpcore _receive_event
    log, out = [], []
    xs = list(xs)
    while True:
        try:
            x = _get(log, xs)
        except ValueError as exc:
            x = str(exc)
        if x is None:
            return out, log
        out.append(x)


@case(*QUEUES)
def while_true_with_try_in_an_if(xs):
    log, out = [], []
    xs = list(xs)
    while True:
        x = xs[0] if xs else None
        if x is None:
            return out, log
        if x != 2:
            result = None
            try:
                result = _get(log, xs)
            except ValueError as exc:
                result = exc.args
            except KeyError:
                result = "k"
            finally:
                log.append("fin")
            if out is not None:
                out.append(result)
        else:
            xs.pop(0)
        log.append("done")


@case(*QUEUES)
def while_true_with_try_except_else_and_break(xs):
    log, out = [], []
    xs = list(xs)
    while True:
        try:
            x = _get(log, xs)
        except ValueError:
            x = -1
        else:
            out.append("ok")
        out.append(x)
        if x is None or len(out) > 5:
            break
    return out, log


@case(*QUEUES)
def while_true_with_try_except_continue_and_break(xs):
    log, out = [], []
    xs = list(xs)
    while True:
        try:
            x = _get(log, xs)
        except KeyError:
            continue
        except ValueError:
            break
        if x is None:
            return out, log
        out.append(x)
    return 7, out, log


# --- an except clause leaving through a branch that ends in a nested try:
# 3.12+ copies the clause's exit (`POP_EXCEPT [e = None; del e] JUMP`) to
# the end of the branch ---------------------------------------------------

class _Dest:
    def __init__(self, log, fail, buffered, autoclose):
        self.log, self.fail, self.autoclose = log, fail, autoclose
        if buffered:
            self.buffer = self

    def write(self, data):
        self.log.append(("write", data))
        if data in self.fail:
            raise TypeError(data)

    def close(self):
        self.log.append("close")


WRITES = [(d, f, b, a) for d in ("s", b"b", b"") for f in ((), ("s", b"b")) for b in (0, 1) for a in (0, 1)]


@case(*WRITES)
def except_as_branch_ending_in_a_try_in_try_finally(data, fail, buffered, autoclose):
    # docutils FileOutput.write
    log = []
    dest = _Dest(log, fail, buffered, autoclose)
    try:
        dest.write(data)
    except TypeError as err:
        if isinstance(data, bytes):
            try:
                dest.buffer.write(data + b"!")
            except AttributeError:
                if data:
                    log.append("no buffer")
                else:
                    log.append(str(err))
    finally:
        if dest.autoclose:
            dest.close()
    return data, log


@case(*WRITES)
def except_branch_ending_in_a_try(data, fail, buffered, autoclose):
    log = []
    dest = _Dest(log, fail, buffered, autoclose)
    try:
        dest.write(data)
    except TypeError:
        if data:
            try:
                dest.buffer.write(data * 2)
            except (AttributeError, TypeError):
                pass
    dest.close()
    return log


# --- an if/else in an except clause: 3.12+ ends each branch with its own
# copy of the clause's exit, a jump back to the code after the try ---------

@case((0, 0), (0, 1), ("key", 0), ("key", 1), ("value", 1), (2, 0))
def if_else_in_an_except_clause_then_a_loop(x, flag):
    log = []
    try:
        _get(log, [x])
    except KeyError:
        if flag:
            log.append("flag")
        else:
            log.append("no flag")
    except ValueError as exc:
        if flag:
            log.append(exc.args)
        elif x:
            log.append(str(exc))
        else:
            log.append(None)
    for i in range(2):
        log.append(i)
    return log


@case((0, 0), (0, 1), ("key", 0), ("key", 1), ("value", 1), (2, 0))
def if_else_in_a_nested_except_clause_then_a_loop(x, flag):
    log = []
    try:
        _get(log, [x])
    except (KeyError, ValueError):
        try:
            _get(log, [x])
        except KeyError:
            if flag:
                log.append("flag")
            else:
                log.append("no flag")
    for i in range(2):
        log.append(i)
    return log


# --- a try ending an if nested in the then-part of an if/else: the inner
# if's then-part jumps past the outer else (3.12+: as does the except
# clause, placed after the function) ----------------------------------------

@case((None, 0), ("a", 0), ("xa", 0), ("key", 0), ("value", 0), ("value", 1), (2, 1))
def try_ending_an_if_nested_in_an_if_else(path, strict):
    # anyio setup_unix_local_socket
    log = []
    if path is not None:
        s = str(path)
        if not s.startswith("x"):
            try:
                st = _get(log, [path])
            except ValueError as e:
                if strict or e.args[0] != "value":
                    raise
            else:
                if st:
                    log.append("unlink")
    else:
        s = None
    log.append(s)
    return log


# --- an if in an except clause whose then-part is a try/except/else that
# returns or leaves for the code after the outer try, placed after the
# function by 3.12+ -------------------------------------------------------

class _Attrs:
    upper = "U"

    def __repr__(self):
        return "_Attrs()"


@case(({"a": 1}, "a"), ({}, "upper"), ({}, "lower"), ([], 3), (_Attrs(), "upper"), (_Attrs(), "nope"))
def try_else_returning_in_an_if_in_an_except_clause(obj, name):
    # jinja2 SandboxedEnvironment.getitem
    try:
        return obj[name]
    except (TypeError, LookupError):
        if isinstance(name, str):
            try:
                attr = str(name)
            except Exception:
                pass
            else:
                try:
                    value = getattr(obj, attr)
                except AttributeError:
                    pass
                else:
                    return value
    return repr(name)


def _handling():
    """The type of the exception being handled, if any."""
    return repr(sys.exc_info()[0])


def code_after_the_try_reached_only_from_its_clauses(obj, name):
    # 3.12 places the code after the try among the handlers' blocks, 3.13
    # copies it, right after the POP_EXCEPT of the clauses: it runs with no
    # exception handled, not in a clause
    try:
        return obj[name]
    except (TypeError, LookupError):
        if isinstance(name, str):
            try:
                value = getattr(obj, name)
            except AttributeError:
                pass
            else:
                return value
    return _handling()


# (3.10 still reads the copied code after the try into the clause when
# validation is off: try_legacy.c's return tails; not registered there)
if sys.version_info[:2] != (3, 10):
    case(({"a": 1}, "a"), ({}, "upper"), ({}, "lower"), ([], 3), (_Attrs(), "upper"), (_Attrs(), "nope"))(
        code_after_the_try_reached_only_from_its_clauses)


# --- a try whose body starts with `while True:` (3.12+: the line's NOP is
# the only code its first exception-table entry covers, before the loop's
# head), the loop left by a break in an except clause -----------------------

@case(*QUEUES)
def try_around_while_true_left_from_an_except_clause(xs):
    # docutils StateMachine.run
    log, out = [], []
    xs = list(xs)
    try:
        while True:
            try:
                x = _get(log, xs)
            except ValueError:
                break
            out.append(x)
            if len(out) > 3:
                raise KeyError(len(out))
    except BaseException:
        log.append("error")
        raise
    return out


# --- a while loop whose body ends in a try/except/else that breaks: 3.12+
# places the test repeated at the bottom after the except clause, which
# falls into it --------------------------------------------------------------

@case((["value", "value", 3], 5), (["key"], 5), ([1], 5), (["value"] * 6, 3), ([], 0))
def while_test_repeated_after_an_except_clause(xs, n):
    # pyparsing SkipTo.parseImpl
    log = []
    xs = list(xs)
    t = 0
    while t <= n:
        if len(log) > 8:
            break
        try:
            _get(log, xs)
        except ValueError:
            t += 1
        else:
            break
    else:
        raise LookupError(t)
    return t, log


# --- an if/else in a for loop whose then-part ends with a `while True:`
# loop: its break is threaded past the if to the for's head (3.12+ has no
# jump over the else there: the loop's back edge ends the then-part) ---------

@case(([("a", [3, 0]), ("b", []), ("c", [1, 2, 0])],), ([],), ([("x", [0])],))
def while_true_ending_an_if_branch_in_a_for_loop(items):
    # werkzeug stream_encode_multipart
    out = []
    for key, chunks in items:
        if chunks:
            chunks = list(chunks)
            while True:
                chunk = chunks.pop(0)
                if not chunk:
                    out.append((key, "end"))
                    break
                out.append((key, chunk))
        else:
            out.append((key, "empty"))
    out.append("done")
    return out


# --- a `while True:` (or for loop) inside an if, another loop or a module's
# `if __name__ == "__main__":`, whose except clause continues and whose try
# is followed by a break: 3.12+ places the clause, the only jump back, after
# the function, and drops the break's jump (it falls into the code after the
# loop); the loop ends where its natural loop does, not with the region ----

RETRIES = [(flag, xs, []) for flag, xs in [(1, ["key", 4, None]), (1, ["key", "key", 5]), (1, [3]), (0, ["key", 1]),
                                            (1, ["value", 2]), (1, ["key"]), (1, []), (1, ["key", "key", "key", 6])]]


@case(*RETRIES)
def continue_in_except_clause_of_while_true_ending_an_if(flag, xs, log):
    # CPython asyncio/__main__.py (module level)
    if flag:
        while True:
            try:
                _get(log, xs)
            except KeyError:
                continue
            break


@case(*RETRIES)
def continue_after_an_if_in_except_clause_then_code_after_the_loop(flag, xs, log):
    if flag:
        while True:
            try:
                x = _get(log, xs)
            except KeyError as exc:
                log.append(exc.args)
                if len(log) > 3:
                    log.append("many")
                continue
            log.append(("got", x))
            break
        log.append("after")
    return len(log)


@case(*RETRIES)
def continue_in_except_clause_with_else_break_in_an_if_else(flag, xs, log):
    if flag:
        while True:
            try:
                x = _get(log, xs)
            except KeyError:
                log.append("again")
                continue
            else:
                break
        log.append(x)
    else:
        log.append("no")
    log.append("end")


@case(*RETRIES)
def continue_or_fall_to_break_in_except_clause_of_while_true_in_an_if(flag, xs, log):
    if flag:
        while True:
            try:
                _get(log, xs)
            except KeyError:
                if len(xs) % 2:
                    continue
                log.append("even")
            break


@case(*RETRIES)
def continue_in_except_clause_of_for_loop_ending_an_if(flag, xs, log):
    if flag:
        for x in xs:
            try:
                _get(log, [x])
            except KeyError:
                log.append("skip")
                continue
            break
        log.append("after")


@case(*RETRIES)
def continue_in_except_clause_of_while_true_starting_a_while_body(flag, xs, log):
    # (the two loops share their head)
    while flag and xs:
        while True:
            try:
                x = _get(log, xs)
            except KeyError:
                continue
            break
        log.append(("got", x))


@case(*RETRIES)
def continue_in_except_clause_of_for_loop_with_else_break_ending_an_if(flag, xs, log):
    # (3.11: the for body ends with the clause's cleanup, no jump back)
    if flag:
        for x in xs:
            try:
                _get(log, [x])
            except KeyError:
                log.append(x)
                continue
            else:
                break
