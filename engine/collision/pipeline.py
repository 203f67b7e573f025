"""One detection pass as a single compiled call: poses -> AABBs -> sweep -> narrow phase.

The narrow phase reports contacts with depth >= -(margin + reach_a + reach_b), so a pair
that may close within the step (speculative contact) is already in the list; after the
narrow phase every row gets its body pair, its witness points in the bodies' frames
(R^T (p - body_pos)) and the world midpoint.
"""
import numpy as np
from numba import njit

from .broadphase import sweep_and_prune
from .dispatch import canonical_order, collide_pair
from .manifold import I_BA, I_BB, I_SA, I_SB, R_LA, R_LB, R_PA, R_PB, R_W
from .narrow_boxbox import box_box_arrays
from .shapes import BOX, WorldShapes, compute_aabbs, shape_world_poses
from .vec import rot_t, sub, v3


@njit(cache=True, _nrt=False)
def finalize_contacts(out, n, shape_body, body_pos, body_rot):
    """Fill body_a/b, local_a/b and world for rows [0, n)."""
    ints = out.ints
    reals = out.reals
    for c in range(n):
        ba = shape_body[ints[c, I_SA]]
        bb = shape_body[ints[c, I_SB]]
        ints[c, I_BA] = ba
        ints[c, I_BB] = bb
        pa = (reals[c, R_PA], reals[c, R_PA + 1], reals[c, R_PA + 2])
        pb = (reals[c, R_PB], reals[c, R_PB + 1], reals[c, R_PB + 2])
        la = rot_t(body_rot[ba], sub(pa, v3(body_pos, ba)))
        lb = rot_t(body_rot[bb], sub(pb, v3(body_pos, bb)))
        for i in range(3):
            reals[c, R_LA + i] = la[i]
            reals[c, R_LB + i] = lb[i]
            reals[c, R_W + i] = 0.5 * (pa[i] + pb[i])


@njit(cache=True, _nrt=False)
def narrow_phase(S, P, pair_a, pair_b, n_pairs, reach, margin, out, sc):
    """Contacts of all candidate pairs in canonical order; returns the count needed."""
    c = np.int64(0)  # not a literal: avoids a second compiled specialisation
    kind = S.kind
    no_flip = np.bool_(False)   # a typed bool, not a literal (one compiled version)
    for p in range(n_pairs):
        a, b = canonical_order(kind, pair_a[p], pair_b[p])
        thr = margin + reach[a] + reach[b]
        if kind[a] == BOX and kind[b] == BOX:     # the common case, called directly
            c = box_box_arrays(S.pos, S.rot, S.size, a, b, no_flip, thr, out, c, sc.clip,
                               sc.clip_tag, sc.cand, sc.cand_feat, sc.sel)
        else:
            c = collide_pair(S, P, a, b, thr, out, c, sc)
    return c


@njit(cache=True, nogil=True)
def detect_kernel(body_pos, body_rot, body_vel, body_omega, body_static,
                  shape_body, shape_kind, shape_size, shape_local_pos, shape_local_rot,
                  shape_radius, shape_group, shape_mask, excluded_keys, poly_of_shape, P,
                  margin, h, sh_pos, sh_rot, aabb_min, aabb_max, reach, order, state,
                  pair_a, pair_b, out, sc):
    """Full detection. Returns (pairs found, contacts found); when either exceeds its
    buffer the caller grows the buffer and calls again (nothing else is lost)."""
    shape_world_poses(body_pos, body_rot, shape_body, shape_local_pos, shape_local_rot,
                      sh_pos, sh_rot)
    compute_aabbs(shape_kind, shape_size, shape_body, sh_pos, sh_rot, shape_radius,
                  poly_of_shape, P.table, P.vert, body_pos, body_vel,
                  body_omega, body_static, margin, h, aabb_min, aabb_max, reach)
    n_pairs = sweep_and_prune(aabb_min, aabb_max, order, state, shape_body, body_static,
                              shape_group, shape_mask, excluded_keys, body_pos.shape[0],
                              pair_a, pair_b)
    if n_pairs > pair_a.shape[0]:
        return n_pairs, 0
    S = WorldShapes(shape_kind, shape_size, sh_pos, sh_rot, poly_of_shape)
    n = narrow_phase(S, P, pair_a, pair_b, n_pairs, reach, margin, out, sc)
    if n <= out.ints.shape[0]:
        finalize_contacts(out, n, shape_body, body_pos, body_rot)
    return n_pairs, n


@njit(cache=True)
def collide_one(a, b, body_pos, body_rot, body_vel, body_omega, body_static, shape_body,
                shape_kind, shape_size, shape_local_pos, shape_local_rot, shape_radius,
                poly_of_shape, P, margin, h, sh_pos, sh_rot, aabb_min, aabb_max, reach,
                out, sc):
    """Contacts of the single shape pair (a as A, b as B), no broad phase or filters."""
    shape_world_poses(body_pos, body_rot, shape_body, shape_local_pos, shape_local_rot,
                      sh_pos, sh_rot)
    compute_aabbs(shape_kind, shape_size, shape_body, sh_pos, sh_rot, shape_radius,
                  poly_of_shape, P.table, P.vert, body_pos, body_vel,
                  body_omega, body_static, margin, h, aabb_min, aabb_max, reach)
    S = WorldShapes(shape_kind, shape_size, sh_pos, sh_rot, poly_of_shape)
    n = collide_pair(S, P, a, b, margin + reach[a] + reach[b], out, np.int64(0), sc)
    if n <= out.ints.shape[0]:
        finalize_contacts(out, n, shape_body, body_pos, body_rot)
    return n
