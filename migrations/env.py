"""Alembic environment for supportgate.

Where the database is, first found wins:
1. `config.attributes["connection"]`: an open connection (supportgate.db.migrate passes one);
2. `config.attributes["database_url"]`, or `alembic -x url=...` on the command line;
3. SUPPORTGATE_DATABASE_URL, else the default SQLite file (supportgate.config.Settings).
"""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection
from sqlmodel import SQLModel

import supportgate.db.tables  # noqa: F401 - registers the tables on SQLModel.metadata
from supportgate.config import Settings
from supportgate.db.engine import create_db_engine, database_url
from supportgate.db.migrate import migration_connection

config = context.config
if config.config_file_name is not None and config.attributes.get("configure_logging", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = SQLModel.metadata


def _url() -> str:
    explicit = config.attributes.get("database_url")
    explicit = explicit or context.get_x_argument(as_dictionary=True).get("url")
    return str(explicit) if explicit else Settings.from_env().database_url


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        transactional_ddl=True,  # SQLite too: SQLAlchemy emits BEGIN (supportgate.db.engine)
        compare_type=True,
        compare_server_default=True,
    )


def run_migrations_offline() -> None:
    """`alembic upgrade --sql`: print the SQL instead of running it."""
    url = database_url(_url())
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_as_batch=url.get_backend_name() == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():  # the caller's transaction: joined, not nested
            context.run_migrations()
        return
    engine = create_db_engine(_url())
    try:
        with migration_connection(engine) as opened:
            _configure(opened)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
