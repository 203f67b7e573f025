"""Fuzz of the scene loader plus a few steps (issue 17.1): mutated bundled scenes, each in its
own forked process, must never kill the process with a signal; a world that loads steps with
every body finite (the guard stops the ones that are not, and says so)."""
import copy
import json
import os
import signal

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from impulse.engine.scene import SceneError, scene_to_world, world_to_scene
from tests.conftest import SCENES

pytestmark = pytest.mark.slow   # 400 forked examples, ~17 s (test lanes)

SMALL = ["pendulum", "double_pendulum", "mass_spring", "rail", "tumbling_box", "rod_table",
         "four_balls", "bouncing_balls", "spinning_top", "rolling_bodies", "slider_crank",
         "universal_shaft", "motors", "box_stack", "newtons_cradle", "hinge_chain"]
DOCS = {n: json.load(open(os.path.join(SCENES, n + ".json"))) for n in SMALL}


def _saved(name, steps):
    """A scene as saved mid-run: with its exact `state` block (engine/resume.py)."""
    world = scene_to_world(copy.deepcopy(DOCS[name]))
    world.run(steps)
    return json.loads(json.dumps(world_to_scene(world, exact_state=True)))


for _name in ("box_stack", "newtons_cradle", "mass_spring"):
    DOCS[_name + "_saved"] = _saved(_name, 5)
SMALL = list(DOCS)

EXTREME = [0, -1, 1, 1e-300, 1e-20, 1e-7, 1e6, 1e20, 1e200, 1e300, -1e300, 4.0, 2 ** 70,
           10 ** 40, 0.5, -0.5, True, None, "x", [], {}, [0, 0, 0], [1e300, 0, 0],
           [0, 0, 0, 0], [1, 1, 100], float("nan"), float("inf"),
           # at the schema's bounds: loadable, and hard on the step
           1e-6, 1e-4, 1e-12, 1e4, 1e9, -1e6, 10.0, [1e4, 1e4, 1e4], [1e-4, 1e-4, 1e-4]]
FACTORS = [0.0, -1.0, 1e-6, 1e-3, 1e3, 1e6, 1e9]


def leaves(doc, path=()):
    """Paths of every value (numbers, strings, lists, dicts) in a document."""
    yield path
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from leaves(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from leaves(v, path + (i,))


def get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def put(doc, path, value):
    node = doc
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value


def load_and_step(doc):
    """What the child process does; returns its exit status (0 fine, 1 a dishonest state)."""
    try:
        world = scene_to_world(doc, "fuzz.json")
    except SceneError:
        return 0
    for _ in range(4):
        world.step()
    B = world.B
    finite = all(np.isfinite(a).all() for a in (B.pos, B.rot, B.vel, B.omega))
    return 0 if finite else 1


def in_fork(fn, *args):
    """Run fn(*args) in a forked child; (signal number or 0, exit status, exception text)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:   # child: never return into pytest
        code = 2
        try:
            code = fn(*args)
        except BaseException as e:
            os.write(write, f"{type(e).__name__}: {e}"[:2000].encode())
            code = 3
        finally:
            os._exit(code)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as f:
        text = f.read().decode(errors="replace")
    if os.WIFSIGNALED(status):
        return os.WTERMSIG(status), None, text
    return 0, os.WEXITSTATUS(status), text


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """Compile the kernels in the parent so that the forked children only run them."""
    for doc in DOCS.values():
        w = scene_to_world(copy.deepcopy(doc))
        w.step()


@st.composite
def mutated(draw):
    name = draw(st.sampled_from(SMALL))
    doc = copy.deepcopy(DOCS[name])
    paths = [p for p in leaves(doc) if p]
    for _ in range(draw(st.integers(1, 3))):
        numbers = [p for p in paths if type(get(doc, p)) in (int, float)]
        if numbers and draw(st.booleans()):   # scale a number: mostly still loadable
            path = draw(st.sampled_from(numbers))
            put(doc, path, get(doc, path) * draw(st.sampled_from(FACTORS)))
        else:
            path = draw(st.sampled_from(paths))
            put(doc, path, copy.deepcopy(draw(st.sampled_from(EXTREME))))
        paths = [p for p in leaves(doc) if p]
    return name, doc


@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(mutated())
def test_mutated_scenes_never_kill_the_process(case):
    name, doc = case
    sig, code, text = in_fork(load_and_step, doc)
    assert sig == 0, f"{name}: killed by {signal.Signals(sig).name}"
    assert code == 0, f"{name}: child exit {code} (3: an exception, 1: a non-finite body) {text}"


def test_a_division_by_zero_in_the_step_stops_the_body_instead_of_raising():
    """Found by the test above: the Cardan shaft with its input bearing 300 km away flung the
    input shaft; a kernel divided by zero and ZeroDivisionError left the step half done.
    Kernels divide as numpy does (engine/jitopts.numpy_division), so such a step leaves a
    non-finite body that the guard stops and reports. Since a joint's locks are solved
    together (issue 22) this shaft no longer divides by zero: it turns on, finite, at its
    3 rad/s. Either way: no exception, a finite state, and a stopped body is reported."""
    from impulse.engine import step as step_kernels
    doc = copy.deepcopy(DOCS["universal_shaft"])
    doc["bodies"][0]["shape"]["orientation"] = [0, -0.0, -0.0, -0.7071067811865475]
    doc["bodies"][1]["shape"]["orientation"] = [0.8660254037844386, -0.0, -0.0, -0.5]
    doc["joints"][0]["anchor"] = [-300000.0, 1, 0]
    w = scene_to_world(doc)
    for _ in range(4):
        w.step()
    B = w.B
    assert all(np.isfinite(a).all() for a in (B.pos, B.rot, B.vel, B.omega))
    stopped = {w.body_names[i] for i, s in enumerate(w.body_static) if s and not w.models[i].static}
    assert stopped == {p.body for p in w.problems}     # stopped exactly where it says so
    assert step_kernels.step.targetoptions.get("error_model") == "numpy"
