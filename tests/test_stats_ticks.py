"""The Stats panel's y ticks (app/ui/stats_panel.py nice_ticks): round values, inside the
axis limits, never more than the plot's height holds (implot's own put five labels into
30 px of a short plot of a wide range, one over the other)."""
import math

import numpy as np
import pytest

from impulse.app.ui.stats_panel import PLOT_MIN_H, _ticks_for, nice_ticks


def _is_round(step):
    mantissa = step / 10.0 ** math.floor(math.log10(step))
    return any(math.isclose(mantissa, m, rel_tol=1e-9) for m in (1.0, 2.0, 2.5, 5.0, 10.0))


@pytest.mark.parametrize("lo, hi", [(-300.0, 4300.0), (-130.0, 130.0), (0.0, 1.0),
                                    (1e-3, 2.5e-3), (-0.08, 1.08), (3.2, 3.3), (-7e5, -2e5),
                                    (12.0, 13.0), (-1e-9, 1e-9)])
@pytest.mark.parametrize("most", [2, 3, 5, 8])
def test_ticks_are_round_inside_and_few_enough(lo, hi, most):
    ticks = nice_ticks(lo, hi, most)
    assert 0 < len(ticks) <= most
    assert all(lo <= t <= hi for t in ticks)
    assert all(str(t) != "-0.0" for t in ticks)
    if len(ticks) > 1:
        steps = np.diff(ticks)
        assert np.allclose(steps, steps[0], rtol=1e-9)
        assert _is_round(steps[0])
        assert all(math.isclose(t / steps[0], round(t / steps[0]), abs_tol=1e-6)
                   for t in ticks)
    if most >= 3:     # a range gets at least two labels where three fit
        assert len(ticks) >= 2


def test_a_short_plot_gets_few_ticks_and_a_tall_one_more():
    assert _ticks_for(PLOT_MIN_H) == 2
    assert _ticks_for(140) == 3
    assert _ticks_for(400) == 8
    assert nice_ticks(5.0, 5.0, 3) == [5.0]
    assert nice_ticks(0.0, float("nan"), 3) == [0.0]
