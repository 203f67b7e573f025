"""``python -m impulse.app.vr``: show the demo scene in the headset and report the frame rate.

Without an OpenXR runtime it prints one line saying how to install one and exits with 2.
``--simulated`` asks Monado for its simulated headset and null compositor (no display).
"""

from __future__ import annotations

import argparse
import time

from . import runtime


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m impulse.app.vr",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=200, help="frames to render (default 200)")
    parser.add_argument("--simulated", action="store_true",
                        help="Monado simulated headset + null compositor")
    parser.add_argument("--scale", type=float, default=1.0, help="per-eye resolution scale")
    args = parser.parse_args(argv)
    if args.simulated:
        runtime.use_simulated_headset()
    try:
        from .demo_scene import DemoScene
        from .session import VRSession
        vr = VRSession(resolution_scale=args.scale)
    except runtime.RuntimeNotFound as exc:
        runtime.exit_without_runtime(exc)
    except ImportError as exc:
        runtime.exit_without_runtime(RuntimeError(
            f"VR needs pyopenxr ({exc.name} is missing): pip install pyopenxr"))
    with vr:
        scene = DemoScene(vr.ctx)

        def render_eye(eye, fbo, view, proj):
            scene.render(fbo, view, proj)

        import xr
        if not vr.wait_for_state(xr.SessionState.FOCUSED, 10.0, render_eye):
            print(f"impulse: the session did not reach FOCUSED (state {vr.state.name})")
            return 1
        start, submitted, work = time.perf_counter(), vr.frames_submitted, 0.0
        for _ in range(args.frames):
            if not vr.run_frame(render_eye):
                break
            work += vr.frame_work_s
        elapsed = time.perf_counter() - start
        frames = vr.frames_submitted - submitted
        width, height = vr.eye_sizes[0]
        print(f"{vr.system_name} ({vr.runtime_name}), {width}x{height} per eye: "
              f"{frames / elapsed:.1f} frames/s over {frames} frames, "
              f"predicted display period {vr.display_period * 1e3:.1f} ms, "
              f"render+submit {work / max(frames, 1) * 1e3:.1f} ms/frame")
        scene.release()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
