"""Writes scenes/servo_arm.json: a seven-axis arm on servo axes (issue 3, Schmitt sec. 10).

Seven capsule links stand on each other along +Y; link 1 is jointed to the world. The axes
alternate like a real 7-axis arm (KUKA iiwa style): roll about the link's own axis (Y) and
pitch about Z, so joints 1, 3, 5, 7 turn the arm above them about its length and 2, 4, 6 bend
it. Every axis is a hinge servo (motor mode "position": target angle phi_soll, maximum torque
T_max = max_force, brake friction C_F = brake) following its own repeating target sequence:
a sine sampled every 0.25 s (linear interpolation in between), period and amplitude per axis,
starting at 0 (the initial pose). T_max is sized per axis from the load above it: for the
pitch axes the gravity torque of the links above at full reach with a factor 8 for the
accelerations; for the roll axes the inertia of the bent arm above. The factor is that
large because a sampled sequence has kinks (its rate jumps every 0.25 s): a servo meets
each kink with a short burst at T_max and lags its target by about a milliradian.

The scene uses the tree solver: holding servos weld the arm into one stiff cantilever, which
Gauss-Seidel (the iterative solver) converges on only slowly -- thousands of cycles and step
halvings per step from 4 axes on -- while Baraff's O(n) solve takes every hinge's locks and
servo row at once (joints/jacobian.py) and needs about two rounds per step. The links do
not collide with each other (collision group 2, mask 1), only with the ground.

Usage: python scenes/make_servo_arm.py [OUT.json [AXES]]   (default scenes/servo_arm.json;
AXES = 1..7, default 7: the first AXES links and axes).
"""
import json
import math
import sys

LINK_LENGTH = 0.3          # joint to joint
RADIUS = 0.045
BASE_Y = 0.3               # axis 1 (to the world)
MASSES = [1.2, 1.0, 0.9, 0.8, 0.7, 0.6, 0.5]
AXES = [[0, 1, 0], [0, 0, 1]] * 3 + [[0, 1, 0]]
# per axis: amplitude [rad], period [s], T_max [N m], brake C_F [N m s]
MOTION = [(1.2, 6.0, 160.0, 0.3),
          (0.6, 4.0, 240.0, 0.3),
          (1.0, 5.0, 80.0, 0.2),
          (0.8, 4.5, 120.0, 0.2),
          (1.2, 3.5, 40.0, 0.1),
          (0.9, 3.0, 40.0, 0.1),
          (1.5, 2.5, 16.0, 0.05)]
SAMPLE = 0.25
COLORS = [[0.9, 0.5, 0.2], [0.85, 0.85, 0.85]]


def sequence(amplitude, period):
    n = int(round(period / SAMPLE))
    times = [round(i * period / n, 6) for i in range(n + 1)]
    values = [round(amplitude * math.sin(2 * math.pi * t / period), 6) for t in times]
    values[-1] = 0.0
    return {"times": times, "values": values, "repeat": True}


def scene(axes=7):
    bodies = [{"name": "ground", "fixed": True, "shape": {"type": "plane"},
               "color": [0.5, 0.5, 0.52]}]
    joints = []
    for i, m in enumerate(MASSES[:axes]):
        y0 = BASE_Y + i * LINK_LENGTH
        bodies.append({"name": f"link{i + 1}",
                       "shape": {"type": "capsule", "radius": RADIUS,
                                 "length": round(LINK_LENGTH - 2 * RADIUS - 0.01, 6)},
                       "mass": m, "position": [0, round(y0 + LINK_LENGTH / 2, 6), 0],
                       "color": COLORS[i % 2], "collision": {"group": 2, "mask": 1}})
        amp, period, t_max, brake = MOTION[i]
        joints.append({"name": f"axis{i + 1}", "type": "hinge",
                       "bodies": ["world" if i == 0 else f"link{i}", f"link{i + 1}"],
                       "anchor": [0, round(y0, 6), 0], "axis": AXES[i],
                       "motor": {"mode": "position", "max_force": t_max, "brake": brake,
                                 "target": sequence(amp, period)}})
    return {"format": "impulse-scene", "version": 1, "name": "7-axis servo arm",
            "description": "A seven-axis arm (roll and pitch axes alternating) on servo axes "
                           "with torque limits and brakes, each following a repeating target "
                           "sequence.",
            "settings": {"h": 0.005, "eps_pos": 1e-05, "eps_vel": 0.0001, "solver": "tree"},
            "camera": {"eye": [2.4, 1.8, 2.8], "target": [0, 1.2, 0], "fov_deg": 45},
            "bodies": bodies, "joints": joints}


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "scenes/servo_arm.json"
    with open(out, "w", encoding="utf-8") as f:
        json.dump(scene(int(sys.argv[2]) if len(sys.argv) > 2 else 7), f, indent=2)
        f.write("\n")
    print("wrote", out)
