"""The README's "Python API" example runs as written, and does what its comments say."""
import os
import re

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def api_example():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text.split("## Python API", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_python_api_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(api_example(), "README.md (Python API)", "exec"), scope)
    world = scope["world"]
    assert world.body_names == ["rod", "ball"]
    assert world.models[0].color == (0.9, 0.3, 0.1)
    assert world.time == np.float64(0.005) * 101 or abs(world.time - 0.505) < 1e-12
    assert (tmp_path / "rod.json").exists()
    from impulse.engine import load_scene

    again = load_scene(tmp_path / "rod.json")
    assert np.array_equal(again.B.pos, world.B.pos)
    assert capsys.readouterr().out.strip()


def test_the_readme_loads_example_runs_on_the_api_examples_world(tmp_path, monkeypatch):
    import textwrap
    monkeypatch.chdir(tmp_path)
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text.split("## Python API", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    scope = {}
    exec(compile(blocks[0], "README.md (Python API)", "exec"), scope)
    exec(compile(textwrap.dedent(blocks[1]), "README.md (loads)", "exec"), scope)
    world = scope["world"]
    assert world.load_names == ["thrust"]
    assert world.load_entry("thrust")["force"] == [0, 2, 0]
    v = world.B.vel[0].copy()
    world.step()
    assert not np.array_equal(world.B.vel[0], v)
