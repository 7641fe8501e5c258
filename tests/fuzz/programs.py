"""Small real programs with known performance bugs, written for the fuzzing tests.

Each is a Python script (started with ``-S`` to keep its start-up short)
that reads the input file named by its first argument.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: the paper's Java class-name regex, with its unescaped dot: backtracks exponentially on near misses
REGEX = r'''
import re, sys
pattern = re.compile(r"^(([a-z])+.)+[A-Z]([a-z])+$")
with open(sys.argv[1], "rb") as handle:
    for line in handle.read().decode("utf-8", "replace").splitlines():
        pattern.match(line)
'''

#: a word counter over a chained hash table whose hash looks at only eight evenly spaced characters
#: of long words (the Java 1.1 string hash): words that differ elsewhere share a bucket.  It counts the
#: words four times over, so that the table's work, not the interpreter's start-up, is most of a run:
#: with start-up most of it, the noise of a run hid every small step towards the slow inputs, and the
#: search for 5x took 10 to 204 s (it waited for one lucky jump); four passes took 17 and 30 s
HASH = r'''
import sys
BUCKETS = 1024
def weak_hash(word):
    h = 0
    step = max(1, len(word) // 8) if len(word) > 15 else 1
    for i in range(0, len(word), step):
        h = (37 * h + ord(word[i])) & 0xFFFFFFFF
    return h % BUCKETS
table = [[] for _ in range(BUCKETS)]
with open(sys.argv[1], "rb") as handle:
    words = handle.read().decode("utf-8", "replace").split()
for word in words * 4:
    chain = table[weak_hash(word)]
    for entry in chain:
        if entry[0] == word:
            entry[1] += 1
            break
    else:
        chain.append([word, 1])
print(sum(len(chain) for chain in table))
'''

#: insertion sort of the input's lines: quadratic in the number of lines
SORT = r'''
import sys
with open(sys.argv[1], "rb") as handle:
    lines = handle.read().split(b"\n")
for i in range(1, len(lines)):
    current = lines[i]
    j = i - 1
    while j >= 0 and lines[j] > current:
        lines[j + 1] = lines[j]
        j -= 1
    lines[j + 1] = current
sys.stdout.buffer.write(b"\n".join(lines[:3]))
'''


def write_program(directory: Path, name: str, source: str) -> Path:
    """``source`` as an executable script ``directory/name``."""
    path = directory / name
    path.write_text(f"#!{sys.executable} -S\n{source.lstrip()}")
    path.chmod(0o755)
    return path


def hash_seed() -> str:
    """Lines of 300 distinct long identifiers that differ only where the weak hash does not look."""
    base = "configuration_entry_0000"
    words = [f"{base[:19]}{i // 100:02d}{base[21]}{i % 100:02d}" for i in range(300)]
    return "\n".join(" ".join(words[i:i + 8]) for i in range(0, len(words), 8)) + "\n"


def sort_seed() -> str:
    """A hundred short lines in a scrambled order."""
    return "\n".join(f"line {(i * 37) % 101:03d} of the seed" for i in range(100)) + "\n"
