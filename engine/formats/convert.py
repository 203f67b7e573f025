"""A compiled MuJoCo model (from MJCF or URDF, engine/formats/load.py) -> our scene document.

The model is taken in its reference pose (qpos0), or in a keyframe's or a given qpos:
MuJoCo's forward kinematics there gives every body's centre of mass, principal axes, and
every joint's anchor and axis in world coordinates, which become our bodies' poses and
joints' `anchor`/`axis` (Z up -> Y up, engine/formats/frames.py). Our joint coordinates are
0 in that pose, so MuJoCo's limits, spring rest positions and servo targets are shifted by
the pose's joint values.

- Bodies: a MuJoCo body with joints is one of ours; a body without joints is welded to its
  parent and joins it (mass, centre and inertia summed, its geoms added), and bodies welded
  to the world (and the world's own geoms) are fixed bodies.
- Joints: hinge -> hinge (limits), slide -> slider, ball -> ball, free -> none (a free body);
  two hinges of one body about one point at right angles -> universal; three hinges about one
  point -> ball. Stiffness, springref and damping -> spring. Armature of rotations (hinges,
  ball and free joints) -> the child body's inertia about the joint's axis (exact where the
  parent is fixed; _Builder.armature); of sliders: not mapped.
- Closed loops: equality `connect` -> ball joint, `weld` -> fixed joint.
- Actuators on hinges and sliders: position (kp, kv) -> the joint's spring (stiffness kp,
  rest ctrl, damping kv, added to the joint's own), velocity (kv) -> damping kv and a joint
  load kv * ctrl; a gain too stiff for the model's time step -> a hard motor (servo at ctrl,
  velocity motor at ctrl) with max_force = the force range (_Builder.actuators). Motor (a
  torque input) -> a joint load (`loads`, engine/loads.py) whose effort is gear * ctrl
  within the force range (0 unless a keyframe or `ctrl` sets it; set it with
  World.edit_load(name, {"effort": ...})). Friction loss on a hinge or slider without a
  hard motor: a velocity motor holding speed 0 with at most the friction force (dry
  friction).
- Contacts: `exclude` -> contacts.disabled_pairs; contype/conaffinity -> collision group/mask;
  the first collision geom's friction -> material.
Whatever has no counterpart is listed in `Unmapped`: one warning per kind.
"""
import logging
import os
import time
from dataclasses import dataclass, field

import numpy as np

from ..scene_schema import DAMPING, FORCE, MASS, STIFFNESS, VERSION
from .frames import UP, floats, quat
from .geoms import BOX, CAPSULE, ELLIPSOID, MESH, PLANE, SPHERE, mesh_vertices, shape_entries

log = logging.getLogger(__name__)

FREE, BALL, SLIDE, HINGE = 0, 1, 2, 3
EQ_CONNECT, EQ_WELD = 0, 1
TRN_JOINT = 0
GAIN_FIXED, BIAS_NONE, BIAS_AFFINE, DYN_NONE = 0, 0, 1, 0
STATIC_NAME = "world_geoms"     # the world body's own geoms (floors): a fixed body
# a position actuator's gain acts within a step where sqrt(kp / I) h exceeds this (I: the
# dof's effective inertia, 1 / [M^-1]_jj): there it is a hard servo, not a joint spring
# (_Builder.actuators; tests/test_import_gains.py)
STIFF = 1.0
# a velocity actuator is a damper kv and a joint load kv * target while kv h k <= this (k:
# the joint's two links' own inverse inertia about it, _Builder.row_inverse_mass), else a
# hard velocity motor: the damper acts as one impulse at t, the load as two half kicks, so
# between the step's ends the joint moves kv h k_eff / 2 slower than its rate there (k_eff
# <= k: through the joint's locks; at most 5 % here, 0.43 % on tests/test_import_gains.py's
# pendulum), and an explicit damper's approach to the target (1 - kv h k_eff per step
# against exp(-kv h k_eff)) stays close to the exponential
STIFF_PULL = 0.1
# an imported robot's settings: the tree solver (jointed machines, servos on the ground
# included), tight tolerances and 30 contact sweeps: a servo-held quadruped on its feet
# stands within 5 mm at h = 1/60 (tests/test_import_stand.py; with the defaults 1e-5, 10
# sweeps it hops and falls over)
SETTINGS = {"solver": "tree", "eps_pos": 1e-7, "eps_vel": 1e-6, "contact_cycles": 30,
            "contact_tolerance": 1e-7}


class Unmapped:
    """What the import could not carry over: kind -> names of the items, in order."""

    def __init__(self):
        self.kinds = {}

    def add(self, kind, what):
        items = self.kinds.setdefault(kind, [])
        if what not in items:
            items.append(what)

    def lines(self):
        """One line per kind: 'kind: n (first few names)'."""
        out = []
        for kind, items in self.kinds.items():
            shown = ", ".join(items[:4]) + (", ..." if len(items) > 4 else "")
            out.append(f"{kind}: {len(items)} ({shown})")
        return out

    def log(self, source):
        for line in self.lines():
            log.warning("%s: not mapped: %s", source, line)


@dataclass
class Imported:
    """A converted model: the scene document and what the conversion left out."""
    doc: dict
    source: str
    kind: str                          # "urdf" or "mjcf"
    unmapped: Unmapped
    counts: dict = field(default_factory=dict)   # bodies, joints, hulls, shapes
    seconds: float = 0.0               # parse + compile + convert
    qpos: object = None                # the pose converted (None: the model's own qpos0)


def convert_file(path, actuators=True, decompose=False, keyframe=None, floating=False,
                 servos=False, ground=False, pose=None):
    """Read a URDF/MJCF file and convert it; one warning per unmapped kind is logged.
    `decompose`: meshes split into convex parts (CoACD, cached) instead of one hull;
    `keyframe`: the name of the MJCF keyframe to start in (its qpos and ctrl); `pose`:
    {hinge or slider name: value} (MuJoCo's coordinates: rad, m) on top of that; `floating`,
    `servos`, `ground`: see load_model and model_to_scene."""
    from .load import load_model
    t0 = time.perf_counter()
    model, kind = load_model(path, floating=floating)
    qpos = ctrl = None
    if keyframe is not None:
        import mujoco
        k = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, keyframe)
        if k < 0:
            from .errors import ModelError
            raise ModelError(path, f"no keyframe named {keyframe!r}")
        qpos, ctrl = model.key_qpos[k], model.key_ctrl[k]
    if pose:
        qpos = _posed(model, path, model.qpos0 if qpos is None else qpos, pose)
    result = model_to_scene(model, path, kind, actuators=actuators, decompose=decompose,
                            qpos=qpos, ctrl=ctrl, servos=servos, ground=ground)
    result.seconds = time.perf_counter() - t0
    result.qpos = qpos
    result.unmapped.log(path)
    return result


def _posed(model, path, qpos, pose):
    """qpos with the named hinges and sliders set."""
    import mujoco
    q = np.array(qpos, dtype=np.float64)
    for name, value in pose.items():
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        if j < 0 or model.jnt_type[j] not in (HINGE, SLIDE):
            from .errors import ModelError
            raise ModelError(path, f"--pose: no hinge or slide joint named {name!r}")
        q[model.jnt_qposadr[j]] = float(value)
    return q


def lowest_point(m, d):
    """The lowest height (MuJoCo's z) of the moving bodies' collision geometry."""
    low = np.inf
    for g in range(m.ngeom):
        if m.geom_bodyid[g] == 0 or (m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0):
            continue
        c, R, size, kind = d.geom_xpos[g], d.geom_xmat[g].reshape(3, 3), m.geom_size[g], \
            int(m.geom_type[g])
        if kind == SPHERE:
            z = c[2] - size[0]
        elif kind == CAPSULE:
            z = c[2] - abs(R[2, 2]) * size[1] - size[0]
        elif kind == MESH:
            z = np.min((mesh_vertices(m, g) @ R.T)[:, 2]) + c[2]
        elif kind == PLANE:
            continue
        else:       # box, cylinder, ellipsoid: their bounding box's corners
            half = size if kind in (BOX, ELLIPSOID) else np.array([size[0], size[0], size[1]])
            z = c[2] - np.abs(R[2, :]) @ half
        low = min(low, float(z))
    return low if np.isfinite(low) else 0.0


def _name(m, obj, i, prefix):
    import mujoco
    name = mujoco.mj_id2name(m, obj, i)
    return name if name else f"{prefix}{i}"


class _Builder:
    """One conversion (the model, its data in the starting pose q0, the groups of welded
    bodies)."""

    def __init__(self, m, source, decompose=False, qpos=None, qvel=None):
        import mujoco
        self.mj = mujoco
        self.m, self.source, self.decompose = m, source, decompose
        self.d = mujoco.MjData(m)
        self.q0 = m.qpos0.copy() if qpos is None else np.asarray(qpos, dtype=np.float64)
        self.d.qpos[:] = self.q0
        if qvel is not None:
            self.d.qvel[:] = qvel
        mujoco.mj_forward(m, self.d)
        self.unmapped = Unmapped()
        self.counts = {"bodies": 0, "joints": 0, "hulls": 0, "shapes": 0}
        self.efforts = {}          # joint id -> (actuator name, effort): torque inputs
        self.gains = {}            # joint id -> [(kp, target, kv)]: soft servos (springs)
        self.gain_names = {}       # joint id -> [their actuators' names]
        self.pulls = []            # (joint id, velocity actuator, kv * target): joint loads
        self._minv = None          # diagonal of M^-1 in the starting pose (inverse_inertia)
        self.inertia = {}          # moving group -> (mass, centre, world inverse inertia)
        self.loads = []            # the scene's joint loads for them (joints())
        # group[b]: the body that carries MuJoCo body b (itself where it has joints)
        self.group = np.zeros(m.nbody, dtype=int)
        for b in range(1, m.nbody):
            parent = m.body_parentid[b]
            self.group[b] = b if m.body_jntnum[b] > 0 or parent == 0 else self.group[parent]
        self.static = {0} | {b for b in range(1, m.nbody)
                             if self.group[b] == b and m.body_jntnum[b] == 0}
        self.names = {0: STATIC_NAME}
        used = {"world", STATIC_NAME}
        for b in range(1, m.nbody):
            if self.group[b] == b:
                name = _name(m, mujoco.mjtObj.mjOBJ_BODY, b, "body")
                while name in used:
                    name += "_"
                used.add(name)
                self.names[b] = name
        self.pose = {}        # group -> (position, rotation) in our world frame
        self.emitted = set()  # groups written as bodies

    # ---------------------------------------------------------------- bodies
    def members(self, g):
        return [b for b in range(self.m.nbody) if self.group[b] == g and (b or g == 0)]

    def armature(self, g):
        """The rotor inertia of group g's joints, as two tensors (MuJoCo's world frame):
        `axial`, armature * w w^T for each rotational dof (w: its unit axis, d.cdof's angular
        part; hinges, ball and free joints' rotations), and `rods`, armature * (E - w w^T).
        The axial part adds exactly the dof's armature to its joint-space inertia where the
        parent is fixed, as MuJoCo does; where the parent moves it also turns with the
        parent about that axis (approximate). Translational dofs (slide, a free joint's
        translation) have no counterpart: a mass along one axis only."""
        m, d = self.m, self.d
        axial, rods = np.zeros((3, 3)), np.zeros((3, 3))
        for j in range(m.body_jntadr[g], m.body_jntadr[g] + m.body_jntnum[g]):
            name = _name(m, self.mj.mjtObj.mjOBJ_JOINT, j, "joint")
            n = {FREE: 6, BALL: 3}.get(int(m.jnt_type[j]), 1)
            for k in range(m.jnt_dofadr[j], m.jnt_dofadr[j] + n):
                if m.dof_armature[k] <= 0:
                    continue
                w = d.cdof[k, :3]
                if w @ w > 0.5:
                    ww = np.outer(w, w) / (w @ w)
                    axial += m.dof_armature[k] * ww
                    rods += m.dof_armature[k] * (np.eye(3) - ww)
                    if self.group[m.body_parentid[g]] not in self.static:
                        self.unmapped.add("armature below a moving parent (in the child's "
                                          "inertia: it also turns with the parent, which "
                                          "MuJoCo's does not)", name)
                else:
                    self.unmapped.add("armature of sliders and free joints' translations (a "
                                      "mass along one axis only)", name)
        return axial, rods

    @staticmethod
    def with_rotors(tensor, axial, rods):
        """tensor + axial + y rods with the least y in [0, 1/2] that leaves a rigid body's
        inertia (each principal moment at most the sum of the other two; y = 1/2 adds a flat
        disc per axis, a rigid body itself). Large armature on a slim link needs some: the
        moments across the axis, which the joint holds where the parent is fixed."""
        def valid(y):
            small, mid, large = np.linalg.eigvalsh(tensor + axial + y * rods)
            return large <= (small + mid) * (1 - 1e-9)      # a margin for rounding
        if valid(0.0):
            return tensor + axial
        lo, hi = 0.0, 0.5
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if valid(mid) else (mid, hi)
        return tensor + axial + hi * rods

    def mass_frame(self, g):
        """(mass, principal moments, centre, principal axes) of group g, our world frame;
        the armature of its joints' rotations added to its inertia (armature(),
        with_rotors()) and the principal axes found again."""
        m, d = self.m, self.d
        bodies = self.members(g)
        axial, rods = self.armature(g) if g else (np.zeros((3, 3)), np.zeros((3, 3)))
        if len(bodies) == 1 and not np.any(axial):
            b = bodies[0]
            R = UP @ d.ximat[b].reshape(3, 3)
            return float(m.body_mass[b]), m.body_inertia[b].copy(), UP @ d.xipos[b], R
        mass = sum(float(m.body_mass[b]) for b in bodies)
        com = sum(m.body_mass[b] * d.xipos[b] for b in bodies) / max(mass, 1e-300)
        tensor = np.zeros((3, 3))
        for b in bodies:
            R = d.ximat[b].reshape(3, 3)
            r = d.xipos[b] - com
            tensor += R @ np.diag(m.body_inertia[b]) @ R.T + m.body_mass[b] * (
                r @ r * np.eye(3) - np.outer(r, r))
        if np.any(axial):
            tensor = self.with_rotors(tensor, axial, rods)
        moments, axes = np.linalg.eigh(UP @ tensor @ UP.T)
        if np.linalg.det(axes) < 0:
            axes[:, 2] = -axes[:, 2]
        return mass, np.maximum(moments, 0.0), UP @ com, axes

    def body_entry(self, g):
        d = self.d
        name = self.names[g]
        entry = {"name": name}
        if g in self.static:
            pos = UP @ d.xpos[g] if g else np.zeros(3)
            R = UP @ d.xmat[g].reshape(3, 3) if g else np.eye(3)
            entry["fixed"] = True
        else:
            mass, moments, pos, R = self.mass_frame(g)
            if mass < MASS[0]:
                self.unmapped.add("masses below 1e-6 kg (raised to 1e-6 kg)", name)
                moments = moments * (MASS[0] / mass) if mass > 0 else np.full(3, 1e-9)
                mass = MASS[0]
            if not np.max(moments) > 0:
                self.unmapped.add("bodies without inertia (given a tiny sphere's)", name)
                moments = np.full(3, 0.4 * mass * 1e-4)
            entry["mass"] = mass
            entry["inertia"] = floats(moments)
            self.inertia[g] = (mass, pos, R @ np.diag(1.0 / np.maximum(moments, 1e-300)) @ R.T)
            self.motion(entry, g, pos)
            # the body's frame is its principal frame: without this the loader would take
            # the shapes' centroid for the centre of mass
            entry["center_of_mass"] = [0.0, 0.0, 0.0]
        self.pose[g] = (pos, R)
        if np.linalg.norm(pos) > 0:
            entry["position"] = floats(pos)
        if not np.allclose(R, np.eye(3), atol=1e-15, rtol=0):
            entry["orientation"] = quat(R)
        shapes, geoms = self.shapes(g, pos, R)
        if len(shapes) == 1:
            entry["shape"] = shapes[0]
        elif shapes:
            entry["shapes"] = shapes
        if geoms:
            self.material(entry, geoms)
        if g in self.static and not shapes:
            return None         # nothing to collide with: joints to it go to "world"
        return entry

    def motion(self, entry, g, com):
        """The group's velocity at its centre `com` and its angular velocity (where the
        starting state moves)."""
        res = np.zeros(6)
        self.mj.mj_objectVelocity(self.m, self.d, self.mj.mjtObj.mjOBJ_BODY, g, res, 0)
        omega, v_root = UP @ res[:3], UP @ res[3:]
        if np.any(omega) or np.any(v_root):
            v = v_root + np.cross(omega, com - UP @ self.d.xipos[g])
            entry["velocity"] = floats(v)
            entry["angular_velocity"] = floats(omega)

    def shapes(self, g, pos, R):
        """Shape entries of the group's collision geoms (body frame) and those geoms."""
        m, d = self.m, self.d
        out, geoms = [], []
        for b in self.members(g):
            for k in range(m.body_geomnum[b]):
                geom = m.body_geomadr[b] + k
                what = _name(m, self.mj.mjtObj.mjOBJ_GEOM, geom, f"{self.names[g]}/geom")
                if m.geom_contype[geom] == 0 and m.geom_conaffinity[geom] == 0:
                    continue      # visual only: the viewer's meshes (formats/visuals.py)
                if m.geom_type[geom] == PLANE and g not in self.static:
                    self.unmapped.add("planes on moving bodies", what)
                    continue
                gpos = R.T @ (UP @ d.geom_xpos[geom] - pos)
                grot = R.T @ UP @ d.geom_xmat[geom].reshape(3, 3)
                shapes = shape_entries(m, geom, gpos, grot, self.unmapped, what,
                                       self.decompose)
                out.extend(shapes)
                geoms.extend([geom] * len(shapes))
                self.counts["shapes"] += len(shapes)
                if m.geom_type[geom] == MESH:
                    self.counts["hulls"] += len(shapes)
        return out, geoms

    def material(self, entry, geoms):
        m = self.m
        g0 = geoms[0]
        mu = m.geom_friction[g0]
        entry["material"] = {"static_friction": float(min(mu[0], 10.0)),
                             "torsional_friction": float(min(mu[1], 1.0)),
                             "rolling_friction": float(min(mu[2], 1.0))}
        mat = m.geom_matid[g0]
        rgba = m.mat_rgba[mat] if mat >= 0 else m.geom_rgba[g0]
        entry["color"] = [float(np.clip(c, 0, 1)) for c in rgba[:3]]
        types = {(int(m.geom_contype[g]), int(m.geom_conaffinity[g])) for g in geoms}
        if len(types) > 1:
            self.unmapped.add("per-geom contype/conaffinity within one body (the first "
                              "geom's kept)", entry["name"])
        contype, conaff = int(m.geom_contype[g0]), int(m.geom_conaffinity[g0])
        if contype != conaff:
            self.unmapped.add("contype != conaffinity (mapped to group/mask, which must match "
                              "both ways)", entry["name"])
        if (contype, conaff) != (1, 1):
            entry["collision"] = {"group": contype, "mask": conaff}

    def body_ref(self, b):
        """The name a joint uses for MuJoCo body b: its group's, or "world"."""
        g = self.group[b]
        return self.names[g] if g in self.emitted else "world"

    # ---------------------------------------------------------------- joints
    def joints(self, actuated):
        m, d = self.m, self.d
        out = []
        for b in range(1, m.nbody):
            n = m.body_jntnum[b]
            if n == 0:
                continue
            js = list(range(m.body_jntadr[b], m.body_jntadr[b] + n))
            types = [int(m.jnt_type[j]) for j in js]
            names = [_name(m, self.mj.mjtObj.mjOBJ_JOINT, j, "joint") for j in js]
            if types == [FREE]:
                continue
            parent = self.body_ref(m.body_parentid[b])
            base = {"bodies": [parent, self.names[b]],
                    "anchor": floats(UP @ d.xanchor[js[0]])}
            same_point = all(np.allclose(d.xanchor[j], d.xanchor[js[0]], atol=1e-9) for j in js)
            axes = [UP @ d.xaxis[j] for j in js]
            if n == 1 and types[0] in (HINGE, SLIDE):
                entry = {"name": names[0], "type": "hinge" if types[0] == HINGE else "slider",
                         **base, "axis": floats(axes[0])}
                self.coordinate(entry, js[0], actuated)
                if js[0] in self.efforts:
                    act, effort = self.efforts[js[0]]
                    self.loads.append({"name": act, "joint": names[0], "effort": effort})
                for j, act, effort in self.pulls:
                    if j == js[0]:
                        self.loads.append({"name": act, "joint": names[0],
                                           "effort": float(np.clip(effort, -FORCE, FORCE))})
            elif n == 1 and types[0] == BALL:
                entry = {"name": names[0], "type": "ball", **base}
                if m.jnt_limited[js[0]]:
                    self.unmapped.add("ball joint limits (cones)", names[0])
                self.dof_extras(js[0], names[0], ball=True)
            elif types == [HINGE, HINGE] and same_point and abs(axes[0] @ axes[1]) < 1e-9:
                entry = {"name": "+".join(names), "type": "universal", **base,
                         "axis": floats(axes[0]), "axis2": floats(axes[1])}
                for j, name, key in zip(js, names, ("limits", "limits2"), strict=True):
                    lim = self.limits(j)
                    if lim:
                        entry[key] = lim
                    self.dof_extras(j, name, ball=True)
            elif types == [HINGE] * 3 and same_point and abs(np.linalg.det(axes)) > 1e-6:
                entry = {"name": "+".join(names), "type": "ball", **base}
                for j, name in zip(js, names, strict=True):
                    if m.jnt_limited[j]:
                        self.unmapped.add("limits of hinge triplets (mapped to ball joints)", name)
                    self.dof_extras(j, name, ball=True)
            else:
                self.unmapped.add("joint combinations with no counterpart (welded: fixed "
                                  "joint)", "+".join(names))
                entry = {"name": "+".join(names), "type": "fixed", **base}
            for j in js:
                if j in actuated and entry["type"] not in ("hinge", "slider"):
                    self.unmapped.add("actuators on joints other than hinges and sliders",
                                      actuated[j][0])
                if j in self.gains and entry["type"] not in ("hinge", "slider"):
                    self.unmapped.add("actuators on joints other than hinges and sliders",
                                      ", ".join(self.gain_names[j]))
                if j in self.efforts and entry["type"] not in ("hinge", "slider"):
                    self.unmapped.add("actuators on joints other than hinges and sliders",
                                      self.efforts[j][0])
            out.append(entry)
        return out

    def limits(self, j):
        """The joint's limits relative to the starting pose, as they are: our hinge angles
        are unwrapped like MuJoCo's (a range of several turns holds)."""
        m = self.m
        if not m.jnt_limited[j]:
            return None
        q0 = self.q0[m.jnt_qposadr[j]]
        lo, hi = m.jnt_range[j] - q0
        return {"lower": float(lo), "upper": float(hi)}

    def dof_extras(self, j, name, ball=False, friction_mapped=False):
        """Friction loss (unless `friction_mapped`) and, on ball-like joints, springs and
        damping (no such coordinate). Armature goes into the bodies' inertia (armature())."""
        m = self.m
        dofs = range(m.jnt_dofadr[j], m.jnt_dofadr[j] + (3 if m.jnt_type[j] == BALL else 1))
        if not friction_mapped and any(m.dof_frictionloss[k] > 0 for k in dofs):
            self.unmapped.add("frictionloss on ball, universal and actuated joints (the "
                              "joint's one motor is taken)", name)
        if ball and (m.jnt_stiffness[j] > 0 or any(m.dof_damping[k] > 0 for k in dofs)):
            self.unmapped.add("springs and damping on ball and universal joints", name)

    def coordinate(self, entry, j, actuated):
        """Limits, spring/damper and motor of a hinge or slider joint: the joint's own
        stiffness and damping and its soft position and velocity actuators' gains
        (self.gains) in one spring, since their forces add: k = stiffness + sum kp,
        rest = (stiffness * springref + sum kp * target) / k, damping = damping + sum kv
        (MuJoCo's coordinates less the starting pose's)."""
        m = self.m
        lim = self.limits(j)
        if lim:
            entry["limits"] = lim
        friction = float(m.dof_frictionloss[m.jnt_dofadr[j]])
        self.dof_extras(j, entry["name"], friction_mapped=j not in actuated)
        if friction > 0 and j not in actuated:
            # dry friction: a motor holding speed 0 with at most the friction force
            entry["motor"] = {"mode": "velocity", "target": 0.0,
                              "max_force": float(min(friction, FORCE))}
        q = m.jnt_qposadr[j]
        stiffness, damping = float(m.jnt_stiffness[j]), float(m.dof_damping[m.jnt_dofadr[j]])
        pull = stiffness * float(m.qpos_spring[q] - self.q0[q])    # k * rest, our coordinate
        for kp, target, kv in self.gains.get(j, ()):
            stiffness += kp
            pull += kp * (target - self.q0[q])
            damping += kv
        if stiffness > 0 or damping > 0:
            spring = {}
            if stiffness > 0:
                spring["stiffness"] = float(min(stiffness, STIFFNESS))
                spring["rest"] = float(pull / stiffness)
            if damping > 0:
                spring["damping"] = float(min(damping, DAMPING))
                if damping * self.m.opt.timestep * self.locked_inverse_mass(j) > 1.0:
                    self.unmapped.add("damping above one step's stop (c h k > 1, k: the "
                                      "joint's two links' inverse inertia about its axis; "
                                      "our damper stops them within a step at most, weaker "
                                      "than asked)", entry["name"])
            entry["spring"] = spring
        if j in actuated:
            name, motor = actuated[j]
            entry["motor"] = motor

    # ---------------------------------------------------------------- actuators
    def inverse_inertia(self, j):
        """[M^-1]_jj of the joint's (first) dof in the starting pose (MuJoCo's joint-space
        inertia, armature included): its effective inverse inertia with every other joint
        free, which sets how fast a gain on that dof acts."""
        m = self.m
        if self._minv is None:
            eye = np.eye(m.nv)
            out = np.zeros((m.nv, m.nv))
            self.mj.mj_solveM(self.m, self.d, out, eye)
            self._minv = np.diag(out).copy()
        return float(self._minv[m.jnt_dofadr[j]])

    def _joint_links(self, j):
        """(axis x, anchor, [(mass, centre, world inverse inertia)] of the joint's two links
        that move), our world frame; a fixed link (the world, or welded to it) is left out."""
        m, d = self.m, self.d
        b = int(m.jnt_bodyid[j])
        groups = (int(self.group[m.body_parentid[b]]), int(self.group[b]))
        return UP @ d.xaxis[j], UP @ d.xanchor[j], \
            [self.inertia[g] for g in groups if g in self.inertia]

    def row_inverse_mass(self, j):
        """k = 1 / (effective mass) of the joint's coordinate row alone, as a joint load's
        half kick moves it (STIFF_PULL): the joint's two bodies on their own, a hinge's axis
        through their inverse inertias, a slider's direction through their point masses at
        the anchor. k >= [M^-1]_jj (the other joints only add inertia)."""
        x, anchor, links = self._joint_links(j)
        k = 0.0
        for mass, com, inv in links:
            if self.m.jnt_type[j] == HINGE:
                k += x @ inv @ x
            else:
                r = np.cross(anchor - com, x)
                k += 1.0 / mass + r @ inv @ r
        return float(k)

    def locked_inverse_mass(self, j):
        """k_eff of the joint's coordinate through its locks, as the engine caps a joint
        damper (engine/joints/generic.apply_forces: at most the impulse rate / k_eff, one
        step's stop): each moving link turning about the hinge's axis through the anchor
        (1 / x^T (I_c + m (|r|^2 E - r r^T)) x, r from the anchor to its centre), or moving
        along the slider (1 / m); the links' terms added."""
        x, anchor, links = self._joint_links(j)
        k = 0.0
        for mass, com, inv in links:
            if self.m.jnt_type[j] == HINGE:
                r = com - anchor
                about = np.linalg.inv(inv) + mass * (r @ r * np.eye(3) - np.outer(r, r))
                k += 1.0 / (x @ about @ x)
            else:
                k += 1.0 / mass
        return float(k)

    def actuators(self):
        """{joint id: (actuator name, motor entry)} for the actuators mapped to our motors
        (hard constraints); position and velocity actuators soft enough for the model's
        time step go to self.gains instead ({joint id: [(kp, target, kv)]}, MuJoCo's
        coordinate), which coordinate() turns into the joint's spring, and a velocity
        actuator's pull towards its target speed (kv * target) into a joint load.

        MuJoCo's position actuator is the force kp (ctrl - q) - kv q', its velocity actuator
        kv (ctrl - q'), each times gear^2 on the joint (the actuator's length is gear times the
        joint's coordinate), clamped to the force range. A position gain acts within a
        step where sqrt(kp / I) h > STIFF (I = 1 / [M^-1]_jj): there a spring, explicit in
        our step as in MuJoCo's, would overshoot, and the hard servo (capped at the force
        range) takes the actuator. A velocity actuator's damper and load take it while
        kv h k <= STIFF_PULL (k: the joint's two links' own inverse inertia about it,
        row_inverse_mass; see STIFF_PULL), else a hard velocity motor. The springs and
        dampers have no force cap: a force range is listed as not mapped."""
        m = self.m
        out = {}
        h = float(m.opt.timestep)
        for a in range(m.nu):
            name = _name(m, self.mj.mjtObj.mjOBJ_ACTUATOR, a, "actuator")
            if m.actuator_trntype[a] != TRN_JOINT:
                self.unmapped.add("actuators on tendons, sites or bodies", name)
                continue
            if m.actuator_dyntype[a] != DYN_NONE:
                self.unmapped.add("actuators with activation dynamics", name)
                continue
            j = int(m.actuator_trnid[a, 0])
            gear = float(m.actuator_gear[a, 0])
            gain, bias = m.actuator_gainprm[a], m.actuator_biasprm[a]
            ctrl = float(np.clip(self.ctrl[a], *m.actuator_ctrlrange[a])) \
                if m.actuator_ctrllimited[a] else float(self.ctrl[a])
            kind = None
            if m.actuator_gaintype[a] == GAIN_FIXED and m.actuator_biastype[a] == BIAS_AFFINE \
                    and bias[0] == 0 and gain[0] > 0:
                if bias[1] == -gain[0] and bias[2] <= 0:
                    kind = "position"
                elif bias[1] == 0 and bias[2] == -gain[0]:
                    kind = "velocity"
            elif m.actuator_gaintype[a] == GAIN_FIXED and m.actuator_biastype[a] == BIAS_NONE \
                    and gear != 0 and gain[0] != 0:
                if j in self.efforts:
                    self.unmapped.add("second torque inputs on one joint", name)
                    continue
                cap = self.force_cap(a, j, gear)
                effort = float(np.clip(gain[0] * gear * ctrl, -cap, cap))
                self.efforts[j] = (name, effort)
                continue
            if kind is None or gear == 0:
                self.unmapped.add("actuators of other gain/bias types", name)
                continue
            cap = self.force_cap(a, j, gear)
            if m.jnt_type[j] not in (HINGE, SLIDE):
                self.unmapped.add("actuators on joints other than hinges and sliders", name)
                continue
            target = ctrl / gear
            if kind == "position":
                kp, kv = gain[0] * gear * gear, -bias[2] * gear * gear
                stiff = np.sqrt(kp * self.inverse_inertia(j)) * h > STIFF
            else:
                kp, kv = 0.0, gain[0] * gear * gear
                stiff = kv * self.row_inverse_mass(j) * h > STIFF_PULL
            if not stiff:
                self.gains.setdefault(j, []).append(
                    (kp, target if kind == "position" else 0.0, kv))
                self.gain_names.setdefault(j, []).append(name)
                if kind == "velocity":
                    self.pulls.append((j, name, kv * target))
                if cap < FORCE:
                    self.unmapped.add("force ranges of position and velocity actuators "
                                      "(their gains are joint springs and dampers, which have "
                                      "no force cap)", name)
                continue
            if j in out:
                self.unmapped.add("second stiff actuators on one joint (one hard motor)", name)
                continue
            q0 = self.q0[m.jnt_qposadr[j]]
            if kind == "position":
                self.unmapped.add("position gains too stiff for the time step (sqrt(kp/I) h "
                                  f"> {STIFF:g}: a hard servo capped at the force range)", name)
                motor = {"mode": "position", "target": float(target - q0), "max_force": cap}
            else:
                self.unmapped.add("velocity gains too stiff for the time step (kv h k > "
                                  f"{STIFF_PULL:g}, k: the links' own inverse inertia: a hard "
                                  "velocity motor capped at the force range)", name)
                motor = {"mode": "velocity", "target": float(target), "max_force": cap}
            out[j] = (name, motor)
        return out

    def force_cap(self, a, j, gear):
        m = self.m
        caps = []
        if m.actuator_forcelimited[a]:
            caps.append(np.max(np.abs(m.actuator_forcerange[a])) * abs(gear))
        if m.jnt_actfrclimited[j]:
            caps.append(np.max(np.abs(m.jnt_actfrcrange[j])))
        cap = min(caps) if caps else FORCE
        return float(np.clip(cap, 1e-9, FORCE))

    # ---------------------------------------------------------------- loops, filters
    def equalities(self):
        m, d = self.m, self.d
        out = []
        for e in range(m.neq):
            name = _name(m, self.mj.mjtObj.mjOBJ_EQUALITY, e, "equality")
            kind = int(m.eq_type[e])
            if kind not in (EQ_CONNECT, EQ_WELD) or m.eq_objtype[e] != self.mj.mjtObj.mjOBJ_BODY:
                self.unmapped.add("equalities other than body connect/weld (joint, tendon, "
                                  "flex, site)", name)
                continue
            if not m.eq_active0[e]:
                self.unmapped.add("inactive equalities", name)
                continue
            b1, b2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
            data = m.eq_data[e]
            if kind == EQ_CONNECT:
                anchor = d.xpos[b1] + d.xmat[b1].reshape(3, 3) @ data[0:3]
                out.append({"name": name, "type": "ball",
                            "bodies": [self.body_ref(b1), self.body_ref(b2)],
                            "anchor": floats(UP @ anchor)})
            else:
                anchor = d.xpos[b2] + d.xmat[b2].reshape(3, 3) @ data[0:3]
                out.append({"name": name, "type": "fixed",
                            "bodies": [self.body_ref(b1), self.body_ref(b2)],
                            "anchor": floats(UP @ anchor)})
                self.unmapped.add("weld relative poses (the pose at qpos0 is kept)", name)
        return out

    def excluded(self):
        """contacts.disabled_pairs: the file's <exclude> pairs, and pairs of moving bodies
        whose collision geoms already overlap in the starting pose (MuJoCo's own collision
        detection there): a model's links often interpenetrate by design, which MuJoCo's
        soft contacts tolerate and our hard ones would push apart at once (as PyBullet, which
        leaves a URDF's self-collisions off by default)."""
        pairs = []

        def add(a, b):
            if a != b and "world" not in (a, b) and [a, b] not in pairs and [b, a] not in pairs:
                pairs.append([a, b])
                return True
            return False
        for sig in self.m.exclude_signature:
            add(self.body_ref(int(sig) >> 16), self.body_ref(int(sig) & 0xFFFF))
        m, d = self.m, self.d
        for c in d.contact[:d.ncon]:
            g1, g2 = self.group[m.geom_bodyid[c.geom[0]]], self.group[m.geom_bodyid[c.geom[1]]]
            if c.dist < 0 and g1 not in self.static and g2 not in self.static:
                a, b = self.names[g1], self.names[g2]
                if add(a, b):
                    self.unmapped.add("self-collisions of links that overlap at the start "
                                      "(disabled: contacts.disabled_pairs)", f"{a}/{b}")
        return pairs

    def leftovers(self):
        """The elements with no counterpart, by kind, named (`tendon 2` where unnamed)."""
        m, obj = self.m, self.mj.mjtObj
        for count, kind, what in (
                (m.ntendon, "tendons", obj.mjOBJ_TENDON),
                (m.nsensor, "sensors", obj.mjOBJ_SENSOR),
                (m.npair, "explicit contact pairs (<contact><pair>)", None),
                (m.ntex, "textures", obj.mjOBJ_TEXTURE),
                (m.nflex, "flexes", obj.mjOBJ_FLEX),
                (m.nkey, "keyframes (one may be the starting pose: --keyframe)", obj.mjOBJ_KEY),
                (m.nsite, "sites", obj.mjOBJ_SITE), (m.ncam, "cameras", obj.mjOBJ_CAMERA),
                (m.nlight, "lights", obj.mjOBJ_LIGHT)):
            for i in range(count):
                self.unmapped.add(kind, f"pair {i}" if what is None
                                  else _name(m, what, i, kind.rstrip("s").split()[0]))


def model_to_scene(m, source, kind, actuators=True, decompose=False, qpos=None, ctrl=None,
                   qvel=None, servos=False, ground=False):
    """Imported of a compiled MjModel. `actuators=False` leaves actuators out (an
    unactuated model); `decompose` splits meshes into convex parts; `qpos`, `qvel`: the
    starting state (default qpos0 at rest); `ctrl`: the actuators' controls (servo targets;
    default 0); `servos`: every hinge and slider without an actuator gets a position servo
    holding its starting value, capped at the joint's actuator force range (URDF: its
    effort limit; none: 1e9); `ground`: a fixed plane facing up under the lowest point of
    the moving bodies' collision geometry, touching it (URDF files have no floor)."""
    b = _Builder(m, source, decompose, qpos, qvel)
    b.ctrl = np.zeros(m.nu) if ctrl is None else np.asarray(ctrl, dtype=np.float64)
    bodies = []
    for g in sorted(set(b.group.tolist())):
        entry = b.body_entry(g)
        if entry is not None:
            bodies.append(entry)
            b.emitted.add(g)
    actuated = b.actuators() if actuators else {}
    if servos:
        for j in range(m.njnt):
            if j not in actuated and j not in b.gains and m.jnt_type[j] in (HINGE, SLIDE):
                cap = float(np.max(np.abs(m.jnt_actfrcrange[j]))) if m.jnt_actfrclimited[j] \
                    else FORCE
                actuated[j] = ("servo", {"mode": "position", "target": 0.0,
                                         "max_force": float(np.clip(cap, 1e-9, FORCE))})
    if ground:
        name = "ground" if "ground" not in b.names.values() else "ground_plane"
        bodies.append({"name": name, "fixed": True, "shape": {"type": "plane"},
                       "position": [0.0, lowest_point(m, b.d), 0.0],
                       "color": [0.5, 0.5, 0.52]})
    joints = b.joints(actuated) + b.equalities()
    b.leftovers()
    b.counts["bodies"] = sum(1 for e in bodies if not e.get("fixed"))
    b.counts["joints"] = len(joints)
    gravity = UP @ m.opt.gravity
    doc = {"format": "impulse-scene", "version": VERSION,
           "name": os.path.splitext(os.path.basename(source))[0],
           "description": _note(source, kind, b.unmapped),
           "settings": dict(SETTINGS, h=float(m.opt.timestep), gravity=floats(gravity)),
           "bodies": bodies, "joints": joints}
    # the camera: at the model, as MuJoCo's viewer frames it (its centre and extent)
    target = UP @ m.stat.center
    extent = float(max(m.stat.extent, 0.1))
    doc["camera"] = {"target": floats(target),
                     "eye": floats(target + extent * np.array([1.1, 0.7, 1.5]))}
    if b.loads:
        doc["loads"] = b.loads
    pairs = b.excluded()
    if pairs:
        doc["contacts"] = {"disabled_pairs": pairs}
    return Imported(doc, source, kind, b.unmapped, b.counts)


def _note(source, kind, unmapped):
    import mujoco
    lines = [f"Imported from {os.path.basename(source)} ({kind.upper()}) by impulse convert, "
             f"read with MuJoCo {mujoco.__version__}'s compiler; source: "
             f"{os.path.abspath(source)}."]
    if unmapped.kinds:
        lines.append("Not mapped: " + "; ".join(unmapped.lines()) + ".")
    return "\n".join(lines)
