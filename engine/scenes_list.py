"""The bundled scenes (`scenes/*.json`) by name: `impulse scenes` lists them, and `impulse sim
NAME` / `impulse view NAME` take a name where no file of that name exists (NAME ->
scenes/NAME.json). Reads the files as JSON only (no validation, no kernels)."""
import argparse
import json
import logging
import os

log = logging.getLogger(__name__)

SCENES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scenes")


def scene_names(folder=SCENES_DIR):
    """The bundled scenes' names (file names without .json), sorted."""
    try:
        files = os.listdir(folder)
    except OSError:
        return []
    return sorted(f[:-5] for f in files
                  if f.endswith(".json") and os.path.isfile(os.path.join(folder, f)))


def bundled_scenes(folder=SCENES_DIR):
    """[{name, title, description, path}] of every bundled scene, sorted by name; `title` is
    the scene's own `name`, the description is on one line ("" where the file has none or
    cannot be read)."""
    out = []
    for name in scene_names(folder):
        path = os.path.join(folder, name + ".json")
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            title, desc = str(doc.get("name") or name), str(doc.get("description") or "")
        except (OSError, ValueError, AttributeError) as e:
            log.debug("cannot read %s: %s", path, e)
            title, desc = name, "(cannot be read)"
        out.append({"name": name, "title": " ".join(title.split()),
                    "description": " ".join(desc.split()), "path": path})
    return out


class UnknownScene(ValueError):
    """A scene argument that is neither a file nor a bundled scene's name."""


def resolve_scene(text, folder=SCENES_DIR):
    """The file a scene argument means: `text` itself where it is a file or looks like a path
    (so a missing file is reported as such by the reader); else the bundled scene of that
    name (`chain8` or `chain8.json` -> scenes/chain8.json). Raises UnknownScene for a bare
    name that is no bundled scene; its message names the bundled ones."""
    if os.path.isfile(text) or os.sep in text or (os.altsep and os.altsep in text):
        return text
    name = text[:-5] if text.endswith(".json") else text
    path = os.path.join(folder, name + ".json")
    if name and os.path.isfile(path):
        log.debug("scene %r is the bundled %s", text, path)
        return path
    if text.endswith(".json"):
        return text                          # a missing file: the reader names it
    raise UnknownScene(f"{text!r} is neither a file nor a bundled scene (bundled: "
                       f"{', '.join(scene_names(folder)) or 'none'})")


def scene_argument(text):
    """argparse `type=` for a scene: resolve_scene, its error as an argparse error (one line,
    exit status 2 with engine.cli.OneLineParser)."""
    try:
        return resolve_scene(text)
    except UnknownScene as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def ellipsize(text, width, mark="\u2026"):
    """The text cut to at most `width` characters, ending in `mark` where it was cut."""
    if len(text) <= width:
        return text
    return text[:max(0, width - len(mark))].rstrip() + mark


def format_scene_lines(scenes, width, mark="\u2026"):
    """One line per scene: its name, then its title and description, cut to `width`."""
    col = max((len(s["name"]) for s in scenes), default=0) + 2
    lines = []
    for s in scenes:
        text = s["title"] + (f": {s['description']}" if s["description"] else "")
        lines.append(ellipsize(s["name"].ljust(col) + text, width, mark))
    return lines
