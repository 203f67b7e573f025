"""Benchmarks (`impulse bench`) and the peer engines they compare against, apart from the
engine's core: joints.py (Schmitt's chains and trees, the registry), contacts.py (contact
scenes with physics checks), peers.py (the same scenes in MuJoCo and PyBullet)."""
