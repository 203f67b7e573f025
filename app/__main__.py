"""`impulse` / `python -m app`: the command-line entry.

    impulse                                  the launcher (gallery of bundled scenes)
    impulse view [SCENE.json]                open a scene (no scene: the launcher)
    impulse view SCENE --screenshot OUT.png --frames N [--size WxH] [--no-ui]
                                             simulate and render N frames, save the last, exit
    impulse install-launcher                 desktop entry + icon for the application menu
    impulse bench viewer [--json OUT]        viewer fps and real-time factor (app/bench_viewer.py)
    impulse sim ... / impulse bench ...      headless engine commands (engine/cli.py)

A bad scene file given to `view` prints one line (file: JSON path: problem) and exits 2.
"""
import argparse
import os
import sys


def parse_view(argv):
    p = argparse.ArgumentParser(prog="impulse view", description="Open a scene in the viewer.")
    p.add_argument("scene", nargs="?", help="scene file (.json); none: the launcher")
    p.add_argument("--screenshot", help="save the last frame as PNG and exit (with --frames)")
    p.add_argument("--frames", type=int, default=None, help="stop after this many frames")
    p.add_argument("--size", default="1280x720", help="window size WxH")
    p.add_argument("--no-ui", action="store_true", help="hide the panels")
    p.add_argument("--no-vsync", action="store_true")
    p.add_argument("--paused", action="store_true", help="start paused")
    args = p.parse_args(argv)
    try:
        args.width, args.height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        p.error(f"--size must look like 1280x720, got {args.size!r}")
    if args.screenshot and not args.frames:
        args.frames = 60
    return args


def view(argv) -> int:
    args = parse_view(argv)
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

        viewer = Viewer(None, args.width, args.height, vsync=not (args.no_vsync or args.frames),
                        show_ui=not args.no_ui)
    except Exception as e:  # noqa: BLE001 - no X display / no OpenGL: one line, no traceback
        print(f"impulse: cannot open a window (display {os.environ.get('DISPLAY') or 'not set'}): "
              f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1
    app = App(viewer)
    if session is not None:
        app.set_session(session)
        session.loop.paused = args.paused
        from app.recent import add_recent

        add_recent(args.scene)
    try:
        viewer.run(frames=args.frames, screenshot=args.screenshot)
    finally:
        app.close()
        viewer.close()
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
    if cmd.endswith(".json") and os.path.isfile(cmd):
        sys.exit(view(argv))               # `impulse SCENE.json` (file managers, drops)
    from engine import cli

    sys.exit(cli.main(argv))


if __name__ == "__main__":
    main()
