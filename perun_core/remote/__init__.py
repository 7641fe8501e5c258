"""Sharing profiles through git remotes: push, fetch, pull (see :mod:`.sync` and :mod:`.layout`)."""
