"""Concave meshes split by CoACD (convert --decompose): several convex parts whose volume is
well below the single hull's (the hollow is kept), cached in the user cache folder so the
second conversion does not run CoACD."""
import os

import numpy as np
import pytest

pytest.importorskip("mujoco")
coacd = pytest.importorskip("coacd")

from scipy.spatial import ConvexHull  # noqa: E402

from impulse.engine.formats import convert_file, decompose  # noqa: E402

# a U: 3 x 2 x 1 with a 1 x 1.7 notch from the top (volume 4.3; its hull's 6)
U = [(0, 0), (1, 0), (2, 0), (3, 0), (3, 2), (2, 2), (2, 0.3), (1, 0.3), (1, 2), (0, 2)]
U_TRIANGLES = [(7, 8, 9), (7, 9, 0), (7, 0, 1), (1, 2, 6), (1, 6, 7), (6, 5, 4), (6, 4, 3),
               (6, 3, 2)]


def write_u_obj(path):
    """The U prism as an OBJ: bottom z = 0, top z = 1, the caps triangulated by hand."""
    n = len(U)
    lines = [f"v {x} {y} {z}" for z in (0, 1) for x, y in U]
    for a, b, c in U_TRIANGLES:
        lines.append(f"f {a + 1} {c + 1} {b + 1}")              # bottom, facing -z
        lines.append(f"f {a + n + 1} {b + n + 1} {c + n + 1}")  # top, facing +z
    for i in range(n):
        j = (i + 1) % n
        lines += [f"f {i + 1} {j + 1} {j + n + 1}", f"f {i + 1} {j + n + 1} {i + n + 1}"]
    path.write_text("\n".join(lines) + "\n")


def volume(shapes):
    return sum(ConvexHull(np.array(s["points"])).volume for s in shapes)


@pytest.mark.slow
def test_concave_mesh_splits_into_cached_convex_parts(tmp_path, monkeypatch):
    monkeypatch.setattr(decompose, "cache_dir", lambda: str(tmp_path / "cache"))
    write_u_obj(tmp_path / "u.obj")
    model = tmp_path / "cup.xml"
    model.write_text(f"""<mujoco><asset><mesh name="box" file="{tmp_path / 'u.obj'}"/></asset>
      <worldbody><body name="cup" pos="0 0 1"><freejoint/><geom type="mesh" mesh="box"
      density="500"/></body></worldbody></mujoco>""")
    whole = convert_file(str(model)).doc["bodies"]
    hull = [b for b in whole if b["name"] == "cup"][0]["shape"]
    split = convert_file(str(model), decompose=True)
    parts = [b for b in split.doc["bodies"] if b["name"] == "cup"][0]["shapes"]
    assert split.counts["hulls"] == len(parts) >= 2
    assert volume([hull]) == pytest.approx(6, rel=1e-6)
    assert 4.3 <= volume(parts) < 5.0                # the notch stays (mostly) empty
    assert len(os.listdir(tmp_path / "cache")) == 1

    def no_coacd(*a, **k):
        raise AssertionError("CoACD ran again")
    monkeypatch.setattr(coacd, "run_coacd", no_coacd)
    again = convert_file(str(model), decompose=True)
    assert again.doc["bodies"] == split.doc["bodies"]
