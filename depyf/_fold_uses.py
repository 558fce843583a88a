"""Fold a temporary read once into the statement that reads it.

    tmp_2 = f()                 ->    g(f())
    g(tmp_2)

is exact when nothing that could observe the move happens between the two
evaluations of `f()`.  In `g(tmp_2)` only `g` is evaluated before `tmp_2`, so
`g` must be pure (a constant, a variable surely bound, a global Dynamo binds
before its code runs, an attribute of a module Dynamo imports for it).  The
statement holding the read must evaluate it unconditionally (not under
`and`/`or`/`if`-expressions, chained comparisons, lambdas or comprehensions).
Only names the decompiler or Dynamo invented are folded; a user's variable
keeps its line.  Between the two statements only stores of constants to names
`f()` does not read may stand, outside any `try` (where `f()` raising would
leave the function before anything could read those names).
"""

import ast
import re

__all__ = ["fold_single_uses"]

_FOLDABLE = re.compile(r"(__temp_|tmp_|graph_out_)\d+$")
# Globals Dynamo binds before its code runs (see DP_EQ_STABLE_GLOBALS in equiv.h; the
# checker's own list, stable_global in equiv.c, also has Dynamo's __builtins_dict___<n>).
DYNAMO_GLOBAL = re.compile(r"__(compiled_fn|resume_at|import)_")
# A resume function Dynamo binds (torch <= 2.8 appends a uuid, as to graphs: `__resume_at_30_1_<uuid>`).
RESUME_NAME = re.compile(r"__resume_at_\d+_\d+(?:_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12})?$")
# A constant the printer named (it has no literal form): `_depyf_const_<k>`.
NAMED_CONST = re.compile(r"_depyf_const_\d+")


# Fields that hold no name, call or statement: strings, numbers, and the leaf nodes of
# contexts and operators (`ast.Load()`, `ast.Add()`), which every walk here skips.
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "name", "names", "module", "level", "kind",
                          "type_comment", "conversion", "is_async", "simple", "type_ignores", "tag"})


class _ChildFields(dict):
    """{node class: its fields that may hold a name, a call or a statement}, filled on demand
    (a dict, so that a lookup in the walks' inner loops is no Python call)."""

    def __missing__(self, cls):
        fields = self[cls] = tuple(f for f in cls._fields if f not in _LEAF_FIELDS)
        return fields


CHILD_FIELDS = _ChildFields()


def walk(tree, closed=()):
    """ast.walk's nodes in ast.walk's order (breadth first, a node's children taken before
    it is yielded) but for leaves of no interest (contexts, operators), at a fifth of its
    cost: ast.walk's nested generators and its visits of every `ast.Load()` were most of
    the simplifier's time.  A node below `tree` whose class is in `closed` is yielded but
    not entered."""
    todo = [tree]
    AST, child_fields = ast.AST, CHILD_FIELDS
    for node in todo:
        cls = node.__class__
        if cls not in closed or node is tree:
            for field in child_fields[cls]:
                value = getattr(node, field, None)
                if isinstance(value, AST):
                    todo.append(value)
                elif isinstance(value, list):
                    todo.extend([item for item in value if isinstance(item, AST)])
        yield node


def assigns_a_name(stmt):
    """`name = value`: one target, a plain name."""
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)


def constant_store(stmt):
    """`name = <constant>`: it runs nothing."""
    return assigns_a_name(stmt) and isinstance(stmt.value, ast.Constant)


class _NotHere(Exception):
    pass


def _evaluation_order(node):
    """Sub-expressions of `node` in the order Python evaluates them (children first)."""
    if isinstance(node, (ast.Name, ast.Constant)):
        yield node
        return
    if isinstance(node, ast.Call):
        parts = [node.func, *node.args, *(k.value for k in node.keywords)]
    elif isinstance(node, ast.Attribute):
        parts = [node.value]
    elif isinstance(node, ast.Subscript):
        parts = [node.value, node.slice]
    elif isinstance(node, ast.BinOp):
        parts = [node.left, node.right]
    elif isinstance(node, ast.UnaryOp):
        parts = [node.operand]
    elif isinstance(node, ast.Compare) and len(node.comparators) == 1:
        parts = [node.left, node.comparators[0]]
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        parts = list(node.elts)
    elif isinstance(node, ast.Starred):
        parts = [node.value]
    elif isinstance(node, ast.Slice):
        parts = [p for p in (node.lower, node.upper, node.step) if p is not None]
    else:
        raise _NotHere(type(node).__name__)  # short-circuits, scopes, yields: not folded into
    for part in parts:
        yield from _evaluation_order(part)
    yield node


def _statement_order(stmt):
    if isinstance(stmt, (ast.Expr, ast.Return)) and stmt.value is not None:
        return _evaluation_order(stmt.value)
    if assigns_a_name(stmt):
        return _evaluation_order(stmt.value)
    if isinstance(stmt, ast.If):
        return _evaluation_order(stmt.test)
    raise _NotHere(type(stmt).__name__)


class _Folder:
    def __init__(self, params, relaxed, counts):
        # (a deletion counts as a store)
        self.loads = {name: c[0] for name, c in counts.items() if c[0]}
        self.stores = {name: c[1] + c[2] for name, c in counts.items() if c[1] + c[2]}
        self.params = {p for p in params if p not in self.stores}
        self.relaxed = relaxed
        self.in_try = 0  # > 0 inside a try's body: a raise there may reach a handler

    def pure(self, node, bound):
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Name):  # (`_depyf_const_<k>` stands for a constant the printer named)
            return (node.id in self.params or node.id in bound or NAMED_CONST.fullmatch(node.id)
                    or (self.relaxed and DYNAMO_GLOBAL.match(node.id)))
        if isinstance(node, ast.Attribute):  # a module Dynamo imports for its code: its functions stay put
            return self.relaxed and isinstance(node.value, ast.Name) and node.value.id.startswith("__import_")
        return isinstance(node, (ast.Tuple, ast.List, ast.Slice))  # building one runs nothing

    def body(self, stmts, bound):
        out = []
        bound = set(bound)
        for stmt in stmts:
            if isinstance(stmt, ast.If):
                stmt.body = self.body(stmt.body, bound)
                stmt.orelse = self.body(stmt.orelse, bound)
            if isinstance(stmt, ast.Try):  # (each block on its own: nothing moves in or out of a try)
                self.in_try += 1
                stmt.body = self.body(stmt.body, bound) or [ast.Pass()]
                self.in_try -= 1
                stmt.finalbody = self.body(stmt.finalbody, bound)
            if out:
                at = len(out) - 1
                while at > 0 and not self.in_try and constant_store(out[at]):
                    at -= 1  # (storing a constant runs nothing: a value may move past it)
                if self.fold(out[at], stmt, bound, out[at + 1:]):
                    del out[at]
            out.append(stmt)
            if isinstance(stmt, ast.Assign):
                bound |= {t.id for t in stmt.targets if isinstance(t, ast.Name) and self.stores.get(t.id) == 1}
            if isinstance(stmt, ast.Delete):
                bound -= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
        return out

    def fold(self, first, second, bound, between):
        """Fold `first` (`T = E`) into `second`, past the constant stores `between`, when exact;
        True when done."""
        if not assigns_a_name(first):
            return False
        name = first.targets[0].id
        if not _FOLDABLE.match(name) or self.loads.get(name) != 1 or self.stores.get(name) != 1:
            return False
        read = {n.id for n in walk(first.value) if isinstance(n, ast.Name)}
        if any(stmt.targets[0].id in read for stmt in between):
            return False
        try:
            order = list(_statement_order(second))
        except _NotHere:
            return False
        for node in order:
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                return self.replace(second, node, first.value)
            if not self.pure(node, bound):
                return False
        return False

    @staticmethod
    def replace(stmt, target, value):
        for parent in walk(stmt):
            for field, old in ast.iter_fields(parent):
                if old is target:
                    setattr(parent, field, value)
                    return True
                if isinstance(old, list) and any(x is target for x in old):
                    setattr(parent, field, [value if x is target else x for x in old])
                    return True
        return False


def fold_single_uses(fn, params, relaxed, counts):
    """Fold, in place, every invented temporary of `fn` that is read once (see the module doc).

    `relaxed`: Dynamo's code (its globals and imported modules' attributes are stable);
    `counts`: {name: [loads, stores, deletes]} in `fn`."""
    folder = _Folder(params, relaxed, counts)
    fn.body = folder.body(fn.body, ()) or [ast.Pass()]
