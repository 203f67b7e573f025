"""Moving the play area through the scene (``VRSession.world_from_stage``), at scale 1:
a metre in the headset is a metre in the scene and the stage floor is the scene's y = 0.

- recentre: the head goes to the scene camera's spot (x, z; the real head height is kept)
  looking towards the camera's target;
- smooth locomotion: the left thumbstick moves in the head's facing direction (horizontal);
- snap turn: the right thumbstick left/right turns by SNAP_DEG about the head.
"""

from __future__ import annotations

import numpy as np

from .controls import LEFT, RIGHT
from .xrmath import rotation_y, translation

SPEED = 1.5               # m/s at full stick
SNAP_DEG = 30.0
DEAD_ZONE = 0.15
SNAP_ON, SNAP_OFF = 0.7, 0.3


def head_pose(vr) -> np.ndarray | None:
    """World pose (4, 4) between the eyes of the last frame, or None before the first."""
    if len(vr.eyes) < 2:
        return None
    pose = vr.eyes[0].pose.copy()
    pose[:3, 3] = (vr.eyes[0].pose[:3, 3] + vr.eyes[1].pose[:3, 3]) / 2
    return pose


def yaw_of(pose: np.ndarray) -> float:
    """Heading of a pose's forward (-Z) about +Y, 0 when looking down -Z."""
    f = -pose[:3, 2]
    return float(np.arctan2(-f[0], -f[2]))


def place_head(world_from_stage, head, spot, yaw) -> np.ndarray:
    """world_from_stage changed so that the head (world pose) stands at spot (x, z) facing yaw."""
    turn = rotation_y(yaw - yaw_of(head))
    moved = turn @ head
    shift = translation(spot[0] - moved[0, 3], 0.0, spot[1] - moved[2, 3])
    return shift @ turn @ world_from_stage


class Locomotion:
    def __init__(self, camera: dict | None = None):
        cam = camera or {}
        eye = np.asarray(cam.get("eye", [0.0, 1.6, 3.0]), float)
        target = np.asarray(cam.get("target", [0.0, 0.5, 0.0]), float)
        f = target - eye
        self.home_spot = (float(eye[0]), float(eye[2]))
        self.home_yaw = float(np.arctan2(-f[0], -f[2])) if np.hypot(f[0], f[2]) > 1e-9 else 0.0
        self._snapped = False

    def recentre(self, vr) -> bool:
        """Head to the home spot and heading; False before the head was located."""
        head = head_pose(vr)
        if head is None:
            return False
        vr.world_from_stage = place_head(vr.world_from_stage, head, self.home_spot, self.home_yaw)
        return True

    def update(self, vr, dt: float) -> None:
        """Thumbsticks: move (left) and snap turn (right)."""
        head = head_pose(vr)
        if head is None:
            return
        stick = np.asarray(vr.hands[LEFT].thumbstick, float)
        if np.linalg.norm(stick) > DEAD_ZONE:
            yaw = yaw_of(head)
            forward = np.array([-np.sin(yaw), 0.0, -np.cos(yaw)])
            right = np.array([np.cos(yaw), 0.0, -np.sin(yaw)])
            step = (forward * stick[1] + right * stick[0]) * SPEED * dt
            vr.world_from_stage = translation(*step) @ vr.world_from_stage
        x = float(vr.hands[RIGHT].thumbstick[0])
        if not self._snapped and abs(x) > SNAP_ON:
            angle = -np.sign(x) * np.radians(SNAP_DEG)
            pivot = translation(*head[:3, 3])
            turn = pivot @ rotation_y(angle) @ np.linalg.inv(pivot)
            vr.world_from_stage = turn @ vr.world_from_stage
            self._snapped = True
        elif abs(x) < SNAP_OFF:
            self._snapped = False
