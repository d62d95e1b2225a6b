"""Identifiers and the words they are made of, for the reference graph and for BM25.

A file's references are its identifiers (every `[A-Za-z_][A-Za-z0-9_]*` run, comments and
strings included, as aider does when a grammar's tags query names no references): one regular
expression over the bytes, much cheaper than walking the syntax tree, and language-agnostic. An
identifier counts as a reference only where some file defines it (`agent.codeindex.graph`), so
keywords and words of prose drop out there.

Search terms split identifiers the way people type them: `TokenCounter` is indexed as
`tokencounter`, `token` and `counter`; `text_tokens` as `texttokens`, `text`, `tokens`. A query
goes through the same function, so `token counter`, `TokenCounter` and `token_counter` all find
the class, and the whole-identifier term (rare, so weighty in BM25) ranks the exact name first.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Final

IDENTIFIER: Final = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
"""Identifiers in source bytes."""
_WORD: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART: Final = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
MIN_REFERENCE_LENGTH: Final = 2
"""Shorter identifiers (`i`, `x`) say nothing about structure."""
MAX_IDENTIFIER_LENGTH: Final = 80
"""Longer runs are data (base64, hashes), not names."""
MAX_TERM_REPEAT: Final = 8
"""A term is repeated at most this often in a file's terms: BM25's term frequency saturates
long before (k1 = 1.2), and the full-text index stays small."""


@lru_cache(maxsize=65_536)
def split_identifier(identifier: str) -> tuple[str, ...]:
    """The lowercase words of an identifier: `parseHTTPRequest` -> (`parse`, `http`,
    `request`); `MAX_LINES` -> (`max`, `lines`)."""
    return tuple(part.lower() for part in _PART.findall(identifier))


@lru_cache(maxsize=65_536)
def identifier_terms(identifier: str) -> tuple[str, ...]:
    """Search terms of one identifier: the whole name (lowercase, without underscores) and, when
    it has several words, each word of two letters or more."""
    parts = split_identifier(identifier)
    whole = "".join(parts)
    if not whole:
        return ()
    if len(parts) == 1:
        return (whole,)
    return (whole, *(part for part in parts if len(part) >= 2))


def identifiers(source: bytes) -> Counter[str]:
    """Each identifier in `source` with its count (too short or too long ones left out)."""
    # Counted as bytes first (in C), so each distinct identifier is decoded and checked once.
    counts: Counter[str] = Counter()
    for match, count in Counter(IDENTIFIER.findall(source)).items():
        if MIN_REFERENCE_LENGTH <= len(match) <= MAX_IDENTIFIER_LENGTH:
            counts[match.decode("ascii")] = count
    return counts


def terms_text(counts: Counter[str]) -> str:
    """The search terms of a file's identifiers, as a space-separated string for the full-text
    index (each term repeated as often as it occurs, up to `MAX_TERM_REPEAT`, so BM25 sees the
    term frequency)."""
    return "".join(
        _spaced(identifier) * min(count, MAX_TERM_REPEAT) for identifier, count in counts.items()
    )


@lru_cache(maxsize=65_536)
def _spaced(identifier: str) -> str:
    return "".join(term + " " for term in identifier_terms(identifier))


def query_terms(query: str) -> list[str]:
    """The distinct search terms of a query (identifiers and words, split like the index)."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query):
        for term in identifier_terms(word):
            seen.setdefault(term, None)
    return list(seen)


def path_terms(path: str) -> str:
    """Search terms of a file path (`agent/tools/grep.py` -> `agent tools grep py`)."""
    return " ".join(term for word in _WORD.findall(path) for term in identifier_terms(word))
