"""Controller input: one action set for both hands, suggested bindings, per-frame hand state.

Actions (each with subaction paths /user/hand/left and /user/hand/right): grip pose, aim
pose, squeeze (grab, float), trigger (float), thumbstick (vector2), menu (bool) and a
haptic output. Boolean controls (e.g. the simple controller's select button) bound to a
float action read as 0.0 / 1.0.

A desktop controller emulation (``app/vr/emulation.py``, set as ``Controls.emulation``)
writes its hand after the runtime's values every frame while focused. Tests can override any
field of a hand with ``Controls.simulate(hand, ...)``; overrides are applied after that,
every frame, until ``clear_simulation()``.
"""

from __future__ import annotations

import ctypes
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import xr

from .xrmath import pose_to_matrix

HANDS = ("left", "right")
LEFT, RIGHT = 0, 1

# Squeeze hysteresis for grabbing: press above GRAB_ON, release below GRAB_OFF.
GRAB_ON, GRAB_OFF = 0.6, 0.4

# action name -> input/output path per profile ("" = not bound on that profile).
# Paths are relative to /user/hand/{left,right}; a (left, right) tuple gives per-hand paths.
BINDINGS = {
    "/interaction_profiles/khr/simple_controller": {
        "grip_pose": "/input/grip/pose", "aim_pose": "/input/aim/pose",
        "squeeze": "/input/select/click", "menu": "/input/menu/click",
        "haptic": "/output/haptic",
    },
    "/interaction_profiles/oculus/touch_controller": {
        "grip_pose": "/input/grip/pose", "aim_pose": "/input/aim/pose",
        "squeeze": "/input/squeeze/value", "trigger": "/input/trigger/value",
        "thumbstick": "/input/thumbstick", "menu": ("/input/menu/click", ""),
        "haptic": "/output/haptic",
    },
    "/interaction_profiles/valve/index_controller": {
        "grip_pose": "/input/grip/pose", "aim_pose": "/input/aim/pose",
        "squeeze": "/input/squeeze/value", "trigger": "/input/trigger/value",
        "thumbstick": "/input/thumbstick", "menu": "/input/b/click",
        "haptic": "/output/haptic",
    },
    "/interaction_profiles/microsoft/motion_controller": {
        "grip_pose": "/input/grip/pose", "aim_pose": "/input/aim/pose",
        "squeeze": "/input/squeeze/click", "trigger": "/input/trigger/value",
        "thumbstick": "/input/thumbstick", "menu": "/input/menu/click",
        "haptic": "/output/haptic",
    },
    "/interaction_profiles/htc/vive_controller": {
        "grip_pose": "/input/grip/pose", "aim_pose": "/input/aim/pose",
        "squeeze": "/input/squeeze/click", "trigger": "/input/trigger/value",
        "thumbstick": "/input/trackpad", "menu": "/input/menu/click",
        "haptic": "/output/haptic",
    },
}

ACTION_TYPES = {
    "grip_pose": xr.ActionType.POSE_INPUT,
    "aim_pose": xr.ActionType.POSE_INPUT,
    "squeeze": xr.ActionType.FLOAT_INPUT,
    "trigger": xr.ActionType.FLOAT_INPUT,
    "thumbstick": xr.ActionType.VECTOR2F_INPUT,
    "menu": xr.ActionType.BOOLEAN_INPUT,
    "haptic": xr.ActionType.VIBRATION_OUTPUT,
}

_POSE_VALID = (xr.SpaceLocationFlags.ORIENTATION_VALID_BIT
               | xr.SpaceLocationFlags.POSITION_VALID_BIT)


@dataclass
class HandState:
    """One hand this frame; poses are world-space (4, 4), velocities world-space (3,)."""

    active: bool = False
    grip: np.ndarray = field(default_factory=lambda: np.eye(4))
    aim: np.ndarray = field(default_factory=lambda: np.eye(4))
    linear_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    angular_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    squeeze: float = 0.0
    trigger: float = 0.0
    thumbstick: np.ndarray = field(default_factory=lambda: np.zeros(2))
    menu: bool = False
    grabbing: bool = False
    grab_started: bool = False
    grab_released: bool = False
    pressing: bool = False          # trigger held (same hysteresis as squeeze)
    press_started: bool = False     # trigger went down this frame
    menu_started: bool = False      # menu button went down this frame


class Controls:
    """The action set of a session: create, attach, sync each frame, haptics."""

    def __init__(self, instance, session) -> None:
        self.instance, self.session = instance, session
        self.hand_paths = [xr.string_to_path(instance, f"/user/hand/{h}") for h in HANDS]
        self.action_set = xr.create_action_set(instance, xr.ActionSetCreateInfo(
            action_set_name="impulse", localized_action_set_name="Impulse viewer", priority=0))
        self.actions = {
            name: xr.create_action(self.action_set, xr.ActionCreateInfo(
                action_name=name.replace("_", "-"), action_type=kind,
                subaction_paths=self.hand_paths,
                localized_action_name=name.replace("_", " ")))
            for name, kind in ACTION_TYPES.items()
        }
        self.bound_profiles = self._suggest_bindings()
        xr.attach_session_action_sets(session, xr.SessionActionSetsAttachInfo(
            action_sets=[self.action_set]))
        self.spaces = {
            (name, h): xr.create_action_space(session, xr.ActionSpaceCreateInfo(
                action=self.actions[name], subaction_path=self.hand_paths[h],
                pose_in_action_space=xr.Posef()))
            for name in ("grip_pose", "aim_pose") for h in (LEFT, RIGHT)
        }
        self.hands = [HandState(), HandState()]
        self.simulated: list[dict] = [{}, {}]
        self.emulation = None       # ControllerEmulation: apply(hand, state, world_from_stage)
        self.haptics_sent: deque = deque(maxlen=64)

    def _suggest_bindings(self) -> list[str]:
        """Suggest BINDINGS for every profile; return the profiles the runtime accepted."""
        accepted = []
        for profile, table in BINDINGS.items():
            bindings = []
            for name, paths in table.items():
                per_hand = paths if isinstance(paths, tuple) else (paths, paths)
                for hand, sub in zip(HANDS, per_hand, strict=True):
                    if sub:
                        bindings.append(xr.ActionSuggestedBinding(
                            action=self.actions[name],
                            binding=xr.string_to_path(self.instance, f"/user/hand/{hand}{sub}")))
            try:
                xr.suggest_interaction_profile_bindings(
                    self.instance, xr.InteractionProfileSuggestedBinding(
                        interaction_profile=xr.string_to_path(self.instance, profile),
                        suggested_bindings=bindings))
            except xr.PathUnsupportedError:
                continue  # a runtime may not know every profile; the others still work
            accepted.append(profile)
        return accepted

    def current_profile(self, hand: int) -> str:
        """Interaction profile path bound to a hand now ("" when none)."""
        state = xr.get_current_interaction_profile(self.session, self.hand_paths[hand])
        if not state.interaction_profile:
            return ""
        return xr.path_to_string(self.instance, state.interaction_profile)

    def _get(self, fn, name: str, hand: int):
        return fn(self.session, xr.ActionStateGetInfo(
            action=self.actions[name], subaction_path=self.hand_paths[hand]))

    def _locate(self, name: str, hand: int, base_space, time: int):
        """(valid, pose matrix, linear velocity, angular velocity) of an action space."""
        velocity = xr.SpaceVelocity()
        location = xr.SpaceLocation(next=ctypes.cast(ctypes.pointer(velocity), ctypes.c_void_p))
        result = xr.check_result(xr.raw_functions.xrLocateSpace(
            self.spaces[(name, hand)], base_space, time, ctypes.byref(location)))
        if result.is_exception():
            raise result
        valid = (location.location_flags & _POSE_VALID) == _POSE_VALID
        lin = np.array([velocity.linear_velocity.x, velocity.linear_velocity.y,
                        velocity.linear_velocity.z])
        ang = np.array([velocity.angular_velocity.x, velocity.angular_velocity.y,
                        velocity.angular_velocity.z])
        if not velocity.velocity_flags & xr.SpaceVelocityFlags.LINEAR_VALID_BIT:
            lin[:] = 0.0
        if not velocity.velocity_flags & xr.SpaceVelocityFlags.ANGULAR_VALID_BIT:
            ang[:] = 0.0
        return valid, pose_to_matrix(location.pose), lin, ang

    def update(self, base_space, time: int, world_from_stage: np.ndarray, focused: bool) -> None:
        """Sync actions and read both hands at ``time`` (poses mapped into the world)."""
        if focused:
            xr.sync_actions(self.session, xr.ActionsSyncInfo(
                active_action_sets=[xr.ActiveActionSet(self.action_set, xr.NULL_PATH)]))
        rot = world_from_stage[:3, :3]
        for h, hand in enumerate(self.hands):
            was_grabbing, was_pressing, was_menu = hand.grabbing, hand.pressing, hand.menu
            if focused:
                valid, grip, lin, ang = self._locate("grip_pose", h, base_space, time)
                aim_valid, aim, _, _ = self._locate("aim_pose", h, base_space, time)
                hand.active = valid and bool(self._get(
                    xr.get_action_state_pose, "grip_pose", h).is_active)
                hand.grip = world_from_stage @ grip
                hand.aim = world_from_stage @ aim if aim_valid else hand.grip
                hand.linear_velocity, hand.angular_velocity = rot @ lin, rot @ ang
                read_float = xr.get_action_state_float
                hand.squeeze = float(self._get(read_float, "squeeze", h).current_state)
                hand.trigger = float(self._get(read_float, "trigger", h).current_state)
                stick = self._get(xr.get_action_state_vector2f, "thumbstick", h).current_state
                hand.thumbstick = np.array([stick.x, stick.y])
                hand.menu = bool(self._get(xr.get_action_state_boolean, "menu", h).current_state)
            else:
                hand.active, hand.squeeze, hand.trigger, hand.menu = False, 0.0, 0.0, False
            if focused and self.emulation is not None:
                self.emulation.apply(h, hand, world_from_stage)
            for key, value in self.simulated[h].items():
                is_array = isinstance(value, (list, tuple, np.ndarray))
                setattr(hand, key, np.array(value, float) if is_array else value)
            threshold = GRAB_OFF if was_grabbing else GRAB_ON
            hand.grabbing = hand.squeeze > threshold
            hand.grab_started = hand.grabbing and not was_grabbing
            hand.grab_released = was_grabbing and not hand.grabbing
            hand.pressing = hand.trigger > (GRAB_OFF if was_pressing else GRAB_ON)
            hand.press_started = hand.pressing and not was_pressing
            hand.menu_started = bool(hand.menu) and not was_menu

    def simulate(self, hand: int, **fields) -> None:
        """Override HandState fields of ``hand`` (e.g. grip=matrix, squeeze=1.0) from now on."""
        unknown = set(fields) - set(HandState.__dataclass_fields__)
        if unknown:
            raise TypeError(f"unknown hand fields: {sorted(unknown)}")
        self.simulated[hand].update(fields)

    def clear_simulation(self) -> None:
        """Drop all simulated hand overrides."""
        self.simulated = [{}, {}]

    def pulse(self, hand: int, amplitude: float = 0.8, duration_s: float = 0.05,
              frequency_hz: float = 0.0) -> None:
        """Haptic pulse on ``hand`` (frequency 0 lets the runtime choose)."""
        vibration = xr.HapticVibration(
            duration=int(duration_s * 1e9), frequency=frequency_hz or xr.FREQUENCY_UNSPECIFIED,
            amplitude=amplitude)
        xr.apply_haptic_feedback(self.session, xr.HapticActionInfo(
            action=self.actions["haptic"], subaction_path=self.hand_paths[hand]),
            ctypes.cast(ctypes.pointer(vibration), ctypes.POINTER(xr.HapticBaseHeader)).contents)
        self.haptics_sent.append((hand, amplitude, duration_s))

    def destroy(self) -> None:
        """Destroy the action spaces and the action set (its actions go with it)."""
        for space in self.spaces.values():
            xr.destroy_space(space)
        self.spaces.clear()
        if self.action_set is not None:
            xr.destroy_action_set(self.action_set)
            self.action_set = None
