"""moderngl renderer for the World's arrays: instanced shapes, shadows, grid, gizmos."""
from app.render.options import RenderOptions
from app.render.renderer import Renderer
from app.render.target import ImageTarget

__all__ = ["Renderer", "RenderOptions", "ImageTarget"]
