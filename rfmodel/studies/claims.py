"""The five papers' claims, every ID, in one table: ``rfmodel study claims`` writes ``studies/claims.csv``.

Each paper study (``rfmodel study ltrf|caching|malekeh|corf|stt|cerf``) writes the claims it checks into its
report folder's ``claims.csv``: the claim ID of the reference digest, what is compared, the paper's figure,
ours, the study's verdict in words and its grade (:func:`grade`).  This module gathers those files and the
registry of all 92 IDs (``rfmodel/data/claims.json``: each claim in short, the paper's figure, and for a
plain fact, where the project encodes it) into one table with a row per ID:

* ``match``: the sign (or the direction) of the paper's figure and its size within 30 % relative;
* ``partial``: the sign right and the size not, or a claim of several figures with some right;
* ``mismatch``: the sign wrong, a change where the paper has none, or none where it has one;
* ``fact``: an input or a definition (a configuration or technology value), not an outcome; the row says
  where the project encodes it and whether it equals the paper's;
* ``none``: no study reports a figure for it yet.
"""

from __future__ import annotations

#: the grades of a claim, best first (``none``: no figure)
GRADES = ("match", "partial", "mismatch", "fact", "none")

#: the verdict phrases the studies write (:func:`rfmodel.studies.common.verdict` and the studies' own), by
#: the start of the phrase, and their grade
_PHRASES = (
    ("same sign, within", "match"),
    ("no change, as the paper's", "match"),
    ("same sign, size differs", "partial"),
    ("same sign", "partial"),
    ("within the paper's range", "match"),
    ("within 5 %", "match"),
    ("same ordering", "match"),
    ("below 0.3 %, as the paper's", "match"),
    ("outside the paper's range", "partial"),
    ("sign differs", "mismatch"),
    ("a change where the paper has none", "mismatch"),
    ("no change here", "mismatch"),
    ("more than 5 % apart", "mismatch"),
    ("ordering differs", "mismatch"),
    ("above the paper's", "mismatch"),
    # the state of a study's own checks, in rows that are not claims
    ("hold", "none"),
    ("broken", "none"),
)


def grade(verdict: str, *, strict: bool = True) -> str:
    """The grade of a study's verdict text: ``match``, ``partial``, ``mismatch``, or ``none`` where it gives
    no verdict (``""``, ``n/a``).  A verdict of several figures (``"...; ..."``) is ``match`` or ``mismatch``
    when all its parts are, else ``partial``; a phrase this function does not know is an error (with
    ``strict``; else ``"unknown"``), so that no verdict is graded by accident."""
    parts = [p.strip() for p in str(verdict).split(";")]
    grades = []
    for p in parts:
        if p in ("", "n/a") or p.startswith("n/a"):
            continue
        for start, g in _PHRASES:
            if p.startswith(start):
                grades.append(g)
                break
        else:
            if not strict:
                return "unknown"
            raise ValueError(f"unknown verdict phrase {p!r} (known: {', '.join(s for s, _ in _PHRASES)})")
    grades = [g for g in grades if g != "none"]
    if not grades:
        return "none"
    if all(g == grades[0] for g in grades):
        return grades[0]
    return "partial"
