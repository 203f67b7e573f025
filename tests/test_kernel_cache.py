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


def test_kernels_compile_for_the_generic_cpu_into_path_free_folders():
    """Portable kernels: numba's codegen targets the architecture's generic CPU, and the
    folder of each source file is named by its place in the package."""
    from impulse.engine.solvers import stopping
    assert kernel_cache.portable()
    cpu, features = stopping.past_deadline.targetctx.codegen().magic_tuple()[1:]
    assert cpu == kernel_cache.cpu_name()          # "generic" unless NUMBA_CPU_NAME says
    assert features == "" or os.environ.get("NUMBA_CPU_NAME")
    folders = sorted(p.name for p in kernel_cache.cache_dir().iterdir() if p.is_dir())
    import hashlib
    expected = {f"{name}_{hashlib.sha1(path.encode()).hexdigest()}" for name, path in
                [("engine", "engine"), ("solvers", "engine/solvers"),
                 ("joints", "engine/joints"), ("contacts", "engine/contacts"),
                 ("collision", "engine/collision")]}
    assert set(folders) == expected


PROBE = """
import sys
import impulse.engine as e
from impulse.engine import kernel_cache
from impulse.engine.solvers import stopping
import numpy as np
stopping.past_deadline(0.0, np.zeros(64))
print(e.__file__, kernel_cache.source_hash(), sum(stopping.past_deadline.stats.cache_hits.values()))
"""


@pytest.mark.slow
def test_a_cache_built_in_one_place_loads_in_another(tmp_path):
    """The same sources in another folder (a wheel's site-packages, another clone) have the
    same key and load the kernels compiled from the first: no compile."""
    elsewhere = tmp_path / "elsewhere" / "impulse"
    shutil.copytree(os.path.join(ROOT, "engine"), elsewhere / "engine",
                    ignore=shutil.ignore_patterns("__pycache__", "prebuilt"))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["IMPULSE_KERNEL_CACHE"] = str(tmp_path / "kernels")

    def probe(pythonpath=None):
        run_env = dict(env, **({"PYTHONPATH": pythonpath} if pythonpath else {}))
        out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                             env=run_env, cwd=tmp_path, timeout=300, check=True).stdout.split()
        return out[0], out[1], int(out[2])
    here, key, hits = probe()
    assert here.startswith(ROOT) and hits == 0                 # compiled here
    there, key_there, hits_there = probe(str(tmp_path / "elsewhere"))
    assert there.startswith(str(elsewhere)) and key_there == key and hits_there == 1


def fake_prebuilt(root, key, features=("step", "interaction", "contacts")):
    folder = root / key
    (folder / "solvers_abc").mkdir(parents=True)
    (folder / "solvers_abc" / "stopping.past_deadline-64.py311.nbi").write_bytes(b"index")
    (folder / "solvers_abc" / "stopping.past_deadline-64.py311.1.nbc").write_bytes(b"x" * 1000)
    for f in features:
        (folder / f"ready-{f}").write_text("")
    return folder


def test_a_wheels_prebuilt_kernels_fill_an_empty_cache_once(tmp_path, monkeypatch):
    key = kernel_cache.source_hash()
    monkeypatch.setattr(kernel_cache, "PREBUILT", tmp_path / "prebuilt")
    fake_prebuilt(tmp_path / "prebuilt", key)
    user = tmp_path / "user" / key
    user.mkdir(parents=True)
    assert not kernel_cache.kernels_cached(user)
    assert kernel_cache.adopt_prebuilt(user)
    assert kernel_cache.kernels_cached(user)
    assert (user / "solvers_abc" / "stopping.past_deadline-64.py311.1.nbc").read_bytes() == \
        b"x" * 1000
    assert not [p for p in user.rglob("*.part")]
    assert not kernel_cache.adopt_prebuilt(user)               # already whole: left alone
    other = tmp_path / "user" / ("0" * 16)                     # other sources: not theirs
    other.mkdir()
    assert not kernel_cache.adopt_prebuilt(other) and not list(other.iterdir())


def test_use_takes_the_prebuilt_kernels(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPULSE_KERNEL_CACHE", str(tmp_path / "user"))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(kernel_cache, "PREBUILT", tmp_path / "prebuilt")
    fake_prebuilt(tmp_path / "prebuilt", kernel_cache.source_hash())
    before = numba.config.CACHE_DIR
    try:
        folder = kernel_cache.use()
        assert folder == tmp_path / "user" / kernel_cache.source_hash()
        assert kernel_cache.kernels_cached(folder)
    finally:
        numba.config.CACHE_DIR = before


def test_bundle_copies_the_compiled_folder_and_drops_other_keys(tmp_path):
    target = tmp_path / "prebuilt"
    fake_prebuilt(target, "f" * 16)
    (target / "README").write_text("keep")
    out = kernel_cache.bundle(target)
    assert out == target / kernel_cache.source_hash()
    assert sorted(p.name for p in target.iterdir()) == sorted([out.name, "README"])
    assert kernel_cache.kernels_cached(out) and not (out / kernel_cache.USED).exists()
    here = kernel_cache.cache_dir()
    ours = {p.relative_to(here) for p in here.rglob("*.nbc")}
    assert ours and {p.relative_to(out) for p in out.rglob("*.nbc")} == ours


def test_bundle_refuses_an_incomplete_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel_cache, "kernel_folder", lambda: tmp_path / "partial")
    (tmp_path / "partial").mkdir()
    with pytest.raises(RuntimeError, match="does not hold every feature"):
        kernel_cache.bundle(tmp_path / "prebuilt")
