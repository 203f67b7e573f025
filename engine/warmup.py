"""Compile (or load from numba's cache) every physics kernel a session needs, once.

The kernels compile per feature (FEATURES, in this order): "step" (the time step with its
joints, springs, motors, contact rows and solvers: every scene needs it), "interaction"
(drag, VR grab, bodies and joints added and removed, snapshots: ready before a scene runs,
never compiled in the middle of an interaction) and "contacts" (collision detection: only
scenes whose bodies can touch). A file `ready-<feature>` in the cache folder
(engine/kernel_cache.py) says a feature is compiled. `impulse compile` (this module's main)
compiles them all, with a progress bar on a terminal or JSON lines for the viewer, which runs
it in a background process on a first start (app/kernel_compile.py).
"""
import argparse
import json
import logging
import sys
import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np

from .kernel_cache import (  # noqa: F401  (kernels_cached: the app asks)
    PREBUILT,
    bundle,
    features_ready,
    kernel_folder,
    kernels_cached,
    ready_marker,
)

FEATURES = ("step", "interaction", "contacts")
log = logging.getLogger(__name__)


def features_for_document(doc) -> tuple:
    """The features a scene document needs in the viewer: contact detection unless the
    scene turns contacts off (a user can drop bodies into any other scene)."""
    contacts = doc.get("contacts") if isinstance(doc, dict) else None
    off = isinstance(contacts, dict) and contacts.get("enabled", True) is False
    return ("step", "interaction") if off else FEATURES


def _mark_ready(feature, folder):
    try:
        ready_marker(feature, folder).write_text("")
    except OSError:             # a read-only cache: the kernels are still compiled in here
        pass


JOINT_DOC = {"format": "impulse-scene", "version": 1, "settings": {"h": 0.01},
             "bodies": [{"name": "a", "shape": {"type": "box", "size": [0.4, 0.1, 0.1]},
                         "mass": 1.0, "position": [0.2, 0, 0]},
                        {"name": "b", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1.0,
                         "position": [0.6, 0, 0]}],
             "joints": [{"name": "h", "type": "hinge", "bodies": ["world", "a"],
                         "anchor": [0, 0, 0], "axis": [0, 0, 1], "limits": {"lower": -1},
                         "motor": {"mode": "position", "target": 0.1, "max_force": 5},
                         "spring": {"stiffness": 1.0}},
                        {"name": "ball", "type": "ball", "bodies": ["a", "b"],
                         "anchor": [0.4, 0, 0]},
                        {"name": "s", "type": "spring", "bodies": ["world", "b"],
                         "anchor": [0.6, 0, 0], "stiffness": 1.0, "damping": 0.1}],
             "contacts": {"enabled": False}}
CONTACT_DOC = {"format": "impulse-scene", "version": 1, "settings": {"h": 0.01},
               "bodies": [{"name": "ground", "fixed": True, "shape": {"type": "plane"}},
                          {"name": "box", "shape": {"type": "box", "size": [0.2, 0.2, 0.2]},
                           "mass": 1.0, "position": [0, 0.105, 0]},
                          {"name": "ball", "shape": {"type": "sphere", "radius": 0.1},
                           "mass": 1.0, "position": [0, 0.4, 0], "velocity": [0, -1, 0]}]}


def warm_step():
    """The step kernel (with its contact rows and solvers), a run, energies, coordinates."""
    from .scene import scene_to_world
    for mode in ("approximate", "iterated"):
        w = scene_to_world(JOINT_DOC)
        w.settings.spring_mode = mode
        w.step()
        w.run(2, record_every=1)
        w.energy()
        w.joint_coordinates("h")


def warm_contacts():
    """Collision detection and the contact paths of a run and of live edits."""
    from .scene import scene_to_world
    w = scene_to_world(CONTACT_DOC)
    w.step()
    w.run(3, record_every=1)
    w.add_body({"name": "cap", "mass": 1.0, "position": [0.5, 0.5, 0],
                "shape": {"type": "capsule", "radius": 0.05, "length": 0.2}})
    w.step()
    w.remove_body("cap")
    w.step()
    w.settings.sleep_time, w.settings.sleep_speed = 0.0, 1e3   # every island sleeps at once
    w.step()
    w.wake()
    w.step()
    warm_islands()


def warm_one_call():
    """Load the contact step in one compiled call (contact_step.py): a box at rest on a
    floor, a few steps (its first step is the Python path's). Once per process."""
    global _one_call_warm
    if _one_call_warm:
        return
    from .scene import scene_to_world
    w = scene_to_world(CONTACT_DOC)
    for _ in range(3):
        w.step()
    _one_call_warm = True


_one_call_warm = False


def warm_islands():
    """The step by islands (islands.py): two stacks on a floor, split however small."""
    from . import islands
    from .scene import scene_to_world
    bodies = [{"name": "ground", "fixed": True, "shape": {"type": "plane"}}]
    for k, y in ((0, 0.1), (0, 0.3), (1, 0.1), (1, 0.3)):
        bodies.append({"name": f"b{k}{y}", "mass": 1.0, "position": [2.0 * k, y, 0],
                       "shape": {"type": "box", "size": [0.2, 0.2, 0.2]}})
    w = scene_to_world({"format": "impulse-scene", "version": 1,
                        "settings": {"h": 0.01}, "bodies": bodies})
    keep = islands.MIN_ROWS
    islands.MIN_ROWS = 1
    try:
        w.step()
    finally:
        islands.MIN_ROWS = keep


def warm_up(features=FEATURES, on_ready=None, jobs=1, on_kernel=None, recorder=None):
    """Compile (or load) the kernels of `features`, in FEATURES order; on_ready(feature)
    after each. Marks each feature ready in the cache folder. With jobs > 1 the plan's
    kernels (compile_plan.py) compile first in that many processes, on_kernel(name) after
    each; this process then loads them, and compiles what the plan lacks. `recorder`
    (compile_plan.Recorder) is told which feature compiles."""
    warmed = set()
    # the folder numba writes to: an engine file edited during a compile gives the sources
    # a new key, but the kernels still go where kernel_cache.use() pointed numba at import
    import numba
    folder = Path(numba.config.CACHE_DIR) if numba.config.CACHE_DIR else kernel_folder()

    def finish(feature):
        if recorder is not None:
            recorder.feature = feature
        {"step": warm_step, "interaction": warm_interaction, "contacts": warm_contacts}[feature]()
        _mark_ready(feature, folder)
        warmed.add(feature)
        if on_ready is not None:
            on_ready(feature)

    wanted = [f for f in FEATURES if f in features]
    if jobs > 1 and not features_ready(wanted, folder):
        from . import compile_plan
        items = [it for it in compile_plan.load() if it[2] in wanted]
        if items:
            failed = compile_plan.run(items, jobs, on_kernel=on_kernel, on_feature=finish,
                                      features_order=wanted)
            for name, error in failed:
                log.debug("plan entry %s not compiled: %s", name, error)
    for feature in wanted:
        if feature not in warmed:
            finish(feature)
    if kernels_cached():      # this version's kernels are all there: old versions' may go
        from .kernel_cache import prune
        prune()


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
                                    "shape": {"type": "box", "size": [0.2, 0.2, 0.2]}}],
                        "contacts": {"enabled": False}})   # detection is "contacts"
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


def main(argv=None) -> int:
    """`impulse compile` / `python -m impulse.engine.warmup`."""
    from .compile_plan import MAX_JOBS, Recorder, planned_jobs
    p = argparse.ArgumentParser(prog="impulse compile", description="compile the physics "
                                "kernels into the cache now (later starts take a second)")
    p.add_argument("--progress", choices=("auto", "bar", "jsonl", "none"), default="auto",
                   help="a progress bar on a terminal (auto), JSON lines for a program, none")
    p.add_argument("--features", default=",".join(FEATURES),
                   help=f"comma-separated subset of {','.join(FEATURES)}")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="compile in N processes (default: the cores, at most "
                        f"{MAX_JOBS}; 1: in this process only)")
    p.add_argument("--quiet", action="store_true", help="no closing line")
    p.add_argument("--write-manifest", action="store_true",
                   help="store each kernel's compile seconds for later estimates "
                        "(engine/kernel_manifest.json) and the plan of the parallel compile "
                        "(engine/kernel_plan.pkl.xz): after changing kernels, from an empty "
                        "cache, in one process")
    p.add_argument("--bundle", nargs="?", const=str(PREBUILT), metavar="DIR",
                   help="then copy the compiled kernels into DIR/<key> for a wheel to carry "
                        f"(default {PREBUILT}; `pip wheel .` packs engine/prebuilt)")
    args = p.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        p.error(f"--jobs must be 1 or more, not {args.jobs}")
    # a new manifest and plan come from one process (the plan records numba's own order)
    jobs = 1 if args.write_manifest else planned_jobs(args.jobs)
    features = tuple(f for f in args.features.split(",") if f)
    unknown = [f for f in features if f not in FEATURES]
    if unknown:
        p.error(f"unknown feature {unknown[0]!r} (known: {', '.join(FEATURES)})")
    from .compile_progress import CompileProgress, write_manifest

    mode = args.progress
    if mode == "auto":
        mode = "bar" if sys.stderr.isatty() else "none"
    t = time.perf_counter()
    bar = None
    if mode == "bar":
        from tqdm import tqdm
        bar = tqdm(total=100, desc="compiling physics kernels", unit="%", file=sys.stderr,
                   bar_format="{desc}: {percentage:3.0f}%|{bar}| {postfix}")

    def emit(**fields):
        print(json.dumps(fields), flush=True)

    def report(name, fraction, eta_s):
        if mode == "jsonl":
            emit(event="kernel", name=name, fraction=round(fraction, 4),
                 eta_s=None if eta_s is None else round(eta_s, 1))
        elif bar is not None:
            bar.n = round(100 * fraction)
            bar.set_postfix_str(f"{name.rsplit('.', 1)[-1]}, about {eta_s or 0:.0f} s left",
                                refresh=True)

    def ready(feature):
        if mode == "jsonl":
            emit(event="ready", feature=feature)

    try:
        with CompileProgress(report, jobs=jobs) as progress:
            if bar is not None:                      # a stopped compile resumes its bar
                bar.n = round(100 * progress.fraction())
                bar.refresh()
            elif mode == "jsonl":
                emit(event="start", fraction=round(progress.fraction(), 4))
            recorder = Recorder() if args.write_manifest else None
            with recorder or nullcontext():
                warm_up(features, on_ready=ready, jobs=jobs, on_kernel=progress.count,
                        recorder=recorder)
    finally:
        if bar is not None:
            bar.n = 100
            bar.close()
    seconds = time.perf_counter() - t
    if args.write_manifest:
        write_manifest(progress.timings)
        recorder.write()
    if mode == "jsonl":
        emit(event="done", seconds=round(seconds, 1), kernels=progress.kernels)
    elif not args.quiet:
        print(f"physics kernels ready in {seconds:.1f} s ({progress.kernels} compiled)",
              file=sys.stderr)
    if args.bundle:
        out = bundle(Path(args.bundle))
        if not args.quiet:
            print(f"bundled into {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
