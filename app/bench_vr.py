"""`impulse bench vr`: the app's VR mode against Monado's simulated headset (null
compositor): frames per second and missed frames per scene, with the physics share.

For each scene (pendulum, tree_255, funnel_1000): the full app (mirror window 640x360 with
the UI, under Xvfb when there is no display) in VR mode; after the session is FOCUSED and
a short warm-up, frames for `--seconds`. Missed frames are display slots the runtime's
predicted display times skipped between two of our frames (VRSession.missed_frames). The
physics runs on its own thread beside the frames (app/loop.py); `physics_ms` is the wall
time of its batches, each bounded by the frame budget (app/vr/frame_budget.py), and
`residual_max` / `budget_hits` come from the last step of each batch.
`--paused` measures the same with the simulation paused (what rendering alone costs).
Prints a table; `--json OUT` writes the rows, `--json` alone prints them as JSON instead.
Without an OpenXR runtime: one line and exit status 2.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from impulse.app.gallery import SCENES
from impulse.engine import strict_json
from impulse.engine.cli import OneLineParser
from impulse.engine.durable import write_file

SCENE_NAMES = ("pendulum", "tree_255", "funnel_1000")
MIRROR = (640, 360)


def measure(app, seconds: float, warmup: int = 10) -> dict:
    """Frames of the real app loop in VR mode after `warmup` frames."""
    v, mode = app.viewer, app.vr
    for _ in range(warmup):
        v.window.dispatch_events()
        v.frame()
    vr, loop, session = mode.vr, app.session.loop, app.session
    batches = []                      # (wall s, last step's stats) per batch, UI thread

    def on_batch():
        batches.append((loop.last_batch.wall_s, app.world.last_step()))
    loop.sync()
    session.batch_listeners.append(on_batch)
    sub0, miss0, sim0 = vr.frames_submitted, vr.missed_frames, loop.sim_time
    frame_ms = []
    start = last = time.perf_counter()
    try:
        while last - start < seconds:
            v.window.dispatch_events()
            v.frame()
            now = time.perf_counter()
            frame_ms.append((now - last) * 1e3)
            last = now
    finally:
        session.batch_listeners.remove(on_batch)
    wall = last - start
    frames = vr.frames_submitted - sub0
    physics = [b[0] * 1e3 for b in batches] or [0.0]
    return {"frames": frames, "fps": frames / wall, "missed": vr.missed_frames - miss0,
            "period_ms": vr.display_period * 1e3,
            "frame_ms_p95": float(np.percentile(frame_ms, 95)),
            "batches": len(batches), "physics_ms_mean": float(np.mean(physics)),
            "physics_ms_max": float(np.max(physics)),
            "budget_ms": mode.budget.frame_s * 1e3, "render_ms": mode.budget.render_s * 1e3,
            "residual_max": max((b[1]["max_position_error"] for b in batches), default=0.0),
            "budget_hits": int(sum(b[1]["budget_hit"] for b in batches)),
            "rtf": (loop.sim_time - sim0) / wall}


def bench(names, seconds: float, scale: float, paused: bool = False) -> list[dict]:
    import xr

    from impulse.app.app import App
    from impulse.app.session import Session
    from impulse.app.window import Viewer

    viewer = Viewer(None, *MIRROR, vsync=False)
    app = App(viewer)
    rows = []
    try:
        for name in names:
            path = SCENES / f"{name}.json"
            if not path.is_file():
                rows.append({"scene": name, "note": f"{name} not in scenes/"})
                continue
            app.set_session(Session.open(str(path)))
            app.session.loop.paused = paused
            if app.vr is None and not app.enter_vr(scale):
                raise RuntimeError(app.errors[0])
            deadline = time.monotonic() + 20
            while app.vr.vr.state != xr.SessionState.FOCUSED and time.monotonic() < deadline:
                viewer.window.dispatch_events()
                viewer.frame()
            r = measure(app, seconds)
            w, h = app.vr.vr.eye_sizes[0]
            rows.append({"scene": name, "bodies": len(app.world.body_names),
                         "eye": f"{w}x{h}", **{k: round(v, 3) if isinstance(v, float) else v
                                               for k, v in r.items()}})
    finally:
        app.close()
        viewer.close()
    return rows


def main(argv=None) -> int:
    p = OneLineParser(prog="impulse bench vr", description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=5.0, help="measuring time per scene")
    p.add_argument("--scenes", nargs="+", default=list(SCENE_NAMES), metavar="NAME",
                   help=f"scene names in scenes/ (default: {' '.join(SCENE_NAMES)})")
    p.add_argument("--scale", type=float, default=1.0, help="per-eye resolution scale")
    p.add_argument("--paused", action="store_true",
                   help="simulation paused: what rendering alone costs (for comparison)")
    p.add_argument("--json", nargs="?", const="-", metavar="OUT.json",
                   help="write the rows as JSON to OUT.json (no file: print JSON, not the table)")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    from impulse.app.vr.runtime import unavailable_reason, use_simulated_headset

    problem = unavailable_reason()
    if problem:
        print(f"impulse: {problem}", file=sys.stderr)
        return 2
    use_simulated_headset()
    from impulse.app.xvfb import ensure_display
    from impulse.engine.bench.joints import format_table

    xvfb = ensure_display(MIRROR)
    try:
        rows = bench(args.scenes, args.seconds, args.scale, args.paused)
    except Exception as e:  # noqa: BLE001 - one line, never a traceback
        print(f"impulse bench vr: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    finally:
        if xvfb is not None:
            xvfb.terminate()
    doc = {"benchmark": "vr", "rows": rows}
    if args.json == "-":
        print(strict_json.dumps(doc))
        return 0
    print(format_table(rows))
    if args.json:
        write_file(args.json, strict_json.dumps(doc, indent=2) + "\n")
    return 0
