"""Finding an OpenXR runtime, and the one-line message when there is none.

Search order: the ``XR_RUNTIME_JSON`` environment variable (the OpenXR loader's own
override), then the Monado that ``bash .ci/install-monado`` puts under ``/opt/monado``,
then the loader's standard active-runtime manifests (a runtime installed system-wide, such
as SteamVR or a packaged Monado).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

MONADO_PREFIX = Path("/opt/monado")
MONADO_JSON = MONADO_PREFIX / "share/openxr/1/openxr_monado.json"

# Environment for Monado's simulated headset with the null compositor (no display, no GPU).
SIMULATED_ENV = {"SIMULATED_ENABLE": "1", "XRT_COMPOSITOR_NULL": "1"}

# Monado's logging, quietened for its simulated headset (each unless the user set it): its
# start-up report (builders and devices: PROBER_LOG; the null compositor's banner and the
# Vulkan device: XRT_COMPOSITOR_LOG; the rest and the per-frame "Frame late by ..." and
# "Dropping old missed frame ..." warnings: XRT_LOG) down to errors, and the OpenXR state
# tracker's own prints (instance info, selected devices) off. About 120 lines per run
# become one (the compositor thread's "Raised priority" line, logged at a fixed level).
# XRT_LOG=info OXR_NO_PRINTING=0 (etc.) bring them back.
QUIET_MONADO_ENV = {"XRT_LOG": "error", "PROBER_LOG": "error", "XRT_COMPOSITOR_LOG": "error",
                    "OXR_NO_PRINTING": "1"}

INSTALL_HINT = (
    "no OpenXR runtime found; install one (e.g. `bash .ci/install-monado`, which builds "
    f"Monado into {MONADO_PREFIX}) and run with XR_RUNTIME_JSON={MONADO_JSON} "
    "(add SIMULATED_ENABLE=1 XRT_COMPOSITOR_NULL=1 for a simulated headset without a display)"
)


class RuntimeNotFound(RuntimeError):
    """No usable OpenXR runtime; ``str(exc)`` is a one-line message for the user."""


def _active_runtime_manifests() -> list[Path]:
    """The loader's standard places for the active runtime manifest on Linux."""
    config_home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    config_dirs = os.environ.get("XDG_CONFIG_DIRS") or "/etc/xdg"
    dirs = [config_home] + [Path(d) for d in config_dirs.split(":") if d]
    dirs += [Path("/etc"), Path("/usr/local/share"), Path("/usr/share")]
    return [d / "openxr/1/active_runtime.json" for d in dirs]


def find_runtime(environ=None) -> Path | None:
    """Path of the runtime manifest the session will use, or None when there is none.

    A set ``XR_RUNTIME_JSON`` wins even if its file is missing (then None: the user asked
    for that runtime, silently taking another one would be surprising).
    """
    env = os.environ if environ is None else environ
    explicit = env.get("XR_RUNTIME_JSON")
    if explicit:
        path = Path(explicit)
        return path if path.is_file() else None
    for path in [MONADO_JSON, *_active_runtime_manifests()]:
        if path.is_file():
            return path
    return None


def missing_runtime_message(environ=None) -> str:
    """One line saying that no runtime was found (and where we looked) and how to get one."""
    env = os.environ if environ is None else environ
    explicit = env.get("XR_RUNTIME_JSON")
    if explicit:
        return f"XR_RUNTIME_JSON={explicit} does not exist; {INSTALL_HINT}"
    return INSTALL_HINT


def unavailable_reason(environ=None) -> str | None:
    """One line why VR cannot start here (no runtime, no pyopenxr), or None."""
    if find_runtime(environ) is None:
        return missing_runtime_message(environ)
    try:
        import xr  # noqa: F401
    except ImportError:
        return "VR needs pyopenxr: pip install pyopenxr"
    return None


def require_runtime(environ=None) -> Path:
    """The runtime manifest, exported as ``XR_RUNTIME_JSON`` so the loader uses it.

    Raises RuntimeNotFound with the one-line install hint when there is none.
    """
    env = os.environ if environ is None else environ
    path = find_runtime(env)
    if path is None:
        raise RuntimeNotFound(missing_runtime_message(env))
    env["XR_RUNTIME_JSON"] = str(path)
    return path


def use_simulated_headset(environ=None) -> None:
    """Ask Monado for its simulated headset and null compositor (tests, headless runs)."""
    env = os.environ if environ is None else environ
    for key, value in SIMULATED_ENV.items():
        env.setdefault(key, value)
    quiet_simulated_runtime(env)


def _truthy(value) -> bool:
    return str(value or "").strip().lower() not in ("", "0", "false", "no", "off")


def is_monado(manifest: Path | None) -> bool:
    """True when the runtime manifest is Monado's (its file or its library says so)."""
    if manifest is None:
        return False
    if "monado" in manifest.name.lower():
        return True
    try:
        import json

        library = json.loads(manifest.read_text())["runtime"]["library_path"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return "monado" in str(library).lower()


def simulated_monado(environ=None) -> bool:
    """True when the session will run on Monado's simulated headset (SIMULATED_ENABLE or
    its null compositor asked for)."""
    env = os.environ if environ is None else environ
    return (is_monado(find_runtime(env))
            and (_truthy(env.get("SIMULATED_ENABLE")) or _truthy(env.get("XRT_COMPOSITOR_NULL"))))


def quiet_simulated_runtime(environ=None) -> bool:
    """With Monado's simulated headset, set QUIET_MONADO_ENV's log levels where the user
    has not set them (before the runtime is loaded: Monado reads them once). True if it
    applies."""
    env = os.environ if environ is None else environ
    if not simulated_monado(env):
        return False
    for key, value in QUIET_MONADO_ENV.items():
        env.setdefault(key, value)
    return True


def exit_without_runtime(exc: BaseException, stream=None) -> NoReturn:
    """Print the one-line message for ``exc`` (no traceback) and exit with status 2."""
    print(f"impulse: {exc}", file=stream or sys.stderr)
    raise SystemExit(2)
