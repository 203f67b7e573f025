"""Exact resume: everything the next step reads, so that a run continued from a snapshot
(history scrub) or from a saved file (the scene's `state` block) is bit-identical to the
uninterrupted run.

The next step reads, besides the scene: the time (motor targets), the previous step's
length (spring impulse windows, warm-start scaling), each body's exact centre, rotation
matrix and velocities (a scene file's position + quaternion do not round-trip to the bit),
bodies the guard fixed, the springs' force at the previous step, the joints' unwrapped
angles (a hinge turned past +-pi reads on from them) and their locks' last impulses (the
loops' warm start), and the contacts' memory:
the last detection with its impulses (warm start, matched by feature) and friction anchors
(which still hold, and where), the detection the
depth projection made for the next step, and the broadphase's axis and sort order (pairs,
and so rows, come out in that order).

capture()/restore() work on a dict of numpy arrays (history snapshots: their size is the
sum of nbytes); to_document()/from_document() write and read the scene file's `state`.
"""
import numpy as np

from . import state as S
from .collision.detector import ContactSet

_CS_FIELDS = ContactSet.FIELDS
_INT_FIELDS = {"body_a", "body_b", "shape_a", "shape_b", "feature"}
_BODY = ("pos", "rot", "vel", "omega")


def capture(world):
    """The world's resumable state as a flat dict of arrays and numbers (copies)."""
    B = world.B
    st = {"time": world.time, "h_prev": world.h_prev, "relax_prev": world.relax_prev,
          "pos": B.pos.copy(), "rot": B.rot.copy(), "vel": B.vel.copy(),
          "omega": B.omega.copy(), "static": B.static.copy(), "inv_mass": B.inv_mass.copy(),
          "inv_inertia": B.inv_inertia.copy(), "force_prev": world.Sp.force_prev.copy(),
          "joint_angle": world.J.angle.copy(), "joint_warm": world.J.warm.copy()}
    st.update(world.sleep.capture())
    st.update(_contacts(world))
    return st


def _contacts(world):
    c = world.collision
    if c._tables_dirty or c.detector is None or not world._has_contacts():
        return {}            # (no detection runs: no memory, as in a run that never built it)
    st = {"order": c.detector._order.copy(), "axis": c.detector._state.copy(),
          "prev_warm": c._prev_warm.copy()}
    st["prev_stick"], st["prev_hold"] = c.anchors_state()
    _put_set(st, "prev", c._prev)
    if c._slept is not None:            # sleeping islands' rows (contacts/system.py)
        cs, warm, stick, hold = c._slept
        _put_set(st, "slept", cs)
        st["slept_warm"], st["slept_stick"] = warm.copy(), stick.reshape(-1, 6).copy()
        st["slept_hold"] = hold.astype(np.float64)
    if c._pending is not None:
        st["pending_h"] = np.array([c._pending[1]])
        _put_set(st, "pending", c._pending[0])
    return st


def _slept_fits(st, n):
    return all(k in st and len(st[k]) == n for k in ("slept_warm", "slept_stick", "slept_hold"))


def _put_set(st, key, cs):
    if cs is None:
        return
    for f in _CS_FIELDS:
        st[f"{key}.{f}"] = np.array(getattr(cs, f))
    st[f"{key}.n_shapes"] = np.array([cs.n_shapes], dtype=np.int64)


def _get_set(st, key):
    if f"{key}.depth" not in st:
        return None
    return ContactSet.from_fields(int(st[f"{key}.n_shapes"][0]),
                                  **{f: np.array(st[f"{key}.{f}"]) for f in _CS_FIELDS})


def restore(world, st):
    """Put a captured state back (the same bodies, joints and shapes as when captured)."""
    world.time, world.h_prev = st["time"], st["h_prev"]
    world.relax_prev = st.get("relax_prev", 0.0)
    B = world.B
    for name in _BODY + ("static", "inv_mass", "inv_inertia"):
        if name in st:
            getattr(B, name)[:] = st[name]
    B.pred_ok[:] = False
    world.sleep.restore(world, st)
    world.Sp.force_prev[:] = st["force_prev"]
    if "joint_angle" in st and st["joint_angle"].shape == world.J.angle.shape:
        world.J.angle[:] = st["joint_angle"]
    if "joint_warm" in st and st["joint_warm"].shape == world.J.warm.shape:
        world.J.warm[:] = st["joint_warm"]
    c = world.collision
    c.tables()
    c._pending = None
    c.last = None
    if c.detector is None:
        return
    if "order" in st and st["order"].shape == c.detector._order.shape:
        c.detector._order[:] = st["order"]
        c.detector._state[:] = st["axis"]
        c._prev = _get_set(st, "prev")
        c._prev_warm = np.array(st["prev_warm"])
        c.restore_anchors(st.get("prev_stick", np.zeros((0, 6))), st.get("prev_hold", []))
        slept = _get_set(st, "slept")
        c._slept = None if slept is None or not _slept_fits(st, len(slept)) else (
            slept, np.array(st["slept_warm"]), np.array(st["slept_stick"]).reshape(-1, 2, 3),
            np.asarray(st["slept_hold"]) != 0.0)
        c._wakes_seen = c._kept_wakes = c._kept_naps = -1   # look through them anew
        pending = _get_set(st, "pending")
        if pending is not None:   # valid for exactly this state (contacts.system._take_pending)
            c._pending = (pending, float(st["pending_h"][0]), c._signature(), B.static.copy(),
                          B.pos.copy(), B.rot.copy(), B.vel.copy(), B.omega.copy())
    else:   # captured before the first detection: start the contacts' memory afresh
        c.detector._order[:] = np.arange(c.detector._order.shape[0])
        c.detector._state[:] = -1
        c._prev, c._prev_warm = None, np.zeros((0, c._prev_warm.shape[1]))
        c._slept = None
        c.restore_anchors(np.zeros((0, 6)), [])


# ---- the scene file's `state` block --------------------------------------------------------

def to_document(world):
    """The `state` block of a saved scene: JSON numbers (repr round-trips every double)."""
    st = capture(world)
    doc = {"time": st["time"], "h_prev": st["h_prev"], "bodies": {}}
    if st["relax_prev"] > 0.0:
        doc["relax_prev"] = st["relax_prev"]
    for b, m in enumerate(world.models):
        entry = {k: st[k][b].ravel().tolist() for k in _BODY}
        asleep = st["asleep"].shape[0] == len(world.models) and st["asleep"][b]
        if st["static"][b] and not m.static and not asleep:
            entry["stopped"] = True
        if asleep:
            entry["asleep"] = int(st["island"][b])
        elif st["asleep"].shape[0] and st["still"][b] > 0:
            entry["still"] = float(st["still"][b])
            entry["still_from"] = [*st["still_pos"][b].tolist(),     # (sleeping.py's drift)
                                   *st["still_rot"][b].ravel().tolist()]
        doc["bodies"][m.name] = entry
    if world.joint_models:   # exact anchors and frames (the scene's local ones round)
        doc["joints"] = {j.name: {"anchors": world.J.const.anchor[i].ravel().tolist(),
                                  "frames": world.J.const.frame[i].ravel().tolist(),
                                  "angles": st["joint_angle"][i].tolist(),
                                  "warm": st["joint_warm"][i].tolist()}
                         for i, j in enumerate(world.joint_models)}
    if world.spring_models:
        doc["springs"] = {s.name: {"force_prev": st["force_prev"][i].tolist(),
                                   "anchors": world.Sp.const.anchor[i].ravel().tolist()}
                          for i, s in enumerate(world.spring_models)}
    arrays = {k: v.tolist() for k, v in st.items()
              if isinstance(v, np.ndarray) and (k.startswith(("prev", "pending", "slept"))
                                                or k in ("order", "axis"))}
    if arrays:
        doc["contacts"] = arrays
    return doc


def from_document(world, doc, where="$.state"):
    """Apply a scene's `state` block (after the scene is built). Raises ValueError naming
    the place where the block does not fit the scene (another body set, other shapes)."""
    names = world.body_names
    if sorted(doc["bodies"]) != sorted(names):
        raise ValueError(f"{where}.bodies: must list exactly the scene's bodies")
    world.sleep.wake_all(world)
    world.sleep.fit(len(names), world.J.const.kind.shape[0])
    st = capture(world)
    st["time"], st["h_prev"] = float(doc["time"]), float(doc["h_prev"])
    st["relax_prev"] = float(doc.get("relax_prev", 0.0))
    st["asleep"][:], st["island"][:], st["still"][:] = False, -1, 0.0
    for b, name in enumerate(names):
        entry = doc["bodies"][name]
        for k, shape in (("pos", (3,)), ("rot", (3, 3)), ("vel", (3,)), ("omega", (3,))):
            v = np.asarray(entry[k], dtype=np.float64)
            if v.size != int(np.prod(shape)):
                raise ValueError(f"{where}.bodies.{name}.{k}: must have {np.prod(shape)} numbers")
            st[k][b] = v.reshape(shape)
        if entry.get("stopped", False) or "asleep" in entry:
            st["static"][b], st["inv_mass"][b], st["inv_inertia"][b] = True, 0.0, 0.0
        if "asleep" in entry and not world.models[b].static:
            st["asleep"][b], st["island"][b] = True, int(entry["asleep"])
        st["still"][b] = float(entry.get("still", 0.0))
        pose = np.asarray(entry.get("still_from", [*st["pos"][b], *st["rot"][b].ravel()]))
        st["still_pos"][b], st["still_rot"][b] = pose[:3], pose[3:].reshape(3, 3)
    st["sleep_next"][0] = st["island"].max(initial=-1) + 1
    joints = doc.get("joints", {})
    for i, j in enumerate(world.joint_models):
        if j.name in joints:
            _exact(world.J.const.anchor[i], joints[j.name]["anchors"])
            _exact(world.J.const.frame[i], joints[j.name]["frames"], always=j.kind == "ball")
            if "angles" in joints[j.name]:      # turned past +-pi: on their branch
                st["joint_angle"][i] = np.asarray(joints[j.name]["angles"], dtype=np.float64)
            if "warm" in joints[j.name]:        # the loops' warm start (joints/warm_start.py)
                st["joint_warm"][i] = np.asarray(joints[j.name]["warm"], dtype=np.float64)
    springs = doc.get("springs", {})
    for i, s in enumerate(world.spring_models):
        if s.name in springs:
            st["force_prev"][i] = np.asarray(springs[s.name]["force_prev"], dtype=np.float64)
            _exact(world.Sp.const.anchor[i], springs[s.name]["anchors"])
    contacts = doc.get("contacts", {})
    world.collision.tables()
    det = world.collision.detector
    if contacts and det is not None and len(contacts.get("order", [])) != det._order.shape[0]:
        contacts = {}     # written for other shapes (edited since): start the memory afresh
    if contacts and det is not None:
        k = det._order.shape[0]
        for key, v in contacts.items():
            st[key] = _contact_array(key, v, k, len(names), f"{where}.contacts.{key}")
        if sorted(st["order"].tolist()) != list(range(k)) or not -1 <= st["axis"][0] <= 2:
            raise ValueError(f"{where}.contacts: the broadphase order does not fit the shapes")
    restore(world, st)


def _exact(target, saved, always=False):
    """Take the saved exact values where they are the file's own to rounding (a joint
    edited by hand keeps the file's anchors); a ball joint's frame is not the user's."""
    saved = np.asarray(saved, dtype=np.float64).reshape(target.shape)
    if always or (np.abs(saved - target) <= 1e-9 * max(1.0, np.abs(target).max())).all():
        target[...] = saved


def _contact_array(key, value, n_shapes, n_bodies, where):
    """One array of the contacts' memory, checked: the kernels index by these numbers."""
    base = key.split(".")[-1]
    integer = base in _INT_FIELDS or base in ("order", "axis", "n_shapes")
    try:
        a = np.asarray(value, dtype=np.int64 if integer else np.float64)
        a = a.reshape(_shape_of(key, len(value)))
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{where}: not an array of numbers of the right shape") from None
    if not integer and not np.isfinite(a).all():
        raise ValueError(f"{where}: must be finite numbers")
    limit = {"body_a": n_bodies, "body_b": n_bodies, "shape_a": n_shapes, "shape_b": n_shapes,
             "order": n_shapes}.get(base)
    if limit is not None and a.size and (a.min() < 0 or a.max() >= limit):
        raise ValueError(f"{where}: an index out of range")
    if base == "n_shapes" and a.tolist() != [n_shapes]:
        raise ValueError(f"{where}: written for another set of shapes")
    return a


def _shape_of(key, n):
    base = key.split(".")[-1]
    if base in ("normal", "point_a", "point_b", "world"):
        return (n, 3)
    if key in ("prev_warm", "slept_warm"):
        return (n, S.WARM_SIZE)
    if key in ("prev_stick", "slept_stick"):
        return (n, 6)
    return (n,)
