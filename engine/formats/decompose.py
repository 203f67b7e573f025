"""Approximate convex decomposition of a concave collision mesh (CoACD), cached.

A mesh's convex hull fills its hollows (a cup collides as a solid). On request
(`impulse convert --decompose`) a mesh is split into convex parts by CoACD instead; the parts
are cached in the user cache folder (platformdirs), keyed by the mesh's vertices, faces and
the threshold, so a model converts slowly once and fast after.
"""
import hashlib
import logging
import os

import numpy as np

from .errors import need

log = logging.getLogger(__name__)

THRESHOLD = 0.05          # CoACD's concavity threshold (its default)


def cache_dir():
    from platformdirs import user_cache_dir
    return os.path.join(user_cache_dir("impulse"), "coacd")


def _key(vertices, faces, threshold):
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(vertices, dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(faces, dtype=np.int64).tobytes())
    h.update(repr(float(threshold)).encode())
    return h.hexdigest()[:32]


def convex_parts(vertices, faces, threshold=THRESHOLD):
    """[points (k,3)] of the convex parts of a triangle mesh (vertices (n,3), faces (m,3)),
    from the cache or from CoACD (then cached)."""
    path = os.path.join(cache_dir(), _key(vertices, faces, threshold) + ".npz")
    if os.path.isfile(path):
        with np.load(path) as f:
            return [f[k] for k in sorted(f.files, key=int)]
    coacd = need("coacd")
    coacd.set_log_level("error")
    mesh = coacd.Mesh(np.asarray(vertices, dtype=np.float64), np.asarray(faces, dtype=np.int64))
    parts = [np.asarray(v, dtype=np.float64) for v, _ in coacd.run_coacd(mesh,
                                                                         threshold=threshold)]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + f".{os.getpid()}.tmp.npz"
    np.savez(tmp, **{str(i): p for i, p in enumerate(parts)})
    os.replace(tmp, path)
    log.debug("CoACD: %d parts, cached in %s", len(parts), path)
    return parts
