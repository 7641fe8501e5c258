"""``python -m perun_tui`` runs the same entry point as ``perun-tui``."""

from perun_tui.app import main

raise SystemExit(main())
