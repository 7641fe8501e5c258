"""Built-in postprocessors (registered in :data:`perun_core.units.postprocessors`).

One module per unit: :mod:`.normalizer`, :mod:`.regression_analysis` (also
named ``regression-analysis``), :mod:`.clusterizer`, :mod:`.filter`,
:mod:`.regressogram`, :mod:`.moving_average` and :mod:`.kernel_regression`.
:mod:`.common` holds what the model-building ones share: which region gets
the models, where skipped models are recorded, and the checks of their input.
"""
