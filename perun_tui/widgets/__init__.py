"""Widgets of perun-tui by pane: history, profiles, commit, the plot pane, the job matrix, parameter forms."""
