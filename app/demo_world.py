"""A stand-in world with the World's array attributes, for the render demo and benchmarks.

It moves bodies kinematically (spin + bob); it is not physics.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from app.render.instances import BOX, CAPSULE, CYLINDER, HULL, PLANE, SPHERE


def rot_y(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_x(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


class DemoWorld:
    """Bodies with one shape each (plus a static ground plane body at index 0)."""

    def __init__(self, bodies: list[dict], hull_vertex=None, camera=None):
        n = len(bodies) + 1
        self.body_names = ["ground"] + [b["name"] for b in bodies]
        self.body_pos = np.zeros((n, 3))
        self.body_rot = np.tile(np.identity(3), (n, 1, 1))
        self.body_vel = np.zeros((n, 3))
        self.body_omega = np.zeros((n, 3))
        self.body_static = np.zeros(n, dtype=bool)
        self.body_static[0] = True
        self.body_color = np.full((n, 3), 0.7)
        self.shape_body = np.arange(n, dtype=np.int64)
        self.shape_kind = np.full(n, PLANE, dtype=np.int64)
        self.shape_size = np.zeros((n, 3))
        self.shape_local_pos = np.zeros((n, 3))
        self.shape_local_rot = np.tile(np.identity(3), (n, 1, 1))
        self.hull_vertex = np.zeros((0, 3)) if hull_vertex is None else np.asarray(hull_vertex, float)
        self.shape_hull_start = np.zeros(n, dtype=np.int64)
        self.shape_hull_count = np.zeros(n, dtype=np.int64)
        for i, b in enumerate(bodies, start=1):
            self.body_pos[i] = b["pos"]
            self.body_rot[i] = b.get("rot", np.identity(3))
            self.body_color[i] = b["color"]
            self.body_omega[i] = b.get("omega", (0.0, 0.0, 0.0))
            self.shape_kind[i] = b["kind"]
            self.shape_size[i] = b.get("size", (0.0, 0.0, 0.0))
            self.shape_hull_start[i], self.shape_hull_count[i] = b.get("hull", (0, 0))
        self.contact_world = np.zeros((0, 3))
        self.contact_normal = np.zeros((0, 3))
        self.contact_impulse = np.zeros(0)
        self.joint_pairs = np.zeros((0, 2), dtype=np.int64)
        self.joint_local = np.zeros((0, 2, 3))
        self.joint_axis_local = np.zeros((0, 3))
        self.time = 0.0
        self.settings = SimpleNamespace(h=1.0 / 240.0)
        self.camera = camera or {"eye": [6.0, 4.0, 8.0], "target": [0.0, 0.7, 0.0], "fov_deg": 45.0}
        self._base_pos = self.body_pos.copy()

    def joint_anchor_world(self) -> np.ndarray:
        """(m,2,3) world anchors from body-local anchor points."""
        a, b = self.joint_pairs[:, 0], self.joint_pairs[:, 1]
        pa = self.body_pos[a] + np.einsum("mij,mj->mi", self.body_rot[a], self.joint_local[:, 0])
        pb = self.body_pos[b] + np.einsum("mij,mj->mi", self.body_rot[b], self.joint_local[:, 1])
        return np.stack([pa, pb], axis=1)

    def joint_axis_world(self) -> np.ndarray:
        return np.einsum("mij,mj->mi", self.body_rot[self.joint_pairs[:, 0]], self.joint_axis_local)

    def step(self) -> None:
        """Advance the kinematic animation by settings.h (spin about omega, bob up and down)."""
        h = self.settings.h
        self.time += h
        dyn = ~self.body_static
        w = self.body_omega[dyn]
        angle = np.linalg.norm(w, axis=1) * h
        k = w / np.maximum(np.linalg.norm(w, axis=1, keepdims=True), 1e-12)
        kx = np.zeros((len(k), 3, 3))
        kx[:, 0, 1], kx[:, 0, 2], kx[:, 1, 2] = -k[:, 2], k[:, 1], -k[:, 0]
        kx -= kx.transpose(0, 2, 1)
        s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
        r = np.identity(3) + s * kx + (1 - c) * kx @ kx
        self.body_rot[dyn] = r @ self.body_rot[dyn]
        bob = 0.15 * np.sin(2.0 * self.time + np.arange(len(self.body_pos)))
        new_y = self._base_pos[dyn, 1] + bob[dyn]
        self.body_vel[dyn, 1] = (new_y - self.body_pos[dyn, 1]) / h
        self.body_pos[dyn, 1] = new_y


def gallery() -> DemoWorld:
    """One body of every shape kind on a ground plane, with a joint and two contacts."""
    golden = (1 + 5 ** 0.5) / 2
    ico = np.array([[-1, golden, 0], [1, golden, 0], [-1, -golden, 0], [1, -golden, 0],
                    [0, -1, golden], [0, 1, golden], [0, -1, -golden], [0, 1, -golden],
                    [golden, 0, -1], [golden, 0, 1], [-golden, 0, -1], [-golden, 0, 1]]) * 0.32
    wedge = np.array([[-0.5, 0, -0.4], [0.5, 0, -0.4], [0, 0, 0.5], [0, 0.8, 0]], float)
    bodies = [
        dict(name="sphere", kind=SPHERE, size=(0.5, 0, 0), pos=(-3.0, 0.5, 0.0),
             color=(0.85, 0.3, 0.25), omega=(0, 0.5, 0)),
        dict(name="box", kind=BOX, size=(0.5, 0.35, 0.4), pos=(-1.5, 0.9, 0.0),
             color=(0.25, 0.55, 0.85), rot=rot_y(0.4) @ rot_x(0.3), omega=(0.2, 0.6, 0)),
        dict(name="capsule", kind=CAPSULE, size=(0.3, 0.5, 0), pos=(0.0, 0.8, 0.0),
             color=(0.3, 0.75, 0.4), rot=rot_x(0.5), omega=(0, 0.8, 0)),
        dict(name="cylinder", kind=CYLINDER, size=(0.4, 0.45, 0), pos=(1.5, 0.7, 0.0),
             color=(0.9, 0.7, 0.25), rot=rot_x(-0.4), omega=(0, -0.5, 0)),
        dict(name="icosahedron", kind=HULL, hull=(0, 12), pos=(3.0, 0.8, 0.0),
             color=(0.65, 0.4, 0.85), omega=(0.3, 0.4, 0)),
        dict(name="wedge", kind=HULL, hull=(12, 4), pos=(0.0, 0.3, 1.8),
             color=(0.85, 0.5, 0.6), omega=(0, 0.7, 0)),
    ]
    world = DemoWorld(bodies, hull_vertex=np.vstack([ico, wedge]))
    world.joint_pairs = np.array([[2, 3]])
    world.joint_local = np.array([[[0.75, 0.0, 0.0], [0.0, -0.2, 0.0]]])
    world.joint_axis_local = np.array([[0.0, 0.0, 1.0]])
    world.contact_world = np.array([[-3.0, 0.0, 0.0], [0.0, 0.0, 1.8]])
    world.contact_normal = np.array([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    world.contact_impulse = np.array([1.2, 0.6])
    return world


def box_stack(n: int = 1000, seed: int = 1) -> DemoWorld:
    """n small boxes in a grid of columns, randomly coloured and turned (benchmark scene)."""
    rng = np.random.default_rng(seed)
    side = int(np.ceil(np.sqrt(n / 10)))
    bodies = []
    for i in range(n):
        col, level = divmod(i, 10)
        x, z = col % side, col // side
        bodies.append(dict(name=f"box{i}", kind=BOX, size=(0.2, 0.2, 0.2),
                           pos=((x - side / 2) * 0.6, 0.2 + level * 0.42, (z - side / 2) * 0.6),
                           rot=rot_y(rng.uniform(0, np.pi)), color=rng.uniform(0.2, 0.9, 3),
                           omega=(0, rng.uniform(-1, 1), 0)))
    return DemoWorld(bodies, camera={"eye": [9.0, 7.0, 11.0], "target": [0.0, 1.5, 0.0],
                                     "fov_deg": 45.0})
