"""Fold the bookkeeping out of decompiled code: temporaries, lists built and taken apart.

Dynamo's transformed code moves values through the stack, and the decompiler
shows every stack value it cannot place as a temporary (`__temp_<n>`): lists
built, sliced, extended and unpacked only to line up the arguments of a resume
function.  This pass runs the decompiled body symbolically, in order, with an
exact model of such lists, and prints only what has an effect:

- A temporary bound to a value that is pure (a constant, a parameter, a name
  bound once, a tuple of those) is replaced by that value.
- A list that lives only in temporaries is tracked item by item through
  indexing, slicing, slice assignment, `extend`/`append` and `del`.  Where it
  leaves the function's hands (an argument, a return value, a store to a real
  variable) it is printed as a list display of its items at that moment.
  A list used after it left, or passed twice at once, stops the pass: its
  identity would show.
- Stores to Dynamo's own temporaries that nothing reads (`tmp_<n>`, kept only
  to be deleted) are dropped, along with their `del`.  One of them bound once,
  never deleted, to a pure value is replaced by that value like a temporary.
- Everything else (calls, attribute reads, operators, branches) is printed
  where it happens, so operations keep their order.

The pass gives up (returns None) on anything outside that model: loops,
`try` other than a try/finally whose finally block reads none of the
model's values, `with`, a temporary read in a nested scope, an unknown list
method.
The caller then shows the exact form.

With `graph_outputs=True` (Dynamo's transformed code only) one more fact is
used: `graph_out_<n>` holds the tuple returned by a compiled graph and is never
rebound, so reading one of its items by a constant index is pure: it may move,
be repeated, and be named after the variable it becomes in a resume function
(`x = graph_out_0[1]`).  The `del graph_out_<n>` that frees the tuple early is
dropped, so the tuple lives until the function returns.
"""

import ast
import io
import keyword
import re
import tokenize

from depyf import _fold_uses, _one_state

__all__ = ["simplify", "GiveUp"]

_TEMP = re.compile(r"__temp_\d+$")
_DYNAMO_TMP = re.compile(r"tmp_\d+$")
_GRAPH_OUT = re.compile(r"graph_out_\d+$")


class GiveUp(Exception):
    """The body leaves the model; the exact form is shown instead."""


class _Atom:
    """A pure value: evaluating `expr` again anywhere later gives the same object."""

    def __init__(self, expr):
        self.expr = expr


class _List:
    """A list known item by item (`ident` into the heap)."""

    def __init__(self, ident):
        self.ident = ident


class _State:
    def __init__(self):
        self.env = {}  # temporary -> _Atom or _List
        self.heap = {}  # ident -> [values]
        self.gone = set()  # idents of lists that left the function's hands
        self.bound = set()  # names surely bound here

    def clone(self):
        other = _State()
        other.env = dict(self.env)
        other.heap = {k: list(v) for k, v in self.heap.items()}
        other.gone = set(self.gone)
        other.bound = set(self.bound)
        return other

    def same(self, other):
        def key(s):
            return ({k: _describe(v) for k, v in s.env.items()},
                    {k: [_describe(x) for x in v] for k, v in s.heap.items()}, s.gone, s.bound)
        return key(self) == key(other)


def _describe(value):
    return ("list", value.ident) if isinstance(value, _List) else ("atom", ast.dump(value.expr))


_CTX = {ast.Load: 0, ast.Store: 1, ast.Del: 2}
_SCOPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
                     ast.DictComp, ast.GeneratorExp})


def _names(tree, nested=None):
    """{name: [loads, stores, deletes]} over the whole tree, nested scopes included, in one walk;
    with a set `nested`, the names used inside a nested scope (below `tree`) are added to it."""
    counts = {}
    scopes = []
    for node in _fold_uses.walk(tree, _SCOPES if nested is not None else ()):
        if node.__class__ is ast.Name:
            _count(counts, node)
        elif nested is not None and node.__class__ in _SCOPES and node is not tree:
            scopes.append(node)
    for scope in scopes:
        for node in _fold_uses.walk(scope):
            if node.__class__ is ast.Name:
                _count(counts, node)
                nested.add(node.id)
    return counts


def _count(counts, name, by=1):
    """One more (or `by` more) load, store or deletion of Name node `name` in `counts`."""
    entry = counts.get(name.id)
    if entry is None:
        entry = counts[name.id] = [0, 0, 0]
    entry[_CTX[name.ctx.__class__]] += by


def _assign(targets, value):
    """`targets = value`, a statement ast.unparse can print (it reads the line number)."""
    return ast.Assign(targets, value, lineno=0)


def _copy_tree(node):
    """copy.deepcopy of a syntax tree (nodes and lists copied; leaves shared: constants,
    names, positions, contexts, operators) at a tenth of its cost; the simplifier copies
    every value it prints."""
    if isinstance(node, list):
        return [_copy_tree(item) for item in node]
    new = _shallow_copy(node)
    for field in _fold_uses.CHILD_FIELDS[node.__class__]:
        value = getattr(node, field, None)
        if isinstance(value, (ast.AST, list)):
            setattr(new, field, _copy_tree(value))
    return new


def _shallow_copy(node):
    """copy.copy of a node (its fields shared), without copy's generic protocol."""
    new = node.__class__.__new__(node.__class__)
    new.__dict__.update(node.__dict__)
    return new


def _const_index(node):
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) is int):
        return -node.operand.value
    return None


def _const_bound(node):
    """A slice bound: an int, None for an omitted one, or GiveUp."""
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return None
    index = _const_index(node)
    if index is None:
        raise GiveUp("slice bound is not a constant")
    return index


def _is_graph_call(node):
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id.startswith("__compiled_fn"))


def _slice_bounds(node):
    """(lower, upper) of a constant slice without a step, or GiveUp."""
    if node.step is not None:
        raise GiveUp("slice with a step")
    return _const_bound(node.lower), _const_bound(node.upper)


class _Simplifier:
    def __init__(self, fn, local_names, params, graph_outputs):
        self.fn = fn
        self.nested = set()  # names used in a nested scope
        self.counts = _names(fn, self.nested)
        self.local_names = set(local_names)
        self.params = set(params)
        self.graph_outputs = graph_outputs
        self.next_ident = 0
        # (the names asked about below are all in the tree: counted, each classified once)
        self.temps = {name for name in self.counts if _TEMP.match(name)}
        self.dead = {name for name, (loads, _, _) in self.counts.items() if loads == 0 and self._dynamo_tmp(name)}
        used = [int(n[len("__temp_"):]) for n in self.temps]
        self.next_temp = max(used, default=0) + 1
        self.graph_out = set()  # graph_out_<n> names bound by a compiled graph call
        self.graph_calls = set()  # temporaries bound by a compiled graph call
        self.folded = set()  # Dynamo's tmp_<n> bound to a pure value, read through `env`
        self.depth = 0  # > 0 while rewriting inside an expression
        self.conditional = 0  # > 0 inside an operand that may not be evaluated
        for name, (loads, stores, dels) in self.counts.items():
            if name in self.temps and stores != 1:
                raise GiveUp("%s is bound more than once" % name)
        if any(name in self.temps or self._dead(name) for name in self.nested):
            raise GiveUp("a temporary is used in a nested scope")

    # -- what a name is
    def _dynamo_tmp(self, name):
        """One of Dynamo's own temporaries (`tmp_<n>`, a local that is no parameter)."""
        return bool(_DYNAMO_TMP.match(name)) and name not in self.params and name in self.local_names

    def _dead(self, name):
        """Dynamo's own temporaries that nothing reads: their stores can go."""
        return name in self.dead

    def _ours(self, name):
        """A name whose stores this pass may drop: read only where the model follows it."""
        return name in self.temps or self._dead(name) or self._foldable(name)

    def _foldable(self, name):
        """Dynamo's own temporary bound once, never deleted, read only in this scope: bound to
        a pure value, it can be read through `env` (its store dropped) like a temporary."""
        if not self._dynamo_tmp(name):
            return False
        loads, stores, dels = self.counts.get(name, (0, 0, 0))
        return stores == 1 and dels == 0 and name not in self.nested

    def _stable(self, name, state):
        """Reading `name` here and anywhere later gives the same object, without raising."""
        loads, stores, dels = self.counts.get(name, (0, 0, 0))
        if name in self.local_names:
            if name in self.params:
                return stores == 0 and dels == 0
            return stores == 1 and name in state.bound and (dels == 0 or name in self.graph_out)
        return bool(_fold_uses.DYNAMO_GLOBAL.match(name) or _fold_uses.NAMED_CONST.fullmatch(name))  # (a named constant is a constant)

    # -- values
    def new_list(self, state, items):
        ident = self.next_ident
        self.next_ident += 1
        state.heap[ident] = items
        return _List(ident)

    def items(self, state, value):
        if value.ident in state.gone:
            raise GiveUp("a list is used after it was passed on")
        return state.heap[value.ident]

    def value(self, node, state, out):
        """The value of `node`: _Atom, _List, or an expression (evaluated here, printed as is)."""
        cls = node.__class__
        if cls is ast.Name:
            if node.id in self.temps or node.id in self.folded:
                if node.id not in state.env:
                    raise GiveUp("%s read before it is bound" % node.id)
                found = state.env[node.id]
                if isinstance(found, _List):
                    self.items(state, found)
                return found
            if self._stable(node.id, state):
                return _Atom(node)
            return node
        if cls is ast.Constant:
            return _Atom(node)
        if cls is ast.Tuple and isinstance(node.ctx, ast.Load):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                return self.rewrite(node, state, out)
            elts = [self.value(e, state, out) for e in node.elts]
            if all(isinstance(e, _Atom) for e in elts):
                return _Atom(ast.Tuple([e.expr for e in elts], ast.Load()))
            return ast.Tuple([self.expr(e, state) for e in elts], ast.Load())
        if cls is ast.List and isinstance(node.ctx, ast.Load):
            items = []
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    inner = self.value(elt.value, state, out)
                    if not isinstance(inner, _List):
                        raise GiveUp("star-unpacking of something that is not a known list")
                    items.extend(self.items(state, inner))
                else:
                    items.append(self.held(self.value(elt, state, out), out))
            return self.new_list(state, items)
        if cls is ast.Subscript and isinstance(node.ctx, ast.Load):
            if (self.graph_outputs and isinstance(node.value, ast.Name) and node.value.id in self.graph_out
                    and _const_index(node.slice) is not None and node.value.id in state.bound):
                return _Atom(node)
            base = self.value(node.value, state, out)
            if isinstance(base, _List):
                items = self.items(state, base)
                if isinstance(node.slice, ast.Slice):
                    lo, hi = _slice_bounds(node.slice)
                    return self.new_list(state, items[lo:hi])
                index = _const_index(node.slice)
                if index is None or not -len(items) <= index < len(items):
                    raise GiveUp("index of a known list is not a constant in range")
                return items[index]
            return self.rewrite(node, state, out, base=base)
        return self.rewrite(node, state, out)

    def held(self, value, out):
        """A value as an item of a list: an expression is evaluated now, into a new temporary."""
        if isinstance(value, (_Atom, _List)):
            return value
        if self.depth:
            # inside an expression, evaluating it first would move it before its left neighbours
            raise GiveUp("an item of a list built inside an expression")
        name = "__temp_%d" % self.next_temp
        self.next_temp += 1
        out.append(_assign([ast.Name(name, ast.Store())], value))
        return _Atom(ast.Name(name, ast.Load()))

    def expr(self, value, state):
        """Print a value: an atom's expression, a list as a display of its items (it leaves)."""
        if isinstance(value, _Atom):
            return _copy_tree(value.expr)
        if isinstance(value, _List):
            items = self.items(state, value)
            state.gone.add(value.ident)
            return ast.List([self.expr(v, state) for v in items], ast.Load())
        return value

    def rewrite(self, node, state, out, base=None):
        """`node` with temporaries replaced by their values; star-unpacked known lists spread."""
        self.depth += 1
        try:
            return self._rewrite(node, state, out, base)
        finally:
            self.depth -= 1

    def _rewrite(self, node, state, out, base):
        cls = node.__class__
        if cls is ast.Subscript and base is not None:
            return ast.Subscript(self.expr(base, state), self.operand(node.slice, state, out), node.ctx)
        if cls is ast.NamedExpr and self._dead(node.target.id):
            value = self.operand(node.value, state, out)
            if not self.conditional:
                state.bound.add(node.target.id)
            return value
        if cls is ast.BoolOp or cls is ast.IfExp:
            self.conditional += 1  # operands after the first may not run
            try:
                return self._generic(node, state, out)
            finally:
                self.conditional -= 1
        if cls is ast.Name:
            return self.operand(node, state, out)
        if cls in _SCOPES:  # (a def or class is no expression)
            return node  # a scope of its own, evaluated later or apart: nothing of ours inside (checked up front)
        if cls is ast.Call:
            func = self.operand(node.func, state, out)
            args = []
            for arg in node.args:
                if isinstance(arg, ast.Starred):
                    inner = self.value(arg.value, state, out)
                    if isinstance(inner, _List):
                        args.extend(self.expr(v, state) for v in self.items(state, inner))
                        state.gone.add(inner.ident)
                        continue
                    args.append(ast.Starred(self.expr(inner, state), ast.Load()))
                else:
                    args.append(self.operand(arg, state, out))
            keywords = [ast.keyword(k.arg, self.operand(k.value, state, out)) for k in node.keywords]
            return ast.Call(func, args, keywords)
        return self._generic(node, state, out)

    def _generic(self, node, state, out):
        new = _shallow_copy(node)
        for field in _fold_uses.CHILD_FIELDS[node.__class__]:  # (the others hold nothing of ours)
            old = getattr(node, field, None)
            if isinstance(old, ast.AST):
                setattr(new, field, self.operand(old, state, out))
            elif isinstance(old, list):
                setattr(new, field, [self.operand(x, state, out) if isinstance(x, ast.AST) else x for x in old])
        return new

    def operand(self, node, state, out):
        """A sub-node of an expression, rewritten."""
        if isinstance(node, ast.Starred):
            return ast.Starred(self.operand(node.value, state, out), node.ctx)
        if isinstance(node, ast.expr) and not isinstance(node, ast.Slice):
            return self.expr(self.value(node, state, out), state)
        if isinstance(node, ast.Slice):
            return self.rewrite(node, state, out)
        for sub in _fold_uses.walk(node):  # keywords, comprehensions, arguments: nothing of ours inside
            if isinstance(sub, ast.Name) and self._ours(sub.id):
                raise GiveUp("a temporary inside %s" % type(node).__name__)
        return node

    # -- statements
    def body(self, stmts, state):
        """(new statements, state after them or None when they never fall through)."""
        out = []
        for i, stmt in enumerate(stmts):
            mark = len(out)
            state = self.stmt(stmt, state, out)
            for new in out[mark:]:  # where it came from, for the line map (see simplify_mapped)
                if not hasattr(new, "origin"):
                    new.origin = stmt.lineno
            if state is None:
                # never runs, but may still matter (a `yield` makes a generator): kept as it is
                rest = stmts[i + 1:]
                if any(isinstance(n, ast.Name) and self._ours(n.id)
                       for s in rest for n in _fold_uses.walk(s)):
                    raise GiveUp("unreachable code reads a temporary")
                return out + rest, None
        return out, state

    def stmt(self, stmt, state, out):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            return self.assign(stmt.targets[0], stmt.value, state, out)
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            return self.chained_assign(stmt.targets, stmt.value, state, out)
        if isinstance(stmt, ast.Expr):
            call = stmt.value
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and self.known_list(call.func.value, state) is not None):
                return self.list_method(call, state, out)
            if isinstance(stmt.value, ast.Name) and stmt.value.id in self.temps:
                self.value(stmt.value, state, out)  # reading a temporary: no effect
                return state
            out.append(ast.Expr(self.expr(self.value(stmt.value, state, out), state)))
            return state
        if isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                self.delete(target, state, out)
            return state
        if isinstance(stmt, ast.Return):
            value = None if stmt.value is None else self.expr(self.value(stmt.value, state, out), state)
            out.append(ast.Return(value))
            return None
        if isinstance(stmt, ast.If):
            return self.branch(stmt, state, out)
        if isinstance(stmt, ast.Try) and stmt.finalbody and not stmt.handlers and not stmt.orelse:
            return self.try_finally(stmt, state, out)
        if isinstance(stmt, (ast.Pass, ast.Global, ast.Nonlocal)):
            out.append(stmt)
            return state
        raise GiveUp("%s is outside the model" % type(stmt).__name__)

    def assign(self, target, value_node, state, out):
        if isinstance(target, ast.Name):
            name = target.id
            value = self.value(value_node, state, out)
            if name in self.temps:
                if not isinstance(value, (_Atom, _List)):
                    out.append(_assign([target], value))
                    value = _Atom(ast.Name(name, ast.Load()))
                    if _is_graph_call(value_node):
                        self.graph_calls.add(name)
                state.env[name] = value
            elif self._dead(name):
                if not isinstance(value, (_Atom, _List)):
                    out.append(ast.Expr(value))
            elif self._foldable(name) and isinstance(value, _Atom):
                self.folded.add(name)
                state.env[name] = value
            else:
                out.append(_assign([target], self.expr(value, state)))
                from_graph = _is_graph_call(value_node) or (
                    isinstance(value_node, ast.Name) and value_node.id in self.graph_calls)
                if self.graph_outputs and _GRAPH_OUT.match(name) and from_graph and self.counts[name][1] == 1:
                    self.graph_out.add(name)
            state.bound.add(name)
            return state
        if isinstance(target, ast.Subscript):
            base = self.value(target.value, state, out)
            if isinstance(base, _List):
                return self.store_item(base, target.slice, value_node, state, out)
            rhs = self.expr(self.value(value_node, state, out), state)
            new_target = ast.Subscript(self.expr(base, state), self.rewrite(target.slice, state, out), ast.Store())
            out.append(_assign([new_target], rhs))
            return state
        if isinstance(target, (ast.Attribute,)):
            rhs = self.expr(self.value(value_node, state, out), state)
            out.append(_assign([ast.Attribute(self.expr(self.value(target.value, state, out), state),
                                              target.attr, ast.Store())], rhs))
            return state
        if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            # unpacking (torch <= 2.7 unpacks a graph's outputs so): printed as it is, each
            # temporary among its targets then read by name
            out.append(_assign([target], self.expr(self.value(value_node, state, out), state)))
            for element in target.elts:
                if element.id in self.temps:
                    state.env[element.id] = _Atom(ast.Name(element.id, ast.Load()))
                state.bound.add(element.id)
            return state
        raise GiveUp("assignment to %s" % type(target).__name__)

    def chained_assign(self, targets, value_node, state, out):
        """`a = b = v` (torch <= 2.7 keeps module attributes so): v once, then each name."""
        value = self.value(value_node, state, out)
        names = [t.id for t in targets]
        if isinstance(value, _List):
            if not all(n in self.temps for n in names):
                raise GiveUp("a known list stored into a variable and more")
            for name in names:
                state.env[name] = value
            return state
        if isinstance(value, _Atom):
            for target in targets:  # (a pure value: each store as if it stood alone)
                self.assign(target, value.expr, state, out)
            return state
        kept = [t for t in targets if not self._dead(t.id)]
        if kept:
            out.append(_assign(kept, value))
        else:
            out.append(ast.Expr(value))
        for name in names:
            if name in self.temps:
                state.env[name] = _Atom(ast.Name(name, ast.Load()))
            state.bound.add(name)
        return state

    def store_item(self, base, index_node, value_node, state, out):
        # Python evaluates the value first, then the list and the index.
        value = self.value(value_node, state, out)
        items = self.items(state, base)
        if isinstance(index_node, ast.Slice):
            if not isinstance(value, _List):
                raise GiveUp("slice assignment of something that is not a known list")
            lo, hi = _slice_bounds(index_node)
            items[lo:hi] = list(self.items(state, value))
            return state
        index = _const_index(index_node)
        if index is None or not -len(items) <= index < len(items):
            raise GiveUp("store into a known list at an unknown index")
        items[index] = self.held(value, out)
        return state

    def known_list(self, node, state):
        """The _List `node` denotes (a temporary, or a constant index into a known list), or None."""
        if isinstance(node, ast.Name):
            found = state.env.get(node.id) if node.id in self.temps else None
            return found if isinstance(found, _List) else None
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
            base, index = self.known_list(node.value, state), _const_index(node.slice)
            if base is None or index is None or base.ident in state.gone:
                return None
            items = state.heap[base.ident]
            if -len(items) <= index < len(items) and isinstance(items[index], _List):
                return items[index]
        return None

    def list_method(self, call, state, out):
        base = self.value(call.func.value, state, out)
        if not isinstance(base, _List) or call.keywords or len(call.args) != 1:
            raise GiveUp("a method call on a temporary")
        arg = self.value(call.args[0], state, out)
        items = self.items(state, base)
        if call.func.attr == "extend" and isinstance(arg, _List):
            items.extend(self.items(state, arg))
        elif call.func.attr == "append":
            items.append(self.held(arg, out))
        else:
            raise GiveUp("list method %s" % call.func.attr)
        return state

    def delete(self, target, state, out):
        if isinstance(target, ast.Name):
            name = target.id
            if name in self.temps:
                if name not in state.env:
                    raise GiveUp("del of an unbound temporary")
                del state.env[name]
                return
            if name in self.graph_out and name in state.bound:
                return  # the tuple stays alive until the function returns (see the module's doc)
            if self._dead(name) and name in state.bound:
                state.bound.discard(name)
                return
            out.append(ast.Delete([target]))
            state.bound.discard(name)
            return
        if isinstance(target, ast.Subscript):
            base = self.value(target.value, state, out)
            if isinstance(base, _List):
                items = self.items(state, base)
                if isinstance(target.slice, ast.Slice):
                    lo, hi = _slice_bounds(target.slice)
                    del items[lo:hi]
                    return
                index = _const_index(target.slice)
                if index is None or not -len(items) <= index < len(items):
                    raise GiveUp("del at an unknown index of a known list")
                del items[index]
                return
            out.append(ast.Delete([ast.Subscript(self.expr(base, state), self.rewrite(target.slice, state, out),
                                                 ast.Del())]))
            return
        raise GiveUp("del of %s" % type(target).__name__)

    def branch(self, stmt, state, out):
        test = self.value(stmt.test, state, out)
        if isinstance(test, _List):
            raise GiveUp("truth of a known list")
        test = self.expr(test, state)
        then_out, then_state = self.body(stmt.body, state.clone())
        else_out, else_state = self.body(stmt.orelse, state.clone())
        for branch_state in (then_state, else_state):
            if branch_state is not None:
                _forget_branch_temps(state, branch_state)
        out.append(ast.If(test, then_out or [ast.Pass()], else_out))
        if then_state is None:
            return else_state
        if else_state is None:
            return then_state
        if not then_state.same(else_state):
            raise GiveUp("the branches leave the temporaries in different states")
        return then_state


    def try_finally(self, stmt, state, out):
        """`try: ... finally: ...`: Dynamo's code around a graph break inside a with block.

        The body runs in the model like any code: what it prints keeps its place
        in the try, and what the model folds (lists, pure values) touches nothing
        a raise could show, for a raise leaves the function through the finally
        block.  That block may run after any statement of the body, so it must
        not read the model's values at all (a temporary, a known list), nor
        leave the function another way."""
        for node in _fold_uses.walk(ast.Module(stmt.finalbody, [])):
            if isinstance(node, ast.Name) and self._ours(node.id):
                raise GiveUp("a finally block reads a temporary")
            if isinstance(node, (ast.Return, ast.Break, ast.Continue)):
                raise GiveUp("a finally block that leaves the function")
        body_out, after = self.body(stmt.body, state)
        final_out, final_state = self.body(stmt.finalbody, after if after is not None else state)
        out.append(ast.Try(body_out or [ast.Pass()], [], [], final_out or [ast.Pass()]))
        return None if after is None else final_state


def _forget_branch_temps(entry, state):
    """A temporary first bound inside a branch is read only there (each is bound once; a
    read after the join finds it unbound and gives up): forget it, and the lists that
    only such temporaries held, before the branches' states are compared."""
    for name in [n for n in state.env if n not in entry.env]:
        del state.env[name]
        if name not in entry.bound:
            state.bound.discard(name)
    live, todo = set(), list(state.env.values())
    for ident, items in state.heap.items():
        if ident in entry.heap:
            todo.extend(items)
    while todo:
        value = todo.pop()
        if isinstance(value, _List) and value.ident not in live:
            live.add(value.ident)
            todo.extend(state.heap.get(value.ident, ()))
    for ident in [i for i in state.heap if i not in entry.heap and i not in live]:
        del state.heap[ident]
        state.gone.discard(ident)


class _Printed:
    """What the passes after the symbolic run read of the function they rewrite, from one
    walk (ast.walk's order) and kept up to date by them: `counts` ({name: [loads, stores,
    deletes]}, as _names gives), the Name nodes, and the calls of a name, in walk order.
    The walk also turns `not a is b` into `a is not b` and `not a in b` into `a not in b`
    (the same test, as people write it), which no later pass tells apart."""

    def __init__(self, fn):
        self.counts, self.names, self.calls = {}, [], []
        nots = set()  # (ids of) the UnaryOp nodes of a `not`
        for node in _fold_uses.walk(fn):
            cls = node.__class__
            if cls is ast.Name:
                _count(self.counts, node)
                self.names.append(node)
            elif cls is ast.Call and node.func.__class__ is ast.Name:
                self.calls.append(node)
            elif cls is ast.UnaryOp and isinstance(node.op, ast.Not):
                nots.add(id(node))
        if nots:
            _negate_tests(fn, nots)

    def add(self, node, by=1):
        """Count Name `node` (once more, or `by` times)."""
        _count(self.counts, node, by)
        if by > 0:
            self.names.append(node)
        elif not any(self.counts[node.id]):
            del self.counts[node.id]


def _negate_tests(fn, nots):
    """In `fn`, each `not a is b` -> `a is not b`, `not a in b` -> `a not in b` (`nots`: the
    ids of its `not` nodes).  The comparison node itself takes the `not`'s place, so the
    Name nodes and calls counted stay the tree's."""
    for parent in _fold_uses.walk(fn):
        for field in _fold_uses.CHILD_FIELDS[parent.__class__]:
            value = getattr(parent, field, None)
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if id(item) in nots:
                        value[i] = _negated(item)
            elif id(value) in nots:
                setattr(parent, field, _negated(value))


def _negated(node):
    """`not a is b` -> `a is not b`, `not a in b` -> `a not in b`; another `not` as it is."""
    test = node.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.In)):
        test.ops = [ast.IsNot() if isinstance(test.ops[0], ast.Is) else ast.NotIn()]
        return test
    return node


def _name_graph_outputs(fn, names_for, local_names, params, printed):
    """Bind `graph_out_<n>[k]` to the variable it becomes in the resume functions.

    `names_for(callee, position)` gives the parameter name of a resume function.
    A name is used only when it is a plain local of this code that the body
    never mentions, for one item everywhere, of a graph output bound at the
    top level of the body (the binding goes right after it).
    """
    counts = printed.counts
    top = {stmt.targets[0].id: i for i, stmt in enumerate(fn.body)
           if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
           and _GRAPH_OUT.match(stmt.targets[0].id)}
    chosen, refused = {}, set()  # (graph name, index) -> variable
    for node in printed.calls:
        if not _fold_uses.RESUME_NAME.match(node.func.id):
            continue
        for position, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                break
            if not (isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Name) and arg.value.id in top
                    and _const_index(arg.slice) is not None):
                continue
            key = (arg.value.id, _const_index(arg.slice))
            name = names_for(node.func.id, position)
            usable = (name and name in local_names and name not in params and name not in counts
                      and chosen.get(key, name) == name
                      and all(k == key for k, v in chosen.items() if v == name))
            if usable:
                chosen[key] = name
            else:
                refused.add(key)
    chosen = {k: v for k, v in chosen.items() if k not in refused}
    if not chosen:
        return

    def renamed(node):
        """The variable for an item of a graph output read, or None."""
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                and isinstance(node.ctx, ast.Load)):
            name = chosen.get((node.value.id, _const_index(node.slice)))
            if name:
                printed.add(node.value, -1)
                new = ast.copy_location(ast.Name(name, ast.Load()), node)
                printed.add(new)
                return new
        return None

    for parent in _fold_uses.walk(fn):  # (a renamed read holds no other one)
        for field in _fold_uses.CHILD_FIELDS[parent.__class__]:
            value = getattr(parent, field, None)
            if isinstance(value, list):
                for i, item in enumerate(value):
                    value[i] = renamed(item) or item
            else:
                new = renamed(value)
                if new is not None:
                    setattr(parent, field, new)
    for graph, at in sorted(top.items(), key=lambda kv: -kv[1]):
        binds = [_assign([ast.Name(var, ast.Store())],
                         ast.Subscript(ast.Name(graph, ast.Load()), ast.Constant(index), ast.Load()))
                 for (g, index), var in sorted(chosen.items(), key=lambda kv: kv[0][1]) if g == graph]
        for bind in binds:
            printed.add(bind.targets[0])
            printed.add(bind.value.value)
        fn.body[at + 1:at + 1] = binds


def _name_graph_inputs(fn, graph_params, printed):
    """Name a temporary passed to a compiled graph after that graph's input.

    `graph_params(callee)` gives the names of a `__compiled_fn_*` graph's inputs
    (Dynamo's placeholder names, as the graph file shows them).  A temporary is
    renamed when it is bound once, read only as that argument, and the name is
    an identifier the function does not use (so it shadows nothing).
    """
    counts = printed.counts
    renames, taken = {}, set()
    for node in printed.calls:
        if not _is_graph_call(node):
            continue
        params = graph_params(node.func.id) or ()
        for arg, param in zip(node.args, params):
            if isinstance(arg, ast.Starred):
                break
            if (isinstance(arg, ast.Name) and _TEMP.match(arg.id) and counts.get(arg.id) == [1, 1, 0]
                    and isinstance(param, str) and param.isidentifier() and not keyword.iskeyword(param)
                    and param not in counts and param not in taken):
                renames[arg.id] = param
                taken.add(param)
    if not renames:
        return
    for node in printed.names:
        if node.id in renames:
            node.id = renames[node.id]
    for old, new in renames.items():
        counts[new] = counts.pop(old)


def _conditional_bindings(fn):
    """`X = C` then `if T: X = F` (C a constant) at the top of the body -> `X = F if T else C`.

    Exact: the same expressions run in the same order, and X holds C in between
    only where nothing can read it: T and F do not name X, and a raise in them
    leaves the function (the top of its body is inside no `try`).  Torch 2.15's
    profiler markers take this shape."""
    body = fn.body
    for at in range(len(body) - 2, -1, -1):
        first, second = body[at], body[at + 1]
        if not (_fold_uses.constant_store(first)
                and isinstance(second, ast.If) and not second.orelse and len(second.body) == 1):
            continue
        inner, name = second.body[0], first.targets[0].id
        if not (_fold_uses.assigns_a_name(inner) and inner.targets[0].id == name):
            continue
        if any(isinstance(n, ast.Name) and n.id == name for n in _fold_uses.walk(second.test)) or any(
                isinstance(n, ast.Name) and n.id == name for n in _fold_uses.walk(inner.value)):
            continue
        merged = _assign([first.targets[0]], ast.IfExp(second.test, inner.value, first.value))
        merged.origin = getattr(first, "origin", None)
        body[at:at + 2] = [merged]


def _comments(source):
    """The comments of `source` that name constants (`# _depyf_const_<k>: <repr>`), or None when
    it has another comment (a note the printer placed that ast.unparse would lose)."""
    found = []
    if "#" not in source:
        return found
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                first = _fold_uses.NAMED_CONST.match(tok.string[1:].strip())
                if first is None:
                    return None
                found.append((first.group(0), tok.string))
    except (tokenize.TokenError, SyntaxError):
        return None
    return found


def _reattach(text, comments):
    """Each named constant's comment at the end of the first line using that constant, as printed."""
    lines = text.split("\n")
    for name, comment in comments:
        for i, line in enumerate(lines):
            if re.search(r"\b%s\b" % name, line):
                lines[i] = line + "  " + comment
                break
    return "\n".join(lines)


def simplify(source, local_names=(), params=(), graph_outputs=False, resume_params=None, graph_params=None):
    """The simplified `def` of decompiled `source`, or None when it leaves the model.

    `local_names`: the code's fast locals (co_varnames); `params`: its
    parameters.  With graph_outputs (Dynamo's code), `resume_params(name)`
    and `graph_params(name)`: the parameter names of a resume function and the
    input names of a compiled graph bound to global `name`, or None; they name
    the values passed to them.
    """
    mapped = simplify_mapped(source, local_names, params, graph_outputs, resume_params, graph_params)
    return mapped[0] if mapped else None


def simplify_mapped(source, local_names=(), params=(), graph_outputs=False, resume_params=None,
                    graph_params=None):
    """(simplified text, line_of) or None, as simplify(); `line_of(line)` is the line of the
    simplified text that does what line `line` of `source` did (a statement folded away
    goes to the next one that remains)."""
    if not hasattr(ast, "unparse"):
        return None  # (3.8)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(defs) != 1 or len(tree.body) != 1:
        return None
    fn = defs[0]
    flat = _one_state.flatten(fn)
    if flat is not None:  # (its note says what is no longer printed: the machine)
        fn.body = flat
        source = "\n".join("" if _one_state.NOTE.match(line) else line for line in source.split("\n"))
    comments = _comments(source)
    if comments is None:
        return None  # (a comment ast.unparse would lose)
    try:
        simplifier = _Simplifier(fn, local_names, params, graph_outputs)
        state = _State()
        state.bound |= set(params)
        body, _end = simplifier.body(fn.body, state)
    except (GiveUp, RecursionError):
        return None
    fn.body = body or [ast.Pass()]
    printed = _Printed(fn)
    if graph_outputs and resume_params is not None:
        def names_for(callee, position):
            names = resume_params(callee)
            return names[position] if names and position < len(names) else None
        _name_graph_outputs(fn, names_for, set(local_names), set(params), printed)
    if graph_outputs and graph_params is not None:
        _name_graph_inputs(fn, graph_params, printed)
    _fold_uses.fold_single_uses(fn, params, graph_outputs, printed.counts)
    _conditional_bindings(fn)
    text = _reattach(_annotate(ast.unparse(tree)), comments) + "\n"
    return text, _line_map(fn, text)


def _line_map(fn, text):
    """line_of for simplify_mapped, from `fn`'s statements (with their `origin`) and the same
    statements as printed in `text` (same shape, in the same walk order).  Only Dynamo's
    code that runs as it is, not recompiled from the text, needs it: made on the first call."""
    def_line, made = fn.lineno, []

    def make():
        new_line = {}
        mine = [n for n in _fold_uses.walk(fn) if isinstance(n, ast.stmt)]
        theirs = [n for n in _fold_uses.walk(ast.parse(text).body[0]) if isinstance(n, ast.stmt)]
        for old, new in zip(mine, theirs):
            origin = getattr(old, "origin", None)
            if origin is not None and (origin not in new_line or new.lineno < new_line[origin]):
                new_line[origin] = new.lineno
        made.extend((new_line, sorted(new_line)))

    def line_of(line):
        if not made:
            make()
        new_line, known = made
        if line <= def_line or not known:
            return 1
        later = [k for k in known if k >= line]
        return new_line[later[0]] if later else new_line[known[-1]]

    return line_of


_PREGRAPH = re.compile(r"^(\s*)(\S+\.record_pregraph_bytecode_exit\(\S+\.record_pregraph_bytecode_enter\(\)\))$", re.M)


# (torch >= 2.15 records them only while a profiler runs)
_PREGRAPH_IF_PROFILING = re.compile(
    r"^(\s*)(\w+ = \S+\.record_pregraph_bytecode_enter\(\) if \S+\._is_profiler_enabled else None)$", re.M)


def _annotate(text):
    """A short comment on Dynamo's own bookkeeping lines."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if "record_pregraph_bytecode_e" in line:  # (only its lines can match, and only one of these)
            line = _PREGRAPH.sub(r"\1\2  # Dynamo's profiler markers (no pre-graph code)", line)
            lines[i] = _PREGRAPH_IF_PROFILING.sub(r"\1\2  # Dynamo's profiler markers", line)
    return "\n".join(lines)
