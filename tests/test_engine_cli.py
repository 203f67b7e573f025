"""`impulse sim` and `impulse bench` as a user runs them (subprocesses)."""
import csv
import json
import os
import subprocess
import sys

import pytest

KEYS = ["scene", "steps", "sim_time", "wall_time", "realtime_factor", "corrections",
        "iterations_per_step_mean", "max_position_error", "max_velocity_error",
        "step_halvings", "energy_initial", "energy_final", "energy_abs_drift_mean",
        "energy_abs_drift_max"]


def impulse(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def test_sim_json_has_the_promised_keys(scene_path):
    r = impulse("sim", scene_path("pendulum.json"), "--duration", "1", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for k in KEYS:
        assert k in out
    assert out["steps"] == 100 and out["sim_time"] == pytest.approx(1.0)
    assert out["max_position_error"] <= 1e-9


def test_sim_overrides_and_trajectory(tmp_path, scene_path):
    traj = tmp_path / "t.csv"
    r = impulse("sim", scene_path("double_pendulum.json"), "--duration", "0.5", "--h", "0.01",
                "--eps-pos", "1e-7", "--trajectory", str(traj), "--every", "5", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["steps"] == 50 and out["max_position_error"] <= 1e-7
    rows = list(csv.reader(traj.open()))
    assert rows[0] == "t body x y z qw qx qy qz vx vy vz wx wy wz".split()
    assert len(rows) == 1 + 11 * 2  # 11 recorded times x 2 dynamic bodies
    assert {r[1] for r in rows[1:]} == {"upper", "lower"}


@pytest.mark.parametrize("content, code, words", [
    ('{"format": "impulse-scene", "version": 1, "bodies": [{"name": "a", "mass": -1}]}', 2,
     "$.bodies[0].mass"),
    ("{not json", 2, "invalid JSON"),
])
def test_bad_scene_one_line_exit_2(tmp_path, content, code, words):
    p = tmp_path / "bad.json"
    p.write_text(content)
    r = impulse("sim", str(p))
    assert r.returncode == code
    assert words in r.stderr and str(p) in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


@pytest.mark.parametrize("args", [["sim"], ["sim", "x.json", "--h", "0"],
                                  ["sim", "x.json", "--duration", "abc"], ["bench", "nosuch"]])
def test_bad_arguments_exit_2_without_traceback(args):
    r = impulse(*args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and r.stderr.strip()


def test_unwritable_trajectory_exits_1(scene_path):
    r = impulse("sim", scene_path("pendulum.json"), "--trajectory", "/nonexistent/dir/t.csv")
    assert r.returncode == 1
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_bench_chain8_table_and_json(tmp_path):
    out = tmp_path / "b.json"
    r = impulse("bench", "chain8", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "corrections_per_s" in r.stdout
    rows = json.loads(out.read_text())["rows"]
    assert [row["h"] for row in rows] == [0.01, 0.005]
    for row in rows:
        assert row["corrections_per_step"] == pytest.approx(row["paper_corrections_per_step"],
                                                            rel=0.1)
        assert row["corrections_per_s"] > 0 and row["realtime_factor"] > 1


def test_no_arguments_without_a_display_says_so_in_one_line():
    """`impulse` opens the launcher window (tests/test_app_gui.py); without X it must explain."""
    r = subprocess.run([sys.executable, "-m", "app"], capture_output=True, text=True,
                       timeout=120, env={k: v for k, v in os.environ.items() if k != "DISPLAY"})
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "display" in r.stderr.lower()
