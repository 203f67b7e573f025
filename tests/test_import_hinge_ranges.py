"""Imported hinge ranges beyond +-pi (issue 23): kept as they are, several turns included
(they were cut at +-160 degrees, and a range of a full turn or more dropped, while our angles
wrapped at +-pi); a link turning into such a stop stops there, as MuJoCo's does."""
import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from impulse.engine import scene_to_world  # noqa: E402
from impulse.engine.formats.convert import model_to_scene  # noqa: E402


def arm(h, lower, upper, ref=0.0):
    """A 1 kg link 0.3 m out on a hinge about y, no gravity, range [lower, upper] (rad)."""
    return mujoco.MjModel.from_xml_string(f"""<mujoco><compiler angle="radian"/>
      <option gravity="0 0 0" timestep="{h}"/>
      <worldbody><body name="link" pos="0 0 1">
        <joint name="j" type="hinge" axis="0 1 0" range="{lower} {upper}" limited="true"
               ref="{ref}"/>
        <inertial pos="0.3 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
      </body></worldbody></mujoco>""")


def mujoco_angles(m, speed, seconds):
    d = mujoco.MjData(m)
    d.qvel[0] = speed
    out = [d.qpos[0]]
    for _ in range(int(round(seconds / m.opt.timestep))):
        mujoco.mj_step(m, d)
        out.append(d.qpos[0])
    return np.array(out)


def our_angles(m, speed, seconds):
    imported = model_to_scene(m, "arm.xml", "mjcf", qvel=np.array([speed]))
    world = scene_to_world(imported.doc, "arm")
    out = [0.0]
    for _ in range(int(round(seconds / m.opt.timestep))):
        world.step()
        out.append(world.joint_coordinates("j")[0])
    return np.array(out) + m.qpos0[0], imported


@pytest.mark.parametrize("h", [0.001, 0.01, 1 / 60])
@pytest.mark.parametrize("lower, upper, speed, ref", [
    (-4.0, 4.5, 4.0, 0.0),        # past +-pi (cut at +-2.79 before)
    (-4.0, 4.5, -4.0, 0.0),
    (-7.5, 7.5, 5.0, 0.0),        # more than a full turn (dropped before)
    (-2.0, 6.0, 3.0, 1.0),        # a reference pose: our 0 is qpos0
])
def test_a_range_past_half_a_turn_is_kept_and_stops_the_link_where_mujocos_stops(
        h, lower, upper, speed, ref):
    m = arm(h, lower, upper, ref)
    stop = upper if speed > 0 else lower
    seconds = abs(stop - m.qpos0[0]) / abs(speed) + 0.5
    ours, imported = our_angles(m, speed, seconds)
    theirs = mujoco_angles(m, speed, seconds)
    limits = imported.doc["joints"][0]["limits"]
    assert limits == pytest.approx({"lower": lower - ref, "upper": upper - ref})
    assert not imported.unmapped.lines()
    # turning freely before the stop: the same angles, to our integrator's O((w h)^2)
    # (a body turning about a pivot runs (w h)^2 / 6.7 fast: 2.4e-4 at w h = 0.04)
    free = np.arange(len(theirs)) < np.argmax(np.abs(theirs - stop) < 0.1)
    drift = 0.2 * (speed * h) ** 2 * abs(stop - m.qpos0[0]) + 1e-6
    assert np.abs(ours[free] - theirs[free]).max() < drift
    assert abs(ours[-1] - stop) < 5e-3                 # on the stop (ours: a hard limit)
    assert np.sign(speed) * (ours - stop).max() < 2e-3  # never through it
    # MuJoCo's soft limit turns the link back at the same place (and lets it rebound)
    turn = theirs[np.argmax(np.sign(speed) * theirs)]
    assert abs(turn - stop) < 0.05 + abs(speed) * h     # (into it by up to a step)
