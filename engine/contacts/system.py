"""The World's collision side: shape table, filters, materials, detection -> Contacts.

Shape table (one row per shape, poses in the body's principal frame; the renderer reads
the same arrays through world.shape_*): shape_body, shape_kind, shape_size,
shape_local_pos, shape_local_rot, hull_vertex, shape_hull_start, shape_hull_count,
shape_group, shape_mask. Live edits touch only the rows of the added/removed body.
Pairs that never collide: bodies joined by a joint (unless the joint says
"collide": true), contacts.disabled_pairs, bodies with collision.enabled = false (their
shapes get group = mask = 0), and static-static pairs (detector).
Materials per body; a pair combines them as e = max(e_A, e_B), mu = sqrt(mu_A mu_B)
(static and dynamic separately), and takes the larger torsional and rolling coefficient
(lengths: a ball with rolling friction rolls against it on any floor). Defaults: e = 0,
mu_s = 0.5, mu_d = mu_s, torsional = rolling = 0.
"""
import time
from collections import OrderedDict

import numpy as np

from .. import contact_step
from .. import state as S
from ..collision import CollisionDetector, excluded_pair_keys
from ..collision.detector import ALL_GROUPS, ContactSet
from ..collision.manifold import make_contact_buffers
from ..collision.shapes import CAPSULE, CYLINDER, SPHERE
from ..fastcall import FastCall
from . import anchors, depth_projection, pack
from .depth_projection import (
    GROW,
    NOT_NEEDED,
    PROJECTED,
    PROJECTION_ROUNDS,
    RES_BEFORE,
    RES_PAIRS,
    RES_ROWS,
    RES_SIZE,
)
from .rows import SPLIT_DEPTH

DEFAULT_MU = 0.5
STICK_DRIFT_MAX = 2e-3     # [m] anchors that drifted further apart slid: they start afresh
NO_TABLE, NO_REALS = make_contact_buffers(0)   # (no last detection to match)
STICK_DRIFT_MIN = 1.0      # this part of eps_pos of a drift is left alone (as a joint's gap)
POOL_SIZE = 8              # Contacts kept for the row counts met last (_rows_for)
FIXED_KEPT = POOL_SIZE     # contact_step's FixedArgs kept (_fixed_args): one a pool entry
SPARE_ROWS = 0.25          # rows kept beyond the most asked for, as a part of them (_spare)
WHOLE_FIELDS = {"heavy", "free", "body_layer", "held"}   # Contacts fields not per row
# Contacts fields a step may read before it writes them, kept with their pool entry (_spare):
# a patch's slide where its stage had no rows, keff off a joint tree, radius and face of a
# world without curved shapes (found by filling each field of new Contacts with garbage)
OWN_FIELDS = {"slide", "keff", "radius", "face"}
NOT_DONE = (None, 0.0, 0)     # step_in_one_call where it does not apply
# contact_step's arguments that may be new objects each call (FastCall): the last
# detection's views, memory and anchors, the poses after the last step
ONE_CALL_LOOSE = (5, 6, 8, 10, 11, 13, 14)
# ... and those step_in_one_call makes itself, always of one kind: the settings (a float64
# vector), floats, flags and counts, the detector's output buffers (make_contact_buffers),
# this step's arrays (_one_call_arrays), the pending detection and its bodies' state (from
# _pending_buffers or the bodies' own arrays), the pending buffers (_pending_buffers). The
# FixedArgs (0) is keyed by its identity.
ONE_CALL_TRUSTED = (1, 2, 3, 4, 7, 9, 12, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
                    28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38)


def _rows_of(model, b):
    """Shape rows of one body: (body, kind, size, pos, rot, points, group, mask) each."""
    col = model.collision or {}
    on = col.get("enabled", True)
    group = int(col.get("group", -1)) if on else 0
    mask = int(col.get("mask", -1)) if on else 0
    rows = []
    for s in model.shapes:
        pts = s.get("points")
        pts = np.zeros((0, 3)) if pts is None else np.asarray(pts, dtype=np.float64)
        rows.append((b, int(s["kind"]), np.asarray(s["size"], np.float64),
                     np.asarray(s["pos"], np.float64), np.asarray(s["rot"], np.float64), pts,
                     ALL_GROUPS if group < 0 else group, ALL_GROUPS if mask < 0 else mask))
    return rows


def material_of(model):
    m = model.material or {}
    mu_s = float(m.get("static_friction", DEFAULT_MU))
    return (float(m.get("restitution", 0.0)), mu_s, float(m.get("dynamic_friction", mu_s)),
            float(m.get("torsional_friction", 0.0)), float(m.get("rolling_friction", 0.0)))


class ContactSystem:
    """Owns the CollisionDetector of a World and turns its ContactSets into Contacts."""

    def __init__(self, world):
        self.world = world
        self.rows = []            # per body: list of shape rows
        self.materials = []       # per body: (e, mu_s, mu_d, mu_t, mu_r) (material_of)
        self.detector = None
        self._filter_sig = None
        self.last = None          # ContactSet of the last step
        self._impulse_of = (np.zeros(0),)   # last_impulse: the arrays it sums
        self._prev = None         # ContactSet used for matching
        self._prev_warm = np.zeros((0, S.WARM_SIZE))
        self._stick = np.zeros((0, 2, 3))       # friction anchors of self.last's rows
        self._prev_stick = np.zeros((0, 2, 3))  # ... of self._prev's, and which still hold
        self._prev_hold = np.zeros(0, dtype=np.bool_)
        self._slept = None        # (ContactSet, warm, stick, hold) of sleeping islands' rows
        self._wakes_seen = 0      # world.sleep.wakes when _memory last looked through _slept
        self._kept_wakes = 0      # ... and naps and wakes when _keep_slept last did
        self._kept_naps = 0
        self._poses = (np.zeros((0, 3)), np.zeros((0, 3, 3)))   # bodies after the last step
        self.C = S.empty_contacts(0, 0)
        self._tables_dirty = True
        self._pending = None      # contacts the depth projection detected for the next step
        self._pool = OrderedDict()   # (rows, bodies) -> [Contacts, its coef fits its pairs]
        self._spare_rows = None      # the arrays _spare's views are of
        self._group_key = None    # the depth projection's joint groups and their key
        self._group_cache = None
        # step_in_one_call: the kernel, its out array, and what it hands detect(), finish()
        # and project_depth()
        self._one_call = FastCall(contact_step.contact_step, loose=ONE_CALL_LOOSE,
                                  trusted=ONE_CALL_TRUSTED)
        self._one_call_out = np.zeros(contact_step.O_SIZE)
        self._one_call_sets = [(np.zeros((0, 2, 3)),)] * 2   # (_one_call_arrays)
        self._detected = None     # (ContactSet, seconds)
        self._kept = None         # (keep, hold)
        self._reach_kept = None   # the largest motion over the step (detector.reach)
        self._projected = None    # (status, rounds done, pending buffers) of the call's
                                  # depth projection
        # the depth projection's: results, scratch (_projection_scratch), the buffers its
        # pending detections are kept in, used in turn (_pending_buffers)
        self._project_res = np.zeros(RES_SIZE)
        self._project_scratch = (np.zeros((0, 3)), np.zeros(0, dtype=np.bool_))
        self._pending_sets = []
        self._fixed_kept = OrderedDict()   # (_fixed_args)

    # ---- tables ------------------------------------------------------------------------
    def add_bodies(self, models, first):
        for i, m in enumerate(models):
            self.rows.append(_rows_of(m, first + i))
            self.materials.append(material_of(m))
        self._tables_dirty = True

    def remove_body(self, idx):
        del self.rows[idx]
        del self.materials[idx]
        self._renumber(idx)

    def insert_body(self, idx, model):
        """A body's shapes and material as body idx (those after it move up by one)."""
        self.rows.insert(idx, _rows_of(model, idx))
        self.materials.insert(idx, material_of(model))
        self._renumber(idx + 1)

    def replace_body(self, idx, model):
        """New shapes and material for body idx (a live edit of the body)."""
        self.rows[idx] = _rows_of(model, idx)
        self.materials[idx] = material_of(model)
        self._tables_dirty = True

    def _renumber(self, first):
        for b in range(first, len(self.rows)):
            self.rows[b] = [(b,) + r[1:] for r in self.rows[b]]
        self._tables_dirty = True

    def _build(self):
        flat = [r for rows in self.rows for r in rows]
        k = len(flat)
        self.shape_body = np.array([r[0] for r in flat], dtype=np.int64)
        self.shape_kind = np.array([r[1] for r in flat], dtype=np.int64)
        self.shape_size = np.array([r[2] for r in flat], dtype=np.float64).reshape(k, 3)
        self.shape_local_pos = np.array([r[3] for r in flat], dtype=np.float64).reshape(k, 3)
        self.shape_local_rot = np.array([r[4] for r in flat], dtype=np.float64).reshape(k, 3, 3)
        counts = np.array([len(r[5]) for r in flat], dtype=np.int64)
        self.shape_hull_count = counts
        self.shape_hull_start = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64) \
            if k else np.zeros(0, np.int64)
        self.hull_vertex = np.vstack([r[5] for r in flat]) if counts.sum() else np.zeros((0, 3))
        self.shape_group = np.array([r[6] for r in flat], dtype=np.int64)
        self.shape_mask = np.array([r[7] for r in flat], dtype=np.int64)
        # (n, 5) e, mu_s, mu_d, mu_t, mu_r of each body; a pair's: contacts/pack.py
        self.body_material = np.array(self.materials, dtype=np.float64).reshape(-1, 5)
        margin = self.world.settings.contact_margin
        if self.detector is None or self.detector.margin != margin:
            self.detector = CollisionDetector(
                self.shape_body, self.shape_kind, self.shape_size, self.shape_local_pos,
                self.shape_local_rot, self.hull_vertex, self.shape_hull_start,
                self.shape_hull_count, self.shape_group, self.shape_mask, None, margin=margin)
        else:
            self.detector.set_shapes(self.shape_body, self.shape_kind, self.shape_size,
                                     self.shape_local_pos, self.shape_local_rot,
                                     self.hull_vertex, self.shape_hull_start,
                                     self.shape_hull_count)
        self._curved = bool(np.isin(self.shape_kind, (SPHERE, CAPSULE, CYLINDER)).any())
        self._filter_sig = None
        self._prev = None          # shape rows changed: nothing to match against
        self._slept = None
        self._pending = None
        self._detected = self._kept = self._reach_kept = self._projected = None
        self._pool.clear()         # (materials may have changed)
        self._fixed_kept.clear()   # (held the old tables: nothing would match them again)
        self._spare_rows = None
        self._tables_dirty = False

    def tables(self):
        if self._tables_dirty:
            self._build()
        return self

    # ---- filters ------------------------------------------------------------------------
    def _signature(self):
        w = self.world
        spec = w.contacts_spec or {}
        joints = tuple((j.bodies, bool(j.spec.get("collide", False)))
                       for j in w.joint_models + w.spring_models)
        pairs = tuple(tuple(p) for p in spec.get("disabled_pairs", []))
        return joints, pairs, len(w.models)

    def _update_filters(self):
        sig = self._signature()
        if sig == self._filter_sig:
            return
        w = self.world
        n = len(w.models)
        pairs = []
        joints, disabled, _ = sig
        for (a, b), collide in joints:
            if not collide and a != "world" and b != "world":
                pairs.append((w.body_index(a), w.body_index(b)))
        for a, b in disabled:
            pairs.append((w.body_index(a), w.body_index(b)))
        keys = excluded_pair_keys(pairs, n) if pairs else None
        self.detector.set_filters(self.shape_group, self.shape_mask, keys)
        self._filter_sig = sig

    @property
    def enabled(self):
        return (self.world.contacts_spec or {}).get("enabled", True)

    @property
    def pending_detection(self):
        """Whether the last depth projection left a detection for the next step."""
        return self._pending is not None

    # ---- per step -------------------------------------------------------------------------
    def detect(self, h):
        """Contacts at the current state packed into self.C; returns (C, seconds)."""
        t0 = time.perf_counter()
        self.tables()
        B = self.world.B
        if not self.enabled or len(self.shape_kind) < 2:
            self.last = None
            self.C = S.empty_contacts(0, len(self.world.models))
            return self.C, time.perf_counter() - t0
        self._update_filters()
        given, self._detected = self._detected, None
        cs = self._take_pending(h)
        if cs is None and given is not None:      # (step_in_one_call's)
            cs, spent = given
            t0 -= spent
        if cs is None:
            cs = self.detector.detect(B.pos, B.rot, B.vel, B.omega, B.static, h)
        n = len(cs)
        C, entry = self._rows_for(n, B.pos.shape[0])
        if n:
            prev, prev_warm, prev_stick, prev_hold = self._memory()
            self._pack(cs, C, not entry[1], prev, prev_warm, prev_stick, prev_hold)
            entry[1] = True                  # (C.coef is filled for its pairs)
        self.last = cs
        self.C = C
        return C, time.perf_counter() - t0

    # ---- a steady step in one compiled call (engine/contact_step.py) ------------------------
    def step_in_one_call(self, given, h, stats, work, clock, bad, good):
        """Detection, packing, the step kernel and the guard after it in one call
        (contact_step), where the last step's Contacts take this step's rows as detect()
        would (the pool's latest entry, matched against the plain last detection, tables
        and filters as they were; a depth projection's pending detection, where
        _take_pending gives it, is handed in rather than detecting). Returns
        (contact_step's code, seconds its detection took, bodies its guard found bad), code
        None where it does not apply (nothing done). DETECTED: detect() takes the
        detection; STEPPED: finish() and project_depth() take what the call kept
        (self._kept) unless the guard found a body bad."""
        w = self.world
        B = w.B
        nb = B.pos.shape[0]
        C, prev = self.C, self._prev
        rows = C.body.shape[0]
        if self._tables_dirty or prev is None or \
                self._slept is not None or rows == 0 or not self.enabled or \
                self._poses[0].shape[0] != nb or C.heavy.shape[0] != nb:
            return NOT_DONE
        pool = self._pool
        key = (rows, nb)
        if next(reversed(pool), None) != key or pool[key][0] is not C or not pool[key][1]:
            return NOT_DONE
        self._update_filters()
        det = self.detector
        if prev.n_shapes != det.n_shapes:
            return NOT_DONE
        pending, self._pending = self._pending, None
        handed = pending[0] if pending is not None and pending[1] == h and \
            pending[2] == self._filter_sig else None   # (its bodies: compared in the call)
        was = pending[3:] if handed is not None else (B.static, B.pos, B.rot, B.vel, B.omega)
        slot = 1 - det._cur
        found = det._bufs[slot]
        stick, keep, hold = self._one_call_arrays(rows)
        spare = det.spare_buffers()
        pend = self._pending_buffers(spare.ints.shape[0], (handed, prev))
        out = self._one_call_out
        fixed = self._fixed_args(B, w.J, w.Sp, C, stats, work, clock, w.sleep.asleep, bad,
                                 good, det, spare)
        settings = w.settings
        code = self._one_call(
            fixed, given, det.margin, float(h), found, prev.ints, prev.reals, det.n_shapes,
            self._prev_warm, False, self._poses[0], self._poses[1], self._curved,
            self._prev_stick, self._prev_hold, STICK_DRIFT_MIN * settings.eps_pos,
            STICK_DRIFT_MAX, stick, keep, hold, handed is not None,
            *((NO_TABLE, NO_REALS) if handed is None else (handed.ints, handed.reals)), *was,
            0.1 * SPLIT_DEPTH, 4 * settings.contact_cycles, PROJECTION_ROUNDS,
            settings.contact_margin, *pend)
        if code <= contact_step.BAD_START:   # nothing done: detect() takes it as it would
            self._pending = pending
            return code, 0.0, 0
        o = out.tolist()                 # (Python floats: quicker to read than out's items)
        n_pairs, n = int(o[contact_step.O_PAIRS]), int(o[contact_step.O_ROWS])
        detected = o[contact_step.O_DETECTED] != 0.0
        if detected and n_pairs <= det._pair_a.shape[0] and n <= found.ints.shape[0]:
            det._cur, det._out, det.n_pairs = slot, found, n_pairs   # (as detector.detect)
        elif detected:                   # buffers to grow: detect() detects again
            return code, 0.0, 0
        cs = det._contact_set(n) if detected else handed
        n_bad = int(o[contact_step.O_BAD])
        if code == contact_step.DETECTED:
            self._detected = cs, o[contact_step.O_DETECT_NS] * 1e-9
        elif code == contact_step.STEPPED:
            self.last = cs
            self._stick = stick
            if n_bad == 0:
                self._kept = keep, hold
                self._reach_kept = o[contact_step.O_REACH]
                self._projected = (o[contact_step.O_PROJECTED], int(o[contact_step.O_ROUNDS]),
                                   pend)
        return code, o[contact_step.O_DETECT_NS] * 1e-9, n_bad

    def _fixed_args(self, B, J, Sp, C, stats, work, clock, asleep, bad, good, det, spare):
        """contact_step's FixedArgs (contact_step.FIXED) over these objects, the detector's
        arrays and tables, this system's shape table and the depth projection's arrays
        (spare buffers, joint groups, scratch, results); made once for the same objects
        and kept with them (their ids stay theirs while they live), the last FIXED_KEPT
        (a pile's Contacts alternate). The detector counts its arrays' replacements
        (arrays_made); this system's tables are new only in _build, which drops them all."""
        groups = self._groups()
        scratch = self._projection_scratch(len(groups[2]))
        src = (B, J, Sp, C, stats, work, clock, asleep, bad, good, det, groups, scratch)
        key = (*map(id, src), det.arrays_made)
        kept = self._fixed_kept
        held = kept.get(key)
        if held is None:
            held = kept[key] = (contact_step.make_fixed((
                B, J, Sp, C, stats, work, clock, self._one_call_out, asleep, bad, good[0],
                good[1], det.shape_body, det.shape_kind, det.shape_size, det.shape_local_pos,
                det.shape_local_rot, det.shape_radius, det.shape_group, det.shape_mask,
                det.excluded_keys, det.poly_of_shape, det.polys, det._sh_pos, det._sh_rot,
                det.aabb_min, det.aabb_max, det.reach, det._order, det._state, det._pair_a,
                det._pair_b, det._scratch, self.body_material, self.shape_kind,
                self.shape_size, self.shape_body, self.shape_local_pos, self.shape_local_rot,
                spare, *groups, *scratch, self._project_res)), src)
            if len(kept) > FIXED_KEPT:
                kept.popitem(last=False)
        return held[0]

    def _projection_scratch(self, groups):
        """The projection's shift (groups, 3) and moved (groups,) (depth_projection.project
        sets them before it reads them)."""
        if self._project_scratch[1].shape[0] != groups:
            self._project_scratch = (np.zeros((groups, 3)), np.zeros(groups, dtype=np.bool_))
        return self._project_scratch

    def _pending_buffers(self, capacity, busy):
        """Buffers for a pending detection (depth_projection.keep_pending: rows of
        `capacity`, the bodies' state) that none of the ContactSets in busy (they may be
        None) is a view of: three sets in turn, so that the last step's detection (the
        detection packing matches against) and this step's (taken from the last
        projection) stay as they are."""
        B = self.world.B
        sets = self._pending_sets
        for i in range(3):
            if i == len(sets):
                sets.append(None)
            pend = sets[i]
            if pend is not None and any(cs is not None and cs.ints.base is pend[0]
                                        for cs in busy):
                continue
            if pend is None or pend[0].shape[0] < capacity or pend[3].shape != B.pos.shape:
                pend = sets[i] = make_contact_buffers(capacity) + (
                    np.empty_like(B.static), np.empty_like(B.pos), np.empty_like(B.rot),
                    np.empty_like(B.vel), np.empty_like(B.omega))
            return pend
        raise AssertionError("three pending buffers, two busy")

    def _one_call_arrays(self, rows):
        """This step's anchors, warm starts and held anchors for step_in_one_call: two sets
        of each, used in turn (the last step's are this step's memory, _prev_*; nothing
        else holds them: _keep_slept and anchors_state copy), made anew for another row
        count."""
        sets = self._one_call_sets
        if sets[0][0].shape[0] != rows:
            sets[:] = [(np.empty((rows, 2, 3)), np.empty((rows, S.WARM_SIZE)),
                        np.empty(rows, dtype=np.bool_)) for _ in range(2)]
        sets.reverse()
        return sets[0]

    def _pack(self, cs, C, fresh, prev, prev_warm, prev_stick, prev_hold):
        """The detection into C (contacts/pack.py pack_detection: matched to the last one,
        packed, the pairs' materials where `fresh` or the pair is new, curved sides anchored
        at their centre of curvature: contacts/curvature.py) with its friction
        anchors (C.drift). Friction holds a sticking contact by its velocity
        only, to the loops' tolerance, so a resting pile crept: the top row of wall_car's
        252 stones slid 12 mm in 10 s. A contact that sticks keeps the two material points
        (in A's and B's body frame) where it began to stick, matched from step to step like
        the warm start; C.drift is how far A's has since slid along the contact plane
        relative to B's, and the position stage's friction takes it back within its cone
        (contacts/rows.py snapshot, contacts/friction.py _demand). New contacts, curved
        sides (whose contact point moves over the body as it rolls), contacts whose patch
        slid or reached its cone (finish), bodies moved between steps (an edit in the
        viewer is meant; project_depth) and anchors more than STICK_DRIFT_MAX apart start
        afresh at the detected points. A drift within eps_pos (the position tolerance, as
        for a joint's gap) is left alone, and of a longer one only what lies beyond it is
        taken back (a cut at eps_pos would flip with the last bit): taking back rounding
        noise every step made resting stacks 100x more sensitive to the last bit of their
        start (tests/test_golden_digests.py), and micrometres every step cost the pyramid
        40 % more contact visits. The work is contacts/anchors.py's."""
        B = self.world.B
        prev_ints, prev_reals, n_shapes = (NO_TABLE, NO_REALS, cs.n_shapes) if prev is None \
            else (prev.ints, prev.reals, max(cs.n_shapes, prev.n_shapes))
        self._stick = np.empty((len(cs), 2, 3))
        pack.pack_detection(prev_ints, prev_reals, cs.ints, cs.reals, n_shapes, prev_warm,
                            self.body_material, fresh, C.body, C.anchor, C.normal, C.depth,
                            C.warm, C.coef, B.rot, B.pos, *self._poses, self._curved,
                            self.shape_kind, self.shape_size, self.shape_body,
                            self.shape_local_pos, self.shape_local_rot, C.radius, C.face,
                            prev_stick, prev_hold, STICK_DRIFT_MIN * self.world.settings.eps_pos,
                            STICK_DRIFT_MAX, self._stick, C.drift)

    def anchors_state(self):
        """The friction anchors the next detection would take, for a saved state (resume.py):
        (rows of the last detection, 6) points and (rows,) 1.0 where they still hold, 0.0
        where not (a patch that slid, or a body moved since the step)."""
        hold = self._prev_hold.copy()
        B = self.world.B
        if self._prev is not None and len(hold) == len(self._prev):
            anchors.keep_unmoved(hold, self._prev.ints, B.pos, B.rot, *self._poses)
        else:
            hold[:] = False
        return self._prev_stick.reshape(-1, 6).copy(), hold.astype(np.float64)

    def restore_anchors(self, stick, hold):
        """Put saved friction anchors back (anchors_state), for the bodies as they are now."""
        stick = np.asarray(stick, dtype=np.float64).reshape(-1, 2, 3)
        hold = np.asarray(hold) != 0.0
        n = 0 if self._prev is None else len(self._prev)
        if stick.shape[0] != n or hold.shape[0] != n:    # (a state from before anchors)
            stick, hold = np.zeros((0, 2, 3)), np.zeros(0, dtype=np.bool_)
        B = self.world.B
        self._prev_stick, self._prev_hold = stick, hold
        self._poses = (B.pos.copy(), B.rot.copy())

    def _anchors_hold(self):
        """After the step: which rows keep their friction anchors (anchors.anchors_hold)."""
        C = self.C
        hold = np.empty(C.first.shape[0], dtype=np.bool_)
        anchors.anchors_hold(C.first, C.acc_n, C.acc_t, C.coef, C.slide, hold)
        return hold

    def _rows_for(self, n, nb):
        """The Contacts of this step and its pool entry: the arrays last used with the same
        row and body counts (every field is filled or derived anew in the step; warm and
        keep are cleared here), else the first n rows of spare ones (_spare). A pile's row
        count flickers as a side pair comes and goes at the margin (the pyramid's did on 4
        steps in 10); new arrays for each change cost 60 us a step there, with the step
        kernel's dispatch."""
        key = (n, nb)
        entry = self._pool.get(key)
        if entry is None:
            entry = self._pool[key] = [self._spare(n, nb), False]
            if len(self._pool) > POOL_SIZE:
                self._pool.popitem(last=False)
        else:
            self._pool.move_to_end(key)
        C = entry[0]
        C.warm[:] = 0.0
        C.keep[:] = 0.0
        return C, entry

    def _spare(self, n, nb):
        """Contacts of n rows for nb bodies: views of the first n rows of arrays kept with
        SPARE_ROWS more rows than the most asked for so far (the per-body and scratch fields
        whole). A pile whose row count changes every step (funnel_1000: 11 000 rows) had
        13 MB of new arrays a step: 4.2 ms to make and fill them, against 2.0 ms for views.
        Views of one set share it: a row's coef still
        belongs to its body pair (contacts/pack.py writes them together). The fields a step
        reads before it writes them (OWN_FIELDS) are the entry's own, new zeros, as before (only
        those: a whole new set beside the views cost 10 000 cubes in a bin 4.4 ms a step)."""
        big = self._spare_rows
        if big is None or big.body.shape[0] < n or big.heavy.shape[0] != nb:
            big = self._spare_rows = S.empty_contacts(n + int(SPARE_ROWS * n), nb)
        return S.Contacts(*(a if name in WHOLE_FIELDS else
                            np.zeros_like(a[:n]) if name in OWN_FIELDS else a[:n]
                            for name, a in zip(S.Contacts._fields, big, strict=True)))

    def project_depth(self, stats, h=None):
        """After a step: the depth projection (_project_depth, or what step_in_one_call's
        kernel did of it); then remember where every body is, so that the next detection can
        tell a body moved between steps (an edit, the guard) from one that crept (_pack)."""
        reach, self._reach_kept = self._reach_kept, None
        projected, self._projected = self._projected, None
        if projected is not None:      # (the kernel projected and copied the poses)
            status, done, pend = projected
            self._pending = None
            if status == PROJECTED:
                self._keep_pending(pend, h)
            elif status == GROW:       # a detection did not fit: the rounds left here
                self.detector.grow(int(self._project_res[RES_PAIRS]),
                                   int(self._project_res[RES_ROWS]), 2)
                self._project_depth(stats, h, reach, PROJECTION_ROUNDS - done)
                B = self.world.B
                self._poses = (B.pos.copy(), B.rot.copy())
            else:
                assert status == NOT_NEEDED
            return
        if self._project_depth(stats, h, reach) or reach is None:
            B = self.world.B         # (else step_in_one_call's kernel copied them)
            self._poses = (B.pos.copy(), B.rot.copy())

    def _project_depth(self, stats, h=None, reach=None, rounds=PROJECTION_ROUNDS):
        """After a step: where it may have left depth (the position stage's own rows end
        deeper than SPLIT_DEPTH, or bodies moved enough to meet with new features), detect
        at the new state and push the deeper rows apart, again while that left rows deep or
        moved bodies far (depth_projection.py project_rounds, `rounds` at most). The last
        detection (speculative, over h, its depths updated for the shifts) is what the next
        step would detect, and that step takes it if nothing changed the world in between
        (_take_pending). Writes T_DEPTH (the last detection's depth, or after its projection
        the projected one) and T_PROJECT_NS into stats. reach: the detector's largest reach,
        if known. Returns whether it projected."""
        self._pending = None
        stats[S.T_DEPTH] = stats[S.T_END_DEPTH]
        if self.last is None or len(self.last) == 0:
            return False
        moving = float(self.detector.reach.max(initial=0.0)) if reach is None else reach
        if stats[S.T_END_DEPTH] <= SPLIT_DEPTH and moving <= SPLIT_DEPTH:   # (motion over h)
            return False
        t0 = time.perf_counter()
        w = self.world
        B = w.B
        h = w.settings.h if h is None else h
        det = self.detector
        group, inv_mass, free = self._groups()
        shift, moved = self._projection_scratch(len(free))
        res = self._project_res
        while True:
            spare = det.spare_buffers()
            status, done = depth_projection.project_rounds(
                B.pos, B.rot, B.vel, B.omega, B.static, det.shape_body, det.shape_kind,
                det.shape_size, det.shape_local_pos, det.shape_local_rot, det.shape_radius,
                det.shape_group, det.shape_mask, det.excluded_keys, det.poly_of_shape,
                det.polys, det.margin, float(h), det._sh_pos, det._sh_rot, det.aabb_min,
                det.aabb_max, det.reach, det._order, det._state, det._pair_a, det._pair_b,
                spare, det._scratch, group, inv_mass, free, shift, moved, 0.1 * SPLIT_DEPTH,
                4 * w.settings.contact_cycles, rounds, w.settings.contact_margin, stats, res)
            if status != GROW:
                break
            det.grow(int(res[RES_PAIRS]), int(res[RES_ROWS]), 2)
            rounds -= done
        pend = self._pending_buffers(spare.ints.shape[0], (self.last, self._prev))
        depth_projection.keep_pending(spare, int(res[RES_ROWS]), res[RES_BEFORE], group, shift,
                                      *pend, B.static, B.pos, B.rot, B.vel, B.omega)
        self._keep_pending(pend, h)
        stats[S.T_PROJECT_NS] = (time.perf_counter() - t0) * 1e9
        return True

    def _keep_pending(self, pend, h):
        """The pending detection keep_pending left in pend, for the next step (and the
        detector's state as after a detection into its spare buffers)."""
        det = self.detector
        res = self._project_res
        n = int(res[RES_ROWS])
        det._out, det.n_pairs = det._bufs[2], int(res[RES_PAIRS])
        self._pending = (ContactSet(pend[0][:n], pend[1][:n], det.n_shapes), h,
                         self._filter_sig, *pend[2:])

    def _groups(self):
        """The depth projection's joint groups (depth_projection.joint_groups), kept while
        the body and joint arrays are the same."""
        w = self.world
        key = (id(w.B), id(w.J), w.J.enabled.tobytes(), w.B.static.tobytes())
        if self._group_key != key:
            self._group_cache = depth_projection.joint_groups(
                w.B.pos.shape[0], w.B.static, w.B.inv_mass, w.J.const.body, w.J.enabled)
            self._group_key = key
        return self._group_cache

    def _take_pending(self, h):
        """The depth projection's last contacts if the world is still as it left them
        (same step, filters, fixed flags, positions, orientations and velocities), else
        None; used once."""
        p, self._pending = self._pending, None
        if p is None:
            return None
        cs, h0, sig, *state = p
        B = self.world.B
        if h0 != h or sig != self._filter_sig:
            return None
        for old, now in zip(state, (B.static, B.pos, B.rot, B.vel, B.omega), strict=True):
            if not np.array_equal(old, now):
                return None
        return cs

    @property
    def last_impulse(self):
        """(c,) normal impulse of each row in the last step [N s]: its collisions, loop and
        correction (summed when asked: the arrays stay the step's until the next one)."""
        return sum(self._impulse_of[1:], self._impulse_of[0].copy())

    def finish(self):
        """After the step: remember impulses for the warm start and the report, and the
        rows of islands that fell asleep (_keep_slept)."""
        C = self.C
        self._impulse_of = (C.acc_n, C.acc_v, C.acc_c)
        old = (self._prev, self._prev_warm, self._prev_stick, self._prev_hold)
        self._prev = self.last
        kept, self._kept = self._kept, None
        if kept is not None:                # (step_in_one_call's kernel did the same)
            self._prev_warm, self._prev_stick, self._prev_hold = kept[0], self._stick, kept[1]
            self._keep_slept(old)
            return
        self._prev_warm = C.keep.copy()     # the loops' impulses (contacts.keep_for_warm_start)
        if self.last is not None and len(self.last) == C.body.shape[0]:
            self._prev_stick, self._prev_hold = self._stick, self._anchors_hold()
        else:
            self._prev_stick, self._prev_hold = np.zeros((0, 2, 3)), np.zeros(0, np.bool_)
        self._keep_slept(old)

    # ---- sleeping islands' contact memory ------------------------------------------------
    def _keep_slept(self, old):
        """A sleeping island's bodies are fixed, so its rows are not detected while it
        sleeps (fixed-fixed pairs) and would wake cold: a stack sprang by 1.6 eps_pos when
        woken and strayed 3 eps_pos from the path of one that never slept
        (engine/sleeping.py promises a woken island goes on as if it had not slept). The
        rows of the last detection whose bodies are now asleep (or fixed) are kept with
        their warm start and anchors (old: the last memory, before this step's took its
        place), until the island wakes and its next detection has matched them (_memory).
        Looked at only when something fell asleep or woke (Sleep.naps, Sleep.wakes)."""
        sleep = self.world.sleep
        asleep = sleep.asleep
        if asleep.shape[0] != self.world.B.static.shape[0]:
            self._slept = None
            return
        if self._slept is not None and sleep.wakes != self._kept_wakes:   # (woken: matched)
            cs = self._slept[0]
            self._slept = _rows_of_memory(self._slept, asleep[cs.body_a] | asleep[cs.body_b])
        self._kept_wakes = sleep.wakes
        seen_naps, self._kept_naps = self._kept_naps, sleep.naps
        prev = old[0]
        if seen_naps == sleep.naps or prev is None or not len(prev) or len(old[1]) != len(prev):
            return                # (nothing fell asleep since the last step)
        old = _with_anchors(old)
        static = self.world.B.static
        a, b = prev.body_a, prev.body_b
        new = _rows_of_memory(old, (asleep[a] | asleep[b]) & static[a] & static[b])
        self._slept = _joined(self._slept, new)

    def _memory(self):
        """What this detection matches against: the last step's rows, and the kept rows of
        islands that woke since (_keep_slept). (ContactSet, warm, stick, hold)"""
        plain = (self._prev, self._prev_warm, self._prev_stick, self._prev_hold)
        sleep = self.world.sleep
        if self._slept is None or sleep.wakes == self._wakes_seen:
            return plain
        self._wakes_seen = sleep.wakes
        cs = self._slept[0]
        asleep = sleep.asleep
        if asleep.shape[0] != self.world.B.static.shape[0]:
            return plain
        woke = _rows_of_memory(self._slept, ~(asleep[cs.body_a] | asleep[cs.body_b]))
        if woke is None or (plain[0] is not None and len(plain[1]) != len(plain[0])):
            return plain
        return _joined(_with_anchors(plain) if plain[0] is not None else None, woke)


def _with_anchors(memory):
    """memory with anchors for each row (none held where the last step kept none)."""
    n = len(memory[1])
    if len(memory[2]) == n:
        return memory
    return memory[:2] + (np.zeros((n, 2, 3)), np.zeros(n, dtype=np.bool_))


def _rows_of_memory(memory, mask):
    """The rows of a (ContactSet, warm, stick, hold) memory where mask holds, or None."""
    if not mask.any():
        return None
    cs, warm, stick, hold = memory
    return (ContactSet(cs.ints[mask], cs.reals[mask], cs.n_shapes), warm[mask], stick[mask],
            hold[mask])


def _joined(first, second):
    """Two memories (either may be None) as one, first's rows first."""
    if first is None or second is None:
        return second if first is None else first
    cs = ContactSet(np.concatenate([first[0].ints, second[0].ints]),
                    np.concatenate([first[0].reals, second[0].reals]),
                    max(first[0].n_shapes, second[0].n_shapes))
    return (cs,) + tuple(np.concatenate([x, y]) for x, y in zip(first[1:], second[1:],
                                                                 strict=True))
