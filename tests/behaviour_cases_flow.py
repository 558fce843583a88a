"""Behaviour cases for plain control-flow shapes (no exception handling)
that once fell back to the state machine on some interpreter although a
structured form exists (issue 11, third-party packages).  Imported by
behaviour_cases.py, whose CASES they join; tests/test_structured_flow.py
checks that none of them needs the fallback."""
from behaviour_cases import case

BOOLS = [(a, b, c, d) for a in (0, 1) for b in (0, 1) for c in (0, 2) for d in ("", "x")]


@case(*BOOLS)
def and_of_a_nested_and_or(a, b, c, d):
    # docutils Body.parse_option_marker: the furthest jump target (`d`) is
    # inside the right operand of the outer `and`
    out = []
    if a and ((b and not c) or d):
        out.append(1)
    if (a or b) and ((c and d) or not a):
        out.append(2)
    x = a and ((b and c) or d)
    out.append(x)
    if not a and (not (b or c) or d == "pyparsing"):
        out.append(3)
    return out


@case(([1, 2, 3], [2]), ([], [1]), ([4, 5], []), ([1, 2], [1, 2]))
def for_else_ending_a_loop_body(xs, cs):
    # docutils Element.first_child_not_matching_class: the break skips the
    # else and continues the outer loop (3.8/3.9: a jump back to its head
    # that is not the outer loop's end)
    out = []
    for i in xs:
        for c in cs:
            if i == c:
                break
        else:
            out.append(i)
    for i in xs:
        if i > 1:
            for c in cs:
                if i == c:
                    break
            else:
                out.append(-i)
    while xs:
        i = xs.pop()
        for c in cs:
            if i == c:
                break
        else:
            return out, i
    return out


@case(([1, 2, 3], [2]), ([], [1]), ([4, 5], []), ([1, 2], [1, 2]))
def for_else_returning_at_the_end_of_a_loop_body(xs, cs):
    for i in xs:
        if i:
            for c in cs:
                if i == c:
                    break
            else:
                return i
    return None


@case((0, [1, 2]), (3, [1, -1, 5]), (2, []), (1, [-1]))
def break_past_the_jump_after_a_loop(a, xs):
    # the compiler threads the break past the jump over the else branch
    if a:
        for i in xs:
            if i == -1:
                break
            a += i
    else:
        a = 5
    if a % 3:
        a += 1
    return a


@case((0,), (5,), (31,), (32,), (127,), (130,), (160,), (-3,))
def or_with_a_chained_comparison(c):
    # rich cells.get_character_cell_size: the chain's cleanup block makes
    # the compiler copy `return 0` (3.12+) or leave a jump over the cleanup
    # that the true side skips
    out = []
    if c and c < 32 or 0x07F <= c < 0x0A0:
        out.append(0)
    if c < 32 or 0x07F <= c < 0x0A0:
        return out, 0
    return out, 1


@case(([None, 40, 7, 300],), ([],), ([11, 12, None],))
def while_else_ending_a_loop_body(xs):
    # werkzeug _iter_module_paths: the while's break continues the for
    out = []
    for name in xs:
        if name is None:
            continue
        while name > 10:
            old = name
            name = name // 2
            if name == old or name == 20:
                break
        else:
            out.append(name)
    return out


@case((0, 1), (1, 1), (1, 5), (1, -5), (0, 9))
def while_ending_an_if_branch_with_an_else(a, b):
    # docutils Contents.apply (3.8/3.9): the loop's exit is the jump over
    # the else
    if a:
        while not (b > 3 or b < -3):
            b = b * 2 + 1
    else:
        b = 0
    return b


class Scanner:
    """A token stream for the loop cases (repr: what is left)."""

    def __init__(self, toks):
        self.toks = list(toks)

    def accept(self, tok):
        if self.toks and self.toks[0] == tok:
            self.toks.pop(0)
            return True
        return False

    def peek(self):
        return self.toks[0] if self.toks else None

    def advance(self):
        return self.toks.pop(0)

    def __repr__(self):
        return "Scanner(%r)" % self.toks


@case((Scanner("*ab*c*x"),), (Scanner("x"),), (Scanner("**a"),), (Scanner(""),))
def while_exiting_to_the_outer_loop_head(s):
    # pycparser _scan_declarator_name_info (3.8/3.9): the inner test jumps
    # straight back to the outer one
    seen = []
    while s.accept("*"):
        while s.peek() in ("a", "b", "c"):
            seen.append(s.advance())
    return seen, s.peek()


@case((Scanner("  x"),), (Scanner("y"),), (Scanner("   "),))
def while_and_with_an_empty_body(s):
    # tomlkit Parser._parse_key (3.10/3.11): the test repeated at the
    # bottom jumps back to the `pass`, not to the test
    while s.peek() == " " and s.advance():
        pass
    if s.peek() == "x":
        return 1, s
    else:
        return 2, s


@case((1, 4, 1, 9), (1, 5, 1, 9), (1, 12, 1, 9), (0, 4, 9, 1), (0, 6, 9, 1), (0, 0, 9, 1))
def nested_if_jumping_to_a_copied_raise(g, value, a, b):
    # more_itertools numeric_range.index (3.12+): the chain's cleanup holds
    # a copy of the final raise, and the inner if jumps past its branch
    if g:
        if a <= value < b:
            q, r = divmod(value, 2)
            if r == 0:
                return int(q)
    else:
        if a >= value > b:
            q, r = divmod(value, 3)
            if r == 0:
                return int(q)
    raise ValueError(value)


@case((Scanner("a(b)c)"),), (Scanner("(()x)"),), (Scanner("(("),), (Scanner("x)"),))
def while_true_with_continue_and_break_in_an_elif(s):
    # pycparser _scan_declarator_name_info: a `continue` jumps to the NOP
    # of `while True:` (3.10+), the body's end past it
    depth = 1
    while True:
        tok = s.peek()
        if tok is None:
            return None, depth
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
            s.advance()
            if depth == 0:
                break
            continue
        s.advance()
    return s, depth


@case((0, 0), (1, 0), (1, 1), (2, 5), ("ab", 1))
def lambdas_with_conditional_expressions(a, b):
    # pyparsing srange, anyio TLSStream.extra_attributes: each branch of
    # the lambda's conditional expression returns on its own
    f = lambda p: p if not isinstance(p, str) else "".join(chr(ord(x) + 1) for x in p)
    g = lambda p, q: p if p else (q if q > 1 else -q)
    h = lambda: a if a else b if b else None
    return f(a), g(a if isinstance(a, int) else 1, b), h()


@case(([(1, 4), (2, 12), (3, 7)], [20, 21, 22, 23, 24, 25, 26, 27, 30]), ([], [1]), ([(0, 11)], [0]))
def while_true_ending_a_loop_body_with_final_break(pairs, ids):
    # docutils AnonymousHyperlinks.apply: every way out of the while is a
    # break, the last one's jump dropped (3.8-3.11) or threaded to the for
    # loop's head (3.12+), and a continue jumps back before the end
    out = []
    for ref, target in pairs:
        while True:
            if target > 10:
                out.append((ref, target))
                break
            else:
                if not target % 2:
                    target = ids[target]
                    continue
                out.append((ref, -target))
                break
    return out


@case(([1, 2, 3], {"q": 1}, lambda x: None if x == 2 else x - 1), ([5, 0], {}, abs), ([1, -2, 3], {"q": 1}, lambda x: x * 0.5))
def then_part_ending_in_continue_after_a_nested_if_with_an_else(items, options, r):
    # werkzeug parse_accept_header: 3.12+ threads the nested if's jump past
    # the then-part's final `continue` on to the code after the else
    result = []
    for item in items:
        if "q" in options:
            q = r(item)
            if q is None:
                continue
            if q < 0 or q > 1:
                continue
        else:
            q = 1
        result.append((item, q))
    return result


@case(([1, 5, 2, 9], 4), ([], 0), ([3, 3], 3))
def then_part_ending_in_break_after_a_nested_if_with_an_else(xs, lim):
    # the same with a break ending the then-part
    out = []
    for x in xs:
        if x > lim:
            if x % 2 or x > 8:
                break
        else:
            x = -x
        out.append(x)
    return out


@case(([(1, 2), (3, 7)], lambda c: c + 1 if c < 4 else None), ([(0, 9)], lambda c: c), ([], abs))
def while_true_ending_a_for_body_with_breaks_threaded_to_its_head(pairs, g):
    # pyparsing And.streamline: on 3.12+ every break of the while True
    # jumps straight back to the for loop's head
    seen = []
    for prev, cur in pairs:
        while True:
            if cur in seen:
                break
            seen.append(cur)
            if cur > 5:
                seen.append(-prev)
                break
            cur = g(cur)
            if cur is None:
                break
    return seen


@case(("a.b", "b", False, "/x/", "/x"), ("a.b", "a.b", True, "/y", "/x"), ("ab", "b", False, "/x/y", "/x/"), ("", "", 0, "", ""))
def value_of_a_chain_starting_with_a_test_that_keeps_no_value(s, d, o, p, q):
    # werkzeug Cookie._matches_request: in `(a or b and c) and p` the
    # test of `a` keeps no value, those of b and c leave theirs as the result
    r1 = (s == d or (not o and s.endswith(d) and s[:-1].endswith("."))) and (
        p == q or (p.startswith(q) and p[len(q) - q.endswith("/"):].startswith("/")))
    r2 = (s or (d and o)) and p
    r3 = [(o or (s and d and q)) and p for _ in (1, 2)]
    return r1, r2, r3


@case((1, 1), (1, 0), (0, 1), (0, 0))
def nested_else_ending_in_an_assert_whose_test_jumps_past_the_outer_else(a, b):
    # pycparser _parse_direct_abstract_declarator: the passing test of the
    # assert ending the inner else jumps straight to the code after the
    # outer if (3.11+), where the inner then-part's jump goes too
    if a:
        if b:
            decl = [a]
        else:
            decl = [b, a]
            assert decl is not None
    else:
        decl = None
    return decl


@case(([1, 2, [3, "a", 4], "x"],), ([],), ([[1], [2, [3]]],))
def if_ending_loop_bodies_in_a_generator(items):
    # ast.iter_child_nodes: 3.12+ ends each loop body with a JUMP back that
    # no handler covers (here the generator's), unlike a `continue`'s
    def gen(t):
        for x in t:
            if isinstance(x, int):
                yield x
            elif isinstance(x, list):
                for y in x:
                    if isinstance(y, int):
                        yield y
    return list(gen(items))


@case(([1, 2, 3], None), ([1, 5, 2], 3), ([], 0), ([4], 4))
def break_to_a_copied_return(xs, m):
    # ast._splitlines_no_ff: the return after the loop is copied into the
    # break's jump, computing its value after the iterator is popped
    r = []
    for x in xs:
        if m is not None and x > m:
            break
        r.append(x)
    return r


@case((2, 40), (-1, 40), (0, 7), (-3, 1))
def shared_return_after_branches(q, n):
    # statistics._float_sqrt_of_frac: 3.13 inlines the return into the
    # branch that jumps to it, with the return's line: printed once, after
    # the branches
    if q >= 0:
        a = n << q
        b = 1
    else:
        a = n >> q
        b = 1 << -q
    return a / b


@case(([1, "x"],), (["a", 2.5],), ([],), ([None],))
def else_of_a_try_whose_clause_continues(items):
    # functools.update_wrapper: 3.12+ tells the else from the code after
    # the statement by the order of co_names
    out = []
    for x in items:
        try:
            value = x.upper()
        except AttributeError:
            pass
        else:
            out.append(value)
    return out
