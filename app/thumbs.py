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
VERSION = b"thumb-v1"


def thumb_path(scene_path, size=THUMB_SIZE) -> Path:
    digest = hashlib.sha1(VERSION + Path(scene_path).read_bytes()).hexdigest()[:20]
    return cache_dir() / "thumbs" / f"{digest}-{size[0]}x{size[1]}.png"


def render_world(ctx, renderer, world, size, options: RenderOptions | None = None) -> np.ndarray:
    """The world seen from its own camera (or a default one), as an RGB image."""
    camera = Camera()
    if isinstance(getattr(world, "camera", None), dict):
        camera.set_from_dict(world.camera)
    view = camera.view_matrix()
    proj = camera.projection_matrix(size[0] / size[1])
    target = ImageTarget(ctx, size)
    try:
        renderer.render(target.fbo, view, proj, SceneView(world), options or RenderOptions(),
                        size=size)
        return target.read_rgb()
    finally:
        target.release()


def thumbnail(ctx, renderer, scene_path, size=THUMB_SIZE) -> Path:
    """Cached thumbnail of a scene file (rendered now if missing). Raises SceneError."""
    from engine import load_scene

    path = thumb_path(scene_path, size)
    if not path.is_file():
        image = render_world(ctx, renderer, load_scene(scene_path), size)
        save_png(image, path)
    return path
