"""The step by islands: each island runs its own loops and stopping rule, on its own thread.

An island is a connected component of the movable bodies over the step's contact rows, the
joints and the springs (sleeping.find_islands, in island_step.plan_parts; static bodies and
the world join nothing, so two stacks on one floor are two islands). Where at least two
islands have MIN_ROWS rows or more (contact rows + joints + springs), World.step splits the
world (plan): each such island is a *part* of its own (beyond MAX_PARTS they go largest
first to the lightest part), and every other movable body (small islands, free bodies) goes
into one more part. Each part is a world of its own for the step kernel: its bodies, the
static bodies its rows and joints reach, its rows, joints and springs, copied out, stepped
by the unchanged stages and written back (island_step.step_parts). A quiet stack then stops
when it meets its tolerance instead of cycling on with a tumbling one, and the parts run on
`threads` threads at once (World.threads: every core, or IMPULSE_THREADS; the kernel
releases the GIL): the parts go largest first to the least loaded thread, and the largest
share runs in the stepping thread itself.

Determinism: the parts depend only on the world (never on the thread count), each part's
kernel only on its own arrays, and the statistics are combined in part order; so a run is
bit for bit the same with 1 or 16 threads (tests/test_engine_islands.py).

The cut at the first collision time (Schmitt sec. 11) stays one for the world: it is found
on the whole world's rows first (step.collision_cut) and every part takes that step, so the
world keeps one clock. Where a part halves its step (a diverging position loop), the next
step's h_prev is the shortest last sub-step of the parts (it scales the warm start and the
springs' window); the over-relaxation carried to the next step is the largest part's.

Worlds without two big islands never split: one island of rows (a stack, a pile, a
mechanism) steps exactly as before, and the split's bookkeeping is only paid where parts are
big enough to gain from it. `settings.islands = false` turns splitting off.
"""
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import state as S
from .island_step import plan_parts, step_parts, world_cut

MIN_ROWS = 128     # an island with fewer rows is not a part of its own
MAX_PARTS = 16     # at most this many island parts (plus the part of the rest)
ROWS_PER_BODY = 8  # contact rows a body in a pile has at most, about (could_split)

# statistics combined over parts by their largest value (the rest are summed: checks,
# impulses, rows, the stages' CPU times)
_MAX_FIELDS = np.array([S.T_SWEEPS, S.T_RESIDUAL, S.T_VEL_RESIDUAL, S.T_LAYERS,
                        S.T_END_DEPTH, S.T_DEPTH], dtype=np.int64)
_WHICH = 16        # step_parts' argument: the parts a call steps
# step_parts' arguments that are new objects each step (FastCall's loose ones): the
# Contacts, the plan's arrays, the parts, the settings and the statistics; the bodies,
# joints, springs and solver work are the world's own
LOOSE = (3,) + tuple(range(4, 19)) + (20,)


def default_threads():
    """IMPULSE_THREADS if set (>= 1), else every core this process may use."""
    env = os.environ.get("IMPULSE_THREADS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:          # (not on Linux)
        return max(1, os.cpu_count() or 1)


class Plan:
    """A split step's parts laid end to end (island_step.plan_parts): part k's bodies are
    bodies[b0[k]:b0[k+1]] (world indices, ascending: its movable bodies, `mine`, and the
    static ones its rows, joints and springs reach; a static body reached by several parts
    is in each), its rows rows[r0[k]:r0[k+1]] with their bodies as indices into the part's
    (row_refs), its joints and springs likewise."""
    FIELDS = ("bodies", "mine", "b0", "rows", "row_refs", "r0", "joints", "joint_refs", "j0",
              "springs", "spring_refs", "s0")
    __slots__ = FIELDS

    def __init__(self, arrays):
        for name, a in zip(self.FIELDS, arrays, strict=True):
            setattr(self, name, a)

    def __len__(self):
        return len(self.b0) - 1

    def work(self, k):
        return (self.r0[k + 1] - self.r0[k] + self.j0[k + 1] - self.j0[k]
                + self.s0[k + 1] - self.s0[k])


def plan(B, J, Sp, C):
    """The parts of this step (module docstring), largest first, as a Plan; None where the
    world steps whole (fewer than two islands of MIN_ROWS rows: never where the world has
    fewer than 2 MIN_ROWS, which is not looked at further)."""
    if C.body.shape[0] + J.const.body.shape[0] + Sp.const.body.shape[0] < 2 * MIN_ROWS:
        return None
    parts, *arrays = plan_parts(B.static, C.body, J.const.body, Sp.const.body, MIN_ROWS,
                                MAX_PARTS)
    return Plan(arrays) if parts >= 2 else None


def could_split(B, J, Sp):
    """Whether this world may come to have two islands of MIN_ROWS rows (preload)."""
    movable = int(np.count_nonzero(~B.static))
    return ROWS_PER_BODY * movable + J.const.body.shape[0] + Sp.const.body.shape[0] \
        >= 2 * MIN_ROWS


def preload(world):
    """Load the split step's kernels (step_parts, world_cut) from the kernel cache now, for
    a world that may split (could_split), rather than at its first split: loading
    step_parts took 0.5 s on a 2-core machine, a freeze of the viewer in the middle of a
    run when a pile first fell apart into big islands. Their arguments are typed as
    IslandStep.run passes them; returns step_parts' signature (None: not needed)."""
    if not (world.settings.islands and could_split(world.B, world.J, world.Sp)) or \
            not hasattr(step_parts, "compile"):       # (NUMBA_DISABLE_JIT)
        return None
    B, J, Sp = world.B, world.J, world.Sp
    no_pairs = np.zeros((0, 2), dtype=np.int64)
    _, *arrays = plan_parts(np.zeros(2, dtype=np.bool_), np.array([[0, 1]], dtype=np.int64),
                            no_pairs, no_pairs, 1, MAX_PARTS)
    C = S.empty_contacts(0, B.pos.shape[0])
    settings = world.settings.to_array(world.h_prev)
    args = (B, J, Sp, C, *arrays, np.zeros(1, dtype=np.int64), settings,
            np.zeros((1, S.T_SIZE)), world.solver_work(), np.zeros((1, S.K_SIZE)))
    sig = tuple(step_parts.typeof_pyval(a) for a in args)
    step_parts.compile(sig)
    world_cut.compile(tuple(world_cut.typeof_pyval(a) for a in (B, C, settings)))
    return sig


def _shares(P, threads):
    """The parts each thread steps: largest first onto the thread with the least work so
    far (which thread steps a part never changes its result)."""
    load = np.zeros(threads)
    shares = [[] for _ in range(threads)]
    for k in range(len(P)):
        t = int(np.argmin(load))
        shares[t].append(k)
        load[t] += P.work(k)
    return [np.array(w, dtype=np.int64) for w in shares if w]


class IslandStep:
    """Runs a split step (module docstring) with a pool of threads kept between steps."""

    def __init__(self):
        self._pool = None
        self._pool_threads = 0
        self.parts = 0           # parts of the last step (0: it stepped whole)

    def run(self, kernel, world_cut, P, world_arrays, settings, stats, W, clock, threads):
        """Step every part of the plan P with `kernel` (island_step.step_parts), one call
        per thread; the world's stats and clock as one kernel call would leave them."""
        B, J, Sp, C = world_arrays
        t0 = time.perf_counter_ns()
        settings = settings.copy()
        cut = False
        if settings[S.S_TOI] != 0.0 and C.body.shape[0] > 0:
            # the world's cut at its first collision time, taken by every part
            h = world_cut(B, C, settings)
            cut = h < settings[S.S_H]
            settings[S.S_H] = h
            settings[S.S_TOI] = 0.0
        parts = len(P)
        stats_k = np.zeros((parts, S.T_SIZE))
        clocks = np.zeros((parts, S.K_SIZE))

        shares = _shares(P, min(threads, parts))
        args = [B, J, Sp, C, P.bodies, P.mine, P.b0, P.rows, P.row_refs, P.r0, P.joints,
                P.joint_refs, P.j0, P.springs, P.spring_refs, P.s0, shares[0], settings,
                stats_k, W, clocks]
        entry = kernel.resolve(*args)      # (typed here once, not in each thread)

        def some(which):
            entry(*args[:_WHICH], which, *args[_WHICH + 1:])

        # the largest share in this thread (its data warm in this core's caches from the
        # detection), the others on the pool's threads
        if len(shares) > 1:
            self._ensure_pool(len(shares) - 1)
            rest = [self._pool.submit(some, w) for w in shares[1:]]
        some(shares[0])
        if len(shares) > 1:
            for f in rest:
                f.result()
        self._combine(stats_k, clocks, stats, clock, cut)
        stats[S.T_SOLVE_NS] = time.perf_counter_ns() - t0
        self.parts = parts

    def _ensure_pool(self, threads):
        if self._pool is None or self._pool_threads != threads:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
            self._pool = ThreadPoolExecutor(max_workers=threads,
                                            thread_name_prefix="impulse-island")
            self._pool_threads = threads

    @staticmethod
    def _combine(stats_k, clocks, stats, clock, cut):
        """The parts' stats summed (counts, rows, CPU times) or their largest (residuals,
        depths, layers), in part order; the clock of the first (largest) part, with the
        shortest last sub-step."""
        stats[:] = stats_k.sum(axis=0)
        stats[_MAX_FIELDS] = stats_k[:, _MAX_FIELDS].max(axis=0)
        stats[S.T_TOI_EVENTS] = 1.0 if cut else 0.0
        clock[:] = clocks[0]
        clock[S.K_H_LAST] = clocks[:, S.K_H_LAST].min()
