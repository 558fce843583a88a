"""`install()` adds decompiled source to Dynamo's bytecode log (TORCH_LOGS=+bytecode).

Dynamo logs ORIGINAL and MODIFIED BYTECODE for every frame it compiles; with
depyf installed the same logger then shows "possible source code:" with the
decompiled transformed code.  Nothing is decompiled unless that log is on.
"""

import logging
import threading

from depyf import _decompiled
from depyf import _torch_internals as _ti

__all__ = ["install", "uninstall", "pytorch_bytecode_src_hook"]

_lock = threading.Lock()
_remove = [None]


def pytorch_bytecode_src_hook(original, code):
    """The bytecode hook install() registers (the original depyf's name for it)."""
    logger = _ti.bytecode_logger()
    if not logger.isEnabledFor(logging.DEBUG):
        return None
    result = _decompiled.decompile(code)
    if result.ok:
        logger.debug("possible source code:\n%s\nIf you find the decompiled code wrong, please "
                     "report it to depyf with the bytecode above.", result.source.rstrip())
    else:
        logger.debug("depyf could not decompile the modified bytecode of %s: %s",
                     original.co_name, result.error)
    return None


def install():
    """Log the decompiled source after Dynamo's MODIFIED BYTECODE. Calling it again does nothing."""
    with _lock:
        if _remove[0] is None:
            _remove[0] = _ti.register_bytecode_hook(pytorch_bytecode_src_hook)


def uninstall():
    """Stop what install() started. Safe to call when not installed."""
    with _lock:
        if _remove[0] is not None:
            _remove[0]()
            _remove[0] = None
