"""Every corpus model falls like MuJoCo's own simulation of the same file (tests/import_corpus.py
says what is compared): 1 s at h = 0.001, MuJoCo with RK4, we with the tree solver; joint
angles and offsets, and body rotations, within 1e-3 rad (m).

With plain stepping the fastest-swinging arm misses 1e-3 at h = 0.001 (xarm6: 2.5e-3): the
difference is our integrator's second-order error, not the import, since it quarters with
each halving of h (test_remaining_difference_is_second_order: 4 +- 0.5 per halving), as it
would not if the imported model differed from MuJoCo's. With Schmitt sec. 8's extrapolation
(settings.extrapolate, third order) every model is within 1e-3, xarm6 at 1.4e-6."""
import pytest

from import_corpus import CORPUS, compare_fall

TOL = 1e-3
TOL_AT_H = {"xarm6": 4e-3}                # second order: see the module's doc
FAST = ("kuka_iiwa", "four_bar", "a1")    # the fast lane's share; the rest are slow


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in FAST else pytest.mark.slow)
                                  for n in CORPUS])
def test_fall_matches_mujoco(name):
    r = compare_fall(name)
    r.pop("doc")
    tol = TOL_AT_H.get(name, TOL)
    assert r["bodies"] > 0 and r["joints"] > 0
    assert r["moved"] > 0.05, r                # the joints did move
    assert r["joint_error"] < tol, r
    assert r["rotation_error"] < tol, r


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in FAST else pytest.mark.slow)
                                  for n in CORPUS])
def test_fall_matches_mujoco_within_1e3_with_extrapolation(name):
    r = compare_fall(name, extrapolate=True)
    r.pop("doc")
    tol = TOL
    assert r["bodies"] > 0 and r["joints"] > 0
    assert r["moved"] > 0.05, r                # the joints did move
    assert r["joint_error"] < tol, r
    assert r["rotation_error"] < tol, r


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TOL_AT_H))
def test_remaining_difference_is_second_order(name):
    coarse = compare_fall(name, h=1e-3)["joint_error"]
    fine = compare_fall(name, h=5e-4)["joint_error"]
    assert 3.5 < coarse / fine < 4.5, (coarse, fine)
    assert fine < TOL * 1.2
