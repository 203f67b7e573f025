"""A small Wavefront OBJ reader: the vertex positions of a mesh, as a hull point set."""
import numpy as np


def load_obj_points(path, scale=1.0):
    """Return the ``v x y z`` positions of an OBJ file as an (n,3) float64 array.

    Faces, normals and texture coordinates are ignored: a convex hull is built from the
    points. Raises ValueError naming the line for a malformed vertex line.
    """
    pts = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.split()
            if not parts or parts[0] != "v":
                continue
            try:
                pts.append([float(parts[1]), float(parts[2]), float(parts[3])])
            except (IndexError, ValueError) as e:
                raise ValueError(f"{path}:{lineno}: bad vertex line {line.strip()!r}") from e
    if not pts:
        raise ValueError(f"{path}: no vertices")
    a = np.array(pts, dtype=np.float64) * scale
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{path}: non-finite vertex coordinates")
    return a
