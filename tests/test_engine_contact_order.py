"""Large detections in the loops' visiting order (contacts/system.py _in_layer_order): the rows
are sorted by their contact layer (contacts/solve.py body_layers over the detected rows), so
the loops read neighbouring rows from neighbouring memory."""
import numpy as np
import pytest

from impulse.engine.contacts import system
from tests.test_engine_contacts import scene


def _sorted_world(monkeypatch, name):
    monkeypatch.setattr(system, "LOCALITY_ROWS", 0)     # sort every detection
    w = scene(name)
    w.settings.sleeping = False
    return w


@pytest.mark.parametrize("name", ["pyramid.json", "box_stack.json", "tall_tower.json"])
def test_rows_come_in_layer_order_and_the_loops_visit_them_in_turn(monkeypatch, name):
    w = _sorted_world(monkeypatch, name)
    w.run(30)
    fresh = w.collision.detector.detect(w.B.pos, w.B.rot, w.B.vel, w.B.omega, w.B.static,
                                        w.settings.h, spare=True).copy()
    w.step()
    cs = w.collision.last
    layers = w.collision.C.body_layer                          # the step's own
    key = np.maximum(layers[cs.body_a], layers[cs.body_b])
    assert (np.diff(key) <= 0).all()                           # highest layer first
    assert len(cs) == len(fresh)                               # the same rows, reordered
    assert sorted(map(tuple, cs.ints[:, :3])) == sorted(map(tuple, fresh.ints[:, :3]))
    order = w.collision.C.order
    assert (order == np.arange(len(order))).all()              # visited as stored


def test_sorting_leaves_the_pyramid_standing_as_it_stands_unsorted(monkeypatch):
    plain = scene("pyramid.json")
    plain.settings.sleeping = False
    w = _sorted_world(monkeypatch, "pyramid.json")
    p0 = w.B.pos.copy()
    plain.run(300)
    w.run(300)
    assert np.abs(w.B.pos - p0).max() < 5e-3
    assert np.abs(w.B.pos - plain.B.pos).max() < 1e-3
