"""The kernel cache (issue 19): in the user's cache folder, keyed by every engine source, so
an edit never runs stale machine code and a read-only install still caches."""
import ast
import os
import shutil
import subprocess
import sys
import time

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
def test_an_edit_a_kernel_can_reach_changes_the_key_and_others_do_not(tmp_path):
    copy = tmp_path / "engine"
    shutil.copytree(os.path.join(ROOT, "engine"), copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); "
             "from engine import kernel_cache as k; print(k.source_hash())")

    def key():
        return subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True,
                              text=True, timeout=120, check=True).stdout.strip()
    before = key()
    for outside in ("bench/contacts.py", "world.py", "contacts/system.py", "settings.py"):
        f = copy / outside                             # Python only: the same kernels
        f.write_text(f.read_text() + "\n# an edit\n")
        assert key() == before, outside
    keys = {before}
    for inside in ("impulses.py", "warmup.py", "jitopts.py", "__init__.py"):
        f = copy / inside      # a helper other files' kernels inline; what compiles and how
        f.write_text(f.read_text() + "\n# an edit\n")
        keys.add(key())
    assert len(keys) == 5 and all(len(k) == 16 for k in keys)


KERNEL_DECORATORS = {"njit", "jit", "vectorize", "guvectorize", "cfunc", "overload",
                     "register_jitable", "intrinsic"}


def engine_modules(engine):
    """{dotted name inside the engine ("" for the package, "contacts.solve"): path}"""
    out = {}
    for p in engine.rglob("*.py"):
        parts = list(p.relative_to(engine).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def top_level_imports(name, path, modules):
    """The engine modules `name` imports outside any function or class (whose names its
    kernels can read), as dotted names."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    package = [p for p in package if p]
    tree = ast.parse(path.read_text())
    found = set()
    for node in (n for top in tree.body if not isinstance(top, (ast.FunctionDef, ast.ClassDef))
                 for n in ast.walk(top)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").startswith("impulse.engine"):
                mod = node.module.removeprefix("impulse.engine").lstrip(".")
            else:
                continue
            subs = [f"{mod}.{a.name}".lstrip(".") for a in node.names]
            subs = [m for m in subs if m in modules]
            found.update(subs if subs else [mod] if mod in modules else [])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("impulse.engine"):
                    found.add(a.name.removeprefix("impulse.engine").lstrip("."))
    return found & set(modules)


def defines_kernels(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                f = d.func if isinstance(d, ast.Call) else d
                if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) \
                        in KERNEL_DECORATORS:
                    return True
    return False


def imports_numba(path):
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
        if any(n.split(".")[0] == "numba" for n in names):
            return True
    return False


def test_what_is_left_out_of_the_key_holds_no_kernels_and_no_kernel_reaches_it():
    """Every module a kernel-defining module imports at its top level, directly or through
    others, is in the key; OUTSIDE_KERNELS names only modules outside that reach, none of
    them touches numba, and the package's set-up and the warm-up stay in."""
    from pathlib import Path
    engine = Path(ROOT) / "engine"
    modules = engine_modules(engine)
    for entry in kernel_cache.OUTSIDE_KERNELS:
        assert (engine / entry).exists(), entry
    outside = {n for n, p in modules.items()
               if kernel_cache.outside_kernels(p.relative_to(engine))}
    kernels = {n for n, p in modules.items() if defines_kernels(p)}
    assert len(kernels) > 30 and "contacts.solve" in kernels and "world" not in kernels
    reach, todo = set(), list(kernels)
    while todo:
        n = todo.pop()
        if n not in reach:
            reach.add(n)
            todo.extend(top_level_imports(n, modules[n], modules))
    assert {"state", "joints", "collision.shapes", "jitopts"} <= reach   # (the walk works)
    assert not outside & reach, sorted(outside & reach)
    for n in outside:
        assert not imports_numba(modules[n]), n
    assert not {"", "jitopts", "kernel_cache", "warmup"} & outside
    assert {"world", "contacts.system", "settings", "scene", "resume"} <= outside


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


_TOY = '''
import numpy as np
from numba import njit


@njit(cache=True)
def blank(a, n):
    return np.zeros((n,) + a.shape[1:], dtype=a.dtype)
'''

# a process compiling the toy kernel for six array ranks in its own order, from a common
# start time on; every overload's save (the index read, the name taken, index and data
# written) is logged as an interval, slowed (0.25 s, longer than a compile of the toy) so that
# unlocked saves of three processes overlap
_SAVER = '''
import sys, time
import numpy as np
from numba.core import caching
inner = caching.IndexDataCacheFile.save

def logged(self, key, data):
    t0 = time.monotonic()
    time.sleep(0.25)
    inner(self, key, data)
    with open(sys.argv[3], "a") as f:
        f.write(f"{t0} {time.monotonic()}\\n")
caching.IndexDataCacheFile.save = logged
import impulse.engine  # noqa  (kernel_cache.use: its lock wraps the logged save)
if sys.argv[4] == "plain":
    caching.IndexDataCacheFile.save = logged
sys.path.insert(0, sys.argv[1])
import toy
time.sleep(max(0.0, float(sys.argv[5]) - time.time()))
for nd in map(int, sys.argv[2].split(",")):
    toy.blank(np.zeros((2,) * nd), 3)
'''

_CHECK = '''
import sys
import numpy as np
import impulse.engine  # noqa  (the same CPU target as the savers)
sys.path.insert(0, sys.argv[1])
import toy
print(sum(toy.blank(np.zeros((2,) * nd), 3).shape != (3,) + (2,) * (nd - 1)
          for nd in range(1, 7)), len(toy.blank.stats.cache_hits))
'''


def _saves(tmp_path, mode):
    """(saves, saves that began before the last one ended, ranks that ran another's code,
    ranks loaded from the cache by a fresh process)"""
    tmp_path.mkdir()
    (tmp_path / "toy.py").write_text(_TOY)
    log = tmp_path / "saves.log"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    start = str(time.time() + 8.0)         # (after every process has imported numba)
    procs = [subprocess.Popen([sys.executable, "-c", _SAVER, str(tmp_path), order, str(log),
                               mode, start], env=env)
             for order in ("1,2,3,4,5,6", "6,5,4,3,2,1", "3,1,5,2,6,4")]
    assert [p.wait(timeout=300) for p in procs] == [0, 0, 0]
    spans = sorted(tuple(map(float, line.split())) for line in log.read_text().splitlines())
    overlaps = sum(b[0] < a[1] for a, b in zip(spans, spans[1:], strict=False))
    out = subprocess.run([sys.executable, "-c", _CHECK, str(tmp_path)], env=env,
                         capture_output=True, text=True, timeout=300)
    wrong, hits = map(int, out.stdout.split())
    return len(spans), overlaps, wrong, hits


def test_numbas_cache_saves_from_several_processes_never_overlap(tmp_path):
    """Three processes compile one cached kernel for six ranks each at once. Unlocked,
    their saves overlap (two may take one data file name: a rank then runs another's code,
    kernel_cache.lock_cache_writes); with the engine's lock none overlaps, and a fresh
    process loads all six ranks from the cache, each with its own code."""
    saves, overlaps, wrong, hits = _saves(tmp_path / "locked", "locked")
    assert saves >= 6 and overlaps == 0
    assert wrong == 0 and hits == 6
    saves, overlaps, _, _ = _saves(tmp_path / "plain", "plain")
    assert saves >= 6 and overlaps > 0     # (unlocked, the test sees them overlap)
