"""Per-user folders (XDG): config, cache, data; created on first use. Documents, pictures
and videos as the desktop names them (platformdirs reads user-dirs.dirs)."""
from __future__ import annotations

import os
from pathlib import Path


def _base(var: str, default: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value else Path.home() / default


def config_dir() -> Path:
    return _base("XDG_CONFIG_HOME", ".config") / "impulse"


def cache_dir() -> Path:
    return _base("XDG_CACHE_HOME", ".cache") / "impulse"


def data_home() -> Path:
    return _base("XDG_DATA_HOME", ".local/share")


def documents_dir() -> Path:
    import platformdirs
    return Path(platformdirs.user_documents_dir())


def pictures_dir() -> Path:
    import platformdirs
    return Path(platformdirs.user_pictures_dir())


def videos_dir() -> Path:
    import platformdirs
    return Path(platformdirs.user_videos_dir())
