"""numba compile options shared by the hot kernels.

NO_REFCOUNT compiles a kernel without numba's reference counting (NRT), via numba's
underscore option `_nrt`. numba otherwise emits an atomic incref/decref call for every
array argument of every (inlined) helper call and every array view; in the joint loops that
was about 80 such calls per joint visit, several times the cost of the arithmetic. Rules
for a kernel compiled this way: it allocates no arrays (numba refuses to type np.empty
there) and only indexes arrays its caller keeps alive; it is called from other kernels,
not from Python.
"""
NO_REFCOUNT = {"_nrt": False}
