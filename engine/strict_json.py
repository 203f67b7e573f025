"""Strict JSON out: every document the program prints or writes parses with any JSON parser.
Non-finite numbers become null (the figure is missing, never `NaN`/`Infinity` tokens); numpy
scalars and arrays become plain numbers and lists."""
import json
import math

import numpy as np


def plain(x):
    """`x` with numpy values made Python ones and non-finite floats made None."""
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return plain(x.tolist())
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else None
    return x


def dumps(x, **kwargs):
    return json.dumps(plain(x), allow_nan=False, **kwargs)
