"""Constraint families. Each file derives its C, its velocity form and its K matrix at the top."""
BALL = 0
KIND_NAMES = {"ball": BALL}
