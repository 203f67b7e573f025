"""Over-relaxation of the iterative loops' joint corrections (successive over-relaxation).

Gauss-Seidel over joints that couple through many bodies (a closed loop, a floating chain, a
tree) brings its largest error down by a factor rho per cycle close to 1, so it needs about
ln(e0 / eps) / (1 - rho) cycles: hundreds on the slider crank or tree_31, thousands on
tree_63 at eps 1e-6 (issue 22, item 4). Scaling every lock's correction by omega in (1, 2)
(SOR; ODE's QuickStep does it with a fixed 1.3) brings the rate at Young's optimum
    omega = 2 / (1 + sqrt(1 - rho))      (rho: Gauss-Seidel's rate per cycle)
down to omega - 1, about 1 - 2 sqrt(1 - rho): ~1 / sqrt(1 - rho) cycles instead of
~1 / (1 - rho). (Young's formula is exact for consistently ordered linear systems, a guide
for the others; too large an omega costs less than too small a one.)

settings.relaxation (S_RELAX):
  0 (default)  adapted, per loop (the position and the velocity loop of each step):
               - plain Gauss-Seidel for the first RELAX_AFTER cycles; at the end of each
                 block of BLOCK cycles after that, the rate per cycle is read from the
                 largest errors of the last two blocks, rate = (this block's / the block
                 before's)^(1 / BLOCK); once it is above RELAX_FROM the loop takes Young's
                 omega for it;
               - over-relaxed, the errors may rise in the first block on a new omega
                 (SOR's start: about twice on the trees), up to GIVE_UP times the last
                 plain block's largest; after it a block may not grow past GROWTH times
                 the block before and eps (the divergence test's rule; a loop that met eps
                 on the linearised look-ahead may find more on the exact one). Else the
                 loop goes back to plain Gauss-Seidel for the rest of the step, and the
                 divergence test forgets that growth (the over-relaxation's, not the
                 step's: the slider crank, whose slow part is its motor row against the
                 loop, halved 56 of 1 000 steps without this rule);
               - every two blocks on one omega, the rate they show gives Gauss-Seidel's
                 own by Young's relation (rate + omega - 1)^2 = rate omega^2 rho, and a
                 larger Young's omega for that rho is taken (the first reading, made while
                 the fast modes still decay, is low: tree_31 first takes 1.6, then 1.8). It
                 never goes down but to 1;
               - what was read is kept: the velocity loop starts on the factor its
                 position loop ended on (inherited: the same K), the position loop on
                 most of the last step's (carried, S_RELAX_PREV), where the loop
                 holds locks alone and ran LONG, read afresh every PROBE_S (the floating
                 7-hinge chain at h = 1/60, bench loops: 53 -> 46 position and 43 -> 36
                 velocity cycles);
               OMEGA_MAX = 1.8: fixed factors on tree_31 / tree_63 took 53 / 122 cycles a
               step at 1.7, 47 / 66 at 1.8, 99 (tree_63) at 1.9 (Young's relation reads
               past the best on these trees, whose orderings are not consistent).
               A loop that converges fast keeps omega = 1. Where the joints close a loop
               (World._settings_array: solvers/graph.has_closed_loop) it is plain
               Gauss-Seidel: a closed loop's rows are often redundant (a planar loop's
               out-of-plane locks), and over-relaxed the slider crank took 1.3-2x the
               cycles; chain8 (two suspensions) keeps the report's method and counts.
  1            plain Gauss-Seidel, the report's method throughout;
  other        that factor from the first cycle.
Scaled: the locks (ball joints, generic translation and rotation rows) and the motor rows
(their accumulated impulse still clamped to the cap: projected SOR); limits, springs and
contacts (one-sided, or not constraints) keep their plain corrections.
The loops still stop only after a whole cycle without a correction, so every joint holds
its tolerance at the end of the step whatever omega.
"""
import numpy as np
from numba import njit

from . import BLOCK, GROWTH

RELAX_AFTER = 10     # cycles of plain Gauss-Seidel before the rate is read
RELAX_FROM = 0.8     # a rate per cycle above this is slow: over-relax (chain8 at
                     # h = 0.01 reads 0.85, a floating 4-hinge chain 0.885)
OMEGA_MAX = 1.8
GIVE_UP = 4.0        # over-relaxed errors past this times the last plain block's: plain again
OMEGA_STEP = 0.02    # a re-read omega is taken if it is at least this much larger
GAVE_UP = -1         # `since` of a loop gone back to plain Gauss-Seidel (GIVE_UP)
CARRY = 0.9          # the part of the last step's over-relaxation (omega - 1) the position
                     # loop starts with (carried)
PROBE_S = 0.1        # [s] a step across a multiple of this starts plain (carried)
LONG = RELAX_AFTER + BLOCK   # a position loop of at least this many cycles hands its omega
                     # on (inherited, carried)


@njit(cache=True, inline='always')
def initial(setting):
    """A loop's start: (omega, since: the cycle omega was set at, ref: the last plain
    block's largest error when it was first raised)."""
    return (setting if setting > 0.0 else 1.0), 0, np.inf


@njit(cache=True, inline='always')
def carried(setting, omega_prev, t, h):
    """The position loop's start (see initial): adapted, it starts over-relaxed where the
    last step's position loop ended so, omega_prev > 1 (S_RELAX_PREV), at
    1 + CARRY (omega_prev - 1): Gauss-Seidel's rate changes little from step to step, and
    the RELAX_AFTER plain cycles and the block that read it barely lower the error (the
    floating 7-hinge chain: 5.4e-4 -> 4.0e-4 in 10 cycles). Over-relaxed past the optimum,
    SOR's rate is omega - 1 whatever Gauss-Seidel's, so the rate cannot say omega is too
    large: taken down by CARRY each step and raised again where the rate asks for it
    (adapted), a loop that became fast (a chain come to rest) goes back towards plain
    Gauss-Seidel. No plain block came before: it goes back to plain only by the growth
    rule (adapted). Kept only where the loop's items are all locks (the caller:
    iterative.locks_only; inherited alike): a lever's servo, whose first move read 1.57,
    then started every step over-relaxed and never reached its target (its motor row is
    scaled too), and a servo-held quadruped on its feet blew up with the contacts pushing
    against over-relaxed joints from the first cycle (adapted, a loop over-relaxes only
    once the contacts have settled). And only from a loop that ran LONG: a block past the
    reading. A pendulum held out by a torque reads a slow rate at its 10th cycle and stops
    there; started on that factor (1.65) every step took 32 cycles and drifted 1e-6 rad
    from its balance angle in 2 s (plain: 10 cycles, 3e-10 rad). Over-relaxing one
    joint's exact block solve only overshoots it; its slow rate is the look-ahead's. The
    velocity loop inherits by the same rules (the position loop hands 1 otherwise).
    A loop that runs long only because it started over-relaxed would hand its factor on
    for ever (Young's relation reads SOR's start as a slow rate and raises it back: that
    pendulum started on 1.8 kept 1.66 and 32 cycles a step at h = 1/30): a step that
    crosses a multiple of PROBE_S (t to t + h) starts plain and reads afresh."""
    if setting == 0.0 and omega_prev > 1.0 and np.floor(t / PROBE_S) == np.floor((t + h) / PROBE_S):
        return 1.0 + CARRY * (omega_prev - 1.0), 0, np.inf
    return initial(setting)


@njit(cache=True, inline='always')
def inherited(setting, omega_pos):
    """The velocity loop's start (see initial): adapted, it takes the factor its sub-step's
    position loop ended on, omega_pos, from the first cycle. Its joints' K is the position
    loop's at t + h, so Gauss-Seidel's rate is nearly the same, and the velocity loop need
    not spend RELAX_AFTER plain cycles and a block to read it again (the floating 7-hinge
    chain: 43 -> 33.5 velocity cycles a step at h = 1/60). No plain block came before: it goes back
    to plain only by the growth rule (adapted)."""
    if setting == 0.0 and omega_pos > 1.0:
        return omega_pos, 0, np.inf
    return initial(setting)


@njit(cache=True, inline='always')
def young(rho):
    """Young's optimal factor for Gauss-Seidel's rate rho (0 <= rho < 1), at most OMEGA_MAX."""
    return min(2.0 / (1.0 + np.sqrt(1.0 - rho)), OMEGA_MAX)


@njit(cache=True, inline='always')
def adapted(setting, omega, since, ref, cycles, before, after, eps):
    """(omega, since, ref) after `cycles` cycles (see initial), given the largest errors of
    the last two blocks of BLOCK cycles (before: the older one; inf where there is none
    yet) and the loop's tolerance eps."""
    if setting != 0.0 or since == GAVE_UP or cycles < RELAX_AFTER or cycles % BLOCK != 0:
        return omega, since, ref
    if not (np.isfinite(before) and before > 0.0 and after > 0.0):
        return omega, since, ref
    rate = (after / before) ** (1.0 / BLOCK)
    if omega == 1.0:
        if RELAX_FROM < rate < 1.0:
            return young(rate), cycles, after
        return omega, since, ref
    if after > GIVE_UP * ref or (cycles - since > BLOCK and after > GROWTH * max(before, eps)):
        return 1.0, GAVE_UP, ref
    if cycles - since < 2 * BLOCK or rate >= 1.0:
        return omega, since, ref     # two blocks on one omega to read its rate by
    # Young's relation between SOR's rate and Gauss-Seidel's rho
    rho = (rate + omega - 1.0) ** 2 / (rate * omega * omega)
    if rho < 1.0:
        better = young(rho)
        if better >= omega + OMEGA_STEP:
            return better, cycles, ref
    return omega, since, ref
