"""Impulse-based rigid multibody dynamics (Schmitt's impulse technique, Bender's VR method).

Public face: World, Settings, load_scene, save_scene, scene_to_world, world_to_scene,
SceneError, look_ahead.
"""
from .motion import look_ahead
from .scene import SceneError, load_scene, save_scene, scene_to_world, world_to_scene
from .settings import Settings
from .world import World

__all__ = ["World", "Settings", "SceneError", "load_scene", "save_scene", "scene_to_world",
           "world_to_scene", "look_ahead"]
