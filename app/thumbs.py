"""Scene thumbnails rendered by the app itself (offscreen, same renderer) and cached as PNG
under <cache>/impulse/thumbs/<sha1 of the file>-<w>x<h>.png."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from app.camera import Camera
from app.render import ImageTarget, RenderOptions
from app.scene_view import SceneView
from app.screenshot import save_png
from app.userdirs import cache_dir

THUMB_SIZE = (240, 135)
VERSION = b"thumb-v3"
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


def thumb_path(scene_path, size=THUMB_SIZE) -> Path:
    digest = hashlib.sha1(VERSION + Path(scene_path).read_bytes()).hexdigest()[:20]
    return cache_dir() / "thumbs" / f"{digest}-{size[0]}x{size[1]}.png"


def frame_scene(camera: Camera, scene, instances) -> None:
    """Keep the camera's direction; aim at the bodies and joint anchors and fit them in."""
    pts = [np.asarray(scene.body_pos, dtype=np.float64).reshape(-1, 3)]
    anchors = scene.joint_anchor_world()
    if len(anchors):
        pts.append(np.asarray(anchors).reshape(-1, 3))
    pts = np.vstack(pts + [instances.centre[None, :] + s * instances.radius * np.eye(3)
                           for s in (-1, 1)])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    camera.focus((lo + hi) / 2, max(float(np.linalg.norm(hi - lo)) / 2, 0.1) * 0.9)


def render_world(ctx, renderer, world, size, options: RenderOptions | None = None) -> np.ndarray:
    """The world seen along its own camera's direction (or a default one), framed to fit."""
    camera = Camera()
    if isinstance(getattr(world, "camera", None), dict):
        camera.set_from_dict(world.camera)
    camera.pitch = max(camera.pitch, 0.3)          # a little from above: depth reads better
    scene, opts = SceneView(world), options or RenderOptions()
    renderer.prepare(scene, opts)
    if len(world.body_names):
        frame_scene(camera, scene, renderer.instances)
    view = camera.view_matrix()
    proj = camera.projection_matrix(size[0] / size[1])
    target = ImageTarget(ctx, size)
    try:
        renderer.draw(target.fbo, view, proj, opts, size=size)
        return target.read_rgb()
    finally:
        target.release()


def thumbnail(ctx, renderer, scene_path, size=THUMB_SIZE) -> Path:
    """Cached thumbnail of a scene file (rendered now if missing). Raises SceneError."""
    from engine import load_scene

    path = thumb_path(scene_path, size)
    if not path.is_file():
        world = load_scene(scene_path)
        settle(world)                                          # in motion, as the scene is meant
        image = render_world(ctx, renderer, world, size)
        save_png(image, path)
    return path
