"""What the renderer draws: toggles, highlight state, light and look."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class RenderOptions:
    """Per-frame render settings; the UI edits these fields directly."""

    shadows: bool = True
    grid: bool = True
    wireframe: bool = False
    show_joints: bool = True
    show_contacts: bool = False
    show_com: bool = False
    show_velocity: bool = False
    show_loads: bool = True         # external loads: force and torque arrows
    tint_sleeping: bool = True
    show_visuals: bool = True       # imported models: visual meshes, not collision shapes
    gizmo_xray: bool = True
    selected: tuple[int, ...] = ()
    hovered: int = -1
    outline_px: float = 2.5
    gizmo_radius: float = 0.015
    joint_axis_length: float = 0.3
    com_axis_length: float = 0.15
    contact_scale: float = 0.5
    velocity_scale: float = 0.25
    grid_cell: float = 1.0
    ground_color: tuple[float, float, float] = (0.62, 0.63, 0.62)
    background: tuple[float, float, float] = (0.16, 0.18, 0.22)
    light_dir: np.ndarray = field(default_factory=lambda: np.array([0.45, 0.8, 0.35]))
    light_color: tuple[float, float, float] = (1.0, 0.96, 0.9)
