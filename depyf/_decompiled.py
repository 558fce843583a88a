"""Decompiling Dynamo's code objects for the torch layer, never failing the user.

When the decompiler cannot handle a code object, what we show instead is a
clear comment and the disassembly; callers log one warning and go on.
"""

import dis
import io
import keyword
import os
import re
import tokenize


class Decompiled:
    """The outcome for one code object: `source` (a `def`), `linemap` and `named` (the
    objects `source` names `_depyf_const_<k>`, k-th at k), or `error`."""

    def __init__(self, source=None, linemap=None, error=None, named=()):
        self.source = source
        self.linemap = linemap or []
        self.error = error
        self.named = named

    @property
    def ok(self):
        return self.error is None


def decompile(code, name=None, indent=4):
    """Decompile `code` with its offset -> line map; failures become Decompiled(error=...).

    `name`: the name of the printed def (else the code's own, made valid:
    Dynamo's code for a lambda is `<lambda>`); `indent`: spaces per level.

    The output is validated against the bytecode taking global reads as
    stable: the globals of Dynamo's code are the graphs, resume functions and
    modules Dynamo binds before it runs, so the printed code may read them
    where the user's function did (`__compiled_fn_1(a, b)`) rather than
    where Dynamo's bytecode pushes them."""
    try:
        from depyf import _core
        source, linemap, named = _core.decompile(code, indent=indent, linemap=True, stable_globals=True,
                                                 def_name=name or def_name(code.co_name), named=True)
    except Exception as exc:  # the decompiler's failure is reported, never raised
        return Decompiled(error="%s: %s" % (type(exc).__name__, exc))
    if not isinstance(source, str):
        return Decompiled(error="the decompiler returned %s" % type(source).__name__)
    return Decompiled(source, [(int(off), int(line)) for off, line in linemap], named=tuple(named))


def structured(source):
    """True when decompiled `source` is the structured form, which the decompiler prints
    only once translation validation proved it equivalent to the bytecode (the state
    machine, exact by construction, says so in a comment)."""
    return "equivalent state machine over the bytecode" not in source


_NAMED_CONST = re.compile(r"_depyf_const_(\d+)")


def bind_named(source, named, scope):
    """`source`, whose `_depyf_const_<k>` names the k-th object of `named` (constants with
    no literal form), made runnable in `scope` (the globals it will run with):
    (text, bindings) where `text` renames each constant to a `_depyf_const_<j>` that
    `scope` has free or already bound to that very object, and `bindings` (name ->
    object) is what the caller puts into `scope` before the code runs.  The comments
    that say what each constant holds follow the renaming.  None when `source` names
    a constant that `named` lacks, or there is no scope to bind in."""
    if "_depyf_const_" not in source:  # (the common case: nothing to tokenize)
        return source, {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    used = sorted({int(m.group(1)) for t in tokens if t.type == tokenize.NAME
                   for m in [_NAMED_CONST.fullmatch(t.string)] if m})
    if not used:
        return source, {}
    if scope is None or used[-1] >= len(named) or any(named[k] is None for k in used):
        return None
    renames, bindings, j = {}, {}, 0
    for k in used:
        while ("_depyf_const_%d" % j in bindings or
               scope.get("_depyf_const_%d" % j, named[k]) is not named[k]):
            j += 1
        renames["_depyf_const_%d" % k] = "_depyf_const_%d" % j
        bindings["_depyf_const_%d" % j] = named[k]
    return rename_names(source, renames, tokens, in_comments=_NAMED_CONST), bindings


def rename_names(source, renames, tokens=None, in_comments=None):
    """`source` with each name token that is a key of `renames` replaced by its value
    (any text on the same line); `in_comments`, a pattern, also renames its matches in
    comments.  `tokens`: those of `source`, when the caller has them."""
    if tokens is None:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines = source.split("\n")
    for t in reversed(tokens):  # (right to left: earlier columns stay valid)
        if t.type == tokenize.NAME and t.string in renames:
            new = renames[t.string]
        elif t.type == tokenize.COMMENT and in_comments is not None:
            new = in_comments.sub(lambda m: renames.get(m.group(0), m.group(0)), t.string)
        else:
            continue
        (row, col), (_, end) = t.start, t.end
        lines[row - 1] = lines[row - 1][:col] + new + lines[row - 1][end:]
    return "\n".join(lines)


# The temporaries the core invents: `__temp_<n>` in structured code, `<p>t<n>` in the state
# machine (fallback.c: <p> is `__`, `___`, ..., `__dp_`, `__dp__`, what no name of the code starts with).
_TEMP = re.compile(r"__temp_\d+|(?:_{2,}|__dp__?)t\d+")


def rename_temps(source, prefix, code=None):
    """`source` with the temporaries the decompiler invented renamed `<prefix><n>`, n = 1,
    2, ... in order of first use (numbers that would make a name the program has are
    skipped).  With `code` (what `source` was decompiled from), a name that `code` or a
    code object nested in it has is the program's own and stays; without it (a .pyc
    file's module) every such name is taken for a temporary.  ValueError when `prefix`
    does not start identifiers."""
    if prefix == "__temp_":
        return source
    if not isinstance(prefix, str) or not (prefix + "0").isidentifier() or keyword.iskeyword(prefix + "0"):
        raise ValueError("temp_prefix must start an identifier, not %r" % (prefix,))
    if _TEMP.search(source) is None:  # (no temporary: nothing to tokenize)
        return source
    taken = names_in(code) if code is not None else set()
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    names = [t.string for t in tokens if t.type == tokenize.NAME]
    temps = [n for n in dict.fromkeys(names) if _TEMP.fullmatch(n) and n not in taken]
    kept = taken | (set(names) - set(temps))
    renames, n = {}, 0
    for temp in temps:
        n += 1
        while prefix + str(n) in kept:
            n += 1
        renames[temp] = prefix + str(n)
    return rename_names(source, renames, tokens)


def names_in(code):
    """Every name `code` and the code objects nested in it use (variables, attributes, globals)."""
    names = set()
    stack = [code]
    while stack:
        c = stack.pop()
        names.update(c.co_varnames, c.co_names, c.co_cellvars, c.co_freevars)
        stack.extend(k for k in c.co_consts if hasattr(k, "co_code"))
    return names


def folds_temporaries():
    """The original depyf's switch, DEPYF_REMOVE_TEMP: "1" (the default) folds the
    temporaries the decompiler invents in Dynamo's code; any other value keeps
    the exact decompilation."""
    return os.environ.get("DEPYF_REMOVE_TEMP", "1") == "1"


def simplify_transformed(code, source, scope=None, graph_inputs=None):
    """The readable form of Dynamo's transformed code `code` (decompiled as `source`):
    (text, line_of) or None (see depyf._simplify.simplify_mapped).

    `scope`, the frame's globals, holds the resume functions whose parameter
    names name the graph's outputs; `graph_inputs(name)`: the input names of the
    graph bound to `name`.  None too when DEPYF_REMOVE_TEMP says not to fold."""
    from depyf import _simplify

    if not folds_temporaries():
        return None

    def resume_params(name):
        target = getattr(scope.get(name), "__code__", None) if scope else None
        return target.co_varnames[:target.co_argcount] if target is not None else None

    try:
        return _simplify.simplify_mapped(source, code.co_varnames, local_names(code), graph_outputs=True,
                                  resume_params=resume_params, graph_params=graph_inputs)
    except Exception:  # a bug in the simplifier must cost readability, never the program
        return None


def def_name(name):
    """A def name for a code object's name (`<lambda>` -> `_lambda`), as the core makes it."""
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    valid = "".join(c for c in name if c.isalnum() or c == "_")
    return valid if valid.isidentifier() and not keyword.iskeyword(valid) else "_" + valid


def disassembly(code):
    """A readable disassembly of `code` and its nested code objects."""
    try:
        from depyf import _core
        text = _core.disasm(code)
        if isinstance(text, str) and text.strip():
            return text
    except Exception:  # fall back to the standard library's listing
        pass
    buf = io.StringIO()
    dis.dis(code, file=buf)
    return buf.getvalue()


def failure_text(code, error, what):
    """Comment + disassembly standing in for source that could not be decompiled."""
    lines = [
        "# depyf could not decompile %s (%s)." % (what, getattr(code, "co_qualname", code.co_name)),
        "# Reason: %s" % " ".join(str(error).split()),
        "# The program runs this bytecode unchanged. Its disassembly:",
        "#",
    ]
    lines += [("#   " + line).rstrip() for line in disassembly(code).splitlines()]
    return "\n".join(lines) + "\n"


def rename_def(source, old, new):
    """Rename the top-level `def old(` of decompiled source to `new`."""
    pattern = re.compile(r"^((?:async\s+)?def\s+)%s(\s*\()" % re.escape(old), re.M)
    return pattern.sub(lambda m: m.group(1) + new + m.group(2), source, count=1)


def signature_of(code):
    """(parameter list, call argument list) texts for a code object's arguments."""
    CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08
    names = code.co_varnames
    npos, nkw = code.co_argcount, code.co_kwonlyargcount
    posonly = getattr(code, "co_posonlyargcount", 0)
    params, call = [], []
    for i, name in enumerate(names[:npos]):
        params.append(name)
        call.append(name)
        if posonly and i + 1 == posonly:
            params.append("/")
    i = npos + nkw
    if code.co_flags & CO_VARARGS:
        params.append("*" + names[i])
        call.append("*" + names[i])
        i += 1
    elif nkw:
        params.append("*")
    for name in names[npos:npos + nkw]:
        params.append(name)
        call.append("%s=%s" % (name, name))
    if code.co_flags & CO_VARKEYWORDS:
        params.append("**" + names[i])
        call.append("**" + names[i])
    return ", ".join(params), ", ".join(call)


def local_names(code):
    """Names of a code object's arguments, in order (the frame locals guards look at)."""
    CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & CO_VARARGS) + bool(code.co_flags & CO_VARKEYWORDS)
    return list(code.co_varnames[:n])
