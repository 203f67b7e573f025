"""`impulse bench import`: imported URDF/MJCF models (pybullet_data's, which ships with the `peers`
extra's pybullet, and the Robotiq gripper where ogbench is installed): per model its bodies,
joints, collision hulls, the time to convert it, and our ms per step and real-time factor at h =
1/60 over SECONDS of the converted scene as it is (gravity, limits, contacts, position actuators
as joint springs or servos), tree solver; MuJoCo's ms per step on the same file at the same h in
the same run, where mujoco is installed (its default integrator and solver). A last row: the
mini cheetah standing on its servos for 10 s (its base height's largest change, and the time per
step)."""
import os
import time

from . import BenchInputError

H = 1.0 / 60.0
SECONDS = 2.0

# name: path inside pybullet_data
MODELS = {
    "kuka_iiwa": "kuka_iiwa/model.urdf",
    "panda": "franka_panda/panda.urdf",
    "xarm6": "xarm/xarm6_robot.urdf",
    "a1": "a1/a1.urdf",
    "aliengo": "aliengo/aliengo.urdf",
    "mini_cheetah": "mini_cheetah/mini_cheetah.urdf",
    "ant": "mjcf/ant.xml",
    "humanoid_urdf": "humanoid/humanoid.urdf",
    "humanoid_mjcf": "mjcf/humanoid.xml",
    "pr2_gripper": "pr2_gripper.urdf",
    "racecar": "racecar/racecar.urdf",
    "r2d2": "r2d2.urdf",
}


# name: (package, path inside it): models of other packages, where installed (the test
# extra's ogbench ships MuJoCo Menagerie's Robotiq 2F-85, two closed loops); found without
# importing the package
PACKAGE_MODELS = {
    "robotiq_2f85": ("ogbench", "manipspace/descriptions/robotiq_2f85/2f85.xml"),
}


def package_model(name):
    """The file of PACKAGE_MODELS' `name`, found without importing its package (ogbench's
    import pulls in gymnasium and dm_control); None where the package is not installed."""
    import importlib.util
    package, path = PACKAGE_MODELS[name]
    spec = importlib.util.find_spec(package)
    return os.path.join(spec.submodule_search_locations[0], path) if spec else None


def model_paths():
    """{name: file} of the bench's models; empty without pybullet_data."""
    try:
        import pybullet_data
    except ImportError:
        return {}
    root = pybullet_data.getDataPath()
    paths = {n: os.path.join(root, p) for n, p in MODELS.items()}
    for name in PACKAGE_MODELS:
        path = package_model(name)
        if path is not None:
            paths[name] = path
    return paths


def _ours(doc, steps):
    from ..scene import scene_to_world
    doc = dict(doc, settings=dict(doc["settings"], h=H))
    world = scene_to_world(doc, doc.get("name", "model"))
    world.run(1)                                  # the first step's one-time work
    t0 = time.perf_counter()
    world.run(steps)
    return (time.perf_counter() - t0) / steps * 1e3, bool(world.problems)


def _mujoco(path, steps):
    import mujoco

    from ..formats.load import load_model
    model, _ = load_model(path)
    model.opt.timestep = H
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data)
    t0 = time.perf_counter()
    for _ in range(steps):
        mujoco.mj_step(model, data)
    return (time.perf_counter() - t0) / steps * 1e3


STAND_SECONDS = 10.0
# a standing pose of the MIT mini cheetah (pybullet_data's URDF): thighs 0.8, knees -1.6 rad
CHEETAH_STAND = {f"{part}_{leg}_j": angle for leg in ("fr", "fl", "hr", "hl")
                 for part, angle in ((f"abduct_{leg}_to_thigh", 0.8),
                                     (f"thigh_{leg}_to_knee", -1.6))}


def standing(path):
    """The mini cheetah floating on its servos (--floating --servos --ground, dropped from
    5 mm) for STAND_SECONDS at H: the largest change of its base height, ms per step."""
    import numpy as np

    from ..formats import convert_file
    from ..scene import scene_to_world
    doc = convert_file(path, floating=True, servos=True, ground=True, pose=CHEETAH_STAND).doc
    doc["settings"]["h"] = H
    next(b for b in doc["bodies"] if b["name"] == "ground")["position"][1] -= 0.005
    world = scene_to_world(doc, path)
    base = world.body_names.index("body")
    y0 = world.B.pos[base, 1]
    steps = int(round(STAND_SECONDS / H))
    t0 = time.perf_counter()
    result = world.run(steps, record_every=1)
    ms = (time.perf_counter() - t0) / steps * 1e3
    heights = result.pos[:, base, 1] - y0
    return {"model": "mini_cheetah standing 10 s",
            "bodies": sum(not m.static for m in world.models),
            "joints": len(world.joint_names), "ms_step": round(ms, 3),
            "rtf": round(H * 1e3 / ms, 1), "guard_stopped": bool(world.problems),
            "max_base_change_m": round(float(np.max(np.abs(heights))), 4)}


def imports(models=None):
    """One row per model (see the module's doc), and the standing mini cheetah's."""
    from ..formats import convert_file
    paths = model_paths()
    if not paths:
        raise BenchInputError("bench import needs pybullet_data (pip install 'impulse[peers]')")
    steps = int(round(SECONDS / H))
    rows = []
    for name in models or paths:
        if name not in paths:
            raise BenchInputError(f"unknown model {name!r} (known: {', '.join(paths)})")
        imported = convert_file(paths[name])
        ms, stopped = _ours(imported.doc, steps)
        try:
            mj_ms = _mujoco(paths[name], steps)
        except ImportError:
            mj_ms = None
        c = imported.counts
        rows.append({"model": name, "bodies": c["bodies"], "joints": c["joints"],
                     "hulls": c["hulls"], "convert_s": round(imported.seconds, 3),
                     "ms_step": round(ms, 3), "rtf": round(H * 1e3 / ms, 1),
                     "guard_stopped": stopped,
                     "mujoco_ms_step": None if mj_ms is None else round(mj_ms, 4)})
    if models is None or "mini_cheetah" in models:
        rows.append(standing(paths["mini_cheetah"]))
    return rows
