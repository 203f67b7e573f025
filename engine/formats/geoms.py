"""MuJoCo collision geoms -> our shape entries (in a body's frame, Y up).

plane, sphere, capsule, cylinder and box map one to one (MuJoCo's sizes are half sizes and
its long axes local Z; ours are full sizes along local Y). A mesh becomes the convex hull of
its vertices (MuJoCo collides with that hull too); an ellipsoid becomes a hull of points on
its surface. Height fields and SDFs have no shape here: the caller's `unmapped` lists them.
"""
import numpy as np
from scipy.spatial import ConvexHull

from ..scene_schema import SIZE
from .frames import AXIS_Y_TO_Z, floats, quat

PLANE, HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH, SDF = range(9)
MAX_HULL_POINTS = 10000      # the scene schema's bound


def hull_points(points):
    """The vertices of the convex hull of `points` (n,3); ValueError if they span no
    volume."""
    points = np.asarray(points, dtype=np.float64)
    hull = ConvexHull(points)
    return points[hull.vertices]


def _size(x, unmapped, what):
    if x < SIZE[0]:
        unmapped.add("shape sizes below 0.1 mm (raised to 0.1 mm)", what)
        return SIZE[0]
    return float(x)


def ellipsoid_points(radii, n=12):
    """Points on an ellipsoid's surface: n latitudes x 2n longitudes and the poles."""
    out = [[0, 0, radii[2]], [0, 0, -radii[2]]]
    for th in np.linspace(0, np.pi, n + 1)[1:-1]:
        for ph in np.linspace(0, 2 * np.pi, 2 * n, endpoint=False):
            out.append([radii[0] * np.sin(th) * np.cos(ph), radii[1] * np.sin(th) * np.sin(ph),
                        radii[2] * np.cos(th)])
    return np.array(out)


def mesh_vertices(m, g):
    """The vertices of geom g's mesh in the geom's frame (MuJoCo stores them there)."""
    mesh = m.geom_dataid[g]
    start, count = m.mesh_vertadr[mesh], m.mesh_vertnum[mesh]
    return np.asarray(m.mesh_vert[start:start + count], dtype=np.float64)


def mesh_faces(m, g):
    mesh = m.geom_dataid[g]
    start, count = m.mesh_faceadr[mesh], m.mesh_facenum[mesh]
    return np.asarray(m.mesh_face[start:start + count], dtype=np.int64)


def shape_entries(m, g, pos, rot, unmapped, what, decompose=False):
    """The shape entries of geom g: one, or a mesh's convex parts with `decompose`."""
    if decompose and m.geom_type[g] == MESH:
        from .decompose import convex_parts
        parts = convex_parts(mesh_vertices(m, g), mesh_faces(m, g))
        out = [shape_entry(m, g, pos, rot, unmapped, what, points) for points in parts]
        return [s for s in out if s is not None]
    shape = shape_entry(m, g, pos, rot, unmapped, what)
    return [] if shape is None else [shape]


def shape_entry(m, g, pos, rot, unmapped, what, points=None):
    """The shape entry of geom g at `pos` / `rot` (its pose in the body frame, ours), or None
    where it has no counterpart (listed in `unmapped`). `points`: a mesh part's (geom
    frame) instead of the whole mesh."""
    kind, size = int(m.geom_type[g]), m.geom_size[g]
    if kind in (SPHERE, BOX, MESH, ELLIPSOID):
        shape_rot = rot
    else:
        shape_rot = rot @ AXIS_Y_TO_Z
    if kind == PLANE:
        shape = {"type": "plane"}
    elif kind == SPHERE:
        shape = {"type": "sphere", "radius": _size(size[0], unmapped, what)}
    elif kind == CAPSULE:
        shape = {"type": "capsule", "radius": _size(size[0], unmapped, what),
                 "length": float(2 * size[1])}
    elif kind == CYLINDER:
        shape = {"type": "cylinder", "radius": _size(size[0], unmapped, what),
                 "height": _size(2 * size[1], unmapped, what)}
    elif kind == BOX:
        shape = {"type": "box", "size": [_size(2 * s, unmapped, what) for s in size]}
    elif kind in (MESH, ELLIPSOID):
        if kind == ELLIPSOID:
            unmapped.add("ellipsoids (approximated by convex hulls of 266 surface points)", what)
            points = ellipsoid_points(size)
        elif points is None:
            points = mesh_vertices(m, g)
        try:
            points = hull_points(points)
        except Exception:  # noqa: BLE001 - qhull's errors: a flat or degenerate mesh
            unmapped.add("meshes that span no volume (left out)", what)
            return None
        if len(points) > MAX_HULL_POINTS:
            unmapped.add(f"hulls over {MAX_HULL_POINTS} points (thinned)", what)
            points = points[np.linspace(0, len(points) - 1, MAX_HULL_POINTS).astype(int)]
        shape = {"type": "hull", "points": [floats(p) for p in points]}
    else:
        unmapped.add("height fields and SDF geoms (no such shape)", what)
        return None
    if np.linalg.norm(pos) > 0:
        shape["position"] = floats(pos)
    q = quat(shape_rot)
    if max(abs(q[0] - 1.0), *map(abs, q[1:])) > 1e-15:
        shape["orientation"] = q
    return shape
