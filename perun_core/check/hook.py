"""The git post-commit hook that profiles each new commit and checks it.

The hook file is ``<git common dir>/hooks/post-commit``, the directory
dulwich reports for the repository (``Repo.commondir()``), so linked
worktrees share it as git does.  perun's part is one block between marker
lines; installing again replaces that block, other content of an existing
hook is kept, and uninstalling removes only the block.

The block runs ``perun-core check --compute-missing head``: the job matrix is
run for the new commit (and its parent, when that lacks profiles), the new
profiles are registered and the commit is checked against its baselines.
A post-commit hook cannot stop a commit, so the check only reports.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import HookError
from ..atomic import atomic_write_text

if TYPE_CHECKING:  # pragma: no cover
    from ..storage.repository import PerunRepository

__all__ = ["BEGIN", "END", "HookResult", "default_command", "install", "uninstall"]

BEGIN = "# >>> perun post-commit hook >>>"
END = "# <<< perun post-commit hook <<<"
_SHELLS = ("sh", "bash", "dash", "zsh", "ksh")


@dataclass(frozen=True, slots=True)
class HookResult:
    """Where the hook is and what happened: ``created``, ``updated``, ``unchanged`` or ``removed``."""

    path: Path
    action: str
    command: str


def default_command() -> str:
    """The perun-core command line the hook runs: this Python with the CLI module."""
    return f"{shlex.quote(sys.executable)} -m perun_core.cli.main"


def hook_path(repo: PerunRepository) -> Path:
    """``hooks/post-commit`` in the git directory dulwich reports."""
    return Path(repo.vcs.repo.commondir()) / "hooks" / "post-commit"


def _block(command: str, root: Path) -> str:
    return "\n".join([
        BEGIN,
        "# Installed by 'perun-core install-hook': profile the new commit with the job matrix",
        "# and check it for performance changes; time-based changes are confirmed by",
        "# re-running the parent and the new commit alternately.  Remove this block to uninstall.",
        'if [ -z "$PERUN_HOOK_RUNNING" ]; then',
        "    PERUN_HOOK_RUNNING=1; export PERUN_HOOK_RUNNING",
        f"    (cd {shlex.quote(str(root))} && {command} --no-pager check --compute-missing head --confirm) || true",
        "fi",
        END,
    ]) + "\n"


def _split(text: str) -> tuple[str, str] | None:
    """(text before, text after) perun's block, or None when there is none."""
    start = text.find(BEGIN)
    if start < 0:
        return None
    end = text.find(END, start)
    if end < 0:
        raise ValueError("the perun block has no end marker")
    end += len(END)
    if text[end:end + 1] == "\n":
        end += 1
    return text[:start], text[end:]


def _check_shell(path: Path, text: str) -> None:
    first = text.splitlines()[0] if text else ""
    if first.startswith("#!"):
        words = first[2:].split()
        interpreter = os.path.basename(words[0]) if words else ""
        if interpreter == "env" and len(words) > 1:
            interpreter = os.path.basename(words[1])
        if interpreter not in _SHELLS:
            raise HookError(path, f"the existing hook is a {interpreter or 'non-shell'} script; "
                                  "call 'perun-core check --compute-missing head' from it yourself")


def install(repo: PerunRepository, command: str | None = None) -> HookResult:
    """Install (or refresh) perun's block in the post-commit hook; raises HookError."""
    command = command or default_command()
    path = hook_path(repo)
    block = _block(command, repo.root)
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise HookError(path, f"it cannot be read: {exc}") from None
    if text.strip():
        _check_shell(path, text)
        try:
            parts = _split(text)
        except ValueError as exc:
            raise HookError(path, str(exc)) from None
        if parts is None:
            new = text + ("" if text.endswith("\n") else "\n") + "\n" + block
            action = "updated"
        else:
            new = parts[0] + block + parts[1]
            action = "unchanged" if new == text else "updated"
    else:
        new = "#!/bin/sh\n" + block
        action = "created"
    try:
        if new != text:
            atomic_write_text(path, new)
        mode = path.stat().st_mode
        path.chmod(mode | stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    except OSError as exc:
        raise HookError(path, exc.strerror or str(exc)) from None
    return HookResult(path, action, command)


def uninstall(repo: PerunRepository) -> HookResult:
    """Remove perun's block (and the file, when nothing else is left in it)."""
    path = hook_path(repo)
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        parts = _split(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise HookError(path, str(exc)) from None
    if parts is None:
        return HookResult(path, "unchanged", "")
    rest = (parts[0].rstrip("\n") + "\n" + parts[1]).strip("\n")
    try:
        if rest in ("", "#!/bin/sh"):
            path.unlink()
        else:
            atomic_write_text(path, rest + "\n")
    except OSError as exc:
        raise HookError(path, exc.strerror or str(exc)) from None
    return HookResult(path, "removed", "")
