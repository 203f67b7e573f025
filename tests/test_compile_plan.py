"""The parallel kernel compile (engine/compile_plan.py) on a toy package of kernels: the plan
records each compile callees first, with its types and files; the workers compile every
entry, each in a process of its own, so that the main process then loads them all; a
changed file, another numba or a broken plan leave entries out, never fail."""
import json
import lzma
import os
import pickle
import subprocess
import sys
import textwrap

import pytest

from impulse.engine import compile_plan

TOY = '''
import numpy as np
from numba import njit

@njit(cache=True)
def leaf(x):
    return x * 2.0

@njit(cache=True)
def other_leaf(a):
    return a.sum()

@njit(cache=True, inline='always')
def inlined(x):
    return other_leaf(np.full(3, x))

@njit(cache=True)
def mid(x):
    return leaf(x) + 1.0

@njit(cache=True)
def top(x):
    return mid(x) + inlined(x)
'''

RECORD = '''
import sys
from impulse.engine import compile_plan
from toykern import k
with compile_plan.Recorder("toykern", sys.argv[1]) as r:
    r.feature = "step"
    assert k.top(1.5) == 8.5
r.write(sys.argv[2])
'''

COMPILE = '''
import json, os, sys
from impulse.engine import compile_plan
items = compile_plan.load(sys.argv[2], sys.argv[1])
compiled, features = [], []
failed = compile_plan.run(items, 2, on_kernel=compiled.append, on_feature=features.append,
                          features_order=("step",))
with compile_plan.Recorder("toykern", sys.argv[1]) as main_process:
    from toykern import k
    assert k.top(1.5) == 8.5
print(json.dumps({"items": len(items), "compiled": compiled, "features": features,
                  "failed": failed, "main": [q for _, q, *_ in main_process.items]}))
'''


def _python(code, *args, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join(
        [str(cache.parent), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.fixture
def toy(tmp_path):
    pkg = tmp_path / "toykern"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "k.py").write_text(textwrap.dedent(TOY))
    return tmp_path


def _record(toy):
    plan = toy / "plan.pkl"
    _python(RECORD, toy / "toykern", plan, cache=toy / "cache_record")
    return plan


def test_the_plan_lists_each_compile_callees_first_with_its_files(toy):
    plan = _record(toy)
    data = compile_plan.read(plan)
    names = [it[1] for it in data["items"]]
    # the inlined kernel is not compiled on its own; its callee is, before the caller
    assert names == ["leaf", "mid", "other_leaf", "top"], names
    assert all(it[2] == "step" for it in data["items"])
    assert all(set(it[4]) == {"k.py"} for it in data["items"])
    items = compile_plan.load(plan, toy / "toykern")
    assert [q for _, q, _, _ in items] == names
    assert str(items[0][3][0]) == "float64"


def test_dependencies_follow_the_code_through_inlined_kernels(toy):
    code = ("from impulse.engine import compile_plan\nfrom toykern import k\n"
            "deps = compile_plan.dependencies([k.leaf, k.mid, k.other_leaf, k.top])\n"
            "print([sorted(d) for d in deps])")
    # (in a process of its own: importing the toy kernels here would give them a folder
    # in this process's kernel cache)
    out = _python(code, cache=toy / "cache_deps")
    assert out.split("\n")[-2] == "[[], [0], [], [1, 2]]"


def test_workers_compile_every_entry_and_the_main_process_only_loads(toy):
    plan = _record(toy)
    out = json.loads(_python(COMPILE, toy / "toykern", plan, cache=toy / "cache_run")
                     .splitlines()[-1])
    assert out["items"] == 4
    assert sorted(out["compiled"]) == sorted(f"toykern.k.{q}" for q in
                                             ("leaf", "mid", "other_leaf", "top"))
    assert out["features"] == ["step"]
    assert out["failed"] == []
    assert out["main"] == []           # nothing left to compile in the main process


def test_a_changed_file_another_numba_or_a_broken_plan_leave_entries_out(toy, tmp_path):
    plan = _record(toy)
    root = toy / "toykern"
    assert len(compile_plan.load(plan, root)) == 4
    data = compile_plan.read(plan)
    other = tmp_path / "other.pkl"
    other.write_bytes(lzma.compress(pickle.dumps(dict(data, numba="0.1.0"))))
    assert compile_plan.load(other, root) == []
    other.write_bytes(plan.read_bytes()[:50])
    assert compile_plan.load(other, root) == []
    assert compile_plan.load(tmp_path / "missing.pkl", root) == []
    (root / "k.py").write_text((root / "k.py").read_text() + "\n# edited\n")
    assert compile_plan.load(plan, root) == []


def test_a_stale_entry_is_reported_not_raised(toy):
    plan = _record(toy)
    data = compile_plan.read(plan)
    module, qualname, feature, blob, files = data["items"][0]
    data["items"][0] = (module, "gone", feature, blob, files)     # renamed since
    plan.write_bytes(lzma.compress(pickle.dumps(data)))
    code = COMPILE.replace('assert k.top(1.5) == 8.5', 'k.top(1.5)')
    out = _python(code.replace("compile_plan.run(items", "compile_plan.run(items[:1]"),
                  toy / "toykern", plan, cache=toy / "cache_stale")
    result = json.loads(out.splitlines()[-1])
    assert result["compiled"] == []
    assert result["failed"][0][0] == "toykern.k.gone"
    assert "AttributeError" in result["failed"][0][1]


@pytest.mark.parametrize("cores, jobs", [(1, 1), (2, 2), (6, 6), (64, 8)])
def test_default_jobs_is_the_cores_this_process_may_use_at_most_eight(cores, jobs,
                                                                      monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    assert compile_plan.default_jobs() == jobs


def test_the_engine_plan_is_shipped_and_loads():
    """The checked-in plan (written with the manifest) names engine kernels; most entries
    match the sources (it is rewritten whenever the kernels change)."""
    data = compile_plan.read()
    assert len(data["items"]) > 150
    assert {it[2] for it in data["items"]} <= {"step", "interaction", "contacts"}


def test_planned_jobs_are_the_requested_or_the_cores_and_one_without_a_plan(monkeypatch):
    monkeypatch.setattr(compile_plan, "default_jobs", lambda: 6)
    monkeypatch.setattr(compile_plan, "fits_numba", lambda: True)
    assert compile_plan.planned_jobs() == 6 and compile_plan.planned_jobs(3) == 3
    monkeypatch.setattr(compile_plan, "fits_numba", lambda: False)
    assert compile_plan.planned_jobs() == 1 and compile_plan.planned_jobs(3) == 1


TOY_STRUCT = '''
import numpy as np
from numba import njit, types
from numba.experimental import structref

@structref.register
class HeldType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((n, types.unliteral(t)) for n, t in fields)

class Held(structref.StructRefProxy):
    pass

structref.define_proxy(Held, HeldType, ["x"])

@njit(cache=True)
def hold(x):
    return Held(x)

@njit(cache=True)
def use(h):
    return h.x.sum()
'''

RECORD_STRUCT = '''
import sys
import numpy as np
from impulse.engine import compile_plan
from toykern import s
with compile_plan.Recorder("toykern", sys.argv[1]) as r:
    r.feature = "step"
    assert s.use(s.hold(np.ones(3))) == 3.0
r.write(sys.argv[2])
'''


def test_a_structref_built_in_a_kernel_is_recorded_without_numbas_own_constructor(toy):
    """A StructRef made inside a kernel compiles numba's generated constructor (a function
    of no module: engine/contact_step.py FixedArgs); the plan leaves it out."""
    (toy / "toykern" / "s.py").write_text(textwrap.dedent(TOY_STRUCT))
    plan = toy / "plan.pkl"
    _python(RECORD_STRUCT, toy / "toykern", plan, cache=toy / "cache_struct")
    names = [it[1] for it in compile_plan.read(plan)["items"]]
    assert names == ["hold", "use"], names
