"""engine/contact_step.py: a steady contact step in one compiled call gives the step that
World.step's Python path gives, bit for bit, over scenes, step sizes and sleeping; it is
taken where it applies, and each way out of it (a drag, a collision time that cuts the
step, another row count, a body the guard stops) ends as the Python path does."""
import os

import numpy as np
import pytest

from impulse.engine import contact_step
from impulse.engine import world as world_module
from impulse.engine.bench.overhead import kernel_clock
from impulse.engine.scene import load_scene, scene_to_world
from impulse.engine.scenes_list import SCENES_DIR


def _load(name, h, sleeping):
    w = load_scene(os.path.join(SCENES_DIR, f"{name}.json"))
    w.settings.h = h
    w.settings.sleeping = sleeping
    return w


class OneCallCount:
    """Counts step_in_one_call's return codes (a spy on the ContactSystem's method)."""

    def __init__(self, w):
        self.codes = []
        inner = w.collision.step_in_one_call

        def spy(*args):
            result = inner(*args)
            self.codes.append(result[0])
            return result
        w.collision.step_in_one_call = spy

    def stepped(self):
        return sum(c == contact_step.STEPPED for c in self.codes)


def _python_only(monkeypatch):
    monkeypatch.setattr(world_module.World, "_one_call_possible", lambda self: False)


def _same(a, b):
    for f in ("pos", "rot", "vel", "omega"):
        x, y = getattr(a.B, f), getattr(b.B, f)
        assert np.array_equal(x, y), f"{f} differs by {np.abs(x - y).max():.3e}"
    assert a.time == b.time


@pytest.mark.parametrize("name, h, steps, sleeping", [
    ("box_stack", 1 / 60, 120, False),
    ("box_stack", 1 / 30, 60, True),
    ("box_stack", 0.001, 300, False),
    ("pyramid", 1 / 60, 90, False),
    ("pyramid", 1 / 90, 90, True),
    ("tall_tower", 1 / 60, 90, False),
    ("newtons_cradle", 1 / 60, 120, False),
    ("rolling_bodies", 1 / 60, 120, True),
    ("spinning_top", 1 / 90, 120, False),
    ("rod_table", 1 / 60, 90, False),
    ("four_balls", 0.001, 300, True),
    ("bouncing_balls", 1 / 30, 90, False),
])
def test_one_call_steps_as_the_python_path_bit_for_bit(name, h, steps, sleeping, monkeypatch):
    a = _load(name, h, sleeping)
    count = OneCallCount(a)
    for _ in range(steps):
        a.step()
    _python_only(monkeypatch)
    b = _load(name, h, sleeping)
    for _ in range(steps):
        b.step()
    _same(a, b)
    # (a sleeping island's rows are kept apart from the detection: the Python path)
    assert count.stepped() >= (10 if sleeping else steps // 3), (name, count.codes[-10:])
    assert a.problems == b.problems == []


def test_a_resting_stack_takes_one_compiled_call_a_step():
    w = _load("box_stack", 1 / 60, False)
    for _ in range(30):
        w.step()
    with kernel_clock() as clock:
        for _ in range(10):
            w.step()
    assert clock.calls == 10


def _ball_doc(vy):
    return {"format": "impulse-scene", "version": 1, "settings": {"h": 1 / 60},
            "bodies": [{"name": "ground", "fixed": True, "shape": {"type": "plane"}},
                       {"name": "box", "mass": 1.0, "position": [0, 0.1, 0],
                        "shape": {"type": "box", "size": [0.2, 0.2, 0.2]}},
                       {"name": "ball", "mass": 1.0, "position": [1.0, 0.1, 0],
                        "velocity": [0, vy, 0], "material": {"restitution": 0.8},
                        "shape": {"type": "sphere", "radius": 0.1}}]}


def _ways_out(spy):
    """A box at rest and a ball: the ball thrown down onto the floor (new rows: DETECTED),
    bouncing (its collision time cuts steps: the rest of each in Python), then the box
    dragged (the Python path all along) and let go."""
    w = scene_to_world(_ball_doc(0.0), "ways")
    count = OneCallCount(w) if spy else None
    toi = 0
    for _ in range(20):
        w.step()
    w.B.vel[2] = (0.0, -6.0, 0.0)
    w.B.pos[2, 1] = 0.6
    for _ in range(40):
        w.step()
        toi += w.last_step()["toi_events"]
    w.drag_start(1, w.B.pos[1] + [0.0, 0.1, 0.0])
    for _ in range(10):
        w.drag_to(w.B.pos[1] + [0.05, 0.2, 0.0])
        w.step()
    w.drag_stop()
    for _ in range(30):
        w.step()
    return w, count, toi


def test_ways_out_new_rows_a_collision_time_and_a_drag_end_as_the_python_path(monkeypatch):
    a, count, toi = _ways_out(spy=True)
    assert contact_step.DETECTED in count.codes
    assert count.stepped() >= 20
    assert len(count.codes) < 100          # (the drag's steps do not ask)
    assert toi > 0
    _python_only(monkeypatch)
    b, _, toi_b = _ways_out(spy=False)
    _same(a, b)
    assert toi == toi_b


def _bad_bodies(spy):
    w = _load("box_stack", 1 / 60, False)
    count = OneCallCount(w) if spy else None
    for _ in range(20):
        w.step()
    w.B.vel[3, 0] = np.nan           # before a step: BAD_START, the Python guard stops it
    for _ in range(6):
        w.step()
    w.B.omega[5, 1] = 1e300          # infinite within the step: the guard after the kernel
    for _ in range(5):
        w.step()
    return w, count


def test_a_body_that_goes_bad_is_stopped_as_on_the_python_path(monkeypatch):
    a, count = _bad_bodies(spy=True)
    assert contact_step.BAD_START in count.codes
    _python_only(monkeypatch)
    b, _ = _bad_bodies(spy=False)
    _same(a, b)
    assert [(p.step, p.body, p.reason) for p in a.problems] == \
        [(p.step, p.body, p.reason) for p in b.problems]
    assert len(a.problems) == 2


def test_the_one_call_lets_other_threads_run():
    """The viewer steps in a physics thread while its UI draws: the call releases the GIL,
    as the step kernel does."""
    assert contact_step.contact_step.targetoptions.get("nogil") is True


def _nudged(spy):
    """Bouncing balls, a ball's velocity changed between steps now and then: the depth
    projection's detection left for the next step no longer fits, and is not taken."""
    w = _load("bouncing_balls", 1 / 60, False)
    count = OneCallCount(w) if spy else None
    for k in range(90):
        if k % 7 == 3:
            w.B.vel[1, 0] += 0.3
        w.step()
    return w, count


def test_a_depth_projections_detection_is_taken_only_where_it_still_fits(monkeypatch):
    a, count = _nudged(spy=True)
    assert count.stepped() >= 30
    _python_only(monkeypatch)
    b, _ = _nudged(spy=False)
    _same(a, b)


def _bad_in_a_detected_step(spy):
    """The ball put onto the floor and the box sent up past guard.RUNAWAY within the step
    (new rows: the call hands the detection back, DETECTED): the guard after the kernel
    must stop the box in that step, as the Python path does."""
    w = scene_to_world(_ball_doc(0.0), "bad")
    count = OneCallCount(w) if spy else None
    for _ in range(30):
        w.step()
    w.B.pos[2, 1] = 0.1
    w.B.pos[1, 1] = 0.999e10             # (fine at the start; 1.01e10 after the step)
    w.B.vel[1, 1] = 0.9e10
    w.step()
    for _ in range(3):
        w.step()
    return w, count


def test_a_body_that_goes_bad_in_a_step_the_call_hands_back_is_stopped_in_that_step(
        monkeypatch):
    a, count = _bad_in_a_detected_step(spy=True)
    assert count.codes[29] == contact_step.DETECTED    # (the first step does not ask)
    _python_only(monkeypatch)
    b, _ = _bad_in_a_detected_step(spy=False)
    assert [(p.step, p.body, p.reason) for p in a.problems] == \
        [(p.step, p.body, p.reason) for p in b.problems]
    assert [p.step for p in a.problems] == [31]
    _same(a, b)


@pytest.mark.parametrize("name, h", [("spinning_top", 1 / 60), ("newtons_cradle", 1 / 90),
                                     ("rolling_bodies", 1 / 30)])
def test_the_depth_projection_runs_in_the_same_call(name, h):
    """Moving bodies: the projection after each step (a detection at t + h, kept for the
    next step) runs inside the one call: one compiled call a step, a pending detection
    after it."""
    w = _load(name, h, False)
    count = OneCallCount(w)
    for _ in range(30):
        w.step()
    calls = []        # of the steps the call took whole and projected after (and whose
    #                   FixedArgs were made before: a new row count's Contacts make anew)
    with kernel_clock() as clock:
        for _ in range(40):
            clock.calls, n = 0, len(count.codes)
            held = list(w.collision._fixed_kept)
            w.step()
            made = clock.calls
            if list(w.collision._fixed_kept) == held and \
                    count.codes[n:] == [contact_step.STEPPED] and \
                    w.collision._pending is not None and w.last_step()["project_ms"] > 0 \
                    and w.last_step()["toi_events"] == 0:   # (a cut step: Python's sub-steps)
                calls.append(made)
    assert len(calls) >= 20 and set(calls) == {1}, calls


def _outgrown(shrink):
    """Newton's cradle, whose projection detects after every step; with shrink, the spare
    detection buffers cut to one row before some steps, so the projection's detection inside
    the call does not fit and the call leaves the rounds to Python (GROW)."""
    from impulse.engine.collision.manifold import make_contact_buffers
    from impulse.engine.contacts import depth_projection

    w = _load("newtons_cradle", 1 / 60, False)
    status = []
    inner = w.collision.project_depth

    def spy(*args):
        p = w.collision._projected
        status.append(None if p is None else p[0])
        return inner(*args)
    w.collision.project_depth = spy
    for i in range(80):
        if shrink and i % 10 == 5 and len(w.collision.detector._bufs) == 3:
            w.collision.detector._bufs[2] = make_contact_buffers(1)
            w.collision.detector.arrays_made += 1   # (as grow() counts a replacement)
        w.step()
    return w, status.count(depth_projection.GROW)


def test_a_projection_detection_that_outgrows_its_buffers_goes_on_in_python():
    a, grown = _outgrown(True)
    b, none = _outgrown(False)
    assert grown >= 5 and none == 0
    _same(a, b)
    assert a.problems == b.problems == []


def test_pending_detections_never_share_memory_with_those_still_in_use():
    """The depth projection's detection is kept in one of three buffer sets; the one it
    writes is never the one the step took (the last detection) or the one before it (what
    packing matched against)."""
    w = _load("bouncing_balls", 1 / 60, False)
    c = w.collision
    seen = set()
    for _ in range(120):
        w.step()
        if c._pending is None:
            continue
        pending = c._pending[0].ints
        seen.add(id(pending.base))
        for other in (c.last, c._prev):
            if other is not None and other is not c._pending[0]:
                assert not np.shares_memory(pending, other.ints)
    assert len(seen) == 3


def _edited():
    """A resting stack, then a box added on top (new body arrays, shape tables and
    Contacts: the call's FixedArgs are made anew)."""
    w = _load("box_stack", 1 / 60, False)
    count = OneCallCount(w)
    held = []
    for _ in range(20):
        w.step()
        held.append(len(w.collision._fixed_kept))
    top = w.B.pos[:, 1].max()
    w.add_body({"name": "extra", "mass": 0.5, "position": [0.0, top + 0.3, 0.0],
                "shape": {"type": "box", "size": [0.2, 0.2, 0.2]}})
    n = len(count.codes)
    for _ in range(60):
        w.step()
    return w, held, sum(c == contact_step.STEPPED for c in count.codes[n:])


def test_fixed_args_are_made_once_and_anew_after_an_edit(monkeypatch):
    a, held, stepped = _edited()
    assert held[-1] == 1                       # one FixedArgs for a resting stack
    assert len(a.collision._fixed_kept) >= 2   # ... and one more for the edited world
    assert stepped >= 40                       # (which the call stepped)
    _python_only(monkeypatch)
    b, _, _ = _edited()
    _same(a, b)
    assert a.problems == b.problems == []
