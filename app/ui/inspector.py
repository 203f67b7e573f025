"""Inspector: edit the selected body or joint live; every change is one editor command."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from imgui_bundle import imgui
from scipy.spatial.transform import Rotation

from impulse.app.editor import EditBody, EditJoint, EditLoad, RenameBody, SetMotion
from impulse.app.ui import widgets as W
from impulse.app.ui.layout import place
from impulse.engine.contacts.system import material_of
from impulse.engine.shape_kinds import SIZE_KEYS

SHAPE_FIELDS = {kind: tuple((key, key) for key in keys)   # label, key; hulls: in the file
                for kind, keys in SIZE_KEYS.items() if kind != "hull"}


def quat_to_euler_deg(q) -> list[float]:
    """A scene quaternion [w, x, y, z] as x-y-z Euler angles in degrees (rounding dust
    below 1e-9 degrees shown as 0, not as "-0.0")."""
    rot = Rotation.from_quat(q, scalar_first=True)
    return [float(a) if abs(a) > 1e-9 else 0.0 for a in rot.as_euler("xyz", degrees=True)]


def euler_deg_to_quat(angles) -> list[float]:
    """x-y-z Euler angles in degrees as a scene quaternion [w, x, y, z]."""
    rot = Rotation.from_euler("xyz", angles, degrees=True)
    return [float(c) for c in rot.as_quat(scalar_first=True)]


def _shape_editor(app, name: str, spec: dict) -> None:
    shape = spec.get("shape")
    if shape is None:
        imgui.text(f"{len(spec.get('shapes', []))} shapes (edit in the file)")
        return
    imgui.text(f"shape: {shape['type']}")
    for label, key in SHAPE_FIELDS.get(shape["type"], ()):
        wkey = f"{name}.shape.{key}"
        if key == "size":
            commit, v = W.edit_vec3(label, wkey, shape[key], 0.005)
            v = [max(x, 1e-4) for x in v]
        else:
            commit, v = W.edit_float(label, wkey, shape[key], 0.005, 0.0, 0.0)
            v = max(v, 1e-4) if key != "length" else max(v, 0.0)
        if commit:
            app.run(EditBody(name, {"shape": {**shape, key: v}}))


# material fields: (drag speed, upper bound); torsional and rolling friction are lengths in m
MATERIAL_FIELDS = {"restitution": (0.01, 1.0), "static_friction": (0.01, 5.0),
                   "dynamic_friction": (0.01, 5.0), "torsional_friction": (0.0001, 1.0),
                   "rolling_friction": (0.0001, 1.0)}


def material_in_effect(mat: dict) -> dict:
    """The values the engine uses for a body's material entry (its defaults where the entry
    has none: README "Contacts"), so the Inspector never shows a number that is not in force."""
    # material_of reads a body model's `material`; its order is MATERIAL_FIELDS'
    return dict(zip(MATERIAL_FIELDS, material_of(SimpleNamespace(material=mat)), strict=True))


def _material_editor(app, name: str, spec: dict) -> None:
    mat = dict(spec.get("material", {}))
    shown = material_in_effect(mat)
    for key, (speed, hi) in MATERIAL_FIELDS.items():
        lo = 0.0
        commit, v = W.edit_float(key.replace("_", " "), f"{name}.mat.{key}", shown[key],
                                 speed, lo, hi)
        if commit:
            app.run(EditBody(name, {"material": {**mat, key: min(max(v, lo), hi)}}))


def _motion_editor(app, name: str, spec: dict, static: bool) -> None:
    commit, v = W.edit_vec3("position", f"{name}.pos", spec["position"])
    if commit:
        app.run(SetMotion(name, {"position": v}))
    commit, v = W.edit_vec3("rotation (deg)", f"{name}.rot",
                            quat_to_euler_deg(spec["orientation"]), 0.5, "%.1f")
    if commit:
        app.run(SetMotion(name, {"orientation": euler_deg_to_quat(v)}))
    if static:
        return
    commit, v = W.edit_vec3("velocity", f"{name}.vel", spec.get("velocity", [0, 0, 0]))
    if commit:
        app.run(SetMotion(name, {"velocity": v}))
    commit, v = W.edit_vec3("angular vel.", f"{name}.omega",
                            spec.get("angular_velocity", [0, 0, 0]))
    if commit:
        app.run(SetMotion(name, {"angular_velocity": v}))


def draw_body(app, name: str) -> None:
    w = app.session.world
    b = w.body_index(name)
    spec = w.body_entry(b)
    m = w.models[b]
    commit, new_name = W.edit_text(f"body #{b}", f"{name}.name", name)
    if commit and new_name:
        app.run(RenameBody(name, new_name))
        return
    commit, fixed = W.checkbox("fixed", m.static)
    W.record_rect("inspector.fixed")
    if commit:
        change = {"fixed": fixed}
        if not fixed and "mass" not in spec and "density" not in spec:
            change["mass"] = 1.0
        app.run(EditBody(name, change))
    if not m.static:
        key = "density" if "density" in spec else "mass"
        commit, v = W.edit_float(key, f"{name}.{key}", spec.get(key, m.mass), 0.01, 1e-6, 1e9)
        if commit:
            app.run(EditBody(name, {key: max(v, 1e-6)}))
        imgui.text_disabled(f"m = {m.mass:.4g} kg   J = {np.array2string(m.inertia, precision=3)}")
    coll = dict(spec.get("collision", {}))
    commit, on = W.checkbox("collides", coll.get("enabled", True))
    if commit:
        app.run(EditBody(name, {"collision": {**coll, "enabled": on}}))
    _shape_editor(app, name, spec)
    commit, v = W.edit_color("colour", f"{name}.color", list(m.color))
    if commit:
        app.run(EditBody(name, {"color": v}))
    if imgui.collapsing_header("Material"):
        _material_editor(app, name, spec)
    if imgui.collapsing_header("Pose and velocity", imgui.TreeNodeFlags_.default_open):
        _motion_editor(app, name, spec, m.static)
    imgui.separator()
    if W.button("Duplicate", "inspector.duplicate"):
        app.duplicate_selection()
    imgui.same_line()
    if W.button("Delete", "inspector.delete"):
        app.delete_selection()
    imgui.same_line()
    if imgui.button("Focus"):
        app.viewer.focus_selection()


def draw_joint(app, name: str) -> None:
    w = app.session.world
    jm = w.joint_model(name)
    spec = w.joint_entry(name)
    imgui.text(f"{jm.kind} joint {name}")
    imgui.text(f"bodies: {jm.bodies[0]} - {jm.bodies[1]}")
    anchors = spec["local_anchors"]
    for s in range(2):
        commit, v = W.edit_vec3(f"anchor in {jm.bodies[s]}", f"{name}.anchor{s}", anchors[s], 0.005)
        if commit:
            new = [list(a) for a in anchors]
            new[s] = v
            app.run(EditJoint(name, {"local_anchors": new}))
    if jm.kind == "spring":
        for key, lo in (("stiffness", 0.0), ("damping", 0.0), ("rest_length", 0.0)):
            commit, v = W.edit_float(key.replace("_", " "), f"{name}.{key}", spec.get(key, 0.0),
                                     0.01, lo, 1e9)
            if commit:
                app.run(EditJoint(name, {key: max(v, lo)}))
    imgui.separator()
    if W.button("Remove joint", "inspector.remove_joint"):
        app.delete_selection()


def _load_value(app, name: str, key: str, value) -> None:
    """One force/torque/effort of a load: a constant is edited here; a time sequence is
    shown (edit it in the file)."""
    if isinstance(value, dict):
        imgui.text(f"{key}: a sequence of {len(value.get('times', []))} values")
        imgui.text_disabled("(edit sequences in the scene file)")
        return
    if key == "effort":
        commit, v = W.edit_float("effort", f"load.{name}.effort", value, 0.01, -1e9, 1e9)
        unit = "N m or N along the joint's coordinate"
    else:
        commit, v = W.edit_vec3(f"{key} [{'N' if key == 'force' else 'N m'}]",
                                f"load.{name}.{key}", value, 0.01, "%.3g")
        unit = "world frame" if "frame" not in app.session.world.load_entry(name) or \
            app.session.world.load_entry(name)["frame"] == "world" else "body frame"
    if imgui.is_item_hovered():
        imgui.set_tooltip(unit)
    if commit:
        app.run(EditLoad(name, {key: v}))


def draw_load(app, name: str) -> None:
    w = app.session.world
    spec = w.load_entry(name)
    on = f"joint {spec['joint']}" if "joint" in spec else f"body {spec['body']}"
    imgui.text(f"load {name} on {on}")
    for key in ("force", "torque", "effort"):
        if key in spec:
            _load_value(app, name, key, spec[key])
    if "body" in spec:
        if "force" in spec:                     # where the force acts, in the body's frame
            commit, v = W.edit_vec3("point (body)", f"load.{name}.point",
                                    spec.get("point", [0, 0, 0]), 0.005)
            if commit:
                app.run(EditLoad(name, {"point": v}))
        frames = ["world", "body"]
        changed, i = imgui.combo("frame", frames.index(spec.get("frame", "world")), frames)
        W.record_rect("inspector.load_frame")
        if changed:
            app.run(EditLoad(name, {"frame": frames[i]}))


def draw_inspector(app) -> None:
    place("inspector")
    opened, app.panels["inspector"] = imgui.begin("Inspector", app.panels["inspector"])
    if opened:
        imgui.push_item_width(-125)
        sel = app.selection
        if sel is None:
            disabled = imgui.get_style().color_(imgui.Col_.text_disabled)
            imgui.push_style_color(imgui.Col_.text, disabled)
            imgui.text_wrapped("Select a body or joint (click it in the view or the tree).")
            imgui.pop_style_color()
        elif sel[0] == "body":
            draw_body(app, sel[1])
        elif sel[0] == "load":
            draw_load(app, sel[1])
        else:
            draw_joint(app, sel[1])
    if opened:
        imgui.pop_item_width()
    imgui.end()
