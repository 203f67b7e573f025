"""Ballistic motion (Schmitt sec. 3): the rotation series conserves what it should."""
import numpy as np
import pytest

from impulse.engine import World, load_scene, look_ahead, motion


def free_top(h, order=4, omega=(0.02, 6.0, 0.01)):
    w = World({"h": h, "gravity": [0, 0, 0], "taylor_order": order})
    w.add_body({"name": "top", "shape": {"type": "box", "size": [0.4, 0.2, 0.08]},
                "density": 700, "angular_velocity": list(omega)})
    return w


def invariants(w):
    k, _ = w.energy()
    _, ang = w.momentum()
    return k, ang


@pytest.mark.parametrize("h", [0.01, 0.005])
def test_torque_free_asymmetric_body_conserves_energy_and_momentum(h):
    w = free_top(h)
    k0, l0 = invariants(w)
    w.run(int(round(10.0 / h)))
    k1, l1 = invariants(w)
    # bound stated in README: order-4 series, |w| h = 0.06 -> relative drift below 1e-7 in 10 s
    assert abs(k1 - k0) / k0 < 1e-7
    assert np.linalg.norm(l1 - l0) / np.linalg.norm(l0) < 1e-6


def test_rotation_error_falls_with_the_order_of_the_series():
    drifts = []
    for h in (0.02, 0.01):
        w = free_top(h)
        k0, _ = invariants(w)
        w.run(int(round(5.0 / h)))
        drifts.append(abs(invariants(w)[0] - k0))
    assert drifts[0] / drifts[1] > 16.0  # at least 4th order


def test_higher_taylor_order_is_more_accurate():
    errs = []
    for order in (2, 4, 6):
        w = free_top(0.01, order=order)
        k0, _ = invariants(w)
        w.run(500)
        errs.append(abs(invariants(w)[0] - k0) / k0)
    assert errs[0] > errs[1] > errs[2] or errs[2] < 1e-13


def test_intermediate_axis_spin_flips():
    """Dzhanibekov: spin about the middle axis reverses its body-frame direction."""
    w = free_top(0.005)
    b = 0
    axis_y = []
    for _ in range(400):
        w.run(5)
        axis_y.append(w.body_rot[b][:, 1] @ np.array([0.0, 1.0, 0.0]))
    assert max(axis_y) > 0.9 and min(axis_y) < -0.9


def test_rotation_stays_orthonormal():
    w = free_top(0.01, omega=(3.0, 5.0, 7.0))
    w.run(5000)
    r = w.body_rot[0]
    assert np.abs(r.T @ r - np.eye(3)).max() < 1e-13
    assert np.linalg.det(r) == pytest.approx(1.0, abs=1e-13)


def test_look_ahead_predicts_the_step_of_a_free_body():
    w = World({"h": 0.01})
    w.add_body({"name": "b", "shape": {"type": "box", "size": [0.3, 0.2, 0.1]}, "mass": 2.0,
                "velocity": [1.0, 2.0, 0.5], "angular_velocity": [1.0, -2.0, 3.0]})
    p = w.body_pos[0] + w.body_rot[0] @ np.array([0.1, 0.05, -0.02])
    ahead = look_ahead(w.body_pos[0].copy(), w.body_rot[0].copy(), w.body_vel[0].copy(),
                       w.body_omega[0].copy(), w.B.const.inertia[0], p, [0, -9.81, 0], 0.01)
    w.step()
    after = w.body_pos[0] + w.body_rot[0] @ np.array([0.1, 0.05, -0.02])
    assert np.abs(ahead - after).max() < 1e-14
    assert w.body_pos[0][1] == pytest.approx(2.0 * 0.01 - 0.5 * 9.81 * 1e-4, abs=1e-15)


def test_zero_principal_moments_are_handled():
    """A thin rod (J = 0 about its axis) keeps finite motion; the spin about that axis drops."""
    w = World({"h": 0.01, "gravity": [0, 0, 0]})
    w.add_body({"name": "rod", "mass": 1.0, "inertia": [0.0, 1 / 12, 1 / 12],
                "angular_velocity": [5.0, 1.0, 0.5]})
    w.run(200)
    assert np.isfinite(w.body_rot).all() and np.isfinite(w.body_omega).all()
    k, _ = w.energy()
    assert k == pytest.approx(0.5 / 12 * (1.0 + 0.25), rel=1e-9)


def test_determinism_bit_identical(scene_path):
    runs = []
    for _ in range(2):
        w = load_scene(scene_path("double_pendulum.json"))
        r = w.run(300, record_every=1)
        runs.append((r.pos.copy(), r.rot.copy(), r.vel.copy()))
    for a, b in zip(*runs, strict=True):
        assert np.array_equal(a, b)


def euler_reference(inertia, rot0, omega0, t):
    """Torque-free motion by Euler's equations in the body frame and R' = R [w_b]x,
    integrated to 1e-12 (scipy's DOP853): the exact answer the series must follow."""
    from scipy.integrate import solve_ivp
    j = np.asarray(inertia, float)

    def rhs(_, y):
        r = y[:9].reshape(3, 3)
        wb = y[9:]
        wx = np.array([[0, -wb[2], wb[1]], [wb[2], 0, -wb[0]], [-wb[1], wb[0], 0]])
        dw = np.cross(j * wb, wb) / j
        return np.concatenate([(r @ wx).ravel(), dw])

    y0 = np.concatenate([np.asarray(rot0).ravel(), np.asarray(rot0).T @ omega0])
    y = solve_ivp(rhs, (0.0, t), y0, method="DOP853", rtol=1e-12, atol=1e-12).y[:, -1]
    r = y[:9].reshape(3, 3)
    return r, r @ y[9:]


def angle_between(r1, r2):
    c = (np.trace(r1.T @ r2) - 1.0) / 2.0
    return float(np.arccos(np.clip(c, -1.0, 1.0)))


@pytest.mark.parametrize("h, spin", [(h, spin) for h in (1 / 30, 1 / 60, 1 / 90)
                                     for spin in (30.0, 60.0, 120.0)
                                     if spin * h <= motion.ALIAS_TURN])
@pytest.mark.parametrize("inertia", [(0.02575, 0.05081, 0.02575), (0.01, 0.03, 0.02),
                                     (0.1, 0.1, 0.1)])
def test_fast_turning_bodies_follow_eulers_equations_at_the_viewer_step(h, spin, inertia):
    """A body turning by several radians a step (a top at 60 rad/s turns its axis by 2 rad
    in 1/60 s) takes the series in sub-steps of at most motion.SUBSTEP_ANGLE: after 1 s its
    orientation and angular velocity follow Euler's equations (was: an order-4 series over
    the whole step, 0.1-1 rad off after 1 s and blowing up beyond 2 rad a step). Beyond
    |w| h = ALIAS_TURN (3 rad) a body keeps the single series (motion's module doc)."""
    omega0 = spin * np.array([0.3, 0.9, 0.2]) / np.linalg.norm([0.3, 0.9, 0.2])
    w = World({"h": h, "gravity": [0, 0, 0]})
    w.add_body({"name": "b", "mass": 7.0, "inertia": list(inertia),
                "angular_velocity": list(omega0)})
    steps = int(round(1.0 / h))
    k0, _ = w.energy()
    w.run(steps)
    r_ref, w_ref = euler_reference(inertia, np.eye(3), omega0, steps * h)
    assert angle_between(w.body_rot[0], r_ref) < 3e-3
    assert np.linalg.norm(w.body_omega[0] - w_ref) < 2e-3 * spin
    assert w.energy()[0] == pytest.approx(k0, rel=1e-4)
