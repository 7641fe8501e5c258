"""Git object type numbers, patterns and limits shared by the modules of this package."""

from __future__ import annotations

import re


# git object type numbers, as returned by ``object_store.get_raw``
_COMMIT, _TREE, _BLOB, _TAG = 1, 2, 3, 4
_S_IFGITLINK = 0o160000
_SYMREF = b"ref: "
_HEX40 = re.compile(r"[0-9a-fA-F]{40}")
_HEX_SHORT = re.compile(r"[0-9a-fA-F]{4,39}")
_SUFFIX = re.compile(r"~(\d*)|\^\{([a-z]*)\}|\^(\d*)")
_MIN_SHORT_SHA = 4

HISTORY_CACHE_VERSION = 1
HISTORY_CACHE_LIMIT = 8
_CACHE_NAME = re.compile(r"history-([0-9a-f]{40})\.json")

_INIT_PARAMS = ("initial-branch", "description")
