#!/usr/bin/env python3
"""Time the one profile validation on a million stored (packed) resources.

Builds a ``time`` profile of ``--resources`` rows (100 uids), stores it in
the columnar layout, then ``--repeat`` times reads it back (not timed) and
times ``validate_profile`` on what was read, in this process.  Prints one
JSON object: ``validate_s`` with median, min and max, and the CPU time of
the median run (``cpu_median_s``), as the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perun_core.profile.codec import decode_content, encode_columnar  # noqa: E402
from perun_core.profile.model import Profile  # noqa: E402
from perun_core.profile.validate import validate_profile  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resources", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = [{"amount": i * 0.5, "uid": f"f{i % 100}", "type": "time"} for i in range(args.resources)]
    stored = encode_columnar(Profile.from_dict({"header": {"type": "time"}, "global": {"resources": rows}}))
    del rows
    validate_profile(decode_content(stored))  # warm-up
    walls, cpus = [], []
    for _ in range(args.repeat):
        # a profile read anew each time, as a command gets it: a column's numbers are unpacked once and kept, so
        # validating the same profile again would time only what is left after the first validation
        profile = decode_content(stored)
        started, used = time.perf_counter(), time.process_time()
        validate_profile(profile)
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - used)
    json.dump({"resources": args.resources, "loadavg": list(os.getloadavg()),
               "validate_s": {"median": round(statistics.median(walls), 4), "min": round(min(walls), 4),
                              "max": round(max(walls), 4), "n": args.repeat},
               "cpu_median_s": round(statistics.median(cpus), 4)}, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
