"""Where the joints and springs are now, in world coordinates (what the viewer's joint gizmos
draw): per joint its kind, both anchors, the centres of its two bodies, its frame on each
side, its free coordinates' types and limits, a servo's target now and a velocity motor's
target rate; per spring its two anchors and centres.

Read from the joint and spring tables with plain numpy (no kernel compiles: the viewer calls
this on its UI thread; a motor target comes from the kernel's Python original)."""
from dataclasses import dataclass

import numpy as np

from .joints import (
    MOTOR_NONE,
    MOTOR_POSITION,
    MOTOR_VELOCITY,
    P_COORD1,
    P_COORD2,
    P_HI1,
    P_HI2,
    P_LIM1,
    P_LIM2,
    P_LO1,
    P_LO2,
    P_MOTOR,
)
from .joints.generic import target_at


@dataclass
class JointPoses:
    kind: np.ndarray             # (m,) joint kind (engine.joints.BALL ...)
    anchor: np.ndarray           # (m,2,3) world anchor on body A and on body B
    centre: np.ndarray           # (m,2,3) world centre of body A and of body B
    attached: np.ndarray         # (m,2) bool: the side is a body (False: the world)
    frame: np.ndarray            # (m,2,3,3) joint frame of each side, world (columns x, y, z)
    coord: np.ndarray            # (m,2) int free coordinate types (engine.joints.COORD_*)
    limits: np.ndarray           # (m,2,2) lower, upper of each coordinate (inf: no stop)
    target: np.ndarray           # (m,) a servo's target of the first coordinate now (nan: none)
    rate: np.ndarray             # (m,) a velocity motor's target rate of it (nan: none)
    spring_anchor: np.ndarray    # (s,2,3) world anchors of the springs
    spring_centre: np.ndarray    # (s,2,3) world centres of their bodies
    spring_attached: np.ndarray  # (s,2) bool


def _to_world(B, body, local):
    """Points (k,2,3) or frames (k,2,3,3) given in each side's principal frame -> world; the
    world side (body -1) is given in world coordinates already."""
    moving = body >= 0
    b = np.where(moving, body, 0)
    if local.ndim == 3:
        turned = np.einsum("ksab,ksb->ksa", B.rot[b], local) + B.pos[b]
        return np.where(moving[..., None], turned, local)
    turned = np.einsum("ksab,ksbc->ksac", B.rot[b], local)
    return np.where(moving[..., None, None], turned, local)


def _centres(B, body):
    return np.where((body >= 0)[..., None], B.pos[np.where(body >= 0, body, 0)], 0.0)


def joint_poses(world):
    """The JointPoses of a World now."""
    B, J, Sp = world.B, world.J, world.Sp
    m, s = len(world.joint_models), len(world.spring_models)
    body, sbody, param = J.const.body[:m], Sp.const.body[:s], J.const.param[:m]
    limits = np.tile([-np.inf, np.inf], (m, 2, 1))
    for which, (lo, hi, on) in enumerate(((P_LO1, P_HI1, P_LIM1), (P_LO2, P_HI2, P_LIM2))):
        limited = param[:, on] != 0.0
        limits[limited, which] = param[limited][:, [lo, hi]]
    target, rate = np.full(m, np.nan), np.full(m, np.nan)
    for j in np.flatnonzero(param[:, P_MOTOR] != MOTOR_NONE):
        value = getattr(target_at, "py_func", target_at)(J, j, world.time)   # (interpreted)
        if param[j, P_MOTOR] == MOTOR_POSITION:
            target[j] = value
        elif param[j, P_MOTOR] == MOTOR_VELOCITY:
            rate[j] = value
    return JointPoses(
        kind=np.array(J.const.kind[:m]), anchor=_to_world(B, body, J.const.anchor[:m]),
        centre=_centres(B, body), attached=body >= 0, frame=_to_world(B, body, J.const.frame[:m]),
        coord=param[:, [P_COORD1, P_COORD2]].astype(np.int64), limits=limits, target=target,
        rate=rate, spring_anchor=_to_world(B, sbody, Sp.const.anchor[:s]),
        spring_centre=_centres(B, sbody), spring_attached=sbody >= 0)
