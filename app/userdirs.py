"""Per-user folders from platformdirs: config, cache, data (XDG on Linux, so XDG_CONFIG_HOME
and friends move them); documents, pictures and videos as the desktop names them
(platformdirs reads user-dirs.dirs). The cache folder is the one engine.kernel_cache uses."""
from __future__ import annotations

from pathlib import Path

import platformdirs


def config_dir() -> Path:
    return platformdirs.user_config_path("impulse")


def cache_dir() -> Path:
    return platformdirs.user_cache_path("impulse")


def data_home() -> Path:
    """The user's data folder itself (~/.local/share), where desktop entries and icons go."""
    return platformdirs.user_data_path()


def documents_dir() -> Path:
    return platformdirs.user_documents_path()


def pictures_dir() -> Path:
    return platformdirs.user_pictures_path()


def videos_dir() -> Path:
    return platformdirs.user_videos_path()
