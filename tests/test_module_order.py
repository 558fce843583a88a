"""Module-level code (STORE_NAME targets, imports bound at module level)
decompiled, run again and compared with the original run: tuple assignments
keep their evaluation order, dotted imports bind the right module."""
import depyf

SOURCE = '''
log = []
def f(x):
    log.append(x)
    return x + 1
a, b, c = 1, 10, 100
a, b = f(a), f(b)
a, b, c = f(c), f(a), f(b)
for i in range(2):
    a, b = f(b), f(a)
    c, (a, b) = f(c), (f(b), f(a))
import xml.etree.ElementTree as ET
import xml.dom.minidom
from xml.etree import ElementTree as ET2
from os.path import *
names = ET.__name__, xml.dom.minidom.__name__, ET2 is ET, join("p", "q")
class K:
    import xml.etree.ElementTree as ET
    x, y = f(1), f(2)
kind = K.ET.__name__, K.x, K.y
'''


def run(source):
    namespace = {}
    exec(compile(source, "<module>", "exec"), namespace)
    return {k: namespace[k] for k in ("log", "a", "b", "c", "names", "kind")}


def test_module_level_assignments_and_imports():
    source = depyf.decompile(compile(SOURCE, "<module>", "exec"))
    assert "import xml.etree.ElementTree as ET" in source, source
    assert run(source) == run(SOURCE), source


TRY_ELSE_AT_THE_END = '''
import sys
try:
    import json
except ImportError:
    pass
else:
    first = json.__name__
x = 1
try:
    from %s import loads, dumps
except ImportError:
    pass
else:
    got = loads
    also = dumps
'''


def test_try_else_ending_a_module_is_no_return_outside_a_function():
    """3.12+ copies the module's implicit return into an except clause that ends it; the
    code after the try is its else (a `return` there would not compile)."""
    for module in ("json", "no_such_module_for_depyf"):
        source = TRY_ELSE_AT_THE_END % module
        text = depyf.decompile(compile(source, "<module>", "exec"))
        assert "return" not in text, text
        want, got = {}, {}
        exec(compile(source, "<module>", "exec"), want)
        exec(compile(text, "<decompiled>", "exec"), got)
        assert {k: v for k, v in want.items() if k != "__builtins__"} == \
            {k: v for k, v in got.items() if k != "__builtins__"}, text


# Statements that end a module: 3.10+ copies the module's implicit return into
# each branch and loop that reaches the end, and no `return` may say that there.
MODULE_TAILS = {
    "if_in_main_guard": '''
log = []
if __name__ == "__main__":
    if len(ARGS) == 1:
        log.append("one")
    else:
        fn = len(ARGS)
        log.append(fn)
''',
    "elif_chain": '''
log = []
if ARGS and ARGS[0] == "a":
    log.append(1)
elif len(ARGS) > 1:
    log.append(2)
    if ARGS[1] == "b":
        log.append(3)
else:
    log.append(4)
''',
    "loop_break": '''
log = []
for i in ARGS:
    if i == "b":
        break
    log.append(i)
''',
    "while_try": '''
log = []
n = 0
while True:
    try:
        n += 1
        if n > len(ARGS):
            raise KeyError(n)
    except KeyError:
        log.append("stop")
        break
    log.append(n)
''',
    "for_else": '''
log = []
for i in ARGS:
    if i == "c":
        log.append("found")
        break
else:
    log.append("none")
''',
    "class_body": '''
class A:
    seen = []
    for i in ARGS:
        if i == "b":
            break
        seen.append(i)
    if seen:
        first = seen[0]
    else:
        first = None
log = [A.seen, A.first]
''',
}


def test_statements_that_end_a_module_run_as_the_original():
    for name, source in MODULE_TAILS.items():
        text = depyf.decompile(compile(source, "<module>", "exec"))
        assert "return" not in text, (name, text)
        for args in ([], ["a"], ["x", "b"], ["a", "b", "c"], ["c"]):
            want, got = {"ARGS": args, "__name__": "__main__"}, {"ARGS": args, "__name__": "__main__"}
            exec(compile(source, "<module>", "exec"), want)
            exec(compile(text, "<decompiled>", "exec"), got)
            assert want["log"] == got["log"], (name, args, text)
