"""The workflow files of examples/ci: valid YAML, and every perun-core command in them parses."""

from __future__ import annotations

import re
import shlex

import click
import pytest
import yaml
from conftest import ROOT

from perun_core.cli.main import cli

EXAMPLES = ROOT / "examples" / "ci"


def _commands(doc) -> list[str]:
    found = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key in ("run", "script", "before_script") and isinstance(value, (str, list)):
                lines = value.splitlines() if isinstance(value, str) else value
                found += [line.strip() for line in lines if line.strip().startswith("perun-core ")]
            else:
                found += _commands(value)
    elif isinstance(doc, list):
        for item in doc:
            found += _commands(item)
    return found


def _parse(command: str) -> None:
    text = re.sub(r"\$\{\{[^}]*\}\}", "1", command)
    text = re.sub(r"\$\{?(\w+)\}?", "1", text)
    args = shlex.split(text)[1:]
    ctx = cli.make_context("perun-core", args, resilient_parsing=False)
    command_obj: click.Command = cli
    while isinstance(command_obj, click.Group) and _remaining(ctx):
        name, command_obj, rest = command_obj.resolve_command(ctx, _remaining(ctx))
        ctx = command_obj.make_context(name, rest, parent=ctx)


def _remaining(ctx: click.Context) -> list[str]:
    # click keeps a group's subcommand and its arguments apart until it invokes it
    return [*getattr(ctx, "_protected_args", []), *ctx.args]


@pytest.mark.parametrize("name", ["github-actions.yml", "gitlab-ci.yml"])
def test_workflows_run_valid_perun_commands(name):
    doc = yaml.safe_load((EXAMPLES / name).read_text())
    commands = _commands(doc)
    assert {c.split()[1] for c in commands} >= {"init", "pull", "run", "push", "check"}
    for command in commands:
        _parse(command)  # raises click.UsageError for an unknown option or command


def test_shard_counts_match_the_parallel_jobs():
    github = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text())
    shards = github["jobs"]["collect"]["strategy"]["matrix"]["shard"]
    steps = " ".join(step.get("run", "") for step in github["jobs"]["collect"]["steps"])
    assert f"--shard ${{{{ matrix.shard }}}}/{len(shards)}" in steps and shards == list(range(1, len(shards) + 1))
    gitlab = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text())
    assert gitlab["perun:collect"]["parallel"] == 4
    assert any("--shard \"${CI_NODE_INDEX}/${CI_NODE_TOTAL}\"" in line for line in gitlab["perun:collect"]["script"])


def test_a_bad_option_would_be_caught():
    with pytest.raises(click.UsageError):
        _parse("perun-core push --no-such-option")
