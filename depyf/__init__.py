"""depyf: decompile CPython bytecode and open up torch.compile (stub)."""
