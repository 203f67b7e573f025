"""The generic joints' (hinge, slider, ...) linearised look-ahead in the iterative loop
(impulses.look_ahead_linear): the model against the exact look-ahead over step sizes and
spin rates, and the loop ending on the exact look-ahead, so every joint holds eps_pos at the
end of every step, over step sizes and scenes."""
import os

import numpy as np
import pytest
from conftest import slow_except

from impulse.engine import state as S
from impulse.engine.impulses import LINEAR_SPIN, LINEAR_TURN, look_ahead_linear
from impulse.engine.scene import load_scene

SCENES = os.path.join(os.path.dirname(__file__), "..", "scenes")
ORDER = 4
GRAVITY = np.array([0.0, 0.0, -9.81])


def _body(omega, seed):
    """One free body with an asymmetric inertia, turned at random, spinning at omega."""
    rng = np.random.default_rng(seed)
    rot, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    inertia = np.array([0.3, 1.1, 2.0])
    iw = rot @ np.diag(inertia) @ rot.T
    aw = rot @ np.diag(1.0 / inertia) @ rot.T
    axis = rng.normal(size=3)
    return dict(static=np.zeros(1, dtype=np.bool_), pos=rng.normal(size=(1, 3)),
                vel=rng.normal(size=(1, 3)), omega=(omega * axis / np.linalg.norm(axis))[None],
                inertia_w=iw[None], inv_inertia_w=aw[None])


def _look(body, h, base, pred_ok):
    """look_ahead_linear for body 0 with fresh caches: (linearised?, pred_pos, pred_rot)."""
    pred_pos, pred_rot = np.zeros((1, 3)), np.zeros((1, 3, 3))
    used = look_ahead_linear(0, body["static"], pred_ok, body["pos"], body["vel"], body["omega"],
                             body["inertia_w"], body["inv_inertia_w"], pred_pos,
                             np.zeros((1, ORDER + 1, 3)), pred_rot, h, ORDER, GRAVITY,
                             np.zeros((ORDER + 1, 3, 3)), np.zeros((ORDER + 7, 3, 3)), base)
    return used, pred_pos[0], pred_rot[0]


def _base():
    return (np.zeros((1, 3)), np.zeros((1, 3, 3)), np.zeros((1, 3)), np.zeros((1, 3)),
            np.zeros(1, dtype=np.bool_))


@pytest.mark.parametrize("h", [1 / 30, 1 / 60, 0.005, 0.001])
@pytest.mark.parametrize("spin", [0.5, 5.0, 20.0])
def test_linearised_look_ahead_follows_the_exact_one(h, spin):
    body = _body(spin, seed=int(spin * 10 + 1 / h))
    base = _base()
    # no base yet: the exact look-ahead, kept as the base
    used, pos0, rot0 = _look(body, h, base, np.zeros(1, dtype=np.bool_))
    assert not used and base[4][0]
    assert np.array_equal(base[0][0], pos0) and np.array_equal(base[1][0], rot0)
    # a base that turns more than LINEAR_SPIN over the step is not linearised from
    linear = h * spin <= LINEAR_SPIN
    # no change since the base: the base itself
    used, pos1, rot1 = _look(body, h, base, np.zeros(1, dtype=np.bool_))
    assert used == linear
    assert np.allclose(pos1, pos0, atol=1e-15) and np.allclose(rot1, rot0, atol=1e-15)
    rng = np.random.default_rng(7)
    dv, dw = rng.normal(size=3), rng.normal(size=3)
    errors = []
    for scale in (1e-2, 5e-3, 2.5e-3):
        base_now = tuple(a.copy() for a in base)
        changed = dict(body, vel=body["vel"] + scale * dv, omega=body["omega"] + scale * dw)
        used, pos_lin, rot_lin = _look(changed, h, base_now, np.zeros(1, dtype=np.bool_))
        _, pos_ex, rot_ex = _look(changed, h, _base(), np.zeros(1, dtype=np.bool_))
        assert used == linear
        if not linear:      # exact
            assert np.array_equal(rot_lin, rot_ex) and np.array_equal(pos_lin, pos_ex)
            continue
        # the centre's path is linear in v: exact up to rounding
        assert np.allclose(pos_lin, pos_ex, rtol=0, atol=1e-14 * (1 + abs(pos_ex).max()))
        moved = np.abs(rot_ex - rot0).max()
        err = np.abs(rot_lin - rot_ex).max()
        # the model leaves out how the change alters the spin's own change over the step
        # (the gyroscopic terms, of order h |w0| relative to the change; 0.15-2 h |w0| over
        # this grid) and terms of order |u|^2
        assert err <= 2.5 * h * spin * moved + 1e-15, (scale, err, moved)
        errors.append(err)
    # proportional to the change: a quarter of it, a quarter of the error
    assert not linear or errors[2] <= 0.3 * errors[0]


def _generic_scenes():
    """The bundled scenes with hinges, sliders, universal joints and rails, but servo_arm
    (its holding servos converge on Gauss-Seidel rows only very slowly: a tree scene, as
    conftest.TREE_SCENES says) and the contact scenes (tests/test_engine_contacts.py)."""
    return ["slider_crank.json", "hinge_chain.json", "universal_shaft.json", "motors.json",
            "rail.json"]


@pytest.mark.parametrize("name,h", slow_except(
    [(n, h) for n in _generic_scenes() for h in (1 / 30, 1 / 60, 0.005, 0.001)],
    ("slider_crank.json", 1 / 60), ("hinge_chain.json", 0.005), ("universal_shaft.json", 1 / 30)))
def test_iterative_loop_ends_on_the_exact_look_ahead(name, h):
    """With the visits on the linearised look-ahead, every joint is still within eps_pos at
    the end of every step (the loop takes the exact look-ahead and a whole cycle without a
    correction before it stops), with no step halved."""
    w = load_scene(os.path.join(SCENES, name))
    w.settings.solver = "iterative"
    w.settings.h = h
    r = w.run(int(round(0.5 / h)))
    assert np.isfinite(r.pos).all()
    eps = w.settings.eps_pos
    st = r.stats
    assert st[:, S.T_HALVINGS].sum() == 0
    met = st[:, S.T_BUDGET_HIT] == 0
    assert st[met, S.T_RESIDUAL].max() <= eps * (1 + 1e-9)


@pytest.mark.parametrize("h", [1 / 60, 0.001])
def test_a_large_change_reads_the_exact_look_ahead_and_rebases(h):
    """Past LINEAR_TURN (|u| of the further turn since the base) the model's |u|^3 error
    would show: the exact look-ahead is read instead and becomes the new base."""
    body = _body(1.0, seed=3)
    base = _base()
    _look(body, h, base, np.zeros(1, dtype=np.bool_))
    dw = np.array([0.0, 0.0, 3.0 * LINEAR_TURN / h])           # |u| about 3 LINEAR_TURN
    changed = dict(body, omega=body["omega"] + dw)
    used, pos, rot = _look(changed, h, base, np.zeros(1, dtype=np.bool_))
    _, pos_ex, rot_ex = _look(changed, h, _base(), np.zeros(1, dtype=np.bool_))
    assert not used
    assert np.array_equal(rot, rot_ex) and np.array_equal(pos, pos_ex)
    assert np.array_equal(base[1][0], rot_ex) and np.array_equal(base[3][0], changed["omega"][0])
    # just inside the limit: linearised
    small = dict(changed, omega=changed["omega"] + 0.5 * LINEAR_TURN / h * np.array([1.0, 0, 0]))
    assert _look(small, h, base, np.zeros(1, dtype=np.bool_))[0]
