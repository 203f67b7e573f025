"""Small scene documents for the app's GUI tests."""
from tests.scene_docs import scene_doc


def doc(bodies, joints=(), gravity=(0.0, -9.81, 0.0), camera=None, name="test"):
    return scene_doc(bodies, joints, {"h": 0.01, "gravity": list(gravity)}, name=name,
                     description="test scene",
                     camera=camera or {"eye": [0.0, 1.0, 5.0], "target": [0.0, 1.0, 0.0],
                                       "fov_deg": 45})


def box(name, pos, size=0.4, fixed=False, color=(0.8, 0.4, 0.2), **extra):
    b = {"name": name, "shape": {"type": "box", "size": [size] * 3}, "position": list(pos),
         "color": list(color), **extra}
    if fixed:
        b["fixed"] = True
    else:
        b["mass"] = 1.0
    return b


def drag_scene():
    """A free crate (falls under gravity) and a fixed post."""
    return doc([box("crate", [0.0, 1.0, 0.0]), box("post", [0.9, 1.0, 0.0], fixed=True)])


def two_boxes():
    """No gravity: 'a' moves away from 'b', which rests; joined, a pulls b along."""
    return doc([box("a", [-0.5, 1.0, 0.0], velocity=[-0.6, 0.0, 0.0]),
                box("b", [0.5, 1.0, 0.0], color=(0.2, 0.5, 0.9))], gravity=(0.0, 0.0, 0.0))
