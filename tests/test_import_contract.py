"""Architecture and lint checks run as tests: pyproject's import-linter contract (the engine
never imports the viewer or its windowing, GL, GUI and VR packages) and `ruff check` with
pyproject's rules. Both tools are in the `test` extra; a missing one fails, it does not skip."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = ("from importlinter.cli import lint_imports; "
                "raise SystemExit(lint_imports(no_cache=True, no_logo=True))")


def package_tree(dest):
    """The checkout's engine and app as dest/impulse/{engine,app} (a namespace package, as
    installed), with its pyproject: import-linter reads packages from folders, and the
    editable install's finder is not one."""
    for name in ("engine", "app"):
        shutil.copytree(REPO / name, dest / "impulse" / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", dest)
    return dest


def lint_imports(root):
    """lint-imports on the tree at `root`, without site's .pth files (so the editable
    install cannot put the checkout in place of the tree)."""
    import site
    path = os.pathsep.join([str(root), *site.getsitepackages()])
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run([sys.executable, "-S", "-c", LINT_IMPORTS], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_engine_imports_neither_the_app_nor_its_gui_packages(tmp_path):
    res = lint_imports(package_tree(tmp_path))
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "1 kept, 0 broken" in res.stdout, res.stdout[-4000:]


def test_the_contract_catches_an_engine_module_importing_the_viewer(tmp_path):
    """The same contract on a copy whose engine imports pyglet and the app: broken, naming
    both imports (the contract is not vacuous, e.g. a package left out of the graph)."""
    package_tree(tmp_path)
    with open(tmp_path / "impulse" / "engine" / "clock.py", "a", encoding="utf-8") as f:
        f.write("\nimport pyglet.window  # noqa: E402\n"
                "from impulse.app import mathutil  # noqa: E402\n")
    res = lint_imports(tmp_path)
    assert res.returncode != 0, res.stdout[-4000:]
    assert "impulse.engine is not allowed to import pyglet" in res.stdout, res.stdout[-4000:]
    assert "impulse.engine.clock -> impulse.app.mathutil" in res.stdout, res.stdout[-4000:]


def test_ruff_finds_nothing():
    """`ruff check app engine tests` with pyproject's [tool.ruff] (not a user-level config)."""
    res = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache",
                          "--config", str(REPO / "pyproject.toml"), "app", "engine", "tests"],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-2000:]
