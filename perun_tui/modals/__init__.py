"""Modal dialogs of perun-tui: confirm, help, profile details, postprocess, check two profiles."""
