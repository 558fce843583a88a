"""Private names (`self.__x` in a class) print as written wherever the output
puts the code inside its class, and keep the compiler's mangled spelling
(`self._A__x`) where it does not: a method decompiled on its own prints at
module level, where `self.__x` would name another attribute.  The printed
module and classes are translation-validated (on 3.13 too, whose class bodies
record the attributes their methods store on `self`, as written), and behave
as the originals."""
import re
import sys

import pytest

import depyf
from depyf import _core

PRIVATE = '''
import types as __types

class Account:
    """Private names everywhere the compiler mangles them."""
    __count = 0
    __limits = [__n * 10 for __n in range(3)]
    __ann: int = 7

    def __init__(self, owner, __balance=0, *, __fee=1, **__extra):
        self.__owner = owner
        self.__balance = __balance
        self.__fee = __fee
        self.__extra = __extra
        Account.__count += 1

    def __apply(self, __amount):
        global __journal
        __before = self.__balance
        def __record():
            return (__before, __amount)
        __journal = __record()
        self.__balance = __before + __amount - self.__fee
        return self.__balance

    def deposit(self, amount):
        try:
            from collections import OrderedDict as __OD, namedtuple
            import operator as __op
            total = self.__apply(amount)
        except ZeroDivisionError as __e:
            return __e
        if (__big := total > 100):
            pass
        scale = lambda __v: __v * 2
        return total, __big, scale(total), __op.neg(total), __OD is not None, namedtuple is not None

    def report(self):
        r = [self.__owner for __i in range(2)]
        return (r, self.__balance, Account.__count, Account.__limits, Account.__ann, __journal,
                len(self.__extra), self.__len__(), self.__class__.__name__, dict(__k=1))

    def __len__(self):
        return self.__balance

    class __Ledger:
        def __init__(self):
            self.__rows = []
        def add(self, row):
            self.__rows.append(row)
            return self.__rows

    def ledger(self):
        return self.__Ledger().add(self.__owner)

    def drop(self):
        del self.__extra
        return hasattr(self, "_Account__extra")

class _Priv:
    def __init__(self):
        self.__p = 5
    def p(self):
        return self.__p

class __:
    def __init__(self):
        self.__q = 7
    def q(self):
        return self.__q

class __Dunder__:
    def __init__(self):
        self.__r__ = 1
        self.__s = 2

def run():
    a = Account("ann", 50, x=1)
    return (a.deposit(60), a.report(), a.ledger(), a.drop(), _Priv().p(), __().q(),
            vars(__Dunder__()), sorted(vars(a)), Account.__annotations__,
            getattr(Account, "__static_attributes__", None), "__journal" in globals(),
            "_Account__journal" in globals())
'''

# (3.10+) captures are mangled; a class pattern's keywords are attribute names looked up as written
MATCH = '''
class Box:
    pass

class Sorter:
    def sort(self, subject):
        match subject:
            case Box(__z=__w):
                return "box", __w
            case {"k": __v, **__rest}:
                return "map", __v, __rest
            case [__a, *__b]:
                return "seq", __a, __b
            case __other:
                return "other", __other

def run():
    b = Box()
    setattr(b, "__z", 3)
    s = Sorter()
    return s.sort(b), s.sort({"k": 1, "j": 2}), s.sort([1, 2, 3]), s.sort(4)
'''

# (3.12+) PEP 695: bodies are mangled by their class; headers keep the bytecode's spelling (their
# annotation scopes mangle only some names on 3.13, the names after a generic class on 3.12.0-3.12.3)
GENERIC = '''
class Plain:
    def pick[T](self, __x: T) -> T:
        self.__seen = __x
        return self.__seen

class Holder[T]:
    def __init__(self, v: T):
        self.__v = v
    def get(self) -> T:
        return self.__v

def run():
    return Plain().pick(2), Holder(5).get(), sorted(vars(Plain()) or ()), sorted(vars(Holder(1)))
'''


def module_code(src):
    return compile(src, "<mod>", "exec", dont_inherit=True)


def decompiled(src):
    _core.validation_stats(reset=True)
    out = depyf.decompile(module_code(src))
    return out, _core.validation_stats()


def same_behaviour(src, out):
    g1, g2 = {}, {}
    exec(module_code(src), g1)
    exec(module_code(out), g2)
    assert g1["run"]() == g2["run"](), out
    return g1


def test_private_names_print_as_written_inside_their_class():
    out, stats = decompiled(PRIVATE)
    for written in ("    __count = 0", "__limits = [__n * 10 for __n in range(3)]", "__ann: int = 7",
                    "def __init__(self, owner, __balance=0, *, __fee=1, **__extra):",
                    "self.__owner = owner", "Account.__count += 1", "def __apply(self, __amount):",
                    "global __journal", "def __record():", "return __before, __amount",
                    "from collections import OrderedDict as __OD, namedtuple", "import operator as __op",
                    "self.__apply(amount)", "except ZeroDivisionError as __e:", "(__big := ",
                    "lambda __v: __v * 2", "for __i in range(2)", "class __Ledger:", "self.__rows.append(row)",
                    "self.__Ledger()", "del self.__extra", "self.__p = 5", "self.__q = 7", "self.__s = 2"):
        assert written in out, (written, out)
    # what the compiler does not mangle stays as it is: dunders, keywords, strings, module level
    for kept in ("import types as __types", "self.__r__ = 1", "self.__len__()", "self.__class__.__name__",
                 "dict(__k=1)", "'_Account__extra'"):
        assert kept in out, (kept, out)
    code = re.sub(r"'[^']*'", "''", out)  # (strings aside)
    assert not re.search(r"\b_(Account|Priv|Dunder|Ledger)__", code), out
    # every body validated, the class bodies too (3.13: with the attributes they record)
    assert stats["fallback"] == 0 and stats["unchecked"] == 0 and stats["validated"] >= 20, (stats, out)
    same_behaviour(PRIVATE, out)


def test_a_class_body_alone_prints_its_private_names_as_written():
    code = next(c for c in module_code(PRIVATE).co_consts if getattr(c, "co_name", None) == "Account")
    _core.validation_stats(reset=True)
    out = depyf.decompile(code)
    stats = _core.validation_stats()
    assert out.startswith("class Account:") and "self.__balance = __before + __amount - self.__fee" in out, out
    assert stats["fallback"] == 0 and stats["unchecked"] == 0, (stats, out)


def test_a_method_on_its_own_keeps_the_mangled_spelling():
    g = {}
    exec(module_code(PRIVATE), g)
    account = g["Account"]
    for method, spelled in ((account.deposit, "self._Account__apply(amount)"),
                            (account._Account__apply, "global _Account__journal")):
        _core.validation_stats(reset=True)
        out = depyf.decompile(method)
        assert spelled in out and "self.__" not in out, out
        # (__apply's `def __record` stored as _Account__record is no def outside the class: the state machine)
        assert method is not account.deposit or _core.validation_stats()["fallback"] == 0, out
        # at module level the mangled spelling reaches the same attributes
        ns = dict(g)
        exec(compile(out, "<method>", "exec"), ns)
        standalone = ns[method.__name__]
        assert standalone(account("bob", 10), 5) == method(account("bob", 10), 5)


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match is 3.10+")
def test_match_captures_print_as_written_and_class_pattern_keywords_as_they_are():
    out, stats = decompiled(MATCH)
    for written in ("case Box(__z=__w):", "return 'box', __w", "case {'k': __v, **__rest}:",
                    "case [__a, *__b]:", "case __other:"):
        assert written in out, (written, out)
    assert "_Sorter__" not in out, out
    assert stats["fallback"] == 0 and stats["unchecked"] == 0, (stats, out)
    same_behaviour(MATCH, out)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="PEP 695 is 3.12+")
def test_generic_bodies_print_private_names_as_written():
    out, stats = decompiled(GENERIC)
    for spelled in ("def pick[T](self, _Plain__x: T) -> T:", "self.__seen = __x", "self.__v = v", "return self.__v"):
        assert spelled in out, (spelled, out)
    assert stats["fallback"] == 0, (stats, out)
    same_behaviour(GENERIC, out)
