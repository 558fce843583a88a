"""The original depyf's module for `prepare_debug` and `debug` (depyf.prepare holds them)."""

from depyf.prepare import debug, prepare_debug

__all__ = ["prepare_debug", "debug"]
