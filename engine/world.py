"""World: owns the flat body/joint/spring arrays and the settings; step(), run(), the drag,
measures and snapshots. Live edits and the conversion to scene entries: world_edits.py.
"""
import math
from dataclasses import dataclass

import numpy as np

from . import contact_step, interpreted, islands, step_stats
from . import state as S
from . import step as stages
from .contacts.system import ContactSystem
from .fastcall import FastCall
from .guard import Problem, bad_bodies, check_and_keep, zero_non_finite
from .handles import BodyId, Handles, JointId, LoadId
from .interaction import Drag, apply_drag
from .island_step import step_parts, world_cut
from .islands import LOOSE, IslandStep, default_threads, plan
from .joints import A_MOTOR, A_VMOTOR
from .loads import LoadEdits, sum_wrenches
from .settings import Settings
from .sleeping import Sleep, waking
from .solvers import SOLVERS, graph, iterative
from .world_edits import WORLD, JointModel, LiveEdits  # noqa: F401  (re-exported)
from .world_shapes import ShapeAccess


@dataclass
class RunResult:
    """Per-step records of World.run()."""
    stats: np.ndarray        # (steps, T_SIZE)
    energy: np.ndarray       # (steps+1,) total energy after each step
    times: np.ndarray        # (rows,) times of the recorded states
    pos: np.ndarray          # (rows, n, 3)
    rot: np.ndarray          # (rows, n, 3, 3)
    vel: np.ndarray
    omega: np.ndarray
    wall_time: float

    def records(self):
        """The per-step stats as named records (step_stats.RECORD; times in ms)."""
        return step_stats.records(self.stats)


class World(LiveEdits, LoadEdits, ShapeAccess):
    """Bodies, joints, springs, external loads and contacts as flat arrays, stepped by the
    impulse method; live edits (engine/world_edits.py, engine/loads.py) between steps;
    shapes and contacts by handles (engine/world_shapes.py)."""

    def __init__(self, settings=None):
        self.settings = settings if isinstance(settings, Settings) else \
            Settings.from_dict(settings or {})
        self.time = 0.0
        self.h_prev = 0.0          # previous step length (0 at the start, see joints/spring.py)
        self.relax_prev = 0.0      # the over-relaxation the last step's position loop ended
                                   # on (0: none; solvers/relaxation.carried)
        self.models = []           # BodyModel per body
        self.joint_models = []     # JointModel per joint (not springs)
        self.spring_models = []    # JointModel per spring
        self.load_models = []      # LoadModel per external load (loads.py)
        self._loads_on = False     # B.load / the joints' efforts hold a load's values
        self.camera = None
        self.contacts_spec = None
        self.meta = {}
        order = self.settings.taylor_order
        self.B = S.empty_bodies(0, order)
        self.J = S.empty_joints(0)
        self.Sp = S.empty_springs(0)
        self.stats = np.zeros(S.T_SIZE)
        self._clock = np.zeros(S.K_SIZE)      # the step kernel's (K_*)
        self._order = order
        self.drag = None           # the user's drag (engine/interaction.py), or None
        self.steps_taken = 0       # step() calls and run() steps so far
        self.problems = []         # guard.Problem per body the finite-state guard stopped
        self.stopped_last_step = 0
        self._good = None          # (pos, rot) at the start of the step (guard.py)
        self._bad = np.zeros(0, dtype=np.int64)
        self._work = None          # global solvers' structure (solvers/graph.py) and its key
        self._work_key = None
        self._loop, self._loop_key = False, None   # the joints close a loop (_settings_array)
        self.collision = ContactSystem(self)   # shape table, filters, detection
        self._body_ids = Handles(BodyId)      # stable handles (handles.py)
        self._joint_ids = Handles(JointId)
        self._shape_lists = {}                # body slot -> generation of its shape list
        self._load_ids = Handles(LoadId)
        self.sleep = Sleep()                  # islands and sleeping (sleeping.py)
        # the settings array and the Contacts (new when the row count changes; always made by
        # state.empty_contacts, so one kind) may be new objects each step
        self._step_kernel = FastCall(stages.step, loose=(3, 4))   # C, settings: new each step
        self.threads = default_threads()      # threads for the islands of a split step
        self._islands = IslandStep()          # the step by islands (islands.py)
        self._parts_kernel = FastCall(step_parts, loose=LOOSE)   # (islands.py)
        self._idle = None                     # the key of the idle steps (_idle_step)

    # ---- names and lookups -------------------------------------------------------------
    @property
    def body_names(self):
        return [m.name for m in self.models]

    @property
    def joint_names(self):
        return [j.name for j in self.joint_models]

    def body_index(self, name):
        """The index now of a body given by name or BodyId (-1 for "world")."""
        if isinstance(name, BodyId):
            name = self._body_ids.name(name)
        if name == WORLD:
            return -1
        for i, m in enumerate(self.models):
            if m.name == name:
                return i
        raise KeyError(f"no body named {name!r}")

    # ---- array views the viewer and collision read ------------------------------------
    body_pos = property(lambda self: self.B.pos)
    body_rot = property(lambda self: self.B.rot)
    body_vel = property(lambda self: self.B.vel)
    body_omega = property(lambda self: self.B.omega)
    # fixed by the scene (or stopped by the guard); sleeping bodies are not fixed
    body_static = property(lambda self: self.sleep.fixed(self.B))

    @property
    def body_asleep(self):
        """(n,) bool: the bodies asleep (sleeping.py)."""
        n = len(self.models)
        a = self.sleep.asleep
        return a if a.shape[0] == n else np.zeros(n, dtype=np.bool_)

    def wake(self, body=None):
        """Wake the island of a body (index, name or BodyId), or every island (None).
        Returns how many bodies woke."""
        if body is None:
            return self.sleep.wake_all(self)
        b = self._body_arg(body)
        return self.sleep.wake(self, [b]) if self.sleep.asleep.shape[0] > b else 0

    # ---- shape table (renderer, collision) and contacts -----------------------------------
    shape_body = property(lambda self: self.collision.tables().shape_body)
    shape_kind = property(lambda self: self.collision.tables().shape_kind)
    shape_size = property(lambda self: self.collision.tables().shape_size)
    shape_local_pos = property(lambda self: self.collision.tables().shape_local_pos)
    shape_local_rot = property(lambda self: self.collision.tables().shape_local_rot)
    hull_vertex = property(lambda self: self.collision.tables().hull_vertex)
    shape_hull_start = property(lambda self: self.collision.tables().shape_hull_start)
    shape_hull_count = property(lambda self: self.collision.tables().shape_hull_count)

    @property
    def contacts(self):
        """The last step's ContactSet (detected at the step's start; rows as in
        contact_impulse), or an empty list before the first step."""
        cs = self.collision.last
        return [] if cs is None else cs

    @property
    def contact_count(self):
        return len(self.contacts)

    @property
    def contact_impulse(self):
        """(c,) accumulated normal impulse [N s] of each contact in the last step."""
        return self.collision.last_impulse

    @property
    def contact_world(self):
        cs = self.collision.last
        return np.zeros((0, 3)) if cs is None else cs.world

    @property
    def contact_normal(self):
        cs = self.collision.last
        return np.zeros((0, 3)) if cs is None else cs.normal

    @waking
    def set_pair_collision(self, a, b, enabled):
        """Switch contacts between bodies a and b (names) on or off
        (contacts.disabled_pairs)."""
        self.body_index(a), self.body_index(b)
        spec = self.contacts_spec if self.contacts_spec is not None else {}
        pairs = [p for p in spec.get("disabled_pairs", []) if set(p) != {a, b}]
        if not enabled:
            pairs.append([a, b])
        spec["disabled_pairs"] = pairs
        self.contacts_spec = spec

    @property
    def body_color(self):
        return np.array([m.color for m in self.models], dtype=np.float64).reshape(-1, 3)

    def joint_index(self, name):
        """The row now of a joint (not a spring) given by name or JointId."""
        if isinstance(name, JointId):
            name = self._joint_ids.name(name)
        for i, jm in enumerate(self.joint_models):
            if jm.name == name:
                return i
        raise KeyError(f"no joint named {name!r}")

    def joint_coordinates(self, name):
        """The joint's free coordinates now: [angle or offset, second angle or offset]
        (radians, metres; 0 where the kind has none)."""
        from .joints.generic import coordinate_now
        j = self.joint_index(name)
        iterative.prepare(self.B, self.J, np.empty((3, 3)))
        return [float(coordinate_now(self.B, self.J, j, k)) for k in range(2)]

    def joint_motor_effort(self, name):
        """Torque [N m] or force [N] the joint's motor applied to body B in the last step
        (its impulses of both stages over the step)."""
        h = self.h_prev or self.settings.h   # the last (sub)step, halvings included
        acc = self.J.acc[self.joint_index(name)]
        return float(-(acc[A_MOTOR] + acc[A_VMOTOR]) / h)

    def joint_anchor_world(self):
        """(m,2,3) world positions of both anchors of every joint (for gizmos)."""
        m = len(self.joint_models)
        body, local = self.J.const.body[:m], self.J.const.anchor[:m]
        moving = body >= 0                     # the world's anchors are world points
        b = np.where(moving, body, 0)
        turned = np.einsum("jsab,jsb->jsa", self.B.rot[b], local) + self.B.pos[b]
        return np.where(moving[..., None], turned, local).astype(np.float64)

    # ---- stepping -----------------------------------------------------------------------
    def _check_order(self):
        if self.settings.taylor_order != self._order:
            self._order = self.settings.taylor_order
            n = len(self.models)
            self.B = self.B._replace(pred_series=np.zeros((n, self._order + 1, 3)))

    def solver_work(self):
        """The global solvers' structure for the current joint graph (rebuilt on changes;
        the iterative solver does not read it, so its key is not checked for that one)."""
        if self._work is not None and self.settings.solver == SOLVERS[0]:
            return self._work
        k = graph.key(self.B, self.J)
        if k != self._work_key:
            self._work, self._work_key = graph.build(self.B, self.J), k
        return self._work

    def _settings_array(self, time):
        """The kernels' settings array at `time`. An adapted relaxation (0) is plain
        Gauss-Seidel where the joints close a loop: over-relaxed, the slider crank's loop
        took 1.3-2x the cycles (a closed loop's rows are often redundant, as a planar
        loop's out-of-plane locks; solvers/relaxation.py)."""
        arr = self.settings.to_array(self.h_prev, time, self.relax_prev)
        s = self.settings
        if s.relaxation == 0.0 and s.solver == SOLVERS[0] and self.J.const.kind.shape[0] > 0:
            k = graph.topology(self.B, self.J)
            if k != self._loop_key:
                self._loop_key, self._loop = k, graph.has_closed_loop(self.B, self.J)
            if self._loop:
                arr[S.S_RELAX] = 1.0
        return arr

    MAX_TOI_EVENTS = 8   # sub-steps a step may be cut into at collision times

    def step(self):
        """Advance by settings.h (with settings.extrapolate: Schmitt sec. 8's extrapolation
        from one step of h and two of h/2, engine/extrapolation.py)."""
        if self.settings.extrapolate:
            from .extrapolation import extrapolated_step
            extrapolated_step(self, self._plain_step)
        else:
            self._plain_step()

    def _plain_step(self):
        """Advance by settings.h; statistics of the step in self.stats / self.last_step().
        Where a contact would bounce within the step, the kernel takes the step only up to
        that moment (Schmitt sec. 11's collision time, contacts.contact_time) and the rest
        follows as further sub-steps, each with its own detection, at most MAX_TOI_EVENTS
        cuts a step (more: T_CAP_HIT). The finite-state guard (guard.py) runs before
        detection and after each sub-step's kernel. A steady step's first sub-step runs
        from the start guard to the guard after the kernel in one compiled call
        (contact_step.py, via ContactSystem.step_in_one_call), the same kernels in the same
        order; what it leaves undone, this loop does as it would have. A world whose
        bodies are all fixed or asleep takes the idle step instead (_idle_step)."""
        if self._idle is not None and self._idle_step():
            return
        self._check_order()
        sleep = self.sleep
        sleep.fit(len(self.models), self.J.const.kind.shape[0])
        sleep.check_settings(self)
        if self.drag is not None:
            apply_drag(self, self.drag, self.settings.h)
        one_call = self._one_call_possible()
        stopped = 0 if one_call else self._start_guard()
        h = self.settings.h
        left = h
        total = None
        clock = self._clock
        for cut in range(self.MAX_TOI_EVENTS + 1):
            arr = self._settings_array(self.time + (h - left))
            arr[S.S_H] = left
            arr[S.S_TOI] = 1.0 if cut < self.MAX_TOI_EVENTS else 0.0
            if self.load_models or self._loads_on:     # at the sub-step's middle
                changed = sum_wrenches(self, self.time + (h - left), left, self.B.load)
                self._loads_on = bool(self.load_models)   # (the last one's removal: zeros)
                if len(changed) and sleep.asleep[changed].any():
                    sleep.wake(self, changed)      # a load came, went or changed
            code, detect_s, bad = None, 0.0, 0
            if one_call and cut == 0:      # the stages up to the guard after the kernel
                code, detect_s, bad = self.collision.step_in_one_call(
                    arr, left, self.stats, self.solver_work(), clock, self._bad, self._good)
                if code is None or code <= contact_step.BAD_START:   # (nothing done)
                    stopped = self._start_guard()
            if code == contact_step.STEPPED:
                C = self.collision.C
                self._islands.parts = 0
            else:
                C, detect_s = self.collision.detect(left)
                if sleep.wake_touched(self, C):   # an awake body reached a sleeping island
                    C, again = self.collision.detect(left)
                    detect_s += again
                self._solve(C, arr, clock)
            taken = float(clock[S.K_H_TAKEN])
            if not math.isfinite(taken) or taken <= 0.0:
                taken = left
            if code != contact_step.STEPPED or bad:   # (the call's guard found none: done)
                stopped += self._guard("became NaN or infinite", C)
            self.collision.finish()
            self.collision.project_depth(self.stats, taken)
            self.stats[S.T_DETECT_NS] = detect_s * 1e9
            last = float(clock[S.K_H_LAST])
            self.h_prev = last if math.isfinite(last) else taken
            self.relax_prev = float(clock[S.K_RELAX])
            left -= taken
            done = left <= 1e-12 * h
            if total is not None:        # (the sub-steps before: the step's stats are a sum)
                total = step_stats.merge(total, self.stats)
            elif not done:
                total = self.stats.copy()
            if done:
                break
        if total is not None:
            self.stats[:] = total
        if cut == self.MAX_TOI_EVENTS:   # the last sub-step could not be cut any more
            self.stats[S.T_CAP_HIT] += 1
        if self._has_contacts():
            sleep.after_step(self, C, h)
        self.stopped_last_step = stopped
        self.time += h
        self.steps_taken += 1
        self._idle = self._idle_key() if not stopped and total is None else None

    def _idle_key(self):
        """After a full step: the key under which the next steps are idle steps
        (_idle_step), or None. Idle: something sleeps, every body is fixed or asleep, no
        drag or load, no contact row and no pending detection, and the step left the clock
        as an idle step leaves it."""
        sleep, B, clock, h = self.sleep, self.B, self._clock, self.settings.h
        if not sleep.anyone or self.drag is not None or self.load_models or self._loads_on \
                or self.collision.C.body.shape[0] \
                or self.collision.pending_detection or not B.static.all() \
                or not (clock[S.K_H_TAKEN] == clock[S.K_H_LAST] == self.h_prev == h) \
                or not (clock[S.K_RELAX] == self.relax_prev == 1.0) \
                or clock[S.K_TIME] != self.time:
            return None
        return self._idle_token()

    def _idle_token(self):
        """What an idle step's key holds to: the same bodies and joints, and no change of
        the sleep state (Sleep.epoch)."""
        return (id(self.B), id(self.J), self.sleep.epoch)

    def _idle_step(self):
        """A step where nothing can move: every body fixed or asleep since a full step
        found it so (_idle_key), with no edit, wake, drag, load, state restore, change of
        gravity or of the sleeping setting since (Sleep.epoch counts those). A full step
        would detect no contact (a sleeping body is fixed for detection and solver), move
        nothing and find no body still; this one takes the time, the clock and empty
        statistics as that step would (a settled scene's step: a few microseconds, where
        a detection and five kernel calls cost a 10-box stack 0.08 ms and 10 000 boxes
        0.5 ms; issue 21). Returns False (nothing done) where the key no longer holds."""
        sleep = self.sleep
        sleep.fit(len(self.models), self.J.const.kind.shape[0])
        sleep.check_settings(self)     # (gravity changed, or sleeping off: all wake)
        if self._idle != self._idle_token() or self.drag is not None \
                or self.load_models or self._loads_on:
            self._idle = None
            return False
        h = self.settings.h
        self.stats[:] = 0.0
        clock = self._clock
        clock[S.K_H_TAKEN] = clock[S.K_H_LAST] = h
        clock[S.K_TIME] = self.time + h
        self.h_prev = h
        self.stopped_last_step = 0
        self.time += h
        self.steps_taken += 1
        return True

    def _one_call_possible(self):
        """Whether this step's contact stages may go through one compiled call
        (ContactSystem.step_in_one_call, engine/contact_step.py): no drag or load to apply,
        the start guard's poses kept, nothing asleep (an awake body may wake it; a settled
        scene asleep would pay the call for nothing), the world whole for the step kernel
        (_solve: too few rows to split into islands), compiled kernels (not a first start's
        Python)."""
        B, good = self.B, self._good
        if self.drag is not None or self.load_models or self._loads_on or good is None or \
                good[0].shape[0] != B.pos.shape[0] or self._bad.shape[0] != B.pos.shape[0] \
                or interpreted.active() or self.sleep.anyone:
            return False
        s = self.settings
        return not (s.islands and s.solver == SOLVERS[0]) or \
            self.collision.C.body.shape[0] + self.J.const.body.shape[0] + \
            self.Sp.const.body.shape[0] < 2 * islands.MIN_ROWS   # (islands.plan's test)

    def _solve(self, C, arr, clock):
        """The step kernel on the whole world, or on each of its big islands at once
        (islands.py; settings.islands, the iterative solver only)."""
        parts = None
        if self.settings.islands and C.body.shape[0] > 0 and \
                self.settings.solver == SOLVERS[0]:
            parts = plan(self.B, self.J, self.Sp, C)
        if parts is None:
            self._islands.parts = 0
            self._step_kernel(self.B, self.J, self.Sp, C, arr, self.stats, self.solver_work(),
                              clock)
        else:
            self._islands.run(self._parts_kernel, world_cut, parts,
                              (self.B, self.J, self.Sp, C), arr, self.stats,
                              self.solver_work(), clock, self.threads)

    # ---- the finite-state guard (guard.py) -------------------------------------------------
    def _start_guard(self):
        """The guard at the step's start (_guard), then the poses kept (_keep_good); one
        kernel call where the poses of the last start are kept and no body is bad."""
        B = self.B
        good = self._good
        if good is not None and good[0].shape == B.pos.shape and \
                self._bad.shape[0] == B.pos.shape[0] and \
                check_and_keep(B.pos, B.rot, B.vel, B.omega, B.static, self._bad, *good) == 0:
            return 0
        stopped = self._guard("was not finite at the step's start")
        self._keep_good()
        return stopped

    def _keep_good(self):
        """Remember every body's pose at the start of the step (where the guard stops one)."""
        B = self.B
        if self._good is None or self._good[0].shape != B.pos.shape:
            self._good = (B.pos.copy(), B.rot.copy())
        else:
            np.copyto(self._good[0], B.pos)
            np.copyto(self._good[1], B.rot)

    def _guard(self, reason, C=None):
        """Stop the bodies whose state is not finite or beyond guard.RUNAWAY: back to their
        pose at the step's start (or the origin), at rest, fixed; their impulses and warm
        starts are cleared. Each becomes a Problem; returns how many."""
        B = self.B
        if self._bad.shape[0] != B.pos.shape[0]:
            self._bad = np.zeros(B.pos.shape[0], dtype=np.int64)
        k = bad_bodies(B.pos, B.rot, B.vel, B.omega, B.static, self._bad)
        if k == 0:
            return 0
        good = self._good if self._good is not None and \
            self._good[0].shape == B.pos.shape else None
        for b in self._bad[:k]:
            finite = all(np.isfinite(a[b]).all() for a in (B.pos, B.rot, B.vel, B.omega))
            why = reason if not finite else "moved beyond 1e10 m or m/s"
            self.problems.append(Problem(self.steps_taken + 1, self.time, self.models[b].name, why))
            if good is not None and np.isfinite(good[0][b]).all() and \
                    np.isfinite(good[1][b]).all():
                B.pos[b], B.rot[b] = good[0][b], good[1][b]
            else:
                B.pos[b], B.rot[b] = 0.0, np.eye(3)
            B.vel[b] = B.omega[b] = 0.0
            S.hold(B, b)
            B.pred_ok[b] = False
            if self.drag is not None and self.drag.body == b:
                self.drag = None
        zero_non_finite(self.J.acc, self.J.angle, self.Sp.force_prev, self.Sp.applied)
        if C is not None:
            zero_non_finite(C.acc_n, C.acc_v, C.acc_c, C.keep)
        return k

    def run(self, steps, record_every=0):
        """`steps` steps in one compiled call; records energy and stats per step and, if
        record_every > 0, every record_every-th state."""
        import time as _time
        self._check_order()
        n = len(self.models)
        rows = steps // record_every + 1 if record_every > 0 else 0
        rec = [np.zeros((rows, n, 3)), np.zeros((rows, n, 3, 3)), np.zeros((rows, n, 3)),
               np.zeros((rows, n, 3))]
        stats = np.zeros((steps, S.T_SIZE))
        energy = np.zeros(steps + 1)
        times = self.time + np.arange(rows) * record_every * self.settings.h
        if self._has_contacts() or self.settings.extrapolate or self.load_models or \
                self._loads_on:
            wall = self._run_stepwise(steps, record_every, rec, stats, energy)
        else:
            start = self.get_state(), self.J.acc.copy()
            arr = self._settings_array(self.time)
            C = S.empty_contacts(0, n)
            work = self.solver_work()
            clock = self._clock
            stages.run(self.B, self.J, self.Sp, C, arr, 0, stats, energy, 1, *rec,
                       work, clock)  # loads the JIT
            clock[S.K_H_LAST], clock[S.K_TIME] = self.h_prev, self.time
            clock[S.K_RELAX] = self.relax_prev
            t0 = _time.perf_counter()
            stages.run(self.B, self.J, self.Sp, C, arr, steps, stats, energy,
                       max(record_every, 1), *rec, work, clock)
            wall = _time.perf_counter() - t0
            self.h_prev = float(clock[S.K_H_LAST])
            self.relax_prev = float(clock[S.K_RELAX])
            self.time = float(clock[S.K_TIME])  # as the kernel summed it, step by step: a run
            # cut into parts (impulse sim's, or saved and resumed) sees the same clock
            self.steps_taken += steps
            if bad_bodies(self.B.pos, self.B.rot, self.B.vel, self.B.omega, self.B.static,
                          np.zeros(n, dtype=np.int64)):
                # a body went non-finite: again step by step, where the guard stops it
                self.set_state(start[0])
                self.J.acc[:] = start[1]
                self.steps_taken -= steps
                wall = self._run_stepwise(steps, record_every, rec, stats, energy)
        if steps:
            self.stats[:] = stats[-1]
        return RunResult(stats, energy, times, *rec, wall_time=wall)

    def _has_contacts(self):
        c = self.collision
        return c.enabled and len(c.tables().shape_kind) >= 2

    def _run_stepwise(self, steps, record_every, rec, stats, energy):
        """run() with contacts (detection is Python-side), extrapolation or loads (evaluated
        in Python each step): one step() per step."""
        import time as _time
        energy[0] = sum(self.energy())
        if rec[0].shape[0]:
            for a, src in zip(rec, (self.B.pos, self.B.rot, self.B.vel, self.B.omega),
                              strict=True):
                a[0] = src
        t0 = _time.perf_counter()
        r = 1
        for s in range(steps):
            self.step()
            stats[s] = self.stats
            energy[s + 1] = sum(self.energy())
            if record_every > 0 and (s + 1) % record_every == 0 and r < rec[0].shape[0]:
                for a, src in zip(rec, (self.B.pos, self.B.rot, self.B.vel, self.B.omega),
                                  strict=True):
                    a[r] = src
                r += 1
        return _time.perf_counter() - t0

    def last_step(self):
        """The statistics of the last step by name (step_stats.py: counts, errors, depths,
        each stage's time in ms), the bodies the guard stopped, the bodies awake and asleep,
        the islands (sleeping.py) and the parts its last kernel call solved apart
        (islands.py; 0: the world whole)."""
        asleep = self.sleep.count
        return {**step_stats.as_dict(self.stats), "stopped_bodies": self.stopped_last_step,
                "awake_bodies": int((~self.B.static).sum()), "asleep_bodies": asleep,
                "islands": self.sleep.islands, "islands_solved": self._islands.parts}

    # ---- the user's drag (mouse, VR controller) -----------------------------------------
    DRAG_FORCE_FACTOR = 5.0   # default cap: this many times the body's weight

    def drag_start(self, body_index, world_point, max_force=None, beta=0.3):
        """Grab body `body_index` at `world_point`; it is pulled towards the target (initially
        the point itself) by a soft joint capped at max_force (default 5 m max(|g|, 9.81)).
        Raises ValueError for a body that does not exist or is fixed, a non-finite point,
        max_force <= 0 or beta outside (0, 1]."""
        b = self._body_ref(body_index)
        self.wake(b)
        if self.B.static[b]:
            raise ValueError(f"body {self.models[b].name!r} is fixed and cannot be dragged")
        point = _finite_vector(world_point, "drag point")
        if max_force is None:  # weight-proportional; standard gravity where there is none
            g = max(float(np.linalg.norm(self.settings.gravity)), 9.81)
            max_force = self.DRAG_FORCE_FACTOR * g / self.B.inv_mass[b]
        if not (np.isfinite(max_force) and max_force > 0):
            raise ValueError(f"drag max_force must be a positive number, got {max_force}")
        if not (0 < beta <= 1):
            raise ValueError(f"drag beta must be in (0, 1], got {beta}")
        self.drag = Drag(b, self._to_local(b, point), point.copy(), float(max_force),
                         float(beta))

    def drag_to(self, world_point, world_rot=None):
        """Move the drag target (and, for a VR grab, its orientation: a rotation matrix).
        Raises ValueError for a non-finite point or a matrix that is not a rotation."""
        if self.drag is None:
            return
        target = _finite_vector(world_point, "drag target")
        if world_rot is not None:
            world_rot = np.asarray(world_rot, dtype=np.float64)
            if world_rot.shape != (3, 3) or not np.isfinite(world_rot).all() or \
                    not np.allclose(world_rot.T @ world_rot, np.eye(3), atol=1e-6):
                raise ValueError("drag orientation must be a 3x3 rotation matrix")
        self.drag.target = target
        if world_rot is not None:
            if self.drag.target_rot is None:
                self.drag.local_rot = world_rot.T @ self.B.rot[self.drag.body]
            self.drag.target_rot = world_rot

    def _body_ref(self, index):
        """A body index from the API, checked: an int in range (or a BodyId)."""
        if isinstance(index, BodyId):
            return self.body_index(index)
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
            raise ValueError(f"body index must be an integer, got {index!r}")
        if not 0 <= index < len(self.models):
            raise ValueError(f"no body with index {index} (the world has {len(self.models)})")
        return int(index)

    def drag_stop(self):
        self.drag = None

    @property
    def drag_active(self):
        return self.drag is not None

    def drag_force(self):
        """Force [N] the drag applied in the last step (zero when not dragging)."""
        if self.drag is None:
            return np.zeros(3)
        return self.drag.last_impulse / self.settings.h

    # ---- measures -------------------------------------------------------------------------
    def energy(self):
        """(kinetic, potential) energy; potential includes gravity and springs."""
        k, p = iterative.energy(self.B, self.Sp, np.asarray(self.settings.gravity, np.float64))
        return float(k), float(p) + self.sleep.potential(self)

    def momentum(self):
        """(linear, angular about the origin) momentum of the dynamic bodies."""
        lin = np.zeros(3)
        ang = np.zeros(3)
        B = self.B
        for b in range(len(self.models)):
            if B.static[b] or B.inv_mass[b] == 0:
                continue
            m = 1.0 / B.inv_mass[b]
            lin += m * B.vel[b]
            iw = B.rot[b] @ np.diag(B.const.inertia[b]) @ B.rot[b].T
            ang += np.cross(B.pos[b], m * B.vel[b]) + iw @ B.omega[b]
        return lin, ang

    # ---- state snapshots (history, undo of motion) ---------------------------------------
    def get_state(self):
        """Everything the next step reads (engine/resume.py): continuing from set_state()
        of this snapshot is bit-identical to the run that took it."""
        from .resume import capture
        return capture(self)

    def set_state(self, st):
        from .resume import restore
        restore(self, st)


def _finite_vector(x, what):
    """A 3-vector of finite numbers within the scene limits, or ValueError."""
    from .scene_schema import COORD
    try:
        v = np.array(x, dtype=np.float64).reshape(3)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be 3 numbers, got {x!r}") from None
    if not (np.abs(v) <= COORD).all():
        raise ValueError(f"{what} must be finite and within {COORD:g} m, got {v.tolist()}")
    return v
