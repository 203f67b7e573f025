"""`impulse sweep`: run one scene many times over a grid (or a random sample) of settings and
scene fields, with optional random initial perturbations, in parallel, into one table.

    from impulse.app.sweep import sweep
    rows = sweep("chain8", vary={"h": [0.01, 0.005], "eps_pos": "1e-6:1e-3:4:log"},
                 metrics=["energy_error", "pose:link4"], duration=2.0, out="results.csv")

Each run is `impulse sim --json`'s run (engine/cli.py's loop: the scene validated with its
overrides, `World.run` in parts of `CHUNK_STEPS`, `metrics.RunTally`), so a row's figures are
those of `impulse sim SCENE --set KEY=VALUE ... --json`, bit for bit, plus the metrics asked
for. The table is a list of dicts, one per run in plan order (grid order: the first key
slowest, seeds innermost); `pandas.DataFrame(rows)` makes it a data frame. Columns: `run`
(index in the plan), `run_id` (a hash of what the run is: scene, values, seed, duration,
metrics), one column per varied key, `seed` (with seeds), `status` (`ok`; `unmet`: finished,
some steps with tolerances unmet; `failed`: raised, diverged (the guard stopped a body) or timed
out), `error` (the one-line message of an unmet or failed run), the figures of `impulse sim
--json` (without `settings`), then the metrics' columns.

Backends: "local" (default: worker processes, all cores; each is started once and gets the
scene once), "ray" (Ray actors, one per CPU of the cluster; the scene is put in the object
store once), "serial" (this process, one run after another). Every backend gives the same
table bit for bit, save the timing columns (TIMING_COLUMNS). A run that raises, diverges or
exceeds `timeout` is recorded as `failed` with its message; the others go on. With `out`, the
table is written (durably, every CHECKPOINT_S seconds and at the end) and a later sweep with
the same `out` skips the runs it already holds.
"""
import collections
import contextlib
import copy
import hashlib
import importlib
import io
import json
import logging
import math
import os
import random
import sys
import time

log = logging.getLogger("impulse.sweep")

BACKENDS = ("local", "ray", "serial")
TIMING_COLUMNS = ("wall_time", "realtime_factor", "corrections_per_second")
STATUSES = ("ok", "unmet", "failed")
CHECKPOINT_S = 10.0          # the output file is rewritten at most this often while running
                             # (and then taking at most a tenth of the time)
DEFAULT_PERTURB = 1e-3       # seeds: std. dev. of the velocity perturbation [m/s, rad/s]
FORMATS = (".csv", ".parquet")
COMBINATIONS_CHECKED = 5000  # up to this many runs, every combination is validated first
EXIT_RUNS_FAILED = 4         # the sweep finished, some runs failed (as sim's 4: not all well)


class SweepError(ValueError):
    """Bad input to a sweep (a key, value, metric, option or output file); one line. The
    command line prints it after "impulse sweep: " and exits 2."""


class MissingDependency(SweepError):
    """An optional package is missing; the message says how to install it."""


def _require(module, what, extra):
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependency(f"{what} needs the optional package {module.split('.')[0]!r}: "
                                f"pip install 'impulse[{extra}]'") from None


# ------------------------------------------------------------------ keys and their values
def _split_top(text):
    """`text` split at the commas outside brackets and quotes: "[0,1],[2,3]" -> 2 items."""
    items, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(text):
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = None
        elif c in "\"'":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [s.strip() for s in items]


def parse_value(text):
    """A value as `impulse sim --set` reads it: JSON where it parses, else the string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _number(text):
    v = parse_value(text)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _range(item):
    """"LO:HI:N" -> N values from LO to HI, evenly spaced ("LO:HI:N:log": geometrically);
    whole numbers where LO and HI are and the steps come out whole, else the values between
    the ends rounded to 12 significant digits (1e-6:1e-3:4:log is 1e-6, 1e-5, 1e-4, 1e-3).
    None if `item` is no range."""
    parts = item.split(":")
    if len(parts) not in (3, 4) or (len(parts) == 4 and parts[3] != "log"):
        return None
    lo, hi, n = (_number(p) for p in parts[:3])
    if lo is None or hi is None:
        return None
    if not isinstance(n, int) or n < 1:
        raise SweepError(f"{item}: N in LO:HI:N must be a whole number of at least 1")
    if n == 1:
        return [lo]
    if len(parts) == 4:
        if lo <= 0 or hi <= 0:
            raise SweepError(f"{item}: a log range needs LO and HI above 0")
        return [lo if i == 0 else hi if i == n - 1 else
                _round12(math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * i / (n - 1)))
                for i in range(n)]
    if isinstance(lo, int) and isinstance(hi, int) and (hi - lo) % (n - 1) == 0:
        return [lo + (hi - lo) // (n - 1) * i for i in range(n)]
    return [lo if i == 0 else hi if i == n - 1 else _round12(lo + (hi - lo) * i / (n - 1))
            for i in range(n)]


def _round12(x):
    return float(f"{x:.12g}")


def parse_values(spec):
    """"V1,V2,..." (each JSON where it parses, else a string) and/or "LO:HI:N[:log]" ranges
    -> the list of values, duplicates dropped. A list or tuple is taken as the values."""
    if isinstance(spec, (list, tuple)):
        values = list(spec)
    elif isinstance(spec, str):
        values = []
        for item in _split_top(spec):
            if not item:
                raise SweepError(f"{spec!r}: an empty value")
            r = _range(item)
            values.extend(r if r is not None else [parse_value(item)])
    else:
        values = [spec]
    seen, out = set(), []
    for v in values:
        k = _canonical(v)
        if k not in seen:
            seen.add(k)
            out.append(v)
    if not out:
        raise SweepError("no values")
    return out


def parse_vary(text):
    """--vary KEY=VALUES -> (key, [values])."""
    key, sep, spec = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise SweepError(f"--vary {text}: not KEY=V1,V2,... or KEY=LO:HI:N")
    from impulse.engine.settings import current_name
    current_name(key.removeprefix("settings."), f"--vary {text}")   # warns on an old name
    try:
        return key, parse_values(spec)
    except SweepError as e:
        raise SweepError(f"--vary {text}: {e}") from None


def key_path(key):
    """A key as a path into the scene document: a bare name is a setting (`h` ->
    settings.h, as `impulse sim --set h=...`); a dotted key is a scene field by path, list
    items by name or index (`bodies.ball.material.restitution`, `bodies.0.position.1`)."""
    parts = key.split(".")
    if any(not p for p in parts):
        raise SweepError(f"{key!r} is not a key (a setting or a dotted path into the scene)")
    parts = ["settings", key] if len(parts) == 1 else parts
    if len(parts) == 2 and parts[0] == "settings":     # an old name (settings.RENAMED)
        from impulse.engine.settings import current_name
        parts[1] = current_name(parts[1])
    return parts


def set_path(doc, key, value):
    """Put `value` at `key` (see key_path) into the scene document `doc`, in place; objects on
    the way that are missing are made (the scene's validation then names unknown keys). A
    name with dots matches as a whole (`bodies.ball_e0.3.material.restitution`)."""
    parts = key_path(key)
    node, where, i = doc, "$", 0
    while True:
        if isinstance(node, dict):
            part, i = parts[i], i + 1
            if i == len(parts):
                node[part] = copy.deepcopy(value)
                return
            node = node.setdefault(part, {})
            where += f".{part}"
        elif isinstance(node, list):
            index, i = _item_index(node, parts, i, where, key)
            if i == len(parts):
                node[index] = copy.deepcopy(value)
                return
            node = node[index]
            where += f"[{index}]"
        else:
            raise SweepError(f"{key}: {where} is {json.dumps(node)[:40]}, it has no field "
                             f"{parts[i]!r}")


def _item_index(items, parts, i, where, key):
    """(index of the list item that parts[i:] starts with, the next part's index): by the
    item's name (the longest that matches, dots included), else a number."""
    names = [it.get("name") if isinstance(it, dict) else None for it in items]
    for j in range(len(parts), i, -1):
        name = ".".join(parts[i:j])
        if name in names:
            return names.index(name), j
    part = parts[i]
    if part.lstrip("-").isdigit():
        index = int(part)
        if not -len(items) <= index < len(items):
            raise SweepError(f"{key}: {where} has {len(items)} items, no item {index}")
        return index % len(items), i + 1
    plural = where.rsplit(".", 1)[-1]
    what = {"bodies": "body", "joints": "joint"}.get(plural, "item")
    known = ", ".join(str(n) for n in names if n is not None)
    raise SweepError(f"{key}: no {what} named {part!r} in the scene"
                     + (f" ({where}: {_cut(known, 80)})" if known else ""))


def _cut(text, n):
    return text if len(text) <= n else text[:n - 3] + "..."


def _canonical(x):
    return json.dumps(x, sort_keys=True, separators=(",", ":"), allow_nan=True)


# ------------------------------------------------------------------ metrics
def _pose_columns(body):
    return [f"{body}.{c}" for c in ("x", "y", "z", "qw", "qx", "qy", "qz")]


METRICS = {
    "energy_error": "energy at the end minus at the start [J] (Schmitt's Table 9.5, signed)",
    "energy_error_at:T1,T2,...": "the same at these times [s]: columns energy_error@T",
    "max_penetration": "deepest contact penetration after a step [m] (contact_depth_max)",
    "pose:BODY": "the body's pose at the end: BODY.x, .y, .z, .qw, .qx, .qy, .qz "
                 "(its scene frame, as a scene file gives it)",
    "position:BODY": "BODY.x, .y, .z at the end",
    "velocity:BODY": "BODY.vx, .vy, .vz, .wx, .wy, .wz at the end",
    "joint:NAME": "the joint's free coordinates at the end: NAME.q1, NAME.q2 (rad or m)",
}


class Metric:
    """A metric named by `--metric`: its name, argument and the columns it adds."""

    def __init__(self, spec, doc, duration):
        self.spec = spec
        if callable(spec):
            self.kind, self.arg = "callable", spec
            self.columns = []          # the callable's own: found when it runs
            self.id = f"{getattr(spec, '__module__', '')}.{getattr(spec, '__qualname__', spec)}"
            return
        if not isinstance(spec, str):
            raise SweepError(f"metric {spec!r}: not a name or a function")
        self.id = spec
        kind, sep, arg = spec.partition(":")
        self.kind, self.arg = kind, arg
        bodies = [b.get("name") for b in doc.get("bodies", [])]
        joints = [j.get("name") for j in doc.get("joints", [])]
        if kind in ("energy_error", "max_penetration") and not sep:
            self.columns = [kind]
        elif kind == "energy_error_at" and arg:
            try:
                self.times = [float(t) for t in arg.split(",")]
            except ValueError:
                raise SweepError(f"--metric {spec}: {arg!r} is not a list of times") from None
            if any(not 0 <= t <= duration for t in self.times):
                raise SweepError(f"--metric {spec}: times must lie within 0 ... --duration "
                                 f"({duration:g} s)")
            self.columns = [f"energy_error@{t:g}" for t in self.times]
        elif kind in ("pose", "position", "velocity") and arg:
            if arg not in bodies:
                raise SweepError(f"--metric {spec}: no body named {arg!r} in the scene "
                                 f"(bodies: {_cut(', '.join(map(str, bodies)), 80)})")
            self.columns = {"pose": _pose_columns(arg), "position": _pose_columns(arg)[:3],
                            "velocity": [f"{arg}.{c}" for c in
                                         ("vx", "vy", "vz", "wx", "wy", "wz")]}[kind]
        elif kind == "joint" and arg:
            if arg not in joints:
                raise SweepError(f"--metric {spec}: no joint named {arg!r} in the scene "
                                 f"(joints: {_cut(', '.join(map(str, joints)), 80)})")
            self.columns = [f"{arg}.q1", f"{arg}.q2"]
        else:
            raise SweepError(f"unknown metric {spec!r} (metrics: {', '.join(METRICS)}; every "
                             f"figure of impulse sim --json is a column anyway)")

    def values(self, world, summary, energy_at):
        """{column: value} of a finished run."""
        if self.kind == "callable":
            out = self.arg(world, summary)
            if not isinstance(out, dict):
                out = {getattr(self.arg, "__name__", "metric"): out}
            return out
        if self.kind == "energy_error":
            return {"energy_error": summary["energy_final"] - summary["energy_initial"]}
        if self.kind == "energy_error_at":
            return {c: energy_at.get(t) for c, t in zip(self.columns, self.times, strict=True)}
        if self.kind == "max_penetration":
            return {"max_penetration": summary["contact_depth_max"]}
        if self.kind == "joint":
            return dict(zip(self.columns, world.joint_coordinates(self.arg), strict=True))
        entry = world.body_entry(self.arg)
        if self.kind == "velocity":
            vals = entry.get("velocity", [0.0] * 3) + entry.get("angular_velocity", [0.0] * 3)
        else:
            vals = entry["position"] + (entry["orientation"] if self.kind == "pose" else [])
        return dict(zip(self.columns, vals, strict=True))


# ------------------------------------------------------------------ the plan
class Plan:
    """What a sweep runs: the scene document, its varied keys and the runs, each a dict
    {index, run_id, assign: {key: value}, seed}. Made (and so validated) before any run."""

    def __init__(self, doc, source, keys, runs, seeds, perturb, duration, metrics):
        self.doc, self.source, self.keys, self.runs = doc, source, keys, runs
        self.seeds, self.perturb, self.duration, self.metrics = seeds, perturb, duration, metrics

    @property
    def columns(self):
        """The table's columns known before running (callable metrics add theirs later)."""
        head = ["run", "run_id", *self.keys] + (["seed"] if self.seeds else []) \
            + ["status", "error"]
        return head + summary_figures() + [c for m in self.metrics for c in m.columns]

    def payload(self):
        """What every worker gets once: the scene and how to run and measure it."""
        return {"doc": self.doc, "source": self.source, "perturb": self.perturb,
                "duration": self.duration, "metrics": [m.spec for m in self.metrics]}


_FIGURES = []


def summary_figures():
    """The figures of `impulse sim --json` that become columns (all but `settings`)."""
    if not _FIGURES:
        from impulse.engine.metrics import RunTally
        from impulse.engine.world import World
        _FIGURES.extend(k for k in RunTally(0.0).summary(World(), "") if k != "settings")
    return list(_FIGURES)


def load_document(scene):
    """(document, source name) of a scene: a file, a bundled scene's name or a document."""
    from impulse.engine.scene import read_document, validate
    if isinstance(scene, dict):
        doc, source = copy.deepcopy(scene), "<scene>"
    else:
        from impulse.engine.scenes_list import UnknownScene, resolve_scene
        try:
            path = resolve_scene(os.fspath(scene))
        except UnknownScene as e:
            raise SweepError(str(e)) from None
        doc, source = read_document(path), path
    validate(doc, source)
    return doc, source


def make_plan(scene, vary=None, *, metrics=(), sample=None, sample_seed=0, seeds=0,
              perturb=DEFAULT_PERTURB, duration=10.0, option="--vary"):
    """Validate everything and list the runs. `vary`: {key: values} (a list, or a string
    "V1,V2" / "LO:HI:N[:log]"), or a list of "KEY=VALUES" strings. Raises SweepError (or the
    engine's SceneError for the scene file) before anything runs."""
    from impulse.engine.scene import SceneError, validate
    doc, source = load_document(scene)
    if isinstance(vary, (list, tuple)):
        pairs = [parse_vary(v) for v in vary]
    else:
        pairs = []
        for k, v in (vary or {}).items():
            try:
                pairs.append((k, parse_values(v)))
            except SweepError as e:
                raise SweepError(f"{option} {k}: {e}") from None
    keys = [k for k, _ in pairs]
    dupes = [k for k, n in collections.Counter(keys).items() if n > 1]
    if dupes:
        raise SweepError(f"{option} {dupes[0]}: the key is given twice")
    if not _positive_number(duration):
        raise SweepError(f"--duration {duration}: must be a positive number of seconds")
    if not (isinstance(seeds, int) and seeds >= 0):
        raise SweepError(f"--seeds {seeds}: must be a whole number, 0 or more")
    if seeds and not (_positive_number(perturb) and perturb <= 1e3):
        raise SweepError(f"--perturb {perturb}: must be a number above 0 (and at most 1e3)")
    if sample is not None and not (isinstance(sample, int) and sample >= 1):
        raise SweepError(f"--sample {sample}: must be a whole number of at least 1")
    # each value alone, validated as `impulse sim --set` validates an override
    for key, values in pairs:
        for v in values:
            label = f"{option} {key}={_canonical(v) if not isinstance(v, str) else v}"
            d = copy.deepcopy(doc)
            try:
                set_path(d, key, v)
            except SweepError as e:
                raise SweepError(f"{option} {e}") from None
            try:
                validate(d, label)
            except SceneError as e:
                raise SweepError(str(e)) from None
    metric_objs = [Metric(m, doc, float(duration)) for m in metrics]
    names = [c for m in metric_objs for c in m.columns]
    clash = [c for c in names if names.count(c) > 1 or c in keys]
    if clash:
        raise SweepError(f"--metric: column {clash[0]!r} would be there twice")
    # the grid, or a sample of it
    sizes = [len(vals) for _, vals in pairs]
    total = math.prod(sizes)
    if sample is not None and sample < total:
        picks = sorted(random.Random(sample_seed).sample(range(total), sample))
    else:
        picks = range(total)
    base_id = {"scene": hashlib.sha256(_canonical(doc).encode()).hexdigest(),
               "duration": float(duration), "metrics": [m.id for m in metric_objs],
               "perturb": float(perturb) if seeds else None}
    runs = []
    for flat in picks:
        combo, rest = [], flat
        for size in reversed(sizes):
            rest, i = divmod(rest, size)
            combo.append(i)
        assign = {k: vals[i] for (k, vals), i in zip(pairs, reversed(combo), strict=True)}
        for seed in (range(seeds) if seeds else [None]):
            ident = _canonical({**base_id, "assign": assign, "seed": seed})
            runs.append({"index": len(runs), "assign": assign, "seed": seed,
                         "run_id": hashlib.sha256(ident.encode()).hexdigest()[:16]})
    # every combination (values that pass alone may still clash together); a grid beyond
    # COMBINATIONS_CHECKED finds such a clash in the run, as a failed run
    if 1 < len(pairs) and len(runs) <= COMBINATIONS_CHECKED:
        seen = set()
        for r in runs:
            if r["seed"] not in (None, 0):
                continue
            d = variant_document(doc, r["assign"])
            label = f"{option} " + " ".join(f"{k}={_canonical(v)}" for k, v in r["assign"].items())
            if label not in seen:
                seen.add(label)
                try:
                    validate(d, label)
                except SceneError as e:
                    raise SweepError(str(e)) from None
    return Plan(doc, source, keys, runs, seeds, perturb, float(duration), metric_objs)


def _positive_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def variant_document(doc, assign, seed=None, perturb=DEFAULT_PERTURB):
    """The scene document of one run: `assign`'s values put in, and with a seed, every
    dynamic body's initial velocity and angular velocity moved by normal random numbers of
    standard deviation `perturb` [m/s, rad/s] (numpy's default_rng(seed), bodies in file
    order, 6 numbers each): the same seed gives the same perturbation on every machine."""
    d = copy.deepcopy(doc)
    for k, v in assign.items():
        set_path(d, k, v)
    if seed is not None:
        import numpy as np
        rng = np.random.default_rng(seed)
        for body in d.get("bodies", []):
            if body.get("fixed", False):
                continue
            dv = rng.normal(0.0, perturb, 6)
            for name, part in (("velocity", dv[:3]), ("angular_velocity", dv[3:])):
                body[name] = [float(a + b) for a, b in zip(body.get(name, [0.0] * 3), part,
                                                             strict=True)]
    return d


# ------------------------------------------------------------------ one run
def _row_base(task):
    row = {"run": task["index"], "run_id": task["run_id"], **task["assign"]}
    if task["seed"] is not None:
        row["seed"] = task["seed"]
    return row


def failed_row(task, message):
    return {**_row_base(task), "status": "failed", "error": message}


def run_one(payload, task):
    """One run of the sweep: its row. Never raises (a failure is the row's status)."""
    try:
        return _run(payload, task)
    except KeyboardInterrupt:
        raise
    except _Timeout as e:
        return failed_row(task, str(e))
    except Exception as e:  # noqa: BLE001 - recorded as the run's failure
        log.debug("run %s failed", task["index"], exc_info=True)
        return failed_row(task, f"{type(e).__name__}: {e}".splitlines()[0])


def _run(payload, task):
    """engine/cli.py's run_sim without its printing: the same loop and figures."""
    from impulse.engine import strict_json
    from impulse.engine.cli import problems_line, run_world
    from impulse.engine.scene import scene_to_world
    source = payload["source"]
    doc = variant_document(payload["doc"], task["assign"], task["seed"], payload["perturb"])
    world = scene_to_world(doc, source)
    world.meta["path"] = source
    world.threads = 1     # the sweep runs a process per core: its islands take no more
    metrics = [Metric(m, payload["doc"], payload["duration"]) for m in payload["metrics"]]
    h = world.settings.h
    steps = max(1, int(round(payload["duration"] / h)))
    times = sorted({t for m in metrics if m.kind == "energy_error_at" for t in m.times})
    marks = [(min(steps, int(round(t / h))), t) for t in times]
    energy_at = {t: 0.0 for s, t in marks if s == 0}
    e0 = sum(world.energy())

    def mark(result, done):
        for s, t in marks:
            if done < s <= done + len(result.energy) - 1:
                energy_at[t] = float(result.energy[s - done]) - e0

    tally = run_world(world, steps, on_part=mark if marks else None)
    summary = tally.summary(world, os.path.basename(source))
    row = _row_base(task)
    row["status"], row["error"] = "ok", None
    if world.problems:
        row["status"] = "failed"
        row["error"] = "diverged: " + problems_line(world)
    elif summary["tolerance_unmet_steps"]:
        row["status"] = "unmet"
        row["error"] = (f"tolerances unmet in {summary['tolerance_unmet_steps']} of "
                        f"{summary['steps']} steps (first: step {summary['first_unmet_step']})")
    for k, v in summary.items():
        if k != "settings":
            row[k] = v
    for m in metrics:
        row.update(m.values(world, summary, energy_at))
    return strict_json.plain(row)


def _warm(payload):
    """Load the kernels a run of this scene needs (a worker's first run is then timed as the
    others are)."""
    try:
        from impulse.engine.scene import scene_to_world
        scene_to_world(copy.deepcopy(payload["doc"]), payload["source"]).run(1)
    except Exception:  # noqa: BLE001 - the runs report their own problems
        log.debug("warm-up failed", exc_info=True)


class _Timeout(Exception):
    pass


# ------------------------------------------------------------------ backends
def _serial(payload, tasks, timeout, on_row, workers=None):
    """This process, one run after another. A timeout is checked by SIGALRM, where there is
    one and this is the main thread, between the engine's compiled calls (a world without
    contacts runs up to CHUNK_STEPS steps in one call)."""
    import signal
    import threading
    alarm = timeout and hasattr(signal, "setitimer") and \
        threading.current_thread() is threading.main_thread()
    if tasks:
        _warm(payload)
    for task in tasks:
        if not alarm:
            on_row(run_one(payload, task))
            continue

        def expired(signum, frame):
            raise _Timeout(f"timed out after {timeout:g} s")
        old = signal.signal(signal.SIGALRM, expired)
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout)
            row = run_one(payload, task)
        except _Timeout as e:           # fired as the run returned
            row = failed_row(task, str(e))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        on_row(row)


def _worker_main(conn, payload):
    """A local worker process: warm up, say ready, then run the tasks it is sent until None."""
    try:
        _warm(payload)
        conn.send(("ready", None))
        while True:
            task = conn.recv()
            if task is None:
                return
            conn.send(("row", run_one(payload, task)))
    except (KeyboardInterrupt, EOFError, BrokenPipeError):
        return


class _LocalPool:
    """Worker processes (spawned: no fork of a process with threads), one run at a time each;
    a worker past its run's time limit is killed and replaced."""

    def __init__(self, payload, size):
        import multiprocessing
        self.mp = multiprocessing.get_context("spawn")
        self.payload, self.size = payload, size

    def start(self):
        parent, child = self.mp.Pipe()
        proc = self.mp.Process(target=_worker_main, args=(child, self.payload), daemon=True,
                               name="impulse-sweep-worker")
        proc.start()
        child.close()
        return {"proc": proc, "conn": parent}

    def submit(self, slot, task):
        slot["conn"].send(task)

    def wait(self, slots, timeout):
        """[(slot, kind, value)] of the slots that answered: ("ready"|"row", value) or
        ("died", message)."""
        from multiprocessing.connection import wait
        by_conn = {id(s["conn"]): s for s in slots}
        out = []
        for conn in wait([s["conn"] for s in slots], timeout):
            slot = by_conn[id(conn)]
            try:
                kind, value = conn.recv()
            except (EOFError, OSError):
                slot["proc"].join(5)
                out.append((slot, "died", f"the worker process died (exit code "
                                          f"{slot['proc'].exitcode})"))
                continue
            out.append((slot, kind, value))
        return out

    def kill(self, slot):
        slot["proc"].kill()
        slot["proc"].join(5)
        slot["conn"].close()

    def close(self, slots):
        for s in slots:
            with contextlib.suppress(OSError):
                s["conn"].send(None)
        for s in slots:
            s["proc"].join(2)
            if s["proc"].is_alive():
                s["proc"].kill()
                s["proc"].join(2)
            s["conn"].close()


class _SweepActor:
    """A Ray actor: the scene once, then one run per call."""

    def __init__(self, payload):
        self.payload = payload
        _warm(payload)

    def ready(self):
        return True

    def run(self, task):
        return run_one(self.payload, task)


class _RayPool:
    """Ray actors, one CPU each; a worker past its run's time limit is killed (ray.kill) and
    replaced."""

    def __init__(self, ray, payload, size):
        self.ray = ray
        self.payload = ray.put(payload)          # into the object store once
        self.actor = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(_SweepActor)
        self.size = size

    def start(self):
        actor = self.actor.remote(self.payload)
        return {"actor": actor, "ref": actor.ready.remote(), "kind": "ready"}

    def submit(self, slot, task):
        slot["ref"], slot["kind"] = slot["actor"].run.remote(task), "row"

    def wait(self, slots, timeout):
        ray = self.ray
        by_ref = {s["ref"]: s for s in slots}
        ready, _ = ray.wait(list(by_ref), num_returns=1, timeout=timeout)
        if ready:
            ready, _ = ray.wait(list(by_ref), num_returns=len(by_ref), timeout=0)
        out = []
        for ref in ready:
            slot = by_ref[ref]
            try:
                out.append((slot, slot["kind"], ray.get(ref)))
            except ray.exceptions.RayError as e:
                text = str(e).strip().splitlines()
                out.append((slot, "died", f"the Ray worker died ({type(e).__name__}: "
                                          f"{text[0] if text else ''})"))
        return out

    def kill(self, slot):
        with contextlib.suppress(Exception):           # already gone
            self.ray.kill(slot["actor"], no_restart=True)

    def close(self, slots):
        for s in slots:
            with contextlib.suppress(Exception):
                self.ray.kill(s["actor"], no_restart=True)


def _schedule(pool, tasks, timeout, on_row):
    """Hand `tasks` to the pool's workers one at a time each; a run past `timeout` seconds
    is recorded as failed and its worker replaced; so is a run whose worker died."""
    queue = collections.deque(tasks)
    slots = [pool.start() for _ in range(min(pool.size, len(queue)))]
    running = {}                        # id(slot) -> (task, started)
    start_failures = 0

    def hand(slot):
        if queue:
            task = queue.popleft()
            pool.submit(slot, task)
            running[id(slot)] = (task, time.monotonic())
            return True
        return False

    def replace(slot):
        slots.remove(slot)
        if queue:
            slots.append(pool.start())

    try:
        while slots:
            wait = None
            if timeout and running:
                wait = max(0.0, min(t0 for _, t0 in running.values()) + timeout
                           - time.monotonic())
            for slot, kind, value in pool.wait(slots, wait):
                if kind == "ready":
                    start_failures = 0
                    if not hand(slot):
                        pool.close([slot])
                        slots.remove(slot)
                elif kind == "row":
                    running.pop(id(slot))
                    on_row(value)
                    if not hand(slot):
                        pool.close([slot])
                        slots.remove(slot)
                else:                               # died
                    entry = running.pop(id(slot), None)
                    if entry is None:
                        start_failures += 1
                        if start_failures >= 3:
                            raise RuntimeError(f"workers cannot start: {value}" + (
                                "; a script that calls sweep() needs it under `if __name__ == "
                                "'__main__':` (worker processes are spawned and import the "
                                "script)" if isinstance(pool, _LocalPool) else ""))
                    else:
                        on_row(failed_row(entry[0], value))
                    pool.kill(slot)
                    replace(slot)
            if timeout:
                now = time.monotonic()
                for slot in list(slots):
                    entry = running.get(id(slot))
                    if entry and now - entry[1] >= timeout:
                        running.pop(id(slot))
                        pool.kill(slot)
                        on_row(failed_row(entry[0], f"timed out after {timeout:g} s"))
                        replace(slot)
    finally:
        if slots:
            pool.close(slots)


def _local(payload, tasks, timeout, on_row, workers=None):
    size = workers or _cores()
    _schedule(_LocalPool(payload, size), tasks, timeout, on_row)


def _ray(payload, tasks, timeout, on_row, workers=None, address=None):
    ray = _require("ray", "--ray" if address is not None else "the ray backend", "ray")
    started = False
    if not ray.is_initialized():
        kwargs = {"logging_level": logging.ERROR, "log_to_driver": False}
        if address:
            ray.init(address=address, **kwargs)
        elif os.environ.get("RAY_ADDRESS"):
            ray.init(**kwargs)
        else:
            ray.init(address="local", num_cpus=workers or _cores(), include_dashboard=False,
                     **kwargs)
        started = True
    try:
        size = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        _schedule(_RayPool(ray, payload, size), tasks, timeout, on_row)
    finally:
        if started:
            ray.shutdown()


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


# ------------------------------------------------------------------ tables on disk
def _cell(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return v
    return json.dumps(v)


STRING_COLUMNS = ("run_id", "status", "error", "scene")


def _uncell(text, column=None):
    if text == "":
        return None
    if column in STRING_COLUMNS:
        return text
    if text in ("nan", "inf", "-inf"):
        return float(text)
    return parse_value(text)


def write_table(path, rows, columns):
    """Write the rows (dicts) as CSV or Parquet, durably (engine/durable.py)."""
    from impulse.engine.durable import open_for_write
    if str(path).lower().endswith(".parquet"):
        data = _parquet_bytes(rows, columns)
        with open_for_write(path, binary=True) as f:
            f.write(data)
        return
    import csv
    with open_for_write(path, newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for r in rows:
            w.writerow([_cell(r.get(c)) for c in columns])


def _parquet_bytes(rows, columns):
    pa = _require("pyarrow", "a .parquet table", "sweep")
    pq = importlib.import_module("pyarrow.parquet")
    arrays, as_json = [], []
    for c in columns:
        values = [r.get(c) for r in rows]
        kinds = {type(v) for v in values if v is not None}
        if len(kinds) <= 1 and kinds <= {bool, int, float, str}:
            arrays.append(pa.array(values, type=pa.null() if not kinds else None))
        else:                                   # mixed or nested: JSON text, marked
            as_json.append(c)
            arrays.append(pa.array([None if v is None else json.dumps(v) for v in values],
                                   type=pa.string()))
    table = pa.Table.from_arrays(arrays, names=list(columns))
    table = table.replace_schema_metadata({"impulse.sweep.json_columns": json.dumps(as_json)})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def read_table(path):
    """(rows, columns) of a table written by write_table."""
    if str(path).lower().endswith(".parquet"):
        _require("pyarrow", "a .parquet table", "sweep")
        pq = importlib.import_module("pyarrow.parquet")
        table = pq.read_table(path)
        meta = table.schema.metadata or {}
        as_json = set(json.loads(meta.get(b"impulse.sweep.json_columns", b"[]")))
        rows = table.to_pylist()
        for r in rows:
            for c in as_json:
                if r.get(c) is not None:
                    r[c] = json.loads(r[c])
        return rows, list(table.column_names)
    import csv
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        columns = next(reader, None) or []
        rows = [{c: _uncell(v, c) for c, v in zip(columns, line, strict=False)}
                for line in reader]
    return rows, columns


def table_keys(columns):
    """The varied keys of a table: its columns between run_id and seed/status."""
    try:
        start, end = columns.index("run_id") + 1, columns.index("status")
    except ValueError:
        raise SweepError("not a sweep table (no run_id and status columns)") from None
    return [c for c in columns[start:end] if c != "seed"]


# ------------------------------------------------------------------ the sweep
def _check_out(out):
    from impulse.engine.durable import check_writable
    if not str(out).lower().endswith(FORMATS):
        raise SweepError(f"--out {out}: give a file ending in .csv or .parquet")
    if str(out).lower().endswith(".parquet"):
        _require("pyarrow", "--out .parquet", "sweep")
    check_writable(out)


def _resume(plan, out, retry_failed):
    """{run_id: row} of the runs `out` already holds (SweepError where it holds runs of
    another sweep)."""
    if not out or not os.path.exists(out):
        return {}
    try:
        rows, columns = read_table(out)
        table_keys(columns)
    except SweepError as e:
        raise SweepError(f"--out {out}: {e}; give another --out") from None
    except Exception as e:  # noqa: BLE001 - a damaged or foreign file
        raise SweepError(f"--out {out}: cannot read it as a sweep table ({type(e).__name__}: "
                         f"{e}); give another --out") from None
    ids = {r["run_id"] for r in plan.runs}
    foreign = [r for r in rows if r.get("run_id") not in ids]
    if foreign:
        raise SweepError(f"--out {out} holds {len(foreign)} run(s) of another sweep (another "
                         f"scene, duration, metric, key or value); give another --out or "
                         f"remove it")
    return {r["run_id"]: r for r in rows
            if r.get("status") in STATUSES and not (retry_failed and r["status"] == "failed")}


def run_plan(plan, *, backend="local", workers=None, address=None, timeout=None, out=None,
             retry_failed=False, progress=None):
    """Run a plan (make_plan) and return its table; see sweep()."""
    if backend not in BACKENDS:
        raise SweepError(f"unknown backend {backend!r} (backends: {', '.join(BACKENDS)})")
    if timeout is not None and not _positive_number(timeout):
        raise SweepError(f"--timeout {timeout}: must be a positive number of seconds")
    if workers is not None and not (isinstance(workers, int) and workers >= 1):
        raise SweepError(f"--workers {workers}: must be a whole number of at least 1")
    if out:
        _check_out(out)
    if backend == "ray":
        _require("ray", "--ray", "ray")
    done = _resume(plan, out, retry_failed)
    tasks = [r for r in plan.runs if r["run_id"] not in done]
    by_id = {r["run_id"]: r for r in plan.runs}
    rows = {}
    for run_id, row in done.items():
        row["run"] = by_id[run_id]["index"]
        rows[run_id] = row
    columns = plan.columns
    if _kernels_here(backend, address):
        _ensure_kernels()
    counts = collections.Counter()
    bar = _progress_bar(len(tasks), progress)
    next_write = [time.monotonic() + CHECKPOINT_S]

    def write():
        started = time.monotonic()
        if out:
            ordered = [rows[r["run_id"]] for r in plan.runs if r["run_id"] in rows]
            cols = columns + [c for r in ordered for c in r if c not in columns]
            write_table(out, ordered, list(dict.fromkeys(cols)))
        now = time.monotonic()              # a big table: at most a tenth of the time writing
        next_write[0] = now + max(CHECKPOINT_S, 9 * (now - started))

    def on_row(row):
        if first[0] is None:
            first[0] = time.perf_counter() - t0
        rows[row["run_id"]] = row
        counts[row["status"]] += 1
        if bar is not None:
            bar.set_postfix_str(f"ok {counts['ok'] + counts['unmet']}, failed "
                                f"{counts['failed']}, left {len(tasks) - sum(counts.values())}",
                                refresh=False)
            bar.update(1)
        if out and time.monotonic() > next_write[0]:
            write()

    t0, first = time.perf_counter(), [None]
    try:
        if tasks:
            payload = plan.payload()
            if backend == "serial":
                _serial(payload, tasks, timeout, on_row)
            elif backend == "local":
                _local(payload, tasks, timeout, on_row, workers)
            else:
                _ray(payload, tasks, timeout, on_row, workers, address)
    finally:
        if bar is not None:
            bar.close()
        write()                      # what finished, also when interrupted
    ordered = [rows[r["run_id"]] for r in plan.runs]
    cols = list(dict.fromkeys(columns + [c for r in ordered for c in r]))
    return SweepTable([{c: r.get(c) for c in cols} for r in ordered], cols,
                      SweepStats(len(plan.runs), len(tasks), counts, time.perf_counter() - t0,
                                 first[0]))


class SweepStats:
    """What run_plan did: runs in the plan, runs made now (the others were in `out`), their
    statuses, seconds in all and until the first run had finished (workers' start included)."""

    def __init__(self, total, ran, counts, seconds, first_s=None):
        self.total, self.ran, self.seconds, self.first_s = total, ran, seconds, first_s
        self.ok, self.unmet, self.failed = counts["ok"], counts["unmet"], counts["failed"]

    @property
    def runs_per_minute(self):
        return 60.0 * self.ran / self.seconds if self.seconds > 0 and self.ran else None


class SweepTable(list):
    """The table of a sweep: a list of dicts (one per run, every column in each) with
    `columns` (their order) and `stats` (SweepStats: how many ran now, failed, how long)."""

    def __init__(self, rows, columns, stats):
        super().__init__(rows)
        self.columns, self.stats = columns, stats


def _kernels_here(backend, address):
    """Whether the runs use this machine's kernel cache: every backend but Ray on a cluster
    named by an address (whose nodes each need `impulse compile`)."""
    return backend != "ray" or not (address or os.environ.get("RAY_ADDRESS"))


def _ensure_kernels():
    """The physics kernels in the cache before workers start (else each would compile)."""
    from impulse.engine import warmup
    if not warmup.kernels_cached():
        from impulse.engine.compile_progress import compile_heading
        log.info("%s, before the runs", compile_heading())
        warmup.main(["--progress", "none", "--quiet"])


def _progress_bar(total, progress):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress or not total:
        return None
    from tqdm import tqdm
    return tqdm(total=total, desc="sweep", unit="run", file=sys.stderr, dynamic_ncols=True,
                bar_format="{desc}: {n_fmt}/{total_fmt} |{bar}| "
                           "[{elapsed}<{remaining}, {rate_fmt}{postfix}]",
                postfix=f"ok 0, failed 0, left {total}")


def sweep(scene, vary=None, *, metrics=(), duration=10.0, sample=None, sample_seed=0, seeds=0,
          perturb=DEFAULT_PERTURB, backend="local", workers=None, address=None, timeout=None,
          out=None, retry_failed=False, progress=None):
    """Run `scene` (a file, a bundled scene's name or a scene document) once per variant and
    return the table: a list of dicts, one per run in grid order (module docstring).

    vary: {key: values}, values a list or a string "V1,V2" / "LO:HI:N" / "LO:HI:N:log"; a
      key is a setting (`h`, `eps_pos`, `solver`) or a scene field by path
      (`bodies.ball.material.restitution`).
    metrics: names (METRICS) or functions f(world, summary) -> {column: value} or a value.
      Functions must be importable by name in the workers (defined at a module's top level).
    sample: run a random sample of N variants of the grid (random.Random(sample_seed)).
    seeds: each variant N times, seed 0..N-1, with its bodies' initial velocities perturbed
      (variant_document; `perturb` is the standard deviation).
    backend: "local" (worker processes; `workers`, default all cores), "ray" (`address`, or
      RAY_ADDRESS, or a new local instance; an initialised Ray is used as it is), "serial".
    timeout: seconds a run may take; a run past it is recorded as failed.
    out: .csv or .parquet; written as runs finish, and runs it already holds are not run
      again (those that failed only with retry_failed).
    Raises SweepError (a ValueError) for bad input before any run starts."""
    plan = make_plan(scene, vary, metrics=metrics, sample=sample, sample_seed=sample_seed,
                     seeds=seeds, perturb=perturb, duration=duration, option="vary")
    return run_plan(plan, backend=backend, workers=workers, address=address, timeout=timeout,
                    out=out, retry_failed=retry_failed, progress=progress)


# ------------------------------------------------------------------ plot
def plot(rows, x, y, out, keys=None, title=None):
    """A PNG of column `y` over the varied key `x`, one line per value of the other varied
    keys (and seed); failed runs and missing values are left out. Axes are logarithmic
    where all values are positive and span more than a factor of 10. Returns `out`."""
    matplotlib = _require("matplotlib", "--plot", "sweep")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from impulse.engine.durable import write_file
    keys = list(keys if keys is not None else [])
    others = [k for k in keys + (["seed"] if rows and "seed" in rows[0] else []) if k != x]
    lines = {}
    for r in rows:
        xv, yv = r.get(x), r.get(y)
        if r.get("status") == "failed" or not _plottable(xv) or not _plottable(yv):
            continue
        label = ", ".join(f"{k} = {_short(r.get(k))}" for k in others)
        lines.setdefault(label, []).append((xv, yv))
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    try:
        for label, pts in lines.items():
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=4,
                    label=label or None)
        xs = [p[0] for pts in lines.values() for p in pts]
        ys = [p[1] for pts in lines.values() for p in pts]
        if _log_axis(xs):
            ax.set_xscale("log")
        if _log_axis(ys):
            ax.set_yscale("log")
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        if title:
            ax.set_title(title)
        if any(lines):
            ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
    finally:
        plt.close(fig)
    write_file(out, buf.getvalue())
    return out


def _plottable(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _short(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


def _log_axis(vals):
    return bool(vals) and min(vals) > 0 and max(vals) / min(vals) > 10


def default_plot_path(out, x, y):
    stem = os.path.splitext(out)[0] if out else "sweep"
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in f"{y}_over_{x}")
    return f"{stem}_{safe}.png"


# ------------------------------------------------------------------ command line
EPILOG = """\
KEY is a setting (h, eps_pos, solver, ...; as impulse sim --set) or a scene field by its
path, list items by name or index (bodies.ball.material.restitution, bodies.0.mass).
VALUES: V1,V2,... (JSON where it parses, else a string: solver=iterative,tree) and/or
LO:HI:N (N values evenly spaced from LO to HI; LO:HI:N:log geometrically).

examples:
  impulse sweep chain8 --vary h=0.02,0.01,0.005 --vary eps_pos=1e-6:1e-3:4:log \\
      --duration 10 --metric energy_error --out table94.csv
  impulse sweep table94.csv --plot h energy_abs_drift_mean     (from the table: no runs)
  impulse sweep bouncing_balls --vary bodies.ball_e0.3.material.restitution=0:1:5 \\
      --metric max_penetration --metric pose:ball_e0.3 --out bounce.parquet
  impulse sweep pendulum --seeds 20 --duration 5 --ray --out seeds.csv
  impulse sweep chain8 --vary solver=iterative,tree --workers 1 --timeout 60 --out s.csv

Every run reports the figures of impulse sim --json plus the --metric columns; a run that
raises, diverges or passes --timeout is recorded with its message (status failed) and the
sweep goes on. Rerunning with the same --out skips the runs it holds.
exit status: 0 every run finished, 1 a failure, 2 bad input (a key, value, metric, option
or output file: nothing is run or written), 4 the sweep finished with failed runs (they are
in the table with their messages)."""


def sweep_parser(p):
    """Fill the `impulse sweep` parser `p`."""
    from impulse.engine.cli import positive  # sim's own argument type

    p.epilog = EPILOG
    p.add_argument("scene", nargs="?",
                   help="scene file (.json) or a bundled scene's name; with --plot alone, a "
                        "sweep table (.csv, .parquet) to plot")
    p.add_argument("--vary", action="append", default=[], metavar="KEY=VALUES",
                   help="a key and its values (repeatable: the grid of all combinations)")
    p.add_argument("--sample", type=positive(int), metavar="N",
                   help="run N variants of the grid, drawn at random (--sample-seed)")
    p.add_argument("--sample-seed", type=int, default=0, metavar="S",
                   help="the random draw of --sample (default 0)")
    p.add_argument("--seeds", type=positive(int, zero=True), default=0, metavar="N",
                   help="run each variant N times (seed 0..N-1) with every dynamic body's "
                        "initial velocity and angular velocity perturbed at random")
    p.add_argument("--perturb", type=positive(float), default=DEFAULT_PERTURB,
                   metavar="SIGMA", help="--seeds: standard deviation of the perturbation "
                                         f"[m/s, rad/s] (default {DEFAULT_PERTURB:g})")
    p.add_argument("--duration", type=positive(float), default=10.0,
                   help="seconds of each run (default 10)")
    p.add_argument("--metric", action="append", default=[], metavar="M",
                   help="a column more (repeatable): " + "; ".join(METRICS))
    p.add_argument("--out", metavar="FILE",
                   help="the table, .csv or .parquet (none: CSV on stdout); rerunning with "
                        "the same --out skips the runs it holds")
    p.add_argument("--workers", type=positive(int), metavar="N",
                   help="parallel runs (default: all cores, or the Ray cluster's CPUs); "
                        "1: one after another in this process")
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="run on Ray: the cluster at ADDRESS, else RAY_ADDRESS's, else a new "
                        "local instance (pip install 'impulse[ray]')")
    p.add_argument("--timeout", type=positive(float), metavar="S",
                   help="seconds a run may take; a run past it is recorded as failed")
    p.add_argument("--retry-failed", action="store_true",
                   help="with an --out that holds failed runs: run those again")
    p.add_argument("--plot", nargs=2, metavar=("X", "Y"),
                   help="also write a PNG of column Y over the varied key X, one line per "
                        "value of the other keys (pip install 'impulse[sweep]')")
    p.add_argument("--plot-out", metavar="PNG",
                   help="--plot's file (default: --out's name + _Y_over_X.png)")
    return p


def _plot_from_table(args):
    path = args.scene
    if args.vary or args.metric or args.seeds or args.sample:
        raise SweepError(f"{path}: a table is plotted, not run (no --vary, --metric, --seeds "
                         f"or --sample with it)")
    if not os.path.isfile(path):
        raise SweepError(f"{path}: no such file")
    try:
        rows, columns = read_table(path)
        keys = table_keys(columns)
    except SweepError as e:
        raise SweepError(f"{path}: {e}") from None
    except Exception as e:  # noqa: BLE001
        raise SweepError(f"{path}: cannot read it as a sweep table ({type(e).__name__}: "
                         f"{e})") from None
    x, y = args.plot
    _check_plot_columns(x, y, keys + (["seed"] if "seed" in columns else []), columns)
    png = args.plot_out or default_plot_path(path, x, y)
    _check_png(png)
    print(f"plot: {plot(rows, x, y, png, keys=keys)}")
    return 0


def _check_plot_columns(x, y, keys, columns):
    if x not in keys:
        raise SweepError(f"--plot {x} {y}: {x!r} is not a varied key (varied: "
                         f"{', '.join(keys) or 'none'})")
    if y not in columns:
        raise SweepError(f"--plot {x} {y}: no column {y!r} (columns: "
                         f"{_cut(', '.join(c for c in columns if c not in keys), 300)})")


def _check_png(png):
    from impulse.engine.durable import check_writable
    if not png.lower().endswith(".png"):
        raise SweepError(f"--plot-out {png}: give a file ending in .png")
    _require("matplotlib", "--plot", "sweep")
    check_writable(png)


def run_command(args, before_runs=None):
    """`impulse sweep` with parsed arguments; its exit status. `before_runs()` is called
    once the input is checked and before the runs (the command line's kernel compile)."""
    from impulse.engine.durable import WriteError
    from impulse.engine.scene import SceneError
    try:
        if args.scene is None:
            raise SweepError("give a scene (or a sweep table with --plot X Y)")
        if args.plot and args.scene.lower().endswith(FORMATS):
            return _plot_from_table(args)
        plan = make_plan(args.scene, args.vary, metrics=args.metric, sample=args.sample,
                         sample_seed=args.sample_seed, seeds=args.seeds, perturb=args.perturb,
                         duration=args.duration)
        backend = "ray" if args.ray is not None else "serial" if args.workers == 1 else "local"
        if args.out:
            _check_out(args.out)
        if args.plot:
            _check_plot_columns(*args.plot, plan.keys + (["seed"] if plan.seeds else []),
                                plan.columns)
            png = args.plot_out or default_plot_path(args.out, *args.plot)
            _check_png(png)
        if backend == "ray":
            _require("ray", "--ray", "ray")
        _resume(plan, args.out, args.retry_failed)        # a foreign --out: before any run
        if before_runs is not None and _kernels_here(backend, args.ray):
            before_runs()
        quiet = logging.getLogger("impulse").getEffectiveLevel() > logging.INFO
        table = run_plan(plan, backend=backend, workers=args.workers, address=args.ray or None,
                         timeout=args.timeout, out=args.out, retry_failed=args.retry_failed,
                         progress=sys.stderr.isatty() and not quiet)
    except (SweepError, SceneError, WriteError) as e:
        text = str(e)
        print(text if isinstance(e, SceneError) or text.startswith("impulse")
              else f"impulse sweep: {text}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        where = f"; the finished runs are in {args.out}, the same command goes on" \
            if args.out else ""
        print(f"impulse sweep: interrupted{where}", file=sys.stderr)
        return 1
    s = table.stats
    if not args.out:
        import csv
        w = csv.writer(sys.stdout)
        w.writerow(table.columns)
        for r in table:
            w.writerow([_cell(r.get(c)) for c in table.columns])
    rate = f", {s.runs_per_minute:.0f} runs/min" if s.runs_per_minute else ""
    line = (f"sweep: {s.total} runs ({s.total - s.ran} done before, {s.ran} now: {s.ok} ok, "
            f"{s.unmet} with tolerances unmet, {s.failed} failed) in {s.seconds:.1f} s{rate}")
    print(line + (f" -> {args.out}" if args.out else ""),
          file=sys.stdout if args.out else sys.stderr)
    if s.failed:
        first = next(r for r in table if r["status"] == "failed")
        print(f"impulse sweep: {s.failed} run(s) failed; the first, run {first['run']}: "
              f"{first['error']}", file=sys.stderr)
    if args.plot:
        print(f"plot: {plot(table, *args.plot, png, keys=plan.keys)}",
              file=sys.stdout if args.out else sys.stderr)
    return EXIT_RUNS_FAILED if s.failed else 0


def main(argv=None):
    """`python -m impulse.app.sweep ...` (the same as `impulse sweep ...`)."""
    from impulse.app.__main__ import main as impulse_main
    impulse_main(["sweep", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    main()
