"""Solvers for the joint corrections: iterative (Gauss-Seidel with look-ahead)."""
SOLVERS = ("iterative",)
