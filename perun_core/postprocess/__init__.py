"""Built-in postprocessors (registered in :data:`perun_core.units.postprocessors`)."""
