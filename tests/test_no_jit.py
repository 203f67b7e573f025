"""The physics steps as plain Python under NUMBA_DISABLE_JIT=1 (issue 19), so it can be
stepped in a debugger, and gives the compiled kernels' answer."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from impulse.engine import load_scene

pytestmark = pytest.mark.slow
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = {"pendulum": 20, "chain8": 5, "box_stack": 3, "slider_crank": 5}
PROBE = """
import json, sys
from impulse.engine import load_scene
out = {}
for name, n in json.loads(sys.argv[1]).items():
    w = load_scene(f"{sys.argv[2]}/scenes/{name}.json")
    for _ in range(n):
        w.step()
    out[name] = [w.B.pos.tolist(), w.B.vel.tolist(), w.B.omega.tolist()]
print(json.dumps(out))
"""


def test_plain_python_steps_match_the_compiled_kernels():
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    res = subprocess.run([sys.executable, "-c", PROBE, json.dumps(CASES), ROOT], env=env,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    plain = json.loads(res.stdout)
    for name, n in CASES.items():
        w = load_scene(os.path.join(ROOT, "scenes", f"{name}.json"))
        for _ in range(n):
            w.step()
        for got, want in zip(plain[name], (w.B.pos, w.B.vel, w.B.omega), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9, err_msg=name)
        # the scene moved, or (the box stack, resting from its first step) carried its load
        assert np.abs(w.B.vel).max() > 1e-4 or w.collision.C.acc_n.sum() > 0.0, name
