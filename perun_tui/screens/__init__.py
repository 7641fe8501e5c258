"""Full screens of the TUI, one module each."""
