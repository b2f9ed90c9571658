#!/usr/bin/env python3
"""The editors' JSON Schema checked by an independent validator (<doc:CollectionFormat> ("Editing records")).

Usage: check-json-schema.py --bin BOOKSYNC

`booksync schema` writes a JSON Schema (draft 2020-12) of a collection's record
files from config.json. This checks it with `jsonschema`, the validator from
PyPI (installed into its own virtual environment under .build/, kept between
runs), against what `booksync validate` says of the same files:

  - the generated schema is itself a valid draft 2020-12 schema;
  - a table of cases (CASES: at least 30 valid and 30 invalid, every tagged
    value, nested maps, arrays, optional fields, enums, strict mode): booksync
    and the schema agree on each, and for an invalid one both name the same
    field (booksync in its sentence or by the line of its position, the
    validator by its error's path);
  - every record file under fixtures/ and the demo collection that booksync
    calls valid under the Book schema passes the schema too;
  - GAPS: what the schema documents it cannot say (it is looser there, never
    stricter) stays exactly that: booksync refuses, the schema accepts.

Every step is bounded in time. Prints one line per failed check and
"N passed, M failed"; exits non-zero when a check failed or a step could not run.
"""
import argparse
import glob
import json
import os
import re
import sys

from harness.booksync import REPOSITORY, Booksync
from harness.checks import Checks, PinnedVenv
from harness.scratch import scratch

VALIDATOR_VERSION = "4.23.0"
VENV = PinnedVenv("json-schema-venv", "jsonschema", VALIDATOR_VERSION)
COMMAND_TIMEOUT = 60

B = {"id": "x", "title": "T", "author": "A", "genre": "g"}  # a valid Book; each case adds to it


def book(**extra):
    record = dict(B)
    record.update(extra)
    return record


# The richer schema the table's second config declares (init flags and config keys).
RICH_SCHEMA = {
    "title": "Book", "description": "A book of the catalogue.", "strict": "error",
    "required": [
        {"name": "title", "type": "string", "description": "The title on the cover."},
        {"name": "genre", "type": "string", "enum": ["fiction", "poetry"]},
    ],
    "optional": [
        {"name": "year", "type": "integer"},
        {"name": "rating", "type": "double"},
        {"name": "score", "type": "number"},
        {"name": "inPrint", "type": "boolean"},
        {"name": "published", "type": "timestamp"},
        {"name": "cover", "type": "bytes"},
        {"name": "authorRef", "type": "reference"},
        {"name": "setting", "type": "geopoint"},
        {"name": "tags", "type": "array", "items": "string"},
        {"name": "extra", "type": "any"},
        {"name": "meta", "type": "map"},
        {"name": "printing", "type": "map", "required": [{"name": "copies", "type": "integer"}],
         "optional": [{"name": "publisher", "type": "reference"}]},
    ],
}
R = {"id": "x", "title": "T", "genre": "fiction"}  # a valid record of RICH_SCHEMA


def rich(**extra):
    record = dict(R)
    record.update(extra)
    return record


def nested(depth, leaf):
    value = leaf
    for _ in range(depth):
        value = {"m": value}
    return value


# (name, config: "book" or "rich", record, field that is wrong or None for valid)
CASES = [
    # valid: the Book schema and every kind of value
    ("book", "book", book(), None),
    ("editor hint", "book", dict({"$schema": "./.booksync/record.schema.json"}, **B), None),
    ("timestamp Z", "book", book(t={"$timestamp": "2024-05-01T12:00:00.000000Z"}), None),
    ("timestamp offset, fewer digits", "book", book(t={"$timestamp": "2024-05-01T14:00:00.5+02:00"}), None),
    ("timestamp in year 0 by its offset, year 1 in UTC", "book", book(t={"$timestamp": "0000-12-31T23:59:59.5-00:01"}), None),
    ("timestamp trailing zeros past micros", "book", book(t={"$timestamp": "2024-05-01T12:00:00.1234560000Z"}), None),
    ("bytes padded", "book", book(b={"$bytes": "iVBORw0KGgo="}), None),
    ("bytes unpadded url-safe", "book", book(b={"$bytes": "-_8"}), None),
    ("bytes empty", "book", book(b={"$bytes": ""}), None),
    ("reference short", "book", book(r={"$reference": "authors/frank-herbert"}), None),
    ("reference nested", "book", book(r={"$reference": "users/u1/books/dune"}), None),
    ("reference full name", "book", book(r={"$reference": "projects/p/databases/(default)/documents/a/b"}), None),
    ("geopoint", "book", book(g={"$geopoint": {"latitude": -90, "longitude": 180.0}}), None),
    ("double NaN", "book", book(d={"$double": "NaN"}), None),
    ("double -Infinity", "book", book(d={"$double": "-Infinity"}), None),
    ("null, booleans, numbers", "book", book(n=None, t=True, f=False, i=-5, x=2.5e10), None),
    ("nested maps and arrays", "book", book(m={"a": [1, {"b": {"c": [True, None]}}], "$k": 1, "$j": 2}), None),
    ("empty map and array", "book", book(m={}, a=[]), None),
    ("19 levels of maps", "book", book(m=nested(18, 1)), None),
    ("a map holding a map at the last level", "book", book(m=nested(18, {})), None),
    ("unicode field names", "book", book(**{"名前": "x", "a b": 1, "_": 2}), None),
    ("rich: required only", "rich", rich(), None),
    ("rich: every optional field", "rich", rich(year=1965, rating=4.25, score=4, inPrint=True,
                                                 published={"$timestamp": "1965-08-01T00:00:00.000000Z"}, cover={"$bytes": "AA=="},
                                                 authorRef={"$reference": "authors/a"}, setting={"$geopoint": {"latitude": 1, "longitude": 2}},
                                                 tags=["a", "b"], extra=[1, "x"], meta={"k": {"deep": 1}},
                                                 printing={"copies": 1, "publisher": {"$reference": "p/x"}}), None),
    ("rich: optional fields null", "rich", rich(year=None, printing=None, tags=None), None),
    ("rich: a double field holds NaN", "rich", rich(rating={"$double": "NaN"}), None),
    ("rich: enum value", "rich", rich(genre="poetry"), None),
    ("rich: any holds a tagged value", "rich", rich(extra={"$timestamp": "2024-05-01T12:00:00Z"}), None),
    ("rich: declared map without its optional", "rich", rich(printing={"copies": 2}), None),
    ("rich: undeclared map's keys are free", "rich", rich(meta={"anything": [1]}), None),
    ("rich: empty tags", "rich", rich(tags=[]), None),
    ("rich: hint under strict", "rich", dict({"$schema": "x"}, **R), None),
    # invalid
    ("missing title", "book", {k: v for k, v in B.items() if k != "title"}, "title"),
    ("title a number", "book", book(title=5), "title"),
    ("genre null", "book", book(genre=None), "genre"),
    ("id a number", "book", dict(B, id=7), "id"),
    ("id with a slash", "book", dict(B, id="a/b"), "id"),
    ("hint a number", "book", dict({"$schema": 5}, **B), "$schema"),
    ("timestamp no zone", "book", book(t={"$timestamp": "2024-05-01T12:00:00"}), "t"),
    ("timestamp nanoseconds", "book", book(t={"$timestamp": "2024-05-01T12:00:00.123456789Z"}), "t"),
    ("timestamp month 13", "book", book(t={"$timestamp": "2024-13-01T12:00:00Z"}), "t"),
    ("timestamp a number", "book", book(t={"$timestamp": 1714564800}), "t"),
    ("bytes not base64", "book", book(b={"$bytes": "!!"}), "b"),
    ("bytes impossible length", "book", book(b={"$bytes": "AAAAA"}), "b"),
    ("reference a collection", "book", book(r={"$reference": "authors"}), "r"),
    ("reference empty segment", "book", book(r={"$reference": "a//b/c"}), "r"),
    ("reference full name of a collection", "book", book(r={"$reference": "projects/p/databases/d/documents/a"}), "r"),
    ("geopoint latitude 91", "book", book(g={"$geopoint": {"latitude": 91, "longitude": 0}}), "g"),
    ("geopoint extra key", "book", book(g={"$geopoint": {"latitude": 1, "longitude": 0, "altitude": 3}}), "g"),
    ("double tag other word", "book", book(d={"$double": "nan"}), "d"),
    ("unknown tag", "book", book(t={"$timestmap": "2024-05-01T12:00:00Z"}), "t"),
    ("tagged value deep in a map", "book", book(m={"a": {"b": {"$bytes": "!"}}}), "m.a.b"),
    ("array in an array", "book", book(a=[[1]]), "a"),
    ("array in an array in a map", "book", book(m={"k": [1, [2]]}), "m.k"),
    ("20 levels of maps", "book", book(m=nested(20, 1)), "m"),
    ("empty field name", "book", book(**{"": 1}), ""),
    ("reserved field name", "book", book(**{"__x__": 1}), "__x__"),
    ("reserved name in a map", "book", book(m={"__y__": 1}), "m.__y__"),
    ("rich: missing required genre", "rich", {"id": "x", "title": "T"}, "genre"),
    ("rich: genre outside the enum", "rich", rich(genre="sf"), "genre"),
    ("rich: year a string", "rich", rich(year="1965"), "year"),
    ("rich: rating a string", "rich", rich(rating="4.5"), "rating"),
    ("rich: score a boolean", "rich", rich(score=True), "score"),
    ("rich: inPrint a string", "rich", rich(inPrint="yes"), "inPrint"),
    ("rich: published a plain string", "rich", rich(published="1965-08-01"), "published"),
    ("rich: cover a timestamp", "rich", rich(cover={"$timestamp": "2024-05-01T12:00:00Z"}), "cover"),
    ("rich: authorRef a string", "rich", rich(authorRef="authors/a"), "authorRef"),
    ("rich: setting a map", "rich", rich(setting={"latitude": 1, "longitude": 2}), "setting"),
    ("rich: tags item a number", "rich", rich(tags=["a", 2]), "tags[1]"),
    ("rich: meta an array", "rich", rich(meta=[1]), "meta"),
    ("rich: printing without copies", "rich", rich(printing={"publisher": {"$reference": "p/x"}}), "printing.copies"),
    ("rich: printing copies a string", "rich", rich(printing={"copies": "1"}), "printing.copies"),
    ("rich: printing publisher a string", "rich", rich(printing={"copies": 1, "publisher": "p/x"}), "printing.publisher"),
    ("rich: undeclared field under strict", "rich", rich(colour="red"), "colour"),
    ("rich: undeclared field in a declared map", "rich", rich(printing={"copies": 1, "signed": True}), "printing.signed"),
]

# What the schema says it cannot check (JSONSchemaDocument's doc comment):
# booksync refuses these, the schema lets them pass.
GAPS = [
    ("id differs from the file name", "book", dict(B, id="other")),
    ("February 30", "book", book(t={"$timestamp": "2023-02-30T00:00:00Z"})),
    ("year 0 (only an offset can bring it into year 1)", "book", book(t={"$timestamp": "0000-05-01T12:00:00Z"})),
    ("double field spelled as an integer", "rich", rich(rating=4)),
    ("integer beyond 64 bits", "book", book(n=2 ** 64)),
    ("field name over 1,500 bytes in fewer characters", "book", book(**{"é" * 800: 1})),
]


def path_text(parts):
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += "[%d]" % part
        else:
            text += ("." if text else "") + part
    return text


def error_fields(errors):
    """Every field path the validator's errors (and their sub-errors) point at."""
    fields = set()
    for error in errors:
        base = path_text(error.absolute_path)
        fields.add(base)
        if error.validator == "required":
            match = re.match(r"'(.*)' is a required property", error.message)
            if match:
                fields.add((base + "." if base else "") + match.group(1))
        if error.validator in ("additionalProperties", "unevaluatedProperties"):
            for name in re.findall(r"'([^']*)'", error.message.split("(")[-1]):
                fields.add((base + "." if base else "") + name)
        if error.validator in ("propertyNames", "not") and error.instance is not None and isinstance(error.instance, str):
            fields.add((base + "." if base else "") + error.instance)
        fields |= error_fields(error.context or [])
    return fields


def booksync_names(problem, text, field):
    """Whether a `validate --json` problem names `field`: in its sentence, or by
    the line its position points at."""
    last = re.split(r"[.\[]", field)[-1] if field else ""
    located = re.match(r"^(\d+):(\d+): (.*)$", problem, re.S)
    message = located.group(3) if located else problem
    if any(("'%s%s" % (field, end)) in message for end in ("'", ".", "[")) or (field == "" and "empty name" in message):
        return True
    if located:
        line = text.split("\n")[int(located.group(1)) - 1]
        return ('"%s"' % last) in line
    return False


def make_collection(booksync, root, config):
    os.makedirs(root)
    result = booksync(root, "-q", "init", "--firestore", "demo-schema", "--collection", "books")
    if result.returncode != 0:
        raise RuntimeError("init failed: " + result.stderr)
    if config == "rich":
        path = os.path.join(root, ".booksync", "config.json")
        with open(path) as f:
            data = json.load(f)
        data["schema"] = RICH_SCHEMA
        with open(path, "w") as f:
            json.dump(data, f)
        result = booksync(root, "-q", "schema")
        if result.returncode != 0:
            raise RuntimeError("schema failed: " + result.stderr)
    with open(os.path.join(root, ".booksync", "record.schema.json")) as f:
        return json.load(f)


def validate_files(booksync, root):
    result = booksync(root, "validate", "--json")
    document = json.loads(result.stdout)
    return {os.path.basename(entry["file"]): entry for entry in document["files"]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    binary = os.path.abspath(options.bin)
    if not options.in_venv:
        VENV.run_inside(__file__, ["--bin", binary])
    from jsonschema import Draft202012Validator

    checks = Checks()
    valid_cases = sum(1 for case in CASES if case[3] is None)
    checks.check(valid_cases >= 30 and len(CASES) - valid_cases >= 30,
                 "the table has %d valid and %d invalid cases; at least 30 of each" % (valid_cases, len(CASES) - valid_cases))
    booksync = Booksync(binary, timeout=COMMAND_TIMEOUT)
    with scratch("json-schema") as work:
        schemas, texts = {}, {}
        for config in ("book", "rich"):
            root = os.path.join(work, config)
            schemas[config] = make_collection(booksync, root, config)
            Draft202012Validator.check_schema(schemas[config])
            checks.passed += 1
            for number, (name, case_config, record, _) in enumerate(CASES):
                if case_config == config:
                    record = dict(record, id="case-%d" % number) if isinstance(record.get("id"), str) and record["id"] == "x" else record
                    text = json.dumps(record, indent=2, ensure_ascii=False)
                    texts[number] = (record, text)
                    with open(os.path.join(root, "case-%d.json" % number), "w") as f:
                        f.write(text + "\n")
            for number, (name, case_config, record) in enumerate(GAPS):
                if case_config == config:
                    record = dict(record, id="gap-%d" % number) if record.get("id") == "x" else record
                    with open(os.path.join(root, "gap-%d.json" % number), "w") as f:
                        json.dump(record, f, indent=2, ensure_ascii=False)
        reports = {config: validate_files(booksync, os.path.join(work, config)) for config in ("book", "rich")}
        for number, (name, config, _, field) in enumerate(CASES):
            record, text = texts[number]
            report = reports[config]["case-%d.json" % number]
            errors = list(Draft202012Validator(schemas[config]).iter_errors(record))
            if field is None:
                checks.check(report["valid"], "%s: booksync says %s" % (name, report["problems"]))
                checks.check(not errors, "%s: the schema says %s" % (name, [e.message for e in errors]))
                continue
            checks.check(not report["valid"], "%s: booksync accepts it" % name)
            checks.check(bool(errors), "%s: the schema accepts it" % name)
            if errors:
                found = error_fields(errors)
                checks.check(field in found, "%s: the schema's errors point at %s, not '%s'" % (name, sorted(found), field))
            if not report["valid"]:
                checks.check(any(booksync_names(p, text, field) for p in report["problems"]),
                             "%s: booksync's problems %s do not name '%s'" % (name, report["problems"], field))
        for number, (name, config, record) in enumerate(GAPS):
            report = reports[config]["gap-%d.json" % number]
            record = dict(record, id="gap-%d" % number) if record.get("id") == "x" else record
            checks.check(not report["valid"], "gap '%s': booksync accepts it" % name)
            errors = list(Draft202012Validator(schemas[config]).iter_errors(record))
            checks.check(not errors, "gap '%s': the schema now refuses it (%s); move it to CASES" % (name, [e.message for e in errors]))
        # Every record file of the fixtures and the demo that booksync calls valid passes.
        book_root = os.path.join(work, "fixtures")
        book_schema = make_collection(booksync, book_root, "book")
        sources = sorted(set(glob.glob(os.path.join(REPOSITORY, "fixtures", "**", "*.json"), recursive=True)))
        copied = {}
        for source in sources:
            if "/.booksync/" in source or source.endswith("public-api.txt") or "/scenarios/" in source and "/collection/" not in source:
                continue
            name = "%d.json" % len(copied)
            try:
                with open(source, "rb") as f:
                    data = f.read()
                record = json.loads(data)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            record["id"] = name[:-5]
            with open(os.path.join(book_root, name), "w") as f:
                json.dump(record, f, ensure_ascii=False)
            copied[name] = (source, record)
        report = validate_files(booksync, book_root)
        valid = 0
        for name, (source, record) in copied.items():
            if not report[name]["valid"]:
                continue
            valid += 1
            errors = list(Draft202012Validator(book_schema).iter_errors(record))
            checks.check(not errors, "%s: booksync calls it valid, the schema says %s" % (os.path.relpath(source, REPOSITORY), [e.message for e in errors]))
        checks.check(valid >= 35, "only %d fixture records were valid; expected the demo's and the fixtures' (35 or more)" % valid)
        print("fixture records: %d read, %d valid by booksync, all of them valid by the schema" % (len(copied), valid))
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
