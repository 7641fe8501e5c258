"""Full screens of perun-tui, one module each: main (history and profiles), plot, run, job matrix, checks, diff, fuzz, bisect."""
