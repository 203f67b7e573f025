"""Where numba caches the compiled kernels: the user's cache directory (platformdirs), in a
folder keyed by a hash of every engine source file, numba's version and Python's.

numba's own cache is per source file: a kernel that inlines a helper from another file keeps
its stale machine code after that helper changes, and a read-only site-packages cannot hold
a cache at all. Keyed by all sources, any edit starts a fresh folder and nothing stale ever
runs. IMPULSE_KERNEL_CACHE names the base folder (set here for child processes, so a test
that points XDG_CACHE_HOME elsewhere still shares the compiled kernels); an explicit
NUMBA_CACHE_DIR is left alone. Must run before any kernel module is imported
(engine/__init__.py does it first).

Each edit or upgrade leaves the old folder behind (about 100 MB). use() marks its folder as
used; once a folder's kernels are all compiled, prune() deletes the other folders beyond the
KEEP most recently used, where unused for IDLE_S (never the current one, never anything
that is not a key folder).
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
# engine folders and files that no kernel reaches: no numba in them, and only the command
# line imports them (tests/test_kernel_cache.py checks both), so editing them compiles nothing
OUTSIDE_KERNELS = ("bench", "cli.py", "formats")
KEEP = 3               # other key folders kept, most recently used first (other versions,
IDLE_S = 86400.0       # worktrees); older ones go once unused for a day
USED = "used"          # marker file: its modification time is the folder's last use
KEY = re.compile(r"[0-9a-f]{16}")


def source_hash() -> str:
    """sha256 over every engine source (path and bytes) but OUTSIDE_KERNELS, where they
    are (numba's cache entries are per source path: a wheel and a checkout of the same
    sources compile apart), numba's and Python's versions."""
    import numba
    h = hashlib.sha256(f"{numba.__version__} {sys.version_info[:3]} {ENGINE}".encode())
    for path in sorted(ENGINE.rglob("*.py")):
        if path.relative_to(ENGINE).parts[0] in OUTSIDE_KERNELS:
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
    """Point numba's cache at cache_dir() (unless NUMBA_CACHE_DIR is set); returns it."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    import numba
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:       # no writable cache folder: numba's default (next to the sources)
        return None
    numba.config.CACHE_DIR = str(folder)
    try:
        (folder / USED).touch()
    except OSError:
        pass
    return folder


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


def ready_marker(feature: str) -> Path:
    """The file that says a feature's kernels are compiled (engine/warmup.py)."""
    return kernel_folder() / f"ready-{feature}"


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


def features_ready(features) -> bool:
    return all(ready_marker(f).exists() for f in features)


def kernels_cached() -> bool:
    """True if the cache holds every feature's kernels (a start then loads in about 1 s)."""
    from .warmup import FEATURES
    return features_ready(FEATURES)
