"""A first start's kernel compile in a background process, so the window answers at once.

The child runs `python -m <engine.warmup> --progress jsonl` and reports each kernel (name,
share done, seconds left) and each feature it has ready; a thread reads those lines. The
launcher shows the progress; a scene opens as soon as the features it needs are ready (the
app then loads them from the cache in about a second).
"""
import json
import logging
import os
import subprocess
import sys
import threading

from impulse.engine import warmup
from impulse.engine.compile_plan import die_with_parent
from impulse.engine.compile_progress import RESUMED_SHARE, compile_heading

log = logging.getLogger(__name__)
# what each feature of engine.warmup compiles, in the bar's words
FEATURE_TITLES = {"step": "time step", "interaction": "drag and live edits",
                  "contacts": "collision detection"}


def _document(path):
    """The scene file's JSON document, or None where it cannot be read (the open or the
    thumbnail reports the problem itself)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def features_for_path(path) -> tuple:
    """The features the scene file at `path` needs (engine.warmup.features_for_document)."""
    doc = _document(path)
    return warmup.FEATURES if doc is None else warmup.features_for_document(doc)


def load_features_for_path(path) -> tuple:
    """The features a scene's load itself runs (before any step): a joint's angles are read
    by a compiled kernel (joints.generic.store_angles_now, compiled with "step"); nothing
    else a load does is compiled. A thumbnail made during the compile waits for them: that
    kernel compiled in the window's thread froze the window for 5-10 s."""
    doc = _document(path)
    return ("step",) if isinstance(doc, dict) and doc.get("joints") else ()


class BackgroundCompile:
    """The compile child and what it has said so far (read from the UI thread)."""

    def __init__(self, command=None, start=True):
        self.fraction = 0.0            # share of the expected compile time done, 0..1
        self.eta_s = None              # estimated seconds left, None before the first kernel
        self.kernel = ""               # the kernel compiled last
        self.kernels = 0
        self.ready = set()             # features compiled
        self.finished = False
        self.error = None              # one line if the child failed
        self.seconds = None
        self.stopped = False           # stop() ended the child (the window closed first)
        self.command = command or [sys.executable, "-m", warmup.__name__, "--progress", "jsonl"]
        self.proc = None
        self._stderr = []
        self.heading = compile_heading()      # reads the manifest and the cache: once
        self.resumed = self.heading.startswith("resuming")
        if start:
            self.start()

    def start(self):
        """Start the child (the viewer does it once its first frame is up: on 2 cores the
        child's start-up would otherwise slow the window's)."""
        if self.proc is not None:
            return
        self.proc = subprocess.Popen(self.command, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                     preexec_fn=_lower_priority if os.name == "posix" else None)
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        threading.Thread(target=self._read, daemon=True).start()

    @classmethod
    def start_if_needed(cls):
        """A BackgroundCompile if any feature is missing from the cache, else None."""
        if warmup.kernels_cached():
            return None
        compiling = cls(start=False)
        log.info("%s (in the background)", compiling.heading)
        return compiling

    @property
    def running(self) -> bool:
        return not self.finished and self.error is None

    def has(self, features) -> bool:
        return set(features) <= self.ready

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self._stderr = (self._stderr + [line.rstrip()])[-20:]

    def _read(self):
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            kind = msg.get("event")
            if kind == "start":                       # a stopped compile's share done before
                self.fraction = float(msg.get("fraction", self.fraction))
                self.resumed = self.fraction >= RESUMED_SHARE
            elif kind == "kernel":
                name = str(msg.get("name", ""))
                if ".engine." in f".{name}":          # not numba's own helpers ("impl")
                    self.kernel = name.split(".engine.", 1)[-1]   # "solvers.rounds.stage"
                self.fraction = float(msg.get("fraction", self.fraction))
                self.eta_s = msg.get("eta_s")
                self.kernels += 1
            elif kind == "ready":
                self.ready.add(msg.get("feature"))
            elif kind == "done":
                self.seconds = msg.get("seconds")
        rc = self.proc.wait()
        if self.stopped:
            log.debug("the kernel compile stopped with the window (exit status %s)", rc)
        elif rc == 0 and self.ready >= set(warmup.FEATURES):
            self.fraction = 1.0
            self.finished = True
            log.info("physics kernels ready in %s s", self.seconds)
        else:
            last = next((s for s in reversed(self._stderr) if s.strip()), f"exit status {rc}")
            self.error = f"compiling the physics kernels failed: {last}"
            log.error("%s", self.error)

    def bar_label(self) -> str:
        """The bar's text: the feature being compiled and its kernel ("time step:
        solvers.rounds.position_stage"), or what the child does before its first compile
        (a resumed one loads what the last compile left, announcing nothing, 12-20 s)."""
        if not self.kernels or not self.kernel:
            return ("loading the kernels compiled before" if self.resumed
                    else "starting the compiler")
        feature = next((f for f in warmup.FEATURES if f not in self.ready), None)
        title = FEATURE_TITLES.get(feature)
        return f"{title}: {self.kernel}" if title else self.kernel

    def share_done(self) -> str:
        """How far the compile is, in a few words: "45 %, about 3 min left"."""
        left = "" if self.eta_s is None else f", about {_duration(self.eta_s)} left"
        return f"{100 * self.fraction:.0f} %{left}"

    def status_line(self) -> str:
        if self.error:
            return self.error
        if self.finished:
            return "physics kernels ready"
        if not self.kernels:
            return self.heading
        what = "resumed compile" if self.resumed else "first start"
        return f"{what}: compiling the physics kernels ({self.share_done()})"

    def stop(self):
        self.stopped = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def _lower_priority():
    """The compile yields the CPU to the window (a 2-core machine has one core for each),
    and on Linux dies with it: a window killed (SIGTERM, a crash) rather than closed left the
    compile running until its next progress line hit the closed pipe, 10-18 s. (The signal
    follows the thread that started the child: the window's, for the app's life.) Its
    workers die with it in turn (compile_plan._worker_start)."""
    os.nice(10)
    die_with_parent()


def _duration(seconds: float) -> str:
    seconds = max(0.0, float(seconds))
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
