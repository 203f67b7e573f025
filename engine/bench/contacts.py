"""`impulse bench contacts`: per-step cost of detection, collisions and contacts in the
contact scenes, and (with the `peers` extra: mujoco, pybullet) the same boxes in MuJoCo
and PyBullet: the table's peer columns are our ms per step divided by theirs.

Peer ratios (x_mujoco, x_pybullet) are our median step's time over the peer's median step,
the three engines stepping the same simulated seconds side by side in one process, PEER_CHUNK
steps each in turn (peer_times), so that all three meet the machine's slow and quick moments
alike; x_mujoco_mean and x_pybullet_mean are the ratios of the means. On this shared 2-core
machine one engine's step time moves by up to 1.8x from one minute to the next (MuJoCo's
median step on the 10-box stack: 59 us in one run, 91-105 us in the next dozen), so one run
of each engine after the other, compared by their means as before 2026-12-01, gave
box_stack 1.11, 2.89 and 1.35 x MuJoCo and the pyramid 2.64, 1.99 and 1.94 in three runs in a
row (three whole runs of each in turn, compared by medians: still 1.95 to 3.27); side by side,
ten runs of box_stack gave 2.07-2.77. The timing row's own columns (ms_step_mean ...) come
from a run of ours alone.

Stage times come from the step statistics: detection (Python wrapper + kernel), collisions
(the velocity pass at t), contacts (position loop with joints and contacts, shock
propagation, velocity correction) and the depth projection after the step (its detection
included); depth_max_mm is the deepest contact left after a step. The funnel at h = 0.001
(the paper's step) is measured over 0.2 s after the cubes reach the funnel (prepared at
h = 1/60 up to t = 0.9 s). python_us and kernel_calls: the median step's time outside the
compiled kernels and its kernel calls, over OVERHEAD_STEPS steps after the timed ones
(bench/overhead.py).

Behaviour figures (issue 16): the scenes of FIGURE_CASES are run from t = 0 at their own
h (1/60) by our engine and, with mujoco installed, by MuJoCo on the same bodies
(peers.mjcf_contacts: same mass properties, shapes, joints and combined materials; MuJoCo's
restitution is a spring-damper fitted to e, see peers) with its recommended `implicitfast`
integrator (column mujoco), `RK4` (mujoco_rk4) and its default `Euler` (mujoco_euler; like
the box scenes' runs); a MuJoCo run that blew up says "diverged at T s". Each figure is a
row with the analytic value (expected), ours and MuJoCo's; the scene's timing row (the same
columns as above) comes from the same run of ours, its x_mujoco from a run of ours beside
MuJoCo Euler (like the box scenes), side by side as the box scenes' peers.
  bouncing_balls  apex height of bounces 1-3 of each ball, expected e^(2k) x the drop
  newtons_cradle  striker speed at impact; last ball's top speed and rise over the striker's;
                  the middle balls' top speed over the striker's (expected 1, 1, 0)
  rolling_bodies  acceleration down the slope at 0.5 s over g sin(theta)/(1 + I/(m r^2)),
                  slip |v - w x r| / |v| at 0.5 s (expected 1 and 0)
  tall_tower      horizontal drift of the top cube and of any cube after 10 s, the top's
                  height change (expected 0; "stands" means a drift below 1 cm)
  rolling_friction  distance each ball rolled in 3 s (expected: it slows at
                  (mu_r/r) g/(1 + I/(m r^2)) and stays where it stops), the spinner's spin
                  after 2 s (expected w0 - mu_t m g t / I)
  spinning_top    spin w3 kept after 3 s, precession rate (slope of the axis' azimuth)
                  against the steady heavy-top rate, tilt after 3 s, drift of the centre of
                  mass (frictionless tip: expected 1, Omega, the initial tilt, 0)
Only some scenes: contacts(scenes=[...]), the environment variable
IMPULSE_BENCH_SCENES=a,b (scene file names without .json, e.g. box_stack,funnel_1000) or
`python -m impulse.engine.bench.contacts --scenes a,b [--json OUT]`.
"""
import json
import math
import os
import sys
import time
from contextlib import contextmanager

import numpy as np

from .. import state as S
from ..islands import preload as preload_islands
from ..scene import load_scene, scene_to_world
from ..scenes_list import SCENES_DIR
from ..shapes import CAPSULE, PLANE
from . import BenchInputError
from .overhead import python_per_step

WARM_UP_STEPS = 5
PEER_CHUNK = 10            # steps each engine takes in its turn (peer_times)
OVERHEAD_STEPS = 60        # steps after the timed ones: Python time and kernel calls a step
SCENES = SCENES_DIR

# (label, scene, h, prepare seconds at 1/60, measured seconds, peers, sleeping, threads).
# The rows without sleeping measure the solver against the peers (MuJoCo does not sleep
# bodies); the rows with it what a user's scene costs once its bodies rest
# (engine/sleeping.py). threads: World.threads for the islands solved apart (None: every
# core; engine/islands.py); the pairs of rows with 1 and every thread give the speed-up.
CASES = [
    ("box_stack", "box_stack.json", 1 / 60, 0.0, 2.0, True, False, None),
    ("pyramid", "pyramid.json", 1 / 60, 0.0, 2.0, True, False, None),
    ("funnel_1000 h=0.001", "funnel_1000.json", 0.001, 0.9, 0.2, False, False, None),
    ("funnel_1000 h=1/60", "funnel_1000.json", 1 / 60, 0.0, 2.5, True, False, None),
    ("funnel_1000 h=1/60, 1 thread", "funnel_1000.json", 1 / 60, 0.0, 2.5, False, False, 1),
    ("wall_car", "wall_car.json", 1 / 60, 0.0, 2.0, False, False, None),
    ("wall_car sleeping", "wall_car.json", 1 / 60, 0.0, 2.0, False, True, None),
    ("box_stack sleeping, settled", "box_stack.json", 1 / 60, 2.0, 1.0, False, True, None),
    ("box_grid_10000 asleep", "box_grid_10000.json", 1 / 60, 1.0, 1.0, False, True, None),
    ("bin_100 pour", "bin_100.json", 1 / 60, 0.0, 1.5, False, False, None),
    ("bin_1000 pour", "bin_1000.json", 1 / 60, 0.0, 1.5, False, False, None),
    ("bin_10000 pour", "bin_10000.json", 1 / 60, 0.0, 1.5, False, False, None),
    ("pyramids_8", "pyramids_8.json", 1 / 60, 0.0, 2.0, False, False, None),
    ("pyramids_8, 1 thread", "pyramids_8.json", 1 / 60, 0.0, 2.0, False, False, 1),
]
THREAD_PAIRS = (("funnel_1000 h=1/60", "funnel_1000 h=1/60, 1 thread"),
                ("pyramids_8", "pyramids_8, 1 thread"))
GRID_SIDE = 100            # box_grid_10000: GRID_SIDE^2 cubes of 0.5 m, 1 m apart, resting


def grid_document(side=GRID_SIDE):
    """A scene document: side x side cubes (0.5 m, 1 kg) resting on the ground."""
    bodies = [{"name": "ground", "fixed": True, "shape": {"type": "plane"}}]
    for i in range(side * side):
        x, z = i % side - side / 2, i // side - side / 2
        bodies.append({"name": f"box{i}", "mass": 1.0, "position": [x, 0.25, z],
                       "shape": {"type": "box", "size": [0.5, 0.5, 0.5]}})
    return {"format": "impulse-scene", "version": 1, "name": "Box grid",
            "settings": {"h": 1 / 60}, "bodies": bodies}


BIN_CUBE = 0.2             # bin_N: N cubes of this edge poured into a bin ...
BIN_LAYERS = 4             # ... from this many layers, so every N makes a pile of one shape
BIN_PITCH = 0.26           # spacing of the cubes' starting lattice [m]


def bin_document(n):
    """A scene document: n cubes (0.2 m, 1 kg), a little turned each, in BIN_LAYERS layers
    of a lattice above a bin whose floor just holds one layer, falling in together. The
    pile has the same shape for every n, so its cost per step should grow as n."""
    side = int(np.ceil(np.sqrt(n / BIN_LAYERS)))          # cubes along each side of a layer
    inner = side * BIN_PITCH + 0.1
    wall = 0.1
    height = BIN_LAYERS * BIN_PITCH + 0.5
    bodies = [{"name": "ground", "fixed": True, "shape": {"type": "plane"}}]
    for k, (x, z, sx, sz) in enumerate([(0.5 * (inner + wall), 0, wall, inner + 2 * wall),
                                        (-0.5 * (inner + wall), 0, wall, inner + 2 * wall),
                                        (0, 0.5 * (inner + wall), inner, wall),
                                        (0, -0.5 * (inner + wall), inner, wall)]):
        bodies.append({"name": f"wall{k}", "fixed": True, "position": [x, height / 2, z],
                       "shape": {"type": "box", "size": [sx, height, sz]}})
    rng = np.random.default_rng(n)
    for i in range(n):
        layer, cell = divmod(i, side * side)
        gx, gz = cell % side, cell // side
        axis = rng.normal(size=3)
        angle = rng.uniform(0.0, 0.3)
        q = np.concatenate([[np.cos(angle / 2)],
                            np.sin(angle / 2) * axis / np.linalg.norm(axis)])
        bodies.append({"name": f"cube{i}", "mass": 1.0,
                       "position": [(gx - (side - 1) / 2) * BIN_PITCH,
                                    0.3 + layer * BIN_PITCH,
                                    (gz - (side - 1) / 2) * BIN_PITCH],
                       "orientation": [float(c) for c in q],
                       "shape": {"type": "box", "size": [BIN_CUBE] * 3}})
    return {"format": "impulse-scene", "version": 1, "name": f"{n} cubes poured into a bin",
            "settings": {"h": 1 / 60}, "bodies": bodies}


def pyramids_document(count=8, base=10, size=0.2):
    """A scene document: `count` pyramids of 0.2 m cubes (1 kg), rows of base .. 1, 3 m
    apart: as many islands of about 580 contact rows each (engine/islands.py)."""
    bodies = [{"name": "ground", "fixed": True, "shape": {"type": "plane"}}]
    for p in range(count):
        ox, oz = (p % 4 - 1.5) * 3.0, (p // 4) * 3.0
        for row, n in enumerate(range(base, 0, -1)):
            for i in range(n):
                bodies.append({"name": f"p{p}_{row}_{i}", "mass": 1.0,
                               "position": [ox + (i - (n - 1) / 2) * (size + 0.01),
                                            size / 2 + row * size, oz],
                               "shape": {"type": "box", "size": [size] * 3}})
    return {"format": "impulse-scene", "version": 1, "name": f"{count} pyramids",
            "settings": {"h": 1 / 60}, "bodies": bodies}


BIN_SIZES = (100, 1000, 10000)
GENERATED = {"box_grid_10000.json": grid_document, "pyramids_8.json": pyramids_document,
             **{f"bin_{n}.json": (lambda n=n: bin_document(n)) for n in BIN_SIZES}}


def thread_speedups(rows):
    """Figures: each THREAD_PAIRS scene's ms per step on 1 thread over that on every core."""
    by = {r["benchmark"]: r for r in rows if r.get("ms_step_mean")}
    out = []
    for every, one in THREAD_PAIRS:
        if every in by and one in by:
            out.append({"benchmark": every, "figure": f"1 thread / {by[every]['threads']} "
                        "threads (islands solved apart, engine/islands.py)",
                        "expected": ">= 1.6 (the issue's goal, funnel_1000)",
                        "ours": round(by[one]["ms_step_mean"] / by[every]["ms_step_mean"], 2)})
    return out


def bin_exponent(rows):
    """The exponent p of ms/step ~ N^p fitted (least squares on logs) to the bin_N pour rows
    (None with fewer than two)."""
    points = [(int(r["benchmark"].split()[0][4:]), r["ms_step_mean"]) for r in rows
              if r.get("benchmark", "").startswith("bin_") and r.get("ms_step_mean")]
    if len(points) < 2:
        return None
    n, ms = np.log([p[0] for p in points]), np.log([p[1] for p in points])
    return round(float(np.polyfit(n, ms, 1)[0]), 3)


def _steps(seconds, h):
    """Steps of h in `seconds` (at least one)."""
    return max(1, int(round(seconds / h)))


def _load(path):
    name = os.path.basename(path)
    if name in GENERATED:
        return scene_to_world(GENERATED[name](), name)
    return load_scene(path)


def _measure(path, h, prepare, seconds, sleeping=False, threads=None):
    """The timing row of one scene (CASES' columns)."""
    w, st, wall = _timed_run(path, h, prepare, seconds, sleeping, threads)
    row = {**_stats_row(h, st, wall), **(_sleep_columns(w) if sleeping else {}),
           "threads": w.threads, "islands_solved": w.last_step()["islands_solved"]}
    python_us, calls = python_per_step(w, OVERHEAD_STEPS)
    return {**row, "python_us": round(python_us, 1), "kernel_calls": calls}


def _timed_run(path, h, prepare, seconds, sleeping=False, threads=None):
    """(world, per-step stats, per-step wall times [s]) of `seconds` at h, after `prepare`
    seconds at the scene's own h and WARM_UP_STEPS."""
    w = _ready_world(path, h, prepare, sleeping, threads)
    steps = _steps(seconds, h)
    st = np.zeros((steps, S.T_SIZE))
    wall = np.zeros(steps)
    for i in range(steps):
        t0 = time.perf_counter()
        w.step()
        wall[i] = time.perf_counter() - t0
        st[i] = w.stats
    return w, st, wall


def _ready_world(path, h, prepare, sleeping=False, threads=None):
    """The scene's world, `prepare` seconds on at its own h, then set to h and stepped
    WARM_UP_STEPS (kernels loaded, warm starts filled)."""
    w = _load(path)
    w.settings.sleeping = sleeping
    if threads is not None:
        w.threads = threads
    if prepare > 0:
        for _ in range(int(round(prepare / w.settings.h))):
            w.step()
    w.settings.h = h
    for _ in range(WARM_UP_STEPS):   # loads the kernels, fills the warm starts
        w.step()
    preload_islands(w)               # (and the split step's, as the viewer does)
    return w


def peer_ratios(ours, **peers):
    """The peer columns x_<name> (median over median) and x_<name>_mean (mean over mean)
    from per-step times [s]: ours, and each peer's by name."""
    row = {}
    for name, times in peers.items():
        row[f"x_{name}"] = round(float(np.median(ours) / np.median(times)), 2)
        row[f"x_{name}_mean"] = round(float(ours.mean() / times.mean()), 2)
    return row


def peer_times(path, h, prepare, seconds, sleeping=False, threads=None):
    """Per-step wall times [s] of ours, MuJoCo and PyBullet (module docstring) over the same
    `seconds` at h, the three stepping in turn, PEER_CHUNK steps each (ours after `prepare`
    seconds and the warm-up, as _timed_run)."""
    w = _ready_world(path, h, prepare, sleeping, threads)
    steps = _steps(seconds, h)
    with _pybullet_stepper(path, h) as step_pybullet:
        return side_by_side(steps, w.step, _mujoco_stepper(path, h), step_pybullet)


def side_by_side(steps, *step_functions):
    """Per-step wall times [s] of `steps` calls of each step function, the functions taking
    PEER_CHUNK steps each in turn; one array per function."""
    times = [np.zeros(steps) for _ in step_functions]
    for start in range(0, steps, PEER_CHUNK):
        for step, out in zip(step_functions, times, strict=True):
            for i in range(start, min(start + PEER_CHUNK, steps)):
                t0 = time.perf_counter()
                step()
                out[i] = time.perf_counter() - t0
    return times


def _stats_row(h, st, wall):
    """The timing columns of a row from the per-step stats and wall times."""
    steps = st.shape[0]

    def ms(col):
        return st[:, col] * 1e-6

    return {
        "h": round(h, 5), "steps": steps,
        "ms_step_mean": round(1e3 * wall.mean(), 3),
        "ms_step_median": round(1e3 * float(np.median(wall)), 3),
        "ms_step_max": round(1e3 * wall.max(), 2),
        "detect_mean": round(ms(S.T_DETECT_NS).mean(), 3),
        "detect_max": round(ms(S.T_DETECT_NS).max(), 2),
        "collide_mean": round(ms(S.T_COLLIDE_NS).mean(), 3),
        "collide_max": round(ms(S.T_COLLIDE_NS).max(), 2),
        "contacts_mean": round(ms(S.T_CONTACT_NS).mean(), 3),
        "contacts_max": round(ms(S.T_CONTACT_NS).max(), 2),
        "project_mean": round(ms(S.T_PROJECT_NS).mean(), 3),
        "depth_max_mm": round(1e3 * st[:, S.T_DEPTH].max(), 2),
        "max_collisions": int(st[:, S.T_COLLISIONS].max()),
        "max_contacts": int(st[:, S.T_CONTACTS].max()),
        "realtime_x": round(h / wall.mean(), 2),
    }


def _sleep_columns(w):
    last = w.last_step()
    return {"asleep_end": last["asleep_bodies"], "awake_end": last["awake_bodies"]}


def _boxes(path):
    """(plane?, [(half extents, pos, quat wxyz, mass or None)]) of a box-only scene."""
    d = json.load(open(path))
    out = []
    for b in d["bodies"]:
        s = b.get("shape", {})
        if s.get("type") != "box":
            continue
        out.append((np.asarray(s["size"]) / 2, b.get("position", [0, 0, 0]),
                    b.get("orientation", [1, 0, 0, 0]), None if b.get("fixed") else b["mass"],
                    b.get("material", {}).get("static_friction", 0.5)))
    return out


def _mujoco_stepper(path, h):
    """A function taking one MuJoCo step (mj_step) of the scene's boxes, stepped once."""
    import mujoco
    geoms = []
    for half, pos, q, mass, mu in _boxes(path):
        g = (f'<geom type="box" size="{half[0]} {half[1]} {half[2]}" friction="{mu} 0.005 0.0001"'
             + (f' mass="{mass}"' if mass else "") + "/>")
        p = " ".join(map(str, pos))
        qq = " ".join(map(str, q))
        if mass is None:
            geoms.append(g.replace("<geom", f'<geom pos="{p}" quat="{qq}"'))
        else:
            geoms.append(f'<body pos="{p}" quat="{qq}"><freejoint/>{g}</body>')
    xml = (f'<mujoco><option timestep="{h}" gravity="0 -9.81 0"/><worldbody>'
           '<geom type="plane" size="50 50 0.1" zaxis="0 1 0"/>' + "".join(geoms)
           + "</worldbody></mujoco>")
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d)
    return lambda: mujoco.mj_step(m, d)


@contextmanager
def _pybullet_stepper(path, h):
    """A function taking one PyBullet step (stepSimulation) of the scene's boxes, for the
    length of the `with` (its client is disconnected after)."""
    import pybullet as pb
    cid = pb.connect(pb.DIRECT)
    try:
        pb.setGravity(0, -9.81, 0, physicsClientId=cid)
        pb.setTimeStep(h, physicsClientId=cid)
        plane = pb.createCollisionShape(pb.GEOM_PLANE, planeNormal=[0, 1, 0],
                                        physicsClientId=cid)
        pb.createMultiBody(0, plane, physicsClientId=cid)
        for half, pos, q, mass, mu in _boxes(path):
            shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=list(half),
                                            physicsClientId=cid)
            body = pb.createMultiBody(mass or 0.0, shape, basePosition=list(pos),
                                      baseOrientation=[q[1], q[2], q[3], q[0]],
                                      physicsClientId=cid)
            pb.changeDynamics(body, -1, lateralFriction=mu, physicsClientId=cid)
        yield lambda: pb.stepSimulation(physicsClientId=cid)
    finally:
        pb.disconnect(cid)


def _peers_available():
    try:
        import mujoco  # noqa: F401
        import pybullet  # noqa: F401
        return True
    except ImportError:
        return False


def _selected(scenes):
    """The scene names (file names without .json) to run: `scenes`, else the environment's
    IMPULSE_BENCH_SCENES (comma-separated), else None (all)."""
    if scenes is None:
        env = os.environ.get("IMPULSE_BENCH_SCENES", "").strip()
        scenes = [x for x in env.split(",") if x.strip()] if env else None
    if scenes is None:
        return None
    if isinstance(scenes, str):
        scenes = scenes.split(",")
    chosen = {x.strip().removesuffix(".json") for x in scenes if x.strip()}
    known = scene_names()
    unknown = sorted(chosen - set(known))
    if unknown:
        raise BenchInputError(f"unknown contact bench scene {unknown[0]!r} (known: "
                         f"{', '.join(known)})")
    return chosen


def scene_names():
    """Every scene the contacts bench runs (file names without .json), in its order."""
    names = [name[:-5] for _, name, *_ in CASES] + [name for name, _ in FIGURE_CASES]
    return list(dict.fromkeys(names))


def contacts(scenes=None):
    """Rows of the contact bench: timing rows of CASES and FIGURE_CASES, then the behaviour
    figures of FIGURE_CASES (rows with a `figure` key). scenes: names to run (default: the
    environment's IMPULSE_BENCH_SCENES, else all)."""
    chosen = _selected(scenes)
    rows = []
    peers = _peers_available()
    for label, name, h, prepare, seconds, compare, sleeping, threads in CASES:
        if chosen is not None and name[:-5] not in chosen:
            continue
        path = os.path.join(SCENES, name)
        row = {"benchmark": label, **_measure(path, h, prepare, seconds, sleeping, threads)}
        if peers and compare:
            ours, mujoco, pybullet = peer_times(path, h, prepare, seconds, sleeping, threads)
            row.update(peer_ratios(ours, mujoco=mujoco, pybullet=pybullet))
        rows.append(row)
    mujoco = _mujoco_module()
    figures = []
    for name, seconds in FIGURE_CASES:
        if chosen is not None and name not in chosen:
            continue
        timing, figs = behaviour(name, seconds, mujoco)
        rows.append(timing)
        figures.extend(figs)
    if not peers:
        rows.append({"benchmark": "peers skipped (pip install mujoco pybullet)"})
    figures.extend(thread_speedups(rows))
    p = bin_exponent(rows)
    if p is not None:
        figures.append({"benchmark": "bin_N pour", "figure": "ms/step grows as N^p: p",
                        "expected": "<= 1.1", "ours": p})
    return rows + figures


# ---- behaviour figures (issue 16) --------------------------------------------------------

FIGURE_CASES = [  # (scene, seconds simulated from t = 0 at the scene's h)
    ("bouncing_balls", 3.0),
    ("newtons_cradle", 1.0),
    ("rolling_bodies", 0.5),
    ("tall_tower", 10.0),
    ("spinning_top", 3.0),
    ("rolling_friction", 3.0),
]
MUJOCO_RUNS = (("mujoco", "implicitfast"), ("mujoco_rk4", "RK4"), ("mujoco_euler", "Euler"))


def _mujoco_module():
    try:
        import mujoco
        return mujoco
    except ImportError:
        return None


class Track:
    """One engine's run of a scene: t (steps+1,); pos, vel, omega (steps+1, n, 3) at the
    centres of mass (world frame); rot (steps+1, n, 3, 3) the principal frames."""

    def __init__(self, t, pos, rot, vel, omega):
        self.t, self.pos, self.rot, self.vel, self.omega = t, pos, rot, vel, omega


def run_ours(path, seconds):
    """(Track, per-step stats, per-step wall times, world) of our engine on the scene from
    t = 0 (the kernels are loaded on a throw-away copy first)."""
    warm = load_scene(path)
    for _ in range(WARM_UP_STEPS):
        warm.step()
    w = load_scene(path)
    w.settings.sleeping = False       # the figures measure the solver (MuJoCo does not sleep)
    h = w.settings.h
    steps = _steps(seconds, h)
    n = len(w.models)
    pos, rot = np.zeros((steps + 1, n, 3)), np.zeros((steps + 1, n, 3, 3))
    vel, omega = np.zeros((steps + 1, n, 3)), np.zeros((steps + 1, n, 3))
    st, wall = np.zeros((steps, S.T_SIZE)), np.zeros(steps)
    B = w.B
    pos[0], rot[0], vel[0], omega[0] = B.pos, B.rot, B.vel, B.omega
    for i in range(steps):
        t0 = time.perf_counter()
        w.step()
        wall[i] = time.perf_counter() - t0
        st[i] = w.stats
        pos[i + 1], rot[i + 1], vel[i + 1], omega[i + 1] = B.pos, B.rot, B.vel, B.omega
    return Track(np.arange(steps + 1) * h, pos, rot, vel, omega), st, wall, w


def behaviour(name, seconds, mujoco=None):
    """(timing row, figure rows) of one FIGURE_CASES scene; MuJoCo columns if mujoco is the
    module (None: ours only)."""
    from . import peers
    path = os.path.join(SCENES, name + ".json")
    track, st, wall, _ = run_ours(path, seconds)
    w0 = load_scene(path)
    h = w0.settings.h
    timing = {"benchmark": name, **_stats_row(h, st, wall)}
    figs = FIGURES[name](w0, track)
    columns = {"ours": [v for _, _, v in figs]}
    if mujoco is not None:
        steps = track.t.shape[0] - 1
        for col, integrator in MUJOCO_RUNS:
            pos, rot, vel, omega, diverged = peers.run_mujoco_contacts(
                mujoco, load_scene(path), steps, integrator)
            if diverged is not None:
                columns[col] = [f"diverged at {diverged:.2f} s"] * len(figs)
            else:
                tr = Track(track.t, pos, rot, vel, omega)
                columns[col] = [v for _, _, v in FIGURES[name](w0, tr)]
        ours, theirs = _figure_times(path, seconds, mujoco)
        timing.update(peer_ratios(ours, mujoco=theirs))
    rows = []
    for i, (figure, expected, _) in enumerate(figs):
        row = {"benchmark": name, "figure": figure, "expected": _num(expected)}
        for col, values in columns.items():
            row[col] = _num(values[i])
        rows.append(row)
    return timing, rows


def _figure_times(path, seconds, mujoco):
    """Per-step wall times [s] of ours and MuJoCo (Euler, as the box scenes' peer) on a
    FIGURE_CASES scene from t = 0 at its h, side by side (side_by_side; the figures' own runs
    record every step's state, and went one after the other)."""
    from . import peers
    w = load_scene(path)
    w.settings.sleeping = False
    m, d, _ = peers.mujoco_contacts_model(mujoco, load_scene(path), "Euler")
    with peers.warnings_quiet(mujoco):
        return side_by_side(_steps(seconds, w.settings.h), w.step,
                            lambda: mujoco.mj_step(m, d))


def _num(v):
    if v is None or isinstance(v, str):
        return v
    v = float(v)
    return float(f"{v:.4g}") if math.isfinite(v) else None


def _gravity(w):
    return float(np.linalg.norm(w.settings.gravity))


def _dynamic(w, prefix=""):
    return [b for b, m in enumerate(w.models) if not m.static and m.name.startswith(prefix)]


def _ground_height(w):
    ys = [w.B.pos[b, 1] for b, m in enumerate(w.models)
          if m.static and any(s["kind"] == PLANE for s in m.shapes)]
    return max(ys) if ys else 0.0


def _apexes(y, vy, g):
    """Apex heights after each bounce of a ball whose lowest point is at y (steps+1,) with
    vertical velocity vy: a bounce is a turn upwards (>1 cm/s) after falling faster than
    5 cm/s; its apex the largest y + max(vy, 0)^2/(2 g) until the next bounce (exact for
    every sample in flight, however short the flight). The list ends at the first "bounce"
    that never leaves the ground (a soft contact's rebound inside its own penetration)."""
    apex, fell = [], False
    for i in range(len(y) - 1):
        fell = fell or vy[i] < -0.05
        if fell and vy[i] <= 0.0 < vy[i + 1] and vy[i + 1] > 0.01:
            apex.append(-np.inf)
            fell = False
        if apex:
            j = i + 1
            apex[-1] = max(apex[-1], y[j] + max(vy[j], 0.0) ** 2 / (2 * g))
    flights = [a > 0.0 for a in apex] + [False]
    return apex[:flights.index(False)]


def _fig_bouncing_balls(w, tr):
    g, ground = _gravity(w), _ground_height(w)
    out = []
    for b in _dynamic(w):
        m = w.models[b]
        r = m.shapes[0]["size"][0]
        e = float(m.material.get("restitution", 0.0))
        y = tr.pos[:, b, 1] - r - ground
        apex = _apexes(y, tr.vel[:, b, 1], g)
        for k in (1, 2, 3):
            out.append((f"{m.name} apex {k} (m)", y[0] * e ** (2 * k),
                        apex[k - 1] if len(apex) >= k else None))
    return out


def _fig_newtons_cradle(w, tr):
    g = _gravity(w)
    balls = sorted(_dynamic(w, "ball"), key=lambda b: w.models[b].name)
    first, last, middle = balls[0], balls[-1], balls[1:-1]
    speed = np.linalg.norm(tr.vel[:, balls], axis=2)
    rest_y = tr.pos[0, last, 1]
    drop = tr.pos[0, first, 1] - rest_y
    # the striker's speed at the bottom of its swing: m g drop = I_pivot (v/L)^2 / 2
    pivot = w.joint_anchor_world()[[jm.bodies[1] for jm in w.joint_models].index(
        w.models[first].name), 1]
    arm = float(np.linalg.norm(tr.pos[0, first] - pivot))
    m = w.models[first]
    i_pivot = m.mass * arm ** 2 + float(np.min(m.inertia))
    v_hit = arm * math.sqrt(2 * m.mass * g * drop / i_pivot)
    v_strike = float(speed[:, 0].max())
    return [("striker speed at impact (m/s)", v_hit, v_strike),
            ("last ball top speed / striker's", 1.0, speed[:, -1].max() / v_strike),
            ("last ball rise / striker's drop", 1.0,
             (tr.pos[:, last, 1].max() - rest_y) / drop),
            ("middle balls' top speed / striker's", 0.0,
             speed[:, 1:-1].max() / v_strike if middle else 0.0)]


def _shape_axis_inertia(w, b, rot):
    """Moment of inertia of body b about its first shape's axis (local y; a sphere: any),
    its rolling radius and that axis in the world."""
    m = w.models[b]
    s = m.shapes[0]
    axis = rot @ s["rot"] @ np.array([0.0, 1.0, 0.0])
    inertia_world = rot @ np.diag(m.inertia) @ rot.T
    return float(axis @ inertia_world @ axis), float(s["size"][0]), axis


def _fig_rolling_bodies(w, tr):
    g_vec = np.asarray(w.settings.gravity, dtype=np.float64)
    slope = [b for b, m in enumerate(w.models) if m.static and m.name == "slope"][0]
    normal = w.B.rot[slope] @ np.array([0.0, 1.0, 0.0])
    along = g_vec - (g_vec @ normal) * normal      # g sin(theta) down the slope
    g_sin = float(np.linalg.norm(along))
    down = along / g_sin
    t = tr.t[-1]
    out = []
    for b in _dynamic(w):
        m = w.models[b]
        i_axis, r, _ = _shape_axis_inertia(w, b, tr.rot[0, b])
        a_exact = g_sin / (1 + i_axis / (m.mass * r * r))
        v = tr.vel[-1, b]
        slip = v + np.cross(tr.omega[-1, b], -r * normal)   # the contact point's velocity
        speed = float(np.linalg.norm(v))
        out.append((f"{m.name} a / analytic ({a_exact:.3f} m/s^2)", 1.0,
                    float(v @ down) / t / a_exact))
        out.append((f"{m.name} slip |v - w x r|/|v| at {t:g} s", 0.0,
                    float(np.linalg.norm(slip)) / speed if speed > 0 else None))
    return out


def _fig_tall_tower(w, tr):
    cubes = _dynamic(w)
    top = max(cubes, key=lambda b: tr.pos[0, b, 1])
    d = tr.pos[-1, cubes] - tr.pos[0, cubes]
    drift = np.linalg.norm(d[:, [0, 2]], axis=1)
    t = tr.t[-1]
    return [(f"top cube drift after {t:g} s (m; stands: < 0.01)", 0.0,
             drift[cubes.index(top)]),
            (f"largest drift of a cube after {t:g} s (m)", 0.0, drift.max()),
            (f"top cube height change after {t:g} s (m)", 0.0,
             tr.pos[-1, top, 1] - tr.pos[0, top, 1])]


def _fig_spinning_top(w, tr):
    b = _dynamic(w)[0]
    m = w.models[b]
    g = _gravity(w)
    # symmetry axis: the principal axis whose moment differs from the other two
    k = int(np.argmax(np.abs(m.inertia - np.median(m.inertia))))
    i3, i1 = float(m.inertia[k]), float(np.median(m.inertia))
    e_k = np.eye(3)[k]
    axes = np.einsum("tij,j->ti", tr.rot[:, b], e_k)
    if axes[0, 1] < 0:
        axes = -axes
    # the tip: the end of the shape reaching furthest down the axis (a capsule's cap centre)
    tip = None
    for s in m.shapes:
        if s["kind"] == CAPSULE:
            u = s["rot"] @ np.array([0.0, 1.0, 0.0])
            for end in (s["pos"] + s["size"][1] * u, s["pos"] - s["size"][1] * u):
                if tip is None or end @ e_k < tip @ e_k:
                    tip = end
    ell = float(np.linalg.norm(tip)) if tip is not None else 0.0
    w3 = np.einsum("ti,ti->t", tr.omega[:, b], axes)
    tilt = np.degrees(np.arccos(np.clip(axes[:, 1], -1.0, 1.0)))
    c = i1 * math.cos(math.radians(tilt[0]))
    disc = (i3 * w3[0]) ** 2 - 4 * c * m.mass * g * ell
    rate = ((i3 * w3[0] - math.sqrt(disc)) / (2 * c) if disc >= 0 and c > 0
            else m.mass * g * ell / (i3 * w3[0]))
    azimuth = np.unwrap(np.arctan2(-axes[:, 2], axes[:, 0]))
    measured = float(np.polyfit(tr.t, azimuth, 1)[0])
    t = tr.t[-1]
    com = tr.pos[:, b]
    return [(f"spin kept after {t:g} s (w3/w3(0))", 1.0, w3[-1] / w3[0]),
            ("precession rate (rad/s)", rate, measured),
            (f"tilt after {t:g} s (deg)", tilt[0], tilt[-1]),
            (f"centre of mass drift after {t:g} s (m)", 0.0,
             np.linalg.norm((com[-1] - com[0])[[0, 2]]))]


def _fig_rolling_friction(w, tr):
    g = _gravity(w)
    t = tr.t[-1]
    out = []
    for b in _dynamic(w):
        m = w.models[b]
        r = float(m.shapes[0]["size"][0])
        i_axis = float(np.median(m.inertia))              # a ball: all three are the same
        mu_r = float(m.material.get("rolling_friction", 0.0))
        mu_t = float(m.material.get("torsional_friction", 0.0))
        v0 = float(np.linalg.norm(tr.vel[0, b]))
        if v0 > 0 and mu_r > 0:
            a = (mu_r / r) * g / (1 + i_axis / (m.mass * r * r))
            stop = min(t, v0 / a)
            out.append((f"{m.name}: distance rolled in {t:g} s (m)", v0 * stop - a * stop ** 2 / 2,
                        float(np.linalg.norm(tr.pos[-1, b] - tr.pos[0, b]))))
        if mu_t > 0:
            w0 = float(np.linalg.norm(tr.omega[0, b]))
            k = int(round(2.0 / (tr.t[1] - tr.t[0])))
            alpha = mu_t * m.mass * g / i_axis
            out.append((f"{m.name}: spin after {tr.t[k]:g} s (rad/s)",
                        max(w0 - alpha * tr.t[k], 0.0), float(np.linalg.norm(tr.omega[k, b]))))
    return out


FIGURES = {"bouncing_balls": _fig_bouncing_balls, "newtons_cradle": _fig_newtons_cradle,
           "rolling_bodies": _fig_rolling_bodies, "tall_tower": _fig_tall_tower,
           "spinning_top": _fig_spinning_top, "rolling_friction": _fig_rolling_friction}


def main(argv=None):
    """python -m impulse.engine.bench.contacts [--scenes a,b] [--json OUT]"""
    from ..cli import main as cli_main  # the same as `impulse bench contacts ...`
    return cli_main(["bench", "contacts"] + list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
