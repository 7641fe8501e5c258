"""The demo repositories, built through the porcelain (so they live under :mod:`perun_core.api`).

* :mod:`.synthetic`: :func:`~.synthetic.build_demo_repository`, a history with generated profiles
  (fast, deterministic; the tests use it);
* :mod:`.collected`: :func:`~.collected.build_collected_demo`, a small C project whose profiles
  are really collected (``perun-tui --demo``, :func:`perun_core.api.build_demo`);
* :mod:`.staging` (build beside the target, rename, reuse by a marker) and :mod:`.gitwrite`
  (commits from whole trees), which both use.

Nothing is imported here, so importing :mod:`perun_core.api` stays cheap.
"""
