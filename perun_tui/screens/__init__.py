"""Full screens of perun-tui (one module per screen)."""
