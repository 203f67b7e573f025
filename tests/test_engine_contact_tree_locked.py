"""A contact that the joints of a tree lock along its normal (solvers/contact_tree.py).

A wheel on an axle, hung from the world by a steering hinge whose axis is vertical up to a
tilt (an imported racecar's is 3.7e-6 rad off: the rotation's rounding), rests on the
ground. Through the tree the contact point can move along the normal only by the tilt times
the wheel's radius per radian of steering, so n^T K n through the tree is ~(tilt r)^2 / I:
zero for no tilt and 1e-11..1e-8 for these. Sized with that, a 1 mm overlap asked for an
impulse of ~1e5 N s, and the steering body (I = 4e-6) went to NaN on the first step (the
racecar's front wheels did, with the tree solver). Such a contact is held by the joints: it
takes the bodies' own response, as a contact that the tree cannot move at all does, and
nothing flies off.
"""
import numpy as np
import pytest

from impulse.engine.scene import scene_to_world

R = 0.05


def wheel_doc(tilt, h, solver, drop):
    """A steering hinge (axis tilted by `tilt` from vertical, through the wheel's centre) and
    an axle along z; the wheel (a cylinder of radius R) overlaps the ground by `drop`."""
    y = R - drop
    return {"format": "impulse-scene", "version": 1,
            "settings": {"h": h, "solver": solver},
            "bodies": [{"name": "ground", "fixed": True, "shape": {"type": "plane"}},
                       {"name": "steer", "mass": 0.1, "inertia": [4e-6] * 3,
                        "position": [0, y, 0]},
                       {"name": "wheel", "mass": 0.34, "position": [0, y, 0],
                        "shape": {"type": "cylinder", "radius": R, "height": 0.045},
                        "orientation": [np.sqrt(0.5), np.sqrt(0.5), 0, 0]}],
            "joints": [{"name": "steering", "type": "hinge", "bodies": ["world", "steer"],
                        "anchor": [0, y, 0], "axis": [np.sin(tilt), np.cos(tilt), 0.0]},
                       {"name": "axle", "type": "hinge", "bodies": ["steer", "wheel"],
                        "anchor": [0, y, 0], "axis": [0, 0, 1]}]}


@pytest.mark.parametrize("solver", ["tree", "linear", "iterative"])
@pytest.mark.parametrize("tilt", [0.0, 3.67e-6, 1e-4])
@pytest.mark.parametrize("drop", [0.0, 1e-3])
def test_a_wheel_that_its_joints_hold_on_the_ground_stays_put(solver, tilt, drop):
    for h in (1 / 30, 1 / 60, 0.01, 0.002):
        w = scene_to_world(wheel_doc(tilt, h, solver, drop))
        start = w.B.pos.copy()
        for _ in range(30):
            w.step()
        where = f"{solver} tilt {tilt} drop {drop} h {h:.4f}"
        assert not w.problems, (where, w.problems)
        assert np.isfinite(w.B.pos).all() and np.isfinite(w.B.omega).all(), where
        assert np.abs(w.B.vel).max() < 1e-3 and np.abs(w.B.omega).max() < 1e-2, where
        assert np.abs(w.B.pos - start).max() < 1e-4, where


@pytest.mark.parametrize("solver", ["tree", "linear", "iterative"])
def test_the_imported_racecar_stands_on_the_ground(solver):
    """PyBullet's racecar, imported with a ground: its front wheels hang from steering
    hinges; no body may go NaN, and every wheel stays on the ground."""
    pytest.importorskip("mujoco")
    from impulse.engine.formats import convert_file

    from import_corpus import corpus_path
    doc = convert_file(corpus_path("racecar"), ground=True).doc
    doc["settings"]["solver"] = solver
    w = scene_to_world(doc)
    wheels = [i for i, name in enumerate(w.body_names) if name.endswith("_wheel")]
    start = w.B.pos[wheels].copy()
    for _ in range(100):
        w.step()
    assert len(wheels) == 4 and not w.problems, w.problems
    assert np.abs(w.B.pos[wheels] - start).max() < 1e-4
    assert np.abs(w.B.vel).max() < 1e-3
