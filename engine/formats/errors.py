"""One-line errors of the importers, and their optional dependencies.

ModelError is a SceneError, so every place that reports a bad scene file (impulse view, sim,
convert, the launcher) reports a bad model file the same way: one line naming the file and,
where known, the element; exit status 2; no traceback.
"""
import importlib

from ..scene import SceneError

EXTRA_HINT = "pip install 'impulse[import]'"


class ModelError(SceneError):
    """A URDF/MJCF file that cannot be imported: "FILE: message" (the message names the
    element where the reader says which)."""

    def __init__(self, source, message):
        self.source = str(source)
        self.problems = [("", message)]
        ValueError.__init__(self, f"{source}: {message}")

    def lines(self):
        return [str(self)]


class MissingDependency(ModelError):
    """An optional package of the `import` extra is not installed."""

    def __init__(self, source, package):
        super().__init__(source, f"importing URDF/MJCF needs the Python package {package!r} "
                                 f"(the 'import' extra: {EXTRA_HINT})")


def need(package, source="impulse"):
    """The module `package`, or MissingDependency naming the extra that brings it."""
    try:
        return importlib.import_module(package)
    except ImportError:
        raise MissingDependency(source, package) from None
