"""Durable writes (engine/durable.py, issue 17.4): one helper for every file the program
writes; modes kept, symlinks kept, no predictable temp names, errors naming the user's path,
stale temp files removed, the old file intact after a failure."""
import os
import stat
import subprocess
import sys

import pytest

from impulse.engine import durable
from impulse.engine.durable import WriteError, open_for_write, write_file
from impulse.engine.scene import load_scene, save_scene


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_file_gets_the_umask_mode_and_content(tmp_path, monkeypatch, umask, mode):
    monkeypatch.setattr(durable, "_NEW_MODE", 0o666 & ~umask)   # read once at import
    p = tmp_path / "a.json"
    write_file(p, "hello\n")
    assert p.read_text() == "hello\n"
    assert stat.S_IMODE(p.stat().st_mode) == mode


@pytest.mark.parametrize("mode", [0o644, 0o600, 0o640, 0o664])
def test_replacing_keeps_the_old_files_mode(tmp_path, mode):
    p = tmp_path / "a.json"
    p.write_text("old")
    os.chmod(p, mode)
    write_file(p, b"new")
    assert p.read_bytes() == b"new"
    assert stat.S_IMODE(p.stat().st_mode) == mode


def test_saving_a_scene_keeps_0644(tmp_path, scene_path):
    world = load_scene(scene_path("pendulum.json"))
    p = tmp_path / "s.json"
    p.write_text("{}")
    os.chmod(p, 0o644)
    save_scene(world, p)
    assert stat.S_IMODE(p.stat().st_mode) == 0o644
    load_scene(p)


def test_writing_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_file(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"


@pytest.mark.slow
def test_a_planted_symlink_at_the_old_temp_name_is_not_followed(tmp_path, scene_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "t.csv"
    (tmp_path / "t.csv.tmp").symlink_to(victim)
    r = subprocess.run([sys.executable, "-m", "impulse.app", "sim", scene_path("pendulum.json"),
                        "--duration", "0.05", "--trajectory", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "precious"
    assert out.read_text().startswith("t,body,x")
    assert not [p for p in os.listdir(tmp_path) if p.endswith(durable.TAG)]


def test_errors_name_the_users_path_and_the_reason(tmp_path):
    with pytest.raises(WriteError) as e:
        write_file(tmp_path / "nope" / "a.json", "x")
    assert str(e.value) == f"cannot write {tmp_path / 'nope' / 'a.json'}: folder " \
                           f"{tmp_path / 'nope'} does not exist"
    with pytest.raises(WriteError, match="it is a folder"):
        write_file(tmp_path, "x")


def test_a_failure_mid_write_leaves_the_old_file_and_no_temp(tmp_path):
    p = tmp_path / "a.json"
    p.write_text("old content")
    with pytest.raises(RuntimeError):
        with open_for_write(p) as f:
            f.write("half of the new")
            raise RuntimeError("killed")
    assert p.read_text() == "old content"
    assert os.listdir(tmp_path) == ["a.json"]


@pytest.mark.slow
def test_a_temp_file_left_by_a_killed_process_is_removed_at_the_next_write(tmp_path):
    p = tmp_path / "a.json"
    child = subprocess.run([sys.executable, "-c", """
import os, sys
from impulse.engine.durable import open_for_write
with open_for_write(sys.argv[1]) as f:
    f.write("partial")
    f.flush()
    os._exit(9)      # killed mid-save: its temp file stays
""", str(p)], cwd=os.path.dirname(os.path.dirname(__file__)))
    assert child.returncode == 9
    left = [n for n in os.listdir(tmp_path) if n.endswith(durable.TAG)]
    assert len(left) == 1 and not p.exists()
    write_file(p, "whole")
    assert os.listdir(tmp_path) == ["a.json"] and p.read_text() == "whole"


def test_a_live_writers_temp_file_is_left_alone(tmp_path):
    p = tmp_path / "a.json"
    mine = tmp_path / f".a.json.{os.getpid()}.abcd{durable.TAG}"
    mine.write_text("another save in progress")
    write_file(p, "x")
    assert mine.exists()


def test_thumbnail_png_is_written_whole(tmp_path):
    import numpy as np

    from impulse.app.screenshot import save_png
    img = np.zeros((8, 12, 3), np.uint8)
    img[2:5, 3:9] = 200
    out = save_png(img, tmp_path / "t.png")
    import imageio.v3 as iio
    assert (iio.imread(out) == img).all()
    assert os.listdir(tmp_path) == ["t.png"]
