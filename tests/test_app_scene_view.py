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


def test_sleeping_bodies_are_tinted_and_the_view_hands_their_mask_over():
    """The renderer reads body_asleep through the scene view and draws those bodies halfway
    to SLEEP_TINT (View panel: "Tint sleeping bodies"); awake ones keep their colour."""
    from impulse.app.render.instances import SLEEP_TINT, build_instances
    from impulse.engine import scene_to_world

    bodies = [{"name": "ground", "fixed": True, "shape": {"type": "plane"}}] + [
        {"name": f"b{i}", "mass": 1.0, "position": [2.0 * i, 0.1, 0.0], "color": [0.9, 0.2, 0.1],
         "shape": {"type": "box", "size": [0.2, 0.2, 0.2]}} for i in range(2)]
    world = scene_to_world({"format": "impulse-scene", "version": 1,
                            "settings": {"h": 1 / 60}, "bodies": bodies})
    view = SceneView(world)
    for _ in range(60):
        world.step()
    assert view.body_asleep.tolist() == [False, True, True]
    world.wake("b1")
    assert view.body_asleep.tolist() == [False, True, False]     # b1 is body 2
    rows = build_instances(view, sleeping=view.body_asleep).by_kind
    colors = np.concatenate([r[:, 18:21] for r in rows.values() if len(r)])  # in_color
    own = np.array([0.9, 0.2, 0.1])
    assert any(np.allclose(c, own, atol=1e-6) for c in colors)
    assert any(np.allclose(c, 0.5 * own + 0.5 * SLEEP_TINT, atol=1e-6) for c in colors)
    plain = build_instances(view).by_kind                # the toggle off: no tint
    assert all(np.allclose(c, own, atol=1e-6)
               for r in plain.values() if len(r) for c in r[:, 18:21])
