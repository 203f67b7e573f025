"""The Stats panel's tolerance line (issue 22, item 5): every step the viewer runs is counted,
not only the last of each frame, with the same rule as `impulse sim`'s
tolerance_unmet_steps (engine.metrics.unmet_steps)."""
import pytest

from impulse.app.stats import ToleranceTally
from impulse.engine import state as S
from impulse.engine.metrics import unmet_steps
from impulse.engine.scene import load_scene


def capped(scene_path, cycles):
    w = load_scene(scene_path("chain8.json"))
    w.settings.max_cycles = cycles
    w.settings.max_halvings = 0
    return w


@pytest.mark.parametrize("cycles", [1, 2, 4, 500])
def test_the_tally_counts_the_steps_sim_counts_and_their_worst_errors(scene_path, cycles):
    w, twin = capped(scene_path, cycles), capped(scene_path, cycles)
    tally = ToleranceTally()
    for _ in range(60):
        w.step()
        tally.add(w)
    stats = twin.run(60).stats
    missed = unmet_steps(stats, twin.settings.eps_pos, twin.settings.eps_vel)
    assert tally.steps == 60 and tally.missed == int(missed.sum())
    if cycles == 500:
        assert tally.missed == 0 and tally.line() == "tolerances met in all 60 steps"
    else:
        assert tally.missed > 0
        assert tally.worst_pos == pytest.approx(stats[missed, S.T_RESIDUAL].max(), rel=1e-12)
        assert tally.worst_vel == pytest.approx(stats[missed, S.T_VEL_RESIDUAL].max(),
                                                rel=1e-12)
        assert tally.worst_pos > w.settings.eps_pos
        assert f"missed in {tally.missed} of 60 steps" in tally.line()
        assert f"{tally.worst_pos:.1e} m" in tally.line()
        assert tally.short() == f"tol. missed {tally.missed}/60 steps"


def test_the_session_counts_every_step_and_reset_starts_over(scene_path):
    from impulse.app.session import Session

    s = Session.open(scene_path("chain8.json"))
    try:
        s.world.settings.max_cycles = 1
        s.world.settings.max_halvings = 0
        for _ in range(5):
            s.step()
        assert s.tolerance.steps == 5 and s.tolerance.missed == 5
        assert s.tolerance.first_missed_t == pytest.approx(s.world.settings.h)
        s.reset()
        assert s.tolerance.steps == 0 and s.tolerance.missed == 0
    finally:
        s.close()
