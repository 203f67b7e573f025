"""Write an RGB image (height, width, 3) uint8, top row first, to PNG."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def save_png(image: np.ndarray, path) -> Path:
    """Encode with imageio and write durably (engine/durable.py: a killed process never
    leaves a truncated PNG); creates the parent folder. Returns the path."""
    import imageio.v3 as iio

    from impulse.engine.durable import write_file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, iio.imwrite("<bytes>", np.ascontiguousarray(image, dtype=np.uint8),
                                 extension=".png"))
    return path
