"""Scene tree: bodies, joints, external loads, contact filters; selection synced with the
3D view."""
from __future__ import annotations

from imgui_bundle import imgui

from impulse.app.ui.layout import place


def _selectable(app, kind: str, name: str, label: str) -> None:
    selected = app.selection == (kind, name)
    if imgui.selectable(f"{label}##{kind}:{name}", selected)[0]:
        app.select(kind, name)
    if selected and app.scroll_tree_to_selection:
        imgui.set_scroll_here_y(0.5)
        app.scroll_tree_to_selection = False


def draw_scene_tree(app) -> None:
    place("tree")
    opened, app.panels["tree"] = imgui.begin("Scene", app.panels["tree"])
    if opened:
        w = app.session.world
        imgui.text_disabled(str(w.meta.get("name", "untitled")))
        flags = imgui.TreeNodeFlags_.default_open
        if imgui.tree_node_ex(f"Bodies ({len(w.body_names)})###bodies", flags):
            names, static = w.body_names, w.body_static
            if app.scroll_tree_to_selection and app.selection and app.selection[0] == "body" \
                    and app.selection[1] in names:     # bring the selected row into the clipper
                row = imgui.get_text_line_height_with_spacing()
                imgui.set_scroll_y(imgui.get_cursor_pos_y() + names.index(app.selection[1]) * row
                                   - imgui.get_window_height() / 2)
            clipper = imgui.ListClipper()
            clipper.begin(len(names))
            while clipper.step():
                for b in range(clipper.display_start, clipper.display_end):
                    _selectable(app, "body", names[b], names[b] + (" (fixed)" if static[b] else ""))
            clipper.end()
            imgui.tree_pop()
        springs = [s.name for s in w.spring_models]
        if imgui.tree_node_ex(f"Joints ({len(w.joint_names) + len(springs)})###joints", flags):
            for jm in w.joint_models + w.spring_models:
                _selectable(app, "joint", jm.name,
                            f"{jm.name}  [{jm.kind}] {jm.bodies[0]} - {jm.bodies[1]}")
            imgui.tree_pop()
        if w.load_names and imgui.tree_node_ex(f"Loads ({len(w.load_names)})###loads", flags):
            for name in w.load_names:
                spec = w.load_entry(name)
                what = "effort" if "effort" in spec else "+".join(
                    k for k in ("force", "torque") if k in spec)
                on = spec.get("joint") or spec.get("body")
                _selectable(app, "load", name, f"{name}  [{what}] on {on}")
            imgui.tree_pop()
        pairs = (w.contacts_spec or {}).get("disabled_pairs", [])
        if imgui.tree_node_ex(f"Contact filters ({len(pairs)})###filters", flags):
            for a, b in pairs:
                imgui.bullet_text(f"no contact: {a} / {b}")
            imgui.tree_pop()
    imgui.end()
