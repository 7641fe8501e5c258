"""Remotes and their transport: a remote's name or URL, dulwich's client for it, its announced head.

Every failure of the transport (network, protocol, a path that is no git
repository) becomes one :class:`~perun_core.errors.RemoteError`.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import PerunError, RemoteError
from . import layout

# dulwich logs what it finds odd in a repository (a ref naming an absent object) to stderr; perun
# reports such a remote with its own single error line, and -v (which sets up logging) still shows them
logging.getLogger("dulwich").addHandler(logging.NullHandler())

__all__ = ["Remote", "client_of", "remote_head", "resolve_remote", "scp_like", "talking"]


@dataclass(frozen=True, slots=True)
class Remote:
    """A remote by the name the user gave (or its URL) and the URL dulwich opens."""

    name: str
    url: str

    @property
    def key(self) -> str:
        """Where its tracking state is kept: the remote's name, or a digest of a bare URL."""
        if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", self.name) and self.name != self.url:
            return self.name
        return "url-" + hashlib.sha1(self.url.encode()).hexdigest()[:12]


def resolve_remote(repo: Any, remote: str | None) -> Remote:
    """A remote by its name in the git configuration (default ``origin``), or a URL or path."""
    name = remote or "origin"
    try:
        config = repo.vcs.repo.get_config()
        url = os.fsdecode(config.get((b"remote", os.fsencode(name)), b"url"))
        _check_text(name, url)
        if "://" not in url and not scp_like(url):
            path = Path(url).expanduser()
            url = str(path if path.is_absolute() else (Path(repo.vcs_root) / path).resolve())
        return Remote(name, url)
    except KeyError:
        pass
    if remote is None:
        raise RemoteError("origin", "the git repository has no remote named 'origin'",
                          hint="name a remote or give a URL or path: perun-core push URL")
    _check_text(remote, remote)
    if "://" in remote or scp_like(remote):
        return Remote(remote, remote)
    path = Path(remote).expanduser()
    if not path.exists():
        raise RemoteError(remote, "is neither a remote of the git repository nor an existing path or URL")
    return Remote(remote, str(path.resolve()))


def _check_text(remote: str, url: str) -> None:
    """Refuse a remote whose URL or path holds bytes that are not UTF-8 (the command line and git's
    configuration give them as lone surrogates): its tracking state and messages are text."""
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        raise RemoteError(remote, "holds bytes that are not UTF-8 text; expected a URL, a path or a remote "
                          "name in UTF-8") from None


def scp_like(text: str) -> bool:
    return bool(re.match(r"^[^/:]+@[^/:]+:", text))


#: URL schemes dulwich has a client for; any other would be read as an scp-like ssh address ("ftp" the host)
TRANSPORT_SCHEMES = ("file", "git", "ssh", "git+ssh", "ssh+git", "http", "https")


def client_of(remote: Remote) -> tuple[Any, str]:
    from dulwich.client import get_transport_and_path

    scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)://", remote.url)
    if scheme and scheme.group(1).lower() not in TRANSPORT_SCHEMES:
        raise RemoteError(remote.name, f"'{scheme.group(1)}://' is not a transport perun can use; expected "
                          + ", ".join(f"{s}://" for s in TRANSPORT_SCHEMES if "+" not in s) + ", user@host:path or a path")
    try:
        return get_transport_and_path(remote.url)
    except Exception as exc:  # noqa: BLE001 - dulwich raises several kinds for a bad URL
        raise RemoteError(remote.name, f"cannot open '{remote.url}': {exc}") from None


@contextlib.contextmanager
def talking(remote: Remote) -> Iterator[None]:
    """Transport failures (network, protocol, a path that is no repository) as one RemoteError."""
    from dulwich.errors import GitProtocolError, HangupException, NotGitRepository

    try:
        yield
    except PerunError:
        raise
    except (NotGitRepository, FileNotFoundError):
        raise RemoteError(remote.name, f"'{remote.url}' is not a git repository") from None
    except HangupException as exc:
        raise RemoteError(remote.name, f"the remote hung up ({exc})",
                          hint="check the URL and that you may read (and push to) it") from None
    except GitProtocolError as exc:
        raise RemoteError(remote.name, f"git protocol error: {exc}") from None
    except OSError as exc:
        raise RemoteError(remote.name, f"cannot reach '{remote.url}': {exc.strerror or exc}") from None


def remote_head(client: Any, path: str, remote: Remote) -> bytes | None:
    with talking(remote):
        refs = client.get_refs(path)
    refs = getattr(refs, "refs", refs)
    return refs.get(layout.REF)
