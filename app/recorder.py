"""Video of the 3D view to MP4 (imageio + imageio-ffmpeg), one frame per rendered frame,
captured from the offscreen render path."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np


def default_media_path(kind: str, ext: str, folder=None) -> Path:
    """<folder or cwd>/impulse-<kind>-<date-time>.<ext>, not overwriting anything."""
    base = Path(folder) if folder else Path.cwd()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = base / f"impulse-{kind}-{stamp}.{ext}"
    i = 2
    while path.exists():
        path = base / f"impulse-{kind}-{stamp}-{i}.{ext}"
        i += 1
    return path


class Recorder:
    def __init__(self, fps: int = 30):
        self.fps = fps
        self.writer = None
        self.path: Path | None = None
        self.frames = 0
        self.size = None

    @property
    def active(self) -> bool:
        return self.writer is not None

    def start(self, path) -> None:
        import imageio.v2 as imageio

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.writer = imageio.get_writer(str(self.path), fps=self.fps, codec="libx264",
                                         quality=7, macro_block_size=1,
                                         ffmpeg_log_level="error")
        self.frames = 0
        self.size = None

    def add(self, image: np.ndarray) -> None:
        """Append an RGB frame; cropped to even sizes (H.264) and to the first frame's size."""
        if self.writer is None:
            return
        h, w = image.shape[:2]
        if self.size is None:
            self.size = (h - h % 2, w - w % 2)
        fh, fw = self.size
        frame = np.zeros((fh, fw, 3), np.uint8)
        frame[:min(h, fh), :min(w, fw)] = image[:fh, :fw]
        self.writer.append_data(frame)
        self.frames += 1

    def stop(self) -> Path | None:
        if self.writer is None:
            return None
        self.writer.close()
        self.writer = None
        return self.path
