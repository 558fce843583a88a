"""Functions covering every construct the decompiler must handle, each with
inputs to run it on (tests/test_behaviour.py runs the original and the
decompiled function on every input and compares the outcomes).

Rules for a case: positional parameters only at the top level (defaults,
keyword-only and positional-only parameters are exercised by nested
functions, whose defaults live in the bytecode); results and mutated
arguments are plain data whose repr() says everything (no object addresses);
module globals a case writes are written before they are read, so a run
leaves no trace that changes the next one.  `match` cases live in
behaviour_cases_match.py (Python 3.10+ syntax)."""
global COUNTER, SETTING
import asyncio
import sys
CASES = []


def case(*inputs):
    """Registers the decorated function with `inputs`, each a tuple of
    positional arguments."""

    def register(fn):
        CASES.append((fn, [tuple(args) for args in inputs]))
        return fn

    return register


class Box:
    """An attribute holder whose repr shows its attributes."""

    def __init__(self, **attrs):
        self.__dict__.update(attrs)

    def __repr__(self):
        return 'Box(%s)' % ', '.join('%s=%r' % kv for kv in sorted(self.__dict__.items()))

    def __eq__(self, other):
        return isinstance(other, Box) and self.__dict__ == other.__dict__


class Ctx:
    """A context manager that logs enter/exit (with the exception type seen)
    and suppresses exceptions when asked to."""

    def __init__(self, log, name, suppress=False):
        self.log, self.name, self.suppress = log, name, suppress

    def __enter__(self):
        self.log.append('enter ' + self.name)
        return self.name

    def __exit__(self, exc_type, exc, tb):
        self.log.append('exit %s %s' % (self.name, exc_type.__name__ if exc_type else None))
        return self.suppress


class PairCtx(Ctx):
    def __enter__(self):
        Ctx.__enter__(self)
        return self.name, len(self.log)


class AsyncCtx(Ctx):
    async def __aenter__(self):
        await asyncio.sleep(0)
        return self.__enter__()

    async def __aexit__(self, exc_type, exc, tb):
        await asyncio.sleep(0)
        return self.__exit__(exc_type, exc, tb)


async def ticks(n):
    """An async generator: 0 .. n-1."""
    for i in range(n):
        await asyncio.sleep(0)
        yield i


async def double_later(x):
    await asyncio.sleep(0)
    return 2 * x


class Matrix:
    def __init__(self, v):
        self.v = v

    def __matmul__(self, other):
        return Matrix(self.v * other.v + 1)

    def __imatmul__(self, other):
        return Matrix(self.v * other.v + 2)


class Keys:
    """Records the keys it is subscripted with."""

    def __getitem__(self, key):
        return repr(key)

    def __repr__(self):
        return 'Keys()'


class AppError(Exception):
    pass


def record(*args, **kwargs):
    return args, sorted(kwargs.items())


def tagged(tag):
    """A decorator factory: the decorated function's result gets a tag."""

    def decorate(fn):
        def wrapper(*args, **kwargs):
            return tag, fn(*args, **kwargs)

        return wrapper

    return decorate


def register_class(cls):
    cls.registered = True
    return cls


COUNTER = 0
SETTING = 'initial'


@case((1, 2), ('a', 'b'), (None, [1]))
def assign_names(a, b):
    x = a
    y = z = b
    x, y = y, x
    return x, y, z


@case((3,), (0,))
def tuple_assignments_keep_their_order(n):
    log = []

    def f(x):
        log.append(x)
        return x + 1

    a, b, c = (1, 10, 100)
    box = Box(p=0)
    seq = [0, 0]
    for i in range(n):
        a, b = f(a), f(b)
        a, b, c = f(c), f(a), f(b)
        box.p, seq[0] = f(a), f(box.p)
        seq[1], (a, b) = f(b), (f(a), f(seq[1]))
        a, b = f(b) + 1, f(a) + 1
    while n > 0:
        n -= 1
        b, a = f(a), f(b)
    with Ctx(log, 'm'):
        a, b = f(b), f(a)
    with Ctx(log, 'n') as name:
        name, a, b = f(b), f(a), name
    return log, a, b, c, box, seq


@case((1,), ('s',), ([2],))
def assign_attributes(a):
    box = Box()
    box.x = a
    box.y = box.x * 2
    box.inner = Box(v=0)
    box.inner.v = box.y
    return box


@case(([1, 2, 3], 1), ([1], 5), ([1, 2], -1), ({}, 0))
def assign_subscripts(seq, i):
    seq[i] = seq[i] * 10
    table = {}
    table[i] = seq[i]
    table[i, i + 1] = 'pair'
    table[str(i)] = table[i, i + 1]
    return table


@case(([0, 1, 2, 3, 4, 5],), (list('abcdefgh'),), ([1, 2],))
def assign_slices(seq):
    seq[1:3] = ['x']
    seq[:1] = seq[-1:]
    seq[::2] = seq[::2][::-1]
    head, tail = seq[:2], seq[2:]
    seq[len(seq):] = [len(seq)]
    return head, tail, seq[::-1], seq[1:-1:2]


@case(([1, 2, 3, 4],), ('ab',), ([1],), (range(6),))
def starred_unpacking(items):
    first, *middle, last = items
    *init, end = items
    a, b, *rest = items
    return first, middle, last, init, end, a, b, rest


@case((((1, 2), [3, (4, 5)]),), (((1, 2), [3, (4,)]),), (('ab', 'cd'),))
def nested_tuple_unpacking(pairs):
    (a, b), (c, (d, e)) = pairs
    return a, b, c, d, e


@case(({'a': 1, 'b': 2},), ({},), ({'k': (1, 2)},))
def unpacking_in_for_targets(mapping):
    out = []
    for i, (key, value) in enumerate(sorted(mapping.items())):
        out.append((i, key, value))
    for x, y in ((1, 2), (3, 4)):
        out.append(x * y)
    return out


@case((7, 3), (2.5, 2), (-9, 4), (5, 0), ('s', 1))
def augmented_arithmetic(a, b):
    x = a
    x += b
    x -= 1
    x *= 2
    y = x
    y /= b
    z = x
    z //= b
    w = x
    w %= b
    p = a
    p **= 2
    return x, y, z, w, p


@case((12, 5), (-3, 2), (1, 70), (3, -1), (0.5, 1))
def augmented_bitwise(a, b):
    x = a
    x &= b | 8
    x |= b
    x ^= 6
    x <<= b
    x >>= 1
    m = Matrix(a)
    m @= Matrix(b)
    return x, m.v


@case(([1, 2, 3],), ([5],), ([],))
def augmented_targets(seq):
    box = Box(n=1, items=[])
    box.n += 10
    box.items += seq
    seq[0] += 100
    seq[-1:] += ['end']
    counts = {'k': 0}
    counts['k'] += len(seq)
    return box, seq, counts


@case(({'a': 1, 'b': 2, 'c': 3}, 'b'), ({'a': 1}, 'zz'), ({}, 0))
def delete_statements(table, key):
    del table[key]
    seq = list(range(6))
    del seq[1]
    del seq[1:3]
    del seq[::2]
    box = Box(x=1, y=2)
    del box.x
    temp = len(seq)
    del temp
    return table, seq, box


@case((3,), (-2.5,), (0,), (True,), ('s',))
def unary_operators(a):
    return -a, +a, not a, ~a if isinstance(a, int) else None, -(-a), not not a


@case((7, 2), (7.5, -2), (-7, 3), (1, 0), ('ab', 3), ([1], 2))
def binary_arithmetic(a, b):
    return a * b, a + a, a - b, a / b, a // b, a % b, a ** 2, -a ** 2, (-a) ** 2, a * b - a / b


@case((12, 10), (-5, 3), (1, 0), (255, 8))
def binary_bitwise(a, b):
    return a & b, a | b, a ^ b, a << b, a >> b, ~a & b, a | b & ~b ^ a, (a | b) & (a ^ b)


@case((2, 3), (0, 5))
def matrix_multiplication(a, b):
    return (Matrix(a) @ Matrix(b)).v, (Matrix(a) @ Matrix(b) @ Matrix(1)).v


@case((1, 2), (2, 2), ('a', 'b'), (None, None), (1, '1'), ([1], [1]))
def comparison_operators(a, b):
    out = [a == b, a != b, a is b, a is not b, a is None, a is not None]
    try:
        out += [a < b, a <= b, a > b, a >= b]
    except TypeError:
        out.append('unordered')
    return out


@case((1, [1, 2]), ('a', 'abc'), (3, {3: 0}), (None, []), (1, 5))
def membership(x, container):
    return x in container, x not in container, x not in container, x in container


@case((1, 2, 3), (3, 2, 1), (2, 2, 2), (0, 5, 5), (1, 'a', 2))
def chained_comparisons(a, b, c):
    return a < b < c, a < b > c, a == b == c, 0 <= a < 10 != b, a is not b is not c, a < b <= c < 10


@case(([1, 2, 300],), ([],), ([0, 255],), ([-1],))
def chained_comparisons_in_loops_and_returns(color):
    def in_range(c):
        return 0 <= c <= 255

    def not_in_range(c):
        if not 0 <= c <= 255:
            return True
        return False

    flags = []
    for c in color:
        flags.append(0 < c < 9)
        if 0 <= c <= 255:
            flags.append('byte')
    return all(0 <= c <= 255 for c in color), [c for c in color if 0 < c < 9], {c: 1 < c < 3 < 400 for c in color}, [in_range(c) for c in color], [not_in_range(c) for c in color], flags


@case((5,), (0,), (-1,), (10,), (99,))
def chained_comparison_in_conditions(x):
    # depyf: no structured form was found (at offset 118: unstructured backward jump);
    # this is an equivalent state machine over the bytecode's blocks
    __state = 0
    while True:
        if __state == 0:
            __t1 = x
            __stack_0 = __t1
            if 0 < __t1:
                __t1 = None
                __state = 1
            else:
                __t1 = None
                __state = 2
        if __state == 1:
            if __stack_0 < 10:
                __stack_0 = None
                __state = 3
            else:
                __stack_0 = None
                __state = 4
        if __state == 2:
            __stack_0 = None
            __state = 4
        if __state == 3:
            kind = 'small'
            __state = 9
        if __state == 4:
            __t2 = x
            __stack_0 = __t2
            if 10 <= __t2:
                __t2 = None
                __state = 5
            else:
                __t2 = None
                __state = 6
        if __state == 5:
            if __stack_0 <= 50:
                __stack_0 = None
                __state = 7
            else:
                __stack_0 = None
                __state = 8
        if __state == 6:
            __stack_0 = None
            __state = 8
        if __state == 7:
            kind = 'medium'
            __state = 9
        if __state == 8:
            kind = 'other'
            __state = 9
        if __state == 9:
            __t3 = x
            __stack_0 = __t3
            if 0 < __t3:
                __t3 = None
                __state = 10
            else:
                __t3 = None
                __state = 11
        if __state == 10:
            if __stack_0 < 5:
                __stack_0 = None
                __state = 12
            else:
                __stack_0 = None
                __state = 16
        if __state == 11:
            __stack_0 = None
            return kind, x
        if __state == 12:
            x += 2
            __t4 = x
            __stack_0 = __t4
            if 0 < __t4:
                __t4 = None
                __state = 13
            else:
                __t4 = None
                __state = 15
        if __state == 13:
            if __stack_0 < 5:
                __stack_0 = None
                __state = 12
            else:
                __stack_0 = None
                __state = 14
        if __state == 14:
            return kind, x
        if __state == 15:
            __stack_0 = None
            __state = 16
        if __state == 16:
            return kind, x


@case((0, 0, 0), (1, 0, 2), (0, 'b', None), ('a', '', [1]), ([], [2], 0))
def boolean_values(a, b, c):
    return a and b, a or b, a and b or c, a or b and c, not a and b, (a or b) and c, a and (b or c), not (a and b), a or b or c, a and b and c


@case((0, 0, 0), (1, 0, 1), (1, 1, 0), (0, 1, 1), (1, 1, 1))
def boolean_conditions(a, b, c):
    out = []
    if a and b:
        out.append('a and b')
    if a or b:
        out.append('a or b')
    if a and (b or c):
        out.append('a and (b or c)')
    if not a or not b:
        out.append('not a or not b')
    if (a or b) and not c:
        out.append('(a or b) and not c')
    if not a or not b or not c:
        out.append('not all')
    while a and b:
        out.append('loop')
        b = 0
    return out


@case((1, 2), (0, 2), (0, 0), ('', 'x'))
def conditional_expressions(a, b):
    first = a if a else b
    second = 'both' if a and b else 'one' if a or b else 'none'
    third = (a + 1 if a else -1) * 2 if b else 0
    return first, second, third, [x if x else -x for x in (a, b) if x or not a]


@case(([1, 2, 3, 4],), ([],), ([10],))
def walrus(items):
    out = []
    if (n := len(items)) > 2:
        out.append(n)
    doubled = [y for x in items if (y := x * 2) > 2]
    it = iter(items)
    while (value := next(it, None)) is not None:
        out.append(value)
    return out, doubled, y if items else None


@case(((1, 2), {'k': 3}), ((), {}), ((0,), {'z': 1, 'a': 2}))
def calls_with_star_arguments(args, kwargs):
    return [record(*args), record(**kwargs), record(*args, **kwargs), record(0, *args, key='v', **kwargs), record(*args, *args), record(*args, 9, *[8]), record(**kwargs, extra=1), record(1, 2, sep='-'), record()]


@case(({'k': 3},), ({},), ({'a': 0, 'z': 1},), ({'b': 5},))
def dict_displays_inside_dict_displays(extra):
    return {'a': 1, **extra}, record(**{'b': 2, **extra}), {**extra, 'c': 3}


@case(('k', 1), ('if', 2), ('a', 3))
def calls_with_dict_displays_as_keywords(key, value):
    tries = (lambda: record(a=1, **{'a': 2})), (lambda: record(**{'a': 1, 'a': 2})), (lambda: record(a=0, **{key: value})), (lambda: record(*[key], **{'x y': value, key: 0}))
    out = [record(**{key: value}), record(b=1, **{key: value}, c=2), record(**{'if': value, 'b': 1})]
    for call in tries:
        try:
            out.append(call())
        except TypeError:
            out.append('TypeError')
    return out


@case(('a b c',), ('',), (42,))
def method_calls(text):
    parts = text.split()
    joined = '-'.join(parts)
    return joined.upper().replace('-', '+'), len(parts), str(text).strip().count(' ')


@case((0,), (1,))
def number_literals(i):
    values = 0, -1, 7, 2 ** 100, -2 ** 70, 0x18ee90ff6c373e0ee4e3f0ad2, 255, 15, 5, 1.5, -0.0, 0.0, 1e-300, 1.7976931348623157e+308, 1e309, -1e309, 1j, (-0.0-2.5j), (1+2j), 3.14159, 1000000
    return [repr(v) for v in values][i::2]


@case((0,), (3,))
def string_literals(i):
    values = ('plain', 'it\'s "quoted"', 'tab\tnewline\ncr\r', '\x00\x7f\x80', 'é ☃ 𝄞', 'back\\slash', '', '\u200b', 'triple\nquoted', '•', 'single \' and double "')
    return values[i:], [len(v) for v in values]


@case((0,), (2,))
def bytes_literals(i):
    values = b'\x00\xff\n', b'', b'quote\'"', b'back\\slash', b'\x7f\x80abc', bytes(3)
    return values[i:]


@case((1,), ('b',), (4,), (None,))
def container_literals(x):
    return None, True, False, ..., (1, (2, (3,)), ()), [1, [2, []]], {1: 'a', 'b': [2]}, {1, 2}, x in {1, 2, 3}, x in ('a', 'b'), x in {'a', 'b'}, x not in {4, 5}, (x,), [x, x], {x: x}, {x}, ((x, 1), (2, x))


@case(([1, 2], {'a': 1}), ((), {}))
def starred_literals(seq, mapping):
    return [*seq, *seq], (*seq, 0), {*seq, 9}, {**mapping, 'z': 0, 'a': 2}, [0, *seq, *seq, 1]


@case(('x', 3), ('ab', -1.5), (None, 0), ('é', 10000000000.0))
def fstrings(a, b):
    width, precision = (10, 3)
    return [f'{a}', f'{a!r}', f'{a!s}', f'{a!a}', f'{a:>8}', f'[{b:{width}.{precision}}]', f'{{literal}} {a}', f'b={b!r}', f'{a!r:^{width}}', f'{b:+}' if b is not None else f'{b}', f'{"nested " + str(a)}', f'{a}{b}plain{width}', f'{b:{">" if b else "<"}{width}}']


@case(('f', 1), ('g', 2), (None, 0))
def fstrings_with_a_conditional_before_a_return(a, n):
    if n == 0:
        return f'{a}{n}{"s" if n else ""}'
    return f'{a!r} takes {n} argument{"s" if n != 1 else ""}'


@case(('x', 3), (1.5, 'y'), ((1, 2), 0))
def percent_formatting(a, b):
    return '%s-%r' % (a, b), '%5s|' % (a,), '%(k)s' % {'k': b}, '%%' % ()


@case((-5,), (0,), (3,), (10,), (100,))
def if_elif_else(x):
    if x < 0:
        result = 'negative'
    elif x == 0:
        result = 'zero'
    elif x < 10:
        result = 'small'
    else:
        result = 'large'
    if x % 2:
        result += ' odd'
    return result


@case(([1], 0), ([1], 1), ([0], 0), ([2], 0), ([5], 7))
def nested_ifs_ending_the_function(cell, value):
    if cell[0] != value:
        cell[0] = value
        if not value:
            cell.append('cleared')


@case(([], 0, 0), ([], 1, 0), ([], 0, 1), ([9], 0, 0))
def nested_ifs_with_and_ending_the_function(log, b, c):
    if not log:
        log.append(0)
        if not b and not c:
            log.append(1)


@case((0, 0), (1, 0), (0, 1), (1, 1), (2, 2))
def nested_ifs(a, b):
    out = []
    if a:
        if b:
            out.append('ab')
        else:
            out.append('a')
            if a > 1:
                out.append('a>1')
    else:
        if b:
            out.append('b')
        out.append('not a')
    if a:
        return out
    out.append('else only')
    return out


@case((None,), (0,), (1,), (-1,))
def return_nothing(x):
    if x is None:
        return None
    if x > 0:
        return x
    x = -x


@case((10,), (0,), (3,), (-2,))
def while_with_break_continue_else(n):
    out = []
    i = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        if i > 7:
            return out, i
        out.append(i)
    out.append('no break')
    return out, i


@case(([1, 2, 3], 2), ([1, 3, 5], 4), ([], 0), ([0, -1, 4], -1))
def for_with_break_continue_else(items, target):
    seen = []
    for item in items:
        if item < 0:
            continue
        if item == target:
            seen.append('found')
            return seen
        seen.append(item)
    seen.append('exhausted')
    return seen


@case((5,), (0,), (17,))
def while_true(n):
    steps = 0
    while True:
        if n <= 1:
            return steps
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1


@case((3,), (0,), (5,))
def nested_loops(n):
    pairs = []
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            if (i + j) % 2:
                continue
            pairs.append((i, j))
        else:
            pairs.append('inner done')
        if len(pairs) > 8:
            break
    return pairs


@case(([3, 1, 4, 1, 5], 4), ([1, 2], 9), ([], 1))
def return_from_loops(items, wanted):
    for i, item in enumerate(items):
        while item > 0:
            if item == wanted:
                return 'found at %d' % i
            item -= 3
    return 'missing'


@case((10,), (1,), (-4,))
def ranges_and_steps(n):
    return list(range(n, 0, -3)), [i for i in range(0, n, 2)], sum(range(n))


@case((1,), (0,), ('x',), (None,))
def try_except_else_finally(x):
    # depyf: no structured form was found (at offset 98: except clauses end in different places);
    # this is an equivalent state machine over the bytecode's blocks
    import builtins as __builtins
    __pending = __pctx = None
    __state = 0
    while True:
        try:
            try:
                if __pending is not None:
                    try:
                        raise __pending
                    finally:
                        __pending = None
                if __state == 0:
                    log = []
                    __state = 1
                if __state == 1:
                    value = 10 / x
                    __state = 11
                if __state == 8:
                    exc = None
                    del exc
                    __state = 14
                if __state == 11:
                    log.append('else')
                    __state = 12
                if __state == 12:
                    log.append('finally')
                    return value, log
                if __state == 13:
                    log.append('finally')
                    return value, log
                if __state == 14:
                    log.append('finally')
                    return value, log
            except __builtins.BaseException as __exc0:
                if __state in (8, 11):
                    __stack_0 = None
                    __stack_1 = None
                    __stack_2 = None
                    __stack_3 = __exc0.__traceback__
                    __stack_4 = __exc0
                    __stack_5 = __builtins.type(__exc0)
                    __state = 15
                elif __state in (2, 3, 4, 9, 10):
                    __exc0.__context__ = __pctx
                    __pctx = None
                    __stack_0 = None
                    __stack_1 = None
                    __stack_2 = None
                    __stack_3 = __exc0.__traceback__
                    __stack_4 = __exc0
                    __stack_5 = __builtins.type(__exc0)
                    __state = 15
                elif __state == 1:
                    __stack_0 = None
                    __stack_1 = None
                    __stack_2 = None
                    __stack_3 = __exc0.__traceback__
                    __stack_4 = __exc0
                    __stack_5 = __builtins.type(__exc0)
                    __state = 2
                else:
                    raise
                if __state in (2, 15):
                    while True:
                        try:
                            if __state == 2:
                                if __builtins.issubclass(__stack_5, ZeroDivisionError):
                                    __state = 3
                                else:
                                    __state = 4
                            if __state == 3:
                                __stack_5 = None
                                __stack_4 = None
                                __stack_3 = None
                                log.append('zero')
                                value = None
                                __stack_0 = __stack_1 = __stack_2 = None
                                __state = 13
                                break
                            if __state == 4:
                                if __builtins.issubclass(__stack_5, (TypeError, ValueError)):
                                    __state = 5
                                else:
                                    __state = 10
                            if __state == 5:
                                __stack_5 = None
                                exc = __stack_4
                                __stack_3 = None
                                __stack_4 = None
                                __state = 6
                            if __state == 6:
                                log.append(type(exc).__name__)
                                value = -1
                                __state = 7
                            if __state == 7:
                                __stack_0 = __stack_1 = __stack_2 = None
                                __state = 8
                                break
                            if __state == 10:
                                __stack_3 = __stack_5 = None
                                try:
                                    raise __stack_4
                                finally:
                                    __stack_4 = None
                            if __state == 15:
                                log.append('finally')
                                __stack_3 = __stack_5 = None
                                try:
                                    raise __stack_4
                                finally:
                                    __stack_4 = None
                        except __builtins.BaseException as __exc1:
                            if __state == 6:
                                __stack_3 = None
                                __stack_4 = None
                                __stack_5 = None
                                __stack_6 = __exc1.__traceback__
                                __stack_7 = __exc1
                                __stack_8 = __builtins.type(__exc1)
                                __state = 9
                            else:
                                raise
                            if __state == 9:
                                while True:
                                    if __state == 9:
                                        exc = None
                                        del exc
                                        __stack_6 = __stack_8 = None
                                        try:
                                            raise __stack_7
                                        finally:
                                            __stack_7 = None
        except __builtins.BaseException as __esc0:
            if __state in (2, 3, 4, 9, 10):
                __pending = __esc0
                __pctx = __esc0.__context__
            else:
                raise


@case((0,), (1,), (2,), (3,))
def nested_try(stage):
    log = []
    try:
        try:
            if stage == 1:
                raise KeyError('k')
            if stage == 2:
                raise ValueError('v')
            log.append('inner ok')
        except KeyError as e:
            log.append('inner caught %s' % e)
            if stage == 1:
                raise AppError('from inner')
        finally:
            log.append('inner finally')
    except AppError as e:
        log.append('outer caught %s' % e)
    except Exception:
        log.append('outer generic')
    if stage == 3:
        try:
            pass
        except Exception:
            log.append('never')
        return log
    return log


@case(('k',), ('missing',), (3,))
def except_as_binding(key):
    table = {'k': 1}
    try:
        return table[key]
    except KeyError as error:
        message = 'no %s' % error.args[0]
    return message, 'error' in dir()


@case((1,), (0,), (-1,))
def bare_raise(x):
    log = []
    try:
        try:
            if x == 0:
                raise ValueError('zero')
            if x < 0:
                raise KeyError('neg')
        except ValueError:
            log.append('reraise')
            raise
        return log
    except ValueError:
        log.append('caught again')
        return log


@case((1,), (0,), ('s',))
def raise_from(x):
    try:
        try:
            return 1 / x
        except ZeroDivisionError as e:
            raise AppError('wrapped') from e
        except TypeError:
            raise AppError('plain') from None
    except AppError as e:
        return str(e), type(e.__cause__).__name__, e.__suppress_context__


@case((1,), (0,), (-1,))
def raise_statements(x):
    if x > 0:
        raise ValueError('positive %d' % x)
    if x < 0:
        raise AppError
    return 'no raise'


@case((1,), (0,), (5,))
def return_inside_finally_protected_body(x):
    log = []
    try:
        try:
            return 10 // x, log
        finally:
            log.append('finally ran')
    except ZeroDivisionError:
        return None, log


@case(([1, 2, 3],), ([1, 0, 2],), ([],))
def break_and_continue_inside_try_finally(items):
    log = []
    for item in items:
        try:
            if item == 2:
                continue
            if item == 0:
                break
            log.append(item)
            continue
        finally:
            log.append('f%d' % item)
        break
    return log


@case(([1, 'a', 2],), ([],), (['x'],))
def try_except_in_loop(items):
    # depyf: no structured form was found (at offset 74: POP_BLOCK was left out of the structure);
    # this is an equivalent state machine over the bytecode's blocks
    import builtins as __builtins
    __pending = __pctx = None
    __state = 0
    while True:
        try:
            try:
                if __pending is not None:
                    try:
                        raise __pending
                    finally:
                        __pending = None
                if __state == 0:
                    __t1 = []
                    total = 0
                    errors = __t1
                    __stack_0 = __builtins.iter(items)
                    __t1 = None
                    __state = 1
                if __state == 1:
                    try:
                        __stack_1 = __builtins.next(__stack_0)
                        __state = 2
                    except __builtins.StopIteration:
                        __stack_0 = None
                        __state = 15
                if __state == 2:
                    item = __stack_1
                    __stack_1 = None
                    __state = 3
                if __state == 3:
                    total += item
                    __state = 12
                if __state == 8:
                    e = None
                    del e
                    __state = 9
                if __state == 9:
                    total *= 1
                    __state = 1
                if __state == 12:
                    total *= 1
                    __state = 14
                if __state == 14:
                    total += 100
                    __state = 1
                if __state == 15:
                    return total, errors
            except __builtins.BaseException as __exc0:
                if __state == 8:
                    __stack_1 = None
                    __stack_2 = None
                    __stack_3 = None
                    __stack_4 = __exc0.__traceback__
                    __stack_5 = __exc0
                    __stack_6 = __builtins.type(__exc0)
                    __state = 13
                elif __state in (4, 10, 11):
                    __exc0.__context__ = __pctx
                    __pctx = None
                    __stack_1 = None
                    __stack_2 = None
                    __stack_3 = None
                    __stack_4 = __exc0.__traceback__
                    __stack_5 = __exc0
                    __stack_6 = __builtins.type(__exc0)
                    __state = 13
                elif __state == 3:
                    __stack_1 = None
                    __stack_2 = None
                    __stack_3 = None
                    __stack_4 = __exc0.__traceback__
                    __stack_5 = __exc0
                    __stack_6 = __builtins.type(__exc0)
                    __state = 4
                else:
                    raise
                if __state in (4, 13):
                    while True:
                        try:
                            if __state == 4:
                                if __builtins.issubclass(__stack_6, TypeError):
                                    __state = 5
                                else:
                                    __state = 11
                            if __state == 5:
                                __stack_6 = None
                                e = __stack_5
                                __stack_4 = None
                                __stack_5 = None
                                __state = 6
                            if __state == 6:
                                errors.append(type(e).__name__)
                                __state = 7
                            if __state == 7:
                                __stack_1 = __stack_2 = __stack_3 = None
                                __state = 8
                                break
                            if __state == 11:
                                __stack_4 = __stack_6 = None
                                try:
                                    raise __stack_5
                                finally:
                                    __stack_5 = None
                            if __state == 13:
                                total *= 1
                                __stack_4 = __stack_6 = None
                                try:
                                    raise __stack_5
                                finally:
                                    __stack_5 = None
                        except __builtins.BaseException as __exc1:
                            if __state == 6:
                                __stack_4 = None
                                __stack_5 = None
                                __stack_6 = None
                                __stack_7 = __exc1.__traceback__
                                __stack_8 = __exc1
                                __stack_9 = __builtins.type(__exc1)
                                __state = 10
                            else:
                                raise
                            if __state == 10:
                                while True:
                                    if __state == 10:
                                        e = None
                                        del e
                                        __stack_7 = __stack_9 = None
                                        try:
                                            raise __stack_8
                                        finally:
                                            __stack_8 = None
        except __builtins.BaseException as __esc0:
            if __state in (4, 10, 11):
                __pending = __esc0
                __pctx = __esc0.__context__
            else:
                raise


@case((0,), (1,), (2,))
def exception_propagates_through_finally(x):
    log = []

    def inner():
        try:
            if x:
                raise KeyError(x)
        finally:
            log.append('cleanup')
        return 'ok'

    try:
        return inner(), log
    except KeyError:
        return 'raised', log


@case((False,), (True,))
def with_statements(fail):
    log = []
    with Ctx(log, 'a') as name:
        log.append('body ' + name)
    with Ctx(log, 'b'):
        with Ctx(log, 'c') as c:
            log.append('two ' + c)
    with Ctx(log, 'd') as d:
        with Ctx(log, 'e', suppress=True) as e:
            if fail:
                raise KeyError(d + e)
            log.append('not failed')
    with PairCtx(log, 'f') as (name, size):
        log.append('%s %d' % (name, size))
    return log


@case((0,), (1,), (2,))
def with_return_and_exceptions(x):
    log = []
    try:
        with Ctx(log, 'outer'):
            with Ctx(log, 'inner', suppress=x == 2):
                if x:
                    raise ValueError(x)
                return log
            log.append('after inner')
            return log
    except ValueError:
        log.append('caught')
    return log


@case((1,), (0,), (-3,), (None,))
def assert_statements(x):
    assert x is not None
    assert x >= 0, 'negative: %r' % x
    assert isinstance(x, int), x
    return x


@case((3,), ('v',))
def global_statements(x):
    global COUNTER, SETTING
    COUNTER = x
    SETTING = 'set to %r' % (x,)
    return COUNTER, SETTING


@case((3,), (0,))
def nonlocal_and_closures(n):
    count = 0

    def bump(step):
        nonlocal count
        count += step
        return count

    def make_adder(k):
        def add(v):
            return v + k + count

        return add

    for i in range(n):
        bump(i)
    return count, make_adder(10)(1), [make_adder(i)(0) for i in range(3)]


@case((3,), (1,))
def closure_cells_in_loops(n):
    late = [(lambda: i) for i in range(n)]
    early = [(lambda i=i: i) for i in range(n)]
    return [f() for f in late], [f() for f in early]


@case(([3, 1, 2],), (['bb', 'a', 'ccc'],))
def lambdas(items):
    by_neg = sorted(items, key=lambda v: -v if isinstance(v, int) else -len(v))
    pick = lambda seq, i=0, *rest, **kw: (seq[i], rest, sorted(kw))
    nested = lambda a: lambda b: (a, b)
    return by_neg, pick(items), pick(items, 1, 2, z=3), nested(1)(2), (lambda: None)()


@case((2,), (5,))
def decorators_on_nested_definitions(x):
    @tagged('t')
    def double(v):
        return v * 2

    @tagged('outer')
    @tagged('inner')
    def triple(v):
        return v * 3

    @register_class
    class Thing:
        value = x

        @staticmethod
        def static(v):
            return v + 1

        @classmethod
        def create(cls):
            return cls.value

        @property
        def prop(self):
            return self.value * 10

    return double(x), triple(x), Thing.registered, Thing.static(x), Thing.create(), Thing().prop


@case((1,), (10,))
def nested_function_parameters(x):
    def all_kinds(a, b=2, /, c=3, *args, d, e=x, **kwargs):
        return a, b, c, args, d, e, sorted(kwargs.items())

    def only_kw(*, k=x * 2, j):
        return k, j

    def annotated(a: int, b: 'str' = 's') -> tuple:
        return a, b

    return all_kinds(1, d=4), all_kinds(1, 5, 6, 7, 8, d=9, e=10, f=11), only_kw(j=0), only_kw(k=1, j=2), annotated(x), all_kinds.__defaults__, only_kw.__kwdefaults__, sorted(annotated.__annotations__)


@case((1,), (4,))
def class_bodies_with_super(x):
    class Base:
        kind = 'base'

        def __init__(self, v):
            self.v = v

        def describe(self):
            return '%s:%s' % (self.kind, self.v)

    class Child(Base):
        kind = 'child'
        label = kind.upper() + str(x)
        doubled = [2 * i for i in range(2)]

        def __init__(self, v):
            super().__init__(v * 2)
            self.__hidden = v

        def describe(self):
            return 'child(' + super().describe() + ')'

        def hidden(self):
            return self.__hidden, __class__.__name__

    c = Child(x)
    return c.describe(), c.hidden(), Child.label, Child.doubled, Base(x).describe(), Child.__mro__[1].__name__


@case(([1, 2, 3, 4, 5],), ([],), (['a', 'bb'],))
def comprehensions(items):
    return [x * 2 for x in items], [x for x in items if x], [x for x in items if x and len(str(x)) < 2 and x != 3], {x for x in items if not x == 2}, {str(x): x for x in items if x or x == 0}, [(x, y) for x in items for y in range(2) if y], [[y for y in range(len(str(x)))] for x in items], sum(len(str(x)) for x in items), list(x for x in items if x is not None and str(x) in '1234')


@case((3,), (0,))
def comprehensions_capturing_variables(n):
    offset = 10
    shifted = [i + offset for i in range(n)]
    table = {i: [j * offset for j in range(i)] for i in range(n)}
    gen = (i * offset for i in range(n) if i % 2 == 0)
    nested = [[i * j + offset for j in range(i)] for i in range(n)]
    return shifted, table, list(gen), nested


@case(([1, 2, 0, 4],), ([],))
def comprehension_raising(items):
    return [10 // x for x in items]


@case((4,), (0,), (-1,))
def generator_yield(n):
    if n < 0:
        raise ValueError(n)
    for i in range(n):
        yield i * i
    yield 'done'


@case(([1, 2],), ((),), ('ab',))
def generator_yield_from(items):
    yield from items
    yield from (x * 2 for x in items)
    got = yield from inner_generator_with_return(len(items))
    yield got


def inner_generator_with_return(n):
    for i in range(n):
        yield 'inner %d' % i
    return 'returned %d' % n


@case((3,), (0,))
def generator_send(n):
    def accumulate():
        total = 0
        while True:
            value = yield total
            if value is None:
                return total
            total += value

    gen = accumulate()
    out = [next(gen)]
    for i in range(n):
        out.append(gen.send(i))
    try:
        gen.send(None)
    except StopIteration as stop:
        out.append(('stopped', stop.value))
    return out


@case(([1, 2, 3],), ([],))
def generator_with_try_finally(items):
    try:
        for item in items:
            yield item
    finally:
        yield 'cleanup'


@case(([], False), ([], True))
def generator_whose_yield_is_unreachable(log, early):
    log.append('ran')
    if early:
        return None
    log.append('late')
    return None
    yield


@case((1,), (5,), ('x',))
async def async_await(x):
    first = await double_later(x)
    second = await double_later(first)
    return first, second


@case((3,), (0,))
async def async_for(n):
    out = []
    async for i in ticks(n):
        if i == 1:
            continue
        out.append(i)
    out.append('done')
    return out


@case((False,), (True,))
async def async_with(fail):
    log = []
    async with AsyncCtx(log, 'a') as a:
        async with AsyncCtx(log, 'b', suppress=True):
            log.append(a)
            if fail:
                raise KeyError(a)
    return log


@case((0,), (1,), (4,))
async def async_with_plain_and_nested(n):
    log = []
    async with AsyncCtx(log, 'plain'):
        log.append(n)
    async with AsyncCtx(log, 'outer') as a:
        async with AsyncCtx(log, 'inner', suppress=True) as b:
            log.append((a, b))
            if n == 1:
                raise KeyError(n)
    async with AsyncCtx(log, 'ret'):
        if n > 3:
            return log
    log.append('end')
    return log


@case((0,), (2,), (4,))
async def async_with_in_async_for(n):
    log = []
    async for i in ticks(n):
        async with AsyncCtx(log, 'loop %d' % i) as x:
            if i == 0:
                continue
            if i == 3:
                break
            log.append(x)
    return log


@case((0,), (3,), (5,))
async def async_for_inside_if(n):
    log = []
    if n:
        async for i in ticks(n):
            if i == 4:
                break
            log.append(i)
    return log


@case((0,), (3,))
async def async_for_inside_if_ending_the_function(n):
    log = [n]
    if n:
        async for i in ticks(n):
            log.append(i)


class _Box:
    pass


@case((0,), (3,))
async def async_comprehension_inside_if_stored_on_an_object(n):
    box = _Box()
    box.c = None
    if n:
        box.c = [i * 2 async for i in ticks(n)]
    return box.c


@case((0,), (3,))
async def async_comprehension_inside_if_returned(n):
    if n > 1:
        return {i: i + 1 async for i in ticks(n) if i}
    return n


@case((0,), (2,), (4,))
async def async_comprehension_inside_if_then_more_code(n):
    c = []
    if n:
        c = [i async for i in ticks(n)]
    c.append('end')
    return c


@case((0,), (3,))
async def async_with_in_async_generator(n):
    log = []
    async with AsyncCtx(log, 'gen') as x:
        yield x
        async for i in ticks(n):
            async with AsyncCtx(log, 'item'):
                yield i
    yield log


@case(([0, 2, 1],), ([0],), ([5, 0, 3],))
async def async_generator_while_true_with_else_break(items):
    while True:
        item = items.pop()
        if item:
            yield item
        else:
            break
    yield 'end'


@case((3,), (0,))
async def async_generator(n):
    async for i in ticks(n):
        yield i * 10
        await asyncio.sleep(0)
    yield 'end'


@case((3,), (0,), (-1,))
async def async_generator_returning_early(n):
    if n < 0:
        return
    async for i in ticks(n):
        if i == 2:
            return
        yield i
    yield 'end'


@case((3,), (1,))
async def async_comprehensions(n):
    values = [i async for i in ticks(n)]
    filtered = [i async for i in ticks(n) if i % 2 == 0]
    awaited = [await double_later(i) for i in range(n)]
    return values, filtered, awaited


@case((0,), (1,))
async def async_generator_whose_yield_is_unreachable(x):
    if x:
        raise KeyError(x)
    raise NotImplementedError('abstract')
    yield


@case((4,), (2.25,), (-1,))
def import_statements(x):
    import math
    import os.path
    from collections import OrderedDict as OD
    from math import sqrt, floor as fl
    import json as serializer
    return math.sqrt(x), os.path.join('a', 'b'), list(OD([('k', x)])), fl(sqrt(x)), serializer.dumps([x])


@case((1,), (0,))
def dotted_imports_as_names(flag):
    import xml.etree.ElementTree as ET
    import xml.dom as dom
    import xml.etree
    from xml.etree import ElementTree as ET2
    if flag:
        import email.mime.text as mt
        return ET.__name__, dom.__name__, xml.etree.__name__, ET2 is ET, mt.__name__
    return ET.__name__, dom.__name__


@case((1,), (0,))
def conditional_import(flag):
    try:
        if flag:
            import no_such_module_here
        import string
    except ImportError:
        return 'fallback'
    return string.digits


@case(('a = 1 + 22 * (3 - x)',), ('',), ('1 ?',))
def tokenizer(text):
    tokens, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if ch.isdigit():
            j = i
            while j < len(text) and text[j].isdigit():
                j += 1
            tokens.append(('num', int(text[i:j])))
            i = j
        elif ch.isalpha() or ch == '_':
            j = i + 1
            while j < len(text) and (text[j].isalnum() or text[j] == '_'):
                j += 1
            tokens.append(('name', text[i:j]))
            i = j
        elif ch in '+-*/()=':
            tokens.append(('op', ch))
            i += 1
        else:
            raise SyntaxError('bad character %r at %d' % (ch, i))
    return tokens


@case(([5, 3, 8, 1, 9, 2],), ([],), ([1],), ([2, 1],))
def quicksort(items):
    def sort(seq):
        if len(seq) <= 1:
            return seq
        pivot, *rest = seq
        return sort([x for x in rest if x < pivot]) + [pivot] + sort([x for x in rest if x >= pivot])

    return sort(items)


@case(({'a': [1, 2], 'b': {'c': None}},), ([1, [2, [3]]],), (5,))
def recursive_walk(tree):
    def walk(node, depth=0):
        if isinstance(node, dict):
            for key, value in sorted(node.items()):
                yield depth, key
                yield from walk(value, depth + 1)
        elif isinstance(node, list):
            for value in node:
                yield from walk(value, depth + 1)
        else:
            yield depth, node

    return list(walk(tree))


@case(([('a', 1), ('b', 2), ('a', 3)],), ([],))
def grouping_with_dict_methods(pairs):
    groups = {}
    for key, value in pairs:
        groups.setdefault(key, []).append(value)
    totals = {k: sum(v) for k, v in groups.items()}
    best = max(totals, key=totals.get) if totals else None
    return groups, totals, best


@case((3, 4), (0, 0), (-1, 2))
def state_machine(a, b):
    state, steps, out = 'start', 0, []
    while state != 'end':
        steps += 1
        if steps > 20:
            raise RuntimeError('no end')
        if state == 'start':
            state = 'left' if a > b else 'right' if a < b else 'end'
        elif state == 'left':
            a -= 1
            state = 'start'
        elif state == 'right':
            b -= 1
            state = 'start'
        out.append(state)
    return out, a, b


@case((b'hello',), (b'',), (b'\x00\xff',))
def bytes_operations(data):
    checksum = 0
    for byte in data:
        checksum = checksum * 31 + byte & 65535
    return checksum, data[::-1], data.hex(), bytes(reversed(data)), data + b'\n'


@case((Keys(),))
def subscript_forms(keys):
    return [keys[1], keys[1:2], keys[::2], keys[1:2, 3], keys[...], keys[:, None], keys[-1:], keys[(1,)], keys['a':'b':-1], keys[()]]


@case((2,), (-3,))
def attribute_and_literal_method_access(x):
    return (1).real, 2.5.is_integer(), 'ab'.upper(), x.bit_length(), x.__abs__(), (-x).real


@case((1, 2), (0, 0))
def tuple_swaps_and_multiple_targets(a, b):
    a, b = b, a
    a, b, c = b, a, a + b
    x = y = [a]
    x.append(b)
    (p, q), r = (a, b), c
    return a, b, c, y, p, q, r


@case((True,), (False,))
def if_expression_with_side_effects(flag):
    log = []

    def note(value):
        log.append(value)
        return value

    result = note('yes') if note(flag) else note('no')
    both = note(1) and note(0) and note(2)
    either = note(0) or note('') or note(3)
    return result, both, either, log


@case((3,), (0,))
def del_in_loops_and_names(n):
    items = list(range(n * 2))
    while items:
        head = items[0]
        del items[0]
        if head % 2:
            del head
            continue
        items = items[1:]
    return items, 'head' in dir()


@case((5,), (0,), (-2,))
def early_returns(n):
    if n < 0:
        return 'negative'
    total = 0
    for i in range(n):
        total += i
        if total > 5:
            return 'big', i
    if not total:
        return None
    return total


@case(('a,b;c',), ('',), ('x',))
def string_processing(text):
    fields = [part.strip() for chunk in text.split(';') for part in chunk.split(',') if part]
    return ','.join(reversed(fields)), text[1:3], text.partition(',')[::2], ''.join(sorted(text))


@case((1,), (2,))
def class_with_dunder_methods(x):
    class Vec:
        __slots__ = ('x', 'y')

        def __init__(self, x, y=0):
            self.x, self.y = x, y

        def __add__(self, other):
            return Vec(self.x + other.x, self.y + other.y)

        def __eq__(self, other):
            return (self.x, self.y) == (other.x, other.y)

        def __repr__(self):
            return 'Vec(%r, %r)' % (self.x, self.y)

        def __iter__(self):
            yield self.x
            yield self.y

    v = Vec(x) + Vec(1, x)
    return repr(v), list(v), v == Vec(x + 1, x), Vec.__slots__


@case((2,), (0,))
def nested_functions_three_levels(n):
    def level1(a):
        def level2(b):
            def level3(c):
                return a + b + c + n

            return level3

        return level2

    return level1(1)(2)(3), [level1(i)(i)(i) for i in range(n)]


@case(([1, 2, 3],), ([],))
def generator_expression_consumers(items):
    return any(x > 2 for x in items), all(x > 0 for x in items), max((x for x in items), default=-1), tuple(x * x for x in items), dict((x, str(x)) for x in items), sorted(set(x % 2 for x in items))


@case(('abc', 1), ('abc', 5), ([1, 2], 0), ('abc', 'k'), ({}, 1))
def index_errors_and_lookups(seq, i):
    try:
        return seq[i]
    except IndexError:
        return 'index error'
    except (KeyError, TypeError) as e:
        return type(e).__name__


@case((0,), (1,), (2,), (3,))
def while_else_and_try_in_loop(n):
    log = []
    while n:
        n -= 1
        try:
            if n == 1:
                raise ValueError
        except ValueError:
            log.append('v')
            return log
        log.append('ok')
    log.append('while else')
    return log


@case((10, 3), (0, 1), (5, 0))
def divmod_with_fallbacks(a, b):
    try:
        q, r = divmod(a, b)
    except ZeroDivisionError:
        q = r = None
    else:
        if r == 0:
            return q
    finally:
        a = -a
    return q, r, a


@case((3,), (0,))
def generator_in_class_method(n):
    class Counter:
        def __init__(self, limit):
            self.limit = limit

        def __iter__(self):
            i = 0
            while i < self.limit:
                yield i
                i += 1

    return list(Counter(n)), sum(Counter(n))


@case((1, 2), ('a', 'b'))
def keyword_arguments_to_nested(a, b):
    def f(x, y=0, *, z=1):
        return x, y, z

    return f(a), f(a, b), f(x=a, y=b, z=3), f(a, z=b), f(*[a], z=b)


@case(([3, 1, 2],), ([],))
def builtins_shadowing_and_locals(items):
    len_ = len(items)
    max_value = None
    for value in items:
        if max_value is None or value > max_value:
            max_value = value
    list_ = list
    return len_, max_value, list_(reversed(items))


@case((5,), (1,))
def yield_as_expression_value(n):
    received = []

    def echo():
        value = None
        while True:
            value = (yield value) or value
            received.append(value)

    gen = echo()
    next(gen)
    results = [gen.send(i) for i in range(n)]
    gen.close()
    return results, received


@case((2,), (0,))
def lambda_defaults_and_closures(n):
    scale = 3
    fns = [(lambda x, k=k: x * k + scale) for k in range(n)]
    compose = lambda f, g: lambda x: f(g(x))
    inc = lambda x: x + 1
    return [f(2) for f in fns], compose(inc, inc)(n), (lambda *a, **k: (a, k))(1, b=2)


@case((1,), (2,), (3,))
def long_elif_chain(x):
    if x == 1:
        return 'one'
    if x == 2:
        return x
    if x == 3:
        x = 30
        return x


@case((1,), (0,))
def empty_bodies(x):
    if x:
        pass
    for _ in range(2):
        pass
    try:
        pass
    except Exception:
        pass

    class Empty:
        pass

    def nothing():
        return None

    return nothing(), Empty.__name__


@case((2,), (0,))
def docstrings_of_nested(n):
    def documented():
        """A docstring that stays one."""
        return n

    class Documented:
        """Class docstring."""

    return documented.__doc__, Documented.__doc__, documented()


@case(([1, 2, 3],), ([],))
def unpacking_calls_and_returns(items):
    def pair():
        return (1, 2)

    first, second = pair()
    head, *tail = items or [None]
    return first, second, head, tail, (*items, *pair())


@case((1,), (0,))
def several_handlers_in_a_loop(x):
    results = []
    for value in (x, 0, 's'):
        try:
            try:
                results.append(10 // value)
            except ZeroDivisionError as e:
                results.append(str(e))
            except TypeError:
                results.append('type')
            continue
        finally:
            results.append('|')
        break
    return results


if sys.version_info >= (3, 10):
    import behaviour_cases_match


@case((0,), (1,), (3,), (5,))
def for_else_with_break_in_except(n):
    log = []
    for i in range(n):
        try:
            if i == 1:
                raise ValueError
        except ValueError:
            log.append('v')
            return log
        log.append('ok')
    log.append('else')
    return log


@case((0,), (2,), (3,), (7,))
def while_true_with_break_in_except(n):
    log = []
    while True:
        n -= 1
        try:
            if n == 1:
                raise ValueError
        except ValueError:
            log.append('v')
            return log
        log.append('ok')
        if n < 0:
            log.append('neg')
            return log


@case(([None, 2, None], [0, 5, 7]), ([], []), ([3], [None]))
def bool_op_in_an_arm_of_a_conditional_expression(a, b):
    return [m or 1 if s is None else s for s, m in zip(a, b)]


@case((0, 0), (0, 1), (2, 0), (3, 4))
def bool_ops_in_both_arms_returned(s, t):
    if t:
        return s or 1
    return s and 2


@case(([0, 2, 1],), ([0],), ([5, 0, 3],))
def while_true_with_else_break(items):
    out = []
    while True:
        item = items.pop()
        if item:
            out.append(item)
        else:
            return out


@case((['x', 'y', 'z', 'x'],), ([],), (['x'],), (['z', 'y', 'x'],))
def while_loops_ending_the_function(a):
    while a and a[0] in ('x', 'y'):
        del a[0]
    while a and a[-1] in ('x', 'y'):
        del a[-1]


@case((0, 0), (3, 1), (5, 9), (8, 2))
def while_with_compound_test_and_else(a, b):
    steps = []
    while a > 0 and b < 6:
        a -= 1
        b += 1
        if b == 4:
            break
        steps.append((a, b))
    else:
        steps.append('done')
    while a or b:
        if a:
            a -= 1
        else:
            b -= 1
    return steps, a, b


@case(([1, 2, 2, 3], [2]), ([], [1]), ((None, 0, None), [0]))
def loop_ending_in_negated_tests(items, seen):
    kept = []
    for x in items:
        if x not in seen:
            seen.append(x)
    for x in items:
        if x is not None:
            kept.append(x)
    return kept, seen


@case((0, 1), ([], [1]), ('a', ''), (None, 2))
def bool_conversions_kept(a, b):
    x = not not a
    y = not not a == b
    z = not not a or b
    w = b and not not a
    return x, y, z, w, not a, not a != b


@case(([(1, 2, 3), (4, 5, 6)],), ([],))
def unpacking_into_repeated_names(rows):
    tags = []
    for tag, _, _ in rows:
        tags.append((tag, _))
    a, b, a = (1, 2, 3)
    *_, last, _ = [7, 8, 9, 10]
    return tags, a, b, last, _


@case((0,), (1,), (2,))
def finally_with_a_branch_at_the_end(n):
    log = []
    try:
        if n == 2:
            raise KeyError(n)
        log.append('body')
    finally:
        if n:
            log.append('cleanup')
    return log


@case(([], []), ([1, 2, 3], []), ([0], []))
def for_loop_as_whole_if_body(xs, out):
    if xs:
        for x in xs:
            out.append(x)


@case(([], []), ([1, 2, 3], []), ([0, 5], []), ([3, 0, 2, 7], []))
def loops_ending_if_and_elif_bodies(xs, out):
    if xs is None:
        out.append(-1)
    elif len(xs) > 3:
        for x in xs:
            if x == 2:
                continue
            out.append(x)
    elif xs:
        for x in xs:
            for y in xs:
                out.append((x, y))
    if out:
        for x in out[:]:
            if x == 7:
                return x
            out.append(x)


@case(([], []), ([1, 2, 3], []), ([3, 0, 2, 7], []))
def generator_loop_as_whole_if_body(xs, out):
    if xs:
        out.append('s')
        for x in xs:
            yield [y for y in xs if y > x]


@case(([], []), ([1, 2, 3], []), ([3, 0, 2, 7], []))
def loop_in_nested_ifs(xs, out):
    if xs and len(xs) > 1:
        for x in xs:
            out.append(x)


@case(([], []), ([1, 2, 3], []), ([0, 5], []))
def while_loop_as_whole_if_body(xs, out):
    if xs:
        while xs:
            out.append(xs.pop())
    if out and len(out) > 1:
        while out:
            xs.append(-out.pop())


@case(([(1, 1), (1, 5), (0, 1)], [1]), ([], []), ([(0, 0), (2, 2)], [2]))
def if_else_nested_in_loop_then_branch(items, wanted):
    out = []
    for t, v in items:
        if t:
            if v in wanted:
                out.append(1)
                continue
            out.append(3)
            continue
        out.append(4)
    i = 0
    while i < len(items):
        t, v = items[i]
        i += 1
        if t and v:
            if v in wanted:
                out.append(5)
            elif v > 3:
                out.append(6)
            else:
                out.append(7)
        else:
            out.append(8)
    out.append(9)
    return out


@case(([1, 2, 3],), ([],), ([3, 0, 2, 7],))
def deeply_nested_if_else_in_loops(xs):
    out = []
    for x in xs:
        if x > 0:
            if x > 1:
                if x > 2:
                    out.append(3)
                    continue
                out.append(2)
                continue
            out.append(1)
            continue
        out.append(0)
    for x in xs:
        if not x:
            continue
        if x == 1:
            out.append('a')
            continue
        if x == 2:
            if out:
                out.append('b')
                continue
            out.append('c')
            continue
        out.append('d')
    i = 0
    while True:
        if i >= len(xs):
            return out
        x = xs[i]
        i += 1
        if x:
            if x > 2:
                out.append(True)
            else:
                out.append(False)
        else:
            out.append(None)


@case((0,), (2,), (4,))
def async_for_with_nested_if_else(n):
    async def run():
        out = []
        async for x in ticks(n):
            if x:
                if x > 2:
                    out.append(1)
                    continue
                out.append(2)
                continue
            out.append(3)
        return out

    return run()


@case(([],), ([1, 2, 3],), ([1, None, 3],), ([False, 's'],), (['s', 1],))
def identity_tests_returning_inside_a_loop(values):
    counts = [0, 0, 0]
    for value in values:
        counts[0] += 1
        if value is None:
            return -1, counts
    for value in values:
        counts[1] += 1
        if value is False:
            return -2, counts
    for value in values:
        counts[2] += 1
        if value == 's':
            break
    return counts


@case(({}, 0), ({}, 1), ({'n': 5}, 2), ({'raise': 1}, 1), ({'raise': 1}, 0))
def finally_with_a_branch_runs_once(d, c):
    try:
        d['body'] = 1
        if 'raise' in d:
            raise KeyError
    finally:
        if c:
            d['n'] = d.get('n', 0) + 1
        else:
            d['m'] = 2


@case(({}, 0), ({}, 1), ({'raise': 1}, 1))
def finally_with_an_if_at_the_end(d, c):
    try:
        d['body'] = 1
        if 'raise' in d:
            raise KeyError
    finally:
        if c:
            d['n'] = d.get('n', 0) + 1


@case((0, 3), (5, 3), (2, 2))
def while_loop_first_in_a_with_or_for_body(c, n):
    log = []
    calls = []

    def below(limit):
        calls.append(c)
        return c < limit

    with Ctx(log, 'plain'):
        while c < n:
            c += 1
    with Ctx(log, 'bound') as name:
        while below(n + 1):
            c += 1
            log.append(name)
    for _ in range(2):
        while below(n + 2):
            c += 1
        c -= 1
    return c, log, calls


import behaviour_cases_shapes
import behaviour_cases_legacy
import behaviour_cases_flow
import behaviour_cases_exc
import behaviour_cases_trust
import behaviour_cases_try_flow
