"""Scene thumbnails rendered by the app itself (offscreen, same renderer) and cached as PNG
under <cache>/impulse/thumbs/<sha1 of the file>-<w>x<h>.png.

A thumbnail looks along the scene camera's direction (a little from above) but frames the
scene's bounds (shapes, joint and spring anchors), whatever the scene camera shows, and draws
the joint gizmos a few pixels thick."""
from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import numpy as np

from impulse.app.camera import Camera
from impulse.app.framing import box_corners, fit_points
from impulse.app.render import ImageTarget, RenderOptions
from impulse.app.render.instances import build_instances
from impulse.app.scene_view import SceneView
from impulse.app.screenshot import save_png
from impulse.app.userdirs import cache_dir

THUMB_SIZE = (320, 180)
VERSION = b"thumb-v4"
GIZMO_PX = 2.0          # gizmo radius unit in thumbnail pixels, at least: links ~2 px wide
SETTLE_S = 0.6
SETTLE_WALL_S = 1.0     # heavy scenes (1000 bodies in contact) stop simulating after this


def settle(world):
    """Simulate up to SETTLE_S of the scene, but at most SETTLE_WALL_S of wall time."""
    import time
    steps = int(round(SETTLE_S / world.settings.h))
    start = time.perf_counter()
    chunk = max(1, steps // 12)
    done = 0
    while done < steps and time.perf_counter() - start < SETTLE_WALL_S:
        n = min(chunk, steps - done)
        world.run(n)
        done += n


def thumb_path(scene_path, size=THUMB_SIZE, settled=True) -> Path:
    digest = hashlib.sha1(VERSION + Path(scene_path).read_bytes()).hexdigest()[:20]
    still = "" if settled else "-still"
    return cache_dir() / "thumbs" / f"{digest}-{size[0]}x{size[1]}{still}.png"


def scene_points(scene) -> np.ndarray:
    """What a thumbnail must show: the corners of the solid shapes' box, the body centres,
    the joints' and springs' anchors."""
    pts = [np.asarray(scene.body_pos, dtype=np.float64).reshape(-1, 3)]
    box = build_instances(scene).box
    if box is not None:
        pts.append(box_corners(box))
    joints = scene.joint_drawing
    if joints is not None:
        pts += [joints.anchor.reshape(-1, 3), joints.spring_anchor.reshape(-1, 3)]
    return np.vstack(pts)


def render_world(ctx, renderer, world, size, options: RenderOptions | None = None) -> np.ndarray:
    """The world seen along its own camera's direction (or a default one), framed to fit."""
    camera = Camera()
    if isinstance(getattr(world, "camera", None), dict):
        camera.set_from_dict(world.camera)
    camera.pitch = max(camera.pitch, 0.3)          # a little from above: depth reads better
    scene = SceneView(world)
    opts = replace(options or RenderOptions())
    if len(world.body_names):
        fit_points(camera, scene_points(scene), size[0] / size[1])
        pixel = 2.0 * camera.distance * np.tan(np.radians(camera.fov_deg) / 2.0) / size[1]
        opts.gizmo_radius = max(opts.gizmo_radius, GIZMO_PX * pixel)
    renderer.prepare(scene, opts)
    view = camera.view_matrix()
    proj = camera.projection_matrix(size[0] / size[1])
    target = ImageTarget(ctx, size)
    try:
        renderer.draw(target.fbo, view, proj, opts, size=size)
        return target.read_rgb()
    finally:
        target.release()


def thumbnail(ctx, renderer, scene_path, size=THUMB_SIZE, settled=True) -> Path:
    """Cached thumbnail of a scene file (rendered now if missing). Raises SceneError.
    settled=False: the scene as loaded, without simulating (while the kernels compile)."""
    from impulse.engine import load_scene

    path = thumb_path(scene_path, size, settled)
    if not path.is_file():
        world = load_scene(scene_path)
        if settled:
            settle(world)                                      # in motion, as the scene is meant
        image = render_world(ctx, renderer, world, size)
        save_png(image, path)
    return path
