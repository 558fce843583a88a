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

from depyf import _torch_internals as _ti

_HEADER = ("# FX code torch generated inside prepare_debug that is no stage of a compiled function\n"
           "# (kept because prepare_debug was given clean_wild_fx_code=False).\n")


@contextlib.contextmanager
def kept(dd):
    """While active, note the code of every FX graph torch (re)generates; at exit write
    into dump directory `dd` those that are no stage of a compiled function."""
    seen = {}
    restore = _ti.patch_graph_recompile(lambda gm: seen.setdefault(_ti.graph_code(gm), None))
    try:
        yield
    finally:
        restore()
        for code in seen:
            if code not in dd.graph_by_code:
                digest = hashlib.md5(code.encode("utf-8")).hexdigest()
                dd.write("fx_graph_code_%s_0.py" % digest, _HEADER + code)
