"""A user module whose values functions import inside their bodies (test_specialisation)."""

GAIN = 2.0
