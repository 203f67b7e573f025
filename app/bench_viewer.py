"""`impulse bench viewer`: the desktop app's frame rate on the heaviest scene, and what
rendering costs the simulation's real-time factor on a small scene.

1. fps: scenes/funnel_1000.json if present, else 1000 free spinning boxes
   (`box_stack_doc`, no gravity), in the full app at 1280x720 with every panel
   shown, vsync off, simulating as usual; frames over `--seconds` after a warm-up. Once
   with the physics thread (the app's default), once stepping inside the frames
   (`impulse view --sync-physics`), for comparison; `rtf` is the simulation's real-time
   factor meanwhile.
2. real-time factor of a small scene (chain8) at speed x1 and x8: once driven by the same
   FixedStepLoop without rendering (frames paced at 60 Hz by sleeping), once in the app
   with rendering. The impact is 1 - RTF(render) / RTF(no render); the goal is <= 10 %.
Runs under Xvfb (starts one when DISPLAY is unset). Prints a table; --json OUT writes rows.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from impulse.app.gallery import SCENES
from impulse.engine import strict_json
from impulse.engine.cli import OneLineParser
from impulse.engine.durable import write_file

SIZE = (1280, 720)


def box_stack_doc(n: int = 1000, seed: int = 1) -> dict:
    """Scene document of n free 0.4 m boxes in columns of ten, each turned about +y by a
    random angle, randomly coloured and spinning slowly about +y; no gravity."""
    rng = np.random.default_rng(seed)
    side = int(np.ceil(np.sqrt(n / 10)))
    bodies = [{"name": "ground", "fixed": True, "shape": {"type": "plane"}}]
    for i in range(n):
        col, level = divmod(i, 10)
        x, z = col % side, col // side
        turn = rng.uniform(0, np.pi)
        color = rng.uniform(0.2, 0.9, 3)
        spin = rng.uniform(-1, 1)
        bodies.append({"name": f"box{i}", "mass": 1.0,
                       "shape": {"type": "box", "size": [0.4, 0.4, 0.4]},
                       "position": [(x - side / 2) * 0.6, 0.2 + level * 0.42,
                                    (z - side / 2) * 0.6],
                       "orientation": [float(np.cos(turn / 2)), 0.0, float(np.sin(turn / 2)), 0.0],
                       "angular_velocity": [0.0, float(spin), 0.0],
                       "color": [float(c) for c in color]})
    return {"format": "impulse-scene", "version": 1, "name": f"{n} boxes",
            "settings": {"h": 0.01, "gravity": [0.0, 0.0, 0.0]},
            "camera": {"eye": [9.0, 7.0, 11.0], "target": [0.0, 1.5, 0.0], "fov_deg": 45.0},
            "bodies": bodies}


def boxes_world(n: int = 1000):
    """The box stack as an engine World (the fallback heavy scene)."""
    from impulse.engine import scene_to_world

    return scene_to_world(box_stack_doc(n), f"{n} boxes")


def heavy_session():
    from impulse.app.session import Session

    funnel = SCENES / "funnel_1000.json"
    if funnel.is_file():
        return Session.open(str(funnel)), "funnel_1000.json"
    return Session(boxes_world(1000)), "1000 boxes"


def run_frames(app, seconds: float, warmup: int = 20) -> dict:
    """Frames of the real app loop; fps and frame-time percentiles after `warmup` frames."""
    v = app.viewer
    for _ in range(warmup):
        v.window.dispatch_events()
        v.frame()
    times = []
    loop = app.session.loop
    loop.sync()
    sim0, end = loop.sim_time, time.perf_counter() + seconds
    t_start = last = time.perf_counter()
    loop._history.clear()
    while last < end:
        v.window.dispatch_events()
        v.frame()
        now = time.perf_counter()
        times.append(now - last)
        last = now
    wall = last - t_start
    ms = np.asarray(times) * 1e3
    return {"frames": len(times), "fps": len(times) / wall, "ms_median": float(np.median(ms)),
            "ms_p95": float(np.percentile(ms, 95)), "rtf": (loop.sim_time - sim0) / wall}


def headless_rtf(session, speed: float, seconds: float, frame_s: float = 1 / 60) -> float:
    """The same loop without rendering: advance once per 60 Hz frame (sleeping between)."""
    loop = session.loop
    loop.speed, loop.paused = speed, False
    sim0 = loop.sim_time
    start = last = time.perf_counter()
    while last - start < seconds:
        time.sleep(max(frame_s - (time.perf_counter() - last), 0.0))
        now = time.perf_counter()
        loop.advance(now - last)
        last = now
    return (loop.sim_time - sim0) / (last - start)


def bench(seconds: float = 5.0) -> list[dict]:
    from impulse.app.app import App
    from impulse.app.session import Session
    from impulse.app.window import Viewer

    viewer = Viewer(None, *SIZE, vsync=False)
    app = App(viewer)
    rows = []
    try:
        for threaded in (True, False):
            app.threaded = threaded
            session, label = heavy_session()
            app.set_session(session)
            r = run_frames(app, seconds)
            rows.append({"benchmark": "viewer_fps", "scene": label,
                         "bodies": len(session.world.body_names),
                         "size": f"{SIZE[0]}x{SIZE[1]}", "ui": "all panels",
                         "physics": "thread" if threaded else "in frame",
                         "fps": round(r["fps"], 1), "ms_frame_median": round(r["ms_median"], 1),
                         "ms_frame_p95": round(r["ms_p95"], 1), "rtf": round(r["rtf"], 4),
                         "goal_fps": 20})
        app.threaded = True
        small = str(SCENES / "chain8.json")
        for speed in (1.0, 8.0):
            ref = headless_rtf(Session.open(small), speed, seconds / 2)
            session = Session.open(small)
            app.set_session(session)
            session.loop.speed = speed
            r = run_frames(app, seconds / 2, warmup=5)
            rows.append({"benchmark": "viewer_rtf", "scene": "chain8.json", "speed": speed,
                         "rtf_no_render": round(ref, 3), "rtf_render": round(r["rtf"], 3),
                         "fps": round(r["fps"], 1),
                         "impact_pct": round(100 * (1 - r["rtf"] / ref), 1), "goal_pct": 10})
    finally:
        app.close()
        viewer.close()
    return rows


def main(argv=None) -> int:
    p = OneLineParser(prog="impulse bench viewer", description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=5.0, help="measuring time per part")
    p.add_argument("--json", metavar="OUT.json", help="write the rows as JSON")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    from impulse.app.xvfb import ensure_display
    from impulse.engine.bench.joints import format_table

    xvfb = ensure_display(SIZE)
    try:
        rows = bench(args.seconds)
    finally:
        if xvfb is not None:
            xvfb.terminate()
    print(format_table(rows))
    if args.json:
        write_file(args.json, strict_json.dumps({"rows": rows}, indent=2) + "\n")
    return 0
