"""Driver: idna.encode on the input's text (argv: library dir, input file)."""
import sys

sys.path.insert(0, sys.argv[1])
import idna  # noqa: E402

try:
    idna.encode(open(sys.argv[2], encoding="utf-8", errors="replace").read().strip())
except (idna.IDNAError, UnicodeError):
    pass
