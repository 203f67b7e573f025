"""CollisionDetector: the thin Python owner of the shape tables and output buffers.

    det = CollisionDetector(shape_body, shape_kind, shape_size, shape_local_pos,
                            shape_local_rot, hull_vertex, shape_hull_start,
                            shape_hull_count, shape_group, shape_mask, excluded_keys,
                            margin=0.01)
    cs = det.detect(body_pos, body_rot, body_vel, body_omega, body_static, h)
    prev_row = cs.match(last_cs)            # warm start: -1 for new contacts
    hit = det.raycast(origin, direction, body_pos, body_rot)

All work happens in one compiled call (pipeline.detect_kernel); buffers grow by doubling
when a pass reports more pairs or contacts than fit, and the pass is repeated.
Output is double-buffered: a ContactSet holds views into one of two buffers that detect()
uses in turn, so it stays valid until the second detect() after it (enough to match the
previous step's contacts); call .copy() to keep one longer.
"""
from dataclasses import dataclass

import numpy as np

from ..fastcall import FastCall
from .broadphase import brute_force_pairs, pair_key
from .manifold import (
    I_BA,
    I_BB,
    I_FEAT,
    I_SA,
    I_SB,
    R_DEPTH,
    R_LA,
    R_LB,
    R_N,
    R_W,
    make_contact_buffers,
    make_scratch,
)
from .persist import match_contacts
from .pipeline import collide_one, detect_kernel
from .polytope import CYLINDER_SEGMENTS, PolytopeBuilder
from .raycast import ray_plane, raycast_kernel
from .shapes import HULL, shape_local_radius, shape_world_poses

ALL_GROUPS = np.int64(-1)  # every bit set: in all groups / collides with all groups


def _column(table, col, width=0):
    """A ContactSet field: a view of column col (width 0) or columns col..col+width-1 of one
    of its tables; assigning writes into the table."""
    def get(self):
        t = getattr(self, table)
        return t[:, col] if width == 0 else t[:, col:col + width]

    def put(self, value):
        get(self)[...] = value
    return property(get, put)


class ContactSet:
    """Contacts of one detection pass, one row per point: the detector's two output tables
    (ints (c, 5) int64, reals (c, 19) float64; collision/manifold.py's columns), always
    C-contiguous whatever c, so kernels take them in one compiled form; the fields are
    views of their columns:

    body_a, body_b, shape_a, shape_b (c,) int64; normal (c,3) unit, world, from B to A;
    depth (c,) > 0 when overlapping (>= -(margin + motion reach) otherwise);
    point_a, point_b (c,3) witness points in A's / B's body frame (relative to the centre
    of mass); world (c,3) their world midpoint; feature (c,) int64 persistence id.
    """
    FIELDS = ("body_a", "body_b", "shape_a", "shape_b", "normal", "depth", "point_a",
              "point_b", "world", "feature")
    body_a = _column("ints", I_BA)
    body_b = _column("ints", I_BB)
    shape_a = _column("ints", I_SA)
    shape_b = _column("ints", I_SB)
    feature = _column("ints", I_FEAT)
    normal = _column("reals", R_N, 3)
    depth = _column("reals", R_DEPTH)
    point_a = _column("reals", R_LA, 3)
    point_b = _column("reals", R_LB, 3)
    world = _column("reals", R_W, 3)

    def __init__(self, ints, reals, n_shapes=0):
        self.ints = ints
        self.reals = reals
        self.n_shapes = n_shapes

    @classmethod
    def from_fields(cls, n_shapes=0, **fields):
        """A ContactSet holding the given fields (FIELDS, each (c,) or (c, 3)); the world
        points (R_PA, R_PB) of the tables are not kept and read 0."""
        c = len(fields["depth"])
        cs = cls(np.zeros((c, 5), np.int64), np.zeros((c, 19)), n_shapes)
        for name in cls.FIELDS:
            setattr(cs, name, fields[name])
        return cs

    def __len__(self):
        return int(self.ints.shape[0])

    def copy(self):
        """A ContactSet owning its tables (detect() reuses its buffers)."""
        return ContactSet(self.ints.copy(), self.reals.copy(), self.n_shapes)

    @property
    def count(self):
        return len(self)

    def match(self, previous):
        """Row of `previous` holding the same contact (same shapes and feature, or a new
        feature at the same point: persist.py), or -1."""
        if previous is None or len(previous) == 0:
            return np.full(len(self), -1, dtype=np.int64)
        return match_contacts(previous.ints, previous.reals, self.ints, self.reals,
                              max(self.n_shapes, previous.n_shapes))


@dataclass
class RayHit:
    """Closest ray hit: body and shape index, world point and normal, distance."""
    body: int
    shape: int
    point: np.ndarray
    normal: np.ndarray
    distance: float


def excluded_pair_keys(pairs, n_bodies):
    """Sorted unique int64 keys min*n + max of body pairs [(i, j), ...]."""
    keys = [pair_key(int(i), int(j), int(n_bodies)) for i, j in pairs]
    return np.unique(np.array(keys, dtype=np.int64))


def _i64(a, k, fill):
    if a is None:
        return np.full(k, fill, dtype=np.int64)
    return np.ascontiguousarray(a, dtype=np.int64).reshape(k)


class CollisionDetector:
    """Broad + narrow phase and ray casts over a fixed shape table (see module doc)."""

    def __init__(self, shape_body, shape_kind, shape_size, shape_local_pos=None,
                 shape_local_rot=None, hull_vertex=None, shape_hull_start=None,
                 shape_hull_count=None, shape_group=None, shape_mask=None,
                 excluded_keys=None, margin=0.01, cylinder_segments=CYLINDER_SEGMENTS):
        self.margin = float(margin)
        self._builder = PolytopeBuilder(cylinder_segments)
        self._state = np.full(1, -1, dtype=np.int64)
        self._pairs_cap = 64
        self._contacts_cap = 64
        self._bufs = [make_contact_buffers(self._contacts_cap),
                      make_contact_buffers(self._contacts_cap)]
        self._cur = 0
        self._out = self._bufs[0]
        self._pair_a = np.zeros(self._pairs_cap, np.int64)
        self._pair_b = np.zeros(self._pairs_cap, np.int64)
        self.n_pairs = 0
        self.arrays_made = 0   # counts replacements of the arrays below, the buffers, the
                               # tables (a FixedArgs holding them is stale after one)
        # margin, h and the output buffer (detect() alternates two; all ContactBuffers come
        # from make_contact_buffers, so one kind) may differ from call to call
        self._detect_kernel = FastCall(detect_kernel, loose=(16, 17, 27))
        self.set_shapes(shape_body, shape_kind, shape_size, shape_local_pos, shape_local_rot,
                        hull_vertex, shape_hull_start, shape_hull_count)
        self.set_filters(shape_group, shape_mask, excluded_keys)

    # ---- tables -------------------------------------------------------------------
    def set_shapes(self, shape_body, shape_kind, shape_size, shape_local_pos=None,
                   shape_local_rot=None, hull_vertex=None, shape_hull_start=None,
                   shape_hull_count=None):
        """Replace the shape table (live edit); rebuilds polytopes (hulls are cached)."""
        k = len(shape_kind)
        self.n_shapes = k
        self.shape_body = _i64(shape_body, k, 0)
        self.shape_kind = _i64(shape_kind, k, 0)
        self.shape_size = np.ascontiguousarray(shape_size, dtype=np.float64).reshape(k, 3)
        self.shape_local_pos = (np.zeros((k, 3)) if shape_local_pos is None else
                                np.ascontiguousarray(shape_local_pos, np.float64).reshape(k, 3))
        self.shape_local_rot = (np.tile(np.eye(3), (k, 1, 1)) if shape_local_rot is None else
                                np.ascontiguousarray(shape_local_rot, np.float64).reshape(k, 3, 3))
        self.hull_vertex = (np.zeros((0, 3)) if hull_vertex is None else
                            np.ascontiguousarray(hull_vertex, np.float64).reshape(-1, 3))
        self.shape_hull_start = _i64(shape_hull_start, k, 0)
        self.shape_hull_count = _i64(shape_hull_count, k, 0)
        self.poly_of_shape, self.polys = self._builder.build(
            self.shape_kind, self.shape_size, self.hull_vertex, self.shape_hull_start,
            self.shape_hull_count)
        radius = np.zeros(k)
        for s in range(k):
            pts = None
            if self.shape_kind[s] == HULL:
                a = self.shape_hull_start[s]
                pts = self.hull_vertex[a:a + self.shape_hull_count[s]]
            radius[s] = shape_local_radius(self.shape_kind[s], self.shape_size[s], pts)
        self.shape_radius = radius
        maxface = int(self.polys.face_idx[:, 1].max()) if len(self.polys.face_idx) else 4
        tab = self.polys.table
        maxvert = int(tab[:, 1].max()) if len(tab) else 8
        self._scratch = make_scratch(max(64, 2 * maxface + 16, maxvert), maxvert,
                                     int(tab[:, 3].max()) if len(tab) else 6)
        self._sh_pos = np.zeros((k, 3))
        self._sh_rot = np.zeros((k, 3, 3))
        self.aabb_min = np.zeros((k, 3))
        self.aabb_max = np.zeros((k, 3))
        self.reach = np.zeros(k)
        self._order = np.arange(k, dtype=np.int64)
        self._state[0] = -1
        self.arrays_made += 1
        if hasattr(self, "shape_group"):
            self.set_filters(self.shape_group if len(self.shape_group) == k else None,
                             self.shape_mask if len(self.shape_mask) == k else None,
                             self.excluded_keys)

    def set_filters(self, shape_group=None, shape_mask=None, excluded_keys=None):
        """Groups/masks per shape (default: all bits) and the sorted excluded body-pair
        keys min*n_bodies + max (see excluded_pair_keys)."""
        k = self.n_shapes
        self.shape_group = _i64(shape_group, k, ALL_GROUPS)
        self.shape_mask = _i64(shape_mask, k, ALL_GROUPS)
        if excluded_keys is None:
            self.excluded_keys = np.zeros(0, dtype=np.int64)
        else:
            self.excluded_keys = np.unique(np.asarray(excluded_keys, dtype=np.int64))
        self.arrays_made += 1

    # ---- detection ----------------------------------------------------------------
    def detect(self, body_pos, body_rot, body_vel, body_omega, body_static, h, spare=False):
        """Contacts of all shape pairs at this state, within margin + motion over h.
        spare: into a third buffer, leaving the two that detect() alternates (and the
        ContactSets in them) alone (a check between two steps)."""
        body_static = np.ascontiguousarray(body_static, dtype=np.bool_)
        if spare:
            self.spare_buffers()
            slot = 2
        else:
            self._cur = 1 - self._cur
            slot = self._cur
        self._out = self._bufs[slot]
        if body_static.all():   # nothing moves (fixed or asleep): static pairs never collide
            self.n_pairs = 0
            return self._contact_set(0)
        while True:
            n_pairs, n = self._detect_kernel(
                body_pos, body_rot, body_vel, body_omega, body_static,
                self.shape_body, self.shape_kind, self.shape_size, self.shape_local_pos,
                self.shape_local_rot, self.shape_radius, self.shape_group, self.shape_mask,
                self.excluded_keys, self.poly_of_shape, self.polys, self.margin, float(h),
                self._sh_pos, self._sh_rot, self.aabb_min, self.aabb_max, self.reach,
                self._order, self._state, self._pair_a, self._pair_b, self._out,
                self._scratch)
            if not self.grow(n_pairs, n, slot):
                break
        self.n_pairs = n_pairs
        return self._contact_set(n)

    def spare_buffers(self):
        """The third output buffers (detect with spare), made where missing."""
        if len(self._bufs) < 3:
            self._bufs.append(make_contact_buffers(self._contacts_cap))
            self.arrays_made += 1
        return self._bufs[2]

    def grow(self, n_pairs, n, slot):
        """After a detection into the output buffers `slot` found n_pairs pairs and n rows:
        the pair buffers grown where they were short, else those output buffers where they
        were; returns whether one grew (then the detection is to be made again)."""
        if n_pairs > self._pairs_cap:
            self._pairs_cap = max(2 * self._pairs_cap, n_pairs + n_pairs // 4)
            self._pair_a = np.zeros(self._pairs_cap, np.int64)
            self._pair_b = np.zeros(self._pairs_cap, np.int64)
            self.arrays_made += 1
            return True
        if n > self._bufs[slot].ints.shape[0]:
            self._contacts_cap = max(2 * self._contacts_cap, n + n // 4)
            self._bufs[slot] = make_contact_buffers(self._contacts_cap)
            self._out = self._bufs[slot]
            self.arrays_made += 1
            return True
        return False

    def collide(self, a, b, body_pos, body_rot, body_vel, body_omega, body_static, h=0.0):
        """Contacts of the one shape pair (a as A, b as B) without broad phase or filters
        (normal from b to a); for tools and tests. Uses the output buffers like detect().
        """
        body_static = np.ascontiguousarray(body_static, dtype=np.bool_)
        self._cur = 1 - self._cur
        self._out = self._bufs[self._cur]
        while True:
            n = collide_one(int(a), int(b), body_pos, body_rot, body_vel, body_omega,
                            body_static, self.shape_body, self.shape_kind, self.shape_size,
                            self.shape_local_pos, self.shape_local_rot, self.shape_radius,
                            self.poly_of_shape, self.polys, self.margin, float(h),
                            self._sh_pos, self._sh_rot, self.aabb_min, self.aabb_max,
                            self.reach, self._out, self._scratch)
            if n <= self._out.ints.shape[0]:
                return self._contact_set(n)
            self._contacts_cap = max(2 * self._contacts_cap, n)
            self._out = make_contact_buffers(self._contacts_cap)
            self._bufs[self._cur] = self._out

    def _contact_set(self, n):
        return ContactSet(self._out.ints[:n], self._out.reals[:n], self.n_shapes)

    @property
    def pairs(self):
        """Candidate shape pairs of the last detect() (broad phase output), (p,2)."""
        return np.stack([self._pair_a[:self.n_pairs], self._pair_b[:self.n_pairs]], axis=1)

    def brute_force_pairs(self, body_static):
        """Reference pairs over the last AABBs by testing every pair (for tests)."""
        return brute_force_pairs(self.aabb_min, self.aabb_max, self.shape_body,
                                 np.ascontiguousarray(body_static, dtype=np.bool_),
                                 self.shape_group, self.shape_mask, self.excluded_keys,
                                 len(body_static))

    # ---- ray casts ----------------------------------------------------------------
    def raycast(self, origin, direction, body_pos, body_rot, max_distance=np.inf,
                skip_body=-1):
        """Closest hit of the ray origin + t*direction (t >= 0) or None."""
        d = np.asarray(direction, dtype=np.float64)
        ln = float(np.linalg.norm(d))
        if not ln > 0.0:
            raise ValueError("ray direction must be non-zero")
        d = d / ln
        o = np.asarray(origin, dtype=np.float64)
        shape_world_poses(body_pos, body_rot, self.shape_body, self.shape_local_pos,
                          self.shape_local_rot, self._sh_pos, self._sh_rot)
        s, t, p, n = raycast_kernel((o[0], o[1], o[2]), (d[0], d[1], d[2]),
                                    min(float(max_distance), 1e299), self.shape_kind,
                                    self.shape_size, self._sh_pos, self._sh_rot,
                                    self.poly_of_shape, self.polys, self.shape_body,
                                    int(skip_body))
        if s < 0:
            return None
        return RayHit(int(self.shape_body[s]), int(s), np.array(p), np.array(n), float(t))


def ray_plane_hit(origin, direction, point, normal):
    """Distance t >= 0 along the (normalised) direction to the plane, or inf."""
    d = np.asarray(direction, dtype=np.float64)
    d = d / np.linalg.norm(d)
    return ray_plane(tuple(map(float, origin)), (d[0], d[1], d[2]),
                     tuple(map(float, point)), tuple(map(float, normal)))
