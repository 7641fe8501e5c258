"""The published complexity bugs of the fuzzing benchmark: driver, seeds, vulnerable and fixed version, where published.

Each driver is ``python3 DRIVER LIBDIR INPUT``: it puts LIBDIR (a ``pip install --target`` of one version) first
on the path and hands the input to the library.  ``install`` lists the pip requirement of each directory.
"""

from __future__ import annotations

BUGS = [
    {"name": "urllib3-authority", "driver": "urllib3_authority.py", "seeds": "seeds/urllib3",
     "vulnerable": "urllib3==1.26.4", "fixed": "urllib3==1.26.5", "expected": "quadratic",
     "published": "CVE-2021-33503, https://github.com/urllib3/urllib3/security/advisories/GHSA-q2q7-5pp4-w6pg"},
    {"name": "jinja2-urlize", "driver": "jinja2_urlize.py", "seeds": "seeds/jinja2",
     "vulnerable": "jinja2==2.11.2 markupsafe==1.1.1", "fixed": "jinja2==2.11.3 markupsafe==1.1.1",
     "expected": "quadratic", "published": "CVE-2020-28493, https://github.com/advisories/GHSA-g3rq-g295-4j3m"},
    {"name": "multipart-header", "driver": "multipart_header.py", "seeds": "seeds/multipart",
     "vulnerable": "python-multipart==0.0.6", "fixed": "python-multipart==0.0.7", "expected": "exponential",
     "published": "CVE-2024-24762, https://github.com/Kludex/python-multipart/security/advisories/GHSA-2jv5-9r88-3w3p"},
    {"name": "sqlparse-string", "driver": "sqlparse_parse.py", "seeds": "seeds/sqlparse",
     "vulnerable": "sqlparse==0.4.3", "fixed": "sqlparse==0.4.4", "expected": "exponential",
     "published": "CVE-2023-30608, https://github.com/andialbrecht/sqlparse/security/advisories/GHSA-rrm6-wvj7-cwh2"},
    {"name": "mpmath-complex", "driver": "mpmath_complex.py", "seeds": "seeds/mpmath",
     "vulnerable": "mpmath==1.2.1", "fixed": "mpmath==1.3.0", "expected": "polynomial",
     "published": "CVE-2021-29063, https://github.com/mpmath/mpmath/issues/548"},
]


def library_dir(spec: str) -> str:
    """The directory name a requirement is installed under: ``urllib3-1.26.4``."""
    return spec.split()[0].replace("==", "-")
