"""Package data for Alembic: env.py and versions/ (the migration scripts), read by path.

Installed as `supportgate.migrations` (pyproject.toml maps this directory), so that an
installed supportgate finds them with importlib.resources (supportgate.package_data).
"""
