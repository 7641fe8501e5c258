"""Driver: sqlparse.parse(text) (argv: library dir, input file)."""
import sys

sys.path.insert(0, sys.argv[1])
import sqlparse  # noqa: E402

sqlparse.parse(open(sys.argv[2], encoding="utf-8", errors="replace").read())
