"""A detection's rows into the step's Contacts (contacts/system.py `detect`): the rows'
bodies, anchors (the witness points in each body's frame), normals and depths, and the warm
start of the rows matched to the last detection (collision/persist.py), in one compiled pass
over the detector's tables (collision/detector.py ContactSet; the numpy copies it replaces
cost the pyramid 20 us a step)."""
from numba import njit

from ..collision.manifold import I_BA, I_BB, R_DEPTH, R_LA, R_LB, R_N


@njit(cache=True)
def pack_rows(ints, reals, rows, prev_warm, body, anchor, normal, depth, warm):
    """Fill body, anchor, normal and depth (Contacts fields, as many rows as ints) from the
    tables, and warm[c] from prev_warm[rows[c]] where row c was matched (rows[c] >= 0; rows
    may be empty: nothing matched). Returns whether every row's body pair is the one body
    held before (then the pairs' materials in Contacts.coef still hold)."""
    same = True
    for c in range(ints.shape[0]):
        a, b = ints[c, I_BA], ints[c, I_BB]
        if body[c, 0] != a or body[c, 1] != b:
            same = False
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
