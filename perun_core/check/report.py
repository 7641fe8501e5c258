"""What a degradation check reports: the pairs checked per version and their findings.

:class:`CheckReport` is what :mod:`perun_core.api.check` returns and
:mod:`perun_core.check.output` formats; :class:`PairReport` records are also
what a check stores per version (see :mod:`perun_core.storage.changes`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from .pairing import ProfileRef
from .results import Finding, PerformanceChange

if TYPE_CHECKING:  # pragma: no cover
    from ..vcs import MinorVersion

__all__ = ["FAIL_ON", "CheckReport", "PairReport", "VersionReport"]

#: Values of ``fail_on``: which findings make a check "failed" (exit status 3 in the CLI).
FAIL_ON = ("degradation", "maybe", "never")


@dataclass(frozen=True, slots=True)
class PairReport:
    """One checked pair of profiles: which methods ran and what they found."""

    baseline: ProfileRef
    target: ProfileRef
    methods: tuple[str, ...]
    findings: tuple[Finding, ...]
    errors: tuple[str, ...] = ()
    #: warnings (different machines) and advice (noisy measurements) about this pair
    notes: tuple[str, ...] = ()

    @property
    def degradations(self) -> list[Finding]:
        return [f for f in self.findings if f.result.is_degradation and not f.result.is_maybe]

    @property
    def optimizations(self) -> list[Finding]:
        return [f for f in self.findings if f.result.is_optimization and not f.result.is_maybe]

    def to_record(self) -> dict[str, Any]:
        findings = []
        for f in self.findings:
            record = {"method": f.method, **f.to_record()}
            if f.reason:
                record["reason"] = f.reason
            explanation = f.details.get("explanation") if f.details else None
            if explanation is not None and hasattr(explanation, "to_record"):
                record["explanation"] = explanation.to_record()
            findings.append(record)
        record = {"baseline": self.baseline.to_record(), "target": self.target.to_record(),
                  "methods": list(self.methods), "findings": findings, "errors": list(self.errors)}
        if self.notes:
            record["notes"] = list(self.notes)
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> PairReport:
        """Rebuild a stored pair; findings explained alike share one explanation (records before version 3
        of the change record have none)."""
        import json

        # lazy: keeps `perun-core check profiles` light
        from .explain_result import Explanation

        findings = []
        explanations: dict[str, Any] = {}
        for item in record.get("findings", []):
            count = len(findings)
            with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
                findings.append(Finding.from_record(item))
            stored = item.get("explanation") if len(findings) > count else None
            if isinstance(stored, dict):  # a damaged explanation leaves its finding without one
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    key = json.dumps(stored, sort_keys=True)
                    if key not in explanations:
                        explanations[key] = Explanation.from_record(stored)
                    findings[-1] = replace(findings[-1], details={"explanation": explanations[key]})
        target = ProfileRef.from_record(record.get("target", {}))
        if target.type == "time":
            findings = [f if f.unit else replace(f, unit=_TIME_UNITS.get(f.location.rpartition(" [")[2], ""))
                        for f in findings]
        return cls(ProfileRef.from_record(record.get("baseline", {})), target,
                   tuple(record.get("methods", [])), tuple(findings), tuple(record.get("errors", [])),
                   tuple(str(n) for n in record.get("notes", []) if isinstance(n, str)))


#: The units of the time collector's locations, which it has always written (seconds, bytes): checks stored
#: before findings carried a unit are shown with them too.
_TIME_UNITS = {"real]": "s", "user]": "s", "sys]": "s", "max_rss]": "B"}


@dataclass(frozen=True, slots=True)
class VersionReport:
    """The pairs checked for one target version (``minor`` None for ``check profiles`` of files).

    ``unpaired`` lists target profiles for which no baseline was found; ``skipped`` says, a line each, which
    pending profiles were left out because a newer one of the same job is pending.
    """

    minor: str | None
    version: MinorVersion | None
    pairs: tuple[PairReport, ...]
    unpaired: tuple[ProfileRef, ...] = ()
    skipped: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Everything one check found; ``errors`` are problems that make the check fail (exit 1)."""

    command: str
    versions: tuple[VersionReport, ...]
    collected: tuple[str, ...] = ()
    errors: tuple[str, ...] = field(default=())

    def findings(self) -> Iterator[tuple[VersionReport, PairReport, Finding]]:
        for version in self.versions:
            for pair in version.pairs:
                for finding in pair.findings:
                    yield version, pair, finding

    def count(self, predicate: Callable[[PerformanceChange], bool]) -> int:
        return sum(1 for _, _, f in self.findings() if predicate(f.result))

    @property
    def degradations(self) -> int:
        return self.count(lambda r: r.is_degradation and not r.is_maybe)

    @property
    def optimizations(self) -> int:
        return self.count(lambda r: r.is_optimization and not r.is_maybe)

    @property
    def pairs(self) -> int:
        return sum(len(v.pairs) for v in self.versions)

    @property
    def pending_pairs(self) -> int:
        """Pairs in which the baseline or the target is a pending profile."""
        return sum(1 for v in self.versions for p in v.pairs if p.baseline.pending or p.target.pending)

    @property
    def notes(self) -> list[str]:
        """The distinct warnings and advice of all pairs, each once, in order."""
        return list(dict.fromkeys(note for version in self.versions for pair in version.pairs for note in pair.notes))

    def failed(self, fail_on: str = "degradation") -> bool:
        """Whether a finding crosses ``fail_on``: degradation (certain ones), maybe (also Maybe), never."""
        if fail_on not in FAIL_ON:
            raise UsageError(f"--fail-on '{fail_on}': expected one of {', '.join(FAIL_ON)}")
        if fail_on == "never":
            return False
        if fail_on == "maybe":
            return self.count(lambda r: r.is_degradation) > 0
        return self.degradations > 0
