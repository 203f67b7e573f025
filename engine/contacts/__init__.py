"""Contacts and collisions as temporary joints of the impulse method (Schmitt sec. 11).

- system.py: the World's collision side (shape table, filters, materials, detection ->
  the step's Contacts rows, contact memory between steps);
- rows.py: what every visit of a contact row needs, prepared once per stage;
- solve.py: the visits themselves (collision, position and velocity stages, shock pass);
- friction.py: Coulomb friction per contact patch;
- depth_projection.py: depth left after a step removed by shifting bodies.
"""
