"""Driver: bleach.clean keeping style attributes (argv: library dir, input file)."""
import sys

sys.path.insert(0, sys.argv[1])
import bleach  # noqa: E402

bleach.clean(open(sys.argv[2], encoding="utf-8", errors="replace").read(), tags=["p", "span", "a"],
             attributes={"*": ["style"]}, styles=["color", "font-weight", "background"])
