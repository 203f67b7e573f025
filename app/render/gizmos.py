"""Debug gizmos (joints and springs, contacts, centres of mass, velocities, external loads,
the mouse drag) as instances; the joints' look is app/render/joint_gizmos.py."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from impulse.app.joint_drawing import joint_drawing
from impulse.app.mathutil import basis_from_y
from impulse.app.render.instances import FLAG_UNLIT, INSTANCE_FLOATS, pack_instances
from impulse.app.render.joint_gizmos import FRAME_COLORS as AXIS_COLORS
from impulse.app.render.joint_gizmos import draw_joints

CONTACT_POINT = (0.95, 0.2, 0.2)
CONTACT_NORMAL = (0.2, 0.9, 0.35)
COM_COLOR = (0.95, 0.95, 0.95)
VELOCITY = (1.0, 0.6, 0.1)
DRAG_LINE = (1.0, 1.0, 0.3)
LOAD_FORCE = (0.2, 0.4, 1.0)       # blue (joint anchors are cyan and magenta)
LOAD_TORQUE = (0.6, 0.35, 1.0)     # violet


def load_arrow_length(magnitude):
    """Arrow length [m] for a force [N] or torque [N m]: 0.3 log2(1 + |x|), so 1 N shows
    0.3 m, 10 N 1.04 m, 100 N 2 m and 1000 N 3 m (loads of any size stay readable)."""
    return 0.3 * np.log2(1.0 + magnitude)


def _load_arrows(g, arrows, r):
    """Each load's force as an arrow from its point of application (the centre of mass
    without a point), its torque about the centre of mass as an arrow along the axis from
    the same point."""
    for column, color, radius in ((1, LOAD_FORCE, 0.8), (2, LOAD_TORQUE, 0.6)):
        vec = arrows[:, column]
        mag = np.linalg.norm(vec, axis=1)
        on = mag > 0
        if on.any():
            unit = vec[on] / mag[on, None]
            g.arrows(arrows[on, 0], unit * load_arrow_length(mag[on])[:, None], r * radius,
                     color)


def _empty() -> np.ndarray:
    return np.zeros((0, INSTANCE_FLOATS), dtype=np.float32)


@dataclass
class GizmoInstances:
    """Instance rows for the sphere, cylinder (shafts) and cone (arrow heads) meshes."""

    spheres: np.ndarray
    cylinders: np.ndarray
    cones: np.ndarray


class GizmoBuilder:
    """Collects points, segments and arrows, then packs them as unlit instances."""

    def __init__(self):
        self._spheres: list[np.ndarray] = []
        self._bars: list[np.ndarray] = []          # rows a (3), b (3), radius, colour (3)
        self._cones: list[np.ndarray] = []

    @staticmethod
    def _rows(rot, trans, scale, color) -> np.ndarray:
        n = len(trans)
        color = np.broadcast_to(np.asarray(color, dtype=np.float64), (n, 3))
        return pack_instances(rot, trans, scale, np.zeros((n, 3)), color,
                              np.full(n, FLAG_UNLIT), np.full(n, -1.0))

    def points(self, p, radius: float, color) -> None:
        p = np.asarray(p, dtype=np.float64).reshape(-1, 3)
        if len(p):
            rot = np.broadcast_to(np.identity(3), (len(p), 3, 3))
            self._spheres.append(self._rows(rot, p, np.full((len(p), 3), radius), color))

    def segments(self, a, b, radius: float, color) -> None:
        """Bars from a to b (collected: build() makes all bars' rows at once)."""
        a = np.asarray(a, dtype=np.float64).reshape(-1, 3)
        b = np.asarray(b, dtype=np.float64).reshape(-1, 3)
        if len(a):
            self._bars.append(np.hstack([a, b, np.full((len(a), 1), radius),
                                         np.broadcast_to(np.asarray(color, dtype=np.float64),
                                                         (len(a), 3))]))

    def _bar_rows(self) -> np.ndarray:
        bars = np.vstack(self._bars)
        a, d, radius, color = bars[:, :3], bars[:, 3:6] - bars[:, :3], bars[:, 6], bars[:, 7:]
        length = np.linalg.norm(d, axis=1)
        keep = length > 1e-9
        a, d, length, radius, color = a[keep], d[keep], length[keep], radius[keep], color[keep]
        scale = np.stack([radius, length / 2.0, radius], -1)
        return self._rows(basis_from_y(d), a + d / 2.0, scale, color)

    def polyline(self, points, radius: float, color) -> None:
        """Segments joining consecutive points."""
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        self.segments(points[:-1], points[1:], radius, color)

    def arrows(self, origin, vec, radius: float, color) -> None:
        origin = np.asarray(origin, dtype=np.float64).reshape(-1, 3)
        vec = np.asarray(vec, dtype=np.float64).reshape(-1, 3)
        length = np.linalg.norm(vec, axis=1)
        keep = length > 1e-9
        if not keep.any():
            return
        origin, vec, length = origin[keep], vec[keep], length[keep]
        head = np.minimum(length * 0.35, radius * 6.0)
        unit = vec / length[:, None]
        base = origin + unit * (length - head)[:, None]
        self.segments(origin, base, radius, color)
        width = np.full(len(base), radius * 2.4)
        scale = np.stack([width, head, width], -1)
        self._cones.append(self._rows(basis_from_y(unit), base, scale, color))

    def build(self) -> GizmoInstances:
        cat = lambda parts: np.vstack(parts) if parts else _empty()  # noqa: E731
        bars = self._bar_rows() if self._bars else _empty()
        return GizmoInstances(cat(self._spheres), bars, cat(self._cones))


def build_gizmos(scene, options) -> GizmoInstances:
    """Gizmo instances for the toggles set in `options` (a RenderOptions)."""
    g = GizmoBuilder()
    r = options.gizmo_radius
    if options.show_joints:
        shown = getattr(scene, "joint_drawing", None)   # a SceneView's copy of the World's
        drawing = shown if shown is not None else joint_drawing(scene)
        if drawing is not None:
            draw_joints(g, drawing, options)
    preview = getattr(scene, "joint_preview", None)     # the joint tool's joint-to-be
    if preview is not None:
        draw_joints(g, preview, options)
    if options.show_contacts:
        points = np.asarray(getattr(scene, "contact_world", np.zeros((0, 3))), dtype=np.float64)
        if len(points):
            normals = np.asarray(scene.contact_normal, dtype=np.float64).reshape(-1, 3)
            impulse = np.asarray(scene.contact_impulse, dtype=np.float64).reshape(-1)
            length = np.maximum(np.abs(impulse) * options.contact_scale, r * 4.0)
            g.points(points, r * 1.2, CONTACT_POINT)
            g.arrows(points, normals * length[:, None], r * 0.5, CONTACT_NORMAL)
    dynamic = ~np.asarray(scene.body_static, dtype=bool)
    if options.show_com and dynamic.any():
        pos = np.asarray(scene.body_pos, dtype=np.float64)[dynamic]
        rot = np.asarray(scene.body_rot, dtype=np.float64)[dynamic]
        g.points(pos, r * 1.2, COM_COLOR)
        for axis, color in enumerate(AXIS_COLORS):
            g.segments(pos, pos + rot[:, :, axis] * options.com_axis_length, r * 0.4, color)
    if options.show_velocity and dynamic.any():
        pos = np.asarray(scene.body_pos, dtype=np.float64)[dynamic]
        vel = np.asarray(scene.body_vel, dtype=np.float64)[dynamic]
        g.arrows(pos, vel * options.velocity_scale, r * 0.7, VELOCITY)
    arrows = getattr(scene, "load_arrows", None) if options.show_loads else None
    if arrows is not None:
        arrows = np.asarray(arrows(), dtype=np.float64).reshape(-1, 3, 3)
        if len(arrows):
            _load_arrows(g, arrows, r)
    lines = getattr(scene, "gizmo_lines", None)
    if lines is not None and len(lines):          # the mouse drag: grabbed point -> target
        lines = np.asarray(lines, dtype=np.float64).reshape(-1, 2, 3)
        g.points(lines[:, 0], r * 1.5, DRAG_LINE)
        g.arrows(lines[:, 0], lines[:, 1] - lines[:, 0], r * 0.6, DRAG_LINE)
    return g.build()
