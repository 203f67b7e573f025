"""`impulse sim` (headless run of a scene), `impulse bench` (benchmarks) and `impulse convert`
(a URDF or MJCF model -> a scene file, engine/formats/).

Exit status (one line on stderr for each failure, never a traceback): 0 ok; 1 any other
failure; 2 bad scene file, arguments or output path; 3 (sim) a body's state went non-finite
or ran away and the guard stopped it; 4 (sim) the run ended with tolerances unmet in some
steps (a joint gap above eps_pos, a velocity error above eps_vel, a loop stopped on its cap).
"""
import argparse
import contextlib
import csv
import json
import logging
import os
import sys

import numpy as np

from . import state as S
from . import strict_json
from .durable import open_for_write, write_file
from .scene_entries import scene_pose

log = logging.getLogger(__name__)


class OneLineParser(argparse.ArgumentParser):
    """argparse with its errors as one line ("impulse sim: ...") and exit status 2; the
    description and epilog (examples) keep their line breaks."""
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)


def positive(kind, zero=False):
    """An argparse type: a finite number of `kind` above 0 (with `zero`: 0 or more)."""
    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not np.isfinite(v) or v < 0 or (v == 0 and not zero):
            raise argparse.ArgumentTypeError(
                f"{text!r} must be {'0 or more' if zero else 'a positive number'}")
        return v
    return parse


SIM_EPILOG = """\
examples:
  impulse sim chain8 --json          a bundled scene by name (impulse scenes)
  impulse sim scenes/double_pendulum.json --h 0.005 --trajectory out.csv
  impulse sim box_stack --set shock_passes=0 --set gravity=[0,-1.62,0]

exit status:
  0  the run finished with every step within its tolerances
  1  another failure (one line on stderr; please report it)
  2  a bad scene file or name, option, override or output path (one line)
  3  a body went non-finite or ran away: the engine's guard stopped it
  4  the run ended with tolerances unmet in some steps"""


def sim_parser(p=None):
    """The `impulse sim` parser; `p`: a parser to fill (a subcommand's), else a new one."""
    from .scenes_list import scene_argument
    if p is None:
        p = OneLineParser(prog="impulse sim")
    p.description = "Run a scene headless and report its metrics."
    p.epilog = SIM_EPILOG
    p.add_argument("scene", type=scene_argument,
                   help="scene file (.json), or the name of a bundled scene (impulse scenes)")
    p.add_argument("--duration", type=positive(float), default=10.0, help="seconds (default 10)")
    p.add_argument("--h", type=positive(float), help="time step [s] (default: the scene's)")
    p.add_argument("--solver", choices=["iterative", "linear", "tree"], help="joint solver")
    p.add_argument("--eps-pos", type=positive(float), help="position tolerance Dmax [m]")
    p.add_argument("--eps-vel", type=positive(float), help="velocity tolerance Vmax [m/s]")
    p.add_argument("--extrapolate", action="store_true",
                   help="Schmitt sec. 8: each step from one step of h and two of h/2, "
                        "extrapolated (third order; three steps' work)")
    p.add_argument("--set", type=_setting, action="append", default=[], metavar="KEY=VALUE",
                   help="override a setting of the scene's `settings` (repeatable); VALUE is "
                        "JSON where it parses, else a string: --set gravity=[0,0,0]")
    p.add_argument("--trajectory", metavar="OUT.csv", help="write the motion of every dynamic body")
    p.add_argument("--every", type=positive(int), default=1, help="trajectory: every N-th step")
    p.add_argument("--contact-columns", action="store_true",
                   help="trajectory: add the contact figures of the step that led to each row")
    p.add_argument("--threads", type=positive(int), metavar="N",
                   help="threads for the islands a step solves apart (default: every core, "
                        "or IMPULSE_THREADS; the run is the same for any N)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--save-state", metavar="OUT.json",
                   help="at the end, write the world as a scene file with its exact state: "
                        "loading it continues the run bit for bit")
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
    if args.extrapolate:
        named.append(("--extrapolate", "extrapolate", True))
    return named + args.set


def load_with_settings(path, overrides):
    """Load a scene file with entries of its `settings` replaced. The file is validated as
    it is, then after each override, so a problem names the file or the option at fault."""
    from .scene import read_document, scene_to_world, validate
    from .settings import current_name
    doc = read_document(path)
    validate(doc, path)
    for option, key, value in overrides:
        doc.setdefault("settings", {})[current_name(key, option)] = value
        validate(doc, f"impulse sim: {option}")
    world = scene_to_world(doc, path)
    world.meta["path"] = path
    if "visuals" in doc:
        from .visual_meshes import load_visuals
        load_visuals(world, doc["visuals"], path)
    return world


CHUNK_STEPS = 20_000   # a run is taken in parts of about this many steps: bounded memory

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_NON_FINITE, EXIT_UNMET = 0, 1, 2, 3, 4


def run_sim(args):
    """Run the scene; exit status EXIT_* (README: 3 a body went non-finite and was stopped,
    4 the run ended with tolerances unmet in some steps)."""
    from .durable import check_writable
    if args.contact_columns and not args.trajectory:
        print("impulse sim: --contact-columns needs --trajectory", file=sys.stderr)
        return EXIT_BAD_INPUT
    world = load_with_settings(args.scene, _overrides(args))
    if args.threads is not None:
        world.threads = args.threads
    steps = max(1, int(round(args.duration / world.settings.h)))
    for path in (args.trajectory, args.save_state):
        if path:
            check_writable(path)
    with (open_for_write(args.trajectory, newline="") if args.trajectory
          else contextlib.nullcontext()) as out:
        if out is None:
            tally = run_world(world, steps)
        else:
            trajectory = TrajectoryWriter(world, out, args.every, args.contact_columns)
            tally = run_world(world, steps, args.every,
                              lambda result, done: trajectory.write(result, first=done == 0))
    summary = tally.summary(world, os.path.basename(args.scene))
    if args.save_state:
        from .scene import save_scene
        save_scene(world, args.save_state)
    if args.json:
        print(strict_json.dumps(summary))
    else:
        for k, v in summary.items():
            print(f"{k:>26}: {strict_json.dumps(v) if isinstance(v, (dict, list)) else v}")
    return _verdict(world, summary)


def run_world(world, steps, every=0, on_part=None):
    """The run loop of `impulse sim` and of each `impulse sweep` run: world.run in parts of
    at most CHUNK_STEPS steps (a multiple of `every` where states are recorded), each part
    tallied and handed to on_part(result, steps done before it) before it is freed (bounded
    memory). Returns the RunTally."""
    from .metrics import RunTally
    tally = RunTally(sum(world.energy()))
    chunk = max(1, CHUNK_STEPS // every) * every if every else CHUNK_STEPS
    done = 0
    while done < steps:
        n = min(chunk, steps - done)
        result = world.run(n, record_every=every)
        tally.add(result, world.settings.eps_pos, world.settings.eps_vel)
        if on_part is not None:
            on_part(result, done)
        del result            # before the next part is allocated
        done += n
    return tally


def problems_line(world):
    """The first stopped body's line, and how many more there are."""
    more = len(world.problems) - 1
    return world.problems[0].line() + (
        f" (and {more} more bod{'ies' if more > 1 else 'y'})" if more else "")


def _verdict(world, summary):
    """One line on stderr and the exit status for a finished run."""
    if world.problems:
        print(f"impulse sim: {problems_line(world)}", file=sys.stderr)
        return EXIT_NON_FINITE
    if summary["tolerance_unmet_steps"]:
        print(f"impulse sim: tolerances unmet in {summary['tolerance_unmet_steps']} of "
              f"{summary['steps']} steps (first: step {summary['first_unmet_step']}; max "
              f"joint gap {summary['max_position_error']:.3g} m for eps_pos "
              f"{world.settings.eps_pos:g}, {summary['budget_stops']} loops stopped on their "
              f"cap or time budget)", file=sys.stderr)
        return EXIT_UNMET
    return EXIT_OK


class TrajectoryWriter:
    """CSV: t,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz (scene-frame pose of each body), one
    row per body every `every` steps; with_contacts adds metrics.contact_columns of the step
    that ended at t (empty at the start). Written part by part (World.run chunks)."""

    def __init__(self, world, f, every=1, with_contacts=False):
        from .metrics import contact_columns
        self.world, self.every, self.with_contacts = world, every, with_contacts
        self.csv = csv.writer(f)
        self.dynamic = [b for b, m in enumerate(world.models) if not m.static]
        names = list(contact_columns(np.zeros((0, S.T_SIZE)))) if with_contacts else []
        self.csv.writerow("t body x y z qw qx qy qz vx vy vz wx wy wz".split() + names)

    def write(self, result, first=True):
        """The rows of one World.run() result (its first row, the start state, only for the
        first part)."""
        from .metrics import contact_columns
        columns = contact_columns(result.stats) if self.with_contacts else {}
        world, every = self.world, self.every
        for r, t in enumerate(result.times):
            if r == 0 and not first:
                continue
            contact = [f"{col[r * every - 1]:.12g}" if r else "" for col in columns.values()]
            for b in self.dynamic:
                m = world.models[b]
                pos, quat = scene_pose(m, result.pos[r, b], result.rot[r, b])
                om = result.omega[r, b]
                vel = result.vel[r, b] - np.cross(om, result.pos[r, b] - pos)
                self.csv.writerow([f"{t:.10g}", m.name, *(f"{x:.12g}" for x in pos),
                                   *(f"{x:.12g}" for x in quat),
                                   *(f"{x:.12g}" for x in vel), *(f"{x:.12g}" for x in om),
                                   *contact])


BENCH_EPILOG = """\
examples:
  impulse bench chain8 --json out.json    Schmitt's 8-Loop: table and JSON rows
  impulse bench loops                     closed loops and trees: iterative vs tree solver
  impulse bench contacts --scenes box_stack,funnel_1000
  impulse bench import --scenes a1,panda  imported URDF/MJCF models vs MuJoCo
  impulse bench viewer --json out.json    the viewer's frames/s (own --help)
  impulse bench vr --json out.json        VR frames/s, missed frames"""


def bench_parser(p=None):
    """The `impulse bench` parser; `p`: a parser to fill (a subcommand's), else a new one."""
    from .bench.joints import BENCHMARKS
    if p is None:
        p = OneLineParser(prog="impulse bench")
    p.description = "Run the engine's benchmarks; print a table, write JSON."
    p.epilog = BENCH_EPILOG
    p.add_argument("names", nargs="*", metavar="NAME",
                   help=f"benchmarks to run (default all): {', '.join(BENCHMARKS)}")
    p.add_argument("--json", metavar="OUT.json", help="write the rows as JSON")
    p.add_argument("--scenes", metavar="A,B",
                   help="contacts: only these scenes (file names without .json); import: "
                        "only these models")
    return p


def run_bench(args):
    from .bench import BenchInputError
    from .bench.joints import BENCHMARKS, format_table
    names = args.names or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"impulse bench: unknown benchmark {unknown[0]!r} (known: {', '.join(BENCHMARKS)})",
              file=sys.stderr)
        return 2
    if args.json:
        from .durable import check_writable
        check_writable(args.json)
    rows = []
    for n in names:
        try:
            rows.extend(BENCHMARKS[n](scenes=args.scenes)
                        if n in ("contacts", "import") and args.scenes else BENCHMARKS[n]())
        except BenchInputError as e:      # an unknown scene or model, a missing extra
            print(f"impulse bench {n}: {e}", file=sys.stderr)
            return 2
    print(format_table(rows))
    if args.json:
        write_file(args.json, strict_json.dumps({"rows": rows}, indent=2) + "\n")
    return 0


CONVERT_EPILOG = """\
examples:
  impulse convert robot.urdf robot.json       a URDF (ROS, PyBullet) as a scene file
  impulse convert scene.xml scene.json        an MJCF model (MuJoCo, Menagerie)
  impulse convert arm.urdf arm.json --no-actuators
  impulse convert a1.urdf a1.json --floating --servos --ground \\
      --pose FR_upper_joint=0.8 --pose FR_lower_joint=-1.6 ...   a quadruped standing

What has no counterpart in the scene format (tendons, sensors, a slider's armature, the
force range of a gain mapped to a spring, ...) is listed in one warning per kind and in the
scene's description, which also names the source file. Needs the `import` extra:
pip install 'impulse[import]'.

exit status:
  0  written
  1  another failure (one line on stderr; please report it)
  2  a bad or unreadable model file (one line naming the file and element), or output path"""


def convert_parser(p=None):
    """The `impulse convert` parser; `p`: a parser to fill (a subcommand's), else a new one."""
    if p is None:
        p = OneLineParser(prog="impulse convert")
    p.description = "Convert a URDF or MJCF model into a scene file."
    p.epilog = CONVERT_EPILOG
    p.add_argument("model", metavar="IN", help="a URDF (.urdf) or MJCF (.xml) file")
    p.add_argument("out", metavar="OUT.json", help="the scene file to write")
    p.add_argument("--no-actuators", action="store_true",
                   help="leave the actuators out (an unactuated model)")
    p.add_argument("--keyframe", metavar="NAME",
                   help="start in this MJCF keyframe's pose, its controls as servo targets")
    p.add_argument("--pose", type=_setting, action="append", default=[], metavar="JOINT=VALUE",
                   help="start with this hinge (rad) or slider (m) at VALUE (repeatable)")
    p.add_argument("--floating", action="store_true",
                   help="URDF: the root link moves freely (URDF roots are fixed to the world)")
    p.add_argument("--servos", action="store_true",
                   help="hold every hinge and slider without an actuator with a position servo "
                        "at its starting value, capped at its effort limit")
    p.add_argument("--ground", action="store_true",
                   help="add a floor under the model's lowest point (URDF files have none)")
    p.add_argument("--decompose", action="store_true",
                   help="split concave collision meshes into convex parts (CoACD; cached in "
                        "the user cache folder) instead of one convex hull each")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object: counts, seconds, what was not mapped")
    return p


def run_convert(args):
    """Convert, check that the result loads, write it; exit status EXIT_*."""
    from .durable import check_writable
    from .formats import convert_file
    from .scene import scene_to_world
    check_writable(args.out)
    pose = {}
    for option, key, value in args.pose:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            print(f"impulse convert: {option}: VALUE must be a number", file=sys.stderr)
            return EXIT_BAD_INPUT
        pose[key] = value
    imported = convert_file(args.model, actuators=not args.no_actuators,
                            decompose=args.decompose, keyframe=args.keyframe, pose=pose,
                            floating=args.floating, servos=args.servos, ground=args.ground)
    world = scene_to_world(imported.doc, args.out)          # what we write must load
    from .formats import body_visuals
    from .visual_meshes import attach_visuals
    world.meta["visuals"] = body_visuals(args.model, imported.doc, floating=args.floating,
                                         qpos=imported.qpos)
    attach_visuals(imported.doc, world.meta["visuals"], args.out)()   # the meshes beside it
    write_file(args.out, strict_json.dumps(imported.doc, indent=1) + "\n")
    summary = {"source": args.model, "out": args.out, "kind": imported.kind,
               **imported.counts, "visual_meshes": len(world.meta["visuals"]),
               "seconds": round(imported.seconds, 4),
               "not_mapped": imported.unmapped.lines()}
    if args.json:
        print(strict_json.dumps(summary))
    else:
        c = imported.counts
        visuals = len(world.meta["visuals"])
        print(f"{args.out}: {c['bodies']} bodies, {c['joints']} joints, {c['shapes']} shapes "
              f"({c['hulls']} hulls) from {args.model} in {imported.seconds:.2f} s"
              + (f"; {visuals} visual meshes in {imported.doc['visuals']['file']}"
                 if visuals else ""))
    return EXIT_OK


def main(argv=None):
    """Entry for `impulse sim ...` / `impulse bench ...` / `impulse convert ...` (argv without
    the program name)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("sim", "bench", "convert"):
        print("usage: impulse {sim,bench,convert} ...", file=sys.stderr)
        return 2
    parser = {"sim": sim_parser, "bench": bench_parser, "convert": convert_parser}[argv[0]]()
    return run_command(argv[0], parser.parse_args(argv[1:]))


def run_command(command, args):
    """Run `impulse sim`, `bench` or `convert` with parsed arguments; its exit status. Every
    failure is one line on stderr, never a traceback."""
    from .durable import WriteError
    from .scene import SceneError
    try:
        if command == "sim":
            return run_sim(args)
        if command == "convert":
            return run_convert(args)
        return run_bench(args)
    except (SceneError, WriteError) as e:
        print(str(e), file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("impulse: interrupted", file=sys.stderr)
        return 1
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly
        sys.stderr = open(os.devnull, "w")
        return 0
    except Exception as e:  # one line, never a traceback (`impulse -v`: logged at debug)
        log.debug("impulse %s failed", command, exc_info=True)
        print(f"impulse {command}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
