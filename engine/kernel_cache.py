"""Where numba caches the compiled kernels: the user's cache directory (platformdirs), in a
folder keyed by a hash of every engine source file, numba's version and Python's.

numba's own cache is per source file: a kernel that inlines a helper from another file keeps
its stale machine code after that helper changes, and a read-only site-packages cannot hold
a cache at all. Keyed by all sources, any edit starts a fresh folder and nothing stale ever
runs. IMPULSE_KERNEL_CACHE names the base folder (set here for child processes, so a test
that points XDG_CACHE_HOME elsewhere still shares the compiled kernels); an explicit
NUMBA_CACHE_DIR is left alone. Must run before any kernel module is imported
(engine/__init__.py does it first).
"""
import hashlib
import os
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parent
# engine folders and files that no kernel reaches: no numba in them, and only the command
# line imports them (tests/test_kernel_cache.py checks both), so editing them compiles nothing
OUTSIDE_KERNELS = ("bench", "cli.py", "formats")


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
    return folder


def ready_marker(feature: str) -> Path:
    """The file that says a feature's kernels are compiled (engine/warmup.py)."""
    return Path(os.environ.get("NUMBA_CACHE_DIR") or cache_dir()) / f"ready-{feature}"


def features_ready(features) -> bool:
    return all(ready_marker(f).exists() for f in features)


def kernels_cached() -> bool:
    """True if the cache holds every feature's kernels (a start then loads in about 1 s)."""
    from .warmup import FEATURES
    return features_ready(FEATURES)
