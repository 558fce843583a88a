"""`match` cases for tests/test_behaviour.py (Python 3.10+ syntax): every
pattern kind.  Imported by behaviour_cases.py, whose CASES they join."""
from behaviour_cases import case


class Point:
    __match_args__ = ('x', 'y')

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __repr__(self):
        return f'Point({self.x!r}, {self.y!r})'


class Color:
    RED = 'red'
    GREEN = 'green'


@case((0,), (1,), ('text',), (b'raw',), (2.5,), (-3,), ((1+2j),), ('other',))
def match_literals(value):
    match value:
        case 0:
            return 'zero'
        case 1 | 2:
            return 'one or two'
        case 'text':
            return 'string'
        case b'raw':
            return 'bytes'
        case 2.5:
            return 'float'
        case -3:
            return 'negative'
        case (1+2j):
            return 'complex'
    return 'no match'


@case((None,), (True,), (False,), (0,))
def match_singletons(value):
    match value:
        case None:
            return 'none'
        case True:
            return 'true'
        case False:
            return 'false'
        case _:
            return 'wildcard'


@case(('red',), ('green',), ('blue',))
def match_value_patterns(color):
    match color:
        case Color.RED:
            return 1
        case Color.GREEN:
            return 2
        case other:
            return 'captured ' + other


@case(([],), ([1],), ([1, 2],), ([1, 2, 3, 4],), ((5, 6),), ('ab',), ([[1, 2], 3],))
def match_sequences(seq):
    match seq:
        case []:
            return 'empty'
        case [x]:
            return 'one', x
        case [1, y]:
            return 'starts with 1', y
        case [first, *middle, last] if len(middle) > 1:
            return 'long', first, middle, last
        case [[a, b], c]:
            return 'nested', a, b, c
        case [p, q]:
            return 'pair', p, q
        case [*_]:
            return 'any sequence'
        case _:
            return 'not a sequence'


@case(({'kind': 'a', 'v': 1},), ({'kind': 'b', 'extra': 2, 'more': 3},), ({'v': 0},), ({},), (5,))
def match_mappings(data):
    match data:
        case {'kind': 'a', 'v': v}:
            return 'a', v
        case {'kind': 'b', **rest}:
            return 'b', sorted(rest.items())
        case {'v': 0 | 1 as v}:
            return 'small v', v
        case {}:
            return 'some mapping'
    return 'not a mapping'


@case((Point(0, 0),), (Point(1, 5),), (Point(2, 2),), (Point('a', 0),), (3,), ([Point(1, 1)],))
def match_classes(obj):
    match obj:
        case Point(0, 0):
            return 'origin'
        case Point(x=1, y=y):
            return 'x is one', y
        case Point(x, y) if x == y:
            return 'diagonal', x
        case Point(x=str() as name):
            return 'named', name
        case int(n):
            return 'int', n
        case [Point() as p]:
            return 'list of one point', p
    return 'unknown'


@case((1,), ('s',), ([1, 'a'],), ((1, 2),), ({'k': [1, 2]},), (None,))
def match_or_as_and_guards(value):
    match value:
        case int() | float() as number if number > 0:
            return 'positive number', number
        case str(s) | bytes(s):
            return 'text', s
        case [int() as i, str() as s]:
            return 'int then str', i, s
        case [1, 2] | [2, 1] as pair:
            return 'pair', pair
        case {'k': [_, *others] as inner}:
            return 'inner', inner, others
    if value is None:
        return 'none by guard'
    return 'fell through'


@case((['go', 'north'],), (['look'],), (['drop', 'a', 'b'],), (['quit'],), ('x',))
def match_command_interpreter(command):
    log = []
    match command:
        case ['go', direction]:
            log.append('going ' + direction)
        case ['look']:
            log.append('looking')
        case ['drop', *items]:
            for item in items:
                log.append('dropped ' + item)
        case ['quit' | 'exit']:
            log.append('bye')
        case _:
            log.append('unknown')
    log.append('after match')
    return log


@case(([],), ([1, 2, 3],), ([None, 1],), ([2, 0],), ([[4], 1, 2],))
def match_ending_a_for_body(values):
    log = []
    for value in values:
        log.append(value)
        match value:
            case None | 2:
                log.append('none or two')
            case 1:
                break
                break
    for value in values:
        log.append(value)
        match value:
            case [a]:
                log.append(a)
            case 2:
                return log
    return log


@case((1,), ([5],), ((2, 3),), ('x',), ([1, 2, 3],))
def cases_falling_into_a_shared_return(v):
    r = -1
    match v:
        case 0 | 1:
            return r
        case [x]:
            r = x
            return r
        case [a, b]:
            r = a + b
            return r
        case _:
            return r
