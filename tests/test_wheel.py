"""The wheel (issue 19): built from the checkout, installed into a fresh venv outside it,
it carries the scenes, shaders and icons and runs `impulse`, `impulse view pendulum`
(a screenshot under Xvfb), `impulse sim chain8 --json` and the desktop entry, importing
only `impulse.*` (no top-level `engine` or `app`)."""
import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from gui_util import start_xvfb

pytestmark = [pytest.mark.slow, pytest.mark.gui]
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                    "-w", str(out), str(ROOT)], check=True, capture_output=True, timeout=600)
    (path,) = out.glob("impulse-*.whl")
    return path


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """A fresh venv (no system packages) with the wheel and its dependencies."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)], check=True,
                   capture_output=True, timeout=1200)
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
    tops = {n.split("/")[0] for n in names if not n.startswith("impulse-")}
    assert tops == {"impulse"}                  # no top-level engine/ or app/


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
