"""The kernels' settings array (Settings.to_array) is built once and copied: it must follow
every change of a field, the gravity list changed in place, and an old name's setter."""
from dataclasses import fields

import numpy as np
import pytest

from impulse.engine import state as S
from impulse.engine.settings import Settings

OTHER = {"solver": "tree", "spring_mode": "iterated", "restitution_law": "poisson",
         "gravity": [1.0, -3.0, 0.5]}


def another(f, value):
    if f.name in OTHER:
        return OTHER[f.name]
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 3
    return value * 0.5 + 0.125


@pytest.mark.parametrize("name", [f.name for f in fields(Settings)])
def test_the_array_follows_a_changed_field(name):
    f = next(f for f in fields(Settings) if f.name == name)
    s = Settings()
    before = s.to_array(0.01, 2.0, 0.5)
    value = another(f, getattr(s, name))
    setattr(s, name, value)
    after = s.to_array(0.01, 2.0, 0.5)
    assert np.array_equal(after, Settings(**{name: value}).to_array(0.01, 2.0, 0.5))
    assert after is not before
    after[S.S_H] = -1.0                      # each call hands out its own array
    assert s.to_array(0.01, 2.0, 0.5)[S.S_H] == s.h


def test_the_array_follows_the_gravity_changed_in_place_and_the_call_arguments():
    s = Settings()
    s.to_array(0.0)
    s.gravity[1] = -1.62
    a = s.to_array(0.02, 3.5, 0.75)
    assert a[S.S_GX + 1] == -1.62
    assert (a[S.S_H_PREV], a[S.S_TIME], a[S.S_RELAX_PREV]) == (0.02, 3.5, 0.75)
    s.gravity = np.array([0.0, -2.0, 0.0])
    assert s.to_array(0.0)[S.S_GX + 1] == -2.0


def test_an_old_names_setter_reaches_the_array():
    s = Settings()
    s.to_array(0.0)
    with pytest.warns(DeprecationWarning):
        s.max_iterations = 77
    assert s.to_array(0.0)[S.S_MAX_CYCLES] == 77
