"""The kernels as plain Python while they compile, so a first start runs its scene at once.

A first start has no compiled kernels for minutes (issue 19), yet the kernels are ordinary
Python functions that numba compiles: numba keeps each one's source as `py_func`, and under
NUMBA_DISABLE_JIT the whole engine runs as Python (tests/test_no_jit.py). Interpreted, a
small scene is fast enough to watch: the pendulum ran at 15x real time, Newton's cradle at
1.9x, the box stack at 0.6x (`NUMBA_DISABLE_JIT=1 impulse sim SCENE --duration 1`,
2026-12-01, this 2-core machine); a pile of a thousand cubes is far too slow.

NUMBA_DISABLE_JIT is read once, when the kernels are decorated. `interpret()` does the same
later, in a running process: it rebinds every kernel name in the engine's modules (the
module globals that the kernels' Python functions look their callees up in, and that the
Python side calls) to the kernel's `py_func`, and the clock intrinsic to time.monotonic_ns.
`use_compiled()` binds the kernels back once they are in the cache; the next call of each
loads its machine code from there. Objects that hold a kernel themselves (fastcall.FastCall) ask
`active()`. Swap only between steps: a step in flight keeps the functions it started with.
"""
import importlib
import logging
import pkgutil
import threading
import time

log = logging.getLogger(__name__)
PACKAGE = __name__.rsplit(".", 1)[0]           # "impulse.engine"
SKIP = ("bench",)                              # engine subpackages no step reaches

_lock = threading.Lock()
_bound = []            # (module, name, kernel): the kernel names rebound to Python
_kernels = {}          # id(py_func) -> its kernel, while interpreting
_active = False


def active() -> bool:
    """True while the engine's kernels run as Python (between interpret() and use_compiled())."""
    return _active


def kernel(f):
    """The kernel whose Python function `f` is (while interpreting), else `f` itself: for
    objects that keep a kernel they were handed, which may be its Python function now."""
    return _kernels.get(id(f), f)


def _engine_modules():
    """Every module of the engine, imported now (a module imported after the swap would
    bind the kernels themselves), but the benches."""
    package = importlib.import_module(PACKAGE)
    modules = [package]
    for info in pkgutil.walk_packages(package.__path__, PACKAGE + "."):
        if info.name[len(PACKAGE) + 1:].split(".")[0] in SKIP or info.name == __name__:
            continue
        try:
            modules.append(importlib.import_module(info.name))
        except ImportError as e:                     # an optional dependency is missing
            log.debug("not rebound: %s (%s)", info.name, e)
    return modules


def is_kernel(value) -> bool:
    """An @njit kernel: numba's dispatcher, with its Python function (`py_func`) and its
    compiled signatures (`overloads`). (Told by these attributes, so that this module does
    not import numba and stays out of the kernel cache's key, kernel_cache.OUTSIDE_KERNELS.)"""
    return callable(getattr(value, "py_func", None)) and hasattr(value, "overloads")


def _python_twin(value, clock):
    """What a module-level name bound to `value` calls instead while interpreting, or None
    if it stays as it is (`clock`: the clock intrinsic)."""
    if is_kernel(value):
        return value.py_func
    if value is clock:
        return time.monotonic_ns
    return None


def interpret() -> int:
    """Run the engine's kernels as Python from now on; returns how many names it rebound."""
    global _active
    with _lock:
        if _active:
            return len(_bound)
        from .clock import monotonic_ns
        for module in _engine_modules():
            for name, value in list(vars(module).items()):
                twin = _python_twin(value, monotonic_ns)
                if twin is not None:
                    _bound.append((module, name, value))
                    if is_kernel(value):
                        _kernels[id(twin)] = value
                    setattr(module, name, twin)
        _active = True
    log.info("the physics runs as Python (slower) until its kernels are compiled, then "
             "switches to them")
    log.debug("%d kernel names bound to their Python functions", len(_bound))
    return len(_bound)


def use_compiled() -> None:
    """Bind the compiled kernels back (each loads from the cache at its next call)."""
    global _active
    with _lock:
        for module, name, compiled in reversed(_bound):
            setattr(module, name, compiled)
        _bound.clear()
        _kernels.clear()
        _active = False
