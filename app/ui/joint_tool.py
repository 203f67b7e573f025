"""Joint tool: pick a type and where the anchor goes, click the first body, click the second
(clicking empty space attaches the first body to the world). Between the two clicks the
joint-to-be is drawn as it would be made with the body under the cursor (the anchor, a link
from each body's centre to it, its axis), through `SceneView.joint_preview`.

The anchor is the point clicked on the second body (on the first, when it goes to the
world), the first or the second body's centre, or the middle between the two centres; the
world's "centre" is the point where the first body was clicked. A spring spans the two
clicked points."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from imgui_bundle import imgui

from impulse.app.editor import AddJoint, joint_types, new_joint_spec
from impulse.app.joint_drawing import JointDrawing
from impulse.app.ui import widgets as W

ANCHORS = {"clicked": "clicked point", "first": "1st body's centre",
           "second": "2nd body's centre", "middle": "midpoint"}
ANCHOR_HELP = ("Where the new joint's anchor goes: the point clicked on the second body (on "
               "the first, when it joins the world), the first or the second body's centre, "
               "or the midpoint of the two centres.")


@dataclass
class End:
    """One body of the joint-to-be (name "world": the world) as the view shows it now."""
    name: str
    point: np.ndarray            # the clicked point, world
    centre: np.ndarray           # the body's centre (the world's: the clicked point)

    @property
    def is_world(self) -> bool:
        return self.name == "world"


def anchor_point(choice: str, first: End, second: End) -> np.ndarray:
    """Where the joint's anchor goes for one of the ANCHORS choices."""
    return {"clicked": second.point, "first": first.centre, "second": second.centre,
            "middle": (first.centre + second.centre) / 2.0}[choice]


class JointTool:
    def __init__(self, app):
        self.app = app
        self.kind = "ball"
        self.anchor = "clicked"
        self.first = None            # (body name, clicked point in the body's frame)
        self.active = False
        self.stiffness = 100.0
        self.damping = 1.0

    def start(self) -> None:
        self.active, self.first = True, None
        if self.app.grab is not None:
            self.app.grab.enabled = False

    def cancel(self) -> None:
        self.active, self.first = False, None
        if self.app.grab is not None:
            self.app.grab.enabled = True

    @property
    def hint(self) -> str:
        if not self.active:
            return ""
        return "click the second body (empty space: the world)" if self.first else \
            "click the first body"

    # ---------------------------------------------------------------- the two ends
    @property
    def _shown(self):
        """The bodies as the view shows them (the SceneView)."""
        return self.app.scene_view

    def _first_end(self) -> End:
        name, local = self.first
        b = self.app.session.world.body_index(name)
        pos, rot = self._shown.body_pos[b], self._shown.body_rot[b]
        return End(name, pos + rot @ local, np.array(pos, dtype=np.float64))

    def _second_end(self, body: int, point, first: End) -> End:
        """The body clicked (or under the cursor) second; the world where there is none."""
        if body < 0 or point is None:
            return End("world", first.point, first.point)
        name = self.app.session.world.body_names[body]
        return End(name, np.asarray(point, dtype=np.float64),
                   np.array(self._shown.body_pos[body], dtype=np.float64))

    # ---------------------------------------------------------------- clicks and preview
    def click(self, body: int, point) -> None:
        if self.first is None:
            if body >= 0:
                pos, rot = self._shown.body_pos[body], self._shown.body_rot[body]
                local = rot.T @ (np.asarray(point, dtype=np.float64) - pos)
                self.first = (self.app.session.world.body_names[body], local)
                self.app.viewer.options.selected = (body,)
            return
        first = self._first_end()
        second = self._second_end(body, point, first)
        if second.name == first.name:
            return
        spec = self.spec(first, second)
        self.cancel()
        if self.app.run(AddJoint(spec)):
            self.app.select("joint", spec["name"])

    def _axis(self) -> np.ndarray:
        """New joints' axis (for the types that have one): along the view direction."""
        return -self.app.viewer.camera.direction

    def spec(self, first: End, second: End) -> dict:
        """The new joint (a spring spans the clicked points); its axis editable later."""
        anchor = second.point if self.kind == "spring" else anchor_point(self.anchor, first, second)
        return new_joint_spec(self.app.session.world, self.kind, first.name, second.name,
                              first.point, anchor, self._axis(), self.stiffness, self.damping)

    def preview(self) -> JointDrawing | None:
        """The joint the second click would make on the body under the cursor (None before
        the first click)."""
        if not self.active or self.first is None or self.app.session is None:
            return None
        viewer = self.app.viewer
        hover = viewer.controller.hover_point()
        body, point = viewer.pick(*hover) if hover is not None else (-1, None)
        first = self._first_end()
        second = self._second_end(body, point, first)
        if second.name == first.name:                 # over the first body: to the world
            second = self._second_end(-1, None, first)
        if self.kind == "spring":
            anchors = (first.point, second.point)
        else:
            anchors = (anchor_point(self.anchor, first, second),) * 2
        return JointDrawing.single(self.kind, anchors, (first.centre, second.centre),
                                   (True, not second.is_world), self._axis())


def draw_joint_tool(app) -> None:
    """Joint type, anchor and the pick button (inside the Tools window)."""
    tool = app.joint_tool
    imgui.text("New joint:")
    types = joint_types()
    changed, i = imgui.combo("type", types.index(tool.kind) if tool.kind in types else 0, types)
    if changed:
        tool.kind = types[i]
    if tool.kind == "spring":
        _, tool.stiffness = imgui.input_double("stiffness", tool.stiffness, 0.0, 0.0, "%.6g")
        _, tool.damping = imgui.input_double("damping", tool.damping, 0.0, 0.0, "%.6g")
        imgui.text_disabled("a spring spans the two clicked points")
    else:
        keys = list(ANCHORS)
        changed, i = imgui.combo("anchor", keys.index(tool.anchor), list(ANCHORS.values()))
        W.record_rect("joint.anchor")
        if imgui.is_item_hovered():
            imgui.set_tooltip(ANCHOR_HELP)
        if changed:
            tool.anchor = keys[i]
    if app.grab is not None:
        # a drag field, not a slider: a slider's grab sat over its "x weight" text
        _, app.grab.force_factor = imgui.drag_float("drag cap", app.grab.force_factor, 0.05,
                                                    0.5, 50.0, "%.1f x weight",
                                                    imgui.SliderFlags_.logarithmic
                                                    | imgui.SliderFlags_.always_clamp)
        W.record_rect("joint.drag_cap")
        if imgui.is_item_hovered():
            imgui.set_tooltip("The mouse drag's force cap, in multiples of the body's weight "
                              "(drag sideways, or double-click to type)")
    if tool.active:
        imgui.push_text_wrap_pos(0.0)
        imgui.text_colored(imgui.ImVec4(1, 0.85, 0.3, 1), tool.hint)
        imgui.pop_text_wrap_pos()
        if W.button("Cancel (Esc)", "joint.cancel"):
            tool.cancel()
    elif W.button("Add joint: pick two bodies", "joint.start"):
        tool.start()
