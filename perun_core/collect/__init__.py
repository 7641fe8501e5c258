"""Built-in collectors (registered in :data:`perun_core.units.collectors`)."""
