"""Peer engines on our scenes, for `impulse bench tree` (optional extra `peers`: mujoco,
pybullet). Models are built from a loaded World, so they have the same bodies (mass,
principal moments, centre of mass, principal frame), joint anchors, gravity and h:
  mujoco-ball-{euler,rk4}: the joint tree in reduced coordinates (nested bodies, ball joints);
  mujoco-connect:         free bodies held together by `connect` equality constraints;
  pybullet-p2p:           one rigid multibody per body, JOINT_POINT2POINT constraints.
No collision geometry and no damping anywhere. Each runner returns per-step wall times of
the stepping calls only, the largest joint gap and the energy track (checked every step,
outside the timed calls).
"""
import time

import numpy as np

from .joints import BALL
from .rotations import matrix_to_quat
from .solvers import graph


def available():
    """(mujoco module or None, pybullet module or None)."""
    try:
        import mujoco
    except ImportError:
        mujoco = None
    try:
        import pybullet
    except ImportError:
        pybullet = None
    return mujoco, pybullet


def _f(v):
    return " ".join(f"{x:.12g}" for x in v)


def _body_xml(world, b, parent_rot, parent_pos, inner):
    B = world.B
    rel_pos = parent_rot.T @ (B.pos[b] - parent_pos)
    rel_rot = parent_rot.T @ B.rot[b]
    inertia = np.maximum(B.inertia[b], 1e-9)
    return (f'<body name="b{b}" pos="{_f(rel_pos)}" quat="{_f(matrix_to_quat(rel_rot))}">'
            f'<inertial pos="0 0 0" mass="{world.models[b].mass:.12g}" '
            f'diaginertia="{_f(inertia)}"/>{inner}</body>')


def _option(world, integrator):
    g = world.settings.gravity
    return (f'<option timestep="{world.settings.h:.12g}" gravity="{_f(g)}" '
            f'integrator="{integrator}"><flag contact="disable" energy="enable"/></option>')


def mjcf_tree(world, integrator="Euler"):
    """Nested bodies with ball joints along the spanning tree of graph.build (the scene must
    be a tree hung from the world: no loop-closing joints)."""
    W = graph.build(world.B, world.J)
    if W.tr_other.shape[0] or any(world.J.kind[j] != BALL for j in W.tr_joint):
        raise ValueError("mjcf_tree needs an acyclic scene of ball joints")
    J, n = world.J, len(world.models)
    children = {b: [] for b in range(-1, n)}
    for b in range(n):
        p = W.tr_parent_joint[b]
        if p < 0:
            continue
        other = J.body[p, 1 - W.tr_parent_side[b]]
        children[other if other >= 0 and not world.B.static[other] else -1].append(b)

    def build(b, prot, ppos):
        p = W.tr_parent_joint[b]
        inner = f'<joint type="ball" pos="{_f(J.anchor[p, W.tr_parent_side[b]])}"/>'
        inner += "".join(build(c, world.B.rot[b], world.B.pos[b]) for c in children[b])
        return _body_xml(world, b, prot, ppos, inner)

    body = "".join(build(b, np.eye(3), np.zeros(3)) for b in children[-1])
    return f"<mujoco>{_option(world, integrator)}<worldbody>{body}</worldbody></mujoco>"


def mjcf_connect(world, integrator="Euler"):
    """Every dynamic body free (freejoint); each ball joint a `connect` equality."""
    B, J = world.B, world.J
    bodies = "".join(_body_xml(world, b, np.eye(3), np.zeros(3), "<freejoint/>")
                     for b in range(len(world.models)) if not B.static[b])
    eq = []
    for j in range(J.kind.shape[0]):
        dyn = [s for s in (0, 1) if J.body[j, s] >= 0 and not B.static[J.body[j, s]]]
        s1 = dyn[0]
        other = J.body[j, 1 - s1]
        b2 = f' body2="b{other}"' if (other >= 0 and not B.static[other]) else ""
        eq.append(f'<connect body1="b{J.body[j, s1]}"{b2} anchor="{_f(J.anchor[j, s1])}"/>')
    return (f"<mujoco>{_option(world, integrator)}<worldbody>{bodies}</worldbody>"
            f"<equality>{''.join(eq)}</equality></mujoco>")


def _gap_max(J, static, pos, rot):
    """Largest joint gap for world poses pos (n,3), rot (n,3,3) of our bodies."""
    pts = np.empty((J.kind.shape[0], 2, 3))
    for s in range(2):
        b = J.body[:, s]
        dyn = (b >= 0) & ~static[np.maximum(b, 0)]
        loc = J.anchor[:, s]
        bb = np.maximum(b, 0)
        moved = pos[bb] + np.einsum("jik,jk->ji", rot[bb], loc)
        pts[:, s] = np.where(dyn[:, None], moved, loc)
        fixed = (b >= 0) & ~dyn   # a fixed body: its anchor at its own pose
        if fixed.any():
            pts[fixed, s] = pos[b[fixed]] + np.einsum("jik,jk->ji", rot[b[fixed]], loc[fixed])
    return float(np.linalg.norm(pts[:, 1] - pts[:, 0], axis=1).max())


def run_mujoco(mujoco, world, xml, steps):
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    B = world.B
    ids = np.array([mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"b{b}")
                    for b in range(len(world.models))])
    pos, rot = B.pos.copy(), B.rot.copy()
    dyn = ~B.static
    mujoco.mj_forward(m, d)
    energy = [float(d.energy[0] + d.energy[1])]
    gaps = []
    times = np.empty(steps)
    for s in range(steps):
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        times[s] = time.perf_counter() - t0
        pos[dyn] = d.xpos[ids[dyn]]
        rot[dyn] = d.xmat[ids[dyn]].reshape(-1, 3, 3)
        gaps.append(_gap_max(world.J, B.static, pos, rot))
        mujoco.mj_energyPos(m, d)
        mujoco.mj_energyVel(m, d)
        energy.append(float(d.energy[0] + d.energy[1]))
        if not np.isfinite(energy[-1]):
            break
    return times[:s + 1], np.array(gaps), np.array(energy)


def run_pybullet(p, world, steps):
    B, J = world.B, world.J
    cid = p.connect(p.DIRECT)
    try:
        p.setGravity(*world.settings.gravity, physicsClientId=cid)
        p.setPhysicsEngineParameter(fixedTimeStep=world.settings.h, physicsClientId=cid)
        n = len(world.models)
        uid = {}
        for b in range(n):
            if B.static[b]:
                continue
            q = matrix_to_quat(B.rot[b])
            uid[b] = p.createMultiBody(baseMass=world.models[b].mass,
                                       basePosition=B.pos[b].tolist(),
                                       baseOrientation=[q[1], q[2], q[3], q[0]],
                                       physicsClientId=cid)
            p.changeDynamics(uid[b], -1, localInertiaDiagonal=np.maximum(
                B.inertia[b], 1e-9).tolist(), linearDamping=0.0, angularDamping=0.0,
                activationState=p.ACTIVATION_STATE_DISABLE_SLEEPING, physicsClientId=cid)
        for j in range(J.kind.shape[0]):
            s1 = 0 if (J.body[j, 0] in uid) else 1
            other = J.body[j, 1 - s1]
            if other in uid:
                c = p.createConstraint(uid[J.body[j, s1]], -1, uid[other], -1,
                                       p.JOINT_POINT2POINT, [0, 0, 0],
                                       J.anchor[j, s1].tolist(), J.anchor[j, 1 - s1].tolist(),
                                       physicsClientId=cid)
            else:
                wp = world.joint_anchor_world()[j, 1 - s1]
                c = p.createConstraint(uid[J.body[j, s1]], -1, -1, -1, p.JOINT_POINT2POINT,
                                       [0, 0, 0], J.anchor[j, s1].tolist(), wp.tolist(),
                                       physicsClientId=cid)
            p.changeConstraint(c, maxForce=1e12, physicsClientId=cid)
        pos, rot = B.pos.copy(), B.rot.copy()
        vel, omega = np.zeros((n, 3)), np.zeros((n, 3))
        mass = np.array([0.0 if B.static[b] else world.models[b].mass for b in range(n)])
        g = np.asarray(world.settings.gravity, dtype=np.float64)

        def read():
            for b, u in uid.items():
                x, q = p.getBasePositionAndOrientation(u, physicsClientId=cid)
                v, w = p.getBaseVelocity(u, physicsClientId=cid)
                pos[b], vel[b], omega[b] = x, v, w
                rot[b] = np.array(p.getMatrixFromQuaternion(q)).reshape(3, 3)
            wb = np.einsum("bki,bk->bi", rot, omega)  # body-frame angular velocity
            kin = 0.5 * (mass * (vel ** 2).sum(1)).sum() + 0.5 * (B.inertia * wb ** 2).sum()
            return kin - (mass * (pos @ g)).sum()

        energy = [read()]
        gaps = []
        times = np.empty(steps)
        for s in range(steps):
            t0 = time.perf_counter()
            p.stepSimulation(physicsClientId=cid)
            times[s] = time.perf_counter() - t0
            energy.append(read())
            gaps.append(_gap_max(J, B.static, pos, rot))
            if not np.isfinite(energy[-1]):
                break
        return times[:s + 1], np.array(gaps), np.array(energy)
    finally:
        p.disconnect(physicsClientId=cid)
