"""`impulse` / `python -m app`: the command-line entry.

    impulse                                  the launcher (gallery of bundled scenes)
    impulse view [SCENE.json]                open a scene (no scene: the launcher)
    impulse view SCENE --screenshot OUT.png --frames N [--size WxH] [--no-ui]
                                             simulate and render N frames, save the last, exit;
                                             each frame is 1/60 s of simulated time (--time T:
                                             the frames of T seconds); --sync-physics: step
                                             inside the frames, no thread
    impulse view SCENE --vr                  the scene in an OpenXR headset, this window mirrors
    impulse install-launcher                 desktop entry + icon for the application menu
    impulse bench viewer [--json OUT]        viewer fps and real-time factor (app/bench_viewer.py)
    impulse bench vr [--json [OUT]]          VR frames/s and missed frames (app/bench_vr.py)
    impulse sim ... / impulse bench ...      headless engine commands (engine/cli.py)

A bad scene file given to `view` prints one line (file: JSON path: problem) and exits 2;
so does `view --vr` without an OpenXR runtime (the line says how to install one).
"""
import argparse
import os
import sys


def parse_view(argv):
    from engine.cli import OneLineParser
    p = OneLineParser(prog="impulse view", description="Open a scene in the viewer.")
    p.add_argument("scene", nargs="?", help="scene file (.json); none: the launcher")
    p.add_argument("--screenshot", help="save the last frame as PNG and exit (with --frames)")
    p.add_argument("--frames", type=_positive_int, default=None,
                   help="render this many frames, each 1/60 s of simulated time, then exit")
    p.add_argument("--time", type=_positive_float, default=None, metavar="T",
                   help="like --frames: the frames of T seconds of simulated time")
    p.add_argument("--size", default="1280x720", help="window size WxH")
    p.add_argument("--no-ui", action="store_true", help="hide the panels")
    p.add_argument("--no-vsync", action="store_true")
    p.add_argument("--paused", action="store_true", help="start paused")
    p.add_argument("--sync-physics", action="store_true",
                   help="step the physics inside each frame (no physics thread: frames wait)")
    p.add_argument("--vr", action="store_true",
                   help="show the scene in an OpenXR headset (the window becomes the mirror)")
    args = p.parse_args(argv)
    if args.vr and not args.scene:
        p.error("--vr needs a scene file")
    try:
        args.width, args.height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        p.error(f"--size must look like 1280x720, got {args.size!r}")
    if args.time is not None:
        if args.frames is not None:
            p.error("give --frames or --time, not both")
        args.frames = max(1, round(args.time * FRAME_RATE))
    if args.screenshot and not args.frames:
        args.frames = 60
    return args


FRAME_RATE = 60      # --frames / --time: simulated frames per second


def _positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return v


def _positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < v < 1e6:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number of seconds")
    return v


def view(argv) -> int:
    args = parse_view(argv)
    if args.vr:
        from app.vr.runtime import unavailable_reason

        problem = unavailable_reason()
        if problem:
            print(f"impulse: {problem}", file=sys.stderr)
            return 2
    session = None
    if args.scene:
        from app.session import Session
        from engine import SceneError

        try:
            session = Session.open(args.scene)
        except SceneError as e:
            print(f"impulse: {e}", file=sys.stderr)
            return 2
    try:
        from app.app import App
        from app.window import Viewer

        viewer = Viewer(None, args.width, args.height,
                        vsync=not (args.no_vsync or args.frames or args.vr), show_ui=not args.no_ui)
    except Exception as e:  # noqa: BLE001 - no X display / no OpenGL: one line, no traceback
        print(f"impulse: cannot open a window (display {os.environ.get('DISPLAY') or 'not set'}): "
              f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1
    app = App(viewer, threaded=not args.sync_physics, open_paused=args.paused,
              frame_dt=1.0 / FRAME_RATE if args.frames and not args.vr else None)
    if session is not None:
        app.set_session(session)
        from app.recent import add_recent

        add_recent(args.scene)
    if args.vr and not app.enter_vr():
        print(f"impulse: {app.errors[0] if app.errors else 'VR did not start'}", file=sys.stderr)
        app.close()
        viewer.close()
        return 2
    try:
        viewer.run(frames=args.frames, screenshot=args.screenshot)
    finally:
        app.close()
        viewer.close()
    if args.vr:
        print(f"vr: {app.status}")
    if args.screenshot:
        print(f"screenshot: {args.screenshot} ({viewer.frame_count} frames, "
              f"t = {session.world.time if session else 0:.3f} s)")
    return 0


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("view", "sim", "bench") or argv[0].endswith(".json"):
        from engine.warmup import announce_first_compile
        announce_first_compile()
    if not argv:
        sys.exit(view([]))
    cmd = argv[0]
    if cmd == "view":
        sys.exit(view(argv[1:]))
    if cmd == "install-launcher":
        from app.install import main as install_main

        sys.exit(install_main())
    if cmd == "bench" and len(argv) > 1 and argv[1] == "viewer":
        from app.bench_viewer import main as bench_main

        sys.exit(bench_main(argv[2:]))
    if cmd == "bench" and len(argv) > 1 and argv[1] == "vr":
        from app.bench_vr import main as bench_vr_main

        sys.exit(bench_vr_main(argv[2:]))
    if cmd.endswith(".json") and os.path.isfile(cmd):
        sys.exit(view(argv))               # `impulse SCENE.json` (file managers, drops)
    from engine import cli

    sys.exit(cli.main(argv))


if __name__ == "__main__":
    main()
