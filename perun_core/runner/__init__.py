"""The runner: job matrices, temporary worktrees, measured processes and progress events."""
