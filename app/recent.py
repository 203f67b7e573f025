"""Recently opened scene files, most recent first, in <config>/impulse/recent.json."""
from __future__ import annotations

import json
import os
from pathlib import Path

from impulse.app.userdirs import config_dir
from impulse.engine.durable import write_file

LIMIT = 10


def recent_path() -> Path:
    return config_dir() / "recent.json"


def load_recent() -> list[str]:
    """Existing files from the list (a missing or broken list reads as empty)."""
    try:
        items = json.loads(recent_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(items, list):
        return []
    return [p for p in items if isinstance(p, str) and os.path.isfile(p)]


def add_recent(path) -> list[str]:
    """Put `path` first; returns the new list. Write errors are ignored (it is a convenience)."""
    path = str(Path(path).resolve())
    items = [path] + [p for p in load_recent() if p != path]
    items = items[:LIMIT]
    target = recent_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_file(target, json.dumps(items, indent=1))
    except OSError:
        pass
    return items
