"""The first start (issue 19): the kernels compile in a background process with progress,
kernel by kernel; the window answers meanwhile and a scene opens once its features are
compiled; numba compiles a kernel once per argument type, not once per constant."""
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from numba import njit

from impulse.app.kernel_compile import BackgroundCompile
from impulse.engine import jitopts, warmup
from impulse.engine.compile_progress import (
    PRIOR_S,
    CompileProgress,
    cached_seconds,
    compile_heading,
    estimate_left,
    expected_duration_text,
    expected_seconds,
    load_manifest,
    write_manifest,
)
from impulse.engine.kernel_cache import cached_overloads

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fake_compiler(tmp_path, gate=None, fail=False, before=0.0):
    """A stand-in for `engine.warmup --progress jsonl`: kernels, then features ready; the
    "contacts" feature waits for the gate file. `before`: the share a stopped compile left."""
    script = tmp_path / "fake_warmup.py"
    script.write_text(textwrap.dedent(f"""
        import json, os, sys, time
        def emit(**f): print(json.dumps(f), flush=True)
        emit(event="start", fraction={before!r})
        for i, name in enumerate(["impulse.engine.a.k1", "numba.x.impl", "impulse.engine.c.k3"]):
            emit(event="kernel", name=name, fraction=0.2 * (i + 1), eta_s=30.0 - 10 * i)
        if {fail!r}:
            print("Traceback ...", file=sys.stderr)
            print("numba.core.errors.TypingError: boom", file=sys.stderr)
            sys.exit(1)
        emit(event="ready", feature="step")
        emit(event="ready", feature="interaction")
        gate = {str(gate) if gate else ""!r}
        while gate and not os.path.exists(gate):
            time.sleep(0.02)
        emit(event="ready", feature="contacts")
        emit(event="done", seconds=1.5, kernels=3)
    """))
    return [sys.executable, str(script)]


def wait_for(predicate, timeout=20.0, pump=None):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pump is not None:
            pump()
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_background_compile_reports_kernels_features_and_the_end(tmp_path):
    gate = tmp_path / "go"
    c = BackgroundCompile(fake_compiler(tmp_path, gate))
    assert wait_for(lambda: c.has(("step", "interaction")))
    assert c.kernels == 3 and c.kernel == "c.k3" and c.fraction == pytest.approx(0.6)
    assert c.bar_label() == "collision detection: c.k3"     # step and interaction are ready
    assert c.running and not c.has(warmup.FEATURES)
    assert "60 %" in c.status_line() and "10 s left" in c.status_line()
    gate.write_text("")
    assert wait_for(lambda: c.finished)
    assert c.error is None and c.fraction == 1.0 and c.has(warmup.FEATURES)


def test_a_resumed_compile_says_so_and_counts_what_was_done(tmp_path):
    gate = tmp_path / "go"
    c = BackgroundCompile(fake_compiler(tmp_path, gate, before=0.55))
    assert wait_for(lambda: c.has(("step", "interaction")))
    assert c.resumed and c.status_line().startswith("resumed compile: compiling")
    assert c.bar_label() == "collision detection: c.k3"
    gate.write_text("")
    assert wait_for(lambda: c.finished)
    first = BackgroundCompile(fake_compiler(tmp_path, gate))
    assert wait_for(lambda: first.finished)
    assert not first.resumed


CACHED_MODULE = """
from numba import njit

@njit(cache=True)
def twice(x):
    return 2 * x

@njit(cache=True)
def other(x):
    return x + 1.0
"""


def test_the_bar_says_what_the_child_does_before_its_first_kernel(tmp_path):
    fresh = BackgroundCompile(start=False)
    fresh.resumed = False
    assert fresh.bar_label() == "starting the compiler"
    fresh.resumed = True                     # loading what a stopped compile left
    assert fresh.bar_label() == "loading the kernels compiled before"
    fresh.kernels, fresh.kernel = 1, "solvers.rounds.position_stage"
    assert fresh.bar_label() == "time step: solvers.rounds.position_stage"
    fresh.ready = {"step"}
    assert fresh.bar_label().startswith("drag and live edits: ")


def test_an_interrupted_compile_resumes_from_what_the_cache_holds(tmp_path):
    """Kernels a stopped compile finished load from numba's cache announcing nothing: their
    manifest seconds count as done from the start, for the bar, the estimate and the
    heading; numba's own helpers (never cached) and kernels not yet compiled do not."""
    pkg = tmp_path / "kpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text(CACHED_MODULE)
    cache = tmp_path / "cache"
    subprocess.run([sys.executable, "-c", "from kpkg.mod import twice, other; "
                    "twice(1.0); twice(1); other(1.0)"], cwd=tmp_path, check=True, timeout=120,
                   env={**os.environ, "NUMBA_CACHE_DIR": str(cache)})
    overloads = cached_overloads(cache)
    assert overloads == {"kpkg.mod.twice": 2, "kpkg.mod.other": 1}
    manifest = {"kpkg.mod.twice": (4.0, 4),            # 2 of its 4 compiles are cached
                "impulse.kpkg.mod.other": (2.0, 1),    # named with its package's parents
                "kpkg.mod.later": (5.0, 1),            # not compiled yet
                "numba.np.arrayobj.ol_np_empty.<locals>.impl": (1.0, 1)}
    assert cached_seconds(manifest, overloads) == pytest.approx(4.0)
    assert cached_overloads(tmp_path / "nothing") == {}
    heading = compile_heading(manifest, overloads, jobs=1)
    assert heading == "resuming the kernel compile: 33 % done before, about 1 minute left " \
                      "on one core"
    assert compile_heading(manifest, {}, jobs=2).startswith("first start: compiling the "
                                                            "physics kernels, once (about 1 "
                                                            "minute on 2 cores")
    p = CompileProgress(manifest=manifest, already=cached_seconds(manifest, overloads))
    assert p.fraction() == pytest.approx(4.0 / 12.0) and p.eta() is None
    p._t0, p.done = time.perf_counter() - 10.0, 2.0    # then 2 s of the 8 left, in 10 s here
    assert p.fraction() == pytest.approx(6.0 / 12.0)
    assert p.eta() == pytest.approx(estimate_left(8.0, 2.0, 10.0), rel=0.05)


def test_a_complete_cache_counts_as_done():
    """The session's warm cache (conftest compiled it) holds nearly all of the manifest:
    numba's file names still map onto the manifest's kernel names."""
    assert cached_seconds() >= 0.97 * expected_seconds()
    assert compile_heading().startswith("resuming the kernel compile: 9")


def test_a_failing_compile_says_why_in_one_line(tmp_path):
    c = BackgroundCompile(fake_compiler(tmp_path, fail=True))
    assert wait_for(lambda: c.error is not None)
    assert not c.finished and "TypingError: boom" in c.error and "\n" not in c.error


def test_scenes_with_contacts_off_need_no_detection():
    assert warmup.features_for_document({"contacts": {"enabled": False}}) == ("step", "interaction")
    assert warmup.features_for_document({"bodies": []}) == warmup.FEATURES
    assert warmup.features_for_document([]) == warmup.FEATURES


def test_progress_kernel_by_kernel_with_an_estimate(tmp_path):
    seen = []

    @njit
    def fresh(x):          # compiles inside the listener (no cache)
        return x * 2.0 + 1.0

    name = f"{fresh.py_func.__module__}.{fresh.py_func.__qualname__}"
    manifest = {name: (2.0, 1), "engine.other": (6.0, 2)}
    with CompileProgress(lambda *a: seen.append(a), manifest=manifest) as p:
        fresh(1.0)
    assert [s[0] for s in seen] == [name]
    assert seen[0][1] == pytest.approx(2.0 / 8.0) and seen[0][2] > 0
    assert p.timings[0][0] == name and p.timings[0][1] > 0
    write_manifest(p.timings + [(name, 1.0)], tmp_path / "m.json")
    back = load_manifest(tmp_path / "m.json")
    assert back[name][1] == 2 and back[name][0] > 1.0
    assert load_manifest(tmp_path / "missing.json") == {}


@pytest.mark.parametrize("total", [120.0, 330.0, 900.0])
@pytest.mark.parametrize("pace", [0.5, 1.0, 2.5])
@pytest.mark.parametrize("startup", [0.0, 4.0, 12.0])
def test_the_estimate_starts_from_the_manifest_and_follows_this_machine(total, pace, startup):
    """A compile at `pace` times the manifest's seconds after `startup` seconds of imports:
    the first kernel's estimate is near the manifest's total (the first kernels' pace alone
    put a 5.5-minute compile at 11 min), and as kernels finish it comes within 10 % of the
    truth (or start-up + PRIOR_S seconds)."""
    def left_after(done):
        return estimate_left(total, done, startup + pace * done)

    truth = lambda done: pace * (total - done)          # noqa: E731
    first = left_after(0.3)
    assert total * min(pace, 1.0) * 0.7 <= first <= total * max(pace, 1.0) * 1.5
    for done in (0.5 * total, 0.8 * total):
        assert left_after(done) == pytest.approx(truth(done), rel=0.1, abs=startup + PRIOR_S)
    late = 0.9 * total
    assert abs(left_after(late) - truth(late)) <= abs(left_after(0.3 * total)
                                                      - truth(0.3 * total)) + 1e-9
    assert left_after(total) == 0.0 and left_after(1.2 * total) == 0.0
    # the old estimate, elapsed/done alone, from the first kernel: far off after a start-up
    if startup >= 4.0:
        assert (total - 0.3) * (startup + 0.3 * pace) / 0.3 > 3 * first


def test_the_announced_duration_is_the_manifests():
    assert expected_seconds({"a": (100.0, 2), "b": (200.5, 1)}) == 300.5
    assert expected_duration_text({"a": (100.0, 2), "b": (200.5, 1)}, jobs=1) == \
        "about 6 minutes on one core"
    assert expected_duration_text({"a": (100.0, 2), "b": (200.5, 1)}, jobs=2) == \
        "about 3 minutes on 2 cores"
    assert expected_seconds({}) > 0
    m = load_manifest()
    assert expected_seconds() == pytest.approx(sum(s for s, _ in m.values()))


def test_the_manifest_names_the_kernels_a_warm_up_compiles():
    """engine/kernel_manifest.json is what the estimates stand on: it must name the step."""
    m = load_manifest()
    assert any(k.endswith("engine.step.step") for k in m), "run: python -m impulse.engine.warmup " \
        "--write-manifest (with an empty NUMBA_CACHE_DIR) after changing kernels"
    assert sum(s for s, _ in m.values()) > 1.0


def test_compile_from_a_warm_cache_speaks_json_lines_and_no_bar_off_a_terminal():
    out = subprocess.run([sys.executable, "-m", warmup.__name__, "--progress", "jsonl"],
                         capture_output=True, text=True, cwd=ROOT, timeout=300, check=True)
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert events[0]["event"] == "start" and events[0]["fraction"] >= 0.97
    assert [e["feature"] for e in events if e["event"] == "ready"] == list(warmup.FEATURES)
    assert events[-1]["event"] == "done" and events[-1]["kernels"] == 0
    plain = subprocess.run([sys.executable, "-m", "impulse.app", "-q", "compile"],
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert plain.returncode == 0 and "\r" not in plain.stderr + plain.stdout
    assert "%|" not in plain.stderr


def test_one_compile_per_argument_type_not_per_constant():
    jitopts.one_compile_per_type()          # engine/__init__.py did it; a second call is a no-op

    @njit
    def callee(a, k, flag):
        return a[k] if flag else -a[k]

    @njit
    def caller(a):
        return callee(a, 0, True) + callee(a, 1, False) + callee(a, 2, True)

    assert caller(np.array([1.0, 2.0, 3.0])) == pytest.approx(1.0 - 2.0 + 3.0)
    assert len(callee.signatures) == 1 or callee.py_func.__module__.split(".")[0] != "engine"


def test_the_numba_internals_the_kernels_use_are_there():
    """numba's internals the engine relies on for speed (jitopts.NO_REFCOUNT, the literal
    drop, FastCall's entry points) exist in this numba; pyproject.toml pins the range where
    this holds. Without them the engine still runs, slower (a loud failure here, not there)."""
    import numba
    from numba.core import dispatcher

    from impulse.engine import step as stages
    assert jitopts.NO_REFCOUNT == {"_nrt": False}, f"numba {numba.__version__}: no _nrt"
    assert getattr(dispatcher.Dispatcher.get_call_template, "drops_literals", False)
    from numba.core import inline_closurecall
    assert getattr(inline_closurecall.InlineWorker.inline_ir, "quick", False)
    assert isinstance(inline_closurecall.copy, jitopts._BlocksShareOneScope)
    assert stages.step.overloads and all(
        hasattr(cres, "entry_point") for cres in stages.step.overloads.values())


@pytest.mark.parametrize("jobs", [1, 2, 4])
def test_the_estimate_of_a_parallel_compile_starts_from_the_manifest_over_the_jobs(jobs):
    """Compiling in `jobs` processes (engine/compile_plan.py), the first estimate is the
    manifest's one-core seconds over the jobs; as kernels finish, this machine's pace."""
    assert estimate_left(400.0, 0.0, 0.0, jobs) == pytest.approx(400.0 / jobs)
    # 200 of 400 manifest seconds done in 100 s: the pace seen here takes over
    assert estimate_left(400.0, 200.0, 100.0, jobs) == pytest.approx(
        200.0 * (100.0 + PRIOR_S / jobs) / (200.0 + PRIOR_S))


INLINED = textwrap.dedent("""
    import hashlib, sys
    import numpy as np
    import impulse.engine  # noqa: F401  (jitopts.quick_inlining, unless IMPULSE_INLINING=numba)
    from numba import njit
    from numba.core import inline_closurecall

    @njit(inline="always")
    def clamp(x, lo, hi):
        if x < lo:
            return lo
        if x > hi:
            return hi
        return x

    @njit(inline="always")
    def row(a, i, k):
        s = 0.0
        for j in range(a.shape[1]):
            v = clamp(a[i, j] * k, -1.0, 1.0)
            s += v if j % 2 == 0 else -v
        return s

    @njit
    def rows(a, k):
        out = np.empty(a.shape[0])
        for i in range(a.shape[0]):
            out[i] = row(a, i, k) + clamp(a[i, 0], 0.0, 0.5)
        return out

    a = np.linspace(-2.0, 2.0, 35).reshape(7, 5)
    r = rows(a, 0.7)
    llvm = rows.inspect_llvm(rows.signatures[0])
    print(getattr(inline_closurecall.InlineWorker.inline_ir, "quick", False),
          hashlib.sha1(r.tobytes()).hexdigest(),
          hashlib.sha1(llvm.encode()).hexdigest())
""")


@pytest.mark.slow
def test_quick_inlining_gives_numbas_own_code(tmp_path):
    """jitopts.quick_inlining copies an inlined kernel's IR with one memo per copy: the
    compiled code is numba's own, the same LLVM IR as with numba's inliner."""
    script = tmp_path / "inlined.py"
    script.write_text(INLINED)
    runs = {}
    for mode in ("quick", "numba"):
        env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / mode)}
        if mode == "numba":
            env["IMPULSE_INLINING"] = "numba"
        out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        runs[mode] = out.stdout.split()
    assert runs["quick"][0] == "True" and runs["numba"][0] == "False"
    assert runs["quick"][1:] == runs["numba"][1:]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG: Linux")
def test_the_background_compile_dies_with_a_killed_window(tmp_path):
    """A window killed rather than closed (SIGTERM: no stop()) takes its compile with it; the
    stand-in compiler waits on a gate that never opens, so it would run on for ever."""
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {os.path.join(ROOT, "tests")!r})
        from impulse.app.kernel_compile import BackgroundCompile
        from test_first_start import fake_compiler
        from pathlib import Path
        where = Path({str(tmp_path)!r})
        c = BackgroundCompile(fake_compiler(where, where / "never"))
        print(c.proc.pid, flush=True)
        while c.ready != {{"step", "interaction"}}:
            time.sleep(0.02)
        print("ready", flush=True)
        time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    assert parent.stdout.readline().strip() == "ready"      # (the compile runs)
    os.kill(child, 0)
    parent.terminate()
    parent.wait(timeout=10)

    def gone():
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return True
        try:            # (a zombie until the init process reaps it: dead all the same)
            with open(f"/proc/{child}/stat") as f:
                return f.read().split(")")[-1].split()[0] == "Z"
        except FileNotFoundError:
            return True
        return False
    assert wait_for(gone, timeout=5.0)
