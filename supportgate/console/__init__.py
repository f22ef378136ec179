"""The procurement console: server-rendered pages under /ui over the domains' services."""
