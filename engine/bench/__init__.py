"""Benchmarks (`impulse bench`) and the peer engines they compare against, apart from the
engine's core: joints.py (Schmitt's chains and trees, the registry), loops.py (closed loops,
floating chains and trees: the iterative solver against the tree solver), contacts.py (contact
scenes with physics checks), peers.py (the same scenes in MuJoCo and PyBullet)."""


class BenchInputError(ValueError):
    """A bench given what it cannot run: an unknown scene or model name, a missing extra.
    `impulse bench` reports it in one line (exit 2); any other error is a failure."""
