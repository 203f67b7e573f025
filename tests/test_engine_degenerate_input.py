"""Degenerate input is refused with one line naming the JSON path (issue 22, item 3): a
moving point mass (inertia [0, 0, 0]) and motors, limits or springs on joints that have no
coordinate for them to act on. A thin rod (one zero principal moment) is a valid body."""
import json

import numpy as np
import pytest

from impulse.engine.scene import SceneError, scene_to_world
from tests.scene_docs import scene_doc
from tests.test_engine_robustness import impulse


def pendulum(joint=None, inertia=(0.01, 0.01, 0.01)):
    bob = {"name": "bob", "mass": 1.0, "inertia": list(inertia), "position": [1, 0, 0]}
    j = {"name": "pivot", "type": "ball", "bodies": ["world", "bob"], "anchor": [0, 0, 0]}
    j.update(joint or {})
    return scene_doc([bob], [j], {"h": 0.01})


@pytest.mark.parametrize("inertia", [[0, 0, 0], [0.0, 0.0, 0.0]])
def test_a_moving_point_mass_is_refused(inertia):
    with pytest.raises(SceneError, match=r"\$\.bodies\[0\]\.inertia: a moving body needs a "
                                         r"positive principal moment"):
        scene_to_world(pendulum(inertia=inertia))


def test_a_fixed_body_may_have_no_inertia():
    doc = pendulum()
    doc["bodies"].append({"name": "post", "fixed": True, "mass": 1.0, "inertia": [0, 0, 0]})
    scene_to_world(doc)


@pytest.mark.parametrize("moment", [1 / 12, 0.5, 3.0])
def test_a_thin_rod_swings_and_keeps_its_spin_about_the_rod(moment):
    """One zero moment (about the rod, along x to the pivot): the rod's own spin is neither
    driven nor changed; it swings as a pendulum (the report's 8-chain is made of such rods)."""
    w = scene_to_world(pendulum(inertia=[0.0, moment, moment]))
    w.run(50)
    assert np.isfinite(w.B.pos).all() and w.B.pos[0, 1] < -0.05     # it fell and swings
    assert np.linalg.norm(w.B.pos[0]) == pytest.approx(1.0, abs=1e-4)     # on its joint
    assert w.B.omega[0] @ w.B.rot[0][:, 0] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("jtype, key, value", [
    ("ball", "motor", {"mode": "velocity", "target": 1.0}),
    ("ball", "motor", {"mode": "position", "target": 0.5, "max_force": 3}),
    ("ball", "limits", {"lower": -1, "upper": 1}),
    ("ball", "spring", {"stiffness": 2.0}),
    ("fixed", "motor", {"mode": "velocity", "target": 1.0}),
    ("hinge", "limits2", {"lower": -1, "upper": 1}),
    ("slider", "limits2", {"lower": -1, "upper": 1}),
])
def test_a_joint_part_without_a_coordinate_is_refused(jtype, key, value):
    with pytest.raises(SceneError) as e:
        scene_to_world(pendulum({"type": jtype, key: value}))
    (where, words), = e.value.problems
    assert where == "$.joints[0]" and words.startswith(f"{key} needs a") \
        and f"a {jtype} joint has" in words


@pytest.mark.parametrize("jtype, key", [("hinge", "motor"), ("slider", "limits"),
                                        ("universal", "limits2"), ("cylindrical", "limits2")])
def test_joints_with_the_coordinate_accept_it(jtype, key):
    value = {"mode": "velocity", "target": 1.0} if key == "motor" else {"lower": -1, "upper": 1}
    scene_to_world(pendulum({"type": jtype, "axis": [0, 0, 1], key: value}))


def test_the_command_line_says_it_in_one_line_with_exit_2(tmp_path):
    p = tmp_path / "ballmotor.json"
    p.write_text(json.dumps(pendulum({"motor": {"mode": "velocity", "target": 1.0}})))
    r = impulse("sim", str(p), "--duration", "0.01")
    assert r.returncode == 2
    line, = r.stderr.strip().splitlines()
    assert line.startswith(f"{p}: $.joints[0]") and "a ball joint has none" in line
    p.write_text(json.dumps(pendulum(inertia=[0, 0, 0])))
    r = impulse("sim", str(p), "--duration", "0.01")
    assert r.returncode == 2
    line, = r.stderr.strip().splitlines()
    assert line.startswith(f"{p}: $.bodies[0].inertia")
