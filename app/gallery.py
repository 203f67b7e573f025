"""The bundled scenes for the launcher: file, name and description (on one line)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from impulse.app.paths import REPO_ROOT

SCENES = REPO_ROOT / "scenes"
DEFAULT_SCENE = SCENES / "pendulum.json"


@dataclass
class SceneEntry:
    path: Path
    name: str
    description: str


def one_line(text: str) -> str:
    """The text with every run of white space (line breaks included) made one space."""
    return " ".join(str(text).split())


def scene_entries(folder=SCENES) -> list[SceneEntry]:
    """Every *.json in the folder, sorted by name; unreadable files are listed by file name."""
    out = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            name = doc.get("name") or path.stem
            desc = doc.get("description", "")
        except (OSError, ValueError, AttributeError):
            name, desc = path.stem, "(cannot be read)"
        out.append(SceneEntry(path, str(name), one_line(desc)))
    return sorted(out, key=lambda e: e.name.lower())
