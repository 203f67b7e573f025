"""Contacts: live contacts (when the world reports them) and collision filters per pair."""
from __future__ import annotations

from imgui_bundle import imgui

from impulse.app.editor import AddContactFilter, RemoveContactFilter
from impulse.app.ui import widgets as W
from impulse.app.ui.layout import place


def depth_text(depth: float) -> str:
    """A contact's depth in words: overlap or gap in mm, "touching" within 5 µm (never
    "-0.00 mm")."""
    mm = depth * 1e3
    if mm >= 0.005:
        return f"overlap {mm:.2f} mm"
    if mm <= -0.005:
        return f"gap {-mm:.2f} mm"
    return "touching"


def draw_contacts_panel(app) -> None:
    place("contacts")
    opened, app.panels["contacts"] = imgui.begin("Contacts", app.panels["contacts"])
    if opened:
        w = app.session.world
        live = getattr(w, "contacts", None)
        if live is None:
            imgui.text_disabled("this engine build reports no contacts")
        else:
            imgui.text(f"{len(live)} live contacts")
            names, impulse = w.body_names, w.contact_impulse
            for c in range(min(len(live), 200)):
                p = impulse[c] if c < len(impulse) else 0.0
                imgui.bullet()
                imgui.text_wrapped(f"{names[live.body_a[c]]} / {names[live.body_b[c]]}: "
                                   f"{depth_text(live.depth[c])}, impulse {p:.3g} N s")
        imgui.separator()
        imgui.text("collision off for:")
        for a, b in list((w.contacts_spec or {}).get("disabled_pairs", [])):
            if W.button(f"x##{a}/{b}", f"contacts.remove.{a}/{b}"):
                app.run(RemoveContactFilter(a, b))
            imgui.same_line()
            imgui.text(f"{a} / {b}")
        names = w.body_names
        if len(names) >= 2:
            st = app.filter_pick
            st[0] = min(st[0], len(names) - 1)
            st[1] = min(st[1], len(names) - 1)
            style = imgui.get_style()
            button = imgui.calc_text_size("Add filter").x + 2 * style.frame_padding.x
            combo_w = max((imgui.get_content_region_avail().x - button
                           - 2 * style.item_spacing.x) / 2, 40)
            imgui.set_next_item_width(combo_w)
            _, st[0] = imgui.combo("##fa", st[0], names)
            imgui.same_line()
            imgui.set_next_item_width(combo_w)
            _, st[1] = imgui.combo("##fb", st[1], names)
            imgui.same_line()
            if W.button("Add filter", "contacts.add"):
                app.run(AddContactFilter(names[st[0]], names[st[1]]))
    imgui.end()
