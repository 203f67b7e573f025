"""The step by islands: each island runs its own loops and stopping rule, on its own thread.

An island is a connected component of the movable bodies over the step's contact rows, the
joints and the springs (sleeping.find_islands; static bodies and the world join nothing, so
two stacks on one floor are two islands). Where at least two islands have MIN_ROWS rows or
more (contact rows + joints + springs), World.step splits the world (plan): each such island
is a *part* of its own (beyond MAX_PARTS the smallest join the lightest part, largest first),
and every other movable body (small islands, free bodies) goes into one more part. Each part
is a world of its own for the step kernel: its bodies, the static bodies its rows and joints
reach, its rows, joints and springs, copied out, stepped by the unchanged stages and
written back (island_step.step_parts). A quiet stack then stops when it meets its tolerance
instead of cycling on with a tumbling one, and the parts run on `threads` threads at once
(World.threads: every core, or IMPULSE_THREADS; the kernel releases the GIL), each thread
taking the largest part left to the least loaded.

Determinism: the parts depend only on the world (never on the thread count), each part's
kernel only on its own arrays, and the statistics are combined in part order; so a run is
bit for bit the same with 1 or 16 threads (tests/test_engine_islands.py).

The cut at the first collision time (Schmitt sec. 11) stays one for the world: it is found
on the whole world's rows first (step.order_contacts) and every part takes that step, so the
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
from .sleeping import find_islands

MIN_ROWS = 128     # an island with fewer rows is not a part of its own
MAX_PARTS = 16     # at most this many island parts (plus the part of the rest)

# statistics combined over parts by their largest value (the rest are summed: checks,
# impulses, rows, the stages' CPU times)
_MAX_FIELDS = np.array([S.T_SWEEPS, S.T_RESIDUAL, S.T_VEL_RESIDUAL, S.T_LAYERS,
                        S.T_END_DEPTH, S.T_DEPTH], dtype=np.int64)


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
    """A split step's parts laid end to end: part k's bodies are bodies[b0[k]:b0[k+1]]
    (global indices, ascending: its movable bodies and the static ones its rows, joints and
    springs reach; a static body reached by several parts is in each), its rows
    rows[r0[k]:r0[k+1]], its joints and springs likewise; `mine` (bodies,) is True where the
    entry is the part's own movable body (what is written back)."""
    __slots__ = ("bodies", "mine", "rows", "joints", "springs", "b0", "r0", "j0", "s0",
                 "row_part", "keys", "laid_of", "row_refs", "joint_refs", "spring_refs")

    def __len__(self):
        return len(self.b0) - 1

    def work(self, k):
        return (self.r0[k + 1] - self.r0[k] + self.j0[k + 1] - self.j0[k]
                + self.s0[k + 1] - self.s0[k])


def plan(B, J, Sp, C):
    """The parts of this step (module docstring), largest first, as a Plan; None where the
    world steps whole (fewer than two islands of MIN_ROWS rows)."""
    n = B.pos.shape[0]
    movable = ~B.static
    pairs = np.concatenate([C.body, J.const.body, Sp.const.body]).astype(np.int64, copy=False)
    labels = np.empty(n, dtype=np.int64)
    count = find_islands(movable, pairs, labels)
    if count < 2:
        return None
    # each row's, joint's and spring's island: that of its first movable end (both ends of a
    # pair of movable bodies share one)
    row_island = _island_of(C.body, labels, movable)
    joint_island = _island_of(J.const.body, labels, movable)
    spring_island = _island_of(Sp.const.body, labels, movable)
    work = (np.bincount(row_island[row_island >= 0], minlength=count)
            + np.bincount(joint_island[joint_island >= 0], minlength=count)
            + np.bincount(spring_island[spring_island >= 0], minlength=count))
    big = np.flatnonzero(work >= MIN_ROWS)
    if len(big) < 2:
        return None
    big = big[np.argsort(-work[big], kind="stable")]       # largest first, ties by island
    rest = min(len(big), MAX_PARTS)                        # the part of the rest
    part_of = np.full(count, rest, dtype=np.int64)         # island -> part
    loads = np.zeros(rest)
    for i in big:                                          # largest first onto the lightest
        p = int(np.argmin(loads))                          # (the first of equals)
        part_of[i] = p
        loads[p] += work[i]
    parts = rest + 1
    P = Plan()
    P.rows, P.r0, P.row_part = _by_part(_part_of(row_island, part_of), parts)
    P.joints, P.j0, _ = _by_part(_part_of(joint_island, part_of), parts)
    P.springs, P.s0, _ = _by_part(_part_of(spring_island, part_of), parts)
    # the bodies: each part's movable ones, and the static ends of its rows, joints, springs
    body_part = _part_of(labels, part_of)
    own = np.flatnonzero(body_part >= 0)
    ends = [(C.body[P.rows], P.row_part),
            (J.const.body[P.joints], _part_index(P.j0)),
            (Sp.const.body[P.springs], _part_index(P.s0))]
    keys = [body_part[own] * n + own]
    for e, part in ends:
        for side in range(2):
            b = e[:, side]
            fixed = (b >= 0) & ~movable[np.maximum(b, 0)]
            keys.append(part[fixed] * n + b[fixed])
    keys = np.unique(np.concatenate(keys))                 # sorted: by part, then body
    P.bodies = keys % n
    P.mine = movable[P.bodies]
    P.b0 = np.searchsorted(keys, np.arange(parts + 1) * n)
    keep = np.flatnonzero(np.diff(P.b0) > 0)               # (the rest may be empty)
    if len(keep) < parts:
        P.b0 = np.append(P.b0[keep], P.b0[-1])
        P.r0 = np.append(P.r0[keep], P.r0[-1])
        P.j0 = np.append(P.j0[keep], P.j0[-1])
        P.s0 = np.append(P.s0[keep], P.s0[-1])
    P.keys = keys
    P.laid_of = np.full(n, -1, dtype=np.int64)             # a movable body's laid index
    P.laid_of[own] = np.searchsorted(keys, body_part[own] * n + own)
    P.row_refs = _renumber(C.body[P.rows], _part_index(P.r0), P, n)
    P.joint_refs = _renumber(J.const.body[P.joints], _part_index(P.j0), P, n)
    P.spring_refs = _renumber(Sp.const.body[P.springs], _part_index(P.s0), P, n)
    return P


def _by_part(part, parts):
    """Indices sorted by part (stable: ascending within one), the parts' start offsets
    (parts + 1,), and each sorted entry's part."""
    order = np.argsort(part, kind="stable")
    order = order[part[order] >= 0]
    sorted_part = part[order]
    return order, np.searchsorted(sorted_part, np.arange(parts + 1)), sorted_part


def _part_index(offsets):
    """Each entry's part from the parts' start offsets."""
    return np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))


def _part_of(island, part_of):
    """The part of each island number (-1: none)."""
    return np.where(island >= 0, part_of[np.maximum(island, 0)], -1)


def _island_of(body, labels, movable):
    """(k,) the island of each pair's first movable end, -1 where neither end moves."""
    if body.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    a, b = body[:, 0], body[:, 1]
    la = np.where((a >= 0) & movable[np.maximum(a, 0)], labels[np.maximum(a, 0)], -1)
    lb = np.where((b >= 0) & movable[np.maximum(b, 0)], labels[np.maximum(b, 0)], -1)
    return np.where(la >= 0, la, lb)


def _renumber(body, part, P, n):
    """Body references (-1: the world) of entries of `part` as indices into their part's
    bodies (P.bodies[P.b0[part]:])."""
    b = np.maximum(body, 0)
    laid = P.laid_of[b]                                    # movable ends: in one part only
    fixed = (body >= 0) & (laid < 0)                       # static ends: the part's copy
    laid[fixed] = np.searchsorted(P.keys, (part[:, None] * n + b)[fixed])
    return np.where(body >= 0, laid - P.b0[part][:, None], -1)


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

    def run(self, kernel, order_contacts, P, world_arrays, settings, stats, W, clock,
            threads):
        """Step every part of the plan P with `kernel` (island_step.step_parts), one call
        per thread; the world's stats and clock as one kernel call would leave them."""
        B, J, Sp, C = world_arrays
        t0 = time.perf_counter_ns()
        settings = settings.copy()
        cut = np.zeros(S.T_SIZE)
        if settings[S.S_TOI] != 0.0 and C.body.shape[0] > 0:
            # the world's cut at its first collision time, taken by every part (on a copy:
            # each part raises its own contact cycles for its own layers)
            whole = settings.copy()
            order_contacts(B, J, C, whole, cut)
            settings[S.S_H] = whole[S.S_H]
            settings[S.S_TOI] = 0.0
        parts = len(P)
        stats_k = np.zeros((parts, S.T_SIZE))
        clocks = np.zeros((parts, S.K_SIZE))

        def some(which):
            kernel(B, J, Sp, C, P.bodies, P.mine, P.b0, P.rows, P.row_refs, P.r0, P.joints,
                   P.joint_refs, P.j0, P.springs, P.spring_refs, P.s0, which, settings,
                   stats_k, W, clocks)

        shares = _shares(P, min(threads, parts))
        if len(shares) > 1:
            self._ensure_pool(len(shares))
            for f in [self._pool.submit(some, w) for w in shares]:
                f.result()
        else:
            some(shares[0])
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
        stats[S.T_TOI_EVENTS] = cut[S.T_TOI_EVENTS]
        clock[:] = clocks[0]
        clock[S.K_H_LAST] = clocks[:, S.K_H_LAST].min()

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
