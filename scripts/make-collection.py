#!/usr/bin/env python3
"""Writes N deterministic, realistic book records (canonical JSON) into a directory.

Usage: make-collection.py DIR N [SEED]
Used by tests and benchmarks; the same N and SEED always give the same bytes.
"""
import json
import os
import random
import sys

GENRES = ["science fiction", "fantasy", "mystery", "history", "poetry", "biography", "horror", "romance"]
WORDS = ("river stone night glass winter garden silver empire shadow harbor orchard letter mirror "
         "signal desert lantern archive comet meadow engine").split()
FIRST = ["Ada", "Frank", "Ursula", "Octavia", "Isaac", "Mary", "Jorge", "Toni", "Italo", "Clarice"]
LAST = ["Herbert", "Le Guin", "Butler", "Asimov", "Shelley", "Borges", "Morrison", "Calvino", "Lispector", "Lovelace"]


def canonical(record):
    """booksync's canonical form for these simple records (strings, ints, doubles, arrays)."""
    lead = ["id", "title", "author", "genre"]
    keys = lead + sorted((k for k in record if k not in lead), key=lambda k: k.encode())
    lines = ["{"]
    for i, key in enumerate(keys):
        value = record[key]
        if isinstance(value, list):
            inner = ",\n".join("    " + json.dumps(v, ensure_ascii=False) for v in value)
            text = "[\n" + inner + "\n  ]" if value else "[]"
        elif isinstance(value, dict):
            text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        elif isinstance(value, float):
            text = repr(value)
        else:
            text = json.dumps(value, ensure_ascii=False)
        lines.append('  "%s": %s%s' % (key, text, "," if i < len(keys) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def make(i, rng):
    title = " ".join(rng.choice(WORDS).capitalize() for _ in range(rng.randint(1, 4)))
    return {
        "id": "book-%06d" % i,
        "title": title,
        "author": "%s %s" % (rng.choice(FIRST), rng.choice(LAST)),
        "genre": rng.choice(GENRES),
        "year": rng.randint(1800, 2024),
        "pages": rng.randint(80, 1200),
        "rating": round(rng.uniform(1, 5), 2),
        "tags": sorted(rng.sample(WORDS, rng.randint(0, 3))),
        "published": {"$timestamp": "%04d-%02d-%02dT00:00:00.000000Z" % (rng.randint(1800, 2024), rng.randint(1, 12), rng.randint(1, 28))},
        "summary": " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 50))),
    }


def main():
    directory, count = sys.argv[1], int(sys.argv[2])
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = random.Random(seed)
    os.makedirs(directory, exist_ok=True)
    for i in range(count):
        record = make(i, rng)
        with open(os.path.join(directory, record["id"] + ".json"), "w", encoding="utf-8") as f:
            f.write(canonical(record))


if __name__ == "__main__":
    main()
