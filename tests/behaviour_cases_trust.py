"""Behaviour cases for shapes the structurer once printed wrong (a form
that compiles but computes something else), found by translation
validation on third-party packages (issue 11).  Where no structured form is
found the state machine is right too: these only ask for the same
behaviour, validated or not (tests/test_behaviour.py runs both ways).
Imported by behaviour_cases.py, whose CASES they join."""
import sys

from behaviour_cases import Ctx, case
from behaviour_cases_exc import _step


# --- code after a try that CPython copies into an except clause (3.12+
# inlines a small exit block into the clause's jump to it, after its
# POP_EXCEPT): printed inside the clause it would run while the exception is
# still handled ---------------------------------------------------------------

def _exc_now():
    return sys.exc_info()[0]


@case(("value", "key", []), ("key", 1, []), ("key", "value", []))
def clause_falls_to_a_copied_bare_raise(x, y, log):
    # the bare raise re-raises the outer exception, not the inner one
    try:
        _step(log, x)
    except KeyError:
        try:
            _step(log, y)
        except ValueError:
            log.append("inner")
        raise


@case(("key", []), (1, []), ("value", []))
def clause_falls_to_a_copied_return_of_a_call(x, log):
    try:
        return _step(log, x)
    except KeyError:
        pass
    return _exc_now()


@case(("key", []), (1, []))
def clause_falls_to_a_copied_raise_with_context(x, log):
    try:
        try:
            return _step(log, x)
        except KeyError:
            pass
        raise ValueError("after")
    except ValueError as e:
        return type(e.__context__)


# --- a `while True` in a with whose try's else clause breaks by falling into
# the with's exit (3.12+: the loop's only jump back is cold code after the
# function): the code after the with was read into the loop, inside the with
# and without its __exit__ call ------------------------------------------------

@case((["key", 1], [5], False), (["key", 0], [], False), ([2], [6, "value"], True), (["value"], [], True))
def loop_in_a_with_left_by_an_else_that_falls_out(ms, xs, suppress):
    log = []
    with Ctx(log, "c", suppress):
        while True:
            try:
                m = _step(log, ms.pop(0))
            except KeyError:
                log.append("again")
            else:
                if not m:
                    raise ValueError(m)
                break
    for x in xs:
        _step(log, x)
    return log


# --- an f-string field `{a if c else b}` (3.12+ copies its FORMAT_VALUE and
# the rest of the string into both arms): printed as `{f"{a}" if c else
# f"{b}"}` each arm was formatted twice ----------------------------------------

class _Formatted(str):
    def __format__(self, spec):
        return "twice"


class _Formats:
    def __format__(self, spec):
        return _Formatted("once")


@case((True, "b"), (False, "b"), (True, ""))
def fstring_field_of_a_conditional(c, b):
    a = _Formats()
    return f"{len(b)}<{a if c else b}"


# --- a `while True` in a try body whose inner try's else breaks by falling
# out of the loop (3.12+: the loop's jump back is cold code after the
# function, the outer try's table entries reach over the code after it):
# that code was read into the loop, where the outer handler caught its
# exceptions ------------------------------------------------------------------

@case((["key", 1],), ([2],), (["value"],), (["key", "value"],), (["key", "key", 3],))
def loop_in_a_try_left_by_an_else_that_falls_out(ms):
    log = []
    try:
        while True:
            try:
                m = _step(log, ms.pop(0))
            except KeyError:
                log.append("again")
            else:
                break
    except BaseException:
        return ["cleanup"] + log
    _step(log, "value" if m == 2 else m)
    return log


# --- a break in an except clause of a for loop with an else, inside another
# loop (3.12+ threads the break's jump to the outer loop's head, past the
# else): it was printed as `pass`, the else as code after the loop ----------

@case(([b"a", b"\xff"], ["ascii", "latin-1"]), ([b"a"], ["ascii"]), ([b"\xff"], ["ascii"]), ([], ["ascii"]))
def break_in_an_except_clause_skips_the_loops_else(raw, encodings):
    for encoding in encodings:
        for key in raw:
            try:
                key.decode(encoding)
            except UnicodeDecodeError:
                break
        else:
            return encoding
    return None


# --- an else clause ending in a raise (3.10 copies it right after the try
# body's POP_BLOCK, in place of the jump to it): read into the try body, the
# except clause caught what it raised -------------------------------------------

@case((1, []), ("key", []), ("value", []))
def else_clause_that_raises_what_the_handler_catches(x, log):
    try:
        _step(log, x)
    except KeyError:
        log.append("caught")
        return log
    else:
        raise KeyError("else")


# --- a while loop whose body ends in an if that breaks or continues (3.8/3.9
# leave the break's dead jump and the back edge after the body, and thread
# the test's jump to the loop's exit): the break was read as the end of the
# body, so the loop ran on -------------------------------------------------------

@case(([5, 1, 9, 2, 0, 3], 5), ([1, 2, 3], 2), ([], 0), ([7, 7, 7], 2))
def while_if_else_break(heap, pos):
    while pos > 0:
        parent = heap[pos // 2] if pos // 2 < len(heap) else 0
        if parent < 5:
            pos = pos // 2
        else:
            break
    return pos


@case(([5, 1, 9, 2, 0, 3], 5, 4), ([1, 2, 3], 2, 0), ([], 0, 1), ([9, 8, 7, 6], 3, 7))
def while_if_continue_then_break(heap, pos, newitem):
    # heapq._siftdown's loop
    while pos > 0 and heap:
        parentpos = (pos - 1) >> 1
        parent = heap[parentpos]
        if newitem < parent:
            heap[pos] = parent
            pos = parentpos
            continue
        break
    if heap:
        heap[pos] = newitem
    return heap, pos


# --- a return inside a try nested in an `except ... as e` clause (3.11+: the
# return unwinds past the try's protected range, then runs the clause's
# `e = None; del e`): that cleanup was printed at the top of the nested try,
# so its handler no longer saw `e` (sysconfig._subst_vars) ----------------------

@case(("{a}", {"a": 1}, {}), ("{b}", {}, {"b": 2}), ("{c}", {}, {}))
def return_in_a_try_inside_an_except_as_clause(template, first, second):
    try:
        return template.format(**first)
    except KeyError as missing:
        try:
            return template.format(**second)
        except KeyError:
            return "missing %s" % missing


@case((1, []), ("key", []), ("value", []))
def return_of_a_local_in_a_try_inside_an_except_as_clause(x, log):
    try:
        _step(log, x)
        return "body"
    except KeyError as error:
        try:
            log.append(len(log))
            return x
        except TypeError:
            return error
        finally:
            log.append(str(error))


# --- `if not c: continue` ending a try body in a loop (3.11: the continue
# unwinds the try before its jump, outside the protected range): the if was
# read as ending at the range, and the continue as a statement after it, run
# every time (pathlib._WildcardSelector._select_from) ---------------------------

class _Entry:
    def __init__(self, kind):
        self.kind = kind

    def is_dir(self):
        if self.kind == "broken":
            raise OSError("broken")
        return self.kind == "dir"


@case((["dir", "file", "broken", "dir"],), ([],), (["file"],))
def continue_ending_a_try_body_in_a_for_loop(kinds):
    kept = []
    for entry in [_Entry(k) for k in kinds]:
        try:
            if not entry.is_dir():
                continue
        except OSError:
            continue
        kept.append(entry.kind)
    return kept


@case((["dir", "file", "dir"],), (["dir", "broken", "dir"],), ([],))
def continue_ending_a_try_body_in_a_while_loop(kinds):
    kept = []
    i = 0
    while i < len(kinds):
        entry = _Entry(kinds[i])
        i += 1
        try:
            if entry.is_dir():
                continue
        except OSError:
            break
        kept.append(entry.kind)
    return kept, i


@case(("a%(x)s", {"x": "b"}, 3), ("plain", {}, 3), ("%(x)s", {"x": "%(x)s"}, 2), ("", {}, 1))
def while_if_try_else_break(value, table, depth):
    # configparser.LegacyInterpolation.before_get's loop: the then-part
    # ends in a try, the else breaks
    while depth:
        depth -= 1
        if value and "%(" in value:
            value = value.replace("a", "A")
            try:
                value = value % table
            except KeyError as e:
                raise ValueError(e.args[0]) from None
        else:
            break
    return value, depth


# --- `if x: return` then `continue` inside an if of a loop body (3.8/3.9
# thread the if's jump through the continue, leaving it dead after the
# return): the continue was dropped, so the rest of the body ran
# (_markupbase.ParserBase._parse_doctype_subset) -----------------------------------

@case(("a<!--b", ), ("<!--", ), ("ab", ), ("", ))
def continue_after_an_if_that_returns(text):
    seen = []
    j = 0
    while j < len(text):
        if text[j] == "<":
            j = text.find("-->", j) if "-->" in text else -len(text) - 1
            if j < 0:
                return seen, j
            continue
        seen.append(text[j])
        j += 1
    return seen, j


# --- a swap whose targets are subscripts with computed keys (`a[i], a[j] =
# a[j], a[i]`): the second value was read into a temporary before the first,
# so the reads ran in the wrong order (MutableSequence.reverse) -------------

class _LoggedList(list):
    """A list that logs each item read and write."""

    def __init__(self, items, log):
        super().__init__(items)
        self.log = log

    def __getitem__(self, k):
        self.log.append(("get", k))
        return super().__getitem__(k)

    def __setitem__(self, k, v):
        self.log.append(("set", k))
        super().__setitem__(k, v)


@case(([1, 2, 3, 4, 5], []), ([], []), ([7, 8], []))
def swap_of_subscripts_with_computed_keys(items, log):
    seq = _LoggedList(items, log)
    n = len(seq)
    for i in range(n // 2):
        seq[i], seq[n - i - 1] = seq[n - i - 1], seq[i]
    return list(seq), log


@case(([1, 2, 3], True, []), ([1, 2, 3], False, []))
def swap_into_a_target_chosen_by_a_conditional(items, c, log):
    seq = _LoggedList(items, log)
    seq[0], seq[2 if c else 1] = seq[2 if c else 1], seq[0]
    return list(seq), log


# --- a `while c: ... else: break` nested in a `while True:` (3.8/3.9 thread
# the else's break to the outer loop's exit, past a dead jump): the inner
# test was printed as a break of the inner loop only, so the outer loop never
# ended (graphlib.TopologicalSorter._find_cycle) ----------------------------

@case(([[1, 2], [3]],), ([],), ([[]],))
def while_else_break_inside_while_true(groups):
    out = []
    stack = [iter(g) for g in groups]
    while True:
        out.append(len(stack))
        while stack:
            try:
                out.append(next(stack[-1]))
                break
            except StopIteration:
                stack.pop()
        else:
            break
    return out


# --- a try whose body returns, nested in an except clause that falls out
# (3.13 leaves the body's `POP_EXCEPT; return` outside every handler): the
# return was printed after the inner try, so its except clause returned too
# (codeop._maybe_compile) ---------------------------------------------------

def _compile_like(source, log):
    log.append(source)
    if source.startswith("bad"):
        raise SyntaxError(source)
    if source.startswith("key"):
        raise KeyError(source)
    return source


@case(("ok", []), ("bad", []), ("badkey", []))
def return_in_a_try_nested_in_a_clause_that_falls_out(source, log):
    with Ctx(log, "w"):
        try:
            _compile_like(source, log)
        except SyntaxError:
            try:
                _compile_like(source[3:] or "bad", log)
                return None
            except KeyError:
                return "key"
            except SyntaxError:
                pass
    return _compile_like("again", log)


# --- `while True:` whose try's except clause continues, nested in a loop
# (3.12+ jump back from the clause to the `while True` line, past it from the
# body): read as two nested loops, so the body's break never left the loop
# (socket._sendfile_use_send) ----------------------------------------------

@case(([3, 5, 0, 2],), ([],), ([4],))
def while_true_with_a_try_whose_clause_continues(chunks):
    sent = []
    pending = list(chunks)
    busy = [True]
    while True:
        data = pending.pop(0) if pending else None
        if data is None:
            break
        while True:
            try:
                if busy.pop() if busy else False:
                    raise BlockingIOError()
            except BlockingIOError:
                continue
            else:
                sent.append(data)
                if data > 3:
                    data -= 3
                else:
                    break
    return sent


@case(([3, 5, 0, 2],), ([],))
def while_true_with_a_try_whose_clause_continues_in_a_while_loop(chunks):
    # (3.8/3.9: read wrong too, the inner loop's exit being dead code)
    sent = []
    pending = list(chunks)
    while pending:
        data = pending.pop(0)
        tries = 0
        while True:
            try:
                tries += 1
                if data and tries < 2:
                    raise BlockingIOError()
            except BlockingIOError:
                continue
            else:
                sent.append((data, tries))
                break
    return sent


# --- `raise E(x, a if c else b)`: 3.10+ copies the call and the raise into
# both arms, and the arms were printed as an if statement with the values
# below the test in temporaries, reading the global E after them
# (subprocess.Popen._check_timeout, inspect._too_many) -----------------------

class _FirstError(Exception):
    pass


class _SecondError(Exception):
    pass


_error_class = _FirstError


def _switch_error_class():
    global _error_class
    _error_class = _SecondError
    return "switched"


@case((True,), (False,))
def raise_of_a_call_whose_last_argument_is_conditional(c):
    global _error_class
    _error_class = _FirstError
    try:
        raise _error_class(_switch_error_class(), "x" if c else "y")
    except Exception as e:
        return type(e).__name__, e.args


# --- %-format and f-strings (3.11+ compiles `'%s' % (x,)` into an f-string):
# a field with a backslash has no pre-3.12 f-string spelling, and was
# printed with the names format() and str(), which a local may shadow; an
# f-string without fields on the left of % is no constant to the optimizer,
# and printed as a plain string it was compiled into an f-string, formatting
# each value before the next was computed (webbrowser, _osx_support) --------

@case(("it's", repr, len), ("plain", repr, len))
def percent_format_with_a_backslash_in_its_value(text, str, format):
    return "<%s|%r>" % (text.replace("'", "\\'"), text)


class _Loud:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def __str__(self):
        self.log.append("str " + self.name)
        return self.name


def _loud_value(log, name):
    log.append("value " + name)
    return name


@case(([],))
def percent_format_of_an_fstring_without_fields(log):
    return f"%s and %s" % (_Loud(log, "a"), _loud_value(log, "b")), log


# --- a display added to on one way of a branch (`**(b or {'k': 1})`): both
# ways were walked on copies of the stack holding the same display node, and
# the literal was merged into it on the way that builds it, so the printed
# display had the literal's items as well as the conditional --------------------

@case(([], {}), ([("a", 1)], {"b": 2}), ([], None))
def dict_display_merging_an_or_of_a_literal(a, b):
    return {**dict(a), **(b or {"k": 1})}


@case(((), {}), ((("a", 1),), {"b": 2}), ((), None))
def call_keywords_merging_an_or_of_a_literal(a, b):
    return dict(*a, **(b or {"k": 1}))


@case(([], []), ([0], [5]), ([3], None))
def list_display_extended_by_an_or_of_a_literal(a, b):
    return [*a, *(b or [1, 2])]


@case((True, {"b": 2}), (False, {"b": 2}))
def dict_display_merging_a_conditional_literal(a, b):
    return {"x": 1, **(b if a else {"k": 1})}


@case(({}, 1), ({"a": 2}, None))
def set_display_updated_by_an_or_of_a_literal(a, b):
    return {*a, *(b and {1, 2} or {3})}


# --- a literal dict as a `**` entry: {**{k: v}, ...} starts from an empty
# dict, {k: v, **{k2: v2}} follows items that could have taken k2 ------------

@case((1, 2), ("x", None))
def dict_display_starting_with_a_literal_unpacked(x, n):
    return {**{"k": x}, "n": n}, {"a": 1, **{"b": x}, "n": n}


@case((1, {}), ("x", {"b": 3}))
def call_keywords_starting_with_a_literal_unpacked(x, d):
    return dict(**{"k": x}, n=1), dict(a=1, **d, **{"b": 2}), dict(**{"k": x})


# --- 3.10: a break out of a try/finally copies the small code after the loop
# (a return) after the finally body's copy: read as the try body's own
# `return`, it computed its value before the finally body ran ------------------

class _Counter:
    def __init__(self, n):
        self.n = n

    def __repr__(self):
        return "_Counter(%r)" % self.n


@case((1, True), (5, True), (1, False))
def break_out_of_a_try_finally_before_a_computed_return(n, go):
    box = _Counter(n)
    if go:
        while True:
            try:
                if box.n > 2:
                    break
                box.n += 1
            finally:
                box.n *= 10
    else:
        box.n = -1
    return box.n


# --- 3.12+: a return inside nested try/finally statements runs the inner
# finally body's copy, then the outer one's: the inner copy was read as the
# try body's own code (the finally body ran twice) --------------------------

@case((1, []), (0, []))
def return_through_two_finally_blocks(x, log):
    try:
        try:
            return x
        finally:
            log.append(91)
    finally:
        log.append(2)


@case(([1], 1, True, []), ([1], 0, True, []), ([], 1, True, []))
def return_of_a_bool_op_through_two_finally_blocks_in_a_loop(xs, x, c, log):
    try:
        for i in xs:
            try:
                return x and c
            finally:
                log.append(91)
    finally:
        log.append(2)
    return log


# --- 3.11: a return in a try body pops the except block first, so its code
# follows the range the handler protects, and the body's other branches jump
# past it: it was read as the try's else clause (run after every branch) ------

@case((1, [1], []), (1, [], []), (0, [], []), ("boom", [], []))
def return_in_the_last_branch_of_a_try_except_finally_body(x, xs, log):
    try:
        if x in xs:
            log.append(1)
        elif x:
            if x == "boom":
                raise ValueError(x)
            return 1
    except Exception:
        log.append(2)
    finally:
        log.append(38)
    return log
