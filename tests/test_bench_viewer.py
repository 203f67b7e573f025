"""`impulse bench viewer`'s fallback heavy scene (when scenes/funnel_1000.json is missing):
the box stack as a valid scene of free, spinning boxes without gravity."""
import numpy as np

from impulse.app.bench_viewer import box_stack_doc, boxes_world


def test_box_stack_is_a_valid_scene_of_spinning_boxes_in_columns_of_ten():
    doc = box_stack_doc(25)
    assert doc["settings"]["gravity"] == [0.0, 0.0, 0.0]
    w = boxes_world(25)                             # scene_to_world validates the document
    assert w.body_names == ["ground"] + [f"box{i}" for i in range(25)]
    boxes = doc["bodies"][1:]
    assert all(b["shape"] == {"type": "box", "size": [0.4, 0.4, 0.4]} for b in boxes)
    heights = [b["position"][1] for b in boxes]
    assert np.allclose(heights[:10], 0.2 + 0.42 * np.arange(10))     # one column of ten
    assert np.allclose(heights[10:20], heights[:10])
    assert all(b["angular_velocity"][0] == b["angular_velocity"][2] == 0.0 for b in boxes)
    assert all(np.isclose(np.linalg.norm(b["orientation"]), 1.0) for b in boxes)
    assert box_stack_doc(25) == doc                 # seeded: the same stack every run
