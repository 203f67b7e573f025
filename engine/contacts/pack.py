"""A detection's rows into the step's Contacts (contacts/system.py `detect`): the rows'
bodies, anchors (the witness points in each body's frame), normals and depths, and the warm
start of the rows matched to the last detection (collision/persist.py), and the pairs'
materials, in one compiled pass over the detector's tables (collision/detector.py ContactSet;
the numpy copies it replaces cost the pyramid 20 us a step, the materials' 8 us more);
pack_detection adds the matching, the curved sides and the friction anchors, so that a
detection's rows take one kernel call (each call from Python costs 2-3 us of argument
typing; the curved sides' numpy took the bouncing balls 50 us a step)."""
import math

import numpy as np
from numba import njit

from ..collision.manifold import I_BA, I_BB, R_DEPTH, R_LA, R_LB, R_N
from ..collision.persist import match_contacts
from .anchors import anchor_drifts
from .curvature import anchors_at_centres, curved_sides


@njit(cache=True)
def pack_rows(ints, reals, rows, prev_warm, material, fresh, body, anchor, normal, depth, warm,
              coef):
    """Fill body, anchor, normal and depth (Contacts fields, as many rows as ints) from the
    tables, and warm[c] from prev_warm[rows[c]] where row c was matched (rows[c] >= 0; rows
    may be empty: nothing matched). coef[c] (Contacts.coef) from the two bodies' materials
    (n, 5): e, mu_s, mu_d, mu_t, mu_r; e, mu_t and mu_r the larger, mu_s and mu_d the
    geometric mean (contacts/system.py), for the rows whose body pair is not the one body
    held before, or every row where `fresh` (new arrays, or new materials). Returns whether
    every row's body pair is the one held before."""
    same = True
    for c in range(ints.shape[0]):
        a, b = ints[c, I_BA], ints[c, I_BB]
        if body[c, 0] != a or body[c, 1] != b or fresh:
            same = same and not (body[c, 0] != a or body[c, 1] != b)
            coef[c, 0] = max(material[a, 0], material[b, 0])
            coef[c, 1] = math.sqrt(material[a, 1] * material[b, 1])
            coef[c, 2] = math.sqrt(material[a, 2] * material[b, 2])
            coef[c, 3] = max(material[a, 3], material[b, 3])
            coef[c, 4] = max(material[a, 4], material[b, 4])
        body[c, 0] = a
        body[c, 1] = b
        for i in range(3):
            anchor[c, 0, i] = reals[c, R_LA + i]
            anchor[c, 1, i] = reals[c, R_LB + i]
            normal[c, i] = reals[c, R_N + i]
        depth[c] = reals[c, R_DEPTH]
        r = rows[c] if c < rows.shape[0] else -1
        if 0 <= r < prev_warm.shape[0]:
            for i in range(warm.shape[1]):
                warm[c, i] = prev_warm[r, i]
    return same


@njit(cache=True, nogil=True)
def pack_detection(prev_ints, prev_reals, ints, reals, n_shapes, prev_warm, material, fresh,
                   body, anchor, normal, depth, warm, coef, rot, pos, prev_pos, prev_rot,
                   curved, shape_kind, shape_size, shape_body, shape_local_pos,
                   shape_local_rot, radius, face, prev_stick, prev_hold, free, limit, stick,
                   drift):
    """A detection into the step's Contacts in one call: its rows matched to the last
    detection's (collision/persist.py; none where prev_ints is empty), packed (pack_rows),
    where the world has curved shapes their curved sides (contacts/curvature.py: radius,
    face, anchors at the centres of curvature), and the friction anchors
    (contacts/anchors.py). Returns the matched rows."""
    if prev_ints.shape[0] > 0 and ints.shape[0] > 0:
        rows = match_contacts(prev_ints, prev_reals, ints, reals, n_shapes)
    else:
        rows = np.empty(0, dtype=np.int64)
    pack_rows(ints, reals, rows, prev_warm, material, fresh, body, anchor, normal, depth, warm,
              coef)
    if curved:
        curved_sides(ints, reals, shape_kind, shape_size, shape_body, shape_local_pos,
                     shape_local_rot, rot, radius, face)
        anchors_at_centres(body, normal, radius, rot, anchor)
    anchor_drifts(rot, pos, prev_pos, prev_rot, ints, reals, prev_ints, radius, rows,
                  prev_stick, prev_hold, free, limit, stick, drift)
    return rows
