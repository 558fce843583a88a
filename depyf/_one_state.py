"""A state machine of one state is straight-line code: its body, without the loop.

Where the decompiler finds no structured form it prints an exact state
machine over the bytecode's blocks:

    ___state = 0
    while True:
        if ___state == 0:
            <block>

When there is one block, it never reads the state and it cannot fall through
(it ends in `return` or `raise`, with no `break` or `continue` of the loop),
the loop runs the block exactly once: the block alone means the same.  Its
temporaries (`___t<n>`, bound by the machine) become the simplifier's
(`__temp_<n>`), so the bookkeeping Dynamo routes through the stack folds away
as it does in a structured form.
"""

import ast
import re

from depyf import _fold_uses

__all__ = ["flatten", "NOTE"]

# The first words of the comment lines of the machine's note (see fallback.c).
NOTE = re.compile(r"\s*# (depyf: (no structured form was found|the structured form failed validation)"
                  r"|this is an equivalent state machine over the bytecode's blocks)")


def _leaves_loop(stmts):
    """True when one of `stmts` breaks or continues the enclosing loop."""
    for stmt in stmts:
        for node in _same_loop(stmt):
            if isinstance(node, (ast.Break, ast.Continue)):
                return True
    return False


def _same_loop(node):
    """`node` and what it holds, not entering loops, functions or classes."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef,
                                  ast.ClassDef, ast.Lambda)):
            yield from _same_loop(child)


def _is_int(node, value):
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == value


def flatten(fn):
    """The body of def `fn` without its one-state machine (its temporaries renamed), or None."""
    body = list(fn.body)
    doc = []
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        doc = [body.pop(0)]
    if len(body) != 2:
        return None
    init, loop = body
    if not (isinstance(init, ast.Assign) and len(init.targets) == 1 and isinstance(init.targets[0], ast.Name)
            and init.targets[0].id.endswith("state") and _is_int(init.value, 0)):
        return None
    state = init.targets[0].id
    if not (isinstance(loop, ast.While) and isinstance(loop.test, ast.Constant) and loop.test.value is True
            and not loop.orelse and len(loop.body) == 1 and isinstance(loop.body[0], ast.If)):
        return None
    branch = loop.body[0]
    test = branch.test
    if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == state
            and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq) and _is_int(test.comparators[0], 0)
            and not branch.orelse and branch.body):
        return None
    block = branch.body
    if not isinstance(block[-1], (ast.Return, ast.Raise)) or _leaves_loop(block):
        return None
    names = {n.id for stmt in block for n in _fold_uses.walk(stmt) if isinstance(n, ast.Name)}
    if state in names:
        return None
    _rename_temps(block, state[:-len("state")], fn)
    return doc + block


def _rename_temps(block, prefix, fn):
    machine_temp = re.compile(re.escape(prefix) + r"t(\d+)$")
    used = [int(m.group(1)) for n in _fold_uses.walk(fn) if isinstance(n, ast.Name)
            for m in [re.match(r"__temp_(\d+)$", n.id)] if m]
    base = max(used, default=0)
    for stmt in block:
        for node in _fold_uses.walk(stmt):
            if isinstance(node, ast.Name):
                found = machine_temp.match(node.id)
                if found:
                    node.id = "__temp_%d" % (base + int(found.group(1)))
