"""The renderer: shadow pass, ground + grid, instanced shapes, outlines, gizmos, MSAA resolve.

Use `render(fb, view, proj, scene, options)` for one view, or `prepare(scene, options)` once
and `draw(fb, view, proj, options)` per view (VR eyes). `scene` is anything with the World's
array attributes (body_*, shape_*, hull_*, contact_*, joint_anchor_world()).
"""
from __future__ import annotations

import hashlib

import moderngl
import numpy as np

from impulse.app.mathutil import gl_bytes, normalize
from impulse.app.render import meshes
from impulse.app.render.batch import MeshBatch, set_uniform
from impulse.app.render.gizmos import build_gizmos
from impulse.app.render.ground import Ground
from impulse.app.render.instances import (
    BOX,
    CAPSULE,
    CYLINDER,
    SPHERE,
    SceneInstances,
    body_flags,
    build_instances,
)
from impulse.app.render.lod import LodBatch
from impulse.app.render.options import RenderOptions
from impulse.app.render.picking import Picker
from impulse.app.render.shaders import load_program
from impulse.app.render.shadow import ShadowMap, light_view_proj
from impulse.app.render.target import RenderTarget
from impulse.app.render.visuals import VisualBatches


def is_software(ctx: moderngl.Context) -> bool:
    """True on CPU rasterisers (Mesa llvmpipe / softpipe / swrast)."""
    name = ctx.info.get("GL_RENDERER", "").lower()
    return any(word in name for word in ("llvmpipe", "softpipe", "swrast", "software"))


MAX_TARGETS = 4


class Renderer:
    """Draws a scene's arrays into any moderngl framebuffer (window, offscreen, VR eye).

    samples / shadow_size default to 4 / 2048 on GPUs and 0 / 1024 on software rasterisers
    (MSAA costs llvmpipe 3-5x per frame).
    """

    def __init__(self, ctx: moderngl.Context, samples: int | None = None,
                 shadow_size: int | None = None):
        self.ctx = ctx
        soft = is_software(ctx)
        samples = (0 if soft else 4) if samples is None else samples
        shadow_size = (1024 if soft else 2048) if shadow_size is None else shadow_size
        self.progs = {name: load_program(ctx, name)
                      for name in ("shape", "shadow", "outline", "grid", "pick")}
        self.shapes = {SPHERE: MeshBatch(ctx, meshes.sphere()), BOX: MeshBatch(ctx, meshes.box()),
                       CAPSULE: MeshBatch(ctx, meshes.capsule()),
                       CYLINDER: MeshBatch(ctx, meshes.cylinder())}
        self.gizmo_batches = (LodBatch(ctx, meshes.sphere(12, 6), meshes.sphere(6, 3)),
                              MeshBatch(ctx, meshes.cylinder(10)), MeshBatch(ctx, meshes.cone(12)))
        self.hulls: dict[tuple[int, int], tuple[str, MeshBatch]] = {}
        self.visuals = VisualBatches(ctx)
        self.ground = Ground(ctx, self.progs["grid"])
        self.samples = samples
        self.targets: dict[tuple[int, int], RenderTarget] = {}   # one per view size
        self.shadow = ShadowMap(ctx, shadow_size)
        self.picker = Picker(ctx, self.progs["pick"])
        self.instances = SceneInstances()
        self.light_vp = np.identity(4)
        self._shadow_ready = False

    # ---------------------------------------------------------------- per-scene work
    def _hull_batch(self, key, points) -> MeshBatch:
        digest = hashlib.sha1(np.ascontiguousarray(points, dtype=np.float64).tobytes()).hexdigest()
        cached = self.hulls.get(key)
        if cached is None or cached[0] != digest:
            if cached is not None:
                cached[1].release()
            self.hulls[key] = (digest, MeshBatch(self.ctx, meshes.convex_hull(points)))
        return self.hulls[key][1]

    def shape_batches(self) -> list[MeshBatch]:
        """Batches of the scene's solid shapes (what casts shadows and can be picked): the
        shapes, and imported models' visual meshes where they are shown."""
        return (list(self.shapes.values()) + [b for _, b in self.hulls.values() if b.count]
                + self.visuals.live())

    def prepare(self, scene, options: RenderOptions | None = None) -> None:
        """Upload instances and gizmos, and render the shadow map (view-independent work)."""
        opts = options or RenderOptions()
        sleeping = getattr(scene, "body_asleep", None) if opts.tint_sleeping else None
        inst = build_instances(scene, opts.selected, opts.hovered, opts.wireframe, sleeping)
        self.instances = inst
        meta = getattr(scene, "meta", None)
        visuals = meta.get("visuals") if opts.show_visuals and isinstance(meta, dict) else None
        flags = body_flags(len(scene.body_pos), opts.selected, opts.hovered)
        shown = self.visuals.update(scene, visuals, flags)
        if shown:                                 # those bodies' shapes give way to them
            hide = np.array(sorted(shown), dtype=np.float32)
            inst.by_kind = {k: r[~np.isin(r[:, 22], hide)] for k, r in inst.by_kind.items()}
            for group in inst.hulls:
                group.instances = group.instances[~np.isin(group.instances[:, 22], hide)]
        for kind, batch in self.shapes.items():
            batch.set_instances(inst.by_kind.get(kind, np.zeros((0, 23), np.float32)))
        live = set()
        for group in inst.hulls:
            self._hull_batch(group.key, group.points).set_instances(group.instances)
            live.add(group.key)
        for key in list(self.hulls):
            if key not in live:
                self.hulls.pop(key)[1].release()
        giz = build_gizmos(scene, opts)
        for batch, rows in zip(self.gizmo_batches, (giz.spheres, giz.cylinders, giz.cones),
                              strict=True):
            batch.set_instances(rows)
        self.light_vp = light_view_proj(inst.centre, inst.radius, opts.light_dir, self.shadow.size)
        self._shadow_ready = False
        if opts.shadows:
            self._render_shadow()

    def _render_shadow(self) -> None:
        ctx, prog = self.ctx, self.progs["shadow"]
        self.shadow.fbo.use()
        self.shadow.fbo.clear(depth=1.0)
        ctx.enable_only(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        ctx.cull_face = "front"  # back faces only: fewer fragments, less shadow acne
        ctx.wireframe = False
        set_uniform(prog, "u_light_vp", gl_bytes(self.light_vp))
        for batch in self.shape_batches():
            batch.draw(prog)
        ctx.cull_face = "back"
        self._shadow_ready = True

    # ---------------------------------------------------------------- per-view work
    def _common_uniforms(self, prog, view, proj, eye, opts) -> None:
        set_uniform(prog, "u_view", gl_bytes(view))
        set_uniform(prog, "u_proj", gl_bytes(proj))
        set_uniform(prog, "u_light_vp", gl_bytes(self.light_vp))
        set_uniform(prog, "u_light_dir", tuple(normalize(opts.light_dir)))
        set_uniform(prog, "u_light_color", tuple(opts.light_color))
        set_uniform(prog, "u_eye", tuple(eye))
        set_uniform(prog, "u_shadow_map", 0)
        set_uniform(prog, "u_use_shadow", int(opts.shadows and self._shadow_ready))
        set_uniform(prog, "u_shadow_texel", 1.0 / self.shadow.size)
        set_uniform(prog, "u_alpha", 1.0)

    def draw(self, fb: moderngl.Framebuffer, view, proj, options: RenderOptions | None = None,
             size: tuple[int, int] | None = None) -> None:
        """Render the prepared scene with this camera into fb (its lower-left `size` pixels)."""
        opts = options or RenderOptions()
        ctx = self.ctx
        size = tuple(size or fb.size)
        view = np.asarray(view, dtype=np.float64)
        proj = np.asarray(proj, dtype=np.float64)
        eye = np.linalg.inv(view)[:3, 3]
        target = self._target(size)
        fbo = target.fbo
        fbo.use()
        fbo.clear(*opts.background, 1.0, depth=1.0)
        self.shadow.depth.use(location=0)
        for prog in self.progs.values():
            self._common_uniforms(prog, view, proj, eye, opts)
        ctx.enable_only(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        ctx.wireframe = bool(opts.wireframe)
        shape = self.progs["shape"]
        for batch in self.shape_batches():   # opaque shapes first, nearest first: the
            batch.sort_front_to_back(eye)     # ground behind them is then depth-rejected
            batch.draw(shape)
        ctx.wireframe = False
        ctx.enable_only(moderngl.DEPTH_TEST)
        self.ground.draw(self.instances.planes, opts, fallback_grid=not opts.wireframe)
        ctx.enable_only(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        if (opts.selected or opts.hovered >= 0) and opts.outline_px > 0:
            outline = self.progs["outline"]
            set_uniform(outline, "u_viewport", (float(size[0]), float(size[1])))
            set_uniform(outline, "u_width_px", float(opts.outline_px))
            ctx.cull_face = "front"
            for batch in self.shape_batches():
                batch.draw(outline)
            ctx.cull_face = "back"
        self.gizmo_batches[0].choose(eye, proj, size[1])
        for batch in self.gizmo_batches:
            batch.draw(shape)
        if opts.gizmo_xray and any(b.count for b in self.gizmo_batches):
            ctx.enable(moderngl.BLEND)
            ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
            ctx.depth_func = ">"
            set_uniform(shape, "u_alpha", 0.35)
            for batch in self.gizmo_batches:
                batch.draw(shape)
            set_uniform(shape, "u_alpha", 1.0)
            ctx.depth_func = "<"
            ctx.disable(moderngl.BLEND)
        target.resolve(fb)

    def _target(self, size) -> RenderTarget:
        """The offscreen target of this view size (window and VR eyes alternate each frame,
        so each size keeps its own; the oldest of more than MAX_TARGETS is dropped)."""
        size = (max(int(size[0]), 1), max(int(size[1]), 1))
        target = self.targets.pop(size, None)
        if target is None:
            target = RenderTarget(self.ctx, self.samples)
            target.ensure(size)
        self.targets[size] = target                  # most recently used last
        while len(self.targets) > MAX_TARGETS:
            self.targets.pop(next(iter(self.targets))).release()
        return target

    def render(self, fb, view, proj, scene, options: RenderOptions | None = None,
               size: tuple[int, int] | None = None) -> None:
        """prepare + draw for a single view."""
        self.prepare(scene, options)
        self.draw(fb, view, proj, options, size)

    def pick(self, view, proj, x: float, y: float, size) -> tuple[int, np.ndarray | None]:
        """Body under pixel (x, y) (GL convention, y up) of the prepared scene, and the hit
        point."""
        body, ndc_z = self.picker.pick(self.shape_batches(), view, proj, x, y, size)
        if body < 0:
            return -1, None
        ndc = np.array([2.0 * (np.floor(x) + 0.5) / size[0] - 1.0,
                        2.0 * (np.floor(y) + 0.5) / size[1] - 1.0, ndc_z, 1.0])
        world = np.linalg.inv(np.asarray(proj) @ np.asarray(view)) @ ndc
        return body, world[:3] / world[3]

    def release(self) -> None:
        for batch in list(self.shapes.values()) + list(self.gizmo_batches):
            batch.release()
        for _, batch in self.hulls.values():
            batch.release()
        self.visuals.release()
        for obj in (self.ground, *self.targets.values(), self.shadow, self.picker):
            obj.release()
        for prog in self.progs.values():
            prog.release()
