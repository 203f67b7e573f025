"""Unit meshes for instanced drawing.

Vertex layout (10 floats): position, normal, shift (capsule hemisphere side: -1, 0, +1),
outline direction (from the shape's centre). The shader places a vertex at
`pos * scale + shift * offset`, so a capsule's radius and half length scale independently.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from impulse.app.mathutil import normalize

VERTEX_FORMAT = "3f 3f 1f 3f"
VERTEX_ATTRS = ("in_pos", "in_normal", "in_shift", "in_edir")


@dataclass
class MeshData:
    """Indexed triangle mesh: vertices (n,10) float32, indices (t*3,) int32."""

    vertices: np.ndarray
    indices: np.ndarray


def _pack(pos, nrm, shift, edir) -> np.ndarray:
    n = len(pos)
    shift = np.broadcast_to(np.asarray(shift, dtype=np.float64).reshape(-1, 1), (n, 1))
    return np.hstack([pos, nrm, shift, edir]).astype(np.float32)


def _grid_indices(rows: int, cols: int, start: int = 0) -> np.ndarray:
    """Two triangles per cell of a (rows+1) x (cols+1) vertex grid, counter-clockwise outside."""
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    a = start + r * (cols + 1) + c
    b, d = a + cols + 1, a + 1
    e = b + 1
    return np.stack([a, b, d, d, b, e], axis=-1).reshape(-1)


def _sphere_rings(lat0: float, lat1: float, rings: int, segments: int):
    """Positions on the unit sphere for latitudes lat0 -> lat1 (radians, +pi/2 = north)."""
    lat = np.linspace(lat0, lat1, rings + 1)[:, None]
    lon = np.linspace(0.0, 2.0 * np.pi, segments + 1)[None, :]
    x = np.cos(lat) * np.cos(lon)
    z = -np.cos(lat) * np.sin(lon)
    y = np.sin(lat) * np.ones_like(lon)
    return np.stack([x, y, z], axis=-1).reshape(-1, 3)


def sphere(segments: int = 24, rings: int = 12) -> MeshData:
    """Unit sphere."""
    p = _sphere_rings(np.pi / 2, -np.pi / 2, rings, segments)
    return MeshData(_pack(p, p, 0.0, p), _grid_indices(rings, segments).astype(np.int32))


def capsule(segments: int = 24, rings: int = 6) -> MeshData:
    """Unit-radius capsule: top hemisphere (shift +1), bottom hemisphere (shift -1), joined."""
    top = _sphere_rings(np.pi / 2, 0.0, rings, segments)
    bottom = _sphere_rings(0.0, -np.pi / 2, rings, segments)
    p = np.vstack([top, bottom])
    shift = np.concatenate([np.ones(len(top)), -np.ones(len(bottom))])
    per = segments + 1
    idx = [_grid_indices(rings, segments), _grid_indices(rings, segments, len(top))]
    # side band: last ring of top (equator, shift +1) -> first ring of bottom (shift -1)
    idx.append(_band(len(top) - per, len(top), segments))
    return MeshData(_pack(p, p, shift, p), np.concatenate(idx).astype(np.int32))


def _band(upper: int, lower: int, segments: int) -> np.ndarray:
    """Quads between two rings of segments+1 vertices starting at `upper` and `lower`."""
    c = np.arange(segments)
    a, d = upper + c, upper + c + 1
    b, e = lower + c, lower + c + 1
    return np.stack([a, b, d, d, b, e], axis=-1).reshape(-1)


def cylinder(segments: int = 32) -> MeshData:
    """Unit cylinder: radius 1, y in [-1, 1], flat caps."""
    lon = np.linspace(0.0, 2.0 * np.pi, segments + 1)
    ring = np.stack([np.cos(lon), np.zeros_like(lon), -np.sin(lon)], axis=-1)
    up = np.array([0.0, 1.0, 0.0])
    side_top, side_bot = ring + up, ring - up
    side = np.vstack([side_top, side_bot])
    side_n = np.vstack([ring, ring])
    verts = [_pack(side, side_n, 0.0, normalize(side))]
    idx = [_band(0, segments + 1, segments)]
    base = 2 * (segments + 1)
    c = np.arange(segments)
    for sign in (1.0, -1.0):
        cap = np.vstack([[0.0, sign, 0.0], ring + sign * up])
        n = np.tile([0.0, sign, 0.0], (len(cap), 1))
        verts.append(_pack(cap, n, 0.0, normalize(np.where(np.arange(len(cap))[:, None] == 0,
                                                              [[0.0, sign, 0.0]], cap))))
        tri = np.stack([np.full(segments, base), base + 1 + c, base + 2 + c], axis=-1)
        if sign < 0:
            tri = tri[:, [0, 2, 1]]
        idx.append(tri.reshape(-1))
        base += len(cap)
    return MeshData(np.vstack(verts), np.concatenate(idx).astype(np.int32))


def cone(segments: int = 24) -> MeshData:
    """Arrow head: base radius 1 at y=0, tip at y=1."""
    lon = np.linspace(0.0, 2.0 * np.pi, segments + 1)
    ring = np.stack([np.cos(lon), np.zeros_like(lon), -np.sin(lon)], axis=-1)
    side_n = normalize(ring + np.array([0.0, 1.0, 0.0]))
    tip = np.tile([0.0, 1.0, 0.0], (segments + 1, 1))
    p = np.vstack([ring, tip, [[0.0, 0.0, 0.0]], ring])
    down = [0.0, -1.0, 0.0]
    n = np.vstack([side_n, side_n, [down], np.tile(down, (segments + 1, 1))])
    c = np.arange(segments)
    side = np.stack([c, c + 1, segments + 1 + c], axis=-1)
    centre = 2 * (segments + 1)
    base = np.stack([np.full(segments, centre), centre + 2 + c, centre + 1 + c], axis=-1)
    idx = np.concatenate([side.reshape(-1), base.reshape(-1)])
    return MeshData(_pack(p, n, 0.0, normalize(p - [0.0, 0.3, 0.0])), idx.astype(np.int32))


def box() -> MeshData:
    """Unit box [-1, 1]^3 with flat faces (4 vertices per face)."""
    verts, idx = [], []
    for axis in range(3):
        for sign in (1.0, -1.0):
            n = np.zeros(3)
            n[axis] = sign
            u = np.zeros(3)
            u[(axis + 1) % 3] = 1.0
            v = np.cross(n, u)
            corners = np.array([n - u - v, n + u - v, n + u + v, n - u + v])
            base = len(verts) * 4
            verts.append(_pack(corners, np.tile(n, (4, 1)), 0.0, normalize(corners)))
            idx.append(base + np.array([0, 1, 2, 0, 2, 3]))
    return MeshData(np.vstack(verts), np.concatenate(idx).astype(np.int32))


def convex_hull(points: np.ndarray) -> MeshData:
    """Flat-shaded convex hull of points (k,3) in shape coordinates (scipy's Qhull)."""
    from scipy.spatial import ConvexHull

    pts = np.asarray(points, dtype=np.float64)
    hull = ConvexHull(pts)
    tris = pts[hull.simplices]  # (t,3,3)
    normals = hull.equations[:, :3]
    # orient every triangle counter-clockwise seen from outside
    geo = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    flip = np.einsum("ij,ij->i", geo, normals) < 0
    tris[flip] = tris[flip][:, [0, 2, 1]]
    p = tris.reshape(-1, 3)
    n = np.repeat(normals, 3, axis=0)
    centre = pts[hull.vertices].mean(axis=0)
    data = _pack(p, n, 0.0, normalize(p - centre))
    return MeshData(data, np.arange(len(p), dtype=np.int32))


def ground_quad(half_size: float) -> np.ndarray:
    """Two triangles (6,2) covering [-half_size, half_size]^2 in plane (x, z) coordinates."""
    s = half_size
    return np.array([[-s, -s], [-s, s], [s, s], [-s, -s], [s, s], [s, -s]], dtype=np.float32)
