"""Joint gizmos, after MuJoCo's joint/connect rendering and Jolt's constraint debug draw.

Every joint: a sphere at each anchor (B's only where it has come apart from A's, with a red
bar across the gap), a link from each body's centre to its anchor; the axes of its kind (an
arrow along a hinge's, slider's, rail's, cylindrical or planar joint's axis, a universal
joint's cross of A's x and B's y, a generic joint's frame); the stops of its limits (an arc
between the angles, or bars across the axis at the offsets) with a needle showing where B
is; a servo's target (a tick at the target angle or offset) and a velocity motor's way (a
turning arrow about the axis, or an arrow along it). Every spring: a coil between
its anchors and the links to its bodies' centres. Everything is drawn into a GizmoBuilder.
"""
from __future__ import annotations

import numpy as np

from impulse.app.joint_drawing import JointDrawing, frame_along
from impulse.engine.joints import (
    COORD_ANGLE_B_Y,
    COORD_ANGLE_X,
    COORD_OFFSET_X,
    CYLINDRICAL,
    GENERIC,
    HINGE,
    PLANAR,
    RAIL,
    SLIDER,
    UNIVERSAL,
)

ANCHOR_A = (0.1, 0.85, 0.95)
ANCHOR_B = (0.95, 0.3, 0.9)
JOINT_ERROR = (1.0, 0.15, 0.1)
JOINT_AXIS = (1.0, 0.85, 0.1)
SECOND_AXIS = (0.35, 0.95, 0.45)
FRAME_COLORS = ((0.9, 0.2, 0.2), (0.2, 0.85, 0.2), (0.25, 0.4, 1.0))
LIMIT = (1.0, 0.55, 0.15)
NEEDLE = (0.95, 0.95, 0.95)
TARGET = (0.3, 1.0, 0.3)
SPRING = (0.95, 0.8, 0.25)

AXIS_ARROW_KINDS = (HINGE, SLIDER, CYLINDRICAL, RAIL, PLANAR)
ARC_POINTS = 25
COIL_TURNS = 9
COIL_SEGMENTS_PER_TURN = 10


def draw_joints(g, d: JointDrawing, options) -> None:
    """All of a JointDrawing's joints and springs into the GizmoBuilder `g`."""
    r = options.gizmo_radius
    _anchors(g, d.anchor, r)
    _links(g, d.anchor, d.centre, d.attached, r)
    _axes(g, d, r, options.joint_axis_length)
    _marks(g, d, r, options.joint_axis_length * 0.4)
    _springs(g, d, r)


def _anchors(g, anchors, r) -> None:
    if not len(anchors):
        return
    g.points(anchors[:, 0], r * 1.6, ANCHOR_A)
    # a holding joint's B sphere and error bar lie inside its A sphere: not drawn
    # (254 joints of tree_255: 2/3 of the gizmo triangles, half an eye's time)
    gap = np.linalg.norm(anchors[:, 1] - anchors[:, 0], axis=1)
    apart = anchors[gap > r * (1.6 - 1.3)]
    g.points(apart[:, 1], r * 1.3, ANCHOR_B)
    g.segments(apart[:, 0], apart[:, 1], r * 0.6, JOINT_ERROR)


def _links(g, anchors, centres, attached, r) -> None:
    """A thin bar from each body's centre to its anchor (the world side has none)."""
    for side, color in enumerate((ANCHOR_A, ANCHOR_B)):
        on = attached[:, side]
        g.segments(centres[on, side], anchors[on, side], r * 0.45, color)


def _axes(g, d: JointDrawing, r, length) -> None:
    anchor, x_a = d.anchor[:, 0], d.frame[:, 0, :, 0]
    arrow = np.isin(d.kind, AXIS_ARROW_KINDS)
    g.arrows(anchor[arrow] - x_a[arrow] * length / 2, x_a[arrow] * length, r * 0.5, JOINT_AXIS)
    cross = d.kind == UNIVERSAL
    for axis, color in ((x_a[cross], JOINT_AXIS), (d.frame[cross, 1, :, 1], SECOND_AXIS)):
        g.segments(anchor[cross] - axis * length / 2, anchor[cross] + axis * length / 2,
                   r * 0.5, color)
    generic = d.kind == GENERIC
    for c, color in enumerate(FRAME_COLORS):
        g.arrows(anchor[generic], d.frame[generic, 0, :, c] * length / 2, r * 0.4, color)


def angle_planes(d: JointDrawing, js, which):
    """(u, v, needle), each (k,3), of the angle coordinates `which` of joints js: the angle
    phi points along cos(phi) u + sin(phi) v (engine/joints/generic.py's coordinate());
    `needle` is where B is now."""
    fa, fb = d.frame[js, 0], d.frame[js, 1]
    about_x = (d.coord[js, which] == COORD_ANGLE_X)[:, None]
    # about A's x: from A's y towards A's z; about B's y: from A's x towards y_B x x_A
    u = np.where(about_x, fa[:, :, 1], fa[:, :, 0])
    v = np.where(about_x, fa[:, :, 2], np.cross(fb[:, :, 1], fa[:, :, 0]))
    return u, v, np.where(about_x, fb[:, :, 1], fb[:, :, 0])


def _ray(u, v, phi) -> np.ndarray:
    """Directions cos(phi) u + sin(phi) v: phi (k,) or (k,n) for u, v (k,3)."""
    phi = np.asarray(phi, dtype=np.float64)
    if phi.ndim == 2:
        u, v = u[:, None], v[:, None]
    return np.cos(phi)[..., None] * u + np.sin(phi)[..., None] * v


def _arcs(g, centre, u, v, lo, hi, radius, r, color) -> None:
    """Arcs (k) from angle lo to hi (at most a turn) as polylines of ARC_POINTS points."""
    span = np.clip(hi - lo, -2 * np.pi, 2 * np.pi)
    phi = lo[:, None] + span[:, None] * np.linspace(0.0, 1.0, ARC_POINTS)
    points = centre[:, None] + _ray(u, v, phi) * radius
    g.segments(points[:, :-1], points[:, 1:], r, color)


def _angle_marks(g, d: JointDrawing, js, which, r, radius) -> None:
    """Limits as arcs with stops, B's needle, a servo's target tick, a motor's turn arrow."""
    centre = d.anchor[js, 0]
    u, v, needle = angle_planes(d, js, which)
    lo, hi = d.limits[js, which, 0], d.limits[js, which, 1]
    on = np.isfinite(lo) & np.isfinite(hi)
    _arcs(g, centre[on], u[on], v[on], lo[on], hi[on], radius, r * 0.4, LIMIT)
    for stop in (lo, hi):
        on = np.isfinite(stop)
        g.segments(centre[on], centre[on] + _ray(u[on], v[on], stop[on]) * radius, r * 0.4, LIMIT)
    g.segments(centre, centre + needle * radius * 0.8, r * 0.35, NEEDLE)
    if which:
        return
    target, rate = d.target[js], d.rate[js]
    on = np.isfinite(target)
    aim = _ray(u[on], v[on], target[on])
    g.segments(centre[on] + aim * radius * 0.6, centre[on] + aim * radius * 1.3, r * 0.5, TARGET)
    g.points(centre[on] + aim * radius * 1.3, r * 1.1, TARGET)
    on = np.isfinite(rate) & (rate != 0.0)           # three quarters of a turn, the motor's way
    way = np.sign(rate[on])
    _arcs(g, centre[on], u[on], v[on], np.zeros(len(way)), 1.5 * np.pi * way, radius * 0.7,
          r * 0.4, TARGET)
    end = _ray(u[on], v[on], 1.5 * np.pi * way)
    tangent = _ray(u[on], v[on], 1.5 * np.pi * way + np.pi / 2 * way)
    g.arrows(centre[on] + end * radius * 0.7, tangent * radius * 0.3, r * 0.4, TARGET)


def _offset_marks(g, d: JointDrawing, js, which, r, radius) -> None:
    """Limits as bars across the axis at the stops (joined by a rail), a servo's target as
    a bar with a ball, a motor's way as an arrow along the axis."""
    centre, x = d.anchor[js, 0], d.frame[js, 0, :, 0]
    across = d.frame[js, 0, :, 1] * radius * 0.4
    lo, hi = d.limits[js, which, 0], d.limits[js, which, 1]
    both = np.isfinite(lo) & np.isfinite(hi)
    g.segments((centre + lo[:, None] * x)[both], (centre + hi[:, None] * x)[both], r * 0.3, LIMIT)
    for stop in (lo, hi):
        on = np.isfinite(stop)
        at = (centre + np.where(on, stop, 0.0)[:, None] * x)[on]
        g.segments(at - across[on], at + across[on], r * 0.5, LIMIT)
    if which:
        return
    target, rate = d.target[js], d.rate[js]
    on = np.isfinite(target)
    at = (centre + np.where(on, target, 0.0)[:, None] * x)[on]
    g.segments(at - across[on] * 1.4, at + across[on] * 1.4, r * 0.5, TARGET)
    g.points(at, r * 1.1, TARGET)
    on = np.isfinite(rate) & (rate != 0.0)
    g.arrows(d.anchor[js, 1][on] + across[on], x[on] * (np.sign(rate[on]) * radius)[:, None],
             r * 0.4, TARGET)


def _marks(g, d: JointDrawing, r, radius) -> None:
    """Limits, needles, targets and motors' ways of the joints that have any."""
    marked = np.isfinite(d.limits).any(axis=(1, 2)) | np.isfinite(d.target) | \
        np.isfinite(d.rate)
    for which in range(2):
        coord = d.coord[:, which]
        angle = marked & ((coord == COORD_ANGLE_X) | (coord == COORD_ANGLE_B_Y))
        _angle_marks(g, d, np.flatnonzero(angle), which, r, radius)
        offset = marked & (coord == COORD_OFFSET_X)
        _offset_marks(g, d, np.flatnonzero(offset), which, r, radius)


def coil(p0, p1, coil_radius: float) -> np.ndarray:
    """Points of a helix of COIL_TURNS turns around the line p0..p1 (straight leads on the
    line at both ends)."""
    p0, p1 = np.asarray(p0, dtype=np.float64), np.asarray(p1, dtype=np.float64)
    axis = p1 - p0
    u, v = frame_along(axis)[:, 1:].T
    n = COIL_TURNS * COIL_SEGMENTS_PER_TURN
    t = np.linspace(0.0, 1.0, n + 1)
    angle = 2 * np.pi * COIL_TURNS * t
    along = 0.1 + 0.8 * t                        # the coil spans the middle 80 %
    helix = p0 + along[:, None] * axis + coil_radius * (np.cos(angle)[:, None] * u
                                                         + np.sin(angle)[:, None] * v)
    return np.vstack([p0, p0 + 0.1 * axis, helix, p0 + 0.9 * axis, p1])


def _springs(g, d: JointDrawing, r) -> None:
    anchors = d.spring_anchor
    if not len(anchors):
        return
    g.points(anchors[:, 0], r * 1.3, ANCHOR_A)
    g.points(anchors[:, 1], r * 1.3, ANCHOR_B)
    _links(g, anchors, d.spring_centre, d.spring_attached, r)
    for p0, p1 in anchors:
        if np.linalg.norm(p1 - p0) > 1e-6:
            g.polyline(coil(p0, p1, r * 4.0), r * 0.45, SPRING)
