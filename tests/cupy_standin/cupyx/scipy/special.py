"""The stand-in's cupyx.scipy.special: SciPy's, on the device's arrays."""

import scipy.special
from cupy import _populate

_populate(globals(), scipy.special)
