"""Driver: mpmath.mpmathify on the input's text (argv: library dir, input file)."""
import sys

sys.path.insert(0, sys.argv[1])
import mpmath  # noqa: E402

try:
    mpmath.mpmathify(open(sys.argv[2], encoding="utf-8", errors="replace").read().strip())
except (ValueError, TypeError):
    pass
