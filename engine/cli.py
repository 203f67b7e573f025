"""`impulse sim` (headless run of a scene) and `impulse bench` (benchmarks).

Exit status: 0 ok; 2 bad scene file or arguments (one line on stderr, no traceback);
1 any other failure (one line on stderr).
"""
import argparse
import csv
import json
import os
import sys

import numpy as np

from .rotations import matrix_to_quat


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"impulse {self.prog.split()[-1]}: {message}", file=sys.stderr)
        sys.exit(2)


def _positive(kind):
    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not np.isfinite(v) or v <= 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be a positive number")
        return v
    return parse


def sim_parser():
    p = _Parser(prog="impulse sim", description="Run a scene headless and report its metrics.")
    p.add_argument("scene", help="scene file (.json)")
    p.add_argument("--duration", type=_positive(float), default=10.0, help="seconds (default 10)")
    p.add_argument("--h", type=_positive(float), help="time step [s] (default: the scene's)")
    p.add_argument("--solver", choices=["iterative", "linear", "tree"], help="joint solver")
    p.add_argument("--eps-pos", type=_positive(float), help="position tolerance Dmax [m]")
    p.add_argument("--eps-vel", type=_positive(float), help="velocity tolerance Vmax [m/s]")
    p.add_argument("--set", type=_setting, action="append", default=[], metavar="KEY=VALUE",
                   help="override a setting of the scene's `settings` (repeatable); VALUE is "
                        "JSON where it parses, else a string: --set gravity=[0,0,0]")
    p.add_argument("--trajectory", metavar="OUT.csv", help="write the motion of every dynamic body")
    p.add_argument("--every", type=_positive(int), default=1, help="trajectory: every N-th step")
    p.add_argument("--contact-columns", action="store_true",
                   help="trajectory: add the contact figures of the step that led to each row")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _setting(text):
    """--set KEY=VALUE -> (option text, key, value); VALUE as JSON where it parses."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    try:
        value = json.loads(value)
    except ValueError:
        pass
    return f"--set {text}", key, value


def _overrides(args):
    """The run's setting overrides as (option text, key, value): the named flags, then --set."""
    named = [(f"--{key.replace('_', '-')} {getattr(args, key)}", key, getattr(args, key))
             for key in ("h", "solver", "eps_pos", "eps_vel") if getattr(args, key) is not None]
    return named + args.set


def load_with_settings(path, overrides):
    """Load a scene file with entries of its `settings` replaced. The file is validated as
    it is, then after each override, so a problem names the file or the option at fault."""
    from .scene import read_document, scene_to_world, validate
    doc = read_document(path)
    validate(doc, path)
    for option, key, value in overrides:
        doc.setdefault("settings", {})[key] = value
        validate(doc, f"impulse sim: {option}")
    world = scene_to_world(doc, path)
    world.meta["path"] = path
    return world


def run_sim(args):
    from .metrics import run_summary
    if args.contact_columns and not args.trajectory:
        print("impulse sim: --contact-columns needs --trajectory", file=sys.stderr)
        return 2
    world = load_with_settings(args.scene, _overrides(args))
    steps = max(1, int(round(args.duration / world.settings.h)))
    e0 = sum(world.energy())
    if args.trajectory:
        _check_writable(args.trajectory)
    result = world.run(steps, record_every=args.every if args.trajectory else 0)
    summary = run_summary(world, result, os.path.basename(args.scene), e0)
    if args.trajectory:
        write_trajectory(world, result, args.trajectory, args.every, args.contact_columns)
    if args.json:
        print(json.dumps(summary))
    else:
        for k, v in summary.items():
            print(f"{k:>26}: {json.dumps(v) if isinstance(v, dict) else v}")
    return 0


def _check_writable(path):
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise OSError(f"cannot write {path}: folder {folder} is missing or read-only")


def write_trajectory(world, result, path, every=1, with_contacts=False):
    """CSV: t,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz (scene-frame pose of each body), one
    row per body every `every` steps; with_contacts adds metrics.contact_columns of the step
    that ended at t (empty at the start)."""
    from .metrics import contact_columns
    columns = contact_columns(result.stats) if with_contacts else {}
    dynamic = [b for b, m in enumerate(world.models) if not m.static]
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow("t body x y z qw qx qy qz vx vy vz wx wy wz".split() + list(columns))
        for r, t in enumerate(result.times):
            contact = [f"{col[r * every - 1]:.12g}" if r else "" for col in columns.values()]
            for b in dynamic:
                m = world.models[b]
                rot = result.rot[r, b] @ m.frame.T
                pos = result.pos[r, b] - rot @ m.com
                om = result.omega[r, b]
                vel = result.vel[r, b] - np.cross(om, result.pos[r, b] - pos)
                w.writerow([f"{t:.10g}", m.name, *(f"{x:.12g}" for x in pos),
                            *(f"{x:.12g}" for x in matrix_to_quat(rot)),
                            *(f"{x:.12g}" for x in vel), *(f"{x:.12g}" for x in om),
                            *contact])
    os.replace(tmp, path)


def bench_parser():
    from .benchmarks import BENCHMARKS
    p = _Parser(prog="impulse bench", description="Run benchmarks; print a table, write JSON.")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help=f"benchmarks to run (default all): {', '.join(BENCHMARKS)}")
    p.add_argument("--json", metavar="OUT.json", help="write the rows as JSON")
    p.add_argument("--scenes", metavar="A,B",
                   help="contacts: only these scenes (file names without .json)")
    return p


def run_bench(args):
    from .benchmarks import BENCHMARKS, format_table
    names = args.names or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"impulse bench: unknown benchmark {unknown[0]!r} (known: {', '.join(BENCHMARKS)})",
              file=sys.stderr)
        return 2
    rows = []
    for n in names:
        try:
            rows.extend(BENCHMARKS[n](scenes=args.scenes) if n == "contacts" and args.scenes
                        else BENCHMARKS[n]())
        except ValueError as e:      # an unknown scene name
            print(f"impulse bench: --scenes: {e}", file=sys.stderr)
            return 2
    print(format_table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows}, f, indent=2, default=float)
    return 0


def main(argv=None):
    """Entry for `impulse sim ...` / `impulse bench ...` (argv without the program name)."""
    from .scene import SceneError
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("sim", "bench"):
        print("usage: impulse {sim,bench} ...", file=sys.stderr)
        return 2
    try:
        if argv[0] == "sim":
            return run_sim(sim_parser().parse_args(argv[1:]))
        return run_bench(bench_parser().parse_args(argv[1:]))
    except SceneError as e:
        print(str(e), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("impulse: interrupted", file=sys.stderr)
        return 1
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        sys.stderr = open(os.devnull, "w")
        return 0
    except Exception as e:  # one line, never a traceback
        print(f"impulse {argv[0]}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
