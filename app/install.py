"""`impulse install-launcher`: a freedesktop .desktop entry and icon for the current user, so
the app shows in the application menu and opens scene files from the file manager: a MIME
type of its own (application/x-impulse-scene: JSON whose start names the format), never
every application/json file."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from impulse.app.paths import ASSETS, REPO_ROOT
from impulse.app.userdirs import data_home
from impulse.engine.durable import write_file

APP_ID = "impulse"
MIME_TYPE = "application/x-impulse-scene"
MIME_TYPES = f"{MIME_TYPE};"

# shared-mime-info package: a scene is a JSON file whose first bytes hold
# "format": "impulse-scene" (every file `impulse` saves starts so); only those open with
# impulse, not every JSON file
MIME_PACKAGE = f"""<?xml version="1.0" encoding="UTF-8"?>
<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">
  <mime-type type="{MIME_TYPE}">
    <comment>impulse scene</comment>
    <sub-class-of type="application/json"/>
    <icon name="{APP_ID}"/>
    <magic priority="80">
      <match type="string" value="impulse-scene" offset="0:256"/>
    </magic>
    <glob pattern="*.impulse.json" weight="60"/>
  </mime-type>
</mime-info>
"""


def exec_line() -> str:
    """This installation's `impulse` (the script beside this interpreter, as in a venv), else
    the one on PATH, else this interpreter running the package."""
    here = Path(sys.executable).with_name("impulse")
    exe = str(here) if os.access(here, os.X_OK) else shutil.which("impulse")
    cmd = f'"{exe}"' if exe else f'"{sys.executable}" -m impulse.app'
    return f"{cmd} view %f"


def desktop_entry() -> str:
    return "\n".join([
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.5",
        "Name=impulse",
        "GenericName=Multibody physics viewer",
        "Comment=Simulate and edit rigid multibody scenes (impulse-based dynamics)",
        f"Exec={exec_line()}",
        f"Path={REPO_ROOT}",
        f"Icon={APP_ID}",
        "Terminal=false",
        "Categories=Education;Science;Physics;Graphics;",
        f"MimeType={MIME_TYPES}",
        "Keywords=physics;simulation;rigid body;joint;",
        "StartupNotify=true",
        "",
    ])


def install(home_data: Path | None = None) -> list[Path]:
    """Write the entry and icons; returns the written paths."""
    base = Path(home_data) if home_data else data_home()
    apps = base / "applications"
    apps.mkdir(parents=True, exist_ok=True)
    entry = apps / f"{APP_ID}.desktop"
    write_file(entry, desktop_entry())
    written = [entry]
    mime = base / "mime" / "packages" / f"{APP_ID}.xml"
    mime.parent.mkdir(parents=True, exist_ok=True)
    write_file(mime, MIME_PACKAGE)
    written.append(mime)
    icons = base / "icons" / "hicolor"
    for src, sub, name in ((ASSETS / "icons" / "impulse.svg", "scalable/apps", f"{APP_ID}.svg"),
                           (ASSETS / "icons" / "impulse-256.png", "256x256/apps", f"{APP_ID}.png")):
        dst = icons / sub / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        write_file(dst, src.read_bytes())
        written.append(dst)
    for tool, args in (("update-desktop-database", [str(apps)]),
                       ("update-mime-database", [str(base / "mime")]),
                       ("gtk-update-icon-cache", ["-f", "-t", str(icons)])):
        if shutil.which(tool):
            subprocess.run([tool, *args], capture_output=True, check=False, timeout=30)
    return written


def main() -> int:
    for path in install():
        print(f"wrote {path}")
    return 0
