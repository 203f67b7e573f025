"""Modal dialogs: unsaved changes (Save / Discard / Cancel) and a file path prompt (with the
system file dialog when one is available), plus the Problems window for errors. The
simulation holds still while a dialog is open (and goes on after it if it was running)."""
from __future__ import annotations

import os
import shutil

from imgui_bundle import imgui

from impulse.app.ui import widgets as W
from impulse.app.ui.layout import place


def native_dialog_available() -> bool:
    """portable-file-dialogs needs zenity/kdialog on Linux (and a desktop to show them)."""
    helper = shutil.which("zenity") or shutil.which("kdialog")
    return bool(os.environ.get("DISPLAY")) and bool(helper)


class Dialogs:
    def __init__(self, app):
        self.app = app
        self.kind = None          # "unsaved" | "path"
        self._open_next = False
        self.title = ""
        self.path = ""
        self.on_ok = None         # path prompt: callable(path)
        self.then = None          # unsaved: what to do after Save / Discard
        self._held = None         # the loop this dialog paused (resumed when it closes)

    # ---------------------------------------------------------------- requests
    def ask_unsaved(self, then) -> None:
        self.kind, self.then, self._open_next = "unsaved", then, True
        self._hold()

    def ask_path(self, title: str, default: str, on_ok) -> None:
        self.kind, self.title, self.path, self.on_ok = "path", title, default, on_ok
        self._open_next = True
        self._hold()

    def _hold(self) -> None:
        """Pause the running simulation while the dialog asks (a scene is not saved or
        left while it moves on behind the question)."""
        ses = self.app.session
        loop = getattr(ses, "loop", None) if ses else None
        if self._held is None and loop is not None and not loop.paused:
            loop.pause()
            self._held = loop

    @property
    def open(self) -> bool:
        return self.kind is not None

    def close(self) -> None:
        self.kind = None
        imgui.close_current_popup()
        held, self._held = self._held, None
        if held is not None:
            held.resume()

    # ---------------------------------------------------------------- drawing
    def draw(self) -> None:
        if self.kind is None:
            return
        name = {"unsaved": "Unsaved changes", "path": self.title}[self.kind] + "###modal"
        if self._open_next:
            imgui.open_popup(name)
            self._open_next = False
        size = imgui.get_io().display_size
        imgui.set_next_window_pos(imgui.ImVec2(size.x / 2, size.y / 3), imgui.Cond_.always,
                                  imgui.ImVec2(0.5, 0.5))
        if not imgui.begin_popup_modal(name, None, imgui.WindowFlags_.always_auto_resize)[0]:
            return
        if self.kind == "unsaved":
            self._draw_unsaved()
        else:
            self._draw_path()
        imgui.end_popup()

    def _draw_unsaved(self) -> None:
        ses = self.app.session
        name = os.path.basename(ses.path) if ses and ses.path else "the new scene"
        imgui.text(f"Save the changes to {name} first?")
        if W.button("Save", "modal.save", imgui.ImVec2(90, 0)):
            then = self.then
            self.close()
            self.app.save(then=then)
        imgui.same_line()
        if W.button("Discard", "modal.discard", imgui.ImVec2(90, 0)):
            then = self.then
            self.close()
            then()
        imgui.same_line()
        if W.button("Cancel", "modal.cancel", imgui.ImVec2(90, 0)) or \
                imgui.is_key_pressed(imgui.Key.escape):
            self.close()

    def _draw_path(self) -> None:
        imgui.set_next_item_width(480)
        if imgui.is_window_appearing():
            imgui.set_keyboard_focus_here()
        entered, self.path = imgui.input_text("##path", self.path,
                                              imgui.InputTextFlags_.enter_returns_true)
        W.record_rect("modal.path")
        if native_dialog_available():
            imgui.same_line()
            if imgui.button("Browse..."):
                self._browse()
        if W.button("OK", "modal.ok", imgui.ImVec2(90, 0)) or entered:
            path, on_ok = os.path.expanduser(self.path.strip()), self.on_ok
            self.close()
            if path:
                on_ok(path)
        imgui.same_line()
        if W.button("Cancel", "modal.cancel", imgui.ImVec2(90, 0)) or \
                imgui.is_key_pressed(imgui.Key.escape):
            self.close()

    def _browse(self) -> None:
        from imgui_bundle import portable_file_dialogs as pfd

        start = os.path.dirname(self.path) or os.getcwd()
        if "save" in self.title.lower() or "record" in self.title.lower():
            result = pfd.save_file(self.title, start, ["Scene files", "*.json"]).result()
            if result:
                self.path = result
        else:
            result = pfd.open_file(self.title, start,
                                   ["Scene files and models", "*.json *.urdf *.xml",
                                    "Scene files", "*.json", "URDF and MJCF models",
                                    "*.urdf *.xml *.mjcf"]).result()
            if result:
                self.path = result[0]


def draw_problems(app) -> None:
    """Every problem on its own line (file: JSON path: sentence); the app keeps running."""
    if not app.errors:
        return
    place("problems", imgui.Cond_.appearing)
    imgui.push_style_color(imgui.Col_.title_bg_active, imgui.ImVec4(0.6, 0.15, 0.15, 1))
    opened, keep = imgui.begin("Problems###problems", True)
    imgui.pop_style_color()
    if opened:
        for line in app.errors:
            imgui.text_colored(imgui.ImVec4(1.0, 0.55, 0.5, 1.0), line)
        if W.button("Dismiss", "problems.dismiss"):
            keep = False
    imgui.end()
    if not keep:
        app.errors = []


SHORTCUTS = (("Space", "play / pause"), ("Right or N", "single step"),
             ("Backspace", "reset to the initial state"), ("[ and ]", "slower / faster"),
             ("Left drag on a body", "drag it (wheel: depth; Shift+release: throw)"),
             ("Left drag elsewhere / Alt", "orbit"), ("Middle or Shift+left drag", "pan"),
             ("Right drag + WASDQE", "fly"), ("Wheel", "zoom"), ("F / Home", "focus / reset view"),
             ("Ctrl+Z / Ctrl+Shift+Z", "undo / redo"), ("Del / Ctrl+D", "delete / duplicate"),
             ("Ctrl+N / O / S", "new / open / save"), ("Ctrl+Shift+S", "save as"),
             ("Ctrl+Alt+S", "save state as (this moment, exactly)"),
             ("F12 / F9", "screenshot / record video (to Pictures / Videos)"),
             ("Shift+F12 / Shift+F9", "the same without (or with) the panels"),
             ("Esc", "cancel the joint tool"),
             ("Ctrl+Q", "quit"))


def draw_help(app) -> None:
    if not app.panels.get("help"):
        return
    place("help")
    opened, app.panels["help"] = imgui.begin("Shortcuts", app.panels["help"])
    if opened and imgui.begin_table("keys", 2):
        for k, what in SHORTCUTS:
            imgui.table_next_row()
            imgui.table_next_column()
            imgui.text(k)
            imgui.table_next_column()
            imgui.text(what)
        imgui.end_table()
    imgui.end()
