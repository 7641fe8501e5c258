"""Driver: urllib3.util.parse_url on the input's text (argv: library dir, input file)."""
import sys

sys.path.insert(0, sys.argv[1])
from urllib3.util import parse_url  # noqa: E402
from urllib3.exceptions import LocationParseError  # noqa: E402

text = open(sys.argv[2], encoding="utf-8", errors="replace").read()
try:
    parse_url(text)
except LocationParseError:
    pass
