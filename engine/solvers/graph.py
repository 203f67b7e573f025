"""Structure of the joint graph for the global solvers (linear.py, tree.py), built in Python.

Built once per joint-graph change (World edits: bodies, joints, `enabled`, `fixed`) and
handed to the numba kernels as one named tuple of flat arrays (`Work`), which also holds the
numeric storage of the factorisations so that a step allocates nothing.

Which joints a global solver takes (joints without a dynamic body cannot be corrected and
are left out):
- linear: the enabled ball joints ("global joints"); enabled joints of the other families
  (kind != BALL) are "other" joints, visited with the iterative Gauss-Seidel correction
  around each global solve;
- tree: every enabled joint, each as a node of up to 6 rows (its locks, and its motor or
  servo row while that stays inside its torque limit: joints/jacobian.py); limits stay
  Gauss-Seidel rows around the solve.

linear: the block matrix K over all global joints (block (j, i) != 0 iff j and i share a
  dynamic body). Fill-reducing order: greedy minimum degree on the joint graph; the symbolic
  elimination then gives the block pattern of L (fill included) and, per pivot column k, the
  list of block updates A_ij -= L_ik A_jk^T (i >= j rows of column k) as flat index arrays.
tree: Baraff's graph of body nodes (dynamic bodies) and joint nodes. Per connected component
  one spanning tree: rooted at its first joint to the world/a fixed body if it has one (that
  joint hangs the tree), else at its first body. Joints not in the tree (to the world a
  second time, or closing a loop between bodies) are loop-closing joints and go to the
  "other" joints. Nodes are listed in reversed depth-first preorder: every node after all
  of its children, which is the elimination order without fill-in.
"""
from collections import namedtuple

import numpy as np

from ..joints import BALL, P_LIM1, P_LIM2, P_MOTOR
from ..sleeping import root

LINEAR, TREE = 1, 2  # settings[S_SOLVER] values of the global solvers (0 = iterative)

Work = namedtuple("Work", [
    # linear: order, pattern, updates, contributions, values
    "lin_joint",     # (g,) joint at pivot position k
    "lin_other",     # (o,) other joints (Gauss-Seidel)
    "lin_col_ptr",   # (g+1,) off-diagonal entries e of column k: col_ptr[k] <= e < col_ptr[k+1]
    "lin_row",       # (e,) row position i > k of entry e (its slot is g + e)
    "lin_upd_ptr",   # (g+1,) updates of column k
    "lin_upd_a",     # (u,) entry e1 (row i) ...
    "lin_upd_b",     # (u,) ... entry e2 (row j <= i) ...
    "lin_upd_dst",   # (u,) ... slot of block (i, j): A_ij -= L_ik A_jk^T
    "lin_con_slot",  # (c,) contributions to K: slot += s K_C(r_row, r_col)
    "lin_con_body",  # (c,) body C
    "lin_con_rj",    # (c,) joint of the row, its side
    "lin_con_rs",
    "lin_con_cj",    # (c,) joint of the column, its side
    "lin_con_cs",
    "lin_val",       # (g+e, 3, 3) K blocks, then D (diagonal) and L (off-diagonal)
    "lin_a",         # (e, 3, 3) A_ik kept for the updates
    "lin_dinv",      # (g, 3, 3) D_k^-1
    "lin_scale",     # (g,) largest entry of K_kk (singular pivot test)
    "lin_y",         # (g, 3) right side / solution
    # tree: nodes, links, values
    "tr_order",      # (N,) node codes, children first: b >= 0 body, -(j+1) joint j
    "tr_joint",      # (t,) tree joints
    "tr_other",      # (o,) other joints: the loop-closing joints
    "tr_free",       # (f,) tree joints with limits or a motor (Gauss-Seidel rows each round)
    "tr_generic",    # (q,) tree joints that are not ball joints (their rows can change)
    "tr_child_side",  # (m,) side of the child body of tree joint j (-1: not a tree joint)
    "tr_has_parent",  # (m,) 1 if tree joint j's other side is its parent body node
    "tr_parent_joint",  # (n,) parent joint of body b (-1: root body or not in a tree)
    "tr_parent_side",   # (n,) side of b in its parent joint
    "tr_nchild",     # (n,) child joints of body b
    "tr_dinv",       # (n, 6, 6) D_b^-1 (articulated inverse mass)
    "tr_s",          # (n, 6, 6) sum over child joints of G^T E G
    "tr_e",          # (m, 6, 6) E_j = -D_j^-1 = (G_jc D_c^-1 G_jc^T)^-1 (leading n_j rows)
    "tr_nrow",       # (m,) rows n_j of tree joint j in the current factorisation
    "tr_g",          # (m, 2, 6, 6) unsigned Jacobian rows of joint j on side s (jacobian.py)
    "tr_motor",      # (m,) row index of the motor/servo row in the solve (-1: none)
    "tr_xb",         # (n, 6) forward vectors / solution (velocity changes) of body nodes
    "tr_xj",         # (m, 6) forward vectors / solution (impulses) of joint nodes
    "tr_zb",         # (n, 6)
    "tr_zj",         # (m, 6)
    "tr_gj",         # (6, 12) Gauss-Jordan / Cholesky scratch
    "tr_tmp",        # (6, 6) scratch
    # factorisation validity: the state it was computed for
    "fact_rot",      # (n, 3, 3)
    "fact_arm",      # (m, 2, 3)
    "fact_mass",     # (n, 4) inverse mass, inverse principal moments
    "fact_frame",    # (m, 2, 3, 3) joint frames
    "fact_code",     # (m,) rows of each tree joint (jacobian.row_code)
    "fact_kind",     # (1,) solver whose factorisation is current (0: none)
    "fact_ok",       # (1,) 1 if that factorisation succeeded (no singular pivot)
    "count",         # (3,) block operations of the last factorisation, factorisations, solves
])

C_FACTOR_OPS, C_FACTORS, C_SOLVES = 0, 1, 2


def topology(B, J):
    """What the joint graph's shape depends on: which bodies are fixed, the joints' bodies,
    which joints are on (compare to decide whether has_closed_loop must look again)."""
    return B.static.tobytes(), J.const.body.tobytes(), J.enabled.tobytes()


def key(B, J):
    """What the structure depends on (compare to decide on a rebuild)."""
    return topology(B, J) + (B.static.shape[0], J.const.kind.shape[0], J.const.kind.tobytes(),
                             J.const.param[:, [P_LIM1, P_LIM2, P_MOTOR]].tobytes())


def _classify(B, J):
    """(global ball joints, other joints, all correctable joints) in joint order."""
    static = B.static

    def dyn(b):
        return b >= 0 and not static[b]

    glob, other, every = [], [], []
    for j in range(J.const.kind.shape[0]):
        if not J.enabled[j] or not (dyn(J.const.body[j, 0]) or dyn(J.const.body[j, 1])):
            continue
        (glob if J.const.kind[j] == BALL else other).append(j)
        every.append(j)
    return glob, other, every, dyn


def _min_degree(adj):
    """Greedy minimum-degree elimination order of a graph {v: set(neighbours)}."""
    g = {v: set(nb) for v, nb in adj.items()}
    order = []
    while g:
        v = min(g, key=lambda u: (len(g[u]), u))
        nb = g.pop(v)
        for a in nb:
            g[a].discard(v)
            g[a] |= nb - {a}
        order.append(v)
    return order


def _linear(B, J, glob, dyn):
    body = J.const.body
    on_body = {}  # dynamic body -> [(joint, side)] of global joints
    for j in glob:
        for s in range(2):
            if dyn(body[j, s]):
                on_body.setdefault(int(body[j, s]), []).append((j, s))
    adj = {j: set() for j in glob}
    for lst in on_body.values():
        for a, _ in lst:
            adj[a] |= {b for b, _ in lst if b != a}
    order = _min_degree(adj)
    pos = {j: k for k, j in enumerate(order)}
    g = len(order)
    # symbolic elimination in that order: rows of each column (positions > k)
    nb = {pos[j]: {pos[i] for i in adj[j]} for j in glob}
    cols = []
    for k in range(g):
        rows = sorted(nb.pop(k))
        cols.append(rows)
        for r in rows:
            nb[r].discard(k)
            nb[r] |= set(rows) - {r}
    col_ptr = np.zeros(g + 1, dtype=np.int64)
    row, slot = [], {}
    for k, rows in enumerate(cols):
        for r in rows:
            slot[(r, k)] = g + len(row)
            row.append(r)
        col_ptr[k + 1] = len(row)
    upd_ptr = np.zeros(g + 1, dtype=np.int64)
    ua, ub, ud = [], [], []
    for k, rows in enumerate(cols):
        e0 = int(col_ptr[k])
        for x, ri in enumerate(rows):
            for y, rj in enumerate(rows[:x + 1]):
                ua.append(e0 + x)
                ub.append(e0 + y)
                ud.append(ri if ri == rj else slot[(ri, rj)])
        upd_ptr[k + 1] = len(ua)
    con = []
    for c, lst in on_body.items():
        for a, sa in lst:
            con.append((pos[a], c, a, sa, a, sa))
            for b, sb in lst:
                if pos[a] > pos[b]:
                    con.append((slot[(pos[a], pos[b])], c, a, sa, b, sb))
    con = np.array(con, dtype=np.int64).reshape(-1, 6)

    def i64(x):
        return np.asarray(x, dtype=np.int64)

    ne = len(row)
    return dict(
        lin_joint=i64(order), lin_col_ptr=col_ptr, lin_row=i64(row), lin_upd_ptr=upd_ptr,
        lin_upd_a=i64(ua), lin_upd_b=i64(ub), lin_upd_dst=i64(ud),
        lin_con_slot=con[:, 0].copy(), lin_con_body=con[:, 1].copy(),
        lin_con_rj=con[:, 2].copy(), lin_con_rs=con[:, 3].copy(),
        lin_con_cj=con[:, 4].copy(), lin_con_cs=con[:, 5].copy(),
        lin_val=np.zeros((g + ne, 3, 3)), lin_a=np.zeros((ne, 3, 3)),
        lin_dinv=np.zeros((g, 3, 3)), lin_scale=np.zeros(g), lin_y=np.zeros((g, 3)))


def _tree(B, J, glob, dyn):
    n, m = B.static.shape[0], J.const.kind.shape[0]
    body = J.const.body
    adj = {}
    for j in glob:
        for s in range(2):
            if dyn(body[j, s]):
                adj.setdefault(int(body[j, s]), []).append((j, s))
    child_side = -np.ones(m, dtype=np.int64)
    has_parent = np.zeros(m, dtype=np.int64)
    parent_joint = -np.ones(n, dtype=np.int64)
    parent_side = np.zeros(n, dtype=np.int64)
    nchild = np.zeros(n, dtype=np.int64)
    seen_body = np.zeros(n, dtype=bool)
    done = set()
    closing = []
    preorder = []

    def grow(root_body):
        stack = [root_body]
        seen_body[root_body] = True
        while stack:
            b = stack.pop()
            preorder.append(b)
            for j, s in adj[b]:
                if j in done:
                    continue
                done.add(j)
                o = int(body[j, 1 - s])
                if not dyn(o) or seen_body[o]:
                    closing.append(j)
                    continue
                child_side[j] = 1 - s
                has_parent[j] = 1
                parent_joint[o] = j
                parent_side[o] = 1 - s
                nchild[b] += 1
                seen_body[o] = True
                preorder.append(-(j + 1))
                stack.append(o)

    for j in glob:  # roots: joints that hang a component from the world or a fixed body
        if j in done or (dyn(body[j, 0]) and dyn(body[j, 1])):
            continue
        s = 0 if dyn(body[j, 0]) else 1
        b = int(body[j, s])
        done.add(j)
        if seen_body[b]:
            closing.append(j)
            continue
        child_side[j] = s
        parent_joint[b] = j
        parent_side[b] = s
        preorder.append(-(j + 1))
        grow(b)
    for b in sorted(adj):  # free-floating components: rooted at a body
        if not seen_body[b]:
            grow(b)
    order = np.asarray(preorder[::-1], dtype=np.int64)
    tree_joints = np.asarray(sorted(-c - 1 for c in preorder if c < 0), dtype=np.int64)
    return dict(
        tr_order=order, tr_joint=tree_joints, tr_closing=sorted(closing),
        tr_child_side=child_side, tr_has_parent=has_parent, tr_parent_joint=parent_joint,
        tr_parent_side=parent_side, tr_nchild=nchild,
        tr_dinv=np.zeros((n, 6, 6)), tr_s=np.zeros((n, 6, 6)), tr_e=np.zeros((m, 6, 6)),
        tr_nrow=np.zeros(m, dtype=np.int64), tr_g=np.zeros((m, 2, 6, 6)),
        tr_motor=-np.ones(m, dtype=np.int64),
        tr_xb=np.zeros((n, 6)), tr_xj=np.zeros((m, 6)), tr_zb=np.zeros((n, 6)),
        tr_zj=np.zeros((m, 6)), tr_gj=np.zeros((6, 12)), tr_tmp=np.zeros((6, 6)))


def has_closed_loop(B, J):
    """True if the enabled joints close a loop: union-find over the bodies, the world and
    every fixed body counting as one node; a joint whose two ends are joined already
    closes one (chain8's second suspension, the slider crank's rod)."""
    static = B.static
    world = static.shape[0]
    parent = np.arange(world + 1)

    def node(b):
        return world if b < 0 or static[b] else int(b)

    for j in range(J.const.kind.shape[0]):
        if not J.enabled[j]:
            continue
        a = root(parent, node(J.const.body[j, 0]))
        b = root(parent, node(J.const.body[j, 1]))
        if a == b:
            return True
        parent[a] = b
    return False


def build(B, J):
    """The Work tuple for the current joint graph (numeric parts zeroed, nothing factored)."""
    glob, other, every, dyn = _classify(B, J)
    n, m = B.static.shape[0], J.const.kind.shape[0]
    parts = _linear(B, J, glob, dyn)
    parts.update(_tree(B, J, every, dyn))
    closing = parts.pop("tr_closing")
    parts["lin_other"] = np.asarray(other, dtype=np.int64)
    parts["tr_other"] = np.asarray(sorted(closing), dtype=np.int64)
    parts["tr_generic"] = np.asarray([j for j in parts["tr_joint"] if J.const.kind[j] != BALL],
                                     dtype=np.int64)
    p = J.const.param
    parts["tr_free"] = np.asarray(
        [j for j in parts["tr_joint"] if J.const.kind[j] != BALL and (
            p[j, P_LIM1] != 0.0 or p[j, P_LIM2] != 0.0 or p[j, P_MOTOR] != 0.0)],
        dtype=np.int64)
    parts.update(fact_rot=np.zeros((n, 3, 3)), fact_arm=np.zeros((m, 2, 3)),
                 fact_frame=np.zeros((m, 2, 3, 3)), fact_code=-np.ones(m, dtype=np.int64),
                 fact_mass=np.zeros((n, 4)), fact_kind=np.zeros(1, dtype=np.int64),
                 fact_ok=np.zeros(1, dtype=np.int64), count=np.zeros(3, dtype=np.int64))
    return Work(**parts)


def describe(W):
    """Sizes of the structure (for tests and the bench)."""
    return {"global_joints": int(W.lin_joint.shape[0]),
            "linear_fill_blocks": int(W.lin_row.shape[0]),
            "linear_updates": int(W.lin_upd_a.shape[0]),
            "tree_joints": int(W.tr_joint.shape[0]),
            "tree_nodes": int(W.tr_order.shape[0]),
            "closing_or_other_joints": int(W.tr_other.shape[0])}
