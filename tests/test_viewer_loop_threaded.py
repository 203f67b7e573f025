"""FixedStepLoop on its physics thread: a frame never waits for a running step, sync()
waits, edits and drag inputs land between steps, and the states are bit-identical to
stepping in the frame. Steps are held with events, never timed."""
import threading

import numpy as np
import pytest

from impulse.app.drag import MouseGrab
from impulse.app.editor import AddBody, body_at_rest_spec
from impulse.app.loop import FixedStepLoop
from impulse.app.session import Session

WAIT = 10.0       # seconds before a test gives up on an event (a hang fails, never blocks)


class GatedStep:
    """A step that blocks until released: the test decides when it finishes."""

    def __init__(self):
        self.started = threading.Event()
        self.release = threading.Event()
        self.done = 0
        self.threads = set()

    def __call__(self):
        self.threads.add(threading.get_ident())
        self.started.set()
        assert self.release.wait(WAIT), "the test never released the step"
        self.done += 1


def test_advance_returns_while_the_step_runs_and_counts_it_when_done():
    step = GatedStep()
    loop = FixedStepLoop(step, h=0.01, threaded=True)
    loop.pause()
    loop.request_step()
    report = loop.advance(0.0)                 # hands the step out and returns at once
    assert step.started.wait(WAIT)
    assert report.steps == 0 and report.busy and loop.busy and step.done == 0
    report = loop.advance(0.5)                 # still running: nothing new, nothing counted
    assert report.steps == 0 and report.busy and loop.total_steps == 0
    step.release.set()
    loop.sync()                                # waits, then counts
    assert step.done == 1 and loop.total_steps == 1 and not loop.busy
    assert loop.sim_time == pytest.approx(0.01)
    assert loop.advance(0.0).steps == 1        # the next report includes it
    assert threading.get_ident() not in step.threads
    loop.close()


def test_time_owed_while_busy_goes_out_with_the_next_batch():
    step = GatedStep()
    loop = FixedStepLoop(step, h=0.01, max_steps=100, threaded=True)
    assert loop.advance(0.01).busy             # one step owed and handed out
    assert step.started.wait(WAIT)
    for _ in range(4):
        loop.advance(0.01)                     # four more owed while it runs
    assert loop.accumulator == pytest.approx(0.04)
    step.release.set()
    loop.sync()
    assert step.done == 1
    report = loop.advance(0.0)                 # collects nothing new, hands out the four
    loop.sync()
    assert step.done == 5 and loop.total_steps == 5 and report.steps == 1
    loop.close()


def test_a_failing_step_raises_on_the_ui_thread():
    def boom():
        raise FloatingPointError("diverged")

    loop = FixedStepLoop(boom, h=0.01, threaded=True)
    loop.request_step()
    loop.advance(0.0)
    with pytest.raises(FloatingPointError):
        loop.sync()
    loop.close()


def test_when_idle_waits_for_the_end_of_the_batch():
    step = GatedStep()
    loop = FixedStepLoop(step, h=0.01, threaded=True)
    ran = []
    loop.when_idle(lambda: ran.append("now"))  # idle: runs at once
    assert ran == ["now"]
    loop.request_step()
    loop.advance(0.0)
    assert step.started.wait(WAIT)
    loop.when_idle(lambda: ran.append(("later", step.done)))
    assert ran == ["now"]
    step.release.set()
    loop.sync()
    assert ran == ["now", ("later", 1)]        # after the step, before anything else
    loop.close()


def _states_after(path, n, threaded, batch=7):
    ses = Session.open(path, threaded=threaded, step_budget_s=None)
    ses.loop.pause()
    for first in range(0, n, batch):
        ses.loop.request_step(min(batch, n - first))
        ses.loop.advance(0.0)
        ses.loop.advance(0.0)                  # a frame while it may still run
    for _ in range(n):                         # steps requested while busy go out later
        ses.loop.sync()
        if ses.loop.total_steps >= n:
            break
        ses.loop.advance(0.0)
    assert ses.loop.total_steps == n
    state = ses.world.get_state()
    state["history"] = [s["time"] for s in ses.history.snapshots]
    ses.close()
    return state


@pytest.mark.parametrize("scene", ["box_stack.json", "chain8.json"])
def test_threaded_and_synchronous_stepping_give_identical_states(scene_path, scene):
    n = 40
    a = _states_after(scene_path(scene), n, threaded=False)
    b = _states_after(scene_path(scene), n, threaded=True)
    assert a["time"] == b["time"] and a["history"] == b["history"]   # kept after batches
    for key in ("pos", "rot", "vel", "omega"):
        assert np.array_equal(a[key], b[key]), key


def test_an_edit_during_a_batch_waits_and_lands_between_steps(scene_path):
    ses = Session.open(scene_path("box_stack.json"), threaded=True)
    events = []
    gate = threading.Event()

    def hook():                                # before each step, on the physics thread
        events.append(("step", len(ses.world.body_names)))
        if len(events) == 1:
            assert gate.wait(WAIT)

    ses.step_hooks.append(hook)
    ses.listeners.append(lambda cmd: events.append(("edit", cmd.label)))
    ses.loop.pause()
    ses.loop.request_step(2)
    ses.loop.advance(0.0)
    n = len(ses.world.body_names)
    threading.Timer(0.2, gate.set).start()     # lets the step go on while the edit waits
    ses.editor.run(AddBody(body_at_rest_spec(ses.world, "box", [3.0, 0.0, 0.0])))
    assert events[:2] == [("step", n), ("step", n)]          # the batch finished first
    assert events[2][0] == "edit"
    ses.loop.request_step()
    ses.loop.advance(0.0)
    ses.loop.sync()
    assert events[3] == ("step", n + 1)
    ses.close()


def test_the_view_shows_the_state_handed_out_while_the_batch_runs(scene_path):
    ses = Session.open(scene_path("box_stack.json"), threaded=True)
    gate = threading.Event()
    ses.step_hooks.append(lambda: gate.wait(WAIT))
    ses.loop.pause()
    before = ses.world.body_pos.copy()
    ses.loop.request_step(3)
    ses.loop.advance(0.0)
    shown = ses.view.body_pos
    assert shown is not ses.world.body_pos and np.array_equal(shown, before)
    assert len(ses.view.contact_world) == len(ses.view.contact_impulse)
    gate.set()
    ses.loop.sync()
    assert ses.view.body_pos is ses.world.body_pos            # idle: the world itself
    assert not np.array_equal(ses.world.body_pos, before)
    ses.close()


def test_a_drag_during_a_batch_starts_between_steps(scene_path):
    from types import SimpleNamespace

    from impulse.app.camera import Camera

    ses = Session.open(scene_path("box_stack.json"), threaded=True)
    w = ses.world
    gate = threading.Event()
    drags = []

    def hook():
        drags.append(w.drag is not None)
        gate.wait(WAIT)

    ses.step_hooks.append(hook)
    viewer = SimpleNamespace(camera=Camera(eye=(0.0, 1.0, 5.0), target=(0.0, 0.5, 0.0)),
                             select=lambda b: None)
    grab = MouseGrab(viewer, w, defer=ses.loop.when_idle, shown=ses.view)
    b = next(i for i in range(len(w.body_names)) if not w.body_static[i])
    ses.loop.pause()
    ses.loop.request_step()
    ses.loop.advance(0.0)
    point = ses.view.body_pos[b] + [0.0, 0.05, 0.0]
    rot_shown = ses.view.body_rot[b].copy()
    assert grab.begin(b, point, (np.array([0.0, 1.0, 5.0]), np.array([0.0, 0.0, -1.0])))
    assert w.drag is None                     # not yet: the batch runs
    gate.set()
    ses.loop.sync()
    assert w.drag is not None and w.drag.body == b
    assert np.allclose(w.drag.local_point, rot_shown.T @ [0.0, 0.05, 0.0])  # the point clicked
    ses.loop.request_step()
    ses.loop.advance(0.0)
    ses.loop.sync()
    assert drags == [False, True]
    ses.close()
