#!/usr/bin/env python3
"""Warms freshly started Firestore emulators with the requests booksync makes,
so that the tests which follow do not meet a cold JVM.

    scripts/warm-emulator.py --host 127.0.0.1:PORT [--host ...] [--seconds 20] [--rounds 6]

A fresh emulator answers its first thousands of requests slowly while its JVM
compiles them, and a client waiting for an answer spins on Linux (the
Benchmarks article, "Waiting costs a core"): on two cores the first minute of
`swift test` then fights the emulator for the CPU. scripts/test runs this
during its build, against a project of its own (reset after each round), with
the kinds of request booksync sends: commits (with a server-time transform),
:batchWrite with preconditions, listings with and without masks, :runQuery
with field, composite and unary filters, order, cursors, a read time and
collection groups, :runAggregationQuery, :batchGet and :listCollectionIds.
Bounded: at most --rounds rounds per emulator, none started after --seconds,
each request cut off after REQUEST_TIMEOUT, and the whole run after --seconds
plus a minute. An emulator that errs, or one that did not finish a round,
fails the run (exit 1) with what went wrong."""
import argparse
import sys
import threading
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from harness.emulator import Client, Error  # noqa: E402

DOCUMENTS = 1000
REQUEST_TIMEOUT = 20  # seconds: a warm-up request the emulator does not answer by then fails the run
GRACE = 60  # seconds past --seconds that a round already started may take


def book(i):
    return {"title": {"stringValue": "Book %d" % i}, "year": {"integerValue": str(1900 + i % 120)},
            "rating": {"doubleValue": (i % 50) / 10}, "tags": {"arrayValue": {"values": [{"stringValue": "t%d" % (i % 7)}]}},
            "published": {"timestampValue": "2001-02-03T04:05:06.%06dZ" % i}}


def one_round(client, round_number):
    ids = ["b%04d" % i for i in range(DOCUMENTS)]
    written = client.commit([{"update": {"name": client.name("books/%s" % doc_id), "fields": book(i)}} for i, doc_id in enumerate(ids[:500])])
    client.write([{"update": {"name": client.name("books/%s" % doc_id), "fields": book(i + 500)},
                   "updateTransforms": [{"fieldPath": "updatedAt", "setToServerValue": "REQUEST_TIME"}]}
                  for i, doc_id in enumerate(ids[500:])])
    client.write([{"update": {"name": client.name("books/b0001/reviews/r%d" % i), "fields": {"stars": {"integerValue": str(i)}}}}
                  for i in range(20)])
    listed = list(client.list("books"))
    names = list(client.list("books", mask=["__name__"]))
    assert len(listed) == len(names) == DOCUMENTS, (len(listed), len(names))
    # The change query's shape: a filter, an order, a cursor, a limit.
    query = {"from": [{"collectionId": "books"}],
             "where": {"fieldFilter": {"field": {"fieldPath": "year"}, "op": "GREATER_THAN_OR_EQUAL", "value": {"integerValue": "1950"}}},
             "orderBy": [{"field": {"fieldPath": "year"}}, {"field": {"fieldPath": "__name__"}}], "limit": 300}
    page = client.query(query)
    if page:
        last = page[-1]
        query["startAt"] = {"values": [last["fields"]["year"], {"referenceValue": last["name"]}], "before": False}
        client.query(query)
    client.query({"from": [{"collectionId": "reviews", "allDescendants": True}], "select": {"fields": [{"fieldPath": "__name__"}]}})
    # A scope's shape: and/or of field filters, a unary filter.
    client.query({"from": [{"collectionId": "books"}],
                  "where": {"compositeFilter": {"op": "AND", "filters": [
                      {"fieldFilter": {"field": {"fieldPath": "rating"}, "op": "LESS_THAN", "value": {"doubleValue": 3}}},
                      {"compositeFilter": {"op": "OR", "filters": [
                          {"fieldFilter": {"field": {"fieldPath": "tags"}, "op": "ARRAY_CONTAINS", "value": {"stringValue": "t1"}}},
                          {"unaryFilter": {"field": {"fieldPath": "updatedAt"}, "op": "IS_NOT_NULL"}}]}}]}}})
    # A listing pinned to a read time, as a scoped pull's pages are.
    client.request("POST", client.root + ":runQuery",
                   {"structuredQuery": {"from": [{"collectionId": "books"}], "limit": 100}, "readTime": written["commitTime"]})
    client.request("POST", client.root + ":runAggregationQuery",
                   {"structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "books"}]},
                                                   "aggregations": [{"alias": "n", "count": {}}]}})
    client.request("POST", client.root + ":batchGet", {"documents": [client.name("books/%s" % i) for i in ids[:200]]})
    client.request("POST", client.root + "/books/b0001:listCollectionIds", {"pageSize": 100})
    updated = [{"update": {"name": doc["name"], "fields": dict(doc["fields"], rating={"doubleValue": round_number})},
                "currentDocument": {"updateTime": doc["updateTime"]}} for doc in listed[:500]]
    client.request("POST", client.root + ":batchWrite", {"writes": updated})
    deletes = [{"delete": client.name("books/%s" % i), "currentDocument": {"exists": True}} for i in ids[:500]]
    client.request("POST", client.root + ":batchWrite", {"writes": deletes})
    client.reset()


def warm(host, deadline, rounds, problems, done):
    """Runs rounds against `host` until `rounds` or `deadline`; a problem of
    any kind is recorded (a thread's exception would otherwise vanish)."""
    client = None
    try:
        client = Client(host, "warm-emulator", timeout=REQUEST_TIMEOUT)
        for number in range(rounds):
            if time.monotonic() > deadline:
                break
            one_round(client, number)
            done[host] = number + 1
    except BaseException as error:  # noqa: B036 - reported, never swallowed
        problems.append("%s: %s: %s" % (host, type(error).__name__, error))
    finally:
        if client is not None:
            try:
                client.reset()  # what a failed round left
            except Exception:  # noqa: BLE001 - the round's own error, if any, is the one reported
                pass
            client.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", action="append", required=True, help="an emulator's host:port (loopback); repeatable")
    parser.add_argument("--seconds", type=float, default=20, help="stop starting rounds after this long (default 20)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds per emulator at most (default 6)")
    args = parser.parse_args()
    started = time.monotonic()
    problems, done = [], {}
    threads = [threading.Thread(target=warm, args=(host, started + args.seconds, args.rounds, problems, done), daemon=True)
               for host in args.host]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, started + args.seconds + GRACE - time.monotonic()))
    if any(thread.is_alive() for thread in threads):
        problems.append("still running after %d s" % (args.seconds + GRACE))
    problems += ["%s: no round finished" % host for host in args.host if not done.get(host) and not any(p.startswith(host) for p in problems)]
    if problems:
        print("warm-emulator: " + "; ".join(problems), file=sys.stderr)
        return 1
    print("warmed %d emulator%s in %.1f s (%s rounds)" % (len(args.host), "" if len(args.host) == 1 else "s", time.monotonic() - started,
                                                       " and ".join(str(done[host]) for host in args.host)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
