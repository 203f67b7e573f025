"""Convex polytopes (boxes, hulls, cylinder approximations) as flat arrays.

Built once in Python (scipy.spatial.ConvexHull for point sets); the kernels read a
``PolySet`` of flat arrays. Polytope q owns
  table[q] = (vstart, vcount, fstart, fcount, estart, ecount)              (P,6) int64
  vertices   vert[vstart : vstart+vcount]                      (V,3) shape-local
  faces      face[fstart : fstart+fcount] = (outward unit n, offset), n.x <= offset (F,4)
             face_idx[f] = (istart, icount) into findex: local vertex numbers,
             counter-clockwise seen from outside                  (F,2), (I,) int64
  edges      edge[estart : estart+ecount] = (v0, v1, f0, f1): local vertex numbers and
             the two adjacent local face numbers (for the Gauss-map test)  (E,4) int64
  centroid   centroid[q], an interior point (vertex mean)         (P,3)
(Few arrays on purpose: every array argument costs numba compile time.)
A cylinder becomes a prism over a regular N-gon of radius r * 2 / (1 + cos(pi/N)), so its
rim vertices lie just outside and its side faces just inside the true surface (error
+-0.4 % of r for N = 24).
"""
from collections import namedtuple
from functools import partial

import numpy as np

from .shapes import BOX, CYLINDER, HULL

PolySet = namedtuple("PolySet", ["table", "vert", "centroid", "face", "face_idx", "findex",
                                 "edge"])

CYLINDER_SEGMENTS = 24


class Polytope:
    """One convex polytope: vertices (v,3), faces as CCW vertex-index lists, edges."""

    def __init__(self, vertices, faces):
        self.vertices = np.ascontiguousarray(vertices, dtype=np.float64)
        self.faces = [list(map(int, f)) for f in faces]
        c = self.vertices.mean(axis=0)
        self.centroid = c
        normals, offsets = [], []
        for f in self.faces:
            p = self.vertices[f]
            # Newell's method: robust normal of a planar polygon
            n = np.zeros(3)
            for i in range(len(f)):
                a, b = p[i], p[(i + 1) % len(f)]
                n += np.array([(a[1] - b[1]) * (a[2] + b[2]),
                               (a[2] - b[2]) * (a[0] + b[0]),
                               (a[0] - b[0]) * (a[1] + b[1])])
            n /= np.linalg.norm(n)
            normals.append(n)
            offsets.append(float(np.max(p @ n)))
        self.normals = np.array(normals).reshape(-1, 3)
        self.offsets = np.array(offsets)
        if np.any(self.normals @ c > self.offsets + 1e-9):
            raise ValueError("polytope faces must be counter-clockwise seen from outside")
        edge_faces = {}
        for fi, f in enumerate(self.faces):
            for i in range(len(f)):
                a, b = f[i], f[(i + 1) % len(f)]
                edge_faces.setdefault((min(a, b), max(a, b)), []).append(fi)
        self.edges, self.edge_faces = [], []
        for key, fl in edge_faces.items():
            if len(fl) != 2:
                raise ValueError(f"polytope is not closed (edge with {len(fl)} faces)")
            self.edges.append(key)
            self.edge_faces.append(fl)
        self.edges = np.array(self.edges, dtype=np.int64).reshape(-1, 2)
        self.edge_faces = np.array(self.edge_faces, dtype=np.int64).reshape(-1, 2)


def box_polytope(he):
    """Box with half extents he; vertex i has signs (bit0 x, bit1 y, bit2 z) (1 = +)."""
    he = np.asarray(he, dtype=np.float64)
    v = np.array([[he[0] if i & 1 else -he[0], he[1] if i & 2 else -he[1],
                   he[2] if i & 4 else -he[2]] for i in range(8)])
    faces = [[0, 4, 6, 2], [1, 3, 7, 5],   # -x, +x
             [0, 1, 5, 4], [2, 6, 7, 3],   # -y, +y
             [0, 2, 3, 1], [4, 5, 7, 6]]   # -z, +z
    return Polytope(v, faces)


def cylinder_polytope(r, hh, segments=CYLINDER_SEGMENTS):
    """Prism approximating a Y-axis cylinder (see module docstring for the radius)."""
    n = int(segments)
    rr = r * 2.0 / (1.0 + np.cos(np.pi / n))
    ang = 2.0 * np.pi * np.arange(n) / n
    ring = np.stack([rr * np.cos(ang), np.zeros(n), -rr * np.sin(ang)], axis=1)
    top = ring + [0.0, hh, 0.0]
    bot = ring - [0.0, hh, 0.0]
    v = np.vstack([top, bot])
    faces = [list(range(n)), list(range(2 * n - 1, n - 1, -1))]
    for i in range(n):
        j = (i + 1) % n
        faces.append([i, n + i, n + j, j])
    return Polytope(v, faces)


def hull_polytope(points, tol=1e-9):
    """Convex hull of a point set with coplanar triangles merged into polygon faces."""
    from ..shapes import convex_hull
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if len(pts) < 4:
        raise ValueError("a hull needs at least 4 points")
    ch = convex_hull(pts)
    scale = max(1.0, float(np.max(np.abs(pts))))
    ns = len(ch.simplices)
    parent = list(range(ns))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    eq = ch.equations
    for s in range(ns):
        for t in ch.neighbors[s]:
            if (np.dot(eq[s, :3], eq[t, :3]) > 1.0 - 1e-9
                    and abs(eq[s, 3] - eq[t, 3]) < tol * scale):
                parent[find(s)] = find(t)
    groups = {}
    for s in range(ns):
        groups.setdefault(find(s), []).append(s)
    used = np.unique(ch.simplices)
    remap = -np.ones(len(pts), dtype=np.int64)
    remap[used] = np.arange(len(used))
    verts = pts[used]
    faces = []
    for members in groups.values():
        n = eq[members[0], :3]
        idx = np.unique(ch.simplices[members].ravel())
        p = pts[idx]
        c = p.mean(axis=0)
        u = p[0] - c
        if np.linalg.norm(u) < 1e-300:
            u = np.cross(n, [1.0, 0.0, 0.0])
        u /= np.linalg.norm(u)
        w = np.cross(n, u)
        ang = np.arctan2((p - c) @ w, (p - c) @ u)
        order = idx[np.argsort(ang)]
        face = [int(remap[i]) for i in order]
        faces.append(_drop_collinear(verts, face))
    return Polytope(verts, faces)


def _drop_collinear(verts, face):
    """Remove vertices lying on the straight line between their neighbours."""
    out = []
    m = len(face)
    for i in range(m):
        a, b, c = verts[face[i - 1]], verts[face[i]], verts[face[(i + 1) % m]]
        e1, e2 = b - a, c - b
        scale = max(1.0, np.linalg.norm(e1) * np.linalg.norm(e2))
        if np.linalg.norm(np.cross(e1, e2)) > 1e-12 * scale:
            out.append(face[i])
    return out


def pack_polytopes(polys):
    """Flatten a list of Polytope into a PolySet of contiguous arrays."""
    vstart, vcount, fstart, fcount, estart, ecount = [], [], [], [], [], []
    vert, cen, fn, fo, fis, fic, fidx, ev, ef = [], [], [], [], [], [], [], [], []
    nv = nf = ne = ni = 0
    for p in polys:
        vstart.append(nv)
        vcount.append(len(p.vertices))
        fstart.append(nf)
        fcount.append(len(p.faces))
        estart.append(ne)
        ecount.append(len(p.edges))
        vert.append(p.vertices)
        cen.append(p.centroid)
        fn.append(p.normals)
        fo.append(p.offsets)
        for f in p.faces:
            fis.append(ni)
            fic.append(len(f))
            fidx.extend(f)
            ni += len(f)
        ev.append(p.edges)
        ef.append(p.edge_faces)
        nv += len(p.vertices)
        nf += len(p.faces)
        ne += len(p.edges)

    def i64(a):
        return np.ascontiguousarray(np.array(a, dtype=np.int64).reshape(-1))

    def f3(a):
        return np.ascontiguousarray(np.vstack(a) if a else np.zeros((0, 3)), dtype=np.float64)

    def e2(a):
        return np.ascontiguousarray(np.vstack(a) if a else np.zeros((0, 2)), dtype=np.int64)

    table = np.ascontiguousarray(np.stack([i64(vstart), i64(vcount), i64(fstart), i64(fcount),
                                           i64(estart), i64(ecount)], axis=1).reshape(-1, 6))
    offs = np.concatenate(fo) if fo else np.zeros(0)
    face = np.ascontiguousarray(np.hstack([f3(fn), offs.reshape(-1, 1)]), dtype=np.float64)
    face_idx = np.ascontiguousarray(np.stack([i64(fis), i64(fic)], axis=1).reshape(-1, 2))
    edge = np.ascontiguousarray(np.hstack([e2(ev), e2(ef)]), dtype=np.int64)
    return PolySet(table, f3(vert), f3(cen).reshape(-1, 3), face, face_idx, i64(fidx), edge)


class PolytopeBuilder:
    """Builds the PolySet for a shape table; caches hulls by their point bytes."""

    def __init__(self, cylinder_segments=CYLINDER_SEGMENTS):
        self.cylinder_segments = cylinder_segments
        self._cache = {}

    def build(self, shape_kind, shape_size, hull_vertex, shape_hull_start, shape_hull_count):
        """Return (poly_of_shape (k,) int64, PolySet) for boxes, cylinders and hulls."""
        k = len(shape_kind)
        poly_of_shape = -np.ones(k, dtype=np.int64)
        polys = []
        for s in range(k):
            kind = int(shape_kind[s])
            if kind == BOX:
                key = ("box", tuple(np.asarray(shape_size[s], dtype=np.float64)))
                make = partial(box_polytope, shape_size[s])
            elif kind == CYLINDER:
                key = ("cyl", float(shape_size[s][0]), float(shape_size[s][1]),
                       self.cylinder_segments)
                make = partial(cylinder_polytope, shape_size[s][0], shape_size[s][1],
                               self.cylinder_segments)
            elif kind == HULL:
                a, c = int(shape_hull_start[s]), int(shape_hull_count[s])
                pts = np.ascontiguousarray(hull_vertex[a:a + c], dtype=np.float64)
                key = ("hull", pts.tobytes())
                make = partial(hull_polytope, pts)
            else:
                continue
            if key not in self._cache:
                self._cache[key] = make()
            poly_of_shape[s] = len(polys)
            polys.append(self._cache[key])
        return poly_of_shape, pack_polytopes(polys)
