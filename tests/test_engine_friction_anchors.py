"""Friction anchors (engine/contacts/system.py `_pack`): a sticking contact keeps
the material points where it began to stick, and the position stage's friction takes back
the drift between them (the patch's mean drift and its turn about the normal) within the
friction cone; new contacts, curved sides, sliding patches, bodies moved between steps and
drifts beyond STICK_DRIFT_MAX start afresh; drifts within eps_pos are left alone.

The cases below plant a known drift in the anchors of a box resting on the ground (as if it
had crept) and check that the next step takes exactly that back."""
import math

import numpy as np
import pytest

from impulse.engine.contacts import system
from impulse.engine.scene import scene_to_world
from tests.scene_docs import scene_doc

G = 9.81


def resting(h, size, mass, mu=0.6, plate=False, shape=None):
    """A box (or `shape`) at rest on the ground after 0.5 s; sleeping off."""
    body = {"name": "box", "mass": mass,
            "shape": shape or {"type": "box", "size": [size, size, size]},
            "position": [0.3, size / 2 if shape is None else shape.get("radius", size / 2), -0.2],
            "material": {"static_friction": mu, "dynamic_friction": mu}}
    ground = {"name": "ground", "fixed": True, "material": {"static_friction": mu},
              "shape": {"type": "box", "size": [4, 0.2, 4]} if plate else {"type": "plane"}}
    if plate:
        ground["position"] = [0, -0.1, 0]
    w = scene_to_world(scene_doc([ground, body], (), {"h": h, "sleeping": False}))
    while w.time < 0.5 - 1e-9:
        w.step()
    return w


def box_rows(w):
    """The rows of the box's contact patch and, per row, +1 where the box is body A."""
    c = w.collision
    box = w.body_names.index("box")
    rows = np.flatnonzero((c._prev.body_a == box) | (c._prev.body_b == box))
    return rows, np.where(c._prev.body_a[rows] == box, 1.0, -1.0)


def plant(w, shift_of_row):
    """Move the box's anchor of each row by shift_of_row(point in the box's frame) (world
    vector): as if the box had crept by minus that since its contact began to stick."""
    c = w.collision
    box = w.body_names.index("box")
    rot = w.B.rot[box]
    rows, side = box_rows(w)
    assert len(rows) == 4 and c._prev_hold[rows].all()
    for r, s in zip(rows, side, strict=True):
        k = 0 if s > 0 else 1
        c._prev_stick[r, k] += rot.T @ shift_of_row(rot @ c._prev_stick[r, k])


@pytest.mark.parametrize("h", [1 / 30, 1 / 60, 1 / 90, 1 / 120])
@pytest.mark.parametrize("size, mass, mu, drift", [(0.2, 1.0, 0.6, [0.3, 0, 0]),
                                                   (0.5, 8.0, 0.4, [0, 0, -0.5]),
                                                   (0.1, 0.3, 0.9, [0.35, 0, 0.35])])
def test_a_sticking_box_is_taken_back_by_the_drift_of_its_anchors(h, size, mass, mu, drift):
    """Drifts up to what the cone can take back within one step, mu g h^2 / 2 (the
    position stage carries half the weight's impulse, the velocity correction the other
    half; the drift is given in that unit): the box moves back by the drift less eps_pos
    (left alone, as a joint's gap). (At
    h = 0.001 that reach is 3 um, within eps_pos, which anchors leave alone.) Up to half
    the reach the box is at rest again at t + h; beyond it (0.7 of it, planted) the
    velocity correction stops short and the box slides on at 1-3 cm/s, its anchors then
    starting afresh. A creeping contact's drift per step is a small part of the reach."""
    w = resting(h, size, mass, mu=mu)
    p0 = w.B.pos[1].copy()
    drift = np.array(drift) * mu * G * h * h / 2
    drift *= min(1.0, 0.9 * system.STICK_DRIFT_MAX / np.linalg.norm(drift))   # (anchors' limit)
    assert np.linalg.norm(drift) > 1e-5
    plant(w, lambda _: drift)
    w.step()
    size = np.linalg.norm(drift)                         # (eps_pos of it is left alone)
    assert w.B.pos[1] - p0 == pytest.approx(-drift * (1 - w.settings.eps_pos / size), abs=2e-6)
    assert np.linalg.norm(w.B.vel[1]) < 1e-3            # at rest again at t + h
    p1 = w.B.pos[1].copy()
    for _ in range(10):                                  # and it stays there
        w.step()
    assert np.linalg.norm(w.B.pos[1] - p1) < 1e-6


@pytest.mark.parametrize("h", [1 / 30, 1 / 60, 1 / 120])
@pytest.mark.parametrize("size, turn", [(0.2, 2e-3), (0.5, -5e-4)])
def test_a_sticking_box_is_turned_back_by_the_turn_of_its_anchors(h, size, turn):
    """Anchors turned about the normal (up) by `turn` about the patch centre: the box
    turns back by -turn about the vertical."""
    w = resting(h, size, 2.0)
    centre = w.B.pos[1] * np.array([1, 0, 1])
    up = np.array([0.0, 1.0, 0.0])
    yaw0 = math.atan2(w.B.rot[1][0, 2], w.B.rot[1][2, 2])
    plant(w, lambda p: turn * np.cross(up, p + w.B.pos[1] - centre))
    w.step()
    yaw = math.atan2(w.B.rot[1][0, 2], w.B.rot[1][2, 2])
    corner = abs(turn) * size / math.sqrt(2)           # each corner's drift; eps_pos of it
    assert yaw - yaw0 == pytest.approx(-turn * (1 - w.settings.eps_pos / corner), rel=1e-3)


@pytest.mark.parametrize("h", [1 / 60, 1 / 120])
def test_friction_takes_back_no_more_than_its_cone(h):
    """A drift that would need more than mu N within one step is taken back at the cone
    (mu = 0.05: 0.05 g h^2 / 2 per step at most), and the anchors then start afresh."""
    w = resting(h, 0.2, 1.0, mu=0.05)
    p0 = w.B.pos[1].copy()
    plant(w, lambda _: np.array([1.5e-3, 0, 0]))
    w.step()
    moved = p0[0] - w.B.pos[1, 0]
    assert 0.0 < moved <= 0.05 * G * h * h / 2 * (1 + 1e-6) + 1e-7
    assert not w.collision._prev_hold[box_rows(w)[0]].any()


def test_a_drift_within_eps_pos_or_beyond_the_limit_is_left_alone():
    for drift in (0.5 * 1e-5, 1.5 * system.STICK_DRIFT_MAX):
        w = resting(1 / 60, 0.2, 1.0)
        p0 = w.B.pos[1].copy()
        plant(w, lambda _, d=drift: np.array([d, 0, 0]))
        w.step()
        assert np.linalg.norm(w.B.pos[1] - p0) < 1e-7


def test_a_body_moved_between_steps_is_not_pulled_back():
    """An edit (the Inspector, a script) moves a resting box by 1 mm: it stays there."""
    w = resting(1 / 60, 0.2, 1.0)
    w.B.pos[1, 0] += 1e-3
    p0 = w.B.pos[1].copy()
    for _ in range(10):
        w.step()
    assert np.linalg.norm(w.B.pos[1] - p0) < 1e-7


SIDEWAYS = [math.cos(math.pi / 4), math.sin(math.pi / 4), 0, 0]   # axis y -> z


@pytest.mark.parametrize("shape", [{"type": "sphere", "radius": 0.1},
                                   {"type": "capsule", "radius": 0.05, "length": 0.2,
                                    "orientation": SIDEWAYS}])
def test_curved_sides_have_no_anchors(shape):
    """A rolling body's contact point moves over its surface: no anchor, no drift."""
    w = resting(1 / 60, 0.2, 1.0, shape=shape)
    w.B.vel[1] = [1.0, 0.0, 0.0]
    w.B.omega[1] = [0.0, 0.0, -1.0 / shape["radius"]]
    for _ in range(30):
        w.step()
        assert not w.collision.C.drift.any()


def test_a_row_matched_by_place_only_starts_afresh_but_keeps_its_warm_start():
    """A flipped feature id (collision/persist.py: matched by place) carries the warm start
    but not the anchors, which were another feature's points."""
    w = resting(1 / 60, 0.2, 1.0)
    plant(w, lambda _: np.array([3e-4, 0, 0]))
    rows, _ = box_rows(w)
    w.collision._prev.feature[rows] += 1000          # as if every corner's id flipped
    p0 = w.B.pos[1].copy()
    w.step()
    assert np.linalg.norm(w.B.pos[1] - p0) < 1e-7
    box = w.body_names.index("box")
    C = w.collision.C
    mine = (C.body[:, 0] == box) | (C.body[:, 1] == box)
    assert (C.warm[mine, 0] > 0).all() and not C.drift[mine].any()
