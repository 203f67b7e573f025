"""Constraint families. Each file derives its C, its velocity form and its K matrix at the top.

Every joint kind is a pair of lock masks over the joint frame of body A (columns x, y, z):
translational locks (bits x=1, y=2, z=4: which components of b - a must vanish) and
rotational locks (bits x=1, y=2, z=4: which relative rotations are removed) -- the six basic
constraints of Bender's paper as rows of one generic joint (joints/generic.py). The ball
joint keeps its own fast path (joints/ball.py).
"""
BALL, HINGE, SLIDER, UNIVERSAL, CYLINDRICAL, RAIL, PLANAR, FIXED, GENERIC = range(9)

KIND_NAMES = {"ball": BALL, "hinge": HINGE, "slider": SLIDER, "universal": UNIVERSAL,
              "cylindrical": CYLINDRICAL, "rail": RAIL, "planar": PLANAR, "fixed": FIXED,
              "generic": GENERIC}

# kind -> (translational lock mask, rotational lock mask); generic reads its own masks.
LOCKS = {BALL: (7, 0), HINGE: (7, 6), SLIDER: (6, 7), UNIVERSAL: (7, 4), CYLINDRICAL: (6, 6),
         RAIL: (6, 0), PLANAR: (1, 6), FIXED: (7, 7)}

# Free coordinates that limits, motors and springs act on:
COORD_NONE, COORD_ANGLE_X, COORD_OFFSET_X, COORD_ANGLE_B_Y = range(4)
# kind -> (primary coordinate, secondary coordinate)
COORDS = {BALL: (COORD_NONE, COORD_NONE), HINGE: (COORD_ANGLE_X, COORD_NONE),
          SLIDER: (COORD_OFFSET_X, COORD_NONE), UNIVERSAL: (COORD_ANGLE_X, COORD_ANGLE_B_Y),
          CYLINDRICAL: (COORD_ANGLE_X, COORD_OFFSET_X), RAIL: (COORD_OFFSET_X, COORD_NONE),
          PLANAR: (COORD_ANGLE_X, COORD_NONE), FIXED: (COORD_NONE, COORD_NONE),
          GENERIC: (COORD_NONE, COORD_NONE)}

# Joint parameter columns (JointConstants.param; an actuator's effort is the input
# Joints.effort)
(P_TLOCK, P_RLOCK, P_COORD1, P_COORD2, P_LO1, P_HI1, P_LIM1, P_LO2, P_HI2, P_LIM2,
 P_MOTOR, P_TARGET, P_MAX, P_BRAKE, P_SEQ_START, P_SEQ_LEN, P_SEQ_REPEAT, P_SPRING_K,
 P_SPRING_C, P_SPRING_REST, P_SIZE) = range(21)
MOTOR_NONE, MOTOR_VELOCITY, MOTOR_POSITION = range(3)

# Accumulated row impulses of the current step (Joints.acc): position stage, velocity stage
# (A_SAT, A_BOUND: the motor row's saturation inside the tree solve, joints/jacobian.py;
# A_VMOTOR: the motor's velocity-stage impulse; A_RATE_GOAL, A_GOAL, A_KEFF, A_H: what the
# position stage's motor row left for it -- the rate wanted at t + h, the servo's target at
# t + h, its effective row mass and the step h it ran with)
A_LO1, A_HI1, A_LO2, A_HI2, A_MOTOR, A_VLO1, A_VHI1, A_VLO2, A_VHI2, A_SERVO_MODE, A_SAT, \
    A_BOUND, A_VMOTOR, A_RATE_GOAL, A_GOAL, A_KEFF, A_H, A_SIZE = range(18)
SERVO_UNDECIDED, SERVO_DEADBEAT, SERVO_PROFILE = 0.0, 1.0, 2.0

# Joints.warm: what the locks' corrections asked of the joint in the last step's velocity
# stage (joints/warm_start.py): the change of the relative velocity along the translation
# rows and along the rotation rows, as world vectors, and the step length (0: none yet)
W_T, W_R, W_H, W_SIZE = 0, 3, 6, 7
