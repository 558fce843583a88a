"""The original depyf's module for `install` and `uninstall` (depyf.logging_hook holds them)."""

from depyf.logging_hook import install, pytorch_bytecode_src_hook, uninstall

__all__ = ["install", "uninstall", "pytorch_bytecode_src_hook"]
