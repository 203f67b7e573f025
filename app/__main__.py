"""`impulse` / `python -m impulse.app`: the command-line entry, one argparse tree.

    impulse                                  the launcher (gallery of bundled scenes)
    impulse view [SCENE]                     open a scene (a file or a bundled scene's name)
    impulse SCENE.json                       the same (file managers, drops)
    impulse view ROBOT.urdf|ROBOT.xml        open a URDF or MJCF model (engine/formats/)
    impulse convert IN OUT.json              a URDF or MJCF model as a scene file
    impulse sim SCENE ...                    headless run (engine/cli.py)
    impulse bench [NAME ...]                 engine benchmarks (engine/cli.py)
    impulse sweep SCENE --vary KEY=V1,V2 ... parameter sweeps: many runs into one table, on
                                             local processes or Ray (app/sweep.py)
    impulse bench viewer / bench vr          viewer and VR frame rates (app/bench_viewer.py,
                                             app/bench_vr.py)
    impulse compile                          compile the physics kernels (engine/warmup.py)
    impulse scenes [--json]                  the bundled scenes with their descriptions
    impulse install-launcher                 desktop entry + icon for the application menu

`impulse --help` lists the commands, `impulse COMMAND --help` shows a command's options and
examples; `-v` / `-q` (before or after the command) set the log level of the `impulse`,
`app` and `engine` loggers (diagnostics go to stderr through `logging`; what a command
produces, a table, JSON or a `screenshot: ...` line, goes to stdout). Exit status: 0 ok,
1 a failure, 2 bad input (file, scene name, option, output path); `impulse sim` also 3 and
4 (README "Headless use"). Each failure prints one line on stderr, never a traceback.
"""
import argparse
import logging
import os
import sys
from pathlib import Path

log = logging.getLogger("impulse")

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2

# command: (its line in `impulse --help`, its examples); sim's and bench's examples are
# engine/cli.py's, sweep's app/sweep.py's
COMMANDS = {
    "view": ("open a scene in the viewer (none: the launcher)", """\
examples:
  impulse view pendulum              a bundled scene by name (impulse scenes)
  impulse view scenes/chain8.json --paused
  impulse view slider_crank --screenshot out.png --time 2 --no-ui
  impulse view hinge_chain --vr      in an OpenXR headset; the window mirrors
  impulse view robot.urdf            a URDF or MJCF model (the `import` extra)"""),
    "sim": ("run a scene headless, print its metrics", None),
    "bench": ("the engine's benchmarks: a table, --json for the rows", None),
    "sweep": ("run a scene over a grid of settings into a table", None),
    "convert": ("convert a URDF or MJCF model into a scene file", None),
    "bench viewer": ("the viewer's frames/s and what rendering costs", """\
example:
  impulse bench viewer --seconds 5 --json out.json"""),
    "bench vr": ("VR frames/s and missed frames (simulated headset)", """\
example:
  impulse bench vr --scenes pendulum tree_255 --json out.json"""),
    "compile": ("compile the physics kernels now (engine.warmup)", """\
examples:
  impulse compile                    after installing: later starts take 1 s
  impulse compile -j 1               in one process (default: one per core)
  impulse compile --bundle           and copy them to engine/prebuilt for `pip wheel .`"""),
    "scenes": ("list the bundled scenes with their descriptions", """\
examples:
  impulse scenes                     name, title and description, one line each
  impulse scenes --json              [{name, title, description, path}, ...]"""),
    "install-launcher": ("add impulse to the desktop's application menu", """\
example:
  impulse install-launcher           desktop entry, icon, MIME type"""),
}
DELEGATED = ("bench viewer", "bench vr")       # parsed by their own modules
LOG_FLAGS = ("-v", "--verbose", "-vv", "-q", "--quiet")

EPILOG = """\
A scene file as the only argument opens it: impulse SCENE.json. Where a command
takes a scene, a bundled scene's name does too (impulse scenes lists them).
impulse COMMAND --help shows a command's options and examples.

examples:
  impulse                            the launcher: bundled scenes, recent files
  impulse view pendulum              open a bundled scene
  impulse sim chain8 --json          headless run, one JSON object of metrics
  impulse sweep chain8 --vary h=0.01,0.005 --out runs.csv   many runs, one table
  impulse -q compile                 compile the physics kernels ahead of time

exit status:
  0  ok
  1  a failure (one line on stderr; please report it)
  2  bad input: a scene file or name, an option or an output path (one line)
  3  impulse sim: a body went non-finite and the engine's guard stopped it
  4  impulse sim: the run ended with tolerances unmet in some steps"""


class CommandParser(argparse.ArgumentParser):
    """engine.cli.OneLineParser's behaviour (errors as one line "impulse view: ...", exit
    status 2; descriptions and examples keep their line breaks) without importing the engine,
    so that `impulse --help` and `impulse --version` answer at once."""
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)


def _version():
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("impulse")
    except PackageNotFoundError:
        return "unknown (not installed)"


def _log_options(parser, default):
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-v", "--verbose", action="count", default=default,
                       help="log what happens (debug messages) on stderr")
    group.add_argument("-q", "--quiet", action="store_true", default=default,
                       help="log only warnings and errors (no progress notices)")


class _TopFormatter(argparse.RawDescriptionHelpFormatter):
    """Each command's line starts after the longest command's name (argparse measures the
    command names one indent short, so `install-launcher` would break its line)."""
    def __init__(self, prog):
        super().__init__(prog, max_help_position=26)

    def add_argument(self, action):
        super().add_argument(action)
        if action.nargs == argparse.PARSER and action.choices:
            self._action_max_length = max(self._action_max_length, self._current_indent
                                          + 2 * self._indent_increment
                                          + max(map(len, action.choices)))


def build_parser(command=None):
    """The `impulse` parser and its command parsers {name: parser}; only `command`'s
    parser gets its arguments (the others need only their line in --help: no engine import
    for `impulse --help`)."""
    top = CommandParser(prog="impulse", epilog=EPILOG, formatter_class=_TopFormatter,
                        description="Impulse-based rigid multibody engine and viewer (no "
                                    "command: the launcher).")
    top.add_argument("--version", action="version", version=f"impulse {_version()}")
    _log_options(top, None)
    common = argparse.ArgumentParser(add_help=False)
    _log_options(common, argparse.SUPPRESS)
    sub = top.add_subparsers(dest="command", metavar="COMMAND", title="commands",
                             parser_class=CommandParser)
    parsers = {}
    for name, (line, examples) in COMMANDS.items():
        parsers[name] = p = sub.add_parser(name, help=line, description=line[0].upper()
                                           + line[1:] + ".", epilog=examples,
                                           parents=[] if name in DELEGATED else [common])
        if name == command:
            _ARGUMENTS[name](p)
    return top, parsers


def _view_arguments(p):
    from impulse.engine.cli import positive
    from impulse.engine.scenes_list import scene_argument
    p.add_argument("scene", nargs="?", type=scene_argument,
                   help="scene file (.json), a URDF or MJCF model (.urdf, .xml), or a bundled "
                        "scene's name; none: the launcher")
    p.add_argument("--screenshot", help="save the last frame as PNG and exit (with --frames)")
    p.add_argument("--frames", type=positive(int), default=None,
                   help="render this many frames, each 1/60 s of simulated time, then exit")
    p.add_argument("--time", type=_positive_float, default=None, metavar="T",
                   help="like --frames: the frames of T seconds of simulated time")
    p.add_argument("--size", default="1280x720", help="window size WxH")
    p.add_argument("--no-ui", action="store_true", help="hide the panels")
    p.add_argument("--no-vsync", action="store_true")
    p.add_argument("--paused", action="store_true", help="start paused")
    p.add_argument("--sync-physics", action="store_true",
                   help="step the physics inside each frame (no physics thread: frames wait)")
    p.add_argument("--vr", action="store_true",
                   help="show the scene in an OpenXR headset (the window becomes the mirror)")


def _check_view_args(p, args):
    """What argparse cannot check of `view`'s options; width, height and frames filled in."""
    if args.vr and not args.scene:
        p.error("--vr needs a scene file")
    try:
        args.width, args.height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        p.error(f"--size must look like 1280x720, got {args.size!r}")
    if args.time is not None:
        if args.frames is not None:
            p.error("give --frames or --time, not both")
        args.frames = max(1, round(args.time * FRAME_RATE))
    if args.screenshot and not args.frames:
        args.frames = 60
    return args


def _sim_arguments(p):
    from impulse.engine.cli import sim_parser
    sim_parser(p)


def _bench_arguments(p):
    from impulse.engine.cli import bench_parser
    bench_parser(p)


def _convert_arguments(p):
    from impulse.engine.cli import convert_parser
    convert_parser(p)


def _sweep_arguments(p):
    from impulse.app.sweep import sweep_parser
    sweep_parser(p)


def _scenes_arguments(p):
    p.add_argument("--json", action="store_true",
                   help="print one JSON list of {name, title, description, path}")


def _no_arguments(p):
    pass


def _compile_arguments(p):
    from impulse.engine.cli import positive
    p.add_argument("--jobs", "-j", type=positive(int), default=None, metavar="N",
                   help="compile in N processes (default: this machine's cores, at most 8; "
                        "1: in one process)")
    p.add_argument("--bundle", nargs="?", const="", metavar="DIR",
                   help="then copy the kernels into DIR/<key> (default: the engine's "
                        "prebuilt/ folder), which `pip wheel .` packs into the wheel")


_ARGUMENTS = {"view": _view_arguments, "sim": _sim_arguments, "bench": _bench_arguments,
              "sweep": _sweep_arguments, "convert": _convert_arguments,
              "scenes": _scenes_arguments, "compile": _compile_arguments,
              "install-launcher": _no_arguments, "bench viewer": _no_arguments,
              "bench vr": _no_arguments}


def parse_view(argv):
    """`impulse view` arguments (argv after `view`), checked."""
    p = CommandParser(prog="impulse view", description=COMMANDS["view"][0],
                      epilog=COMMANDS["view"][1])
    _view_arguments(p)
    return _check_view_args(p, p.parse_args(argv))


FRAME_RATE = 60      # --frames / --time: simulated frames per second


def _positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < v < 1e6:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number of seconds")
    return v


# ---------------------------------------------------------------- logging
class _Formatter(logging.Formatter):
    """"impulse: message" for notices and errors, "impulse: warning: ..." for warnings;
    verbose: the level and the logger's name on every line."""
    def __init__(self, verbose):
        super().__init__()
        self.verbose = verbose

    def format(self, record):
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        if self.verbose:
            return f"impulse: {record.levelname.lower()} [{record.name}]: {text}"
        if record.levelno in (logging.INFO, logging.ERROR):
            return f"impulse: {text}"
        return f"impulse: {record.levelname.lower()}: {text}"


_handler = None


def setup_logging(verbose=0, quiet=False):
    """Messages of the `impulse`, `app` and `engine` loggers on stderr: notices and up by
    default, warnings and up with quiet, debug with verbose. Other libraries' loggers
    (numba's among them) stay at warnings."""
    global _handler
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(_Formatter(bool(verbose) and not quiet))
    root.addHandler(_handler)
    root.setLevel(logging.ERROR if quiet else logging.WARNING)
    level = logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO
    for name in ("impulse",):
        logging.getLogger(name).setLevel(level)


def compile_in_terminal():
    """`impulse sim`/`bench` on a first start: compile here, with a progress bar on a
    terminal (nothing when not a terminal; -q keeps it quiet)."""
    from impulse.engine import warmup
    cached = warmup.kernels_cached()
    log.debug("physics kernels %s numba's cache", "found in" if cached else "not in")
    if not cached:
        from impulse.engine.compile_progress import compile_heading
        log.info("%s; later starts take a second or two", compile_heading())
        quiet = logging.getLogger("impulse").getEffectiveLevel() > logging.INFO
        warmup.main(["--progress", "none", "--quiet"] if quiet else ["--progress", "auto"])


# ---------------------------------------------------------------- commands
def view(argv) -> int:
    """`impulse view ARGV...` (argv after `view`)."""
    if _handler is None:
        setup_logging()
    return run_view(parse_view(argv))


def run_view(args) -> int:
    if args.vr:
        from impulse.app.vr.runtime import unavailable_reason

        problem = unavailable_reason()
        if problem:
            log.error("%s", problem)
            return EXIT_BAD_INPUT
    from impulse.app.kernel_compile import BackgroundCompile
    from impulse.engine import SceneError, interpreted

    compiling = BackgroundCompile.start_if_needed()   # a first start: the window opens now
    if compiling is not None and args.scene:
        interpreted.interpret()        # and its scene runs at once, as Python, meanwhile
    session = None
    if args.scene:
        from impulse.app.session import Session

        try:
            if compiling is None or interpreted.active():
                session = Session.open(args.scene)
            else:
                from impulse.engine import load_scene
                from impulse.engine.formats import convert_file, is_model_file
                # a bad file is still reported before the window
                (convert_file if is_model_file(args.scene) else load_scene)(args.scene)
        except SceneError as e:
            log.error("%s", e)
            if compiling is not None:
                compiling.stop()
            return EXIT_BAD_INPUT
    try:
        from impulse.app.app import App
        from impulse.app.window import Viewer

        viewer = Viewer(None, args.width, args.height,
                        vsync=not (args.no_vsync or args.frames or args.vr), show_ui=not args.no_ui)
    except Exception as e:  # noqa: BLE001 - no X display / no OpenGL: one line, no traceback
        if compiling is not None:
            compiling.stop()
        log.debug("the window did not open", exc_info=True)
        log.error("cannot open a window (display %s): %s: %s",
                  os.environ.get("DISPLAY") or "not set", type(e).__name__, e)
        return EXIT_FAILED
    app = App(viewer, threaded=not args.sync_physics, open_paused=args.paused,
              frame_dt=1.0 / FRAME_RATE if args.frames and not args.vr else None,
              compile=compiling, interpret=compiling is not None)
    if compiling is not None and args.scene and session is None:
        app.open_path(args.scene)
    if session is not None:
        app.set_session(session)
        from impulse.app.recent import add_recent

        add_recent(args.scene)
    if args.vr and not app.enter_vr():
        log.error("%s", app.errors[0] if app.errors else "VR did not start")
        app.close()
        viewer.close()
        return EXIT_BAD_INPUT
    try:
        viewer.run(frames=args.frames, screenshot=args.screenshot)
    finally:
        app.close()
        viewer.close()
    if args.vr:
        print(f"vr: {app.status}")
    if args.scene and args.frames and app.session is None:
        # (scripted frames: the kernels' compile failed or the window closed first, so the
        # frames were the launcher's, not the scene's)
        why = app.errors[0] if app.errors else "the window closed before it opened"
        log.error("%s did not open: %s", args.scene, why)
        if args.screenshot:
            Path(args.screenshot).unlink(missing_ok=True)
        return EXIT_FAILED
    if args.screenshot:
        world = app.session.world if app.session else None
        print(f"screenshot: {args.screenshot} ({viewer.frame_count} frames, "
              f"t = {world.time if world else 0:.3f} s)")
    return EXIT_OK


def scenes(args) -> int:
    """`impulse scenes`: one line per bundled scene, cut to the terminal's width; --json."""
    import json
    import shutil

    from impulse.engine.scenes_list import SCENES_DIR, bundled_scenes, format_scene_lines
    items = bundled_scenes()
    if not items:
        log.error("no bundled scenes in %s", SCENES_DIR)
        return EXIT_FAILED
    if args.json:
        print(json.dumps(items, indent=2, ensure_ascii=False))
        return EXIT_OK
    width = shutil.get_terminal_size().columns - 1       # a full line would wrap on some
    mark = "\u2026"
    try:
        mark.encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        mark = "..."
    print("\n".join(format_scene_lines(items, width, mark)))
    return EXIT_OK


def compile_kernels(args) -> int:
    from impulse.engine import warmup
    argv = ["--progress", "none", "--quiet"] if args.quiet else []
    if args.jobs is not None:
        argv += ["--jobs", str(args.jobs)]
    if args.bundle is not None:
        argv += ["--bundle"] + ([args.bundle] if args.bundle else [])
    return warmup.main(argv)


def install_launcher(args) -> int:
    from impulse.app.install import main as install_main
    return install_main()


def delegate(name, argv) -> int:
    """`impulse bench viewer` / `bench vr`: their modules parse their own options; --help
    gets the command's example below."""
    if name == "bench viewer":
        from impulse.app.bench_viewer import main as run
    else:
        from impulse.app.bench_vr import main as run
    try:
        return run(argv)
    except SystemExit as e:
        if e.code == 0 and any(a in ("-h", "--help") for a in argv):
            print("\n" + COMMANDS[name][1])
        raise


def _dispatch(args, parsers, argv_rest) -> int:
    command = args.command
    log.debug("impulse %s, Python %s, command: %s", _version(), sys.version.split()[0],
              command or "(none: the launcher)")
    if command in DELEGATED:
        return delegate(command, argv_rest)
    if command in ("sim", "bench", "convert"):
        compile_in_terminal()
    if command is None:
        return run_view(parse_view([]))
    if command == "view":
        return run_view(_check_view_args(parsers["view"], args))
    if command in ("sim", "bench", "convert"):
        from impulse.engine import cli
        return cli.run_command(command, args)
    if command == "sweep":                       # compiles (if need be) once its input is checked
        from impulse.app import sweep
        return sweep.run_command(args, before_runs=compile_in_terminal)
    return {"scenes": scenes, "compile": compile_kernels,
            "install-launcher": install_launcher}[command](args)


def _command_at(argv):
    """Index of the command (the first word that is no option) in argv, or None."""
    for i, a in enumerate(argv):
        if not a.startswith("-"):
            return i
    return None


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    at = _command_at(argv)
    command = argv[at] if at is not None else None
    rest = []
    if command == "bench" and at + 1 < len(argv) and argv[at + 1] in ("viewer", "vr"):
        command = f"bench {argv[at + 1]}"        # parsed by its module: only -v/-q here
        rest = [a for a in argv[at + 2:] if a not in LOG_FLAGS]
        argv = argv[:at] + [a for a in argv[at + 2:] if a in LOG_FLAGS] + [command]
    elif command in DELEGATED:
        rest, argv = argv[at + 1:], argv[:at + 1]
    elif command is not None and command not in COMMANDS:
        if command.endswith(".json") or os.path.isfile(command):
            argv.insert(at, "view")              # `impulse SCENE.json` (file managers, drops)
            command = "view"
        else:
            CommandParser(prog="impulse").error(
                f"unknown command {command!r} (commands: {', '.join(COMMANDS)}; or a scene "
                f"file: impulse SCENE.json; impulse --help)")
    setup_logging(sum(a.count("v") for a in argv if a in LOG_FLAGS and "q" not in a),
                  any(a in ("-q", "--quiet") for a in argv))   # for messages while parsing
    top, parsers = build_parser(command)
    args, unknown = top.parse_known_args(argv)
    if unknown:                                  # named by the command's parser, as argparse
        parsers.get(args.command, top).error(f"unrecognized arguments: {' '.join(unknown)}")
    setup_logging(args.verbose, args.quiet)
    try:
        code = _dispatch(args, parsers, rest)
    except KeyboardInterrupt:
        log.error("interrupted")
        code = EXIT_FAILED
    except BrokenPipeError:                      # output piped into e.g. `head`: stop quietly
        sys.stderr = open(os.devnull, "w")
        code = EXIT_OK
    except Exception as e:  # noqa: BLE001 - one line, never a traceback (-v: the traceback)
        log.debug("the command failed", exc_info=True)
        log.error("%s: %s: %s", args.command or "view", type(e).__name__, e)
        code = EXIT_FAILED
    sys.exit(code)


if __name__ == "__main__":
    main()
