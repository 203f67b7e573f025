"""Compile (or load from numba's cache) every physics kernel a session needs, once.

The first run on a new install compiles the kernels (about 4 minutes on a 2-core machine;
numba caches them in the user's cache folder, keyed by the engine's sources
(engine/kernel_cache.py); later starts take about a second). `python -m
engine.warmup` does this ahead of time; the test suite calls it at session start so that the
subprocesses it starts load the cache instead of each compiling on their own.
"""
import time

import numpy as np


from .kernel_cache import kernels_cached  # noqa: F401  (app/__main__.py asks before compiling)


def warm_up():
    from .scene import scene_to_world
    doc = {"format": "impulse-scene", "version": 1, "settings": {"h": 0.01},
           "bodies": [{"name": "a", "shape": {"type": "box", "size": [0.4, 0.1, 0.1]},
                       "mass": 1.0, "position": [0.2, 0, 0]},
                      {"name": "b", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1.0,
                       "position": [0.6, 0, 0]}],
           "joints": [{"name": "h", "type": "hinge", "bodies": ["world", "a"],
                       "anchor": [0, 0, 0], "axis": [0, 0, 1], "limits": {"lower": -1},
                       "motor": {"mode": "position", "target": 0.1, "max_force": 5},
                       "spring": {"stiffness": 1.0}},
                      {"name": "ball", "type": "ball", "bodies": ["a", "b"], "anchor": [0.4, 0, 0]},
                      {"name": "s", "type": "spring", "bodies": ["world", "b"],
                       "anchor": [0.6, 0, 0], "stiffness": 1.0, "damping": 0.1}]}
    contact_doc = {"format": "impulse-scene", "version": 1, "settings": {"h": 0.01},
                   "bodies": [{"name": "ground", "fixed": True, "shape": {"type": "plane"}},
                              {"name": "box", "shape": {"type": "box", "size": [0.2, 0.2, 0.2]},
                               "mass": 1.0, "position": [0, 0.105, 0]},
                              {"name": "ball", "shape": {"type": "sphere", "radius": 0.1},
                               "mass": 1.0, "position": [0, 0.4, 0], "velocity": [0, -1, 0]}]}
    w = scene_to_world(contact_doc)
    w.step()
    w.run(3, record_every=1)
    warm_interaction()
    for mode in ("approximate", "iterated"):
        w = scene_to_world(doc)
        w.settings.spring_mode = mode
        w.step()
        w.run(2, record_every=1)
        w.energy()
        w.joint_coordinates("h")
    return w


_interaction_warm = False


def warm_interaction():
    """The paths a user reaches while a scene runs, so the first of each does not stall the
    physics: a mouse drag, a VR grab (drag with an orientation), a body dropped in and
    removed, a joint added and removed, a snapshot and its restore. Once per process."""
    global _interaction_warm
    if _interaction_warm:
        return
    from .scene import scene_to_world
    w = scene_to_world({"format": "impulse-scene", "version": 1, "settings": {"h": 0.01},
                        "bodies": [{"name": "ground", "fixed": True, "shape": {"type": "plane"}},
                                   {"name": "box", "mass": 1.0, "position": [0, 0.2, 0],
                                    "shape": {"type": "box", "size": [0.2, 0.2, 0.2]}}]})
    w.step()
    snap = w.get_state()
    w.drag_start(1, w.B.pos[1] + [0.05, 0.05, 0.0])
    w.drag_to(w.B.pos[1] + [0.1, 0.1, 0.0], np.eye(3))
    w.step()
    w.drag_stop()
    w.add_body({"name": "ball", "mass": 1.0, "position": [0.5, 0.5, 0],
                "shape": {"type": "sphere", "radius": 0.1}})
    w.add_joint({"name": "j", "type": "ball", "bodies": ["box", "ball"], "anchor": [0.3, 0.3, 0]})
    w.step()
    w.remove_joint("j")
    w.remove_body("ball")
    w.step()
    w.set_state(snap)
    w.step()
    _interaction_warm = True


def main():
    t = time.perf_counter()
    warm_up()
    print(f"physics kernels ready in {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
