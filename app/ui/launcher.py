"""The launcher: a gallery of the bundled scenes (thumbnail, name, one-line description),
recent files, Open... and the default scene one click away.

Thumbnails are rendered by the app (app/thumbs.py), one per frame from `update()` so the
window stays responsive, and cached on disk."""
from __future__ import annotations

import logging
import os

import imageio.v3 as iio
from imgui_bundle import imgui

from app.gallery import DEFAULT_SCENE, SCENES, scene_entries
from app.recent import load_recent
from app.thumbs import THUMB_SIZE, thumbnail
from app.ui import widgets as W
from app.ui.dialogs import native_dialog_available

log = logging.getLogger(__name__)
CARD_W = THUMB_SIZE[0]


def fit_text(text: str, width: float) -> str:
    """The text cut (with ...) to one line of the given pixel width."""
    if imgui.calc_text_size(text).x <= width:
        return text
    while text and imgui.calc_text_size(text + "...").x > width:
        text = text[:-1]
    return text.rstrip() + "..."


class Launcher:
    def __init__(self, app, folder=SCENES):
        self.app = app
        self.entries = scene_entries(folder)
        self.textures = {}             # scene path -> moderngl texture (None: failed)
        self.failures = {}             # scene path -> one-line reason
        self.open_path = ""
        self.card_rects = {}           # scene name -> (x0, y0, x1, y1) of its thumbnail

    @property
    def thumbnails_done(self) -> bool:
        return all(e.path in self.textures for e in self.entries)

    def update(self) -> None:
        """Make the next missing thumbnail texture (call outside the UI pass)."""
        for e in self.entries:
            if e.path not in self.textures:
                self.textures[e.path] = self._texture(e.path)
                return

    def _texture(self, path):
        v = self.app.viewer
        try:
            png = thumbnail(v.ctx, v.renderer, path)
            img = iio.imread(png)[..., :3]
        except Exception as e:  # noqa: BLE001 - a broken scene file gets a card without picture
            self.failures[path] = str(e).splitlines()[0]
            log.warning("no thumbnail for %s: %s", path, e)
            return None
        tex = v.ctx.texture((img.shape[1], img.shape[0]), 3, img.tobytes())
        return tex

    def release(self) -> None:
        for tex in self.textures.values():
            if tex is not None:
                tex.release()
        self.textures.clear()

    # ---------------------------------------------------------------- drawing
    def draw(self) -> None:
        size = imgui.get_io().display_size
        imgui.set_next_window_pos(imgui.ImVec2(0, 22), imgui.Cond_.always)
        imgui.set_next_window_size(imgui.ImVec2(size.x, size.y - 22), imgui.Cond_.always)
        flags = imgui.WindowFlags_.no_title_bar | imgui.WindowFlags_.no_resize | \
            imgui.WindowFlags_.no_move | imgui.WindowFlags_.no_collapse
        imgui.begin("Launcher", None, flags)
        imgui.text("impulse - rigid multibody scenes")
        imgui.same_line(size.x - 430)
        if W.button("Open the default scene", "launcher.default"):
            self.app.open_path(str(DEFAULT_SCENE))
        imgui.same_line()
        if W.button("New empty scene", "launcher.new"):
            self.app.new_scene()
        imgui.separator()
        self._gallery(size.x)
        imgui.separator()
        self._open_row()
        self._recent()
        imgui.end()

    def _gallery(self, width: float) -> None:
        imgui.text("Bundled scenes")
        per_row = max(int((width - 20) // (CARD_W + 24)), 1)
        for i, e in enumerate(self.entries):
            if i % per_row:
                imgui.same_line()
            imgui.begin_group()
            tex = self.textures.get(e.path)
            tsize = imgui.ImVec2(*THUMB_SIZE)
            if tex is not None:
                clicked = imgui.image_button(f"##card{i}", imgui.ImTextureRef(tex.glo), tsize)
            else:
                label = "rendering..." if e.path not in self.textures else "no preview"
                clicked = imgui.button(f"{label}##card{i}", imgui.ImVec2(tsize.x + 8, tsize.y + 8))
            W.record_rect(f"card.{e.name}")
            if clicked:
                self.app.open_path(str(e.path))
            imgui.push_text_wrap_pos(imgui.get_cursor_pos_x() + CARD_W + 8)
            imgui.text(e.name)
            imgui.text_disabled(fit_text(e.description, CARD_W + 8))
            if imgui.is_item_hovered():
                imgui.set_tooltip(f"{e.description}\n{e.path}")
            if e.path in self.failures:
                imgui.text_colored(imgui.ImVec4(1, 0.5, 0.4, 1), self.failures[e.path][:80])
            imgui.pop_text_wrap_pos()
            imgui.end_group()

    def _open_row(self) -> None:
        imgui.text("Open a scene file:")
        imgui.set_next_item_width(520)
        entered, self.open_path = imgui.input_text("##openpath", self.open_path,
                                                   imgui.InputTextFlags_.enter_returns_true)
        W.record_rect("launcher.path")
        imgui.same_line()
        if W.button("Open...", "launcher.open") or entered:
            path = os.path.expanduser(self.open_path.strip())
            if path:
                self.app.open_path(path)
            else:
                self.app.prompt_open()
        if native_dialog_available():
            imgui.same_line()
            if imgui.button("Browse..."):
                self.app.prompt_open()

    def _recent(self) -> None:
        recent = load_recent()
        imgui.text("Recent files" if recent else "No recent files yet.")
        for path in recent:
            if imgui.selectable(f"{os.path.basename(path)}   {path}##recent", False)[0]:
                self.app.open_path(path)
