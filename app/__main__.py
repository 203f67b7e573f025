"""`impulse` / `python -m app`: the command-line entry.

`impulse sim ...` and `impulse bench ...` run headless (engine/cli.py). Until the viewer
lands, `impulse` with no arguments simulates scenes/pendulum.json headless and prints its
summary.
"""
import os
import sys

DEFAULT_SCENE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "scenes", "pendulum.json")


def main(argv=None):
    from engine import cli
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        argv = ["sim", DEFAULT_SCENE, "--duration", "10"]
    sys.exit(cli.main(argv))


if __name__ == "__main__":
    main()
