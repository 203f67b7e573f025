"""The wheel (issue 19): built as a release is (`impulse compile --bundle`, then `pip wheel
.`) from the checkout's files, installed into a fresh venv outside it, it carries the scenes,
shaders, icons and compiled kernels, starts without compiling, and runs `impulse`, `impulse
view pendulum` (a screenshot under Xvfb), `impulse sim chain8 --json` and the desktop entry,
importing only `impulse.*` (no top-level `engine` or `app`)."""
import json
import os
import shutil
import subprocess
import sys
import time
import venv
import zipfile
from pathlib import Path

import numba
import pytest

from impulse.engine import kernel_cache

from gui_util import start_xvfb

pytestmark = [pytest.mark.slow, pytest.mark.gui]
ROOT = Path(__file__).resolve().parent.parent


def checkout_copy(to: Path) -> Path:
    """The checkout's files that git tracks or would track (no build/, no prebuilt/)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True)
    if listed.returncode != 0:                  # not a git checkout
        shutil.copytree(ROOT, to, ignore=shutil.ignore_patterns(
            ".git", "build", "*.egg-info", "prebuilt", "__pycache__"))
        return to
    for name in listed.stdout.splitlines():
        if (ROOT / name).is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, to / name)
    return to


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """`impulse compile --bundle` (this session's compiled kernels: the conftest compiled
    them) into a copy of the checkout, then `pip wheel` of that copy."""
    src = checkout_copy(tmp_path_factory.mktemp("src"))
    kernel_cache.bundle(src / "engine" / "prebuilt")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                    "-w", str(out), str(src)], check=True, capture_output=True, timeout=600)
    (path,) = out.glob("impulse-*.whl")
    return path


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """A fresh venv (no system packages) with the wheel and its dependencies."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    # numba as here: a bundled cache serves one numba version (kernel_cache.use)
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel),
                    f"numba=={numba.__version__}"], check=True, capture_output=True,
                   timeout=1200)
    return env_dir


def run(installed, tmp_path, *args, env=None, timeout=1200):
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    environ.update(XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
                   **(env or {}))
    return subprocess.run([str(installed / "bin" / "impulse"), *args], cwd=tmp_path,
                          capture_output=True, text=True, env=environ, timeout=timeout)


def test_the_wheel_holds_the_package_scenes_shaders_and_icons(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "impulse/engine/__init__.py" in names and "impulse/app/__main__.py" in names
    assert "impulse/scenes/pendulum.json" in names and "impulse/scenes/chain8.json" in names
    assert "impulse/assets/shaders/shape.vert.glsl" in names
    assert "impulse/assets/icons/impulse.svg" in names
    # the estimates' manifest and the parallel compile's plan (engine/compile_plan.py)
    assert {"impulse/engine/kernel_manifest.json", "impulse/engine/kernel_plan.pkl.xz"} <= \
        set(names)
    tops = {n.split("/")[0] for n in names if not n.startswith("impulse-")}
    assert tops == {"impulse"}                  # no top-level engine/ or app/
    key = kernel_cache.source_hash()
    kernels = [n for n in names if n.startswith(f"impulse/engine/prebuilt/{key}/")]
    assert {f"impulse/engine/prebuilt/{key}/ready-{f}" for f in ("step", "interaction",
                                                                  "contacts")} <= set(kernels)
    assert len([n for n in kernels if n.endswith(".nbc")]) > 200


def test_a_first_start_from_the_wheel_compiles_nothing(installed, tmp_path):
    """An empty kernel cache: the wheel's prebuilt kernels fill it, and `impulse sim` runs
    at once (compiling would take minutes)."""
    cache = tmp_path / "kernels"
    t = time.perf_counter()
    sim = run(installed, tmp_path, "sim", "chain8", "--duration", "0.5", "--json",
              env={"IMPULSE_KERNEL_CACHE": str(cache)})
    seconds = time.perf_counter() - t
    assert sim.returncode == 0, sim.stderr
    assert json.loads(sim.stdout)["steps"] == 50
    assert "compil" not in sim.stderr, sim.stderr
    assert seconds < 60, seconds
    (folder,) = cache.iterdir()
    assert folder.name == kernel_cache.source_hash() and kernel_cache.kernels_cached(folder)


def test_the_installed_commands_run_outside_the_checkout(installed, tmp_path):
    version = run(installed, tmp_path, "--version")
    assert version.returncode == 0 and version.stdout.strip()
    listing = run(installed, tmp_path, "scenes")
    assert listing.returncode == 0 and "pendulum" in listing.stdout
    where = subprocess.run([str(installed / "bin" / "python"), "-c",
                            "import impulse.engine as e, importlib.util as u; print(e.__file__); "
                            "print(u.find_spec('engine'), u.find_spec('app'))"],
                           cwd=tmp_path, capture_output=True, text=True, check=True)
    assert str(installed) in where.stdout and "None None" in where.stdout
    compiled = run(installed, tmp_path, "-q", "compile")
    assert compiled.returncode == 0, compiled.stderr
    sim = run(installed, tmp_path, "sim", "chain8", "--duration", "0.5", "--json")
    assert sim.returncode == 0, sim.stderr
    report = json.loads(sim.stdout)
    assert report["steps"] == 50 and report["scene"] == "chain8.json"


def test_the_installed_viewer_and_desktop_entry(installed, tmp_path):
    xvfb, display = start_xvfb((1024, 700))
    try:
        shot = tmp_path / "pendulum.png"
        out = run(installed, tmp_path, "view", "pendulum", "--frames", "20", "--screenshot",
                  str(shot), env={"DISPLAY": display})
        assert out.returncode == 0, out.stderr
        assert shot.is_file() and shot.stat().st_size > 10_000
    finally:
        xvfb.terminate()
        xvfb.wait(timeout=10)
    entry = run(installed, tmp_path, "install-launcher")
    assert entry.returncode == 0, entry.stderr
    desktop = next((tmp_path / "data" / "applications").glob("*.desktop")).read_text()
    assert f"Exec=\"{installed / 'bin' / 'impulse'}\"" in desktop or \
        str(installed / "bin" / "impulse") in desktop
