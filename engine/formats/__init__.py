"""Import of other model formats (URDF, MJCF) into scene entries.

No numba here and no kernel imports this package (tests/test_kernel_cache.py), so it is
left out of the kernel cache's key: editing an importer compiles nothing.
"""
