"""Shape kinds: one table for the scene files, collision, mass properties, the Inspector and
the renderer. A kind's code is its place in KIND_NAMES; SIZE_KEYS are the scene-file keys
that give its size (capsules and cylinders lie along local Y; a plane is the local XZ plane
with normal +Y, on fixed bodies only)."""

KIND_NAMES = ("plane", "sphere", "box", "capsule", "cylinder", "hull")
PLANE, SPHERE, BOX, CAPSULE, CYLINDER, HULL = range(len(KIND_NAMES))
KIND_BY_NAME = {name: kind for kind, name in enumerate(KIND_NAMES)}
SIZE_KEYS = {"plane": (), "sphere": ("radius",), "box": ("size",),
             "capsule": ("radius", "length"), "cylinder": ("radius", "height"),
             "hull": ("points",)}
