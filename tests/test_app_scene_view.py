"""SceneView: the renderer's shape table from a World, refreshed after every kind of edit."""
import numpy as np

from impulse.app.editor import AddBody, EditBody, Editor, RemoveBody, body_at_rest_spec
from impulse.app.scene_view import SceneView
from impulse.engine import load_scene


def test_shape_table_follows_edits(scene_path):
    w = load_scene(scene_path("double_pendulum.json"))
    view = SceneView(w)
    assert list(view.shape_body) == [0, 1] and list(view.shape_kind) == [3, 3]   # capsules
    ed = Editor(w)
    for _ in range(3):                     # the same slot edited again and again
        ed.run(EditBody("lower", {"shape": {"type": "sphere", "radius": 0.2}, "color": [0, 1, 0]}))
        assert view.shape_kind[view.shape_body == w.body_index("lower")][0] == 1
        assert np.allclose(view.body_color[w.body_index("lower")], [0, 1, 0])
        ed.undo()
        assert view.shape_kind[view.shape_body == w.body_index("lower")][0] == 3
    ed.run(AddBody(body_at_rest_spec(w, "box", [0, 0, 0])))
    assert len(view.shape_body) == 3 and view.shape_kind[2] == 2
    assert np.allclose(view.shape_size[2], [0.15, 0.15, 0.15])
    ed.run(RemoveBody("upper"))
    assert list(view.shape_body) == [0, 1]
    assert view.body_pos is w.body_pos                        # state arrays pass through
