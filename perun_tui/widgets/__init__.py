"""Widgets of perun-tui, one module per pane or dialog."""
