"""prepare_debug(clean_wild_fx_code=False): keep the FX code the dump does not already hold.

The original depyf wrote the code of every FX graph torch executed into
`fx_graph_code_<md5>_<k>.py` and, unless told not to clean, deleted those files
at the end: graphs that are a stage of a compiled function have their own
`__compiled_fn_*` files, and the rest ("wild" ones: graphs torch builds for
itself, or that the program builds with torch.fx) are rarely of interest.  Here
they are written only when asked for, and only the wild ones.
"""

import contextlib
import hashlib
import weakref

from depyf import _torch_internals as _ti

_HEADER = ("# FX code torch generated inside prepare_debug that is no stage of a compiled function\n"
           "# (kept because prepare_debug was given clean_wild_fx_code=False).\n")


@contextlib.contextmanager
def kept(dd):
    """While active, note the code of every FX graph torch (re)generates; at exit write
    into dump directory `dd` those that are no stage of a compiled function."""
    seen = {}  # FX code -> weak references to the graph modules that had it
    restore = _ti.watch_every_recompile(lambda gm: _note(seen, gm))
    try:
        yield
    finally:
        restore()
        # (the session, left before this, has printed every graph text it kept to print later)
        in_files = [body for _title, _note_text, body in dd.graph_texts.values() if isinstance(body, str)]
        for code, refs in seen.items():
            owned = any(gm is not None and dd.runs_here(gm) for gm in (r() for r in refs))
            if not owned and not any(code in body for body in in_files):
                digest = hashlib.md5(code.encode("utf-8")).hexdigest()
                dd.write("fx_graph_code_%s_0.py" % digest, _HEADER + code)


def _note(seen, gm):
    refs = seen.setdefault(_ti.graph_code(gm), [])
    if not any(r() is gm for r in refs):
        refs.append(weakref.ref(gm))
