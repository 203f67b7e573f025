"""Locate the repository's `assets/` folder (next to `app/`, also for editable installs)."""
from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
ASSETS = REPO_ROOT / "assets"
SHADERS = ASSETS / "shaders"


def shader_path(name: str) -> Path:
    """Path of `assets/shaders/<name>`; raises FileNotFoundError naming the place if missing."""
    path = SHADERS / name
    if not path.is_file():
        raise FileNotFoundError(f"shader {name!r} not found in {SHADERS}")
    return path
