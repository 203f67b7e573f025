"""Shapes and contacts by stable handles (engine/world_shapes.py, handles.ShapeId and
ContactId): they survive other objects' removal, go stale with their own, and a resting
contact keeps its handle from step to step."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from impulse.engine import StaleHandle, World
from impulse.engine.definitions import BodyDef, ShapeDef
from impulse.engine.handles import ContactId, ShapeId

G = 9.81


def compound_world():
    w = World({"h": 1 / 60, "sleeping": False})
    w.add_body(BodyDef("ground", shape=ShapeDef.plane(), fixed=True))
    w.add_body(BodyDef("first", shape=ShapeDef.sphere(0.1), mass=1.0, position=[5, 1, 0]))
    q = Rotation.from_euler("z", 30, degrees=True).as_quat(scalar_first=True).tolist()
    w.add_body(BodyDef("dumbbell", shape=ShapeDef.sphere(0.1, position=[-0.3, 0, 0]),
                       shapes=[ShapeDef.sphere(0.1, position=[0.3, 0, 0]),
                               ShapeDef.box([0.6, 0.05, 0.05])],
                       density=1000.0, position=[0.0, 2.0, 0.0], orientation=q))
    return w


def test_shape_handles_name_each_shape_and_its_pose():
    w = compound_world()
    ids = w.shape_ids("dumbbell")
    assert [w.shape_def(s).type for s in ids] == ["sphere", "sphere", "box"]
    assert all(isinstance(s, ShapeId) and w.shape_owner(s) == w.body_id("dumbbell")
               for s in ids)
    R = Rotation.from_euler("z", 30, degrees=True).as_matrix()
    for s, local in zip(ids, ([-0.3, 0, 0], [0.3, 0, 0], [0, 0, 0]), strict=True):
        pos, rot = w.shape_pose(s)
        assert np.allclose(pos, [0, 2, 0] + R @ local, atol=1e-12)
        assert np.allclose(rot, R, atol=1e-12)
    for _ in range(10):                                     # it falls; the poses follow
        w.step()
    pos, _ = w.shape_pose(ids[2])
    assert pos[1] == pytest.approx(2.0 - 0.5 * G * w.time ** 2, abs=2e-3)


def test_shape_handles_survive_other_removals_and_go_stale_with_their_own():
    w = compound_world()
    ids = w.shape_ids("dumbbell")
    w.remove_body("first")                                  # the dumbbell's index moves
    assert w.shape_def(ids[1]).position == [0.3, 0, 0]
    w.edit_body("dumbbell", {"color": [1, 0, 0]})           # not its shapes: still valid
    assert w.shape_def(ids[0]).radius == 0.1
    w.edit_body("dumbbell", {"shapes": None})               # its shape list replaced
    with pytest.raises(StaleHandle):
        w.shape_def(ids[1])
    assert len(w.shape_ids("dumbbell")) == 1
    fresh = w.shape_ids("dumbbell")[0]
    removal = w.remove_body("dumbbell")
    with pytest.raises(StaleHandle):
        w.shape_pose(fresh)
    w.restore_body(removal)
    with pytest.raises(StaleHandle):                        # a new body handle, new shapes
        w.shape_pose(fresh)


@pytest.mark.parametrize("radius", [0.05, 0.1, 0.2])
def test_editing_one_shape_keeps_the_handles_and_the_mass_follows(radius):
    w = World()
    w.add_body(BodyDef("ball", shape=ShapeDef.sphere(0.1), density=1000.0))
    s, = w.shape_ids("ball")
    w.edit_shape(s, {"radius": radius})
    assert w.shape_def(s).radius == radius
    assert w.body_mass("ball") == pytest.approx(1000.0 * 4 / 3 * math.pi * radius ** 3)
    w.edit_shape(s, ShapeDef.box([radius, radius, radius]))     # a whole definition
    assert w.shape_def(s) == ShapeDef.box([radius, radius, radius])
    assert w.body_mass("ball") == pytest.approx(1000.0 * radius ** 3)


@pytest.mark.parametrize("mass, h", [(1.0, 1 / 60), (5.0, 1 / 120), (0.2, 1 / 30)])
def test_a_resting_contact_keeps_its_handle_and_reports_the_weight(mass, h):
    w = World({"h": h, "sleeping": False})
    w.add_body(BodyDef("ground", shape=ShapeDef.plane(), fixed=True))
    w.add_body(BodyDef("crate", shape=ShapeDef.box([0.4, 0.4, 0.4]), mass=mass,
                       position=[0, 0.2, 0]))
    for _ in range(30):
        w.step()
    ids = w.contact_ids()
    assert len(ids) == 4 and all(isinstance(c, ContactId) for c in ids)
    infos = [w.contact(c) for c in ids]
    crate, ground = w.body_id("crate"), w.body_id("ground")
    assert all({i.body_a, i.body_b} == {crate, ground} for i in infos)
    assert all(abs(abs(i.normal[1]) - 1.0) < 1e-9 for i in infos)
    assert all(abs(i.point[1]) < 1e-3 for i in infos)
    assert sum(i.impulse for i in infos) == pytest.approx(mass * G * h, rel=1e-3)
    for _ in range(5):                                      # the same contacts, the same ids
        w.step()
        assert set(w.contact_ids()) == set(ids)
    w.set_body_motion("crate", {"position": [0, 3, 0]})    # lifted away
    w.step()
    assert w.contact_ids() == []
    with pytest.raises(StaleHandle):
        w.contact(ids[0])
