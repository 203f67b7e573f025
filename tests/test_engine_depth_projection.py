"""The depth projection after a step (engine/contacts/depth_projection.py, contacts/system.py)."""
import numpy as np
import pytest

from impulse.engine import state as S
from impulse.engine.contacts import depth_projection
from impulse.engine.contacts.rows import SPLIT_DEPTH
from impulse.engine.scene import scene_to_world

from test_engine_contacts import doc, ground


def _project(inv_mass, free, body, normal, depth, pos=None):
    n = len(inv_mass)
    pos = np.zeros((n, 3)) if pos is None else pos
    out = depth_projection.project(pos, np.arange(n), np.asarray(inv_mass, float),
                                   np.asarray(free),
                                   np.asarray(body, np.int64), np.asarray(normal, float),
                                   np.asarray(depth, float), 1e-9, 200, np.empty(len(depth)),
                                   np.empty((n, 3)), np.empty(n, dtype=np.bool_))
    return pos, out


def test_a_deep_row_is_pushed_apart_by_inverse_masses():
    # bodies 0 (1 kg) and 1 (3 kg), 3 cm deep along +y (normal from B = 1 to A = 0)
    pos, (before, after, largest, _) = _project([1.0, 1 / 3], [True, True], [[0, 1]],
                                                [[0, 1, 0]], [0.03])
    assert before == 0.03 and abs(after) < 1e-12
    assert pos[0] == pytest.approx([0, 0.0225, 0]) and pos[1] == pytest.approx([0, -0.0075, 0])
    assert largest == pytest.approx(0.0225)


def test_fixed_bodies_stay_and_shallow_rows_do_not_sink():
    # 0 free on 1 (not free: static or held by the world), 2 free on 0 with a shallow row
    pos, (_, after, _, _) = _project([1.0, 1.0, 1.0], [True, False, True],
                                     [[0, 1], [2, 0]], [[0, 1, 0], [0, 1, 0]],
                                     [0.02, 0.5 * SPLIT_DEPTH])
    assert pos[1] == pytest.approx([0, 0, 0])
    assert pos[0] == pytest.approx([0, 0.02, 0])
    assert pos[2][1] == pytest.approx(0.02)          # carried up, its row no deeper
    assert after == pytest.approx(0.5 * SPLIT_DEPTH)


def test_jointed_bodies_move_as_one_group():
    # bodies 0-1 joined, 2 joined to the world, 3 static, 4 alone
    static = np.array([False, False, False, True, False])
    inv_mass = np.array([1.0, 0.5, 1.0, 0.0, 0.25])
    group, ginv, free = depth_projection.joint_groups(
        5, static, inv_mass, np.array([[0, 1], [-1, 2]]), np.array([True, True]))
    assert group[0] == group[1] and len(set(group.tolist())) == 4
    assert ginv[group[0]] == pytest.approx(1 / 3) and free[group[0]]
    assert not free[group[2]] and not free[group[3]] and free[group[4]]
    # a stone pressed into the ground by the body of a (jointed) car comes out: the car's
    # group rises with it
    pos = np.zeros((5, 3))
    depth_projection.project(pos, group, ginv, free, np.array([[4, 3], [0, 4]]),
                             np.array([[0, 1.0, 0], [0, 1.0, 0]]), np.array([0.02, 0.0]),
                             1e-9, 200, np.empty(2), np.empty((4, 3)),
                             np.empty(4, dtype=np.bool_))
    assert pos[4, 1] == pytest.approx(0.02)
    assert pos[0, 1] == pytest.approx(0.02) and pos[1, 1] == pytest.approx(0.02)


def test_nothing_moves_when_no_row_is_deeper_than_split_depth():
    pos, (before, after, largest, visits) = _project([1.0, 1.0], [True, True], [[0, 1]],
                                                     [[0, 1, 0]], [0.9 * SPLIT_DEPTH])
    assert visits == 0 and largest == 0.0 and not pos.any()


def test_two_overlapping_boxes_part_without_being_thrown():
    """A box created 4 cm inside another: the step leaves it on top, deeper by at most
    SPLIT_DEPTH, and with no more speed than gravity gives in a step (pushed out through
    the velocities it would leave at 0.04 m / h = 2.4 m/s)."""
    box = {"shape": {"type": "box", "size": [0.2, 0.2, 0.2]}, "mass": 1.0}
    w = scene_to_world(doc([ground(), {"name": "low", "position": [0, 0.1, 0], **box},
                            {"name": "high", "position": [0.02, 0.26, 0], **box}],
                           {"h": 1 / 60}))
    w.step()
    assert w.stats[S.T_DEPTH] <= SPLIT_DEPTH
    w.step()
    assert w.collision.C.depth.max() <= SPLIT_DEPTH
    assert np.abs(w.B.vel[1:]).max() < 2 * 9.81 / 60
    assert w.B.pos[2, 1] - w.B.pos[1, 1] == pytest.approx(0.2, abs=SPLIT_DEPTH)


def test_the_next_step_takes_the_projections_contacts_only_if_nothing_changed():
    box = {"shape": {"type": "box", "size": [0.2, 0.2, 0.2]}, "mass": 1.0}
    w = scene_to_world(doc([ground(), {"name": "low", "position": [0, 0.1, 0], **box},
                            {"name": "high", "position": [0.02, 0.26, 0],
                             "velocity": [1, 0, 0], **box}], {"h": 1 / 60}))
    w.step()
    cs = w.collision._pending[0]
    C, _ = w.collision.detect(w.settings.h)
    assert w.collision.last is cs                     # taken
    fresh = w.collision.detector.detect(w.B.pos, w.B.rot, w.B.vel, w.B.omega, w.B.static,
                                        w.settings.h, spare=True)
    assert np.allclose(np.sort(cs.depth), np.sort(fresh.depth), atol=1e-9)
    w.step()
    cs = w.collision._pending[0]
    w.B.vel[2, 0] += 0.1                              # changed between the steps
    w.collision.detect(w.settings.h)
    assert w.collision.last is not cs


def test_a_jam_stops_on_the_stall_rule_not_the_cap():
    """Body 0 between two fixed bodies: 1.5 mm into body 1 (to be pushed out) and 0.5 mm
    into body 2 on the other side (may not sink further). No shift meets both, so every
    sweep corrects and the change never falls below eps: the loop used to run to its cap
    (200 sweeps here). The residual stops falling and no row is deeper than ROUND_DEPTH, so
    it stops after a few STALL_SWEEPS, having taken the deep row as far as the jam lets it.
    (Deeper than ROUND_DEPTH it goes on to the cap: test below.)"""
    pos, (before, after, largest, visits) = _project(
        [1.0, 0.0, 0.0], [True, False, False], [[0, 1], [0, 2]], [[0, 1, 0], [0, -1, 0]],
        [0.0015, 0.0005])
    assert before == 0.0015
    assert visits <= 2 * 3 * depth_projection.STALL_SWEEPS       # (the cap: 400 visits)
    assert after <= 0.0015 + 1e-12                               # nothing got deeper
    assert np.isfinite(pos).all()
    pos, (before, after, largest, visits) = _project(            # 5 mm: to the cap
        [1.0, 0.0, 0.0], [True, False, False], [[0, 1], [0, 2]], [[0, 1, 0], [0, -1, 0]],
        [0.005, 0.0005])
    assert visits == 2 * 200


def test_a_column_is_pushed_up_and_nothing_sinks_deeper():
    """A column of 12 unit boxes on a fixed floor, each 2 mm into the one below: Gauss-Seidel
    pushes the depth up the column a little each sweep (it needs about 1 000 sweeps to take
    it all out; the projection leaves what it does not take to the next step). The top of
    the column moves up, no box moves down or passes the one below, and no row ends deeper
    than it was."""
    n = 13
    inv = [0.0] + [1.0] * (n - 1)
    free = [False] + [True] * (n - 1)
    body = [[i + 1, i] for i in range(n - 1)]
    pos, (before, after, largest, visits) = _project(inv, free, body, [[0, 1, 0]] * (n - 1),
                                                     [0.002] * (n - 1))
    assert before == 0.002 and after <= 0.002 + 1e-15
    assert visits > (n - 1) * depth_projection.STALL_SWEEPS     # (not stopped at once)
    y = pos[:, 1]
    assert y[0] == 0.0 and y[-1] > 0.002 and (y >= 0.0).all() and (np.diff(y) >= -1e-15).all()
