"""Golden determinism digests (issue 20): for every bundled scene, a hash of the bodies'
state after a fixed number of steps, kept in tests/golden_digests.json. A refactor that
changes any result changes a digest and fails here.

The digest hashes every position, rotation, velocity and angular velocity written with 10
significant digits: a result that changes is seen, while a last-bit difference of the C
library's sin/cos between CPUs (glibc picks an FMA variant where the CPU has one) is not.

Updating on purpose, with the reason recorded in the file:
    IMPULSE_GOLDEN_REASON="why the results change" python -m pytest tests/test_golden_digests.py
"""
import hashlib
import json
import os

import pytest

from impulse.engine.scene import load_scene
from tests.conftest import SCENES, slow_only

GOLDEN = os.path.join(os.path.dirname(__file__), "golden_digests.json")
ALL = sorted(f[:-5] for f in os.listdir(SCENES) if f.endswith(".json"))
STEPS = 30
FEWER = {"funnel_1000": 8, "wall_car": 10, "tree_255": 10}
HEAVY = ("funnel_1000", "wall_car", "tree_255", "tree_127", "pyramid", "chain_drape")


def digest(name):
    world = load_scene(os.path.join(SCENES, name + ".json"))
    world.run(FEWER.get(name, STEPS))
    h = hashlib.sha256()
    B = world.B
    for arr in (B.pos, B.rot, B.vel, B.omega):
        h.update(" ".join(f"{x:.10g}" for x in arr.reshape(-1)).encode())
        h.update(b"|")
    return h.hexdigest()[:24]


def _golden():
    with open(GOLDEN) as f:
        return json.load(f)


@pytest.mark.parametrize("name", slow_only(ALL, *HEAVY))
def test_state_after_n_steps_matches_its_golden_digest(name):
    now = digest(name)
    reason = os.environ.get("IMPULSE_GOLDEN_REASON")
    if reason:
        golden = _golden() if os.path.exists(GOLDEN) else {"digests": {}, "updates": []}
        if golden["digests"].get(name) != now:
            golden["digests"][name] = now
            if not golden["updates"] or golden["updates"][-1] != reason:
                golden["updates"].append(reason)
            with open(GOLDEN, "w") as f:
                json.dump(golden, f, indent=1, sort_keys=True)
                f.write("\n")
        return
    golden = _golden()["digests"]
    assert name in golden, f"{name}: no golden digest (a new scene: update with a reason)"
    assert now == golden[name], (
        f"{name}: the state after {FEWER.get(name, STEPS)} steps changed (digest {now}, "
        f"golden {golden[name]}). If that is on purpose, update with IMPULSE_GOLDEN_REASON.")


def test_every_bundled_scene_has_a_digest_and_no_stale_ones():
    assert sorted(_golden()["digests"]) == ALL
