"""Stand-in decompilers that calibrate the round-trip harness.

`unparse` returns the real source of a function (ast.unparse of its `def`,
found by name and first line): a correct harness rates all of it identical.
The others break that on purpose, to prove the harness notices.  Python 3.9+
(ast.unparse)."""
import ast
import copy
import os
import signal
import time

from roundtrip import def_nodes

_nodes = {}  # file name -> def_nodes() of its source

# Each comparison operator and one that compiles to a different instruction.
_FLIPPED = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt,
            ast.Gt: ast.LtE, ast.LtE: ast.Gt, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
            ast.In: ast.NotIn, ast.NotIn: ast.In}

# The function that `hang_on_target` and `crash_on_target` misbehave on.
TARGET = "insort_right"


def function_node(code):
    """The `def` node that `code` was compiled from."""
    if code.co_filename not in _nodes:
        with open(code.co_filename, encoding="utf-8") as f:
            _nodes[code.co_filename] = def_nodes(ast.parse(f.read(), code.co_filename))
    return _nodes[code.co_filename][code.co_name, code.co_firstlineno]


def _undecorated(node):
    # Decorators run in the enclosing scope; a decompiled code object has none.
    bare = copy.copy(node)
    bare.decorator_list = []
    return bare


def unparse(code):
    return ast.unparse(_undecorated(function_node(code)))


def has_comparison(code):
    """Whether the function's source (nested code included) compares anything."""
    return any(isinstance(n, ast.Compare) for n in ast.walk(function_node(code)))


def unparse_with_flipped_comparison(code):
    """The source with its first comparison operator replaced."""
    tree = ast.parse(unparse(code))  # a private copy: the cached tree stays intact
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            node.ops[0] = _FLIPPED[type(node.ops[0])]()
            break
    return ast.unparse(tree)


def hang_on_target(code):
    if code.co_name == TARGET:
        while True:
            time.sleep(60)
    return unparse(code)


def crash_on_target(code):
    if code.co_name == TARGET:
        os.kill(os.getpid(), signal.SIGSEGV)
    return unparse(code)
