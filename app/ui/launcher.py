"""The launcher: a gallery of the bundled scenes (thumbnail, name, as much of the description
as fits on one line; all of it on hover) in as many columns as the window's width takes,
recent files, Open... and the default scene one click away.

Thumbnails are rendered by the app (app/thumbs.py), one per frame from `update()` so the
window stays responsive, and cached on disk."""
from __future__ import annotations

import logging
import os

import imageio.v3 as iio
from imgui_bundle import imgui

from impulse.app.gallery import DEFAULT_SCENE, SCENES, scene_entries
from impulse.app.kernel_compile import load_features_for_path
from impulse.app.recent import load_recent
from impulse.app.thumbs import THUMB_SIZE, thumbnail
from impulse.app.ui import widgets as W
from impulse.app.ui.dialogs import native_dialog_available
from impulse.engine import interpreted

log = logging.getLogger(__name__)
MIN_CARD_W = 240               # a card is at least this wide; the columns share the rest
TOOLTIP_EM = 32                # width of the description's tooltip, in font sizes


def fit_text(text: str, width: float) -> str:
    """The text cut (with ...) to one line of the given pixel width."""
    if imgui.calc_text_size(text).x <= width:
        return text
    lo, hi = 0, len(text)                 # the longest start that fits with "..." after it
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if imgui.calc_text_size(text[:mid] + "...").x <= width:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo].rstrip() + "..."


class Launcher:
    def __init__(self, app, folder=SCENES):
        self.app = app
        self.entries = scene_entries(folder)
        self.textures = {}             # scene path -> moderngl texture (None: failed)
        self.failures = {}             # scene path -> one-line reason
        self.open_path = ""
        self.card_rects = {}           # scene name -> (x0, y0, x1, y1) of its thumbnail
        self.still = set()             # paths whose thumbnail was made before the kernels
        self.load_needs = {e.path: load_features_for_path(e.path) for e in self.entries}

    @property
    def thumbnails_done(self) -> bool:
        return all(e.path in self.textures for e in self.entries)

    @property
    def thumbnails_to_make(self) -> bool:
        """A missing thumbnail can be made now (not one waiting for the kernels)."""
        return self._next_missing() is not None

    def update(self) -> None:
        """Make the next missing thumbnail texture (call outside the UI pass). While the
        kernels compile, a scene whose load runs a kernel waits until the compile has it
        (kernel_compile.load_features_for_path): its card says "after the kernels" meanwhile."""
        path = self._next_missing()
        if path is not None:
            self.textures[path] = self._texture(path)

    def _next_missing(self):
        """The first scene without a thumbnail that can have one now, or None."""
        for e in self.entries:
            if e.path not in self.textures and not self._waits(e.path):
                return e.path
        return None

    def _waits(self, path) -> bool:
        """The scene's load needs kernels the running compile does not have yet."""
        c = self.app.compile
        return c is not None and not c.has(self.load_needs[path]) and not interpreted.active()

    def kernels_ready(self) -> None:
        """The first start's compile finished: settle the thumbnails made without it."""
        for path in self.still:
            tex = self.textures.pop(path, None)
            if tex is not None:
                tex.release()
        self.still.clear()

    def _texture(self, path):
        v = self.app.viewer
        compiling = self.app.compile is not None
        if compiling:
            self.still.add(path)
        try:
            png = thumbnail(v.ctx, v.renderer, path, settled=not compiling)
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
        self._compile_progress()
        self._gallery()
        imgui.separator()
        self._open_row()
        self._recent()
        imgui.end()

    def _compile_progress(self) -> None:
        """The first start's kernel compile: a bar with an estimate; what waits for it."""
        c = self.app.compile
        if c is None:
            return
        imgui.text(c.status_line())
        imgui.progress_bar(c.fraction, imgui.ImVec2(-1, 0), c.bar_label())
        waiting = self.app.pending_open
        if waiting is not None:
            imgui.text_wrapped(self.app.status)
        else:
            imgui.push_text_wrap_pos(0.0)       # wrapped at the window's edge
            imgui.text_disabled(
                ("Scenes open at once meanwhile and run as Python, slowly (a pendulum in real "
                 "time, a pile of boxes far slower), until the kernels are in."
                 if interpreted.active() else
                 "The gallery and files work meanwhile; a scene opens as soon as its kernels "
                 "are ready.")
                + " Closing the window stops the compile. Later starts take a second or two.")
            imgui.pop_text_wrap_pos()
        imgui.separator()

    def _gallery(self) -> None:
        imgui.text("Bundled scenes")
        gap = imgui.get_style().item_spacing.x
        pad = imgui.get_style().frame_padding
        avail = imgui.get_content_region_avail().x
        per_row = max(int((avail + gap) // (MIN_CARD_W + gap)), 1)
        card_w = (avail - gap * (per_row - 1)) / per_row
        image_w = card_w - 2 * pad.x
        image = imgui.ImVec2(image_w, image_w * THUMB_SIZE[1] / THUMB_SIZE[0])
        for i, e in enumerate(self.entries):
            if i % per_row:
                imgui.same_line()
            imgui.begin_group()
            tex = self.textures.get(e.path)
            if tex is not None:
                clicked = imgui.image_button(f"##card{i}", imgui.ImTextureRef(tex.glo), image)
            else:
                label = "no preview" if e.path in self.textures else \
                    "after the kernels" if self._waits(e.path) else "rendering..."
                clicked = imgui.button(f"{label}##card{i}", image + pad * 2)
            W.record_rect(f"card.{e.name}")
            if clicked:
                self.app.open_path(str(e.path))
            imgui.text(fit_text(e.name, card_w))
            imgui.text_disabled(fit_text(e.description, card_w))
            if e.path in self.failures:
                imgui.text_colored(imgui.ImVec4(1, 0.5, 0.4, 1),
                                   fit_text(self.failures[e.path], card_w))
            imgui.end_group()
            if imgui.is_item_hovered():
                self._card_tooltip(e)

    def _card_tooltip(self, e) -> None:
        """The whole description (wrapped), the file and why it has no picture."""
        imgui.begin_tooltip()
        imgui.push_text_wrap_pos(imgui.get_font_size() * TOOLTIP_EM)
        imgui.text_wrapped(e.name)
        imgui.text_wrapped(e.description or "(no description)")
        imgui.text_disabled(str(e.path))
        if e.path in self.failures:
            imgui.text_wrapped(self.failures[e.path])
        imgui.pop_text_wrap_pos()
        imgui.end_tooltip()

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
