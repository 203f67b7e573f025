"""The VR tests' shared set-up: Monado's simulated headset, an App in VR on hinge_chain (six
plates hanging from hinges, 2 m up), and frame pumping. These tests never skip: without a
runtime or pyopenxr they fail and say how to get them."""
from __future__ import annotations

import ctypes
import gc
import os
from pathlib import Path

import pytest

from impulse.app.vr import runtime

REPO = Path(__file__).resolve().parents[1]
SCENE = str(REPO / "scenes" / "hinge_chain.json")

os.environ.setdefault("XR_RUNTIME_JSON", str(runtime.MONADO_JSON))
runtime.use_simulated_headset()
os.environ.setdefault("SIMULATED_LEFT", "simple")
os.environ.setdefault("SIMULATED_RIGHT", "simple")


def require_vr():
    problem = runtime.unavailable_reason()
    if problem:
        pytest.fail(problem, pytrace=False)


def vr_app(tmp_path_factory, size):
    """Generator for a module fixture: an App in VR (focused), closed afterwards."""
    require_vr()
    import xr

    from impulse.app.app import App
    from impulse.app.session import Session
    from impulse.app.window import Viewer

    ctypes.CDLL("libEGL.so.1").eglReleaseThread()   # no stale EGL context: this is GLX
    home = tmp_path_factory.mktemp("home")
    os.environ.update(XDG_CACHE_HOME=str(home / "cache"), XDG_CONFIG_HOME=str(home / "config"))
    viewer = Viewer(None, *size, vsync=False)
    a = App(viewer, media_dir=str(home))
    a.set_session(Session.open(SCENE))
    assert a.enter_vr(), a.errors
    assert pump_until(a, lambda: a.vr.vr.state == xr.SessionState.FOCUSED, 300), a.vr.vr.state
    pump(a, 3)
    yield a
    a.close()
    viewer.close()
    a = viewer = None            # noqa: F841  (let them go before the collection)
    gc.collect()                 # pyglet's GL objects go while their context is current
    from gui_util import release_glx_context

    release_glx_context()        # later EGL users (test_vr_session) need a clean thread


def pump(app, n=1):
    for _ in range(n):
        app.viewer.window.dispatch_events()
        app.viewer.frame()


def pump_until(app, predicate, frames=100) -> bool:
    for _ in range(frames):
        if predicate():
            return True
        pump(app)
    return predicate()
