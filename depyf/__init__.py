"""depyf: decompile CPython bytecode and open up torch.compile.

``import depyf`` never imports torch: the torch helpers (``prepare_debug``,
``debug``, ``install``, ``uninstall``, ``explain``) load on first use.
"""

import importlib

from ._core import DecompilationError
from .decompiler import Decompiler, decompile

__version__ = "0.1.0"

# name -> (module, attribute); attribute None means the module itself.
_LAZY = {
    "prepare_debug": ("depyf.prepare", "prepare_debug"),
    "debug": ("depyf.prepare", "debug"),
    "install": ("depyf.logging_hook", "install"),
    "uninstall": ("depyf.logging_hook", "uninstall"),
    "explain": ("depyf.explain", None),
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
