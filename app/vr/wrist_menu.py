"""The wrist menu: a row of buttons above the left controller, pressed by pointing the
right controller's ray at one and pulling its trigger.

Buttons are coloured boxes (no text in the headset; the mirror window's VR panel lists
them with their labels and marks the one pointed at). Geometry is in the left grip's
frame: the row runs along its +X, 6 cm above and 4 cm behind the grip.
"""

from __future__ import annotations

import numpy as np

from .flat_boxes import box_matrix

SIZE = 0.035              # button edge [m]
SPACING = 0.045
ROW_OFFSET = np.array([0.0, 0.06, 0.04])
HOVER_SCALE = 1.3

# key, label, colour
BUTTONS = (
    ("play", "Play / pause", (0.2, 0.8, 0.3)),
    ("step", "Single step", (0.95, 0.85, 0.2)),
    ("reset", "Reset", (0.25, 0.45, 1.0)),
    ("joint", "Add joint (press again: next type)", (0.7, 0.3, 0.9)),
    ("remove", "Remove joint", (1.0, 0.25, 0.2)),
    ("undo", "Undo", (0.6, 0.6, 0.6)),
    ("recentre", "Recentre", (0.2, 0.9, 0.95)),
)
KEYS = tuple(b[0] for b in BUTTONS)


def button_centers(grip: np.ndarray) -> np.ndarray:
    """World centres (k, 3) of the buttons for a left grip pose (4, 4)."""
    xs = (np.arange(len(BUTTONS)) - (len(BUTTONS) - 1) / 2) * SPACING
    local = ROW_OFFSET + np.outer(xs, [1.0, 0.0, 0.0])
    return (grip[:3, :3] @ local.T).T + grip[:3, 3]


def hit_button(grip: np.ndarray, origin, direction) -> str | None:
    """The button the ray passes through first (slab test in the grip's frame), or None."""
    rot = grip[:3, :3]
    o, d = rot.T @ (np.asarray(origin) - grip[:3, 3]), rot.T @ np.asarray(direction)
    best, best_t = None, np.inf
    centers = (rot.T @ (button_centers(grip) - grip[:3, 3]).T).T
    for key, c in zip(KEYS, centers, strict=True):
        with np.errstate(divide="ignore", invalid="ignore"):
            t1, t2 = (c - SIZE / 2 - o) / d, (c + SIZE / 2 - o) / d
        near = np.nanmax(np.minimum(t1, t2))
        far = np.nanmin(np.maximum(t1, t2))
        if near <= far and far > 0 and near < best_t:
            best, best_t = key, near
    return best


def menu_boxes(grip: np.ndarray, hovered: str | None, lit=()) -> list:
    """(model, colour) of every button; the hovered one larger, `lit` ones brighter."""
    boxes = []
    for (key, _, color), c in zip(BUTTONS, button_centers(grip), strict=True):
        scale = SIZE * (HOVER_SCALE if key == hovered else 1.0)
        col = np.minimum(np.asarray(color) * (1.4 if key in lit else 0.8), 1.0)
        boxes.append((box_matrix(c, scale, grip[:3, :3]), col))
    return boxes
