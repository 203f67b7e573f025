"""The `impulse` command tree as a user runs it (subprocesses of `python -m impulse.app`): --help
lists every command, each command's --help has an example, --version, `impulse scenes`,
bundled scenes by name, -v/-q, and one-line errors with exit status 2."""
import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from conftest import slow_only

REPO = Path(__file__).resolve().parent.parent
SCENE_FILES = sorted((REPO / "scenes").glob("*.json"))
COMMANDS = ["view", "sim", "bench", "sweep", "convert", "bench viewer", "bench vr", "compile",
            "scenes", "install-launcher"]


def impulse(*args, cwd=REPO, env=None, timeout=300):
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONIOENCODING": "utf-8", **(env or {})}
    return subprocess.run([sys.executable, "-m", "impulse.app", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=timeout)


def one_line_error(r):
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_help_lists_every_command_with_one_line():
    r = impulse("--help")
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    for name in COMMANDS:
        line = [ln for ln in lines if ln.strip().startswith(name + "  ")]
        assert len(line) == 1, name                        # name and its line together
        assert len(line[0].split(name, 1)[1].strip()) > 10, line
    assert "impulse SCENE.json" in r.stdout
    exit_status = r.stdout.split("exit status:")[1]
    for code in "01234":
        assert f"\n  {code}  " in exit_status


# the commands whose --help imports the engine (a second or more each) are in the slow lane
@pytest.mark.parametrize("command", slow_only(COMMANDS, "view", "sim", "bench", "convert",
                                             "bench viewer", "bench vr"))
def test_every_command_has_help_with_an_example(command):
    r = impulse(*command.split(), "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"usage: impulse {command}")
    examples = r.stdout.split("example")[1]                # "example:" or "examples:"
    assert f"  impulse {command}" in examples


def test_version_is_the_distribution_version():
    r = impulse("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"impulse {version('impulse')}"


@pytest.mark.slow
def test_scenes_lists_every_bundled_scene_on_one_line_each():
    r = impulse("scenes", env={"COLUMNS": "70"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [ln.split()[0] for ln in lines] == [p.stem for p in SCENE_FILES]
    assert all(len(ln) < 70 for ln in lines)
    for line, path in zip(lines, SCENE_FILES, strict=True):
        doc = json.loads(path.read_text())
        text = f"{doc['name']}: {' '.join(doc['description'].split())}"
        shown = line.split(None, 1)[1].strip()
        if shown.endswith("\u2026"):                       # cut to the terminal's width
            assert text.startswith(shown[:-1])
        else:
            assert shown == text
    assert any(ln.endswith("\u2026") for ln in lines)


@pytest.mark.slow
def test_scenes_json_is_a_list_of_name_title_description_path():
    r = impulse("scenes", "--json")
    assert r.returncode == 0, r.stderr
    items = json.loads(r.stdout)
    assert [i["name"] for i in items] == [p.stem for p in SCENE_FILES]
    for item, path in zip(items, SCENE_FILES, strict=True):
        doc = json.loads(path.read_text())
        assert item["title"] == doc["name"]
        assert item["description"] == " ".join(doc["description"].split())
        assert Path(item["path"]).resolve() == path.resolve()


@pytest.mark.slow
def test_sim_takes_a_bundled_scene_by_name_from_any_folder(tmp_path):
    r = impulse("sim", "chain8", "--duration", "0.1", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["scene"] == "chain8.json" and out["steps"] == 10


@pytest.mark.slow
def test_a_file_of_that_name_comes_before_the_bundled_scene(tmp_path):
    doc = json.loads((REPO / "scenes" / "pendulum.json").read_text())
    doc["settings"]["h"] = 0.02
    (tmp_path / "chain8").write_text(json.dumps(doc))
    r = impulse("sim", "chain8", "--duration", "0.1", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["steps"] == 5


@pytest.mark.slow
@pytest.mark.parametrize("command", ["sim", "view"])
def test_unknown_scene_name_exits_2_naming_the_bundled_scenes(command):
    r = impulse(command, "nosuch_scene")
    assert r.returncode == 2
    line = one_line_error(r)
    assert line.startswith(f"impulse {command}: ") and "'nosuch_scene'" in line
    for p in SCENE_FILES:
        assert p.stem in line


@pytest.mark.gui
def test_view_takes_a_bundled_scene_by_name(xvfb, tmp_path):
    shot = tmp_path / "p.png"
    r = impulse("view", "pendulum", "--screenshot", str(shot), "--frames", "3",
                "--size", "320x180", "--no-ui",
                env={"DISPLAY": xvfb, "XDG_CACHE_HOME": str(tmp_path / "cache"),
                     "XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert r.returncode == 0, r.stderr
    assert f"screenshot: {shot}" in r.stdout and shot.stat().st_size > 1000


# `python -m impulse.app` with numba's cache reported empty: the first-start notice is due
FRESH = ("import runpy, sys; import impulse.engine.warmup as w; "
         "import impulse.engine.compile_progress as p; p.cached_seconds = lambda *a: 0.0; "
         "w.kernels_cached = lambda: False; sys.argv = ['impulse'] + sys.argv[1:]; "
         "runpy.run_module('impulse.app', run_name='__main__')")


def fresh_impulse(*args):
    return subprocess.run([sys.executable, "-c", FRESH, *args], capture_output=True, text=True,
                          cwd=REPO, timeout=300)


@pytest.mark.slow
def test_compile_notice_shows_by_default_and_quiet_silences_it():
    run = ["sim", "pendulum", "--duration", "0.05", "--json"]
    r = fresh_impulse(*run)
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("impulse: first start: compiling the physics kernels")
    assert json.loads(r.stdout)["steps"] == 5               # stdout: only the program's output
    for quiet in (["-q", *run], [*run, "--quiet"]):
        r = fresh_impulse(*quiet)
        assert r.returncode == 0 and r.stderr == "", r.stderr
        assert json.loads(r.stdout)["steps"] == 5


@pytest.mark.slow
def test_verbose_logs_debug_messages_on_stderr():
    r = impulse("-v", "sim", "chain8", "--duration", "0.05", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["steps"] == 5
    debug = [ln for ln in r.stderr.splitlines() if ln.startswith("impulse: debug ")]
    assert any("command: sim" in ln for ln in debug)
    assert any("engine.scenes_list]" in ln and "chain8.json" in ln for ln in debug)
    assert "numba's cache" in r.stderr
    r = impulse("sim", "chain8", "--duration", "0.05", "--json")
    assert r.returncode == 0 and r.stderr == ""


@pytest.mark.slow
def test_install_launcher_is_in_the_tree(tmp_path):
    r = impulse("-q", "install-launcher", env={"XDG_DATA_HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert f"wrote {tmp_path}" in r.stdout
    assert (tmp_path / "applications" / "impulse.desktop").is_file()


@pytest.mark.parametrize("args, prefix", [
    pytest.param(["sim", "chain8", "--bogus"], "impulse sim: unrecognized arguments: --bogus",
                 marks=pytest.mark.slow),
    pytest.param(["sim", "chain8", "--duration", "abc"], "impulse sim: argument --duration",
                 marks=pytest.mark.slow),
    pytest.param(["sim"], "impulse sim: the following arguments are required: scene",
                 marks=pytest.mark.slow),
    pytest.param(["bench", "nosuch"], "impulse bench: unknown benchmark 'nosuch'",
                 marks=pytest.mark.slow),
    pytest.param(["view", "--size", "12"], "impulse view: --size must look like 1280x720",
                 marks=pytest.mark.slow),
    pytest.param(["view", "pendulum", "--frames", "0"], "impulse view: argument --frames",
                 marks=pytest.mark.slow),
    (["scenes", "--bogus"], "impulse scenes: unrecognized arguments: --bogus"),
    (["compile", "extra"], "impulse compile: unrecognized arguments: extra"),
    (["compile", "--jobs", "two"], "impulse compile: argument --jobs/-j: 'two' is not a whole "
                                   "number"),
    (["compile", "-j", "0"], "impulse compile: argument --jobs/-j: '0' must be a positive "
                             "number"),
    pytest.param(["sweep", "pendulum", "--seeds", "-1"],
                 "impulse sweep: argument --seeds: '-1' must be 0 or more",
                 marks=pytest.mark.slow),
    (["nosuch"], "impulse: unknown command 'nosuch'"),
    (["--bogus"], "impulse: unrecognized arguments: --bogus"),
    (["-v", "-q", "scenes"], "impulse: argument -q/--quiet: not allowed with argument -v"),
    pytest.param(["missing_file.json"], "impulse: missing_file.json: $: cannot read file",
                 marks=pytest.mark.slow),
])
def test_bad_input_exits_2_with_one_line(args, prefix):
    r = impulse(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert one_line_error(r).startswith(prefix)
    assert r.stdout == ""
