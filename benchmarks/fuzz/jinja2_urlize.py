"""Driver: jinja2.utils.urlize on the input's text (argv: library dir, input file)."""
import sys

sys.path.insert(0, sys.argv[1])
from jinja2.utils import urlize  # noqa: E402

urlize(open(sys.argv[2], encoding="utf-8", errors="replace").read())
