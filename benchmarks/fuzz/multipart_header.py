"""Driver: multipart's parse_options_header on the input (a Content-Type value) (argv: library dir, input file)."""
import sys

sys.path.insert(0, sys.argv[1])
from multipart.multipart import parse_options_header  # noqa: E402

parse_options_header(open(sys.argv[2], "rb").read().rstrip(b"\r\n"))
