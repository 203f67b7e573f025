"""`impulse convert IN OUT.json`: a corpus model becomes a scene file that loads; bad model
files (malformed XML, a missing mesh, an element MuJoCo does not know, no model at all, the
`import` extra missing) give one line naming the file and element, exit status 2, and no
traceback."""
import json
import os
import subprocess
import sys

import pytest

from import_corpus import corpus_path

pytest.importorskip("mujoco")

from impulse.engine import cli, load_scene  # noqa: E402

BAD = {
    "malformed.urdf": ('<robot name="r"><link name="a"></robot>', "malformed XML"),
    "missing_mesh.urdf": ('<robot name="r"><link name="a"><collision><geometry>'
                          '<mesh filename="package://nowhere/gone.stl"/></geometry></collision>'
                          '</link></robot>', '<mesh filename="package://nowhere/gone.stl">'),
    "unknown.xml": ("<mujoco><worldbody><gizmo/></worldbody></mujoco>", "gizmo"),
    "not_a_model.xml": ("<svg/>", "<svg>"),
    "bad_value.urdf": ('<robot name="r"><link name="a"><inertial><mass value="x"/>'
                       '</inertial></link></robot>', "mass"),
}


def convert(args, capsys):
    code = cli.main(["convert", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_convert_writes_a_scene_that_loads(tmp_path, capsys):
    out = tmp_path / "kuka.json"
    code, text, err = convert([corpus_path("kuka_iiwa"), str(out), "--json"], capsys)
    assert code == 0, err
    summary = json.loads(text)
    assert summary["bodies"] == 7 and summary["joints"] == 7 and summary["hulls"] == 8
    world = load_scene(str(out))
    assert len(world.joint_names) == 7
    assert "kuka_iiwa/model.urdf" in world.meta["description"]


@pytest.mark.parametrize("name", list(BAD))
def test_bad_model_files_one_line_exit_2(name, tmp_path, capsys):
    text, expected = BAD[name]
    src = tmp_path / name
    src.write_text(text)
    code, out, err = convert([str(src), str(tmp_path / "out.json")], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(src) in lines[0] and expected in lines[0], lines[0]
    assert not (tmp_path / "out.json").exists()


def test_missing_import_extra_says_how_to_get_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)        # import mujoco -> ImportError
    code, out, err = convert([corpus_path("kuka_iiwa"), str(tmp_path / "o.json")], capsys)
    assert code == 2
    assert err.count("\n") == 1 and "pip install 'impulse[import]'" in err and "mujoco" in err


@pytest.mark.slow
def test_command_line_no_traceback(tmp_path):
    src = tmp_path / "broken.xml"
    src.write_text("<mujoco><worldbody><body><geom type='mesh' mesh='nope'/></body>"
                   "</worldbody></mujoco>")
    r = subprocess.run([sys.executable, "-m", "impulse.app", "convert", str(src),
                        str(tmp_path / "o.json")], capture_output=True, text=True,
                       env={**os.environ, "PYTHONWARNINGS": "ignore"}, timeout=300)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and str(src) in r.stderr and "nope" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
