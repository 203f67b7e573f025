"""Compile the kernels on all cores: a plan of every kernel compile, run by worker processes.

numba compiles in one thread, and a first compile of every kernel takes 500 s of one core
(engine/kernel_manifest.json). But each kernel is cached on its own, and a kernel whose
callees are in the cache only loads them. So the compile can be spread over processes,
each compiling a kernel whose callees are done, bottom-up, as a build system runs its jobs.

The plan (kernel_plan.pkl.xz, written with the manifest by `impulse compile --write-manifest`
from an empty cache) lists every kernel compile of the warm-up in the order numba finished
them (callees first), each with its argument types (numba types, pickled), the feature whose
warm-up compiled it, and the engine files it rests on (its own module and the modules
defining the types in its signature, as sha1s). A kernel whose files changed since is left
out: the warm-up in the main process, which always runs after the workers, compiles it.
So a stale plan only costs speed, never correctness; a plan from another numba is not used.

The callees of a kernel come from its code: the names it reads that are kernels (or module
attributes that are), through inlined kernels (not compiled on their own) to compiled ones.
A missed callee costs a second compile of it in the caller's process, nothing else.
"""
import hashlib
import logging
import lzma
import os
import pickle
import pickletools
import sys
import types
from pathlib import Path

from .compile_progress import CompileEvents

log = logging.getLogger(__name__)

ENGINE = Path(__file__).resolve().parent
PLAN = ENGINE / "kernel_plan.pkl.xz"
PACKAGE = __name__.rsplit(".", 1)[0]          # "impulse.engine"
MAX_JOBS = 8


def default_jobs() -> int:
    """The cores this process may use, at most MAX_JOBS."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:                    # not on Linux
        n = os.cpu_count() or 1
    return max(1, min(n, MAX_JOBS))


def _file_of(module: str, package=PACKAGE, root=ENGINE) -> str | None:
    """A module's file relative to its package's folder ('solvers/rounds.py' for
    impulse.engine.solvers.rounds); None outside the package."""
    if not module.startswith(package + "."):
        return None
    path = Path(root).joinpath(*module[len(package) + 1:].split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    return str(path.relative_to(root)) if path.exists() else None


def _sha1(rel: str, root=ENGINE) -> str | None:
    try:
        return hashlib.sha1((Path(root) / rel).read_bytes()).hexdigest()
    except OSError:
        return None


def _type_modules(blob: bytes) -> set:
    """The modules whose classes a protocol-2 pickle names (GLOBAL 'module name')."""
    return {arg.split(" ")[0] for op, arg, _ in pickletools.genops(blob)
            if op.name == "GLOBAL"}


class Recorder(CompileEvents):
    """Listens to numba's compile events while active and keeps one plan entry per kernel
    of `package` (in folder `root`; the engine's by default): (module, qualname, feature,
    argument types as a protocol-2 pickle, {file: sha1}). `feature` is what the warm-up
    compiles now."""

    def __init__(self, package=PACKAGE, root=ENGINE):
        self.package, self.root = package, Path(root)
        self.items = []
        self.feature = None
        self._stack = []

    def _started(self, data):
        self._stack.append((data["dispatcher"], tuple(data["args"])))

    def _ended(self):
        dispatcher, args = self._stack.pop()
        f = dispatcher.py_func
        if not (f.__module__ or "").startswith(self.package + ".") or \
                "<locals>" in f.__qualname__:      # (numba's own: a structref's constructor)
            return
        try:
            blob = pickle.dumps(args, protocol=2)
        except Exception:                     # a type that does not pickle: compiled in main
            return
        files = {_file_of(m, self.package, self.root)
                 for m in {f.__module__} | _type_modules(blob)} - {None}
        self.items.append((f.__module__, f.__qualname__, self.feature, blob,
                           {rel: _sha1(rel, self.root) for rel in sorted(files)}))

    def write(self, path=PLAN):
        import numba
        data = {"numba": numba.__version__, "items": self.items}
        Path(path).write_bytes(lzma.compress(pickle.dumps(data, protocol=4)))


def read(path=PLAN) -> dict:
    """The plan file's contents (an xz-compressed pickle: the types repeat from entry to
    entry, 500 kB plain, 14 kB packed)."""
    return pickle.loads(lzma.decompress(Path(path).read_bytes()))


def fits_numba(path=PLAN) -> bool:
    """True if the plan file is there and was written with this numba (without unpacking
    its types: for the messages that announce a compile)."""
    from importlib.metadata import version
    try:
        return read(path).get("numba") == version("numba")
    except Exception:
        return False


def planned_jobs(requested=None) -> int:
    """The processes a compile runs in: `requested`, else the cores (default_jobs), where
    the plan fits this numba; one where it does not (the workers would have no plan)."""
    return (requested or default_jobs()) if fits_numba() else 1


def load(path=PLAN, root=ENGINE) -> list:
    """The plan's entries still valid for the sources in `root` and this numba:
    [(module, qualname, feature, argument types)], [] without a usable plan."""
    import numba
    try:
        data = read(path)
        if data.get("numba") != numba.__version__:
            return []
        items = []
        sha = {}
        for module, qualname, feature, blob, files in data["items"]:
            if any(sha.setdefault(rel, _sha1(rel, root)) != h for rel, h in files.items()):
                continue
            items.append((module, qualname, feature, pickle.loads(blob)))
        return items
    except Exception as e:         # missing, truncated, or types this numba cannot rebuild
        log.debug("no usable kernel plan (%s: %s)", type(e).__name__, e)
        return []


def _dispatcher(module: str, qualname: str):
    import importlib
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _callees(dispatcher) -> set:
    """The kernels a kernel's code names: globals, and attributes of modules it names."""
    from numba.core.dispatcher import Dispatcher
    f = dispatcher.py_func
    names = set()

    def walk(code):
        names.update(code.co_names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                walk(const)

    walk(f.__code__)
    found = set()
    for name in names:
        value = f.__globals__.get(name)
        if isinstance(value, Dispatcher):
            found.add(value)
        elif isinstance(value, types.ModuleType):
            found.update(v for v in (getattr(value, n, None) for n in names)
                         if isinstance(v, Dispatcher))
    found.discard(dispatcher)
    return found


def dependencies(dispatchers: list) -> list:
    """For each plan entry (its kernel in `dispatchers`), the entries it waits for: those of
    the compiled kernels its code reaches, through kernels that are not in the plan."""
    in_plan = {}
    for i, d in enumerate(dispatchers):
        in_plan.setdefault(id(d), []).append(i)
    reach = {}

    def reached(d):                 # compiled kernels reached from d's code
        key = id(d)
        if key not in reach:
            reach[key] = set()      # (a cycle ends here)
            out = set()
            for c in _callees(d):
                out |= {id(c)} if id(c) in in_plan else reached(c)
            reach[key] = out
        return reach[key]

    return [{j for c in reached(d) for j in in_plan[c] if j != i}
            for i, d in enumerate(dispatchers)]


def die_with_parent():
    """On Linux, have this process killed when its parent (the thread that started it) ends:
    a compile process and its workers stop with the window or compile that started them."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)       # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _worker_start(cache_base, parent):
    """A worker: the parent's kernel cache and priority, and (on Linux) killed with the
    parent, so that a compile stopped with the window stops whole. A parent that died while
    this worker started (before the signal was asked for) ends it here: such workers were
    left waiting for work, orphaned, when a test stopped a compile within its first second."""
    os.environ["IMPULSE_KERNEL_CACHE"] = cache_base
    die_with_parent()
    if os.getppid() != parent:
        os._exit(0)
    import importlib
    importlib.import_module(PACKAGE)          # kernel_cache.use() first


def _compile(module, qualname, args):
    """One plan entry, in a worker: (True if it compiled rather than loaded from the cache,
    the error's text or None)."""
    try:
        dispatcher = _dispatcher(module, qualname)
        misses = sum(dispatcher.stats.cache_misses.values())
        dispatcher.compile(args)
        return sum(dispatcher.stats.cache_misses.values()) > misses, None
    except Exception as e:          # a stale entry: the main process's warm-up decides
        return False, f"{type(e).__name__}: {str(e)[:200]}"


def run(items, jobs, on_kernel=None, on_feature=None, features_order=()):
    """Compile the plan's `items` in `jobs` processes, each entry once its callees are done,
    in the plan's order. on_kernel(qualified name) after each compiled (not loaded from the
    cache); on_feature(f), in this process, once every entry of feature f and of the
    features before it (features_order) is done.
    Returns the entries that failed (stale) as (qualified name, error). Raises nothing a
    worker raises: a lost worker pool ends the parallel compile early (the warm-up after it
    compiles the rest)."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    from .kernel_cache import base_dir

    failed = []
    found, dispatchers = [], []
    for item in items:
        try:
            dispatchers.append(_dispatcher(item[0], item[1]))
            found.append(item)
        except Exception as e:              # renamed or removed since the plan was written
            failed.append((f"{item[0]}.{item[1]}", f"{type(e).__name__}: {e}"))
    items = found
    needs = dependencies(dispatchers)
    left = {f: sum(1 for it in items if it[2] == f) for f in features_order}
    announced = set()
    pending = list(range(len(items)))
    running = {}
    done = set()

    def announce():
        for f in features_order:
            if left.get(f, 0) > 0:
                return
            if f not in announced:
                announced.add(f)
                if on_feature is not None:
                    on_feature(f)

    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_start,
                               initargs=(str(base_dir()), os.getpid()))
    try:
        announce()
        while pending or running:
            ready = [i for i in pending if needs[i] <= done]
            if not ready and not running:          # a cycle the code scan made up
                ready = pending[:1]
            for i in ready[:jobs - len(running)]:
                pending.remove(i)
                m, q, _, args = items[i]
                running[pool.submit(_compile, m, q, args)] = i
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                i = running.pop(future)
                done.add(i)
                name = f"{items[i][0]}.{items[i][1]}"
                compiled, error = future.result()
                if error:
                    failed.append((name, error))
                if items[i][2] in left:
                    left[items[i][2]] -= 1
                if compiled and on_kernel is not None:
                    on_kernel(name)
            announce()
    except BrokenProcessPool as e:
        log.warning("the parallel kernel compile stopped (%s); compiling on in one process", e)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return failed
