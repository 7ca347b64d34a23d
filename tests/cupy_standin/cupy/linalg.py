"""The stand-in's cupy.linalg: NumPy's, on the device's arrays."""

import numpy

from . import _populate

_populate(globals(), numpy.linalg)
