"""The main menu bar: File, Edit, View, Simulation, Help."""
from __future__ import annotations

from imgui_bundle import imgui

from impulse.app.recent import load_recent
from impulse.app.ui import widgets as W
from impulse.app.ui.layout import reset_layout
from impulse.app.ui.view_panel import TOGGLES

SPEEDS = (1 / 8, 1 / 4, 1 / 2, 1.0, 2.0, 4.0, 8.0)
PANELS = (("Scene tree", "tree"), ("Inspector", "inspector"), ("Solver", "solver"),
          ("Stats and plots", "stats"), ("Tools (palette, joints)", "tools"),
          ("Contacts panel (list, filters)", "contacts"), ("Timeline", "timeline"))


def _item(label: str, shortcut: str = "", enabled: bool = True) -> bool:
    return imgui.menu_item(label, shortcut, False, enabled)[0]


def _file_menu(app) -> None:
    if not imgui.begin_menu("File"):
        return
    if _item("New", "Ctrl+N"):
        app.new_scene()
    if _item("Open...", "Ctrl+O"):
        app.prompt_open()
    if imgui.begin_menu("Open recent", bool(load_recent())):
        for path in load_recent():
            if _item(path):
                app.open_path(path)
        imgui.end_menu()
    if _item("Launcher"):
        app.show_launcher()
    imgui.separator()
    has = app.session is not None
    if _item("Save", "Ctrl+S", has):
        app.save()
    if _item("Save as...", "Ctrl+Shift+S", has):
        app.prompt_save_as()
    if _item("Save state as...", "Ctrl+Alt+S", has):
        app.prompt_save_state()
    if has and imgui.is_item_hovered():
        imgui.set_tooltip("Save writes the scene as edited, every body where it started.\n"
                          "Save state as writes this moment exactly, to continue from it.")
    imgui.separator()
    if _item("Screenshot", "F12", has):
        app.screenshot()
    other = "without panels" if app.capture_panels else "with panels"
    if _item(f"Screenshot {other}", "Shift+F12", has):
        app.screenshot(panels=not app.capture_panels)
    if _item("Stop recording" if app.recorder.active else "Record video", "F9", has):
        app.toggle_recording()
    if not app.recorder.active and _item(f"Record video {other}", "Shift+F9", has):
        app.toggle_recording(panels=not app.capture_panels)
    if imgui.menu_item("Pictures and videos include the panels", "", app.capture_panels)[0]:
        app.capture_panels = not app.capture_panels
    imgui.separator()
    if _item("Quit", "Ctrl+Q"):
        app.quit()
    imgui.end_menu()


def _edit_menu(app) -> None:
    if not imgui.begin_menu("Edit"):
        return
    ed = app.session.editor if app.session else None
    undo = f"Undo {ed.undo_stack[-1].label}" if ed and ed.can_undo else "Undo"
    redo = f"Redo {ed.redo_stack[-1].label}" if ed and ed.can_redo else "Redo"
    if _item(undo, "Ctrl+Z", bool(ed and ed.can_undo)):
        app.undo()
    if _item(redo, "Ctrl+Shift+Z", bool(ed and ed.can_redo)):
        app.redo()
    imgui.separator()
    if _item("Delete", "Del", app.selection is not None):
        app.delete_selection()
    if _item("Duplicate", "Ctrl+D", bool(app.selection and app.selection[0] == "body")):
        app.duplicate_selection()
    imgui.end_menu()


def _view_menu(app) -> None:
    opened = imgui.begin_menu("View")
    W.record_rect("menu.View")
    if not opened:
        return
    opts = app.viewer.options
    for label, field in TOGGLES:
        if imgui.menu_item(label, "", getattr(opts, field))[0]:
            setattr(opts, field, not getattr(opts, field))
        W.record_rect(f"menu.View.{label}")
    imgui.separator()
    for label, key in PANELS:
        if imgui.menu_item(label, "", app.panels[key])[0]:
            app.panels[key] = not app.panels[key]
    imgui.separator()
    if _item("Focus selection", "F"):
        app.viewer.focus_selection()
    if _item("Reset view", "Home"):
        app.viewer.camera.reset()
    if _item("Reset layout"):
        reset_layout()
    imgui.end_menu()


def _sim_menu(app) -> None:
    if not imgui.begin_menu("Simulation"):
        return
    loop = app.session.loop if app.session else None
    if loop is not None:
        if _item("Play", "Space", loop.paused):
            loop.resume()
        if _item("Pause", "Space", not loop.paused):
            loop.pause()
        if _item("Step", "Right / N"):
            app.single_step()
        if _item("Reset", "Backspace"):
            app.reset()
        if imgui.begin_menu("Speed"):
            for s in SPEEDS:
                label = f"x1/{round(1 / s)}" if s < 1 else f"x{s:g}"
                if imgui.menu_item(label, "", abs(loop.speed - s) < 1e-9)[0]:
                    loop.speed = s
            imgui.end_menu()
    imgui.separator()
    if imgui.menu_item("Open scenes paused", "", app.open_paused)[0]:
        app.open_paused = not app.open_paused
    imgui.end_menu()


def _vr_menu(app) -> None:
    if not imgui.begin_menu("VR"):
        return
    if app.vr is None and _item("Enter VR"):
        app.enter_vr()
    if app.vr is not None and _item("Exit VR"):
        app.exit_vr()
    if imgui.menu_item("VR panel", "", app.panels["vr"])[0]:
        app.panels["vr"] = not app.panels["vr"]
    imgui.end_menu()


def draw_menu(app) -> None:
    if not imgui.begin_main_menu_bar():
        return
    _file_menu(app)
    if app.session is not None:
        _edit_menu(app)
        _view_menu(app)
        _sim_menu(app)
        _vr_menu(app)
    if imgui.begin_menu("Help"):
        if _item("Shortcuts", "F1"):
            app.panels["help"] = True
        imgui.end_menu()
    imgui.end_main_menu_bar()
