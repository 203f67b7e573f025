"""The order the contact loops visit rows in (contacts/solve.py order_by_layer): by descending
layer of the step's contact graph, rows on jointed bodies first, ties in row order - what a
stable argsort of -layer gives, without allocating in the step."""
import numpy as np
import pytest
from numba import njit

from impulse.engine import state as S
from impulse.engine.contacts import solve as contacts
from impulse.engine.scene import load_scene
from tests.conftest import SCENES


@njit
def _order(C, top):
    contacts.order_by_layer(C, top)


@njit
def _layers_and_order(B, J, C):
    top = contacts.layers(B, J, C)
    contacts.order_by_layer(C, top)
    return top


def test_random_layers_sort_as_a_stable_argsort():
    rng = np.random.default_rng(7)
    for _ in range(300):
        top = int(rng.integers(1, 12))
        extra = int(rng.integers(0, 30))
        # every layer 1..top has a row (layers() guarantees it), plus rows of any layer,
        # rows of layer 0 and rows on jointed bodies (UNREACHED)
        layer = np.concatenate([np.arange(1, top + 1), rng.integers(1, top + 1, extra),
                                np.zeros(int(rng.integers(0, 3)), np.int64),
                                np.full(int(rng.integers(0, 3)), contacts.UNREACHED)])
        layer = rng.permutation(layer).astype(np.int64)
        C = S.empty_contacts(len(layer), 4)
        C.layer[:] = layer
        C.order[:] = -1
        _order(C, top)
        np.testing.assert_array_equal(C.order, np.argsort(-layer, kind="mergesort"))


@pytest.mark.parametrize("name", ["pyramid", "tall_tower", "chain_drape", "wall_car"])
def test_the_scenes_rows_sort_as_a_stable_argsort(name):
    w = load_scene(f"{SCENES}/{name}.json")
    for _ in range(20):
        w.step()
    C, _ = w.collision.detect(w.settings.h)
    top = _layers_and_order(w.B, w.J, C)
    assert C.body.shape[0] > top    # (chain_drape: every body on a joint, top 0)
    np.testing.assert_array_equal(C.order, np.argsort(-C.layer, kind="mergesort"))
