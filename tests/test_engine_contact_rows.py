"""The per-stage contact rows (engine/contacts/rows.py) against dense computations, and the
linearised look-ahead against the exact one."""
import numpy as np
import pytest

from impulse.engine import state as S
from impulse.engine.contacts import rows as contact_rows
from impulse.engine.contacts import solve as contacts
from impulse.engine.impulses import add_k_matrix
from impulse.engine.scene import scene_to_world
from impulse.engine.solvers.iterative import prepare

from test_engine_contact_tree import inverse_mass_matrix
from test_engine_contacts import doc, ground


def _tumbled_pair():
    """Two boxes of different mass and shape, turned, one on the other, on the ground."""
    q = np.array([np.cos(0.2), 0.3 * np.sin(0.2), np.sin(0.2), 0.1])
    q /= np.linalg.norm(q)
    bodies = [ground(),
              {"name": "low", "shape": {"type": "box", "size": [0.4, 0.2, 0.3]}, "mass": 2.0,
               "position": [0.0, 0.0999, 0.0]},
              {"name": "high", "shape": {"type": "box", "size": [0.2, 0.1, 0.25]}, "mass": 0.7,
               "position": [0.05, 0.2499, 0.02], "orientation": [0.99, 0.0, 0.14, 0.0],
               "angular_velocity": [0.3, -0.5, 0.8], "velocity": [0.1, -0.2, 0.05]}]
    w = scene_to_world(doc(bodies, {"h": 1 / 60}))
    prepare(w.B, w.J, np.zeros((3, 3)))
    C, _ = w.collision.detect(w.settings.h)
    top = contacts.layers(w.B, w.J, C)
    C.order[:] = np.argsort(-C.layer, kind="mergesort")
    contact_rows.find_patches(C)
    contacts.prepare(w.B, C)
    contacts.begin_step(w.B, C)
    contact_rows.prepare_rows(w.B, C, contact_rows.STAGE_POSITION, top > 0, w.settings.h,
                              w.settings.to_array(0.0))
    return w, C


def _jrow(w, C, c, ra, rb, linear, angular, skip=()):
    row = np.zeros(6 * w.B.pos.shape[0])
    for side, r in ((0, ra), (1, rb)):
        b = C.body[c, side]
        if not w.B.static[b] and b not in skip:
            s = 1.0 if side == 0 else -1.0
            row[6 * b:6 * b + 3] += s * linear
            row[6 * b + 3:6 * b + 6] += s * (np.cross(r, linear) + angular)
    return row


def test_row_and_patch_responses_match_the_dense_mobility():
    w, C = _tumbled_pair()
    minv = inverse_mass_matrix(w)
    assert C.body.shape[0] >= 8 and C.pcount[0] >= 3          # two face patches
    zero = np.zeros(3)
    for c in range(C.body.shape[0]):
        k = np.zeros((3, 3))
        for side in range(2):
            b = C.body[c, side]
            if not w.B.static[b]:
                add_k_matrix(w.B, b, C.arm[c, side], k)
        n = C.normal[c]
        assert C.k_normal[c, 0] == pytest.approx(n @ k @ n, rel=1e-12)
        # the shock variant: the lower layer's body does not move
        lower = [b for b in C.body[c] if C.body_layer[b] < C.layer[c]]
        j = _jrow(w, C, c, C.arm[c, 0], C.arm[c, 1], n, zero, skip=lower)
        assert C.k_normal[c, 1] == pytest.approx(j @ minv @ j, rel=1e-12)
        if C.first[c] != c:
            continue
        ra, rb = C.patch_frame[c, 0], C.patch_frame[c, 1]
        centre = w.B.pos[C.body[c, 0]] + ra
        rows = range(c, c + C.pcount[c])
        mid = 0.5 * (w.B.pos[C.body[c, 0]] + C.arm[rows, 0] + w.B.pos[C.body[c, 1]]
                     + C.arm[rows, 1]).mean(axis=0)
        assert np.allclose(centre, mid, atol=1e-14)
        t1, t2 = C.patch_frame[c, 2], C.patch_frame[c, 3]
        assert np.allclose([t1 @ n, t2 @ n, t1 @ t2], 0.0, atol=1e-14)
        J3 = np.array([_jrow(w, C, c, ra, rb, t1, zero), _jrow(w, C, c, ra, rb, t2, zero),
                       _jrow(w, C, c, ra, rb, zero, n)])
        assert np.allclose(C.pk[c, 0], J3 @ minv @ J3.T, rtol=1e-10, atol=1e-14)


def test_linearised_look_ahead_follows_the_exact_one():
    """g' = g0 + h (u_n - un0) after an impulse: exact for a push through the centre of
    mass, and to second order in h for one that turns the body."""
    w, C = _tumbled_pair()
    h = w.settings.h
    g = np.asarray(w.settings.gravity, float)
    sa, sx = np.empty((5, 3, 3)), np.empty((6, 3, 3))
    contact_rows.snapshot(w.B, C, h, 4, g, sa, sx)
    high = w.body_index("high")

    def linear_gaps():
        u = np.array([contacts._normal_velocity(w.B, C, c) for c in range(C.body.shape[0])])
        return C.g0 + h * (u - C.un0)

    w.B.vel[high] += [0.05, -0.3, 0.02]            # through the centre: translation only
    w.B.pred_ok[high] = False
    lin = linear_gaps()
    contact_rows.snapshot(w.B, C, h, 4, g, sa, sx)
    assert np.allclose(lin, C.g0, atol=1e-13)
    w.B.omega[high] += [0.4, 0.2, -0.6]             # a turn: second order in h
    w.B.pred_ok[high] = False
    lin = linear_gaps()
    contact_rows.snapshot(w.B, C, h, 4, g, sa, sx)
    err = np.abs(lin - C.g0).max()
    assert 0.0 < err < h * h * 1.0 * 0.7 * 0.25      # h^2 |dw| (|w| + |dw|) r


def test_rows_deeper_than_split_depth_leave_their_depth_to_the_projection():
    w, C = _tumbled_pair()
    C.depth[0] = 2 * contact_rows.SPLIT_DEPTH
    C.depth[1] = 0.5 * contact_rows.SPLIT_DEPTH
    contact_rows.prepare_rows(w.B, C, contact_rows.STAGE_POSITION, True, w.settings.h,
                              w.settings.to_array(0.0))
    assert C.split[0] and not C.split[1]
    assert contact_rows.gap_base(C, 0) == 0.0
    assert contact_rows.gap_base(C, 1) == -C.depth[1]


def test_position_stage_reports_the_depth_it_leaves():
    w = scene_to_world(doc([ground(), {"name": "box", "shape": {"type": "box",
                                                              "size": [0.2, 0.2, 0.2]},
                                       "mass": 1.0, "position": [0, 0.1, 0]}],
                           {"h": 1 / 60}))
    for _ in range(30):
        w.step()
    assert 0.0 <= w.stats[S.T_END_DEPTH] < w.settings.contact_tolerance
