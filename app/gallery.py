"""The bundled scenes for the launcher: file, title and description (on one line), read by
the engine's one list of bundled scenes (engine/scenes_list.py), in title order."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from impulse.engine.scenes_list import SCENES_DIR, bundled_scenes

SCENES = Path(SCENES_DIR)
DEFAULT_SCENE = SCENES / "pendulum.json"


@dataclass
class SceneEntry:
    path: Path
    name: str            # the scene's title (its own `name`), else its file name
    description: str


def scene_entries(folder=SCENES) -> list[SceneEntry]:
    """Every *.json in the folder, sorted by title; unreadable files are listed by file name."""
    out = [SceneEntry(Path(s["path"]), s["title"], s["description"])
           for s in bundled_scenes(str(folder))]
    return sorted(out, key=lambda e: e.name.lower())
