"""supportgate: policy-as-code compliance for LLM inference deployments."""

__version__ = "0.1.0"
"""The one place the version is written: pyproject.toml reads it from here (setuptools'
`attr:`), so the installed metadata that `supportgate --version` prints always agrees."""
