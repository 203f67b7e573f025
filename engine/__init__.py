"""Impulse-based rigid multibody dynamics (Schmitt's impulse technique, Bender's VR method).

Public face: World (with BodyId, JointId, LoadId, ShapeId and ContactId handles), Settings,
the typed definitions (SceneDef, BodyDef, ShapeDef, JointDef, LoadDef and their parts:
definitions.py), load_scene, save_scene, scene_to_world, world_to_scene, SceneError, look_ahead.
"""
from . import jitopts, kernel_cache

kernel_cache.use()      # before any kernel module: numba's cache keyed by all engine sources
jitopts.one_compile_per_type()
jitopts.numpy_division()
jitopts.quick_inlining()

from .definitions import (  # noqa: E402
    BodyDef,
    JointDef,
    LimitsDef,
    LoadDef,
    MaterialDef,
    MotorDef,
    SceneDef,
    ShapeDef,
)
from .handles import BodyId, ContactId, JointId, LoadId, ShapeId, StaleHandle  # noqa: E402
from .motion import look_ahead  # noqa: E402
from .scene import (  # noqa: E402
    SceneError,
    load_scene,
    save_scene,
    scene_to_world,
    world_to_scene,
    world_to_scene_def,
)
from .settings import Settings  # noqa: E402
from .world import World  # noqa: E402

__all__ = ["World", "BodyId", "JointId", "LoadId", "StaleHandle", "Settings", "SceneError",
           "load_scene", "save_scene", "scene_to_world", "world_to_scene", "look_ahead",
           "SceneDef", "BodyDef", "ShapeDef", "JointDef", "LoadDef", "MaterialDef",
           "MotorDef", "LimitsDef", "ShapeId", "ContactId", "world_to_scene_def"]
