"""Reference Firestore clients for scripts/bench (Python standard library only).

Two clients do the same remote work as `booksync pull` / `booksync push` on a
directory of record files, so that booksync can be measured against them on
the same data, in the same run, against the same server:

  minimal  the fewest requests the REST API allows:
             pull = one :runQuery of the whole collection (every document
                    with its body in a single answer; paging through
                    GET .../books at the maximum page size takes 67 requests
                    for 10,000 documents and is 4x slower on the emulator),
                    convert every document to a canonical record file and
                    write it;
             push = :commit requests of 500 writes each, every write a
                    create guarded by currentDocument.exists=false
                    (--update: an update guarded by exists=true).
           It stands for the best a client can do against this server.
  naive    the approach of typical Firebase tutorials, one request per
           document: pull = list the names, then GET each document;
           push = one :commit per document.

The minimal client also stands for the two commands that read more than one
collection or less than one:

  pull --where 'FIELD OP VALUE'   the same single :runQuery, carrying the filter
           (a scoped `booksync clone --collection … --where …`);
  clone-db the whole database, as `booksync clone --firestore P DIR` makes it:
           one :listCollectionIds for the root collections, one :runQuery of
           each root collection, and one collection-group :runQuery per
           subcollection id over the whole database (every `reviews` of every
           root collection in one query), each document written as a record
           file where booksync puts it (ROOT/PARENT/SUB/ID.json). The
           subcollection ids come from one names-only kindless query over the
           whole database ("from": [{"allDescendants": true}], no collectionId)
           or, with --groups a,b, are given (a client told the layout, which
           booksync never is).

Both use one keep-alive HTTP/1.1 connection with TCP_NODELAY, sequential
requests (harness.emulator.Client), no retries: they are yardsticks, not sync
tools (no base, no three-way comparison, no atomic file replacement).

Usage (from scripts/, or with scripts/ on PYTHONPATH):
  python3 -m benchmark.reference pull DIR --host 127.0.0.1:8080 --project P [--collection books] [--naive]
  python3 -m benchmark.reference push DIR --host ... --project P [--naive] [--update] [FILE ...]
  python3 -m benchmark.reference pull DIR --host ... --project P --where 'shard == 7'
  python3 -m benchmark.reference clone-db DIR --host ... --project P [--groups reviews,likes]

Only plain HTTP to a loopback emulator is supported (Authorization: Bearer owner).
"""
import argparse
import json
import os
import time

from harness.emulator import MAX_PAGES, MAX_WRITES, Client

REQUIRED = ["id", "title", "author", "genre"]  # booksync's default schema: these lead the canonical form
SAFE = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


# --- record files <-> Firestore values -------------------------------------------------------

def to_value(v, database):
    """A record-file JSON value as a Firestore REST value."""
    if v is None:
        return {"nullValue": None}
    if isinstance(v, bool):
        return {"booleanValue": v}
    if isinstance(v, int):
        return {"integerValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, str):
        return {"stringValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [to_value(x, database) for x in v]} if v else {}}
    if len(v) == 1:
        (key, inner), = v.items()
        if key == "$timestamp":
            return {"timestampValue": inner}
        if key == "$bytes":
            return {"bytesValue": inner}
        if key == "$reference":
            return {"referenceValue": database + "/documents/" + inner}
        if key == "$geopoint":
            return {"geoPointValue": inner}
        if key == "$double":
            return {"doubleValue": inner}
    return {"mapValue": {"fields": {k: to_value(x, database) for k, x in v.items()}} if v else {}}


def normalize_timestamp(text):
    """RFC 3339 from the server (0-9 fraction digits, Z) -> exactly 6 fraction digits, as record files keep it."""
    stamp = text[:-1] if text.endswith("Z") else text
    if "." in stamp:
        whole, frac = stamp.split(".", 1)
    else:
        whole, frac = stamp, ""
    return "%s.%sZ" % (whole, (frac + "000000")[:6])


def from_value(v, database):
    """A Firestore REST value as a record-file JSON value (tagged objects for non-JSON types)."""
    kind, inner = next(iter(v.items()))
    if kind == "stringValue" or kind == "booleanValue" or kind == "nullValue":
        return inner
    if kind == "integerValue":
        return int(inner)
    if kind == "doubleValue":
        if isinstance(inner, str):
            return {"$double": inner}
        return float(inner)
    if kind == "timestampValue":
        return {"$timestamp": normalize_timestamp(inner)}
    if kind == "bytesValue":
        return {"$bytes": inner}
    if kind == "referenceValue":
        prefix = database + "/documents/"
        return {"$reference": inner[len(prefix):] if inner.startswith(prefix) else inner}
    if kind == "geoPointValue":
        return {"$geopoint": {"latitude": float(inner.get("latitude", 0.0)), "longitude": float(inner.get("longitude", 0.0))}}
    if kind == "arrayValue":
        return [from_value(x, database) for x in inner.get("values", [])]
    if kind == "mapValue":
        return {k: from_value(x, database) for k, x in inner.get("fields", {}).items()}
    raise ValueError("unknown Firestore value kind %r" % kind)


def canonical_double(x):
    """Shortest round-trip double, '.0' when integral, exponent without '+' or leading zeros."""
    text = repr(x)
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else ""
        return "%se%s%s" % (mantissa, sign, exponent.lstrip("+-").lstrip("0") or "0")
    if "." not in text and "n" not in text:
        text += ".0"
    return text


def is_tagged(v):
    return isinstance(v, dict) and len(v) == 1 and next(iter(v)).startswith("$")


def write_value(v, indent, out, top=False):
    """Appends booksync's canonical form of v (see <doc:CollectionFormat>) to the list out."""
    if isinstance(v, bool) or v is None:
        out.append(json.dumps(v))
    elif isinstance(v, int):
        out.append(str(v))
    elif isinstance(v, float):
        out.append(canonical_double(v))
    elif isinstance(v, str):
        out.append(json.dumps(v, ensure_ascii=False))
    elif is_tagged(v):
        (key, inner), = v.items()
        if isinstance(inner, dict):  # $geopoint
            body = ", ".join('"%s": %s' % (k, canonical_double(float(inner[k]))) for k in ("latitude", "longitude"))
            out.append('{"%s": {%s}}' % (key, body))
        else:
            out.append('{"%s": %s}' % (key, json.dumps(inner, ensure_ascii=False)))
    elif isinstance(v, list):
        if not v:
            out.append("[]")
            return
        out.append("[\n")
        for i, x in enumerate(v):
            out.append("  " * (indent + 1))
            write_value(x, indent + 1, out)
            out.append(",\n" if i < len(v) - 1 else "\n")
        out.append("  " * indent + "]")
    else:
        if not v:
            out.append("{}")
            return
        lead = [k for k in REQUIRED if k in v] if top else []
        keys = lead + sorted((k for k in v if k not in lead), key=lambda k: k.encode())
        out.append("{\n")
        for i, k in enumerate(keys):
            out.append("  " * (indent + 1) + json.dumps(k, ensure_ascii=False) + ": ")
            write_value(v[k], indent + 1, out)
            out.append(",\n" if i < len(keys) - 1 else "\n")
        out.append("  " * indent + "}")


def canonical(record):
    out = []
    write_value(record, 0, out, top=True)
    out.append("\n")
    return "".join(out).encode()


def file_name(doc_id):
    """The record file name of an id: bytes outside [A-Za-z0-9_.-] and a leading '.' as %XX."""
    raw = doc_id.encode()
    parts = []
    for i, b in enumerate(raw):
        if b in SAFE and not (i == 0 and b == ord(".")):
            parts.append(chr(b))
        else:
            parts.append("%%%02X" % b)
    return "".join(parts) + ".json"


def id_of(file):
    from urllib.parse import unquote
    return unquote(os.path.basename(file)[: -len(".json")])


# --- pull and push ---------------------------------------------------------------------------

def write_record(directory, doc, client):
    doc_id = doc["name"].rsplit("/", 1)[1]
    record = {k: from_value(v, client.database) for k, v in doc.get("fields", {}).items()}
    record.setdefault("id", doc_id)
    with open(os.path.join(directory, file_name(doc_id)), "wb") as f:
        f.write(canonical(record))


OPERATORS = {"==": "EQUAL", "!=": "NOT_EQUAL", "<": "LESS_THAN", "<=": "LESS_THAN_OR_EQUAL", ">": "GREATER_THAN",
             ">=": "GREATER_THAN_OR_EQUAL"}


def field_filter(text, database):
    """`FIELD OP VALUE` (one comparison, VALUE as JSON) as a Firestore fieldFilter."""
    parts = text.split(None, 2)
    if len(parts) != 3 or parts[1] not in OPERATORS:
        raise SystemExit("reference: --where takes 'FIELD OP VALUE' with OP one of %s" % " ".join(OPERATORS))
    field, op, value = parts
    return {"fieldFilter": {"field": {"fieldPath": field}, "op": OPERATORS[op], "value": to_value(json.loads(value), database)}}


def pull(client, directory, collection, naive, where=None):
    os.makedirs(directory, exist_ok=True)
    count = 0
    if naive:
        names = [d["name"] for d in client.list(collection, mask=["__name__"])]
        for name in names:
            doc = client.request("GET", name)
            write_record(directory, doc, client)
            count += 1
    else:
        query = {"from": [{"collectionId": collection}]}
        if where:
            query["where"] = field_filter(where, client.database)
        for doc in client.query(query):
            write_record(directory, doc, client)
            count += 1
    return count


# --- the whole database ----------------------------------------------------------------------

def list_collection_ids(client):
    """The root collection ids: :listCollectionIds, 300 a page (booksync's page size)."""
    ids, token = [], None
    for _ in range(MAX_PAGES):
        body = {"pageSize": 300}
        if token:
            body["pageToken"] = token
        page = client.request("POST", client.root + ":listCollectionIds", body)
        ids += page.get("collectionIds", [])
        token = page.get("nextPageToken")
        if not token:
            return ids
    raise RuntimeError("listCollectionIds did not end after %d pages" % MAX_PAGES)


def subcollection_ids(client):
    """Every collection id below a document, from one names-only kindless query over the database."""
    found = set()
    prefix = client.root + "/"
    for doc in client.query({"from": [{"allDescendants": True}], "select": {"fields": [{"fieldPath": "__name__"}]}}):
        segments = doc["name"][len(prefix):].split("/")
        found.update(segments[2::2])
    return sorted(found)


def write_nested(directory, doc, client):
    """A document at any depth, as a record file where booksync puts it: ROOT/PARENT/SUB/…/ID.json
    (the root collection's folder and every document's are named as record files are)."""
    segments = doc["name"][len(client.root) + 1:].split("/")
    folders = [s if i % 2 == 0 and i > 0 else file_name(s)[:-len(".json")]  # subcollection ids as they are
               for i, s in enumerate(segments[:-1])]
    target = os.path.join(directory, *folders)
    os.makedirs(target, exist_ok=True)
    write_record(target, doc, client)


def clone_db(client, directory, groups=None):
    os.makedirs(directory, exist_ok=True)
    count = 0
    roots = list_collection_ids(client)
    for root in roots:
        for doc in client.query({"from": [{"collectionId": root}]}):
            write_nested(directory, doc, client)
            count += 1
    for group in (groups if groups is not None else subcollection_ids(client)):
        for doc in client.query({"from": [{"collectionId": group, "allDescendants": True}]}):
            if doc["name"][len(client.root) + 1:].count("/") < 3:
                continue  # a root collection with that id: its documents came with its own query
            write_nested(directory, doc, client)
            count += 1
    return count


def record_files(directory):
    return sorted(os.path.join(directory, n) for n in os.listdir(directory)
                  if n.endswith(".json") and not n.startswith("."))


def push(client, directory, collection, naive, update, files):
    files = files or record_files(directory)
    writes = []
    for path in files:
        with open(path, "rb") as f:
            record = json.loads(f.read())
        doc_id = id_of(path)
        writes.append({
            "update": {
                "name": "%s/%s/%s" % (client.root, collection, doc_id),
                "fields": {k: to_value(v, client.database) for k, v in record.items()},
            },
            "currentDocument": {"exists": bool(update)},
        })
    client.write(writes, batch=1 if naive else MAX_WRITES)
    return len(writes)


def main():
    parser = argparse.ArgumentParser(
        prog="python3 -m benchmark.reference", description="Reference Firestore clients (minimal and naive) for scripts/bench.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("command", choices=["pull", "push", "clone-db"])
    parser.add_argument("directory", help="directory of record files")
    parser.add_argument("files", nargs="*", help="push only these record files (default: all *.json in DIR)")
    parser.add_argument("--host", default=os.environ.get("FIRESTORE_EMULATOR_HOST"),
                        help="emulator host:port (default $FIRESTORE_EMULATOR_HOST)")
    parser.add_argument("--project", required=True)
    parser.add_argument("--collection", default="books")
    parser.add_argument("--naive", action="store_true", help="one request per document")
    parser.add_argument("--update", action="store_true", help="push: update existing documents (exists=true)")
    parser.add_argument("--where", help="pull: only the documents that match 'FIELD OP VALUE' (VALUE as JSON)")
    parser.add_argument("--groups", help="clone-db: the subcollection ids, comma-separated (default: found by one "
                                         "names-only query over the database)")
    args = parser.parse_intermixed_args()
    if not args.host:
        parser.error("--host or FIRESTORE_EMULATOR_HOST is required")
    # A whole database's single queries (200,000 names; 24,000 bodies) take the emulator
    # seconds, and a loaded machine many more: no 60 s socket timeout for clone-db.
    client = Client(args.host, args.project, timeout=600 if args.command == "clone-db" else 60)
    started = time.perf_counter()
    if args.command == "pull":
        n = pull(client, args.directory, args.collection, args.naive, args.where)
    elif args.command == "clone-db":
        n = clone_db(client, args.directory, args.groups.split(",") if args.groups is not None else None)
    else:
        n = push(client, args.directory, args.collection, args.naive, args.update, args.files)
    print("%s %d documents in %d requests, %.3f s" % (args.command, n, client.requests, time.perf_counter() - started))


if __name__ == "__main__":
    main()
