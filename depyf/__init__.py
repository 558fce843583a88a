"""depyf: decompile CPython bytecode and open up torch.compile.

``import depyf`` never imports torch: the torch helpers (``prepare_debug``,
``debug``, ``install``, ``uninstall``, ``explain``) load on first use.
"""

import importlib
import sys
import warnings

try:
    from ._core import DecompilationError
except ModuleNotFoundError as _e:
    if _e.name != "depyf._core":
        raise
    _MISSING_CORE = (
        "depyf: the C extension depyf._core is not built in %s: build it with tools/dev_build.sh, "
        "or install depyf (pip install .) and run it from outside the source tree" % __path__[0])
    if sys.argv[:1] == ["-m"]:  # `python -m depyf`: one line, no traceback
        raise SystemExit(_MISSING_CORE) from None
    raise ImportError(_MISSING_CORE, name="depyf._core") from None

# Translation validation compiles the decompiled text as "<depyf validation>".  What the
# compiler warns about there (`x is 1`, an escape sequence) is the decompiled program's
# own, already warned about when it was first compiled: not a warning for depyf's user.
warnings.filterwarnings("ignore", module="<depyf validation>$")

from .decompiler import Decompiler, decompile

__version__ = "0.1.0"

# name -> (module, attribute); attribute None means the module itself.
_LAZY = {
    "prepare_debug": ("depyf.prepare", "prepare_debug"),
    "debug": ("depyf.prepare", "debug"),
    "install": ("depyf.logging_hook", "install"),
    "uninstall": ("depyf.logging_hook", "uninstall"),
    "explain": ("depyf.explain", None),
    "show": ("depyf._notebook", "show"),
}

# The lazy names stay out of __all__ so that `from depyf import *` does not import torch.
__all__ = ["DecompilationError", "Decompiler", "decompile", "__version__"]


def __getattr__(name):
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'depyf' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
