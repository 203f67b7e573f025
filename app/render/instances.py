"""Turn the World's flat shape arrays into per-kind instance arrays for the GPU (pure numpy)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from impulse.engine.shape_kinds import (  # noqa: F401  (the engine's codes)
    BOX,
    CAPSULE,
    CYLINDER,
    HULL,
    KIND_NAMES,
    PLANE,
    SPHERE,
)

FLAG_HOVER, FLAG_SELECTED, FLAG_UNLIT, FLAG_WIRE = 1, 2, 4, 8

INSTANCE_FORMAT = "3f 3f 3f 3f 3f 3f 3f 1f 1f/i"
INSTANCE_ATTRS = ("in_rot0", "in_rot1", "in_rot2", "in_trans", "in_scale", "in_offset",
                  "in_color", "in_flags", "in_id")
INSTANCE_FLOATS = 23
MIN_SCALE = 1e-5


def pack_instances(rot, trans, scale, offset, color, flags, ids) -> np.ndarray:
    """Interleave instance attributes into (n, 23) float32 rows (rotation column by column)."""
    rot = np.asarray(rot, dtype=np.float64)
    n = len(rot)
    out = np.empty((n, INSTANCE_FLOATS), dtype=np.float32)
    out[:, 0:9] = rot.transpose(0, 2, 1).reshape(n, 9)
    out[:, 9:12] = trans
    out[:, 12:15] = np.maximum(np.asarray(scale, dtype=np.float64), MIN_SCALE)
    out[:, 15:18] = offset
    out[:, 18:21] = color
    out[:, 21] = flags
    out[:, 22] = ids
    return out


@dataclass
class HullGroup:
    """Shapes sharing one hull vertex range: its points and their instances."""

    key: tuple[int, int]
    points: np.ndarray
    instances: np.ndarray


@dataclass
class SceneInstances:
    """Everything the shape passes draw, grouped by mesh."""

    by_kind: dict[int, np.ndarray] = field(default_factory=dict)
    hulls: list[HullGroup] = field(default_factory=list)
    planes: list[np.ndarray] = field(default_factory=list)
    centre: np.ndarray = field(default_factory=lambda: np.zeros(3))
    radius: float = 1.0
    box: np.ndarray | None = None      # (2,3) lower, upper corner of the solid shapes (tight;
                                       # centre and radius: a generous sphere, for shadows)


def shape_poses(scene) -> tuple[np.ndarray, np.ndarray]:
    """World rotation (k,3,3) and position (k,3) of every shape."""
    b = np.asarray(scene.shape_body, dtype=np.int64)
    rb = np.asarray(scene.body_rot, dtype=np.float64)[b]
    pb = np.asarray(scene.body_pos, dtype=np.float64)[b]
    rot = rb @ np.asarray(scene.shape_local_rot, dtype=np.float64)
    pos = pb + np.einsum("kij,kj->ki", rb, np.asarray(scene.shape_local_pos, dtype=np.float64))
    return rot, pos


def kind_scale_offset(kind: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-shape mesh scale and capsule offset from (kind, size)."""
    size = np.asarray(size, dtype=np.float64)
    r, half = size[:, 0], size[:, 1]          # radius; half length or half height
    ones, zeros = np.ones_like(r), np.zeros_like(r)
    scale = np.where((kind == SPHERE)[:, None] | (kind == CAPSULE)[:, None],
                     np.stack([r, r, r], -1), size)
    scale = np.where((kind == CYLINDER)[:, None], np.stack([r, half, r], -1), scale)
    scale = np.where((kind == HULL)[:, None] | (kind == PLANE)[:, None],
                     np.stack([ones, ones, ones], -1), scale)
    offset = np.where((kind == CAPSULE)[:, None], np.stack([zeros, half, zeros], -1), 0.0)
    return scale, offset


def bounding_radius(kind: np.ndarray, size: np.ndarray, hull_extent: np.ndarray) -> np.ndarray:
    """Radius around each shape's origin that encloses it (planes: 0)."""
    size = np.asarray(size, dtype=np.float64)
    r, half = size[:, 0], size[:, 1]          # radius; half length or half height
    rad = np.zeros(len(kind))
    rad = np.where(kind == SPHERE, r, rad)
    rad = np.where(kind == BOX, np.linalg.norm(size, axis=1), rad)
    rad = np.where(kind == CAPSULE, r + half, rad)
    rad = np.where(kind == CYLINDER, np.hypot(r, half), rad)
    return np.where(kind == HULL, hull_extent, rad)


def half_extents(kind: np.ndarray, size: np.ndarray, hull_extent: np.ndarray) -> np.ndarray:
    """(k,3) half extents of each shape's box in its own frame (a hull's: its farthest
    vertex in every direction; planes: 0)."""
    scale, offset = kind_scale_offset(kind, size)
    half = scale + np.abs(offset)
    half = np.where((kind == HULL)[:, None], hull_extent[:, None], half)
    return np.where((kind == PLANE)[:, None], 0.0, half)


def body_flags(n_bodies: int, selected=(), hovered: int = -1) -> np.ndarray:
    """Highlight flags per body."""
    flags = np.zeros(n_bodies)
    if 0 <= hovered < n_bodies:
        flags[hovered] = FLAG_HOVER
    sel = np.asarray([i for i in selected if 0 <= i < n_bodies], dtype=np.int64)
    flags[sel] = FLAG_SELECTED
    return flags


# sleeping bodies (engine/sleeping.py) are drawn halfway to this blue-grey
SLEEP_TINT = np.array([0.42, 0.48, 0.80])


def build_instances(scene, selected=(), hovered: int = -1, wire: bool = False,
                    sleeping=None) -> SceneInstances:
    """Group the scene's shapes by mesh and pack their instance rows; `sleeping`: a mask
    of the bodies to tint (None: no tint)."""
    out = SceneInstances()
    kind = np.asarray(scene.shape_kind, dtype=np.int64)
    if len(kind) == 0:
        return out
    body = np.asarray(scene.shape_body, dtype=np.int64)
    size = np.asarray(scene.shape_size, dtype=np.float64)
    rot, pos = shape_poses(scene)
    scale, offset = kind_scale_offset(kind, size)
    color = np.asarray(scene.body_color, dtype=np.float64)[body]
    if sleeping is not None and len(sleeping) == len(scene.body_pos):
        tint = np.asarray(sleeping, dtype=bool)[body]
        color[tint] = 0.5 * color[tint] + 0.5 * SLEEP_TINT
    flags = body_flags(len(scene.body_pos), selected, hovered)[body] + (FLAG_WIRE if wire else 0)
    hull_vertex = np.asarray(getattr(scene, "hull_vertex", np.zeros((0, 3))), dtype=np.float64)
    starts = np.asarray(getattr(scene, "shape_hull_start", np.zeros(len(kind))), dtype=np.int64)
    counts = np.asarray(getattr(scene, "shape_hull_count", np.zeros(len(kind))), dtype=np.int64)
    extent = np.zeros(len(kind))
    for i in np.flatnonzero(kind == HULL):
        pts = hull_vertex[starts[i]:starts[i] + counts[i]]
        extent[i] = np.linalg.norm(pts, axis=1).max() if len(pts) else 0.0

    rows = pack_instances(rot, pos, scale, offset, color, flags, body)
    for k in (SPHERE, BOX, CAPSULE, CYLINDER):
        out.by_kind[k] = rows[kind == k]
    hull_idx = np.flatnonzero(kind == HULL)
    for key in sorted({(int(starts[i]), int(counts[i])) for i in hull_idx}):
        members = hull_idx[(starts[hull_idx] == key[0]) & (counts[hull_idx] == key[1])]
        out.hulls.append(HullGroup(key, hull_vertex[key[0]:key[0] + key[1]], rows[members]))
    for i in np.flatnonzero(kind == PLANE):
        m = np.identity(4)
        m[:3, :3], m[:3, 3] = rot[i], pos[i]
        out.planes.append(m)

    solid = kind != PLANE
    if solid.any():
        rad = bounding_radius(kind, size, extent)[solid]
        lo = (pos[solid] - rad[:, None]).min(axis=0)
        hi = (pos[solid] + rad[:, None]).max(axis=0)
        out.centre = (lo + hi) / 2.0
        out.radius = max(float(np.linalg.norm(hi - lo) / 2.0), 1e-3)
        reach = np.einsum("kij,kj->ki", np.abs(rot), half_extents(kind, size, extent))[solid]
        out.box = np.array([(pos[solid] - reach).min(axis=0), (pos[solid] + reach).max(axis=0)])
    return out
