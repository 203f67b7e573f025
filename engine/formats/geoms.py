"""MuJoCo collision geoms -> our shape entries (in a body's frame, Y up).

plane, sphere, capsule, cylinder and box map one to one (MuJoCo's sizes are half sizes and
its long axes local Z; ours are full sizes along local Y). A mesh becomes the convex hull of
its vertices (MuJoCo collides with that hull too), thinned to at most 128 vertices; an
ellipsoid becomes a hull of points on its surface. Height fields and SDFs have no shape
here: the caller's `unmapped` lists them.
"""
import numpy as np
from scipy.spatial import ConvexHull

from ..scene_schema import SIZE
from .frames import AXIS_Y_TO_Z, floats, quat

PLANE, HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH, SDF = range(9)
MAX_HULL_VERTICES = 128      # a mesh's hull is thinned to this many vertices (farthest
                             # points): collision and loading cost grow with the count


def farthest_points(points, k):
    """k of `points`, each the farthest from those taken before (the first: the farthest
    from the centroid): a hull of them keeps the shape's extent."""
    taken = [int(np.argmax(np.linalg.norm(points - points.mean(axis=0), axis=1)))]
    dist = np.linalg.norm(points - points[taken[0]], axis=1)
    for _ in range(k - 1):
        taken.append(int(np.argmax(dist)))
        dist = np.minimum(dist, np.linalg.norm(points - points[taken[-1]], axis=1))
    return points[taken]


def hull_points(points, max_vertices=None):
    """The vertices of the convex hull of `points` (n,3), at most `max_vertices` of them
    (farthest points; MAX_HULL_VERTICES by default), such that the engine can build its
    polytope from them (engine/collision/polytope.py merges coplanar triangles into faces,
    which near-coplanar ones from a tessellated mesh can leave open): where it cannot, the
    points are snapped to a grid of 1e-6, 1e-5, then 1e-4 of the mesh's size first.
    ValueError if they span no volume."""
    from ..collision.polytope import hull_polytope
    max_vertices = max_vertices or MAX_HULL_VERTICES
    points = np.asarray(points, dtype=np.float64)
    hull = points[ConvexHull(points).vertices]
    if len(hull) > max_vertices:
        hull = farthest_points(hull, max_vertices)
        hull = hull[ConvexHull(hull).vertices]
    size = float(np.max(np.ptp(hull, axis=0)))
    for grid in (0.0, 1e-6, 1e-5, 1e-4):
        if grid:
            step = grid * size
            snapped = np.unique(np.round(hull / step) * step, axis=0)
            hull = snapped[ConvexHull(snapped).vertices]
        try:
            hull_polytope(hull)
            return hull
        except ValueError:
            continue
    raise ValueError("the engine cannot build a polytope of this hull")


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
            full = len(points)
            points = hull_points(points)
        except Exception:  # noqa: BLE001 - qhull's errors: a flat or degenerate mesh
            unmapped.add("meshes that span no volume (left out)", what)
            return None
        if full > MAX_HULL_VERTICES and len(points) == MAX_HULL_VERTICES:
            unmapped.add(f"mesh hulls thinned to {MAX_HULL_VERTICES} vertices (farthest "
                         "points)", what)
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
