"""FixedStepLoop: steps per frame, catch-up cap with dropped time, pause/step, speed, RTF."""
import pytest

from impulse.app.loop import FixedStepLoop


class Counter:
    def __init__(self):
        self.n = 0

    def __call__(self):
        self.n += 1


def test_steps_per_frame_follow_wall_time():
    c = Counter()
    loop = FixedStepLoop(c, h=0.01)
    assert [loop.advance(0.025).steps for _ in range(4)] == [2, 3, 2, 3]
    assert c.n == 10 and loop.sim_time == pytest.approx(0.1)
    assert loop.advance(0.004).steps == 0 and loop.accumulator == pytest.approx(0.004)


def test_catch_up_is_capped_and_dropped_time_reported():
    c = Counter()
    loop = FixedStepLoop(c, h=0.01, max_steps=5)
    report = loop.advance(1.0)
    assert report.steps == 5 and c.n == 5
    assert report.dropped == pytest.approx(0.95)
    assert loop.dropped_total == pytest.approx(0.95)
    assert 0 <= report.alpha < 1
    assert loop.advance(0.01).steps == 1  # next frame is back to normal


def test_work_budget_stops_early():
    now = [0.0]

    def slow_step():
        now[0] += 0.02  # each step costs 20 ms of "wall" time

    loop = FixedStepLoop(slow_step, h=0.01, max_steps=100, budget_s=0.05, clock=lambda: now[0])
    report = loop.advance(0.5)
    assert report.steps == 3 and report.dropped == pytest.approx(0.47)


def test_pause_and_single_step():
    c = Counter()
    loop = FixedStepLoop(c, h=0.01)
    loop.pause()
    assert loop.advance(0.5).steps == 0 and c.n == 0
    loop.request_step()
    assert loop.advance(0.5).steps == 1 and c.n == 1
    loop.request_step(3)
    assert loop.advance(0.0).steps == 3
    loop.toggle_pause()
    assert not loop.paused and loop.advance(0.02).steps == 2


def test_speed_factor_is_clamped_and_scales_time():
    c = Counter()
    loop = FixedStepLoop(c, h=0.01, max_steps=1000)
    loop.speed = 100
    assert loop.speed == 8
    loop.speed = 0.001
    assert loop.speed == 1 / 8
    loop.speed = 2.0
    assert loop.advance(0.05).steps == 10
    loop.speed = 0.25
    assert sum(loop.advance(0.01).steps for _ in range(8)) == 2


def test_real_time_factor_measured_over_window():
    loop = FixedStepLoop(lambda: None, h=0.01, max_steps=2)
    for _ in range(120):
        loop.advance(1 / 60)
    assert loop.real_time_factor == pytest.approx(1.0, abs=0.02)
    for _ in range(120):
        loop.advance(0.1)  # capped at 2 steps = 0.02 s per 0.1 s frame
    assert loop.real_time_factor == pytest.approx(0.2, abs=0.01)


def test_invalid_arguments():
    with pytest.raises(ValueError):
        FixedStepLoop(lambda: None, h=0.0)
    with pytest.raises(ValueError):
        FixedStepLoop(lambda: None, h=0.01, max_steps=0)
