"""Package data, not code: the Rego policies and the default support matrix (matrix/data.yaml).

Installed as `supportgate.policies` (pyproject.toml maps this directory), so that an installed
supportgate finds them with importlib.resources (supportgate.package_data).
"""
