"""Benchmark: detection for n resting cubes stacked in a box (floor + 4 wall planes).

    python -m impulse.engine.collision.bench [--n 1000] [--repeat 200] [--gap 0.005]

Cubes of edge 1 m in a grid of side ceil(n^(1/3)), each sunk 1 mm into the one below,
side gaps of --gap (the default 5 mm is inside the 10 mm margin, so side contacts are
reported too: the worst case; 0.02 leaves only the stacking contacts), yaw jitter up to
0.02 rad, small random velocities, h = 0.01 s. Prints pairs, contacts and the
median/min time of CollisionDetector.detect after JIT warm-up, both wall clock and the
process's CPU time (the latter is less disturbed by other programs on a busy machine).
"""
import argparse
import math
import time

import numpy as np

from .detector import CollisionDetector
from .shapes import BOX, PLANE


def resting_cubes(n, seed=0, gap=0.005, yaw=0.02):
    """Body and shape arrays of n cubes in a grid plus 5 static planes (bodies n..n+4)."""
    rng = np.random.default_rng(seed)
    side = int(math.ceil(n ** (1.0 / 3.0)))
    pos, rot = [], []
    for i in range(n):
        x, z, y = i % side, (i // side) % side, i // (side * side)
        pos.append([(x - (side - 1) / 2) * (1 + gap), 0.5 + y * 0.999 - 0.001,
                    (z - (side - 1) / 2) * (1 + gap)])
        a = rng.uniform(-yaw, yaw)
        rot.append([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])
    half = side * (1 + gap) / 2 + 0.004
    planes = [(np.zeros(3), np.eye(3))]
    for ax, sgn in ((0, 1), (0, -1), (2, 1), (2, -1)):
        p = np.zeros(3)
        p[ax] = -sgn * half
        nrm = np.zeros(3)
        nrm[ax] = sgn                      # inward wall normal
        t = np.cross(nrm, [0, 1, 0])
        planes.append((p, np.stack([t, nrm, np.cross(t, nrm)], axis=1)))
    for p, R in planes:
        pos.append(p)
        rot.append(R)
    nb = len(pos)
    body_pos = np.array(pos, dtype=np.float64)
    body_rot = np.array(rot, dtype=np.float64)
    body_vel = np.zeros((nb, 3))
    body_vel[:n] = rng.normal(scale=0.01, size=(n, 3))
    body_omega = np.zeros((nb, 3))
    body_omega[:n] = rng.normal(scale=0.01, size=(n, 3))
    body_static = np.zeros(nb, dtype=bool)
    body_static[n:] = True
    shape_body = np.arange(nb, dtype=np.int64)
    shape_kind = np.array([BOX] * n + [PLANE] * 5, dtype=np.int64)
    shape_size = np.zeros((nb, 3))
    shape_size[:n] = 0.5
    return (shape_body, shape_kind, shape_size), (body_pos, body_rot, body_vel, body_omega,
                                                  body_static)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--gap", type=float, default=0.005)
    args = ap.parse_args(argv)
    shapes, state = resting_cubes(args.n, gap=args.gap)
    det = CollisionDetector(*shapes, margin=0.01)
    t0 = time.perf_counter()
    cs = det.detect(*state, 0.01)
    warm = time.perf_counter() - t0
    ts = []
    cpu = []
    for _ in range(args.repeat):
        c0 = time.process_time()
        t0 = time.perf_counter()
        cs = det.detect(*state, 0.01)
        ts.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    ts = np.array(ts) * 1e3
    cpu = np.array(cpu) * 1e3
    print(f"cubes {args.n}  shapes {len(shapes[0])}  pairs {det.n_pairs}  contacts {len(cs)}")
    print(f"first call (JIT load/compile) {warm:.2f} s")
    print(f"detect wall: median {np.median(ts):.3f} ms  min {ts.min():.3f} ms  "
          f"p90 {np.percentile(ts, 90):.3f} ms  ({args.repeat} calls)")
    print(f"detect CPU:  median {np.median(cpu):.3f} ms  min {cpu.min():.3f} ms")


if __name__ == "__main__":
    main()
