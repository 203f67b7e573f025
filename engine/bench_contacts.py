"""`impulse bench contacts`: per-step cost of detection, collisions and contacts in the
contact scenes, and (with the `peers` extra: mujoco, pybullet) the same boxes in MuJoCo
and PyBullet: the table's peer columns are our ms per step divided by theirs.

Stage times come from the step statistics: detection (Python wrapper + kernel), collisions
(the velocity pass at t), contacts (position loop with joints and contacts, shock
propagation, velocity correction) and the depth projection after the step (its detection
included); depth_max_mm is the deepest contact left after a step. The funnel at h = 0.001 (the paper's step) is measured
over 0.2 s after the cubes reach the funnel (prepared at h = 1/60 up to t = 0.9 s).
"""
import json
import os
import time

import numpy as np

from . import state as S
from .scene import load_scene

WARM_UP_STEPS = 5
SCENES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scenes")

CASES = [  # (label, scene, h, prepare seconds at 1/60, measured seconds, peers)
    ("box_stack", "box_stack.json", 1 / 60, 0.0, 2.0, True),
    ("pyramid", "pyramid.json", 1 / 60, 0.0, 2.0, True),
    ("funnel_1000 h=0.001", "funnel_1000.json", 0.001, 0.9, 0.2, False),
    ("funnel_1000 h=1/60", "funnel_1000.json", 1 / 60, 0.0, 2.5, True),
    ("wall_car", "wall_car.json", 1 / 60, 0.0, 2.0, False),
]


def _measure(path, h, prepare, seconds):
    w = load_scene(path)
    if prepare > 0:
        for _ in range(int(round(prepare / w.settings.h))):
            w.step()
    w.settings.h = h
    for _ in range(WARM_UP_STEPS):   # loads the kernels, fills the warm starts
        w.step()
    steps = max(1, int(round(seconds / h)))
    st = np.zeros((steps, S.T_SIZE))
    wall = np.zeros(steps)
    for i in range(steps):
        t0 = time.perf_counter()
        w.step()
        wall[i] = time.perf_counter() - t0
        st[i] = w.stats
    ms = lambda col: st[:, col] * 1e-6
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


def _mujoco_ms(path, h, seconds):
    import mujoco
    geoms = []
    for i, (half, pos, q, mass, mu) in enumerate(_boxes(path)):
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
    steps = max(1, int(round(seconds / h)))
    mujoco.mj_step(m, d)
    t0 = time.perf_counter()
    for _ in range(steps):
        mujoco.mj_step(m, d)
    return 1e3 * (time.perf_counter() - t0) / steps


def _pybullet_ms(path, h, seconds):
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
        steps = max(1, int(round(seconds / h)))
        t0 = time.perf_counter()
        for _ in range(steps):
            pb.stepSimulation(physicsClientId=cid)
        return 1e3 * (time.perf_counter() - t0) / steps
    finally:
        pb.disconnect(cid)


def _peers_available():
    try:
        import mujoco  # noqa: F401
        import pybullet  # noqa: F401
        return True
    except ImportError:
        return False


def contacts():
    rows = []
    peers = _peers_available()
    for label, name, h, prepare, seconds, compare in CASES:
        path = os.path.join(SCENES, name)
        row = {"benchmark": label, **_measure(path, h, prepare, seconds)}
        if peers and compare:
            row["x_mujoco"] = round(row["ms_step_mean"] / _mujoco_ms(path, h, seconds), 2)
            row["x_pybullet"] = round(row["ms_step_mean"] / _pybullet_ms(path, h, seconds), 2)
        rows.append(row)
    if not peers:
        rows.append({"benchmark": "peers skipped (pip install mujoco pybullet)"})
    return rows
