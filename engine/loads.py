"""External loads: forces and torques on bodies, and actuator efforts on joints, from the
scene's `loads` or the Python API.

A body load acts on one body: a force (at a point of the body, else at its centre of mass)
and/or a torque, each either constant or a time sequence (piecewise linear or piecewise
constant, optionally repeating, like a servo's target sequence), given in the world frame or
in the body's own (scene) frame, where it turns with the body. A joint load is an actuator's
effort on a joint's primary coordinate (a torque about a hinge's axis, a force along a
slider's), equal and opposite on the joint's two bodies, constant or a sequence: MJCF's
torque-input `motor` actuators import as these (engine/formats/convert.py).

Each (sub-)step, World.step evaluates every load at the step's middle t + h/2 and sums them
per body into B.load (n, 6): the world force F and the world torque T about the centre of
mass, T = torque + r x F with r = R (point - centre of mass), R the body's orientation
turned on by its angular velocity over h/2 (the step's middle, to first order). The kernel
applies them as two half kicks around the step (kick-drift-kick, as the look-ahead treats
gravity):
    before the position stage    v += h/2 F/m,   w += h/2 A(t) T
    after the bodies advance     v += h/2 F/m,   w += h/2 A(t+h) T      (A = R J^-1 R^T)
so the look-ahead moves a body by h v + h^2/2 F/m (exact for a constant force, and the
impulse at the step's middle that Schmitt's sec. 8 assumes), and v(t+h) = v + h F/m before
the velocity stage corrects the joints and contacts. Second order in h, also for a
body-frame load or a force at a point, whose direction and arm turn with the body.

A joint load's effort goes into J.effort and is kicked the same way, along the
coordinate's row (step.joint_efforts, joints/generic.apply_effort).

Static and sleeping bodies take no kicks. A body whose load changes wakes (World.step); an
island under a load that changes over time never sleeps.
"""
import copy
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy.spatial.transform import Rotation

from .handles import LoadId
from .impulses import angular_impulse_to, impulse_to
from .jitopts import NO_REFCOUNT
from .joints import COORD_NONE, COORD_OFFSET_X, COORDS, P_COORD1
from .scene_entries import scene_to_principal
from .sleeping import waking

FRAMES = ("world", "body")


@dataclass
class Signal:
    """A 3-vector over time: a constant (times None), or the values at `times`, linear or
    held (step) between them, repeating with the sequence's span if `repeat`."""
    value: np.ndarray                  # (3,) the constant, or (k, 3) the sequence's values
    times: np.ndarray | None = None    # (k,) rising
    step: bool = False
    repeat: bool = False

    def at(self, t):
        if self.times is None:
            return self.value
        times, values = self.times, self.value
        t0, t1 = times[0], times[-1]
        if self.repeat and t1 > t0:
            t = t0 + (t - t0) % (t1 - t0)
        if t <= t0:
            return values[0]
        if t >= t1:
            return values[-1]
        i = int(np.searchsorted(times, t, side="right")) - 1     # times[i] <= t < times[i+1]
        if self.step:
            return values[i]
        f = (t - times[i]) / (times[i + 1] - times[i])
        return values[i] + f * (values[i + 1] - values[i])

    @property
    def varies(self):
        return self.times is not None and len(self.times) > 1 and \
            bool(np.any(self.value != self.value[0]))


def signal(spec, where):
    """A Signal from a scene value: [x, y, z] or a number (an effort), or {times, values,
    interpolation, repeat}. ValueError naming `where` for times that fall or do not match
    the values."""
    if isinstance(spec, dict):
        times = np.asarray(spec["times"], dtype=np.float64)
        values = np.asarray(spec["values"], dtype=np.float64)
        if len(times) != len(values):
            raise ValueError(f"{where}: 'times' has {len(times)} entries and 'values' "
                             f"{len(values)}; give one value per time")
        if np.any(np.diff(times) <= 0):
            raise ValueError(f"{where}.times: times must rise")
        return Signal(values, times, spec.get("interpolation", "linear") == "step",
                      bool(spec.get("repeat", False)))
    return Signal(np.asarray(spec, dtype=np.float64))


@dataclass
class LoadModel:
    """One load: its scene entry and what it means."""
    name: str
    body: str | None                   # a body load: the body's name
    spec: dict                         # the scene entry (copied)
    force: Signal | None
    torque: Signal | None
    in_body: bool                      # force and torque in the body's scene frame
    point: np.ndarray | None           # point of the force in the body's scene frame
    joint: str | None = None           # a joint load: the joint's name
    effort: Signal | None = None       # its effort [N m or N]

    @property
    def varies(self):
        return any(s is not None and s.varies for s in (self.force, self.torque, self.effort))


BODY_KEYS = ("force", "torque", "frame", "point")


def load_model(spec, where="load"):
    """LoadModel from a validated scene load entry (ValueError naming `where`)."""
    if ("body" in spec) == ("joint" in spec):
        raise ValueError(f"{where}: give a 'body' or a 'joint', not both" if "body" in spec
                         else f"{where}: give a 'body' (with a 'force' and/or a 'torque') "
                         "or a 'joint' (with an 'effort')")
    if "joint" in spec:
        extra = [k for k in BODY_KEYS if k in spec]
        if extra:
            raise ValueError(f"{where}.{extra[0]}: a joint load takes an 'effort' (a torque "
                             "or force along the joint's coordinate)")
        if "effort" not in spec:
            raise ValueError(f"{where}: a joint load needs an 'effort'")
        return LoadModel(spec["name"], None, copy.deepcopy(spec), None, None, False, None,
                         spec["joint"], signal(spec["effort"], f"{where}.effort"))
    if "effort" in spec:
        raise ValueError(f"{where}.effort: an effort acts on a joint's coordinate; a body "
                         "load takes a 'force' and/or a 'torque'")
    force = signal(spec["force"], f"{where}.force") if "force" in spec else None
    torque = signal(spec["torque"], f"{where}.torque") if "torque" in spec else None
    if force is None and torque is None:
        raise ValueError(f"{where}: give a 'force', a 'torque' or both")
    if "point" in spec and force is None:
        raise ValueError(f"{where}.point: a point needs a 'force' to act at it")
    point = np.asarray(spec["point"], dtype=np.float64) if "point" in spec else None
    return LoadModel(spec["name"], spec["body"], copy.deepcopy(spec), force, torque,
                     spec.get("frame", "world") == "body", point)


def turned(rot, omega, angle_time):
    """rot turned by omega * angle_time: the body's orientation half a step on (torque-free,
    to first order), which a body-frame load and a force's arm use so that they stand for
    the whole step (second order, as the kicks)."""
    return Rotation.from_rotvec(np.asarray(omega) * angle_time).as_matrix() @ rot


def world_wrench(world, lm, b, t, half_step=0.0):
    """(point, force, torque) in the world at time t of load `lm` on body index b: the
    force's point of application (the centre of mass without a point), and the torque about
    the centre of mass that the load exerts (its own torque plus r x F). With half_step > 0
    the body's axes are taken half_step on (the step's middle; the point stays at t)."""
    B, model = world.B, world.models[b]
    rot = B.rot[b]
    if half_step > 0 and (lm.in_body or lm.point is not None):   # (else not needed)
        rot = turned(rot, B.omega[b], half_step)
    turn = rot @ model.frame.T                  # body scene frame -> world
    force = np.zeros(3) if lm.force is None else lm.force.at(t)
    torque = np.zeros(3) if lm.torque is None else lm.torque.at(t)
    if lm.in_body:
        force, torque = turn @ force, turn @ torque
    point = B.pos[b].copy()
    if lm.point is not None:
        arm = rot @ scene_to_principal(model, lm.point)
        point += arm
        torque = torque + np.cross(arm, force)
    return point, force, torque


def sum_wrenches(world, t, h, out):
    """out (n, 6): every body's world force and torque about its centre of mass for the
    step [t, t + h], taken at its middle, and the joint loads' efforts into world.J.effort;
    returns the indices of the bodies whose wrench or whose joints' effort differs from what
    they held."""
    before = out.copy()
    out[:] = 0.0
    J = world.J
    efforts = J.effort
    efforts_before = efforts.copy()
    efforts[:] = 0.0
    index = {m.name: i for i, m in enumerate(world.models)}
    joints = {jm.name: i for i, jm in enumerate(world.joint_models)}
    for lm in world.load_models:
        if lm.joint is not None:
            efforts[joints[lm.joint]] += lm.effort.at(t + 0.5 * h)
            continue
        b = index[lm.body]
        _, force, torque = world_wrench(world, lm, b, t + 0.5 * h, 0.5 * h)
        out[b, :3] += force
        out[b, 3:] += torque
    changed = set(np.flatnonzero(np.any(out != before, axis=1)).tolist())
    for j in np.flatnonzero(efforts != efforts_before):
        changed.update(int(b) for b in J.const.body[j] if b >= 0)
    return np.array(sorted(changed), dtype=np.int64)


def joint_arrow(world, j, effort):
    """(point, force, torque) of an effort on joint row j: at B's anchor, a torque about
    the primary coordinate's axis or a force along its direction (what B receives)."""
    from .joints.generic import coordinate
    B, J = world.B, world.J
    ctype = int(J.const.param[j, P_COORD1])
    _, wx, wy, wz = coordinate(B, J, j, ctype, False)
    w = np.array([wx, wy, wz])
    b = int(J.const.body[j, 1])
    point = world._world_point(b, J.const.anchor[j, 1])
    zero = np.zeros(3)
    return (point, effort * w, zero) if ctype == COORD_OFFSET_X else (point, zero, effort * w)


@njit(cache=True, **NO_REFCOUNT)
def kick(B, dt):
    """Half of a step's load on every dynamic body: v += dt F/m, w += dt A T (the world
    force F and torque T of B.load; impulse_to skips static and sleeping bodies). Without
    reference counting and views: it runs twice a step for every scene, loads or none, and
    cost chain8 0.44 us a call with them."""
    f, static, inv_mass, vel, omega = B.load, B.static, B.inv_mass, B.vel, B.omega
    inv_inertia_w, pred_ok = B.inv_inertia_w, B.pred_ok
    for b in range(f.shape[0]):
        if static[b]:               # (impulse_to would skip it: one byte read, not six words)
            continue
        if f[b, 0] != 0.0 or f[b, 1] != 0.0 or f[b, 2] != 0.0:
            impulse_to(static, inv_mass, vel, omega, inv_inertia_w, pred_ok, b, 0.0, 0.0, 0.0,
                       f[b, 0] * dt, f[b, 1] * dt, f[b, 2] * dt)
        if f[b, 3] != 0.0 or f[b, 4] != 0.0 or f[b, 5] != 0.0:
            angular_impulse_to(static, omega, inv_inertia_w, pred_ok, b, f[b, 3] * dt,
                               f[b, 4] * dt, f[b, 5] * dt)


class LoadEdits:
    """The World's load methods (mixed into engine.world.World): add, edit, remove, read."""

    @property
    def load_names(self):
        return [lm.name for lm in self.load_models]

    def load_id(self, name):
        """The stable handle (handles.LoadId) of a load."""
        return self._load_ids.of(self._load_row(name)[1].name)

    def _load_row(self, name):
        """(row, LoadModel) of a load by name or LoadId; KeyError if there is none."""
        if isinstance(name, LoadId):
            name = self._load_ids.name(name)
        for i, lm in enumerate(self.load_models):
            if lm.name == name:
                return i, lm
        raise KeyError(f"no load named {name!r}")

    def load_entry(self, name):
        """The scene entry of a load."""
        return copy.deepcopy(self._load_row(name)[1].spec)

    def load_def(self, name):
        """A load (name or LoadId) as a typed definition (definitions.LoadDef)."""
        from .definitions import LoadDef, from_entry
        return from_entry(LoadDef, self.load_entry(name))

    def loads_of(self, body):
        """Names of the loads on a body (name, index or BodyId)."""
        body = self._name_of(body)
        return [lm.name for lm in self.load_models if lm.body == body]

    def _check_load(self, entry, replacing=None):
        """LoadModel of a load entry, checked against the schema and the world's bodies and
        joints (a joint load needs a joint with a coordinate)."""
        from .world_edits import validate_entries
        validate_entries({"bodies": [], "loads": [entry]}, references=False)
        lm = load_model(entry, where=f"load {entry['name']!r}")
        if lm.body is not None and lm.body not in self.body_names:
            raise ValueError(f"no body named {lm.body!r}")
        if lm.joint is not None:
            jm, _, i, is_spring = self._joint_row(lm.joint)
            if is_spring or COORDS[int(self.J.const.kind[i])][0] == COORD_NONE:
                raise ValueError(f"joint {lm.joint!r} is a {jm.kind} joint, which has no "
                                 "coordinate for an effort (hinge, slider, universal, "
                                 "cylindrical, rail and planar have)")
        if entry["name"] != replacing and entry["name"] in self.load_names:
            raise ValueError(f"load name {entry['name']!r} is already taken")
        return lm

    @waking
    def add_load(self, spec):
        """Add a load from a definitions.LoadDef or a scene load entry, e.g. {"name":
        "push", "body": "box", "force": [10, 0, 0], "point": [0, 0, 0.5], "frame": "body"}
        or {"name": "hip",
        "joint": "hip_joint", "effort": 2.5}; returns its LoadId. ValueError (naming the
        problem) for an entry that is not valid; KeyError for a joint that does not
        exist."""
        from .definitions import entry_of
        spec = entry_of(spec)
        self.load_models.append(self._check_load(spec))
        return self._load_ids.add(spec["name"])

    @waking
    def edit_load(self, name, changes):
        """Set keys of a load's entry (None removes a key), e.g. {"force": [0, 0, 5]}, or
        those in which a whole LoadDef differs."""
        from .definitions import changes_to
        from .world_edits import _merge
        i, lm = self._load_row(name)
        entry = _merge(lm.spec, changes_to(lm.spec, changes))
        if entry.get("name") != lm.name:
            raise ValueError("a load keeps its name")
        self.load_models[i] = self._check_load(entry, replacing=lm.name)

    @waking
    def remove_load(self, name):
        """Remove a load; its handle becomes stale."""
        i, lm = self._load_row(name)
        del self.load_models[i]
        self._load_ids.remove(lm.name)

    def load_arrows(self):
        """(k, 3, 3) per load at the current time: its point of application, its world force
        and its world torque about the centre of mass (what the viewer draws)."""
        index = {m.name: i for i, m in enumerate(self.models)}
        joints = {jm.name: i for i, jm in enumerate(self.joint_models)}
        out = np.zeros((len(self.load_models), 3, 3))
        for k, lm in enumerate(self.load_models):
            if lm.joint is not None:
                out[k] = joint_arrow(self, joints[lm.joint], lm.effort.at(self.time))
            else:
                out[k] = world_wrench(self, lm, index[lm.body], self.time)
        return out
