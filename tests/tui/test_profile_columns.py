"""The profiles table beside long workloads (a fuzzer's inputs): the command and the time stay."""

from __future__ import annotations

import json
import subprocess

from perun_tui.app import PerunApp
from perun_tui.widgets.profiles import ProfilesTable

from .helpers import rendered_text, settle, wait_until


async def test_a_long_workload_is_cut_in_its_middle_before_the_command_goes(demo_repo):
    """After a fuzz run wrote profiles of workloads like /tmp/x/fuzzout/inputs/w121.txt, the workload column grew
    to 40 cells and pushed the time and cmd columns out at 80 columns: profiles of another program looked like the
    project's own.  The workload is cut in its middle (its file's name kept) so that both stay."""
    long = "/tmp/perun-fuzz/projects/sort/fuzzout/inputs/w12{}.txt"
    slow = subprocess.run(["git", "log", "--format=%H", "--grep", "plain"], cwd=demo_repo, capture_output=True,
                          text=True, check=True).stdout.split()[0]
    for number, path in enumerate(sorted((demo_repo / ".perun" / "jobs").glob("*.perf"))):
        data = json.loads(path.read_text())
        data["header"]["workload"] = long.format(number)
        data["origin"] = slow  # listed at the slowdown, whose registered profiles have no postprocessors
        path.write_text(json.dumps(data))
    app = PerunApp(demo_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.query_one(ProfilesTable)
        await pilot.press("slash", *"plain", "enter")  # the slowdown: no postprocessed profile, cmd shown at 80
        await wait_until(pilot, lambda: table.minor is not None and table.minor.startswith("cba88d3"))
        await settle(pilot)
        shown = [column.key.value for column in table.columns.values()]
        assert {"workload", "time", "cmd"} <= set(shown), shown
        text = rendered_text(table)
        assert "./sll-bench" in text
        pending = [tag for tag, info in table.infos.items() if not info.registered]
        assert pending
        for tag in pending:
            cell = str(table.get_row(tag)[shown.index("workload")])
            assert "…" in cell and cell.endswith(f"w12{tag[0]}.txt") and cell.startswith("/tmp"), cell
