"""Writes the contact scenes (rod_table, four_balls, box_stack, pyramid, funnel_1000,
wall_car, hexapod, chain_drape; issue 16's newtons_cradle, bouncing_balls, rolling_bodies,
tall_tower, spinning_top) next to this file:
python scenes/make_contact_scenes.py [NAME ...]   (default: all)"""
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
G = 9.81


def scene(name, description, bodies, joints=(), settings=None, camera=None):
    d = {"format": "impulse-scene", "version": 1, "name": name, "description": description,
         "settings": settings or {"h": 1.0 / 60.0},
         "camera": camera or {"eye": [3.0, 2.0, 4.0], "target": [0.0, 0.5, 0.0], "fov_deg": 45},
         "bodies": [ground()] + list(bodies)}
    if joints:
        d["joints"] = list(joints)
    return d


def ground(mu=0.5):
    return {"name": "ground", "fixed": True, "shape": {"type": "plane"},
            "material": {"static_friction": mu, "dynamic_friction": mu},
            "color": [0.55, 0.57, 0.6]}


def box(name, pos, size, mass=1.0, mu=0.5, fixed=False, color=(0.8, 0.5, 0.2), quat=None):
    b = {"name": name, "shape": {"type": "box", "size": list(map(float, size))},
         "position": [float(x) for x in pos],
         "material": {"static_friction": mu, "dynamic_friction": mu}, "color": list(color)}
    if quat is not None:
        b["orientation"] = [float(q) for q in quat]
    if fixed:
        b["fixed"] = True
    else:
        b["mass"] = mass
    return b


def quat_axis(axis, angle):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    s = math.sin(angle / 2)
    return [math.cos(angle / 2), a[0] * s, a[1] * s, a[2] * s]


def rod_table():
    """Stewart-Trinkle's rod: first impact at t = 0.383 s fixes the release height."""
    half, rho, theta0, w = 0.25, 0.05, math.radians(30.0), 4.0
    t1 = 0.383
    # lower end height y - (l/2) sin(theta) - rho = 0 at t1 (theta = theta0 + w t)
    y0 = 0.5 * G * t1 ** 2 + half * math.sin(theta0 + w * t1) + rho
    ts = np.linspace(0, t1, 2000)
    gap = y0 - 0.5 * G * ts ** 2 - half * np.sin(theta0 + w * ts) - rho
    assert gap[:-1].min() > 0, "the end would touch earlier"
    vol_c, vol_s = math.pi * rho ** 2 * 2 * half, 4.0 / 3.0 * math.pi * rho ** 3
    j_axis = (0.5 * vol_c * rho ** 2 + 0.4 * vol_s * rho ** 2) / (vol_c + vol_s)  # m = 1
    rod = {"name": "rod", "shape": {"type": "capsule", "radius": rho, "length": 2 * half},
           "mass": 1.0, "inertia": [0.002, j_axis, 0.002], "position": [0.0, y0, 0.0],
           "orientation": quat_axis([0, 0, 1], theta0 - math.pi / 2),
           "angular_velocity": [0.0, 0.0, w],
           "material": {"static_friction": 0.6, "dynamic_friction": 0.6, "restitution": 0.0},
           "color": [0.85, 0.45, 0.2]}
    return scene("Rod on a table",
                 "Stewart & Trinkle 1996: a capsule rod (0.5 m + rounded ends of 0.05 m, 1 kg, "
                 "J = 0.002 kg m^2, mu = 0.6) released at 30 degrees spinning at 4 rad/s towards "
                 "vertical; first impact at t = 0.383 s, the other end lands at t = 0.548 s, "
                 "then rest.", [rod], settings={"h": 0.001},
                 camera={"eye": [0.0, 0.6, 2.5], "target": [0.0, 0.4, 0.0], "fov_deg": 45})


def four_balls():
    """Stewart-Trinkle's four balls; their frame is z up: (x, y, z) -> (x, z, -y)."""
    def yup(v):
        return [v[0], v[2], -v[1]]
    pos = [[0, 0, 1], [1, 0, 0.1], [1.2 + 1e-5, 0, 0.1], [1.4 + 2e-5, 0, 0.1]]
    balls = []
    for i, p in enumerate(pos):
        b = {"name": f"ball{i + 1}", "shape": {"type": "sphere", "radius": 0.1}, "mass": 1.0,
             "inertia": [0.004, 0.004, 0.004], "position": yup(p),
             "material": {"static_friction": 0.4, "dynamic_friction": 0.4, "restitution": 0.0},
             "color": [0.2 + 0.2 * i, 0.4, 0.9 - 0.2 * i]}
        if i == 0:
            b["velocity"] = yup([1.5, 0.1, 0.0])
        balls.append(b)
    d = scene("Four balls", "Stewart & Trinkle 1996: a thrown ball lands at t = 0.428 s, "
              "rolls and hits a row of three balls at t = 0.585 s (m = 1, r = 0.1, mu = 0.4, "
              "inelastic).", balls, settings={"h": 0.001},
              camera={"eye": [0.8, 1.2, 2.5], "target": [0.9, 0.1, 0.0], "fov_deg": 45})
    d["bodies"][0]["material"] = {"static_friction": 0.4, "dynamic_friction": 0.4}
    return d


def box_stack():
    boxes = [box(f"box{i}", [0.0, 0.1 + 0.2 * i, 0.0], [0.2] * 3, mu=0.5,
                 color=(0.8, 0.3 + 0.05 * i, 0.2)) for i in range(10)]
    return scene("Box stack", "Ten 0.2 m cubes of 1 kg (mu = 0.5) stacked on the ground.",
                 boxes, camera={"eye": [2.5, 1.4, 3.0], "target": [0.0, 1.0, 0.0],
                                "fov_deg": 45})


def pyramid():
    boxes, s, gap = [], 0.2, 0.01
    for row, count in enumerate(range(6, 0, -1)):
        for i in range(count):
            x = (i - (count - 1) / 2) * (s + gap)
            boxes.append(box(f"b{row}_{i}", [x, s / 2 + row * s, 0.0], [s] * 3,
                             color=(0.8, 0.35 + 0.08 * row, 0.2)))
    return scene("Pyramid", "21 boxes in rows of 6-5-4-3-2-1.", boxes,
                 camera={"eye": [0.0, 0.8, 3.5], "target": [0.0, 0.5, 0.0], "fov_deg": 45})


def funnel_1000():
    """Bender's Fig. 3 left: 1000 cubes fall through a funnel into a box."""
    statics = []
    wall_c = (0.6, 0.6, 0.65)
    for i, (x, z, sx, sz) in enumerate([(1.05, 0, 0.1, 2.2), (-1.05, 0, 0.1, 2.2),
                                        (0, 1.05, 2.0, 0.1), (0, -1.05, 2.0, 0.1)]):
        statics.append(box(f"box_wall{i}", [x, 0.5, z], [sx, 1.0, sz], fixed=True,
                           color=wall_c))
    # funnel: four plates sloping 45 degrees, bottom opening 0.9 m wide at y = 2
    slope = math.radians(45.0)
    length = 2.0
    for i, (dx, dz) in enumerate([(1, 0), (-1, 0), (0, 1), (0, -1)]):
        inner = 0.45
        cx = dx * (inner + 0.5 * length * math.cos(slope))
        cz = dz * (inner + 0.5 * length * math.cos(slope))
        cy = 2.0 + 0.5 * length * math.sin(slope)
        if dz:
            axis = [1, 0, 0]
            angle = -slope * dz
        else:
            axis = [0, 0, 1]
            angle = slope * dx
        statics.append(box(f"funnel{i}", [cx, cy, cz],
                           [length, 0.05, 3.2] if dx else [3.2, 0.05, length], fixed=True,
                           quat=quat_axis(axis, angle), color=(0.5, 0.6, 0.75)))
    cubes = []
    n, s, pitch = 10, 0.1, 0.15
    for k in range(n):
        for i in range(n):
            for j in range(n):
                cubes.append(box(f"c{k}_{i}_{j}",
                                 [(i - 4.5) * pitch, 4.0 + k * pitch, (j - 4.5) * pitch],
                                 [s] * 3, mass=1.0, mu=0.5,
                                 color=(0.3 + 0.06 * i, 0.4 + 0.05 * j, 0.9 - 0.06 * k)))
    return scene("Funnel (1000 cubes)", "Bender's VR paper Fig. 3 left: 1000 cubes of 0.1 m "
                 "fall through a funnel into a box.", statics + cubes,
                 settings={"h": 1.0 / 60.0},
                 camera={"eye": [5.0, 4.0, 6.0], "target": [0.0, 2.0, 0.0], "fov_deg": 50})


def wall_car():
    """Bender's Fig. 3 right: a car with motorised wheels drives into a wall of 252 stones."""
    stones = []
    sx, sy, sz = 0.2, 0.2, 0.4
    for row in range(12):
        # quarter bond: every other row shifted by a quarter stone, so each end stone has
        # 3/4 of its length on the row below (with half a stone, the end stones of every
        # row sat with their centre on the edge of the stone below and toppled on their own)
        off = 0.25 * sz if row % 2 else 0.0
        for i in range(21):
            z = (i - 10) * (sz + 0.004) + off - 0.125 * sz   # 4 mm joints between stones
            stones.append(box(f"s{row}_{i}", [3.0, sy / 2 + row * sy, z], [sx, sy, sz],
                              mass=2.0, mu=0.6, color=(0.75, 0.35 + 0.02 * row, 0.3)))
    chassis = box("chassis", [0.0, 0.55, 0.0], [1.6, 0.3, 0.9], mass=150.0, mu=0.5,
                  color=(0.2, 0.4, 0.8))
    wheels, joints = [], []
    r, wdt = 0.3, 0.15
    for i, (x, z) in enumerate([(0.6, 0.55), (0.6, -0.55), (-0.6, 0.55), (-0.6, -0.55)]):
        name = f"wheel{i}"
        wheels.append({"name": name, "shape": {"type": "cylinder", "radius": r, "height": wdt},
                       "mass": 10.0, "position": [x, r, z],
                       "orientation": quat_axis([1, 0, 0], math.pi / 2),
                       "material": {"static_friction": 1.0, "dynamic_friction": 0.9},
                       "color": [0.15, 0.15, 0.15]})
        joints.append({"name": f"axle{i}", "type": "hinge", "bodies": ["chassis", name],
                       "anchor": [x, r, z], "axis": [0, 0, 1],
                       "motor": {"mode": "velocity", "target": -6.0, "max_force": 400.0}})
    return scene("Car and wall", "Bender's VR paper Fig. 3 right: a car (chassis and four "
                 "wheels on hinge joints with velocity motors) drives into a wall of 252 "
                 "stones.", [chassis] + wheels + stones, joints,
                 camera={"eye": [-3.0, 3.0, 7.0], "target": [2.0, 1.0, 0.0], "fov_deg": 50})


def hexapod():
    """Six two-axis legs (hip about y, knee about the leg's long axis) in a tripod gait."""
    torso = box("torso", [0.0, 0.45, 0.0], [0.8, 0.12, 0.4], mass=4.0, color=(0.3, 0.6, 0.4))
    bodies, joints = [torso], []
    period = 1.0
    times = [0.0, 0.1, 0.4, 0.6, 0.9, 1.0]
    for i, x in enumerate([0.3, 0.0, -0.3]):
        for side in (1, -1):
            leg = f"leg{i}{'L' if side > 0 else 'R'}"
            thigh, shin = leg + "_thigh", leg + "_shin"
            hip = [x, 0.45, side * 0.2]
            knee = [x, 0.45, side * 0.4]
            foot_x = x
            bodies.append({"name": thigh, "shape": {"type": "capsule", "radius": 0.03,
                                                    "length": 0.14},
                           "mass": 0.3, "position": [x, 0.45, side * 0.3],
                           "orientation": quat_axis([1, 0, 0], math.pi / 2),
                           "color": [0.8, 0.8, 0.3]})
            bodies.append({"name": shin, "shape": {"type": "capsule", "radius": 0.03,
                                                   "length": 0.36},
                           "mass": 0.3, "position": [foot_x, 0.45 - 0.21, side * 0.4],
                           "material": {"static_friction": 1.0, "dynamic_friction": 0.9},
                           "color": [0.9, 0.5, 0.2]})
            # tripod: legs (0L, 1R, 2L) and (0R, 1L, 2R) in opposite phase. A hip angle of
            # +a puts a left foot at +x and a right foot at -x, hence the factor side.
            # Half a period in the air: lift the knee, carry the foot from +x to -x, set it
            # down; half on the ground: the foot pushes back to +x while the other tripod is
            # in the air. The machine walks towards -x.
            a = 0.35 * side
            if ((i + (0 if side > 0 else 1)) % 2) == 0:
                swing = [a, a, -a, -a, a, a]
                lift_times, lift = [0.0, 0.1, 0.4, 0.5, 1.0], [0.0, 0.5, 0.5, 0.0, 0.0]
            else:
                swing = [-a, -a, a, a, -a, -a]
                lift_times, lift = [0.0, 0.5, 0.6, 0.9, 1.0], [0.0, 0.0, 0.5, 0.5, 0.0]
            joints.append({"name": leg + "_hip", "type": "hinge", "bodies": ["torso", thigh],
                           "anchor": hip, "axis": [0, 1, 0], "collide": False,
                           "motor": {"mode": "position", "max_force": 30.0,
                                     "target": {"times": [t * period for t in times],
                                                "values": swing, "repeat": True}}})
            joints.append({"name": leg + "_knee", "type": "hinge", "bodies": [thigh, shin],
                           "anchor": knee, "axis": [side, 0, 0],
                           "motor": {"mode": "position", "max_force": 30.0,
                                     "target": {"times": [t * period for t in lift_times],
                                                "values": lift, "repeat": True}}})
    return scene("Hexapod", "Six legs on servo-axis hinges (hip about the vertical, knee) "
                 "walk a tripod gait from target sequences (tree solver: the servos are "
                 "solved exactly, the feet's contacts as rows around the solve).", bodies, joints,
                 settings={"h": 0.005, "solver": "tree"},
                 camera={"eye": [2.0, 1.2, 2.0], "target": [0.0, 0.3, 0.0], "fov_deg": 45})


def chain_drape():
    n, L, y = 12, 0.15, 0.35
    x0 = -n * L / 2
    table = box("table", [0.0, 0.15, 0.0], [0.4, 0.3, 0.6], fixed=True, color=(0.45, 0.5, 0.6))
    links = [box(f"link{i}", [x0 + (i + 0.5) * L, y, 0.0], [L, 0.04, 0.1], mass=0.2,
                 color=(0.85, 0.55 + 0.03 * (i % 2), 0.2)) for i in range(n)]
    joints = [{"name": f"h{i}", "type": "hinge", "bodies": [f"link{i - 1}", f"link{i}"],
               "anchor": [x0 + i * L, y, 0.0], "axis": [0, 0, 1]} for i in range(1, n)]
    return scene("Chain draped over a table",
                 "Twelve plates on hinges fall across a box and come to rest, the ends on the "
                 "ground (joints and contacts together: tree solver, tight tolerances).",
                 [table] + links, joints,
                 settings={"h": 1.0 / 60.0, "solver": "tree", "eps_pos": 1e-6,
                           "contact_tolerance": 1e-6, "contact_cycles": 30},
                 camera={"eye": [0.8, 1.0, 2.4], "target": [0.0, 0.2, 0.0], "fov_deg": 45})


# ---- issue 16: scenes whose behaviour has an analytic figure, at the viewer's h = 1/60 ----

def _mass_properties(spec):
    """(mass, principal moments, centre of mass in the body frame, principal frame) of a body
    spec, as the engine computes them."""
    if os.path.dirname(HERE) not in sys.path:
        sys.path.insert(0, os.path.dirname(HERE))
    from impulse.engine.bodies import body_model
    m = body_model(spec)
    return m.mass, m.inertia, m.com, m.frame


def newtons_cradle():
    """Five touching steel balls on hinges; the first is pulled out 30 degrees."""
    r, length, n, angle, top = 0.05, 0.5, 5, math.radians(30.0), 1.0
    steel = {"restitution": 1.0, "static_friction": 0.0, "dynamic_friction": 0.0}
    bar = box("bar", [0.0, top + 0.02, 0.0], [0.7, 0.04, 0.04], fixed=True,
              color=(0.35, 0.35, 0.4))
    balls, joints = [], []
    for i in range(n):
        x = (i - (n - 1) / 2) * 2 * r            # neighbours touch: centres 2 r apart
        pos = [x, top - length, 0.0]
        if i == 0:
            pos = [x - length * math.sin(angle), top - length * math.cos(angle), 0.0]
        balls.append({"name": f"ball{i + 1}", "shape": {"type": "sphere", "radius": r},
                      "density": 7800.0, "position": pos, "material": dict(steel),
                      "color": [0.75, 0.77, 0.8]})
        joints.append({"name": f"string{i + 1}", "type": "hinge",
                       "bodies": ["bar", f"ball{i + 1}"], "anchor": [x, top, 0.0],
                       "axis": [0.0, 0.0, 1.0]})
    drop = length * (1 - math.cos(angle))
    mass = 7800.0 * 4.0 / 3.0 * math.pi * r ** 3
    v_hit = math.sqrt(2 * G * drop / (1 + 0.4 * r * r / length ** 2))  # m g drop = I w^2/2
    return scene("Newton's cradle",
                 f"Five steel balls (r = {r} m, {mass:.2f} kg, restitution 1, no friction) "
                 f"hang on hinges {length} m below a bar, neighbours touching; the first is "
                 f"pulled out 30 degrees and released. It strikes at v = {v_hit:.3f} m/s "
                 f"(sqrt(2 g L (1 - cos 30)) = {math.sqrt(2 * G * drop):.3f} m/s less 0.2 % "
                 f"for the ball's own turning on its hinge; t = 0.36 s); then the last ball "
                 f"leaves at the same speed and swings out to the striker's height, "
                 f"{drop:.3f} m above its rest position (30 degrees), while the three middle "
                 f"balls stay still; then the exchange repeats backwards. h = 1/60.",
                 [bar] + balls, joints,
                 camera={"eye": [0.0, 0.75, 1.6], "target": [0.0, 0.6, 0.0], "fov_deg": 45})


BOUNCE_E = (0.3, 0.6, 0.8, 0.95)


def bouncing_balls():
    """Four balls of different restitution dropped from 1 m (lowest point) on the ground."""
    r, drop = 0.1, 1.0
    balls = []
    for i, e in enumerate(BOUNCE_E):
        balls.append({"name": f"ball_e{e:g}", "shape": {"type": "sphere", "radius": r},
                      "mass": 1.0, "position": [(i - 1.5) * 0.5, drop + r, 0.0],
                      "material": {"restitution": e, "static_friction": 0.5,
                                   "dynamic_friction": 0.5},
                      "color": [0.9 - 0.2 * i, 0.3 + 0.15 * i, 0.25 + 0.2 * i]})
    table = "; ".join(f"e = {e:g}: " + ", ".join(f"{drop * e ** (2 * k):.3g}" for k in (1, 2, 3))
                      for e in BOUNCE_E)
    return scene("Bouncing balls",
                 f"Four balls (r = {r} m, 1 kg) with restitution e = 0.3, 0.6, 0.8 and 0.95 "
                 f"are dropped from {drop:g} m (their lowest point) onto the ground (e = 0; a "
                 f"pair bounces with the larger e). Newton's law u+ = -e u- makes the k-th "
                 f"bounce climb to e^(2k) m; apex heights of bounces 1, 2, 3 in m: {table}. "
                 f"The first impact is at t = {math.sqrt(2 * drop / G):.3f} s. h = 1/60.",
                 balls,
                 camera={"eye": [0.0, 0.9, 3.6], "target": [0.0, 0.55, 0.0], "fov_deg": 45})


def rolling_bodies():
    """A sphere, a capsule and a cylinder (both on their side) roll down a 20 degree slope."""
    theta, mu, r, rho = math.radians(20.0), 0.8, 0.1, 1000.0
    half = np.array([1.5, 0.1, 1.0])                 # the slope: a static box turned by theta
    centre = np.array([0.0, 1.0, 0.0])
    q = quat_axis([0, 0, 1], -theta)                 # local x -> downhill, local y -> normal
    down = np.array([math.cos(theta), -math.sin(theta), 0.0])
    normal = np.array([math.sin(theta), math.cos(theta), 0.0])
    # the slope is a plane (analytic narrow phases for all three; a cylinder against a box
    # goes through its polygon hull and rolls on its corners)
    slope = {"name": "slope", "fixed": True, "shape": {"type": "plane"},
             "position": [float(x) for x in centre + half[1] * normal], "orientation": q,
             "material": {"static_friction": mu, "dynamic_friction": mu, "restitution": 0.0},
             "color": [0.5, 0.6, 0.5]}
    mat = {"static_friction": mu, "dynamic_friction": mu, "restitution": 0.0}
    side = quat_axis([1, 0, 0], math.pi / 2)         # the shape's axis (local y) -> world z
    specs = [("sphere", {"type": "sphere", "radius": r}, None, -0.7),
             ("capsule", {"type": "capsule", "radius": r, "length": 0.3}, side, 0.0),
             ("cylinder", {"type": "cylinder", "radius": r, "height": 0.3}, side, 0.7)]
    bodies, parts = [slope], []
    for k, (name, shape, orient, z) in enumerate(specs):
        pos = centre + half[1] * normal - 1.1 * down + r * normal + [0.0, 0.0, z]
        b = {"name": name, "shape": shape, "density": rho, "position": [float(x) for x in pos],
             "material": dict(mat), "color": [[0.85, 0.3, 0.25], [0.3, 0.5, 0.85],
                                              [0.9, 0.7, 0.2]][k]}
        if orient is not None:
            b["orientation"] = orient
        bodies.append(b)
        m, inertia, _, _ = _mass_properties(b)
        k_rot = inertia[1] / (m * r * r)             # about the shape's axis (sphere: any)
        parts.append(f"{name} {1 / (1 + k_rot):.3f} g sin(theta) = "
                     f"{G * math.sin(theta) / (1 + k_rot):.3f} m/s^2"
                     + (f" (I/(m r^2) = {k_rot:.3f})" if name == "capsule" else ""))
    return scene("Rolling bodies",
                 f"A sphere, a capsule lying across the slope and a cylinder on its side "
                 f"(r = {r} m, 1000 kg/m^3, mu = {mu:g}) are released at rest on a fixed "
                 f"20 degree slope. They roll without slipping (needed mu = tan(theta) k/(1+k) "
                 f"<= 0.13) at a = g sin(theta)/(1 + I/(m r^2)): " + "; ".join(parts)
                 + ". So the sphere leads, the cylinder is last, the capsule in between; "
                 "the slip |v - omega r|/v stays 0. h = 1/60.", bodies,
                 camera={"eye": [0.3, 1.6, 3.8], "target": [0.2, 0.7, 0.0], "fov_deg": 45})


def tall_tower():
    """20 cubes of 0.5 m, each turned a few degrees about the vertical and shifted by mm."""
    s, n = 0.5, 20
    cubes = []
    for i in range(n):
        angle = math.radians((2 + i % 3) * (1 if i % 2 == 0 else -1))
        shift = 0.003 * np.array([math.cos(2.4 * i), 0.0, math.sin(2.4 * i)])
        cubes.append(box(f"cube{i}", [shift[0], s / 2 + s * i, shift[2]], [s] * 3, mass=1.0,
                         mu=0.5, quat=quat_axis([0, 1, 0], angle),
                         color=(0.8, 0.3 + 0.025 * i, 0.2 + 0.02 * i)))
    return scene("Tall tower",
                 f"{n} cubes of {s} m and 1 kg (mu = 0.5) stacked {n * s:g} m high, each "
                 "turned 2-4 degrees about the vertical (alternating) and shifted by 3 mm. "
                 "The tower stands: over 10 s the top cube drifts less than 1 cm (at rest the "
                 "exact answer is 0). h = 1/60.", cubes,
                 camera={"eye": [9.0, 6.0, 12.0], "target": [0.0, 4.5, 0.0], "fov_deg": 50})


def spinning_top():
    """A heavy symmetric top on a frictionless tip, spinning about 3x the sleeping-top limit,
    started in steady precession."""
    rho, disc_r, disc_h, disc_y, stem_len = 0.005, 0.12, 0.02, 0.06, 0.12
    theta, omega3 = math.radians(15.0), 60.0
    shapes = [{"type": "cylinder", "radius": disc_r, "height": disc_h,
               "position": [0.0, disc_y, 0.0]},
              {"type": "capsule", "radius": rho, "length": stem_len,
               "position": [0.0, stem_len / 2, 0.0]}]   # its lower end is the tip (origin)
    spec = {"name": "top", "shapes": shapes, "density": 7800.0}
    m, inertia, com, _ = _mass_properties(spec)
    i1, i3, ell = float(inertia[0]), float(inertia[1]), float(com[1])
    axis = np.array([math.sin(theta), math.cos(theta), 0.0])   # tilted towards +x
    up = np.array([0.0, 1.0, 0.0])
    # steady precession about the vertical through the centre of mass (a frictionless tip
    # takes no horizontal force): I1 cos(theta) W^2 - I3 w3 W + m g l = 0, slow root
    c = i1 * math.cos(theta)
    prec = (i3 * omega3 - math.sqrt((i3 * omega3) ** 2 - 4 * c * m * G * ell)) / (2 * c)
    prec_fast = m * G * ell / (i3 * omega3)
    i1_tip = i1 + m * ell ** 2
    sleep = 2 * math.sqrt(m * G * ell * i1_tip) / i3
    w = (omega3 - prec * math.cos(theta)) * axis + prec * up   # w . axis = omega3
    v_tip = -np.cross(w, ell * axis)                           # centre of mass at rest
    spec.update({"position": [0.0, rho, 0.0], "orientation": quat_axis([0, 0, 1], -theta),
                 "velocity": [float(x) for x in v_tip],
                 "angular_velocity": [float(x) for x in w],
                 "material": {"static_friction": 0.0, "dynamic_friction": 0.0,
                              "restitution": 0.0},
                 "color": [0.85, 0.3, 0.3]})
    d = scene("Spinning top",
              f"A heavy symmetric top (steel disc r = {disc_r} m on a stem with a rounded tip "
              f"of {rho * 1000:g} mm; m = {m:.3f} kg, I3 = {i3:.5f}, I1 = {i1:.5f} kg m^2 "
              f"about its centre of mass, l = {ell:.4f} m from the tip's centre) stands on a "
              f"frictionless tip, tilted 15 degrees, spinning at w3 = {omega3:g} rad/s (the "
              f"sleeping-top limit 2 sqrt(m g l I1')/I3 with I1' = I1 + m l^2 is "
              f"{sleep:.1f} rad/s) and started in steady precession. It precesses about "
              f"the vertical at the heavy-top rate Omega = m g l/(I3 w3) = {prec_fast:.3f} rad/s ({prec:.3f} rad/s with the I1 "
              f"term: I1 cos(theta) Omega^2 - I3 w3 Omega + m g l = 0; one turn in "
              f"{2 * math.pi / prec:.1f} s), keeps its tilt and its spin (no friction), and "
              f"its centre of mass stays on its vertical line. h = 1/60.",
              [spec], camera={"eye": [0.0, 0.35, 0.7], "target": [0.0, 0.06, 0.0],
                              "fov_deg": 45})
    d["bodies"][0]["material"] = {"static_friction": 0.0, "dynamic_friction": 0.0}
    return d


SCENES = {"rod_table": rod_table, "four_balls": four_balls, "box_stack": box_stack,
          "pyramid": pyramid, "funnel_1000": funnel_1000, "wall_car": wall_car,
          "hexapod": hexapod, "chain_drape": chain_drape, "newtons_cradle": newtons_cradle,
          "bouncing_balls": bouncing_balls, "rolling_bodies": rolling_bodies,
          "tall_tower": tall_tower, "spinning_top": spinning_top}

if __name__ == "__main__":
    for name in sys.argv[1:] or SCENES:
        make = SCENES[name]
        with open(os.path.join(HERE, name + ".json"), "w") as f:
            json.dump(make(), f, indent=1)
            f.write("\n")
