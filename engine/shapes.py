"""Shape specs from scene files -> shape table rows, and their mass properties.

Kinds: shape_kinds.py (shared with collision and rendering). Internal sizes: sphere
(r,0,0); box half extents; capsule (r, half segment length, 0); cylinder (r, half height, 0).
Mass properties of a unit-density shape about its own centre, in its own frame:
    sphere  V = 4/3 pi r^3,          I = 2/5 r^2 V (all axes)
    box     V = 8 a b c,             I_x = V (b^2 + c^2)/3 (half extents a, b, c)
    cylinder V = 2 pi r^2 e,         I_y = V r^2/2, I_x = I_z = V (3 r^2 + 4 e^2)/12
    capsule  cylinder (length 2e) + sphere split in two caps at the segment ends:
             I_x = Vc (4e^2/12 + r^2/4) + Vs (2 r^2/5 + e^2 + 3 e r/4)
    hull    tetrahedra from the centroid to each face (exact polyhedral integrals)
"""
import numpy as np

from .shape_kinds import BOX, CAPSULE, CYLINDER, HULL, KIND_BY_NAME, PLANE, SPHERE  # noqa: F401


def shape_size(spec):
    """Internal size triple of a shape spec (dict from the scene file)."""
    t = spec["type"]
    if t == "sphere":
        return np.array([spec["radius"], 0.0, 0.0])
    if t == "box":
        return 0.5 * np.asarray(spec["size"], dtype=np.float64)
    if t == "capsule":
        return np.array([spec["radius"], 0.5 * spec["length"], 0.0])
    if t == "cylinder":
        return np.array([spec["radius"], 0.5 * spec["height"], 0.0])
    return np.zeros(3)


def size_spec(kind, size):
    """Inverse of shape_size: the scene-file keys for a shape."""
    if kind == SPHERE:
        return {"radius": float(size[0])}
    if kind == BOX:
        return {"size": [float(2 * x) for x in size]}
    if kind == CAPSULE:
        return {"radius": float(size[0]), "length": float(2 * size[1])}
    if kind == CYLINDER:
        return {"radius": float(size[0]), "height": float(2 * size[1])}
    return {}


def unit_mass_properties(kind, size, points=None):
    """(volume, centre, inertia tensor 3x3 about the centre) at density 1, shape frame."""
    if kind == SPHERE:
        r = size[0]
        v = 4.0 / 3.0 * np.pi * r ** 3
        return v, np.zeros(3), np.eye(3) * 0.4 * v * r * r
    if kind == BOX:
        a, b, c = size
        v = 8.0 * a * b * c
        return v, np.zeros(3), np.diag([v * (b * b + c * c), v * (a * a + c * c),
                                        v * (a * a + b * b)]) / 3.0
    if kind == CYLINDER:
        r, e = size[0], size[1]
        v = 2.0 * np.pi * r * r * e
        ix = v * (3 * r * r + 4 * e * e) / 12.0
        return v, np.zeros(3), np.diag([ix, 0.5 * v * r * r, ix])
    if kind == CAPSULE:
        r, e = size[0], size[1]
        vc = 2.0 * np.pi * r * r * e
        vs = 4.0 / 3.0 * np.pi * r ** 3
        ix = vc * (4 * e * e / 12.0 + r * r / 4.0) + vs * (0.4 * r * r + e * e + 0.75 * e * r)
        iy = 0.5 * vc * r * r + 0.4 * vs * r * r
        return vc + vs, np.zeros(3), np.diag([ix, iy, ix])
    if kind == HULL:
        return hull_mass_properties(points)
    return 0.0, np.zeros(3), np.zeros((3, 3))


def convex_hull(points):
    """scipy's ConvexHull of (k,3) points; ValueError with one sentence where Qhull finds
    no hull (coplanar, collinear or coincident points) instead of Qhull's report."""
    from scipy.spatial import ConvexHull, QhullError
    try:
        return ConvexHull(np.asarray(points, dtype=np.float64))
    except (QhullError, ValueError):
        raise ValueError("hull points are coplanar, collinear or coincident: the hull has "
                         "no volume") from None


def hull_mass_properties(points):
    """Volume, centroid and inertia (density 1) of the convex hull of `points`. Raises
    ValueError (one sentence) where the points span no volume."""
    pts = np.asarray(points, dtype=np.float64)
    hull = convex_hull(pts)
    o = pts[hull.vertices].mean(axis=0)
    vol = 0.0
    com = np.zeros(3)
    cov = np.zeros((3, 3))
    canon = np.array([[2, 1, 1], [1, 2, 1], [1, 1, 2]]) / 120.0
    for tri in hull.simplices:
        a, b, c = pts[tri] - o
        d = np.dot(a, np.cross(b, c)) / 6.0
        if d < 0:
            b, c = c, b
            d = -d
        e = np.array([a, b, c])
        vol += d
        com += d * (a + b + c) / 4.0
        cov += 6.0 * d * e.T @ canon @ e
    extent = float(np.ptp(pts, axis=0).max())
    if not vol > 1e-9 * extent ** 3:
        raise ValueError("hull points are (nearly) coplanar: the hull has no volume")
    com /= vol
    cov -= vol * np.outer(com, com)
    inertia = np.trace(cov) * np.eye(3) - cov
    return vol, com + o, inertia
