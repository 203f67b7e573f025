"""Islands and sleeping: bodies at rest stop costing solver time.

Islands. After each step the dynamic bodies are split into islands: connected components of
the graph whose edges are the step's contact rows, the enabled joints and the springs
(union-find; static bodies and the world join nothing, so two stacks on one floor are two
islands).

Sleeping. A body is *still* while its fastest point moves slower than `sleep_speed`:
|v| + |w| r < sleep_speed, r = sqrt(2.5 J_max / m) (a sphere's radius from its inertia),
and stays within `sleep_drift` of where it was when its still time began: |x - x0| + r
angle(R0^T R) <= sleep_drift (as Jolt's sleep test spheres; 1 mm, 15x smaller than Jolt's).
The speed alone froze bodies that were not at rest: a ball pulled 5 cm off balance by a
1 N/m spring (speed < 3 cm/s for its first second) slept after 0.5 s, 4.3 cm from where it
rests, and debris still rolling at 2 cm/s stopped dead. The drift catches a steady creep
faster than sleep_drift / sleep_time (2 mm/s) and a push from rest above 2 sleep_drift /
sleep_time^2 (8 mm/s^2); slower motions, and the turning point of a slow oscillation (it
goes out and comes back within the drift), can still sleep where they are. (0.5 mm kept
wall_car's wall awake until the car hit it: its top row crept at 2 mm/s while the car's
bounces cut the world's steps; alone, the wall sleeps after 0.52 s either way.)
A body counts the time it has been still; an island whose bodies have all been still for
`sleep_time` falls asleep together: velocities zero, and for the solver its bodies are
static (B.static set, inverse mass and inertia zero) and the joints among them are off, so
the loops, the look-ahead and the contact pairs among them cost nothing; detection still
sees their shapes. Defaults as Jolt's (0.03 m/s point speed, 0.5 s; Box2D: 0.5 s).
Never asleep: an island with a dragged body, a joint motor that moves it (a velocity
motor with a target, a target sequence) or a load that changes over time (loads.py).

Waking. An island wakes, whole, when an awake dynamic body comes into contact with it
(detection at the step's start, then detection again with the woken bodies), when one of its
bodies is dragged or the load on one of them changes, and on `World.wake()`; every live
edit, a change of gravity and turning sleeping off wake all (a state restore puts back the
sleep state it captured). Waking puts the bodies' mass rows back from their models (bit for
bit the rows they had) with zero velocity, as at the moment they fell asleep.

Sleeping applies to worlds with contacts (World.step); a world without contacts runs in one
kernel (World.run) and never sleeps. `settings.sleeping = false` turns it off.
"""
import functools

import numpy as np
from numba import njit

from . import state as S

NO_ISLAND = -1


@njit(cache=True)
def root(parent, i):
    """Union-find: the root of i in `parent` (path halving); also solvers/graph.py's."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]          # path halving
        i = parent[i]
    return i


@njit(cache=True)
def find_islands(movable, pairs, labels):
    """Connected components of the movable bodies over `pairs` (k, 2) of body indices (-1,
    the world, and bodies not movable join nothing). labels[b]: 0 .. count-1 numbered in the
    order of each island's lowest body, NO_ISLAND for bodies not movable. Returns count."""
    n = movable.shape[0]
    parent = np.arange(n)
    for k in range(pairs.shape[0]):
        a, b = pairs[k, 0], pairs[k, 1]
        if a < 0 or b < 0 or not movable[a] or not movable[b]:
            continue
        ra, rb = root(parent, a), root(parent, b)
        if ra != rb:
            if ra < rb:
                parent[rb] = ra
            else:
                parent[ra] = rb
    count = 0
    for b in range(n):
        if not movable[b]:
            labels[b] = NO_ISLAND
            continue
        r = root(parent, b)
        if r == b:
            labels[b] = count
            count += 1
        else:
            labels[b] = labels[r]          # r < b: labelled already
    return count


@njit(cache=True)
def count_still(movable, pos, rot, vel, omega, inv_mass, inertia, h, speed, drift, still,
                from_pos, from_rot):
    """still[b] += h while the body's fastest point is slower than `speed` and within `drift`
    of its pose when its still time began (from_pos, from_rot); a fast body's still time is
    0, a slow one that drifted farther starts again (h) from where it is."""
    for b in range(movable.shape[0]):
        if not movable[b]:
            still[b] = 0.0
            continue
        jmax = max(inertia[b, 0], max(inertia[b, 1], inertia[b, 2]))
        r = np.sqrt(2.5 * jmax * inv_mass[b])
        v = np.sqrt(vel[b, 0] ** 2 + vel[b, 1] ** 2 + vel[b, 2] ** 2)
        w = np.sqrt(omega[b, 0] ** 2 + omega[b, 1] ** 2 + omega[b, 2] ** 2)
        if v + w * r >= speed:
            still[b] = 0.0
            continue
        if still[b] > 0.0:
            # the fastest point's way from the pose at the still time's start: |x - x0| plus
            # r times the angle of R0^T R (|R - R0|_F = 2 sqrt(2) sin(angle / 2))
            d2 = 0.0
            f2 = 0.0
            for i in range(3):
                d2 += (pos[b, i] - from_pos[b, i]) ** 2
                for j in range(3):
                    f2 += (rot[b, i, j] - from_rot[b, i, j]) ** 2
            angle = 2.0 * np.arcsin(min(1.0, np.sqrt(f2 / 8.0)))
            if np.sqrt(d2) + r * angle <= drift:
                still[b] += h
                continue
        still[b] = h                      # still from here on
        for i in range(3):
            from_pos[b, i] = pos[b, i]
            for j in range(3):
                from_rot[b, i, j] = rot[b, i, j]


@njit(cache=True)
def islands_to_sleep(labels, count, still, keep_awake, sleep_time, out):
    """out[i] = True where every body of island i has been still for sleep_time and none is
    kept awake. Returns how many islands."""
    out[:count] = True
    for b in range(labels.shape[0]):
        i = labels[b]
        if i >= 0 and (still[b] < sleep_time or keep_awake[b]):
            out[i] = False
    k = 0
    for i in range(count):
        if out[i]:
            k += 1
    return k


def waking(method):
    """A live edit: every island wakes first (the edit then sees the true mass rows)."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        self.sleep.wake_all(self)
        return method(self, *args, **kwargs)
    return wrapper


class Sleep:
    """The sleep state of a World: which bodies sleep, in which island, how long each awake
    body has been still; the last step's island count."""

    def __init__(self):
        self.asleep = np.zeros(0, dtype=np.bool_)
        self.anyone = False       # asleep.any(), kept as asleep changes (read every step)
        self.island = np.zeros(0, dtype=np.int64)       # sleeping island's id, else -1
        self.wakes = 0            # counts wakings and fallings asleep (contacts/system.py
        self.naps = 0             # keeps a sleeping island's contact rows: _keep_slept)
        self.epoch = 0            # counts every change of the sleep state (a live edit
                                  # wakes all: waking): World's idle step looks at it
        self.still = np.zeros(0)                        # [s] still for this long,
        self.still_pos = np.zeros((0, 3))               # from this pose on
        self.still_rot = np.zeros((0, 3, 3))
        self.joint_off = np.zeros(0, dtype=np.bool_)    # joints switched off by sleeping
        self.islands = 0                                # islands of the last step (awake)
        self._islands_of = None       # with sleeping off: what to count them from, if asked
        self._labels = np.zeros(0, dtype=np.int64)
        self._next_id = 0
        self._gravity = None
        self._off_clear = False       # sleeping is off and was so at the last step's start:
                                      # nothing asleep, every still clock at 0

    # ---- size ------------------------------------------------------------------------------
    def fit(self, n, m):
        """Arrays for n bodies and m joints; a new size starts everything awake (edits wake
        all before they change the arrays)."""
        if self.asleep.shape[0] != n:
            self.epoch += 1
            self.asleep = np.zeros(n, dtype=np.bool_)
            self.anyone = False
            self.island = np.full(n, NO_ISLAND, dtype=np.int64)
            self.still = np.zeros(n)
            self.still_pos = np.zeros((n, 3))
            self.still_rot = np.zeros((n, 3, 3))
            self._labels = np.zeros(n, dtype=np.int64)
        if self.joint_off.shape[0] != m:
            self.joint_off = np.zeros(m, dtype=np.bool_)

    @property
    def islands(self):
        """Islands of the last step (awake bodies). With sleeping off they are only counted
        for the statistics, so when asked (after_step keeps what it needs)."""
        if self._islands_of is not None:
            movable, J, Sp, rows, labels = self._islands_of
            self._islands = find_islands(movable, self._pairs(J, Sp, rows), labels)
            self._islands_of = None
        return self._islands

    @islands.setter
    def islands(self, n):
        self._islands = n
        self._islands_of = None

    @property
    def count(self):
        return int(self.asleep.sum())

    def fixed(self, B):
        """The bodies fixed by the scene or the guard (static, not asleep)."""
        n = B.static.shape[0]
        return B.static & ~self.asleep if self.asleep.shape[0] == n else B.static

    # ---- waking ----------------------------------------------------------------------------
    def wake(self, world, bodies):
        """Wake the islands of these body indices (those awake are left alone). Returns how
        many bodies woke."""
        if not self.anyone:
            return 0
        ids = {int(self.island[b]) for b in bodies if self.asleep[b]}
        if not ids:
            return 0
        return self._wake_mask(world, self.asleep & np.isin(self.island, list(ids)))

    def wake_all(self, world):
        if self.asleep.shape[0] != world.B.static.shape[0] or not self.anyone:
            return 0
        return self._wake_mask(world, self.asleep.copy())

    def _wake_mask(self, world, mask):
        B, J = world.B, world.J
        S.release(B, mask)                  # the body's own mass and inertia, bit for bit
        B.pred_ok[mask] = False
        self.asleep[mask] = False
        self.anyone = bool(self.asleep.any())
        self.wakes += 1
        self.epoch += 1
        self.island[mask] = NO_ISLAND
        self.still[mask] = 0.0
        on = self.joint_off & self._touches(J, mask)
        J.enabled[on] = True
        self.joint_off[on] = False
        return int(mask.sum())

    @staticmethod
    def _touches(J, mask):
        """Joints with a body in mask."""
        ends = J.const.body
        hit = np.zeros(ends.shape[0], dtype=np.bool_)
        for side in range(2):
            b = ends[:, side]
            hit |= (b >= 0) & mask[np.maximum(b, 0)]
        return hit

    @classmethod
    def _joints_at_rest(cls, J, static, asleep):
        """Enabled joints on a sleeping body with no awake dynamic body (every end fixed,
        asleep or the world): off while they sleep."""
        ends_rest = np.ones(J.const.body.shape[0], dtype=np.bool_)
        for side in range(2):
            b = J.const.body[:, side]
            ends_rest &= (b < 0) | static[np.maximum(b, 0)]
        return J.enabled & ends_rest & cls._touches(J, asleep)

    def wake_touched(self, world, C):
        """Wake the sleeping islands that a contact row of this detection joins to an awake
        dynamic body. Returns how many bodies woke."""
        if self._off_clear or C.body.shape[0] == 0 or not self.anyone:
            return 0
        a, b = C.body[:, 0], C.body[:, 1]
        sa = (a >= 0) & self.asleep[np.maximum(a, 0)]
        sb = (b >= 0) & self.asleep[np.maximum(b, 0)]
        awake = ~world.B.static
        da = (a >= 0) & awake[np.maximum(a, 0)]
        db = (b >= 0) & awake[np.maximum(b, 0)]
        hit = np.concatenate([a[sa & db], b[sb & da]])
        return self.wake(world, hit) if hit.size else 0

    def check_settings(self, world):
        """Wake all when sleeping was turned off or the gravity is not the last step's.
        While it stays off, nothing falls asleep and no still clock runs (after_step), so
        once cleared there is nothing to do (fit's new arrays start so too)."""
        g = tuple(world.settings.gravity)
        changed = self._gravity is not None and g != self._gravity
        self._gravity = g
        on = world.settings.sleeping
        if on or not self._off_clear:
            if changed or not on:
                self.wake_all(world)
            if not on:
                self.still[:] = 0.0   # (after_step does not count: the clocks start when on)
        self._off_clear = not on

    # ---- falling asleep --------------------------------------------------------------------
    def after_step(self, world, C, h):
        """Count the still time, find the islands, put to sleep those still long enough."""
        B, J, Sp, s = world.B, world.J, world.Sp, world.settings
        movable = ~B.static
        if s.sleeping:     # (off: the islands are still counted for the statistics)
            count_still(movable, B.pos, B.rot, B.vel, B.omega, B.inv_mass, B.const.inertia, h,
                        s.sleep_speed, s.sleep_drift, self.still, self.still_pos,
                        self.still_rot)
        if not s.sleeping:      # counted when asked (islands); C's rows are reused next step
            self._islands_of = (movable, J, Sp, None if C is None else C.body.copy(),
                                self._labels)
            return 0
        pairs = self._pairs(J, Sp, C)
        self.islands = find_islands(movable, pairs, self._labels)
        if self.islands == 0 or \
                self.still[movable].max(initial=0.0) < s.sleep_time:
            return 0                     # no body has been still long enough
        keep = self._kept_awake(world, movable)
        sleepy = np.zeros(self.islands, dtype=np.bool_)
        if islands_to_sleep(self._labels, self.islands, self.still, keep, s.sleep_time,
                            sleepy) == 0:
            return 0
        mask = movable & sleepy[np.maximum(self._labels, 0)]
        for label in np.flatnonzero(sleepy):
            self.island[movable & (self._labels == label)] = self._next_id
            self._next_id += 1
        self.asleep |= mask
        self.anyone = self.anyone or bool(mask.any())
        self.naps += 1
        self.epoch += 1
        S.hold(B, mask)
        B.vel[mask] = 0.0
        B.omega[mask] = 0.0
        B.pred_ok[mask] = False
        off = self._joints_at_rest(J, B.static, mask)
        J.enabled[off] = False
        self.joint_off |= off
        self.islands -= int(sleepy.sum())
        return int(mask.sum())

    @staticmethod
    def _pairs(J, Sp, C):
        """The body pairs that join islands: enabled joints, springs, contact rows (C: a
        Contacts, its rows' (c, 2) bodies, or None)."""
        rows = C if C is None or isinstance(C, np.ndarray) else C.body
        if rows is not None and J.const.body.shape[0] == 0 and Sp.const.body.shape[0] == 0 \
                and rows.dtype == np.int64 and rows.flags.c_contiguous:
            return rows                    # contacts only (a pile): no copy
        parts = [J.const.body[J.enabled], Sp.const.body]
        if rows is not None and rows.shape[0]:
            parts.append(rows)
        return np.ascontiguousarray(np.concatenate(parts).astype(np.int64, copy=False))

    @staticmethod
    def _kept_awake(world, movable):
        """Bodies whose island must not sleep: the dragged one, those on a moving motor or
        under a changing load."""
        from .joints import MOTOR_NONE, MOTOR_VELOCITY, P_MOTOR, P_SEQ_LEN, P_TARGET
        keep = np.zeros(movable.shape[0], dtype=np.bool_)
        if world.drag is not None:
            keep[world.drag.body] = True
        J = world.J
        p = J.const.param
        moving = J.enabled & (p[:, P_MOTOR] != MOTOR_NONE) & (
            (p[:, P_SEQ_LEN] > 0) | ((p[:, P_MOTOR] == MOTOR_VELOCITY) & (p[:, P_TARGET] != 0)))
        for j in np.flatnonzero(moving):
            for b in J.const.body[j]:
                if b >= 0:
                    keep[b] = True
        for lm in world.load_models:          # loads.py: a load that varies over time
            if not lm.varies:
                continue
            if lm.joint is None:
                keep[world.body_index(lm.body)] = True
            else:
                keep[[b for b in J.const.body[world.joint_index(lm.joint)] if b >= 0]] = True
        return keep

    # ---- measures and snapshots ------------------------------------------------------------
    def potential(self, world):
        """Gravity's potential energy of the sleeping bodies (their rows say static)."""
        if not self.anyone:
            return 0.0
        g = np.asarray(world.settings.gravity, np.float64)
        idx = np.flatnonzero(self.asleep)
        mass = np.array([world.models[b].mass for b in idx])
        return float(-(mass * (world.B.pos[idx] @ g)).sum())

    def capture(self):
        return {"asleep": self.asleep.copy(), "island": self.island.copy(),
                "still": self.still.copy(), "still_pos": self.still_pos.copy(),
                "still_rot": self.still_rot.copy(), "sleep_next": np.array([self._next_id])}

    def restore(self, world, st):
        """Back to a captured sleep state (the body rows were restored as captured: sleeping
        ones static); joints off where every end sleeps or is fixed."""
        B, J = world.B, world.J
        n = B.static.shape[0]
        self.epoch += 1
        if self.joint_off.shape[0] == J.const.kind.shape[0]:
            J.enabled[self.joint_off] = True
        self.fit(n, J.const.kind.shape[0])
        self.joint_off[:] = False
        if "asleep" not in st or st["asleep"].shape[0] != n:
            self.asleep[:] = False
            self.anyone = False
            self.island[:] = NO_ISLAND
            self.still[:] = 0.0
            return
        self.asleep[:] = st["asleep"]
        self.anyone = bool(self.asleep.any())
        self.island[:] = st["island"]
        self.still[:] = st["still"]
        if "still_pos" in st:
            self.still_pos[:] = st["still_pos"]
            self.still_rot[:] = st["still_rot"]
        else:    # (a state captured before the drift was kept: from where it is now)
            self.still_pos[:] = world.B.pos
            self.still_rot[:] = world.B.rot
        self._next_id = int(st["sleep_next"][0])
        off = self._joints_at_rest(J, B.static, self.asleep)
        J.enabled[off] = False
        self.joint_off[:] = off
