"""What the profiles pane shows on a repository without any profile: how to collect the first ones."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


def first_use_text() -> Text:
    """The steps to the first profiles, in words, with the keys in bold."""
    text = Text()
    text.append("No profiles yet.", style="bold")
    text.append(" To collect the first ones:\n\n")
    for key, what in (
        ("e", "edit the job matrix: the commands to profile, their arguments and workloads, and the collectors "
              "that measure them (ctrl+s saves)"),
        ("R", "run the matrix for HEAD (space marks other commits to run it for instead)"),
    ):
        text.append(f" {key} ", style="bold reverse")
        text.append(f"  {what}\n")
    text.append("\nThe profiles then show here; c checks them against the commits before.")
    return text


class FirstUse(Static):
    """Stands where the profiles table would be while the repository has no profile at all."""

    DEFAULT_CSS = """
    FirstUse {
        height: 1fr;
        padding: 1 2;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(first_use_text(), id=id)
