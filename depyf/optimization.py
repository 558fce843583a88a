"""Call the code torch.compile made directly, without Dynamo's guards (the original depyf's API).

    class Model(TorchCompileWrapperWithCustomDispatcher):
        def __init__(self):
            super().__init__(torch.compile(self.forward))

        def forward(self, x):
            ...

        def __call__(self, x):
            if self.use_custom_dispatcher and self.compiled_codes:
                with self.dispatch_to_code(0):    # Dynamo's transformed code, no guards checked
                    return self.forward(x)
            return self.compiled_callable(x)      # torch.compile as usual (compiles on first call)

vLLM's compile path was built on this class.  Differences from the
original, all where it was wrong (README: "Compatibility with the original
depyf"): `dispatch_to_code` puts the previous code back also when the block
raises; the hook holds the wrapper weakly and is removed once the wrapper is
gone; the compiled frame is found by what it is, not by the name of a torch
function, and a torch where it cannot be found records nothing (the wrapper
then keeps calling through Dynamo's guards) rather than crashing.
"""

import contextlib
import logging
import weakref
from abc import abstractmethod

from depyf import _torch_internals as _ti

__all__ = ["TorchCompileWrapperWithCustomDispatcher"]

log = logging.getLogger("depyf")


class TorchCompileWrapperWithCustomDispatcher:
    """A wrapper of torch.compile whose subclasses choose which compiled code runs.

    Subclasses implement `forward`, build `compiled_callable` (usually
    `torch.compile(self.forward, ...)`) in their `__init__` before calling this
    one, and dispatch in `__call__`: `self.compiled_codes` holds the transformed
    code Dynamo made for this object's `forward`, in compile order, and
    `with self.dispatch_to_code(i):` makes `self.forward` run the i-th of them.
    `use_custom_dispatcher` is for the subclass to read (this class never does).
    """

    def __init__(self, compiled_callable, use_custom_dispatcher=True):
        self.compiled_callable = compiled_callable
        self.original_code_object = self.__class__.forward.__code__
        self.compiled_codes = []
        self.use_custom_dispatcher = use_custom_dispatcher
        _register_bytecode_hook(self)

    def __call__(self, *args, **kwargs):
        """Dispatch here (subclasses); by default, call through torch.compile."""
        return self.compiled_callable(*args, **kwargs)

    @abstractmethod
    def forward(self, *args, **kwargs):
        ...

    def bytecode_hook(self, old_code, new_code):
        """Called by Dynamo for every frame it compiles: keep `new_code` when it was made
        from this object's `forward` (for this very object, not another instance)."""
        if old_code is not self.original_code_object:
            return
        frame_locals = _ti.compiling_frame_locals(old_code)
        if frame_locals is None:
            _warn_once("depyf: TorchCompileWrapperWithCustomDispatcher cannot see which object "
                       "torch.compile compiled forward for with this torch; compiled_codes stays "
                       "empty and calls go through Dynamo's guards")
            return
        receiver = old_code.co_varnames[0] if old_code.co_argcount else "self"
        if frame_locals.get(receiver) is not self:
            return
        self.compiled_codes.append(new_code)

    @contextlib.contextmanager
    def dispatch_to_code(self, index):
        """Inside the block, `forward` runs `self.compiled_codes[index]` (no guard is
        checked: the caller vouches that its inputs fit that code).  Dynamo's
        transformed code has the arguments, cell and free variables of the code it
        came from, so it can take its place in the function."""
        forward = self.__class__.forward
        previous = forward.__code__
        forward.__code__ = self.compiled_codes[index]
        try:
            yield
        finally:
            forward.__code__ = previous


def _register_bytecode_hook(wrapper):
    """Dynamo calls wrapper.bytecode_hook while `wrapper` lives; the hook is removed after."""
    try:
        ref = weakref.ref(wrapper)
    except TypeError:  # (a subclass with __slots__ and no __weakref__: held, as the original did)
        _ti.register_raw_bytecode_hook(wrapper.bytecode_hook)
        return

    def hook(old_code, new_code):
        alive = ref()
        return None if alive is None else alive.bytecode_hook(old_code, new_code)

    weakref.finalize(wrapper, _ti.register_raw_bytecode_hook(hook))


_warned = set()


def _warn_once(message):
    if message not in _warned:
        _warned.add(message)
        log.warning(message)
