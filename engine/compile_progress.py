"""Progress of a first compile of the physics kernels, kernel by kernel, with an estimate.

numba announces each compile it starts and ends ("numba:compile" events; loading from the
cache announces nothing). kernel_manifest.json, written by `python -m impulse.engine.warmup
--write-manifest` after the kernels change, holds the CPU seconds each kernel took in one
measured warm-up (CPU time, not wall time: a warm-up measured beside other work would
otherwise inflate the manifest, 672 s against 423 s on 2026-11-29). Progress is the share of
that total that is done; the estimate scales what is left by how fast this machine has gone
so far (estimate_left). A manifest from older sources only makes the estimate rougher (it
stays below 100 % until the warm-up ends).

A compile that was stopped (the window closed, Ctrl+C) left its finished kernels in numba's
cache; the next one loads them silently and compiles the rest. Their share counts as done
from the start (cached_seconds), so the bar resumes where it stopped and the estimate is of
what is left.
"""
import json
import math
import time
from pathlib import Path

MANIFEST = Path(__file__).with_name("kernel_manifest.json")
UNKNOWN_SECONDS = 0.5          # a kernel the manifest does not name
UNKNOWN_TOTAL = 450.0          # the whole compile when there is no manifest [s of one core]
PRIOR_S = 30.0                 # the estimate starts from the manifest's own pace, weighted as
                               # this many seconds of kernels done at it (estimate_left)


def load_manifest(path=MANIFEST) -> dict:
    """{kernel name: (seconds of all its compiles, how many)}; {} when missing or unreadable."""
    try:
        data = json.loads(Path(path).read_text())
        return {str(k): (float(s), int(n)) for k, (s, n) in data["kernels"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def expected_seconds(manifest=None) -> float:
    """The whole compile's seconds of one core in the manifest's measured warm-up."""
    m = load_manifest() if manifest is None else manifest
    return sum(s for s, _ in m.values()) or UNKNOWN_TOTAL


def cached_seconds(manifest=None, overloads=None) -> float:
    """The manifest seconds of the kernels numba's cache holds already (an interrupted
    compile's work), from the cache's files (kernel_cache.cached_overloads)."""
    m = load_manifest() if manifest is None else manifest
    if overloads is None:
        from .kernel_cache import cached_overloads
        overloads = cached_overloads()
    done = 0.0
    for name, (seconds, count) in m.items():
        # "impulse.engine.solvers.stopping.past_deadline" is cached as
        # "solvers.stopping.past_deadline"; numba's own helpers are never cached
        cached = overloads.get(".".join(name.split(".")[-3:]), 0)
        done += seconds * min(cached, count) / max(count, 1)
    return done


def duration_text(seconds, left=False, jobs=1) -> str:
    """"about 5 minutes on 2 cores" for `seconds` of one core's compiling spread over `jobs`
    processes ("about 3 minutes left on ..." with `left`)."""
    minutes = max(1, math.ceil(seconds / max(jobs, 1) / 60))
    where = "one core" if jobs <= 1 else f"{jobs} cores"
    return f"about {minutes} minute{'s' if minutes > 1 else ''}{' left' if left else ''} on {where}"


def expected_duration_text(manifest=None, jobs=None) -> str:
    """How long a first compile takes, for the messages that announce one."""
    if jobs is None:
        from .compile_plan import planned_jobs
        jobs = planned_jobs()
    return duration_text(expected_seconds(manifest), jobs=jobs)


RESUMED_SHARE = 0.01           # a compile with this much in the cache was stopped before


def compile_heading(manifest=None, overloads=None, jobs=None) -> str:
    """The line that announces a compile: a first one, or one resumed where it stopped
    ("resuming the kernel compile: 62 % done before, about 3 minutes left ...")."""
    m = load_manifest() if manifest is None else manifest
    if jobs is None:
        from .compile_plan import planned_jobs
        jobs = planned_jobs()
    total = expected_seconds(m)
    before = min(cached_seconds(m, overloads), total)
    if before < RESUMED_SHARE * total:
        return ("first start: compiling the physics kernels, once "
                f"({duration_text(total, jobs=jobs)})")
    return (f"resuming the kernel compile: {100 * before / total:.0f} % done before, "
            f"{duration_text(total - before, left=True, jobs=jobs)}")


def estimate_left(total, done, elapsed, jobs=1) -> float:
    """Seconds left when `done` of `total` manifest seconds took `elapsed` here, compiling in
    `jobs` processes. The pace is (elapsed + PRIOR_S / jobs) / (done + PRIOR_S): the
    manifest's own (one core's) over the jobs at first, this machine's as kernels finish.
    The pace of the first kernels alone (elapsed/done) counts the start-up before them
    (numba's first typing): 675 s left at the first kernel of a 327 s compile (2026-11-28),
    'about 11 min' in the launcher."""
    pace = (elapsed + PRIOR_S / max(jobs, 1)) / (done + PRIOR_S)
    return max(total - done, 0.0) * pace


class CompileEvents:
    """While active (`with`), numba's compile events call self._started(event data: the
    dispatcher, its argument types) and self._ended(), nested as the compiles nest."""
    _listener = None

    def __enter__(self):
        from numba.core import event
        owner = self

        class Listener(event.Listener):
            def on_start(self, ev):
                owner._started(ev.data)

            def on_end(self, ev):
                owner._ended()

        self._listener = Listener()
        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc):
        from numba.core import event
        event.unregister("numba:compile", self._listener)
        return False


class CompileProgress(CompileEvents):
    """Listens to numba's compile events while active (`with CompileProgress(report):`).

    report(name, fraction, eta_s) after each kernel: fraction in [0, 0.99], eta_s the
    estimated seconds left (None before the first kernel). `timings` collects (name,
    exclusive CPU seconds) for a new manifest.
    """

    def __init__(self, report=None, manifest=None, already=None, jobs=1):
        self.report = report
        self.jobs = jobs
        self.expected = load_manifest() if manifest is None else manifest
        self.total = expected_seconds(self.expected)
        # expected seconds of the kernels a stopped compile left in the cache
        self.already = min(cached_seconds(self.expected) if already is None else already,
                           self.total)
        self.done = 0.0            # expected seconds of the kernels finished so far
        self.kernels = 0
        self.timings = []
        self._stack = []
        self._t0 = None

    def fraction(self) -> float:
        return min((self.already + self.done) / self.total, 0.99)

    def eta(self) -> float | None:
        if not self.done:
            return None
        return estimate_left(self.total - self.already, self.done,
                             time.perf_counter() - self._t0, self.jobs)

    def __enter__(self):
        self._t0 = time.perf_counter()
        return super().__enter__()

    def _started(self, data):
        f = data["dispatcher"].py_func
        self._stack.append([f"{f.__module__}.{f.__qualname__}", time.process_time(), 0.0])

    def _ended(self):
        name, t0, inner = self._stack.pop()
        took = time.process_time() - t0
        if self._stack:
            self._stack[-1][2] += took
        self.timings.append((name, took - inner))
        self.count(name)

    def count(self, name):
        """One more kernel ready: compiled here, or by a worker (compile_plan.py)."""
        self.kernels += 1
        seconds, count = self.expected.get(name, (UNKNOWN_SECONDS, 1))
        self.done += seconds / max(count, 1)
        if self.report is not None:
            self.report(name, self.fraction(), self.eta())


def write_manifest(timings, path=MANIFEST) -> None:
    """[seconds, compiles] per kernel name from CompileProgress.timings."""
    kernels = {}
    for name, s in timings:
        total, n = kernels.get(name, (0.0, 0))
        kernels[name] = (round(total + s, 3), n + 1)
    text = json.dumps({"kernels": dict(sorted(kernels.items()))}, indent=0)
    Path(path).write_text(text + "\n")
