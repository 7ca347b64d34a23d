"""The version, defined once: read by setuptools, `yota-src --version` and
`yota_src.__version__`."""

__version__ = "0.1.0"
