"""The one builder of scene documents for the tests (each file used to write its own)."""

FORMAT = {"format": "impulse-scene", "version": 1}


def scene_doc(bodies, joints=(), settings=None, contacts=None, **top):
    """A scene document: the format header, any other top-level keys (`name`, `camera`...),
    `settings` where given, the bodies, and the joints and contacts where there are any."""
    d = {**FORMAT, **top}
    if settings is not None:
        d["settings"] = dict(settings)
    d["bodies"] = list(bodies)
    if joints:
        d["joints"] = list(joints)
    if contacts is not None:
        d["contacts"] = contacts
    return d
