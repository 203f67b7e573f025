"""The import tests' corpus (models shipped with pybullet_data and ogbench, and tests/models/) and
the comparison of an unactuated fall with MuJoCo's own simulation of the same compiled model.

What is compared: both sides start from the model's reference pose (qpos0) with every
joint turned a little (start_pose: a model built upright, like an arm, stands in an
unstable equilibrium where any rounding grows exponentially; turned, it falls) and every
joint moving (start_velocity: wheels and fingers, which gravity does not move) and fall
under gravity for `seconds` with contacts, actuators, joint limits, springs, damping,
armature and friction loss switched off in the MjModel, which both sides then use (our side
converts that same model). MuJoCo integrates with RK4 at h; we step the tree solver at h with
tight tolerances. A model with loop closures (connect, weld) keeps them on both sides: its start
is first moved onto the closed loops (close_loops), and MuJoCo's run, with its closures
stiffened, is at LOOP_REFERENCE_H. At the end we compare
- every hinge's angle and every slider's offset: ours (World.joint_coordinates) against
  MuJoCo's qpos - qpos0, and
- every body's rotation since the start (ours against MuJoCo's, of the body that carries it),
  as the angle of the difference: this covers ball and universal joints too.
Floating bases (a free joint) are pinned on both sides (the free joint is removed with
MjSpec), since a free fall without contacts moves no joint.
"""
import os

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
pybullet_data = pytest.importorskip("pybullet_data")

from impulse.engine.bench.imports import package_model  # noqa: E402
from impulse.engine.formats.convert import model_to_scene  # noqa: E402
from impulse.engine.formats.frames import UP  # noqa: E402
from impulse.engine.formats.load import load_model  # noqa: E402

DATA = pybullet_data.getDataPath()
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")


# name: (path, kind of model)
CORPUS = {
    "kuka_iiwa": (os.path.join(DATA, "kuka_iiwa/model.urdf"), "arm, 7 joints, meshes"),
    "panda": (os.path.join(DATA, "franka_panda/panda.urdf"), "arm, 7 joints + 2 fingers"),
    "xarm6": (os.path.join(DATA, "xarm/xarm6_robot.urdf"), "arm, 6 joints, meshes"),
    "a1": (os.path.join(DATA, "a1/a1.urdf"), "quadruped (12 hinges)"),
    "aliengo": (os.path.join(DATA, "aliengo/aliengo.urdf"), "quadruped (12 hinges)"),
    "ant": (os.path.join(DATA, "mjcf/ant.xml"), "quadruped, MJCF"),
    "humanoid_urdf": (os.path.join(DATA, "humanoid/humanoid.urdf"),
                      "humanoid, ball joints"),
    "pr2_gripper": (os.path.join(DATA, "pr2_gripper.urdf"), "gripper"),
    "racecar": (os.path.join(DATA, "racecar/racecar.urdf"), "mobile base (wheels, steering)"),
    "r2d2": (os.path.join(DATA, "r2d2.urdf"), "mobile base (wheels, slider, meshes)"),
    "four_bar": (os.path.join(HERE, "four_bar.xml"), "closed loop (MJCF connect)"),
    # MuJoCo Menagerie's Robotiq 2F-85 as OGBench ships it: two planar five-bar loops, each
    # closed by a `connect`, 8 hinges, meshes, a tendon and a joint coupling (not mapped)
    "robotiq_2f85": (package_model("robotiq_2f85"),
                     "gripper, closed loops (MJCF connect), meshes"),
}


def corpus_path(name):
    path = CORPUS[name][0]
    if path is None:      # a failure, not a skip: CI must not lose the model unseen
        pytest.fail(f"{name}: its package is not installed (pip install -e '.[test]')")
    return path


# Loop closures (connect, weld) in MuJoCo's run: ours are hard, MuJoCo's soft. A Menagerie
# file's (Robotiq 2F-85: solref 0.005) makes a gram-sized finger a compliant mechanism, 0.15
# rad from the rigid one after 1 s; stiffened to these, MuJoCo's own run needs a finer step
# than 1e-3 (RK4 at 1e-3 is 5e-3 rad from RK4 at 1e-4 on the gripper, at 2.5e-4 3e-5): so
# models with loops are compared with MuJoCo's run at LOOP_REFERENCE_H.
LOOP_SOLREF = (0.002, 1.0)
LOOP_SOLIMP = (0.9999, 0.9999, 0.001)
LOOP_REFERENCE_H = 1e-4


def has_loops(model):
    return bool(np.any(model.eq_active0))


def unactuated(path):
    """The compiled model with its floating base pinned and contacts, actuators, limits,
    springs, damping, armature, friction loss and the equalities we do not map off, its loop
    closures (connect, weld) kept and stiffened (LOOP_SOLREF): the comparison's model."""
    model, kind = load_model(path)
    if any(model.jnt_type == mujoco.mjtJoint.mjJNT_FREE):
        spec = mujoco.MjSpec.from_file(path)
        for j in list(spec.joints):
            if j.type == mujoco.mjtJoint.mjJNT_FREE:
                spec.delete(j)
        model = spec.compile()
    model.jnt_limited[:] = 0
    model.jnt_stiffness[:] = 0
    model.dof_damping[:] = 0
    model.dof_armature[:] = 0
    model.dof_frictionloss[:] = 0
    for e in range(model.neq):
        # int(): `x in (enum, ...)` is False for a numpy integer x in MuJoCo 4's bindings
        if int(model.eq_type[e]) in (int(mujoco.mjtEq.mjEQ_CONNECT),
                                     int(mujoco.mjtEq.mjEQ_WELD)):
            model.eq_solref[e] = LOOP_SOLREF       # near our hard loop closure
            model.eq_solimp[e, :3] = LOOP_SOLIMP
        else:
            model.eq_active0[e] = 0    # couplings we do not map (joint, tendon) are off
    model.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT
                               | mujoco.mjtDisableBit.mjDSBL_ACTUATION)
    return model, kind


def start_pose(model):
    """qpos0 with every hinge turned by 0.3 sin(1.7 j + 0.5) rad, every slider moved by
    2 cm times that, every ball joint turned 0.3 rad about a tilted axis (deterministic)."""
    q = model.qpos0.copy()
    for j in range(model.njnt):
        a, s = model.jnt_qposadr[j], np.sin(1.7 * j + 0.5)
        kind = int(model.jnt_type[j])
        if kind == int(mujoco.mjtJoint.mjJNT_HINGE):
            q[a] += 0.3 * s
        elif kind == int(mujoco.mjtJoint.mjJNT_SLIDE):
            q[a] += 0.02 * s
        elif kind == int(mujoco.mjtJoint.mjJNT_BALL):
            turn = np.zeros(4)
            mujoco.mju_axisAngle2Quat(turn, np.array([s, np.cos(1.3 * j), 0.5]), 0.3)
            mujoco.mju_mulQuat(q[a:a + 4], q[a:a + 4].copy(), turn)
    return q


def start_velocity(model):
    """Every joint's speed 1.0 cos(2.3 k) (rad/s, m/s: deterministic), so that joints
    gravity alone would not move (wheels, grippers' fingers along gravity) move too."""
    return np.cos(2.3 * np.arange(model.nv))


def close_loops(model, qpos, qvel):
    """qpos and qvel moved onto the model's loop closures (active equality constraints):
    turned joint by joint (start_pose, start_velocity), a closed loop would open, which
    MuJoCo's soft constraint and our hard one then close in different ways. Newton steps
    q <- q - J+ r on the equality rows' residual r (J their Jacobian, J+ its pseudo-inverse),
    then v <- v - J+ J v; without active equalities both come back unchanged."""
    data = mujoco.MjData(model)
    model.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    q, v = qpos.copy(), qvel.copy()
    for _ in range(50):
        data.qpos[:] = q
        data.qvel[:] = v
        mujoco.mj_forward(model, data)
        rows = data.efc_type[:data.nefc] == int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)
        if not rows.any():
            return q, v
        jac = data.efc_J[:data.nefc * model.nv].reshape(data.nefc, model.nv)[rows]
        residual = data.efc_pos[:data.nefc][rows]
        if np.max(np.abs(residual)) < 1e-13:
            break
        mujoco.mj_integratePos(model, q, -np.linalg.pinv(jac) @ residual, 1.0)
    assert np.max(np.abs(residual)) < 1e-10, "the loop closures did not close"
    return q, v - np.linalg.pinv(jac) @ (jac @ v)


def mujoco_fall(model, seconds, h, qpos, qvel):
    """MuJoCo's run (RK4 at h) from qpos, qvel: qpos and every body's world rotation at the
    end."""
    model.opt.timestep = h
    model.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    data.qvel[:] = qvel
    mujoco.mj_forward(model, data)
    start = data.xmat.copy().reshape(-1, 3, 3)
    for _ in range(int(round(seconds / h))):
        mujoco.mj_step(model, data)
    return data.qpos.copy(), start, data.xmat.copy().reshape(-1, 3, 3)


def our_fall(model, path, kind, seconds, h, qpos, qvel, solver="tree", extrapolate=False):
    """Our run of the converted model from qpos, qvel: the world at the end, its start, and
    the scene doc (extrapolate: Schmitt sec. 8's third-order stepping)."""
    from impulse.engine import scene_to_world, world_to_scene
    doc = model_to_scene(model, path, kind, actuators=False, qpos=qpos, qvel=qvel).doc
    for j in doc["joints"]:
        j.pop("limits", None)
        j.pop("limits2", None)
    doc["settings"].update(h=h, solver=solver, eps_pos=1e-12, eps_vel=1e-12,
                           max_cycles=200, extrapolate=extrapolate)
    doc["contacts"] = {"enabled": False}
    world = scene_to_world(doc, path)
    start = world_to_scene(world)["bodies"]
    world.run(int(round(seconds / h)))
    return world, start, doc


def _rot(q):
    from scipy.spatial.transform import Rotation
    return Rotation.from_quat(q, scalar_first=True).as_matrix()


def compare_fall(name, seconds=1.0, h=1e-3, extrapolate=False, reference_h=None):
    """MuJoCo runs at reference_h (default: h, or LOOP_REFERENCE_H for a model with loops).
    {'joint_error': max |angle or offset difference|, 'rotation_error': max body rotation
    difference [rad], 'joints': n compared, 'bodies': n compared, 'moved': the largest
    hinge or slider motion in MuJoCo's run, 'doc': our scene}."""
    from impulse.engine import world_to_scene
    path = corpus_path(name)
    model, kind = unactuated(path)
    q_start, v_start = close_loops(model, start_pose(model), start_velocity(model))
    world, start, doc = our_fall(model, path, kind, seconds, h, q_start, v_start,
                                 extrapolate=extrapolate)
    if reference_h is None:
        reference_h = min(h, LOOP_REFERENCE_H) if has_loops(model) else h
    qpos, mj_start, mj_end = mujoco_fall(model, seconds, reference_h, q_start, v_start)
    joint_error, joints, moved = 0.0, 0, 0.0
    for j in range(model.njnt):
        if int(model.jnt_type[j]) not in (int(mujoco.mjtJoint.mjJNT_HINGE),
                                          int(mujoco.mjtJoint.mjJNT_SLIDE)):
            continue
        jname = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
        if jname not in world.joint_names:
            continue        # part of a universal or ball joint: the rotations cover it
        a = model.jnt_qposadr[j]
        ours = world.joint_coordinates(jname)[0]
        diff = ours - (qpos[a] - q_start[a])
        if int(model.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_HINGE):
            diff = (diff + np.pi) % (2 * np.pi) - np.pi    # our angles are taken mod 2 pi
        joint_error = max(joint_error, abs(diff))
        moved = max(moved, abs(qpos[a] - q_start[a]))
        joints += 1
    end = {b["name"]: b for b in world_to_scene(world)["bodies"]}
    begin = {b["name"]: b for b in start}
    rot_error, bodies = 0.0, 0
    for b in range(1, model.nbody):
        bname = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b)
        if bname not in end or end[bname].get("fixed"):
            continue
        ours = _rot(end[bname].get("orientation", [1, 0, 0, 0])) @ _rot(
            begin[bname].get("orientation", [1, 0, 0, 0])).T
        theirs = UP @ mj_end[b] @ mj_start[b].T @ UP.T
        c = (np.trace(ours.T @ theirs) - 1) / 2
        rot_error = max(rot_error, float(np.arccos(np.clip(c, -1, 1))))
        bodies += 1
    return {"joint_error": float(joint_error), "rotation_error": rot_error, "joints": joints,
            "bodies": bodies, "moved": float(moved), "doc": doc}
