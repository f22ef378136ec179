"""The procurement console: server-rendered pages under /ui over the domains' services."""

from .app import console_mount, create_console

__all__ = ["console_mount", "create_console"]
