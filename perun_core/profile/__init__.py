"""Profiles: the data model, its serializations, queries and conversions."""

from .model import KNOWN_TYPES, Profile, Snapshot
from .resources import MISSING, ResourceTable

__all__ = ["KNOWN_TYPES", "MISSING", "Profile", "ResourceTable", "Snapshot"]
