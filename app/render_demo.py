"""Render demo: every shape kind (or N boxes) with shadows, grid and the View panel.

    python -m app.render_demo                     # interactive
    python -m app.render_demo --boxes 1000        # benchmark scene
    python -m app.render_demo --screenshot out.png --frames 60   # headless (under xvfb-run)
"""
from __future__ import annotations

import argparse
import sys
import time

from app.demo_world import box_stack, gallery
from app.loop import FixedStepLoop
from app.ui.view_panel import draw_view_panel
from app.window import Viewer


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m app.render_demo", description=__doc__.splitlines()[0])
    p.add_argument("--boxes", type=int, default=0, help="show N boxes instead of the gallery")
    p.add_argument("--frames", type=int, default=None, help="stop after this many frames")
    p.add_argument("--screenshot", default=None, help="save a PNG (view + UI) at the end")
    p.add_argument("--size", default="1280x720", help="window size WxH")
    p.add_argument("--samples", type=int, default=None,
                   help="MSAA samples (0 = off; default 4 on GPUs, 0 on llvmpipe)")
    p.add_argument("--shadow-size", type=int, default=None,
                   help="shadow map texels (default 2048 on GPUs, 1024 on llvmpipe)")
    p.add_argument("--no-ui", action="store_true", help="hide the ImGui panel")
    p.add_argument("--no-vsync", action="store_true")
    args = p.parse_args(argv)
    try:
        args.width, args.height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        p.error(f"--size must look like 1280x720, got {args.size!r}")
    return args


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    world = box_stack(args.boxes) if args.boxes > 0 else gallery()
    viewer = Viewer(world, args.width, args.height, title="impulse render demo",
                    vsync=not args.no_vsync, samples=args.samples, shadow_size=args.shadow_size,
                    show_ui=not args.no_ui)
    viewer.options.show_com = args.boxes == 0
    viewer.options.show_contacts = args.boxes == 0
    loop = FixedStepLoop(world.step, world.settings.h, max_steps=8)
    viewer.loop = loop
    viewer.update = lambda dt: loop.advance(dt)
    viewer.draw_ui = lambda: draw_view_panel(viewer, loop)
    start, cpu = time.perf_counter(), time.process_time()
    viewer.run(frames=args.frames, screenshot=args.screenshot)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    if args.frames:
        # CPU time includes Mesa llvmpipe's render threads: a load-independent cost measure
        print(f"{viewer.frame_count} frames in {wall:.2f} s; recent {viewer.fps:.1f} fps; "
              f"process CPU {cpu / max(viewer.frame_count, 1) * 1000:.1f} ms/frame; "
              f"real-time factor {loop.real_time_factor:.2f}")
        if args.screenshot:
            print(f"screenshot: {args.screenshot}")
    viewer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
