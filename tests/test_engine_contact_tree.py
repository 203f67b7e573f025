"""Contacts on a joint tree (engine/solvers/contact_tree.py): the contact's response through
the tree is the Schur complement of the joints, checked against a dense computation."""
import numpy as np

from impulse.engine.contacts import rows as contact_rows
from impulse.engine.contacts import solve as contacts
from impulse.engine.scene import scene_to_world
from impulse.engine.solvers import SOLVERS, contact_tree, rounds
from impulse.engine.solvers.iterative import prepare

from test_engine_contacts import doc, ground


def _chain_on_the_ground():
    """Three plates on z hinges lying on the ground (the middle one tilted about z so the
    arms are not symmetric), and a loose box that is on no tree."""
    bodies = [ground()]
    joints = []
    for i, (x, y, angle) in enumerate([(-0.15, 0.02, 0.0), (0.0, 0.03, 0.1),
                                       (0.15, 0.02, 0.0)]):
        c, s = np.cos(angle / 2), np.sin(angle / 2)
        bodies.append({"name": f"link{i}", "shape": {"type": "box", "size": [0.15, 0.04, 0.1]},
                       "mass": 0.2 + 0.1 * i, "position": [x, y, 0.0],
                       "orientation": [c, 0.0, 0.0, s]})
        if i:
            joints.append({"name": f"h{i}", "type": "hinge",
                           "bodies": [f"link{i - 1}", f"link{i}"],
                           "anchor": [x - 0.075, 0.02, 0.0], "axis": [0, 0, 1]})
    bodies.append({"name": "loose", "shape": {"type": "box", "size": [0.1, 0.1, 0.1]},
                   "mass": 1.0, "position": [1.0, 0.05, 0.0]})
    return scene_to_world(doc(bodies, {"solver": "tree"}, joints))


def inverse_mass_matrix(w):
    """M^-1 over all bodies' (v, omega), world frame (static bodies: 0)."""
    B = w.B
    n = B.pos.shape[0]
    minv = np.zeros((6 * n, 6 * n))
    for b in range(n):
        if not B.static[b]:
            minv[6 * b:6 * b + 3, 6 * b:6 * b + 3] = B.inv_mass[b] * np.eye(3)
            minv[6 * b + 3:6 * b + 6, 6 * b + 3:6 * b + 6] = B.inv_inertia_w[b]
    return minv


def _mobility(w):
    """S = M^-1 - M^-1 G^T (G M^-1 G^T)^-1 G M^-1 over all bodies' (v, omega): the response
    to an impulse with the hinge rows (relative velocity at the anchor, relative spin about
    x and y; the hinges' axis is z) kept."""
    B, J = w.B, w.J
    n = B.pos.shape[0]
    minv = inverse_mass_matrix(w)
    rows = []
    for j in range(J.const.kind.shape[0]):
        a, b = J.const.body[j]
        for e in np.eye(3):        # e.(v_a + w_a x r_a - v_b - w_b x r_b)
            g = np.zeros(6 * n)
            g[6 * a:6 * a + 3], g[6 * a + 3:6 * a + 6] = e, np.cross(J.arm[j, 0], e)
            g[6 * b:6 * b + 3], g[6 * b + 3:6 * b + 6] = -e, -np.cross(J.arm[j, 1], e)
            rows.append(g)
        for e in np.eye(3)[:2]:    # e.(w_a - w_b)
            g = np.zeros(6 * n)
            g[6 * a + 3:6 * a + 6], g[6 * b + 3:6 * b + 6] = e, -e
            rows.append(g)
    G = np.array(rows)
    return minv - minv @ G.T @ np.linalg.solve(G @ minv @ G.T, G @ minv)


def _row(w, c, n, ra, rb, linear, angular):
    """Jacobian row of a linear impulse `linear` at arms ra/rb plus an angular impulse
    `angular`, + on contact c's body A and - on its body B."""
    row = np.zeros(6 * w.B.pos.shape[0])
    for side, r in ((0, ra), (1, rb)):
        b = c.body[n, side]
        if not w.B.static[b]:
            sgn = 1.0 if side == 0 else -1.0
            row[6 * b:6 * b + 3] += sgn * linear
            row[6 * b + 3:6 * b + 6] += sgn * (np.cross(r, linear) + angular)
    return row


def test_contact_response_through_a_joint_tree_is_the_schur_complement():
    w = _chain_on_the_ground()
    prepare(w.B, w.J, np.zeros((3, 3)))
    C, _ = w.collision.detect(w.settings.h)
    contacts.prepare(w.B, C)
    contact_rows.find_patches(C)
    contact_rows.prepare_rows(w.B, C, contact_rows.STAGE_POSITION, False, w.settings.h,
                              w.settings.to_array(0.0))
    assert rounds.ensure_factor(w.B, w.J, w.solver_work(), SOLVERS.index("tree"), True,
                                np.zeros((6, 3, 3)))
    contact_tree.set_keff(w.B, w.J, w.solver_work(), C)
    S = _mobility(w)
    loose = w.body_index("loose")
    on_tree = [c for c in range(C.body.shape[0]) if loose not in C.body[c]]
    assert len(on_tree) >= 8 and len(on_tree) < C.body.shape[0]
    zero = np.zeros(3)
    for c in range(C.body.shape[0]):
        if c not in on_tree:
            assert C.keff[c] == 0.0                # a free body: its own K
            continue
        j = _row(w, C, c, C.arm[c, 0], C.arm[c, 1], C.normal[c], zero)
        assert np.isclose(C.keff[c], j @ S @ j, rtol=1e-9, atol=0)
        if C.first[c] != c or C.prows[c] == 0:
            continue
        gx, gy, gz = w.settings.gravity      # the rows that act (contact_rows._counts)
        patch = [q for q in range(c, C.body.shape[0]) if C.first[q] == c and
                 contact_rows._counts(w.B, C, q, contact_rows.STAGE_POSITION, w.settings.h,
                                      gx, gy, gz)]
        centre = 0.5 * (w.B.pos[C.body[c, 0]] + C.arm[patch, 0]
                        + w.B.pos[C.body[c, 1]] + C.arm[patch, 1]).mean(axis=0)
        ra, rb = centre - w.B.pos[C.body[c, 0]], centre - w.B.pos[C.body[c, 1]]
        t = contact_rows.tangents(*C.normal[c])
        J3 = np.array([_row(w, C, c, ra, rb, np.array(t[:3]), zero),
                       _row(w, C, c, ra, rb, np.array(t[3:]), zero),
                       _row(w, C, c, ra, rb, zero, C.normal[c])])
        assert np.allclose(C.kpatch[c], J3 @ S @ J3.T, rtol=1e-9, atol=1e-12)
    # the joints take part: through the tree a contact is stiffer than on its body alone
    c = on_tree[0]
    assert C.keff[c] < 0.9 * C.k_normal[c, 0]
    w.collision.finish()


def test_a_tree_with_a_motor_or_servo_keeps_plain_contact_rows():
    """contact_tree.routes: contacts act through a tree without motors; a servo (or a
    velocity motor) on any enabled tree joint keeps them plain (the A1's stance,
    tests/test_import_stand.py), and a disabled one (a sleeping island's) does not count."""
    w = _chain_on_the_ground()
    assert contact_tree.routes(w.J, w.solver_work())
    for motor in ({"mode": "position", "target": 0.1, "max_force": 5.0},
                  {"mode": "velocity", "target": 0.5, "max_force": 5.0}):
        w = _chain_on_the_ground()
        w.edit_joint("h2", {"motor": motor})
        assert not contact_tree.routes(w.J, w.solver_work()), motor
        w.J.enabled[:] = False
        assert contact_tree.routes(w.J, w.solver_work()), motor
