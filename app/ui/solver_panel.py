"""Solver settings (World.settings) through EditSettings commands."""
from __future__ import annotations

from imgui_bundle import imgui

from impulse.app.editor import EditSettings
from impulse.app.ui import widgets as W
from impulse.app.ui.layout import place
from impulse.engine.solvers import SOLVERS


def draw_solver_panel(app) -> None:
    place("solver")
    opened, app.panels["solver"] = imgui.begin("Solver", app.panels["solver"])
    if opened:
        W.push_label_room(["time budget [ms]", "eps_vel [m/s]", "velocity correction"],
                          help_marker_too=True)
        s = app.session.world.settings
        changes = {}
        commit, v = W.combo("solver", s.solver, list(SOLVERS))
        if commit:
            changes["solver"] = v
        W.help_marker("iterative: Gauss-Seidel with look-ahead; linear: global block system; "
                      "tree: O(n) for trees (loops solved around a spanning tree)")
        commit, v = W.edit_sci("h [s]", "set.h", s.h)
        if commit and 0 < v <= 1:
            changes["h"] = v
        for key, label in (("eps_pos", "eps_pos [m]"), ("eps_vel", "eps_vel [m/s]")):
            commit, v = W.edit_sci(label, f"set.{key}", getattr(s, key))
            if commit and v > 0:
                changes[key] = v
        commit, v = W.edit_int("cycle cap", "set.max_cycles", s.max_cycles, 1, 100000)
        if commit:
            changes["max_cycles"] = max(v, 1)
        W.help_marker("most correction cycles (sweeps over every joint and contact) a step's "
                      "position stage takes")
        commit, v = W.edit_float("time budget [ms]", "set.budget", s.time_budget_ms, 0.05, 0.0,
                                 1000.0)
        if commit:
            changes["time_budget_ms"] = max(v, 0.0)
        W.help_marker("0 = no budget; otherwise the correction loop stops after this much wall "
                      "time (anytime) and reports its residual")
        commit, v = W.edit_int("Taylor order", "set.order", s.taylor_order, 1, 12)
        if commit:
            changes["taylor_order"] = min(max(v, 1), 12)
        _flag(s, changes, "velocity_correction", "velocity correction")
        commit, v = W.edit_int("max halvings", "set.halvings", s.max_halvings, 0, 12)
        if commit:
            changes["max_halvings"] = min(max(v, 0), 12)
        commit, v = W.edit_float("over-relaxation", "set.relaxation", s.relaxation, 0.01, 0.0,
                                 1.95)
        if commit:
            changes["relaxation"] = min(max(v, 0.0), 1.95)
        W.help_marker("iterative solver: joint corrections times this factor; 0 = adapted to "
                      "a slow loop (closed loops, trees), 1 = plain Gauss-Seidel")
        _flag(s, changes, "warm_start", "warm start",
              "iterative solver: each step's velocity correction starts with the joints' "
              "correction of the last step (off: from none, as the report)")
        _flag(s, changes, "extrapolate", "extrapolate",
              "Schmitt sec. 8: each step taken once with h and as two halves, "
              "extrapolated (third order, three steps' work; steps with contacts keep "
              "the halves)")
        commit, v = W.combo("spring mode", s.spring_mode, ["approximate", "iterated"])
        if commit:
            changes["spring_mode"] = v
        commit, v = W.edit_vec3("gravity", "set.gravity", s.gravity, 0.05, "%.4g")  # (-9.81)
        if commit:
            changes["gravity"] = v
        _flag(s, changes, "sleeping", "sleeping",
              "islands of bodies at rest for the sleep time stop being solved until "
              "something touches, drags or edits them (tinted in the view)")
        commit, v = W.edit_float("sleep time [s]", "set.sleep_time", s.sleep_time, 0.05, 0.0,
                                 1e6)
        if commit:
            changes["sleep_time"] = max(v, 0.0)
        world = app.session.world
        asleep = world.sleep.count if hasattr(world, "sleep") else 0
        if imgui.button(f"Wake all ({asleep} asleep)"):
            app.wake_all()
        W.record_rect("solver.wake_all")
        if changes:
            app.run(EditSettings(changes))
    if opened:
        imgui.pop_item_width()
    imgui.end()


def _flag(s, changes, key, label, help_text=None):
    """A checkbox for boolean setting `key` (its rect recorded as solver.<key>), a change
    into `changes`, and its help marker."""
    commit, v = W.checkbox(label, getattr(s, key))
    W.record_rect(f"solver.{key}")
    if commit:
        changes[key] = v
    if help_text:
        W.help_marker(help_text)
