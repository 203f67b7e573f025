"""`impulse view` screenshots of every bundled scene, bad files on the command line, and
`impulse install-launcher` (Xvfb needed for the screenshots: the test fails without it)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
SCENE_FILES = sorted((REPO / "scenes").glob("*.json"))


@pytest.fixture(scope="module")
def display(xvfb):
    return xvfb


def impulse(*args, env=None, timeout=120):
    return subprocess.Popen([sys.executable, "-m", "impulse.app", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.gui
def test_screenshot_of_every_bundled_scene(display, tmp_path):
    import imageio.v3 as iio

    env = {**os.environ, "DISPLAY": display, "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    images, pending = {}, []
    for path in SCENE_FILES:
        out = tmp_path / f"{path.stem}.png"
        pending.append((path, out, impulse("view", str(path), "--screenshot", str(out),
                                           "--frames", "20", "--size", "480x270", "--no-ui",
                                           env=env)))
        if len(pending) == 2 or path == SCENE_FILES[-1]:          # two at a time (2 cores)
            for p, o, proc in pending:
                stdout, stderr = proc.communicate(timeout=180)
                assert proc.returncode == 0, stderr[-2000:]
                assert f"screenshot: {o}" in stdout
                # paced: 20 frames are 20/60 s of simulated time, whatever the wall clock
                t = float(stdout.split("t = ")[1].split(" s")[0])
                h = json.loads(p.read_text()).get("settings", {}).get("h", 0.01)
                assert abs(t - 20 / 60) <= h + 1e-3, (p.stem, t)
                images[p.stem] = iio.imread(o)[..., :3].astype(np.int16)
            pending = []
    assert len(images) == len(SCENE_FILES) >= 5
    background = np.array([0.16, 0.18, 0.22]) * 255
    for name, img in images.items():
        assert img.shape == (270, 480, 3), name
        assert len(np.unique(img.reshape(-1, 3), axis=0)) > 100, f"{name} is blank"
        drawn = (np.abs(img - background).sum(axis=2) > 40).mean()
        assert drawn > 0.001, f"{name}: nothing drawn"              # thin rods count too
    names = list(images)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            diff = np.abs(images[a] - images[b]).sum(axis=2) > 30
            assert diff.mean() > 0.002, f"{a} and {b} look the same"


@pytest.mark.slow
def test_view_bad_file_prints_one_line_and_exits_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "impulse-scene", "version": 1,
                               "bodies": [{"name": "x", "mass": -2}]}))
    for path in (bad, tmp_path / "missing.json"):
        proc = impulse("view", str(path))
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 2
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
        assert str(path) in err
    assert "$.bodies[0].mass" in subprocess.run(
        [sys.executable, "-m", "impulse.app", "view", str(bad)], cwd=REPO, capture_output=True,
        text=True, timeout=60).stderr


def test_install_launcher_writes_desktop_entry_and_icons(tmp_path):
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path)}
    proc = impulse("install-launcher", env=env)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    entry = (tmp_path / "applications" / "impulse.desktop").read_text()
    assert entry.startswith("[Desktop Entry]\n")
    fields = dict(line.split("=", 1) for line in entry.splitlines()[1:] if "=" in line)
    assert fields["Type"] == "Application" and fields["Icon"] == "impulse"
    assert fields["MimeType"].split(";") == ["application/x-impulse-scene", ""]   # not all JSON
    mime = (tmp_path / "mime" / "packages" / "impulse.xml").read_text()
    assert 'type="application/x-impulse-scene"' in mime and "impulse-scene" in mime
    assert fields["Exec"].endswith(" view %f")
    assert (tmp_path / "icons/hicolor/scalable/apps/impulse.svg").is_file()
    assert (tmp_path / "icons/hicolor/256x256/apps/impulse.png").stat().st_size > 1000


@pytest.mark.slow
def test_sim_and_bench_still_go_to_the_engine_cli(scene_path):
    res = subprocess.run([sys.executable, "-m", "impulse.app", "sim", scene_path("pendulum.json"),
                          "--duration", "0.1", "--json"], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["steps"] == 10
