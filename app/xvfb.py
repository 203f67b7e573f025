"""Start a private Xvfb server when there is no display (benchmarks on headless machines)."""
from __future__ import annotations

import os
import shutil
import subprocess


def ensure_display(size=(1280, 720)):
    """Returns the Xvfb process started (or None when DISPLAY is already set)."""
    if os.environ.get("DISPLAY"):
        return None
    exe = shutil.which("Xvfb")
    if not exe:
        raise RuntimeError("no DISPLAY and no Xvfb (install xvfb, or run under xvfb-run)")
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen([exe, "-displayfd", str(write_fd), "-screen", "0",
                             f"{size[0]}x{size[1]}x24", "-nolisten", "tcp"],
                            pass_fds=(write_fd,), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd) as f:
        number = f.readline().strip()
    if not number:
        proc.terminate()
        raise RuntimeError("Xvfb did not start")
    os.environ["DISPLAY"] = f":{number}"
    return proc
