"""Performance fuzzing: find the inputs that make a program slow, and shrink them to their cause.

* :mod:`.rules`: the mutation rules (a registry, each rule declaring its
  parameters with :class:`~perun_core.params.Param`),
* :mod:`.options`: the parameters of ``fuzz`` and ``deltadebugging``,
* :mod:`.measure`: running the program on candidate inputs (in parallel,
  through the spawn helper) and the optional gcov pre-filter,
* :mod:`.textrules`: code-point-aware growth rules and the seed dictionary,
* :mod:`.dictionary`: the tokens of ``--dict`` and of ``--source`` (literals),
* :mod:`.guidance`: hit-count guidance (:mod:`.hittrace` counts in a Python child),
* :mod:`.search`: the search itself, its events and results,
* :mod:`.confirm`: the reference at equal size and the analysis of the best
  inputs; :mod:`.growth`: the part that made an input slow, scaled and fitted;
  :mod:`.scaling`: the counts it is measured at,
* :mod:`.output`: ``results.json``, ``results.md`` and ``slowdown.svg``,
* :mod:`.deltadebug`: ddmin over lines, then characters (keeping time, density or growth).

Front ends use :mod:`perun_core.api.fuzz`.
"""
