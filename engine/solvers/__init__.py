"""Solvers for the joint corrections: iterative (Gauss-Seidel with look-ahead), linear (the
global block system over all ball joints) and tree (Baraff's O(n) factorisation).
settings[S_SOLVER] is the index into SOLVERS."""
SOLVERS = ("iterative", "linear", "tree")

# The correction iteration diverges when its largest error (above eps) rises this many
# rounds/cycles in a row; single rises are normal Gauss-Seidel behaviour (solvers share it).
GROWING_CYCLES = 3
