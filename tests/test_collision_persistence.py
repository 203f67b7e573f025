"""Contact persistence across steps: ContactSet's two tables (engine/collision/detector.py),
matching by feature and, for a flipped feature id, by place (engine/collision/persist.py),
the packing of a detection into Contacts with its warm start (engine/contacts/pack.py), and
the Contacts kept per row count (engine/contacts/system.py _rows_for) with the step kernel's
remembered entry points (engine/fastcall.py)."""
import os

import numpy as np
import pytest
from numba import njit

from impulse.engine import state as S
from impulse.engine.collision.detector import ContactSet
from impulse.engine.collision.persist import MATCH_DISTANCE
from impulse.engine.contacts.pack import pack_rows
from impulse.engine.fastcall import KEPT, FastCall
from impulse.engine.scene import load_scene
from tests.conftest import SCENES


def contact_set(shape_b, feature, point_b, body_b=None):
    c = len(feature)
    rng = np.random.default_rng(c)
    body_b = shape_b if body_b is None else body_b
    return ContactSet.from_fields(
        4, body_a=np.zeros(c, np.int64), body_b=np.asarray(body_b), shape_a=np.zeros(c, np.int64),
        shape_b=np.asarray(shape_b), normal=np.tile([0.0, 1.0, 0.0], (c, 1)),
        depth=rng.uniform(-1e-3, 1e-3, c), point_a=rng.uniform(-1, 1, (c, 3)),
        point_b=np.asarray(point_b, float), world=rng.uniform(-1, 1, (c, 3)),
        feature=np.asarray(feature, np.int64))


def test_a_contact_set_is_two_tables_that_its_fields_view():
    cs = contact_set([1, 1, 2], [7, 8, 9], np.arange(9.0).reshape(3, 3))
    assert cs.ints.flags.c_contiguous and cs.reals.flags.c_contiguous
    assert len(cs) == cs.count == 3
    np.testing.assert_array_equal(cs.feature, [7, 8, 9])
    np.testing.assert_array_equal(cs.point_b, np.arange(9.0).reshape(3, 3))
    cs.depth -= 1.0                               # a field written writes its table
    cs.world += 1.0
    twin = cs.copy()
    np.testing.assert_array_equal(twin.depth, cs.depth)
    twin.feature[0] = 99                          # the copy owns its tables
    assert cs.feature[0] == 7
    one = ContactSet(cs.ints[:1], cs.reals[:1], 4)   # one row: still 2-D C tables
    assert one.ints.ndim == 2 and one.ints.flags.c_contiguous


def test_contacts_match_by_feature_then_by_place():
    b = np.array([[0.0, 0, 0], [0.1, 0, 0], [0.0, 0, 0.1], [0.1, 0, 0.1]])
    prev = contact_set([1, 1, 1, 1], [10, 11, 12, 13], b)
    # same features in another order: each finds its own row
    cur = contact_set([1, 1, 1, 1], [13, 10, 12, 11], b[[3, 0, 2, 1]])
    np.testing.assert_array_equal(cur.match(prev), [3, 0, 2, 1])
    # flipped ids (a clip point where a vertex was) at the same place: matched by place;
    # an id that is new and far from every old point is new
    moved = b + [[0, 0, 0], [0.4 * MATCH_DISTANCE, 0, 0], [0, 0, 0.9 * MATCH_DISTANCE],
                 [2 * MATCH_DISTANCE, 0, 0]]
    cur = contact_set([1, 1, 1, 1], [10, 21, 22, 23], moved)
    np.testing.assert_array_equal(cur.match(prev), [0, 1, 2, -1])
    # a row taken by its feature is not given to a flipped one nearby as well, and of two
    # flipped rows at one old place the first takes it (in row order: not the nearer, whose
    # choice a last-bit difference could flip)
    cur = contact_set([1, 1, 1], [10, 30, 31], b[[0, 0, 1]] + [[0, 0, 0], [0, 0, 0],
                                                              [1e-4, 0, 0]])
    np.testing.assert_array_equal(cur.match(prev), [0, -1, 1])
    cur = contact_set([1, 1], [40, 41], b[[1, 1]] + [[3e-4, 0, 0], [1e-4, 0, 0]])
    np.testing.assert_array_equal(cur.match(prev), [1, -1])
    # another shape pair at the same place is another contact
    cur = contact_set([2], [50], b[:1], body_b=[1])
    np.testing.assert_array_equal(cur.match(prev), [-1])



def by_feature(prev, cur):
    """The rule persist.py documents for feature matches, in plain Python: the lowest old
    row of the same shape pair and feature, else -1 (by-place matching aside)."""
    out = []
    for sa, sb, f in zip(cur.shape_a, cur.shape_b, cur.feature, strict=True):
        rows = [r for r in range(len(prev)) if (prev.shape_a[r], prev.shape_b[r],
                                                prev.feature[r]) == (sa, sb, f)]
        out.append(rows[0] if rows else -1)
    return out


def test_a_detection_like_the_last_matches_row_for_row_as_the_full_rule_does():
    """The shortcut for a table equal to the last row for row (persist._same_rows) gives
    what the sort and search give: on a resting pyramid's rows, and where a feature repeats
    within a pair (then the lowest old row takes both, so no shortcut)."""
    w = load_scene(os.path.join(SCENES, "pyramid.json"))
    for _ in range(30):
        w.step()
    prev = w.collision.last.copy()
    same = prev.copy()
    np.testing.assert_array_equal(same.match(prev), np.arange(len(prev)))
    assert list(same.match(prev)) == by_feature(prev, same)
    b = np.zeros((3, 3))
    dup = contact_set([1, 1, 1], [10, 11, 10], b + [[0, 0, 0], [0.1, 0, 0], [0, 0, 0.1]])
    np.testing.assert_array_equal(dup.copy().match(dup), [0, 1, 0])
    assert list(dup.copy().match(dup)) == by_feature(dup, dup)
    turned = prev.copy()                     # one row's feature changed: no shortcut either
    turned.feature[5] += 1000
    got = turned.match(prev)
    expect = by_feature(prev, turned)
    assert [g for i, g in enumerate(got) if i != 5] == [e for i, e in enumerate(expect)
                                                         if i != 5]


def test_packing_copies_the_rows_and_the_matched_warm_start():
    cs = contact_set([1, 2, 1], [7, 8, 9], np.arange(9.0).reshape(3, 3), body_b=[3, 5, 3])
    C = S.empty_contacts(3, 6)
    prev_warm = np.arange(2 * S.WARM_SIZE, dtype=float).reshape(2, S.WARM_SIZE) + 1.0
    rows = np.array([1, -1, 0])
    material = np.array([[0.5, 0.4, 0.3, 0.01, 0.02]] * 3 + [[0.2, 0.9, 0.75, 0.03, 0.0]]
                        + [[0.0] * 5] + [[0.7, 0.1, 0.12, 0.0, 0.05]])
    assert not pack_rows(cs.ints, cs.reals, rows, prev_warm, material, True, C.body, C.anchor,
                         C.normal, C.depth, C.warm, C.coef)
    np.testing.assert_array_equal(C.body, [[0, 3], [0, 5], [0, 3]])
    np.testing.assert_array_equal(C.anchor[:, 0], cs.point_a)
    np.testing.assert_array_equal(C.anchor[:, 1], cs.point_b)
    np.testing.assert_array_equal(C.normal, cs.normal)
    np.testing.assert_array_equal(C.depth, cs.depth)
    np.testing.assert_array_equal(C.warm, [prev_warm[1], np.zeros(S.WARM_SIZE), prev_warm[0]])
    # the pairs' materials: e, mu_t, mu_r the larger; mu_s, mu_d the geometric mean
    a, b3, b5 = material[0], material[3], material[5]
    for c, b in ((0, b3), (1, b5), (2, b3)):
        np.testing.assert_allclose(C.coef[c], [max(a[0], b[0]), np.sqrt(a[1] * b[1]),
                                               np.sqrt(a[2] * b[2]), max(a[3], b[3]),
                                               max(a[4], b[4])], rtol=1e-15)
    C.warm[:] = 0.0      # the same pairs again, nothing matched: warm stays 0, and the
    C.coef[:] = -1.0     # materials are taken again only where fresh
    assert pack_rows(cs.ints, cs.reals, np.empty(0, np.int64), prev_warm, material, False,
                     C.body, C.anchor, C.normal, C.depth, C.warm, C.coef)
    assert not C.warm.any()
    assert (C.coef == -1.0).all()
    pack_rows(cs.ints, cs.reals, np.empty(0, np.int64), prev_warm, material, True,
              C.body, C.anchor, C.normal, C.depth, C.warm, C.coef)
    assert C.coef[1, 0] == 0.7 and C.coef[0, 1] == np.sqrt(0.4 * 0.9)


def test_a_resting_pyramid_keeps_the_warm_start_of_every_touching_row():
    """The pyramid's upper boxes rest across two lower ones with their side faces flush, so
    the clipping's feature ids of some corners flip with every micro-turn; matched by
    feature only, a patch lost its warm start every other step and the loops ran to their
    caps (1320 position and 2440 velocity visits a step, against 690 and 1820 now): 5.3
    loaded rows a step started cold, against 7 in these 60 steps now (rows whose last
    impulse came from the shock pass alone)."""
    w = load_scene(os.path.join(SCENES, "pyramid.json"))
    w.settings.sleeping = False
    while w.time < 1.5:
        w.step()
    cold = 0
    cycles = []
    for _ in range(60):
        w.step()
        C = w.collision.C
        cold += int(((C.acc_n > 0) & (C.warm[:, S.WARM_N] == 0) & (C.keep[:, S.WARM_N] > 0)).sum())
        cycles.append(w.last_step()["cycles"])
    assert cold <= 30
    assert np.mean(cycles) < 2.0


def test_contacts_are_kept_per_row_count():
    """A pile whose row count flickers (a side pair at the margin) reuses the arrays of each
    count instead of allocating them anew each step."""
    w = load_scene(os.path.join(SCENES, "box_stack.json"))
    system = w.collision
    w.step()
    first = system.C
    n, nb = first.body.shape[0], first.heavy.shape[0]
    other, _ = system._rows_for(n - 4, nb)
    again, _ = system._rows_for(n, nb)
    assert again is first and other is not first
    assert not again.warm.any() and not again.keep.any()
    w.step()                                     # and the step runs on the kept arrays
    assert system.C is first


def test_new_row_counts_share_spare_arrays_and_step_as_new_arrays_do(monkeypatch):
    """Contacts of a row count not in the pool are views of spare arrays (contacts/system.py
    _spare), except the fields a step reads before it writes (OWN_FIELDS): runs whose row
    counts change (balls bouncing, a chain draped over a box, a settling pyramid) are bit
    for bit those with new zeroed arrays for each new count."""
    from impulse.engine.contacts import system as CS
    w = load_scene(os.path.join(SCENES, "box_stack.json"))
    system = w.collision
    w.step()
    n, nb = system.C.body.shape[0], system.C.heavy.shape[0]
    a, _ = system._rows_for(n - 3, nb)
    b, _ = system._rows_for(n - 5, nb)
    assert np.shares_memory(a.acc_n, b.acc_n) and a.acc_n.shape == (n - 3,)
    assert a.heavy is b.heavy and a.heavy.shape == (nb,)
    for name in CS.OWN_FIELDS:
        assert not np.shares_memory(getattr(a, name), getattr(b, name))
        assert not getattr(b, name).any()

    def run(name, fresh):
        if fresh:
            monkeypatch.setattr(CS.ContactSystem, "_spare",
                                lambda self, n, nb: S.empty_contacts(n, nb))
        else:
            monkeypatch.undo()
        w = load_scene(os.path.join(SCENES, f"{name}.json"))
        counts = set()
        for _ in range(60):
            w.step()
            counts.add(w.collision.C.body.shape[0])
        return np.concatenate([w.B.pos.ravel(), w.B.vel.ravel(), w.B.omega.ravel()]), counts

    for name in ("bouncing_balls", "chain_drape", "pyramid"):
        spare, counts = run(name, False)
        fresh, _ = run(name, True)
        assert len(counts) > 2, name                  # the row count did change
        assert np.array_equal(spare, fresh), name


@njit(cache=False)
def _total(a):
    return a.sum()


class _Counting:
    """A dispatcher that counts how often it is asked (FastCall bypasses it when it can)."""
    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self.calls = 0
        self.overloads = dispatcher.overloads
        self.typeof_pyval = dispatcher.typeof_pyval

    def __call__(self, *args):
        self.calls += 1
        return self.dispatcher(*args)


@pytest.mark.skipif(not hasattr(_total, "overloads"), reason="NUMBA_DISABLE_JIT")
def test_fastcall_remembers_several_argument_sets():
    counting = _Counting(_total)
    call = FastCall(counting)
    arrays = [np.full(3, float(i)) for i in range(KEPT + 1)]
    for _ in range(3):                       # two sets in turn: one dispatch each
        assert call(arrays[0]) == 0.0
        assert call(arrays[1]) == 3.0
    assert counting.calls == 2
    for a in arrays:                         # more sets than it keeps: the oldest goes
        call(a)
    assert counting.calls == 2 + KEPT - 1
    call(arrays[0])
    assert counting.calls == 2 + KEPT
