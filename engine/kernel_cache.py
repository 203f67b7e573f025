"""Where numba caches the compiled kernels: the user's cache directory (platformdirs), in a
folder keyed by a hash of every engine source file a kernel can reach, numba's version and
Python's.

numba's own cache is per source file: a kernel that inlines a helper from another file keeps
its stale machine code after that helper changes, and a read-only site-packages cannot hold
a cache at all. Keyed by all the sources kernels can reach, any edit there starts a fresh
folder and nothing stale ever runs; an edit of the Python-only modules (OUTSIDE_KERNELS:
the world's bookkeeping, scenes, settings, command line) keeps the compiled kernels, so a
developer's edit there or an upgrade that touches only them compiles nothing.
IMPULSE_KERNEL_CACHE names the base folder (set here for child processes, so a test that
points XDG_CACHE_HOME elsewhere still shares the compiled kernels); an explicit
NUMBA_CACHE_DIR is left alone. Must run before any kernel module is imported
(engine/__init__.py does it first).

Each edit or upgrade leaves the old folder behind (about 60 MB). use() marks its folder as
used; once a folder's kernels are all compiled, prune() deletes the other folders beyond the
KEEP most recently used, where unused for IDLE_S (an hour; never the current one, never anything
that is not a key folder).

Portable: the kernels compile for the generic CPU of the architecture (NUMBA_CPU_NAME=generic
unless the user names one), and PackageLocator names numba's folder for a source file by its
place inside the package, not by its absolute path. So a folder compiled in one place loads
anywhere the same sources, numba and Python are installed, on any x86-64 CPU: a checkout and
its wheel share one folder, and a wheel can carry its kernels (PREBUILT, filled by `impulse
compile --bundle`), which use() copies into the user's folder on a first start.
"""
import hashlib
import logging
import os
import re
import shutil
import sys
import time
from pathlib import Path

log = logging.getLogger(__name__)

ENGINE = Path(__file__).resolve().parent
PREBUILT = ENGINE / "prebuilt"    # a wheel's compiled kernels: PREBUILT/<key>/ (not in git)
# engine folders and files (paths inside the engine) that no kernel reaches: no kernel is
# defined in them, and no module that defines kernels imports them, directly or through
# others, at its top level, where a kernel could read their names (tests/test_kernel_cache.py
# computes that reach from the sources and checks this list against it). Editing them
# compiles nothing: the world's and the contacts' Python bookkeeping, the scene files, the
# settings, the command line, the benches. The package's set-up (__init__.py, jitopts.py,
# kernel_cache.py) and the compile (warmup.py: what compiles and the ready markers;
# compile_plan.py, compile_progress.py) stay in.
OUTSIDE_KERNELS = (
    "bench", "cli.py", "formats", "metrics.py", "scenes_list.py", "strict_json.py",
    "bodies.py", "collision/__init__.py", "collision/bench.py", "collision/detector.py",
    "collision/obj.py", "collision/polytope.py", "contacts/__init__.py", "contacts/system.py",
    "definitions.py", "durable.py", "extrapolation.py", "fastcall.py", "interaction.py",
    "interpreted.py", "islands.py", "joint_poses.py", "resume.py",
    "scene.py", "scene_schema.py", "settings.py", "shapes.py", "step_stats.py",
    "visual_meshes.py", "world.py", "world_edits.py", "world_shapes.py")


def outside_kernels(relative: Path) -> bool:
    """True for an engine file (its path inside the engine) that OUTSIDE_KERNELS leaves out."""
    return relative.parts[0] in OUTSIDE_KERNELS or relative.as_posix() in OUTSIDE_KERNELS
KEEP = 3               # other key folders kept, most recently used first (other versions);
IDLE_S = 3600.0        # older ones go once unused for an hour: with a day, a day of engine
                       # edits left 80 folders of 60 MB here (every edit is a new key)
USED = "used"          # marker file: its modification time is the folder's last use
KEY = re.compile(r"[0-9a-f]{16}")


def cpu_name() -> str:
    """The CPU the kernels compile for: the user's NUMBA_CPU_NAME, else "generic"."""
    return os.environ.get("NUMBA_CPU_NAME") or "generic"


def portable() -> bool:
    """True where numba takes a cache locator from its configuration (numba >= 0.62): the
    cache then does not depend on where the sources are."""
    import numba
    return hasattr(numba.config, "CACHE_LOCATOR_CLASSES")


def source_hash() -> str:
    """sha256 over every engine source a kernel can reach (its path inside the engine, and
    its bytes: all but OUTSIDE_KERNELS), numba's and Python's versions and the CPU target
    (and the engine's folder where the cache is not portable: numba's own locator names
    folders by it)."""
    import numba
    where = "" if portable() else f" {ENGINE}"
    h = hashlib.sha256(f"{numba.__version__} {sys.version_info[:3]} {cpu_name()}{where}"
                       .encode())
    for path in sorted(ENGINE.rglob("*.py")):
        if outside_kernels(path.relative_to(ENGINE)):
            continue
        h.update(str(path.relative_to(ENGINE)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def base_dir() -> Path:
    base = os.environ.get("IMPULSE_KERNEL_CACHE")
    if not base:
        import platformdirs
        base = str(Path(platformdirs.user_cache_dir("impulse")) / "kernels")
        os.environ["IMPULSE_KERNEL_CACHE"] = base
    return Path(base)


def cache_dir() -> Path:
    return base_dir() / source_hash()


def use() -> Path | None:
    """Compile for cpu_name(); point numba's cache at cache_dir() through PackageLocator
    (unless NUMBA_CACHE_DIR is set), first copying a wheel's prebuilt kernels into it where
    it lacks them; numba's cache writes locked (lock_cache_writes). Returns the folder."""
    import numba
    lock_cache_writes()
    if not os.environ.get("NUMBA_CPU_NAME"):   # numba reads these when it first compiles
        numba.config.CPU_NAME, numba.config.CPU_FEATURES = "generic", ""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:       # no writable cache folder: numba's default (next to the sources)
        return None
    numba.config.CACHE_DIR = str(folder)
    if portable():
        numba.config.CACHE_LOCATOR_CLASSES = ",".join(
            [f"{__name__}.PackageLocator", *DEFAULT_LOCATORS])
    adopt_prebuilt(folder)
    try:
        (folder / USED).touch()
    except OSError:
        pass
    return folder


def lock_cache_writes():
    """Make numba's saving of a compiled overload whole across processes. numba saves one by
    reading the function's index file, taking the first data file name the index does not
    list, and writing the index and then the data file, with no lock. Two processes that
    compile one kernel for different types at once (impulse compile's workers compile a
    callee in whichever worker reaches it first; a first start's compile beside a running
    scene) may both take name N: the index then sends one type to the other's machine code.
    Seen 2026-12-01 in a full compile (CPU znver3): island_step.blank, indexed for a 3-d
    array, ran the 2-d code and gave (2, 2) rows for (2, 2, 3). Each save here holds an
    exclusive lock (filelock) on a lock file beside the index (a dot file: --bundle leaves it
    out); compiling stays outside the lock."""
    from filelock import FileLock
    from numba.core import caching
    original = caching.IndexDataCacheFile.save
    if getattr(original, "locked", False):
        return

    def save(self, key, data):
        folder, index = os.path.split(self._index_path)
        with FileLock(os.path.join(folder, f".{index}.lock")):
            return original(self, key, data)
    save.locked = True
    caching.IndexDataCacheFile.save = save


# numba's own locators, in numba's order (numba.core.caching._CacheImpl), after ours
DEFAULT_LOCATORS = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator",
                    "IPythonCacheLocator", "ZipCacheLocator")


def _locator_base():
    from numba.core.caching import UserProvidedCacheLocator
    return UserProvidedCacheLocator


class PackageLocator(_locator_base()):
    """numba's locator for its CACHE_DIR, for the engine's files only, with the folder for a
    source file named by its place in the package ("solvers_<sha1 of engine/solvers>"), where
    numba's hashes the absolute path."""

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            Path(py_file).resolve().relative_to(ENGINE)
        except (ValueError, OSError):
            return None                        # not ours: numba's next locator
        return super().from_function(py_func, py_file)

    @classmethod
    def get_suitable_cache_subpath(cls, py_file):
        parts = ("engine", *Path(py_file).resolve().parent.relative_to(ENGINE).parts)
        return f"{parts[-1]}_{hashlib.sha1('/'.join(parts).encode()).hexdigest()}"


def adopt_prebuilt(folder: Path) -> bool:
    """Copy PREBUILT/<key> (a wheel's kernels for exactly these sources) into the user's
    folder unless that already holds every feature. Each file lands whole (a copy beside
    it, then a rename) and the ready markers last, so a process starting alongside never
    reads half a kernel. Returns True if it copied; never raises."""
    source = PREBUILT / folder.name
    if not source.is_dir() or not portable() or kernels_cached(folder):
        return False
    try:
        files = [p for p in source.rglob("*") if p.is_file()]
        files.sort(key=lambda p: p.name.startswith("ready-"))
        for path in files:
            target = folder / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            part = target.with_name(f".{target.name}.{os.getpid()}.part")
            shutil.copyfile(path, part)
            os.replace(part, target)
    except OSError as e:
        log.warning("could not use the prebuilt kernels in %s: %s", source, e)
        return False
    log.info("using the prebuilt kernels from %s", source)
    return True


def bundle(target: Path = PREBUILT) -> Path:
    """Copy this session's compiled folder (every feature ready) to target/<key>, removing
    other keys there: the kernels `pip wheel .` then packs (`impulse compile --bundle`)."""
    folder = kernel_folder()
    if not kernels_cached(folder):
        raise RuntimeError(f"{folder} does not hold every feature's kernels")
    if target.is_dir():
        for old in target.iterdir():
            if old.is_dir() and KEY.fullmatch(old.name):
                shutil.rmtree(old)
    out = target / folder.name
    shutil.copytree(folder, out, ignore=shutil.ignore_patterns(USED, ".*"))
    return out


def _last_use(folder: Path) -> float:
    try:
        return (folder / USED).stat().st_mtime
    except OSError:
        try:
            return folder.stat().st_mtime
        except OSError:
            return 0.0


def prune(keep: int = KEEP, idle_s: float = IDLE_S, now: float | None = None) -> list:
    """Delete the kernel folders of other sources: all but the `keep` most recently used,
    and of those only the ones unused for idle_s. Returns the folders deleted; never
    raises (a folder in use elsewhere or not ours to delete stays)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return []
    now = time.time() if now is None else now
    try:
        base, current = base_dir(), source_hash()
        others = [p for p in base.iterdir()
                  if p.is_dir() and KEY.fullmatch(p.name) and p.name != current]
    except OSError:
        return []
    others.sort(key=_last_use, reverse=True)
    gone = []
    for folder in others[keep:]:
        if now - _last_use(folder) < idle_s:
            continue
        try:
            shutil.rmtree(folder)
            gone.append(folder)
        except OSError as e:
            log.debug("kept %s: %s", folder, e)
    if gone:
        log.info("removed %d old kernel cache folder(s) from %s", len(gone), base)
    return gone


def kernel_folder() -> Path:
    """The folder numba caches this session's kernels in."""
    return Path(os.environ.get("NUMBA_CACHE_DIR") or cache_dir())


def ready_marker(feature: str, folder: Path | None = None) -> Path:
    """The file that says a feature's kernels are compiled (engine/warmup.py)."""
    return (folder or kernel_folder()) / f"ready-{feature}"


# numba's file for one compiled overload: <package folder>_<hash>/<module>.<function>-<line>
# .py<version>.<overload>.nbc ("solvers_9ed7.../stopping.past_deadline-64.py311.1.nbc")
_OVERLOAD_FILE = re.compile(r"(?P<name>.+)-\d+\.py\d+\.\d+\.nbc")


def cached_overloads(folder: Path | None = None) -> dict:
    """{"<package>.<module>.<function>": overloads cached} in numba's cache folder: what an
    interrupted compile left done ("solvers.stopping.past_deadline": 1). {} when unreadable."""
    counts = {}
    try:
        for path in (folder or kernel_folder()).glob("*/*.nbc"):
            m = _OVERLOAD_FILE.fullmatch(path.name)
            if m:
                key = f"{path.parent.name.rsplit('_', 1)[0]}.{m['name']}"
                counts[key] = counts.get(key, 0) + 1
    except OSError:
        pass
    return counts


def features_ready(features, folder: Path | None = None) -> bool:
    return all(ready_marker(f, folder).exists() for f in features)


def kernels_cached(folder: Path | None = None) -> bool:
    """True if the cache holds every feature's kernels (a start then loads in about 1 s)."""
    from .warmup import FEATURES
    return features_ready(FEATURES, folder)
