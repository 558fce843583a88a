"""Explain what torch.compile did to a function, as one readable Python file.

For a compiled function (and every resume function Dynamo made after a graph
break) the explanation holds: each cache entry's guards as a Python function,
with the source line each guard came from; the decompiled transformed code;
the original source; and a dispatcher that checks the guards in order, the
way Dynamo does before running a cache entry.
"""

import inspect
import re
import textwrap
import types

from depyf import _decompiled, _fold_uses
from depyf import _torch_internals as _ti

__all__ = ["dump_src"]

_COMPILED_FN = re.compile(r"__compiled_fn_\d+(?:_[0-9a-f]{8}(?:_[0-9a-f]{4}){3}_[0-9a-f]{12})?$")
RESUME_NAME = _fold_uses.RESUME_NAME
RESUME_CODE_PREFIX = "torch_dynamo_resume_in_"  # the co_name Dynamo gives a resume function's code
_TYPE_SUFFIX = re.compile(r",\s*(type=<class '[^']*'>)$")


def dump_src(fn, module=None):
    """The explained source (guards, transformed code, resume functions) of a compiled function.

    `fn` is what torch.compile returned (function or module) or the original
    function; it must have run at least once so that Dynamo compiled it.  The
    original depyf's form, `dump_src(code, module)`, takes the code object Dynamo
    compiled and the globals it ran with (a dict or a module).
    """
    if isinstance(fn, types.CodeType):
        scope = vars(module) if isinstance(module, types.ModuleType) else module
        return explain_code(fn, scope, OnDemandNames())
    func = _ti.unwrap_compiled(fn)
    return explain_code(func.__code__, func.__globals__, OnDemandNames())


def label_of(name):
    """A file- and identifier-friendly form of a code object's name."""
    return re.sub(r"\W", "_", name)


class OnDemandNames:
    """Names and decompiled text for transformed code, made while explaining.

    The session in depyf._dump subclasses this to reuse the names and files it
    created when Dynamo compiled the code.
    """

    def __init__(self):
        self._counts = {}
        self._known = {}

    def transformed(self, original, code, scope=None):
        """(n, source of `def __transformed_code_<n>_for_<label>`) for one cache entry's code.

        `scope`: the globals the code runs with (they name the graph outputs)."""
        if id(code) not in self._known:
            label = label_of(original.co_name)
            n = self._counts.get(label, 0)
            self._counts[label] = n + 1
            self._known[id(code)] = (n, code)
        n = self._known[id(code)][0]
        result = _decompiled.decompile(code, transformed_name(original, n))
        simple = _decompiled.simplify_transformed(code, result.source, scope) if result.ok else None
        return n, simple[0] if simple is not None else transformed_def(original, code, n, result)

    def graph_note(self, name, scope):
        """Text explaining the compiled graph a transformed code calls as `name`."""
        gm = _ti.graph_module_of(scope.get(name)) if scope else None
        if gm is None:
            return "# %s: a graph compiled by the backend (its code is not Python here).\n" % name
        source = _decompiled.rename_def(textwrap.dedent(_ti.graph_code(gm)).strip() + "\n",
                                        "forward", name)
        return "# %s runs this FX graph (`self` is the GraphModule holding its parameters):\n%s" % (
            name, source)


def transformed_name(original, n):
    return "__transformed_code_%d_for_%s" % (n, label_of(original.co_name))


def transformed_def(original, code, n, result):
    """The def text for transformed code #n of `original` (`result` decompiled it under
    transformed_name), or a stub with the disassembly."""
    name = transformed_name(original, n)
    if result.ok:
        return result.source.rstrip() + "\n"
    params, _call = _decompiled.signature_of(code)
    return "%sdef %s(%s):\n    raise NotImplementedError(%r)\n" % (
        _decompiled.failure_text(code, result.error, "the transformed code of %s" % original.co_name),
        name, params, "depyf could not decompile this code; see its disassembly above")


def explain_code(code, scope, names, seen=None):
    """The explanation of `code` (compiled by Dynamo) and of its resume functions.

    `scope` is the function's globals when known (cache entries carry them too);
    `seen` collects every code object explained ({id: code}).
    """
    out, graph_notes = [], set()
    seen = {} if seen is None else seen
    # (a lambda's code is `<lambda>`: the defs below need a valid name; a resume function that
    # Dynamo compiled as a frame of its own is code Dynamo generated)
    generated = code.co_name.startswith(RESUME_CODE_PREFIX)
    _explain_one(code, _decompiled.def_name(code.co_name), generated, scope, names, out, seen, graph_notes)
    return "\n\n".join(part.rstrip() + "\n" for part in out)


def _explain_one(code, call_name, generated, scope, names, out, seen, graph_notes):
    if id(code) in seen:
        return
    seen[id(code)] = code
    label = label_of(code.co_name)
    entries = _ti.cache_entries(code)
    params, call = _decompiled.signature_of(code)
    pending_resumes, numbers = [], []
    for entry in entries:
        entry_scope = _ti.entry_globals(entry) or scope or {}
        n, transformed = names.transformed(code, entry.code, entry_scope)
        numbers.append(n)
        out.append(guard_function("__guard_%d_for_%s" % (n, label), entry))
        for name in entry.code.co_names:
            if _COMPILED_FN.match(name) and name not in graph_notes:
                graph_notes.add(name)
                out.append(names.graph_note(name, entry_scope))
        out.append(transformed)
        for name in entry.code.co_names:
            if RESUME_NAME.match(name) and callable(entry_scope.get(name)):
                pending_resumes.append((name, entry_scope[name].__code__, entry_scope))
    out.append(original_source(code, call_name, generated))
    out.append(dispatcher(code, call_name, label, params, call, numbers))
    out.append("#============ end of %s ============#" % call_name)
    for name, resume_code, resume_scope in pending_resumes:
        _explain_one(resume_code, name, True, resume_scope, names, out, seen, graph_notes)


def guard_function(name, entry):
    """One cache entry's guards as a Python function of the frame locals L and globals G."""
    lines = ["def %s(L, G, **___kwargs_ignored):" % name, "    __guard_hit = True"]
    for guard in _ti.guards_of(entry):
        text = " ".join(guard.text.split())
        if not text:
            continue
        expr, comment = split_guard(text)
        note = "%s%s" % (guard.kind, (": " + comment.lstrip("# ")) if comment else "")
        if expr is None:
            lines.append("    # %s (checked in C++, not a Python expression): %s" % (guard.kind, text))
        else:
            lines.append("    __guard_hit = __guard_hit and %s  # %s" % (expr, note))
    lines.append("    return __guard_hit")
    return "\n".join(lines) + "\n"


def split_guard(text):
    """(python expression, trailing comment) of a verbose guard; expression None if it is none.

    Dynamo appends comments (`# user line  # file:line`) and, for ID_MATCH,
    `, type=<class '...'>`; neither is part of the check.
    """
    candidates = [len(text)] + [i for i, ch in enumerate(text) if ch == "#"]
    for end in sorted(candidates):
        expr, comment = text[:end].rstrip(), text[end:].strip()
        typed = _TYPE_SUFFIX.search(expr)
        if typed:
            expr, comment = expr[:typed.start()], (typed.group(1) + " " + comment).strip()
        if expr and _is_expression(expr):
            return expr, comment
    return None, text


def _is_expression(text):
    try:
        compile(text, "<guard>", "eval", dont_inherit=True)
        return True
    except (SyntaxError, ValueError):
        return False


def original_source(code, call_name, generated):
    """The user's source of `code`, or the decompiled code of a function Dynamo generated.

    Resume functions carry the file and first line of the function they resume,
    so their source must come from the decompiler, never from that file.
    """
    source = None
    if not generated and code.co_name == call_name:  # (a lambda's source is no def: decompiled)
        try:
            source = textwrap.dedent(inspect.getsource(code))
        except (OSError, TypeError):
            source = None
    if source is None:
        result = _decompiled.decompile(code, call_name)
        if result.ok:
            source = result.source
        else:
            params, _call = _decompiled.signature_of(code)
            source = "%sdef %s(%s):\n    ...\n" % (
                _decompiled.failure_text(code, result.error, "the code Dynamo generated" if generated
                                         else "the original code"), call_name, params)
    else:
        source = _decompiled.rename_def(source, code.co_name, call_name)
    return ("# The code Dynamo started from. When a cache entry below matches, Dynamo runs that\n"
            "# entry's transformed code instead of this.\n" + source)


def dispatcher(code, call_name, label, params, call, numbers):
    """What Dynamo does on a call: check each cache entry's guards in order."""
    lines = ["def transformed_%s(%s):" % (call_name, params)]
    locals_ = ", ".join('"%s": %s' % (name, name) for name in _decompiled.local_names(code))
    lines.append("    __local_dict = {%s}" % locals_)
    lines.append("    __global_dict = globals()")
    for n in numbers:
        lines.append("    if __guard_%d_for_%s(__local_dict, __global_dict):" % (n, label))
        lines.append("        return __transformed_code_%d_for_%s(%s)" % (n, label, call))
    lines.append("    # No cache entry matched: Dynamo compiles this frame again (one more cache entry),")
    lines.append("    # or runs the original code once its recompile limit is reached.")
    lines.append("    return %s(%s)" % (call_name, call))
    return "\n".join(lines) + "\n"
