"""OpenXR graphics binding for the OpenGL context that is current on this thread.

Two kinds of context are supported:

- EGL (headless: ``moderngl.create_standalone_context(backend="egl")`` or pyglet with
  ``pyglet.options["headless"] = True``): ``XrGraphicsBindingEGLMNDX`` (extension
  ``XR_MNDX_egl_enable``, offered by Monado).
- GLX (a pyglet window on X11, e.g. the desktop mirror window): ``XrGraphicsBindingOpenGLXlibKHR``.
  pyopenxr's own class for it declares the pointer fields too narrow, so the struct is
  declared here with the C header's field types.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

import xr
from xr.platform import linux as xr_linux

EGL_CONFIG_ID = 0x3028
EGL_NONE = 0x3038
GLX_SCREEN = 0x800C
GLX_FBCONFIG_ID = 0x8013
GLX_VISUAL_ID = 0x800B


class GraphicsBindingOpenGLXlib(ctypes.Structure):
    """``XrGraphicsBindingOpenGLXlibKHR`` exactly as in openxr_platform.h."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("next", ctypes.c_void_p),
        ("x_display", ctypes.c_void_p),
        ("visualid", ctypes.c_uint32),
        ("glx_fbconfig", ctypes.c_void_p),
        ("glx_drawable", ctypes.c_ulong),
        ("glx_context", ctypes.c_void_p),
    ]


@dataclass
class GraphicsBinding:
    """A binding struct ready to chain into ``XrSessionCreateInfo.next``."""

    kind: str  # "egl" or "xlib"
    extensions: list[str]
    struct: ctypes.Structure
    keepalive: list = field(default_factory=list)

    @property
    def next_pointer(self) -> ctypes.c_void_p:
        return ctypes.cast(ctypes.pointer(self.struct), ctypes.c_void_p)


def _load(name: str):
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


def _egl_binding() -> GraphicsBinding | None:
    egl = _load("libEGL.so.1")
    if egl is None:
        return None
    for fn in ("eglGetCurrentDisplay", "eglGetCurrentContext"):
        getattr(egl, fn).restype = ctypes.c_void_p
    context = egl.eglGetCurrentContext()
    if not context:
        return None
    display = egl.eglGetCurrentDisplay()
    egl.eglQueryContext.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_int)]
    egl.eglChooseConfig.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int),
                                    ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_int)]
    config_id = ctypes.c_int(0)
    egl.eglQueryContext(display, context, EGL_CONFIG_ID, ctypes.byref(config_id))
    attribs = (ctypes.c_int * 3)(EGL_CONFIG_ID, config_id.value, EGL_NONE)
    config, count = ctypes.c_void_p(), ctypes.c_int(0)
    egl.eglChooseConfig(display, attribs, ctypes.byref(config), 1, ctypes.byref(count))
    get_proc = xr_linux.PFN_xrEglGetProcAddressMNDX(
        ctypes.cast(egl.eglGetProcAddress, ctypes.c_void_p).value)
    struct = xr_linux.GraphicsBindingEGLMNDX(
        get_proc_address=get_proc,
        display=ctypes.cast(display, xr_linux.EGLDisplay),
        config=ctypes.cast(config.value if count.value else None, xr_linux.EGLConfig),
        context=ctypes.cast(context, xr_linux.EGLContext),
    )
    return GraphicsBinding("egl", [xr.MNDX_EGL_ENABLE_EXTENSION_NAME], struct, [egl, get_proc])


def _xlib_binding() -> GraphicsBinding | None:
    glx = _load("libGLX.so.0") or _load("libGL.so.1")
    if glx is None:
        return None
    for fn in ("glXGetCurrentContext", "glXGetCurrentDisplay"):
        getattr(glx, fn).restype = ctypes.c_void_p
    glx.glXGetCurrentDrawable.restype = ctypes.c_ulong
    context = glx.glXGetCurrentContext()
    if not context:
        return None
    display = glx.glXGetCurrentDisplay()
    drawable = glx.glXGetCurrentDrawable()
    glx.glXQueryContext.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_int)]
    glx.glXChooseFBConfig.restype = ctypes.POINTER(ctypes.c_void_p)
    glx.glXChooseFBConfig.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                      ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
    glx.glXGetFBConfigAttrib.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                         ctypes.POINTER(ctypes.c_int)]
    screen, config_id = ctypes.c_int(0), ctypes.c_int(0)
    glx.glXQueryContext(display, context, GLX_SCREEN, ctypes.byref(screen))
    glx.glXQueryContext(display, context, GLX_FBCONFIG_ID, ctypes.byref(config_id))
    attribs = (ctypes.c_int * 3)(GLX_FBCONFIG_ID, config_id.value, 0)
    count = ctypes.c_int(0)
    configs = glx.glXChooseFBConfig(display, screen.value, attribs, ctypes.byref(count))
    fbconfig = configs[0] if count.value else None
    visual = ctypes.c_int(0)
    if fbconfig:
        glx.glXGetFBConfigAttrib(display, fbconfig, GLX_VISUAL_ID, ctypes.byref(visual))
    struct = GraphicsBindingOpenGLXlib(
        type=xr.StructureType.GRAPHICS_BINDING_OPENGL_XLIB_KHR.value,
        next=None, x_display=display, visualid=visual.value, glx_fbconfig=fbconfig,
        glx_drawable=drawable, glx_context=context)
    return GraphicsBinding("xlib", [], struct, [glx])


def current_context_binding() -> GraphicsBinding:
    """Binding for the OpenGL context current on this thread (EGL first, then GLX)."""
    binding = _egl_binding() or _xlib_binding()
    if binding is None:
        raise RuntimeError("no current EGL or GLX OpenGL context to bind the VR session to")
    binding.extensions.insert(0, xr.KHR_OPENGL_ENABLE_EXTENSION_NAME)
    return binding
