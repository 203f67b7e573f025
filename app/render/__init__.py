"""moderngl renderer for the World's arrays: instanced shapes, shadows, grid, gizmos."""
from impulse.app.render.options import RenderOptions
from impulse.app.render.renderer import Renderer
from impulse.app.render.target import ImageTarget

__all__ = ["Renderer", "RenderOptions", "ImageTarget"]
