"""Peer engines on our scenes, for `impulse bench tree` and `impulse bench contacts` (optional
extra `peers`: mujoco, pybullet). Models are built from a loaded World, so they have the
same bodies (mass, principal moments, centre of mass, principal frame), joint anchors,
gravity and h:
  mujoco-ball-{euler,rk4}: the joint tree in reduced coordinates (nested bodies, ball joints);
  mujoco-connect:         free bodies held together by `connect` equality constraints;
  pybullet-p2p:           one rigid multibody per body, JOINT_POINT2POINT constraints.
No collision geometry and no damping anywhere. Each runner returns per-step wall times of
the stepping calls only, the largest joint gap and the energy track (checked every step,
outside the timed calls).

mjcf_contacts / run_mujoco_contacts (the contacts bench's behaviour figures): the same
bodies with their shapes (sphere, box, capsule, cylinder, plane) as MuJoCo geoms, free or
hung from a fixed body by a ball or hinge joint, and one explicit contact pair per pair of
shapes that collides in our engine, with our combined materials: mu = sqrt(mu_A mu_B)
(static friction; condim 1 where it is 0; condim 4 / 6 with the larger torsional / rolling
coefficient where one is set) and e = max(e_A, e_B). MuJoCo has no Newton
restitution: its contact is a soft spring-damper, so e > 0 is given as solref = (-k, -b),
k = w^2, b = 2 zeta w, with the damped oscillator's zeta = -ln e / sqrt(pi^2 + ln^2 e) and
w = 1/(2 h) (MuJoCo's stiffest safe time constant is 2 h); e = 0 keeps MuJoCo's defaults.
"""
import math
import time
from contextlib import contextmanager

import numpy as np

from ..joints import BALL
from ..rotations import matrix_to_quat
from ..shapes import BOX, CAPSULE, CYLINDER, PLANE, SPHERE
from ..solvers import graph


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
    inertia = np.maximum(B.const.inertia[b], 1e-9)
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
    if W.tr_other.shape[0] or any(world.J.const.kind[j] != BALL for j in W.tr_joint):
        raise ValueError("mjcf_tree needs an acyclic scene of ball joints")
    J, n = world.J, len(world.models)
    children = {b: [] for b in range(-1, n)}
    for b in range(n):
        p = W.tr_parent_joint[b]
        if p < 0:
            continue
        other = J.const.body[p, 1 - W.tr_parent_side[b]]
        children[other if other >= 0 and not world.B.static[other] else -1].append(b)

    def build(b, prot, ppos):
        p = W.tr_parent_joint[b]
        inner = f'<joint type="ball" pos="{_f(J.const.anchor[p, W.tr_parent_side[b]])}"/>'
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
    for j in range(J.const.kind.shape[0]):
        dyn = [s for s in (0, 1) if J.const.body[j, s] >= 0 and not B.static[J.const.body[j, s]]]
        s1 = dyn[0]
        other = J.const.body[j, 1 - s1]
        b2 = f' body2="b{other}"' if (other >= 0 and not B.static[other]) else ""
        anchor = _f(J.const.anchor[j, s1])
        eq.append(f'<connect body1="b{J.const.body[j, s1]}"{b2} anchor="{anchor}"/>')
    return (f"<mujoco>{_option(world, integrator)}<worldbody>{bodies}</worldbody>"
            f"<equality>{''.join(eq)}</equality></mujoco>")


def _gap_max(J, static, pos, rot):
    """Largest joint gap for world poses pos (n,3), rot (n,3,3) of our bodies."""
    pts = np.empty((J.const.kind.shape[0], 2, 3))
    for s in range(2):
        b = J.const.body[:, s]
        dyn = (b >= 0) & ~static[np.maximum(b, 0)]
        loc = J.const.anchor[:, s]
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
                B.const.inertia[b], 1e-9).tolist(), linearDamping=0.0, angularDamping=0.0,
                activationState=p.ACTIVATION_STATE_DISABLE_SLEEPING, physicsClientId=cid)
        for j in range(J.const.kind.shape[0]):
            s1 = 0 if (J.const.body[j, 0] in uid) else 1
            other = J.const.body[j, 1 - s1]
            if other in uid:
                c = p.createConstraint(uid[J.const.body[j, s1]], -1, uid[other], -1,
                                       p.JOINT_POINT2POINT, [0, 0, 0],
                                       J.const.anchor[j, s1].tolist(),
                                       J.const.anchor[j, 1 - s1].tolist(),
                                       physicsClientId=cid)
            else:
                wp = world.joint_anchor_world()[j, 1 - s1]
                c = p.createConstraint(uid[J.const.body[j, s1]], -1, -1, -1, p.JOINT_POINT2POINT,
                                       [0, 0, 0], J.const.anchor[j, s1].tolist(), wp.tolist(),
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
            kin = 0.5 * (mass * (vel ** 2).sum(1)).sum() + 0.5 * (B.const.inertia * wb ** 2).sum()
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


# ---- contact scenes (impulse bench contacts: behaviour figures) ---------------------------

_Y_TO_Z = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])  # geom z = our y


def _geom_xml(name, shape, pos, rot):
    kind, size = shape["kind"], shape["size"]
    if kind == SPHERE:
        typ, sz = "sphere", f"{size[0]:.12g}"
    elif kind == BOX:
        typ, sz = "box", _f(size)
    elif kind in (CAPSULE, CYLINDER):   # along our local y, MuJoCo's local z
        typ, sz, rot = ("capsule" if kind == CAPSULE else "cylinder",
                        f"{size[0]:.12g} {size[1]:.12g}", rot @ _Y_TO_Z)
    elif kind == PLANE:                 # normal: our local y, MuJoCo's local z
        typ, sz, rot = "plane", "0 0 1", rot @ _Y_TO_Z
    else:
        raise ValueError(f"mjcf_contacts: no MuJoCo geom for shape kind {kind}")
    return (f'<geom name="{name}" type="{typ}" size="{sz}" pos="{_f(pos)}" '
            f'quat="{_f(matrix_to_quat(rot))}" contype="0" conaffinity="0"/>')


def _material(model):
    """(static friction, restitution, torsional, rolling) of a body's material."""
    m = model.material or {}
    return (float(m.get("static_friction", 0.5)), float(m.get("restitution", 0.0)),
            float(m.get("torsional_friction", 0.0)), float(m.get("rolling_friction", 0.0)))


def _pair_xml(g1, g2, mu, e, h, torsional=0.0, rolling=0.0):
    """A MuJoCo contact pair; condim 4 / 6 add its torsional / rolling friction (lengths,
    as ours: MuJoCo's friction="slide slide torsion roll roll")."""
    xml = f'<pair geom1="{g1}" geom2="{g2}"'
    if mu > 0:
        condim = 6 if rolling > 0 else 4 if torsional > 0 else 3
        xml += (f' condim="{condim}" friction="{mu:.12g} {mu:.12g} {torsional:.12g} '
                f'{rolling:.12g} {rolling:.12g}"')
    else:
        xml += ' condim="1"'
    if e > 0:
        w = 1.0 / (2.0 * h)
        le = math.log(min(e, 1.0))
        zeta = -le / math.sqrt(math.pi ** 2 + le ** 2)
        xml += f' solref="{-w * w:.12g} {-2.0 * zeta * w:.12g}"'
    return xml + "/>"


def mjcf_contacts(world, integrator="Euler"):
    """MJCF of a contact scene (module docstring). Returns (xml, {body index: MuJoCo body
    name}); qpos follows the bodies' order; set the initial velocities with
    mujoco_set_velocities."""
    B, models = world.B, world.models
    h = world.settings.h
    joint_of = {}                       # dynamic body -> (kind, world anchor, world axis)
    jointed = set()
    for jm, wa in zip(world.joint_models, world.joint_anchor_world(), strict=True):
        names = jm.bodies
        idx = [-1 if n == "world" else world.body_index(n) for n in names]
        dyn = [s for s in (0, 1) if idx[s] >= 0 and not B.static[idx[s]]]
        if len(dyn) != 1 or jm.kind not in ("ball", "hinge"):
            raise ValueError("mjcf_contacts: only ball and hinge joints from a fixed body "
                             "or the world")
        b = idx[dyn[0]]
        if b in joint_of:
            raise ValueError(f"mjcf_contacts: body {models[b].name} has two joints")
        axis = np.asarray(jm.spec.get("axis", [1.0, 0.0, 0.0]), dtype=np.float64)
        if jm.kind == "hinge" and "axis" not in jm.spec:
            raise ValueError("mjcf_contacts: a hinge needs its world 'axis' in the scene")
        joint_of[b] = (jm.kind, wa[dyn[0]], axis / np.linalg.norm(axis))
        if not jm.spec.get("collide", False) and min(idx) >= 0:
            jointed.add((min(idx), max(idx)))
    spec = world.contacts_spec or {}
    if spec.get("enabled", True) is False:
        raise ValueError("mjcf_contacts: the scene's contacts are off")
    for a, b in spec.get("disabled_pairs", []):
        ia, ib = world.body_index(a), world.body_index(b)
        jointed.add((min(ia, ib), max(ia, ib)))
    static_xml, body_xml, geoms = [], [], []
    for b, m in enumerate(models):
        col = m.collision or {}
        on = col.get("enabled", True)
        group = (int(col.get("group", -1)) if on else 0) & 0xFFFFFFFF
        mask = (int(col.get("mask", -1)) if on else 0) & 0xFFFFFFFF
        inner = []
        for k, s in enumerate(m.shapes):
            name = f"g{b}_{k}"
            geoms.append((name, b, group, mask))
            if B.static[b]:
                static_xml.append(_geom_xml(name, s, B.pos[b] + B.rot[b] @ s["pos"],
                                            B.rot[b] @ s["rot"]))
            else:
                inner.append(_geom_xml(name, s, s["pos"], s["rot"]))
        if B.static[b]:
            continue
        if b in joint_of:
            kind, anchor, axis = joint_of[b]
            local = B.rot[b].T @ (anchor - B.pos[b])
            joint = (f'<joint name="j{b}" type="{kind}" pos="{_f(local)}"'
                     + (f' axis="{_f(B.rot[b].T @ axis)}"' if kind == "hinge" else "") + "/>")
        else:
            joint = f'<freejoint name="j{b}"/>'
        inertia = np.maximum(B.const.inertia[b], 1e-9)
        body_xml.append(f'<body name="b{b}" pos="{_f(B.pos[b])}" '
                        f'quat="{_f(matrix_to_quat(B.rot[b]))}">{joint}'
                        f'<inertial pos="0 0 0" mass="{m.mass:.12g}" '
                        f'diaginertia="{_f(inertia)}"/>{"".join(inner)}</body>')
    pairs = []
    for i, (g1, b1, gr1, m1) in enumerate(geoms):
        for g2, b2, gr2, m2 in geoms[i + 1:]:
            if b1 == b2 or (B.static[b1] and B.static[b2]) or (b1, b2) in jointed:
                continue
            if not (gr1 & m2) or not (gr2 & m1):
                continue
            (mu1, e1, t1, r1), (mu2, e2, t2, r2) = _material(models[b1]), _material(models[b2])
            pairs.append(_pair_xml(g1, g2, math.sqrt(mu1 * mu2), max(e1, e2), h, max(t1, t2),
                                   max(r1, r2)))
    g = world.settings.gravity
    xml = (f'<mujoco><option timestep="{h:.12g}" gravity="{_f(g)}" integrator="{integrator}"/>'
           f'<worldbody>{"".join(static_xml)}{"".join(body_xml)}</worldbody>'
           f'<contact>{"".join(pairs)}</contact></mujoco>')
    return xml, {b: f"b{b}" for b in range(len(models)) if not B.static[b]}


def mujoco_contacts_model(mujoco, world, integrator="Euler"):
    """(model, data, names) of the scene (mjcf_contacts) at the world's current state: its
    bodies' velocities set, mj_forward done."""
    xml, names = mjcf_contacts(world, integrator)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    B = world.B
    for b in names:                      # initial velocities
        j = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, f"j{b}")
        adr, typ = m.jnt_dofadr[j], m.jnt_type[j]
        w_local = B.rot[b].T @ B.omega[b]
        if typ == mujoco.mjtJoint.mjJNT_FREE:
            d.qvel[adr:adr + 3] = B.vel[b]
            d.qvel[adr + 3:adr + 6] = w_local
        elif typ == mujoco.mjtJoint.mjJNT_BALL:
            d.qvel[adr:adr + 3] = w_local
        else:
            d.qvel[adr] = float(m.jnt_axis[j] @ w_local)
    mujoco.mj_forward(m, d)
    return m, d, names


@contextmanager
def warnings_quiet(mujoco):
    """MuJoCo's warnings not printed for the length of the `with` (a run that diverges is
    reported by its caller; a tower that falls in MuJoCo's Euler is the figures' business)."""
    warn = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda msg: None)
    try:
        yield
    finally:
        mujoco.set_mju_user_warning(warn)


def run_mujoco_contacts(mujoco, world, steps, integrator="Euler"):
    """The scene (mjcf_contacts) from the world's current state for `steps` steps of h.
    Returns (pos, rot, vel, omega: (steps+1, n, ...) per body at the centre of mass, the
    fixed bodies left where they are; diverged: the time at which MuJoCo found its
    accelerations bad and reset itself, or None). (Its step times: bench/contacts.py
    times MuJoCo beside our engine instead.)"""
    m, d, names = mujoco_contacts_model(mujoco, world, integrator)
    B = world.B
    n = len(world.models)
    ids = {b: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name) for b, name in names.items()}
    pos = np.repeat(B.pos[None].copy(), steps + 1, axis=0)
    rot = np.repeat(B.rot[None].copy(), steps + 1, axis=0)
    vel = np.zeros((steps + 1, n, 3))
    omega = np.zeros((steps + 1, n, 3))
    vel[0], omega[0] = B.vel, B.omega
    res = np.zeros(6)
    bad = int(mujoco.mjtWarning.mjWARN_BADQACC)
    diverged = None
    with warnings_quiet(mujoco):
        for s in range(steps):
            mujoco.mj_step(m, d)
            if diverged is None and d.warning[bad].number > 0:
                diverged = (s + 1) * world.settings.h
            for b, i in ids.items():
                pos[s + 1, b] = d.xpos[i]
                rot[s + 1, b] = d.xmat[i].reshape(3, 3)
                mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, i, res, 0)
                omega[s + 1, b], vel[s + 1, b] = res[:3], res[3:]
    return pos, rot, vel, omega, diverged
