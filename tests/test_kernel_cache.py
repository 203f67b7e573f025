"""The kernel cache (issue 19): in the user's cache folder, keyed by every engine source, so
an edit never runs stale machine code and a read-only install still caches."""
import os
import shutil
import subprocess
import sys

import numba
import pytest

from impulse.engine import kernel_cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_numba_caches_in_the_keyed_folder():
    folder = kernel_cache.cache_dir()
    assert numba.config.CACHE_DIR == str(folder)
    assert folder.parent == kernel_cache.base_dir() and folder.name == kernel_cache.source_hash()
    assert kernel_cache.kernels_cached()              # the session's warm-up compiled there
    assert list(folder.rglob("step.step-*.nbi"))
    here = os.path.join(ROOT, "engine", "__pycache__")
    assert not [f for f in os.listdir(here) if f.endswith(".nbi")] if os.path.isdir(here) else True


@pytest.mark.slow
def test_an_edit_anywhere_in_the_engine_changes_the_key(tmp_path):
    copy = tmp_path / "engine"
    shutil.copytree(os.path.join(ROOT, "engine"), copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); "
             "from engine import kernel_cache as k; print(k.source_hash())")

    def key():
        return subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True,
                              text=True, timeout=120, check=True).stdout.strip()
    before = key()
    bench = copy / "bench" / "contacts.py"             # outside the kernels: no new key
    bench.write_text(bench.read_text() + "\n# an edit\n")
    assert key() == before
    helper = copy / "impulses.py"                      # a helper other files' kernels inline
    helper.write_text(helper.read_text() + "\n# an edit\n")
    after = key()
    assert before != after and len(after) == 16


def test_what_is_left_out_of_the_key_holds_no_kernels_and_kernels_never_import_it():
    from pathlib import Path
    engine = Path(ROOT) / "engine"
    outside = [p for p in engine.rglob("*.py")
               if p.relative_to(engine).parts[0] in kernel_cache.OUTSIDE_KERNELS]
    assert {p.relative_to(engine).parts[0] for p in outside} == \
        set(kernel_cache.OUTSIDE_KERNELS)
    for p in outside:
        text = p.read_text()
        assert "numba" not in text and "njit" not in text, p
    names = [name.removesuffix(".py") for name in kernel_cache.OUTSIDE_KERNELS]
    for p in set(engine.rglob("*.py")) - set(outside):
        text = p.read_text()
        for name in names:
            assert f".{name} import" not in text and f"from .{name}" not in text \
                and f"from ..{name}" not in text, (p, name)


def numba_cache_dir_of_a_child(**env):
    """numba's cache folder as a child process with these variables sees it."""
    return subprocess.run([sys.executable, "-c", "import impulse.engine, numba; "
                           "print(numba.config.CACHE_DIR)"], capture_output=True, text=True,
                          env={**os.environ, **env}, cwd=ROOT, timeout=120,
                          check=True).stdout.strip()


@pytest.mark.slow
def test_children_share_the_cache_whatever_their_xdg_cache_home(tmp_path):
    out = numba_cache_dir_of_a_child(XDG_CACHE_HOME=str(tmp_path / "elsewhere"))
    assert out == str(kernel_cache.cache_dir())


@pytest.mark.slow
def test_an_explicit_numba_cache_dir_wins(tmp_path):
    out = numba_cache_dir_of_a_child(NUMBA_CACHE_DIR=str(tmp_path / "mine"))
    assert out == str(tmp_path / "mine")


def test_old_kernel_folders_are_pruned_keeping_the_recent_ones(tmp_path, monkeypatch):
    """prune(): beyond the KEEP most recently used other folders, those unused for a day
    go; the current folder, recent ones and anything that is not a key folder stay."""
    monkeypatch.setenv("IMPULSE_KERNEL_CACHE", str(tmp_path))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    now = 1_000_000_000.0
    current = tmp_path / kernel_cache.source_hash()
    current.mkdir()
    ages_h = {"a" * 16: 0.5, "b" * 16: 1, "c" * 16: 2, "d" * 16: 3,      # hours unused
              "e" * 15 + "1": 72, "f" * 15 + "2": 240}
    for name, hours in ages_h.items():
        (tmp_path / name / "sub").mkdir(parents=True)
        (tmp_path / name / "sub" / "k.nbi").write_bytes(b"x" * 100)
        marker = tmp_path / name / kernel_cache.USED
        marker.touch()
        os.utime(marker, (now - 3600 * hours, now - 3600 * hours))
    os.utime(current, (now - 3600 * 500, now - 3600 * 500))  # old but current: stays
    (tmp_path / "notes").mkdir()                             # not a key folder: stays
    (tmp_path / "README").write_text("mine")
    gone = kernel_cache.prune(keep=3, idle_s=86400, now=now)
    left = sorted(p.name for p in tmp_path.iterdir())
    # a, b, c are the 3 most recent; d is beyond them but used 3 h ago; e and f are old
    assert sorted(p.name for p in gone) == ["e" * 15 + "1", "f" * 15 + "2"]
    assert left == sorted(["a" * 16, "b" * 16, "c" * 16, "d" * 16, current.name, "notes",
                           "README"])
    assert kernel_cache.prune(keep=0, idle_s=86400, now=now + 86400 * 2) and \
        sorted(p.name for p in tmp_path.iterdir()) == sorted([current.name, "notes", "README"])


def test_use_marks_its_folder_as_used(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPULSE_KERNEL_CACHE", str(tmp_path))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    before = numba.config.CACHE_DIR
    try:
        folder = kernel_cache.use()
        assert (folder / kernel_cache.USED).exists()
    finally:
        numba.config.CACHE_DIR = before
