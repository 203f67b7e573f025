"""Curved sides of a detection's rows (contacts/pack.py pack_detection): each side's radius of
curvature at its contact point (Contacts.radius), a cylinder cap's radius (Contacts.face),
and the anchors of curved sides moved to their centre of curvature.

A sphere's or capsule's contact point lies at -s r n from its centre or segment (s = +1 for
side A, -1 for B; n from B to A), a cylinder's at -s r n from its axis where the point is on
its side (lying on a plane or a slope); that side's radius is r, else 0. The anchor k of a
curved side (in its body frame) is then the centre of curvature, k = point + s r R^T n, which
stays put as the body rolls (contacts/rows.py). face is a cylinder's radius where the normal
lies along its axis (a rim point of a cap: rows.py takes a patch of them as the disc).
"""
import math

from numba import njit

from ..collision.manifold import I_SA, I_SB, R_LA, R_LB, R_N
from ..collision.shapes import CAPSULE, CYLINDER, SPHERE

ON_SIDE = 1e-3       # a cylinder's point is on its side within this part of its radius
CAP = 0.99           # |axis . n| beyond this: the normal is along a cylinder's axis


@njit(cache=True, nogil=True)
def curved_sides(ints, reals, shape_kind, shape_size, shape_body, shape_local_pos,
                 shape_local_rot, rot, radius, face):
    """Fill radius (c, 2) and face (c,) of a detection's rows (ints, reals: the detector's
    tables, collision/detector.py ContactSet) from the shape table and the bodies'
    rotations (module docstring)."""
    for c in range(ints.shape[0]):
        face[c] = 0.0
        for side in range(2):
            shape = ints[c, I_SA] if side == 0 else ints[c, I_SB]
            col = R_LA if side == 0 else R_LB
            s = 1.0 if side == 0 else -1.0
            kind = shape_kind[shape]
            r = shape_size[shape, 0]
            radius[c, side] = r if kind == SPHERE or kind == CAPSULE else 0.0
            if kind != CYLINDER:
                continue
            R = rot[shape_body[shape]]
            axis = [0.0, 0.0, 0.0]
            off = [0.0, 0.0, 0.0]
            for i in range(3):
                a = 0.0
                o = 0.0
                for j in range(3):
                    a += R[i, j] * shape_local_rot[shape, j, 1]
                    o += R[i, j] * (reals[c, col + j] - shape_local_pos[shape, j])
                axis[i] = a
                off[i] = o
            along = 0.0
            for i in range(3):
                along += off[i] * axis[i]
            gap = 0.0
            cos = 0.0
            for i in range(3):
                d = (off[i] - along * axis[i]) + s * r * reals[c, R_N + i]
                gap += d * d
                cos += axis[i] * reals[c, R_N + i]
            radius[c, side] = r if math.sqrt(gap) < ON_SIDE * r else 0.0
            if abs(cos) > CAP:
                face[c] = r


@njit(cache=True, nogil=True)
def anchors_at_centres(body, normal, radius, rot, anchor):
    """Move each curved side's anchor (Contacts.anchor, body frame) to its centre of
    curvature: k += s r R^T n (module docstring)."""
    for c in range(body.shape[0]):
        for side in range(2):
            r = radius[c, side]
            if r == 0.0:
                continue
            sr = (1.0 if side == 0 else -1.0) * r
            R = rot[body[c, side]]
            for i in range(3):
                v = 0.0
                for j in range(3):
                    v += R[j, i] * normal[c, j]
                anchor[c, side, i] += sr * v
