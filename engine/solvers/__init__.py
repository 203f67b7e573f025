"""Solvers for the joint corrections: iterative (Gauss-Seidel with look-ahead), linear (the
global block system over all ball joints) and tree (Baraff's O(n) factorisation).
settings[S_SOLVER] is the index into SOLVERS."""
SOLVERS = ("iterative", "linear", "tree")

# The correction iteration diverges when the largest error of a block of BLOCK rounds/cycles
# grows past GROWTH times the block before's, GROWING_BLOCKS blocks in a row (stopping.py;
# the solvers share it).
BLOCK = 5
GROWTH = 2.0
GROWING_BLOCKS = 2
