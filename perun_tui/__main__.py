"""``python -m perun_tui`` runs the same entry point as ``perun-tui``."""

from perun_tui.cli import main

raise SystemExit(main())
