"""The step by islands (engine/islands.py, engine/island_step.py): the parts against a
reference union-find, bit for bit the same run whatever the thread count, the split world
against the whole one (stacks standing, a bounce cut at its collision time, jointed chains),
and worlds that never split."""
import numpy as np
import pytest
from scene_docs import scene_doc
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from impulse.engine import islands
from impulse.engine.scene import scene_to_world

GROUND = {"name": "ground", "fixed": True, "shape": {"type": "plane"}}
S = 0.2


def cube(name, x, y, z=0.0, size=S):
    return {"name": name, "mass": 1.0, "position": [x, y, z],
            "shape": {"type": "box", "size": [size] * 3}}


def pyramid(prefix, x, base):
    out = []
    for row, count in enumerate(range(base, 0, -1)):
        for i in range(count):
            out.append(cube(f"{prefix}{row}_{i}", x + (i - (count - 1) / 2) * (S + 0.01),
                            S / 2 + row * S))
    return out


def chain(prefix, x, links, y0=0.9):
    """A hanging chain of ball-jointed capsules from the world whose last links lie on the
    ground."""
    bodies, joints = [], []
    step = 0.1
    for i in range(links):
        y = max(y0 - step * (i + 0.5), 0.03)
        dx = 0.0 if y0 - step * (i + 0.5) > 0.03 else step * (i + 0.5) - y0
        bodies.append({"name": f"{prefix}{i}", "mass": 0.2, "position": [x + dx, y, 0.0],
                       "shape": {"type": "sphere", "radius": 0.03}})
        parent = "world" if i == 0 else f"{prefix}{i - 1}"
        anchor = [x, y0, 0.0] if i == 0 else [x + dx, y + 0.05, 0.0]
        joints.append({"name": f"{prefix}j{i}", "type": "ball", "bodies": [parent, f"{prefix}{i}"],
                       "anchor": anchor})
    return bodies, joints


def world(bodies, h=1 / 60, joints=(), threads=1, **settings):
    w = scene_to_world(scene_doc([GROUND, *bodies], joints=list(joints),
                                 settings={"h": h, "sleeping": False, **settings}))
    w.threads = threads
    return w


@pytest.fixture
def small_parts(monkeypatch):
    """Islands of a few rows split already (the default asks for MIN_ROWS)."""
    monkeypatch.setattr(islands, "MIN_ROWS", 8)


def nudge(w, speed=0.05):
    w.B.vel[1:, 0] += speed * np.sin(np.arange(w.B.pos.shape[0] - 1))


def run(w, steps):
    parts = []
    for _ in range(steps):
        w.step()
        parts.append(w.last_step()["islands_solved"])
    return parts


# ---- the parts ----------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_parts_are_unions_of_islands_and_cover_everything(seed, small_parts):
    rng = np.random.default_rng(seed)
    bodies, joints = [], []
    x = 0.0
    for k in range(int(rng.integers(2, 6))):
        if rng.random() < 0.5:
            bodies += pyramid(f"p{k}_", x, int(rng.integers(2, 5)))
        else:
            b, j = chain(f"c{k}_", x, int(rng.integers(8, 14)))
            bodies += b
            joints += j
        x += 2.0
    bodies.append(cube("free", 50.0, 5.0))                     # falling, touching nothing
    w = world(bodies, joints=joints)
    w.step()
    B, J, Sp, C = w.B, w.J, w.Sp, w.collision.C
    P = islands.plan(B, J, Sp, C)
    assert P is not None and len(P) >= 2
    n = B.pos.shape[0]
    movable = ~B.static
    # every movable body is exactly one part's own; static entries are copies
    own = P.bodies[P.mine]
    assert sorted(own) == list(np.flatnonzero(movable))
    assert not movable[P.bodies[~P.mine]].any()
    # every row, joint and spring in exactly one part, its bodies that part's
    for idx, refs, off, table in ((P.rows, P.row_refs, P.r0, C.body),
                                  (P.joints, P.joint_refs, P.j0, J.const.body),
                                  (P.springs, P.spring_refs, P.s0, Sp.const.body)):
        assert sorted(idx) == list(range(table.shape[0]))
        for k in range(len(P)):
            lo, hi = off[k], off[k + 1]
            part_bodies = P.bodies[P.b0[k]:P.b0[k + 1]]
            r = refs[lo:hi]
            assert (r < len(part_bodies)).all()
            back = np.where(r >= 0, part_bodies[np.maximum(r, 0)], -1)
            assert np.array_equal(back, table[idx[lo:hi]])
    # a reference union-find: each island lies in one part
    pairs = np.concatenate([C.body, J.const.body])
    keep = (pairs >= 0).all(axis=1) & movable[np.maximum(pairs[:, 0], 0)] \
        & movable[np.maximum(pairs[:, 1], 0)]
    g = coo_matrix((np.ones(keep.sum()), (pairs[keep, 0], pairs[keep, 1])), shape=(n, n))
    _, label = connected_components(g, directed=False)
    part_of_body = np.full(n, -1)
    for k in range(len(P)):
        seg = slice(P.b0[k], P.b0[k + 1])
        part_of_body[P.bodies[seg][P.mine[seg]]] = k
    for lab in np.unique(label[movable]):
        members = np.flatnonzero((label == lab) & movable)
        assert len(set(part_of_body[members])) == 1


def test_worlds_without_two_big_islands_step_whole():
    w = world(pyramid("a", 0.0, 6))                          # one island of ~200 rows
    assert max(run(w, 30)) == 0
    w = world(pyramid("a", 0.0, 6) + pyramid("b", 3.0, 2))    # one big, one small
    assert max(run(w, 30)) == 0


def test_islands_off_never_splits_and_is_the_whole_step(small_parts):
    bodies = pyramid("a", 0.0, 3) + pyramid("b", 2.0, 3)
    w_off = world(bodies, islands=False)
    assert max(run(w_off, 20)) == 0
    w_on = world(bodies)
    assert min(run(w_on, 20)) >= 2


# ---- determinism --------------------------------------------------------------------------

@pytest.mark.parametrize("h", [1 / 30, 1 / 60])
def test_bit_for_bit_the_same_with_any_thread_count(h, small_parts):
    bodies = pyramid("a", 0.0, 4) + pyramid("b", 2.0, 3) + pyramid("c", 4.0, 4)
    runs = []
    for threads in (1, 2, 3):
        w = world(bodies, h=h, threads=threads)
        nudge(w)
        assert min(run(w, 40)) >= 3
        runs.append((w.B.pos.copy(), w.B.rot.copy(), w.B.vel.copy(), w.B.omega.copy(),
                     w.last_step()["checks"], w.collision.C.acc_n.copy()))
    for other in runs[1:]:
        for a, b in zip(runs[0], other, strict=True):
            assert np.array_equal(a, b)


# ---- the split world against the whole one ------------------------------------------------

@pytest.mark.parametrize("h", [1 / 30, 1 / 60, 1 / 90, 0.005])
def test_split_pyramids_stand_as_the_whole_world_does(h, small_parts):
    bodies = pyramid("a", 0.0, 4) + pyramid("b", 2.0, 4)
    start = None
    ends = []
    for isl in (True, False):
        w = world(bodies, h=h, islands=isl)
        start = w.B.pos.copy()
        parts = run(w, int(round(1.5 / h)))
        assert (min(parts) >= 2) == isl
        ends.append(w.B.pos.copy())
        # the pyramids stand: no body moved by more than 2 mm
        assert np.abs(w.B.pos[1:] - start[1:]).max() < 2e-3
        assert w.last_step()["contact_rows"] == w.collision.C.body.shape[0]
    assert np.abs(ends[0] - ends[1]).max() < 1e-3


@pytest.mark.parametrize("h", [1 / 30, 1 / 60])
def test_a_bounce_cuts_every_part_at_its_collision_time(h, small_parts):
    ball = {"name": "ball", "mass": 1.0, "position": [6.0, 1.0, 0.0],
            "shape": {"type": "sphere", "radius": 0.1},
            "material": {"restitution": 0.8}}
    bodies = pyramid("a", 0.0, 3) + pyramid("b", 2.0, 3) + [ball]
    apex, times = [], []
    for isl in (True, False):
        w = world(bodies, h=h, islands=isl)
        b = w.body_index("ball")
        steps, cuts, best, bounced = int(round(1.2 / h)), 0, 0.0, False
        for _ in range(steps):
            w.step()
            cuts += w.last_step()["toi_events"]
            bounced |= w.B.vel[b, 1] > 0
            if bounced:
                best = max(best, w.B.pos[b, 1])
        assert cuts >= 1
        apex.append(best)
        times.append(w.time)
    # dropped from 0.9 m above contact: the apex is e^2 of that, split or whole
    assert times[0] == pytest.approx(times[1], abs=1e-12)
    assert apex[0] == pytest.approx(apex[1], rel=0.01)
    assert apex[0] - 0.1 == pytest.approx(0.64 * 0.9, rel=0.05)


def test_jointed_chains_keep_their_joints_when_split(small_parts):
    b1, j1 = chain("a", 0.0, 12)
    b2, j2 = chain("b", 3.0, 12)
    ends = []
    for isl in (True, False):
        w = world(b1 + b2, h=1 / 60, joints=j1 + j2, islands=isl)
        parts = run(w, 60)
        assert (min(parts) >= 2) == isl
        gaps = w.joint_anchor_world()
        assert np.abs(gaps[:, 0] - gaps[:, 1]).max() < 1e-4
        ends.append(w.B.pos.copy())
    assert np.abs(ends[0] - ends[1]).max() < 5e-3


def test_fastcall_resolve_types_once_and_steps_as_the_dispatcher(small_parts):
    """FastCall.resolve (the threads' entry point of step_parts) gives one entry point for
    arguments of the same kinds, and it steps a part as the dispatcher does."""
    from impulse.engine import state as St
    from impulse.engine.fastcall import FastCall
    from impulse.engine.island_step import step_parts
    runs = []
    for how in ("dispatcher", "resolve"):
        w = world(pyramid("a", 0.0, 3) + pyramid("b", 2.0, 3))
        w.step()
        C = w.collision.C
        P = islands.plan(w.B, w.J, w.Sp, C)
        stats = np.zeros((len(P), St.T_SIZE))
        clocks = np.zeros((len(P), St.K_SIZE))
        args = [w.B, w.J, w.Sp, C, P.bodies, P.mine, P.b0, P.rows, P.row_refs, P.r0,
                P.joints, P.joint_refs, P.j0, P.springs, P.spring_refs, P.s0,
                np.arange(len(P)), w._settings_array(w.time), stats, w.solver_work(),
                clocks]
        if how == "dispatcher":
            step_parts(*args)
        else:
            fast = FastCall(step_parts, loose=islands.LOOSE)
            entry = fast.resolve(*args)
            other = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            assert fast.resolve(*other) is entry        # same kinds: typed once
            entry(*args)
        runs.append((w.B.pos.copy(), w.B.vel.copy(), stats.copy()))
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])
    assert runs[0][2][:, St.T_CHECKS].sum() > 0


def test_preload_loads_the_entry_point_the_first_split_step_uses(small_parts):
    """islands.preload types step_parts' arguments as IslandStep.run passes them, so the
    first split step finds its kernel loaded (in the viewer a load at the first split froze
    the run for 0.3-0.5 s); a world that can never split loads nothing."""
    from impulse.engine.island_step import step_parts
    assert islands.preload(world([cube("a", 0.0, 0.2)])) is None      # one cube
    w = world(pyramid("a", 0.0, 3) + pyramid("b", 2.0, 3))
    sig = islands.preload(w)
    assert sig is not None and sig in step_parts.overloads
    loaded = set(step_parts.overloads)
    assert max(run(w, 3)) >= 2                                       # it split
    assert set(step_parts.overloads) == loaded                       # nothing new loaded
    used = [entry for entry, _ in w._parts_kernel._known.values()]
    assert used == [step_parts.overloads[sig].entry_point]


def test_island_step_writes_back_every_field_a_step_advances():
    """island_step names each field of the world's tables (numba cannot loop over a named
    tuple's fields of different types): a field added to state.py and not written back by
    put_bodies / put_joints / put_springs would silently be lost after a split step."""
    import ast
    import inspect

    from impulse.engine import island_step
    from impulse.engine import state as St
    tree = ast.parse(inspect.getsource(island_step))
    written = {}
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name.startswith("put_"):
            written[fn.name] = {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)
                                and isinstance(n.value, ast.Name)
                                and n.value.id in ("B", "J", "Sp", "C")}
    for name, table in (("put_bodies", St.Bodies), ("put_joints", St.Joints),
                        ("put_springs", St.Springs)):
        assert written[name] == set(table._fields) - {"const"}, name
    # the rows: at least what contacts/system.py and the guard read after a step
    assert {"acc_n", "acc_t", "acc_v", "acc_c", "keep", "first", "slide"} <= \
        written["put_contacts"] <= set(St.Contacts._fields)
