"""Full screens of perun-tui: main (history and profiles), plot, run, job matrix, checks."""
