#!/usr/bin/env python3
"""A counting HTTP/1.1 forwarding proxy on 127.0.0.1 for scripts/bench (standard library only).

Point a client's FIRESTORE_EMULATOR_HOST at the proxy; every request is
forwarded to the upstream (the Firestore emulator) and counted: requests,
bytes the client sent (request line, headers and body) and bytes it received
(status line, headers and body, as the proxy writes them: the body is
forwarded with a Content-Length, so chunk framing is not counted).

  count_proxy.py --upstream 127.0.0.1:8080 [--port 0] [--dump counts.json] [--latency-ms 0]

--latency-ms holds every request that long before forwarding it: one network
round trip to a real Firestore, simulated on loopback.

On start it prints `COUNT_PROXY_HOST=127.0.0.1:PORT` on stdout. Counts are read
and reset through the proxy itself (these requests are not counted):

  GET  /__counts        {"requests", "warmups", "bytes_sent", "bytes_received",
                         "documents", "billed_reads", "by_kind", "log"}
  POST /__reset         zero everything

`billed_reads` estimates what Firestore would bill for the answers forwarded
(see billed_reads() for the rules; `booksync -v` prints the same estimate from
its side), `documents` counts the documents they carried; both are also given
per kind. A request outside Firestore's API (`/v1/`) is not one of
`requests` but one of `warmups`: booksync's `GET /` that opens a connection
to a loopback emulator before its first Firestore request (LoopbackWarmup).
`log` lists each request: method, path (query included), status,
bytes sent and received, documents and billed reads. On SIGTERM or SIGINT the
counts are written to --dump (if given) and
the proxy exits.

Every client connection is served by its own thread with TCP_NODELAY set and its
own keep-alive connection to the upstream; requests are bounded by timeouts.
"""
import argparse
import gzip
import http.client
import http.server
import json
import signal
import socket
import threading
import time

HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
              "trailers", "transfer-encoding", "upgrade", "proxy-connection", "expect"}
UPSTREAM_TIMEOUT = 120.0  # seconds for one upstream answer
CLIENT_TIMEOUT = 300.0  # idle keep-alive client connections are closed after this
MAX_LOG = 200_000  # log entries kept (counts are always complete)


def kind_of(method, path):
    """A coarse request kind for the summary: list, get, batchGet, commit, batchWrite, other.
    A request outside Firestore's API (booksync's `GET /` that opens a
    connection to a loopback emulator) is other."""
    base = path.split("?", 1)[0]
    if not base.startswith("/v1/"):
        return "other"
    for suffix in (":batchGet", ":commit", ":batchWrite", ":runQuery", ":runAggregationQuery", ":listDocuments", ":listCollectionIds"):
        if base.endswith(suffix):
            return suffix[1:]
    if method == "GET":
        # projects/P/databases/D/documents/COLL  (odd number of segments after documents) = list
        segments = base.split("/documents/", 1)[-1].strip("/").split("/")
        return "list" if len(segments) % 2 == 1 else "get"
    return method.lower()


def names_only(path, body):
    """True for a listing that asks for document names only, not bodies: a GET with
    mask.fieldPaths=__name__, or a :runQuery selecting just __name__."""
    if "mask.fieldPaths=__name__" in path:
        return True
    if path.split("?", 1)[0].endswith(":runQuery"):
        try:
            select = json.loads(body)["structuredQuery"].get("select", {}).get("fields")
        except (ValueError, KeyError, AttributeError, TypeError):
            return False
        return select == [{"fieldPath": "__name__"}]
    return False


def billed_reads(method, path, status, body):
    """(documents, billed reads) of one answer, by Firestore's pricing rules
    (firebase.google.com/docs/firestore/pricing); booksync's FirestoreUsage.cost
    applies the same rules:

    - :runQuery and documents.list (GET of a collection): one read per document
      returned, names-only projections included, and at least one per query
      (the minimum charge for a query that matches nothing);
    - GET of one document: one read;
    - :batchGet: one read per `found` document and one per `missing` one. The
      pricing pages do not say what a lookup of a document that does not exist
      costs; we assume it is billed like any point read (an estimate that errs
      high). `documents` counts found ones only;
    - :listCollectionIds: one read per request (page): the pricing page bills a
      request for a list of collection IDs as one document read, once per
      request when paginated;
    - :runAggregationQuery: one read per started 1,000 counted index entries
      (0..1,000 -> 1, 1,500 -> 2), from the largest count in the answer;
    - writes and error answers (non-2xx): no reads.
    """
    if not 200 <= status < 300:
        return 0, 0
    base = path.split("?", 1)[0]
    kind = kind_of(method, path)
    if kind not in ("runQuery", "batchGet", "runAggregationQuery", "list", "get", "listCollectionIds"):
        return 0, 0
    if kind == "listCollectionIds":
        return 0, 1
    if kind == "get":
        return 1, 1
    try:
        answer = json.loads(body)
    except ValueError:
        return 0, 0  # not JSON: the client retries; nothing to count
    entries = [e for e in answer if isinstance(e, dict)] if isinstance(answer, list) else []
    if kind == "runQuery":
        found = sum(1 for e in entries if "document" in e)
        return found, max(1, found)
    if kind == "batchGet":
        found = sum(1 for e in entries if "found" in e)
        missing = sum(1 for e in entries if "missing" in e)
        return found, found + missing
    if kind == "runAggregationQuery":
        counted = 0
        for e in entries:
            fields = (e.get("result") or {}).get("aggregateFields") or {}
            for value in fields.values():
                try:
                    counted = max(counted, int(value.get("integerValue")))
                except (TypeError, ValueError, AttributeError):
                    pass
        return 0, max(1, -(-counted // 1000))
    listed = len(answer.get("documents") or []) if isinstance(answer, dict) else 0
    return listed, max(1, listed)


class Counts:
    """Thread-safe totals and per-request log."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.requests = 0
            self.warmups = 0
            self.bytes_sent = 0
            self.bytes_received = 0
            self.documents = 0
            self.billed_reads = 0
            self.by_kind = {}
            self.log = []

    def add(self, method, path, status, sent, received, names_only=False, documents=0, billed=0):
        kind = kind_of(method, path)
        with self.lock:
            if not path.startswith("/v1/"):
                # booksync's `GET /` that opens a connection to a loopback emulator
                # (LoopbackWarmup): counted apart, not as a Firestore request.
                self.warmups += 1
                return
            self.requests += 1
            self.bytes_sent += sent
            self.bytes_received += received
            self.documents += documents
            self.billed_reads += billed
            k = self.by_kind.setdefault(kind, {"requests": 0, "bytes_sent": 0, "bytes_received": 0,
                                               "documents": 0, "billed_reads": 0})
            k["requests"] += 1
            k["bytes_sent"] += sent
            k["bytes_received"] += received
            k["documents"] += documents
            k["billed_reads"] += billed
            if len(self.log) < MAX_LOG:
                self.log.append({"method": method, "path": path, "kind": kind, "status": status,
                                 "sent": sent, "received": received, "names_only": names_only,
                                 "documents": documents, "billed_reads": billed})

    def snapshot(self):
        with self.lock:
            return {"requests": self.requests, "warmups": self.warmups, "bytes_sent": self.bytes_sent,
                    "bytes_received": self.bytes_received,
                    "documents": self.documents, "billed_reads": self.billed_reads,
                    "by_kind": json.loads(json.dumps(self.by_kind)), "log": list(self.log)}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "count_proxy"
    timeout = CLIENT_TIMEOUT

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.upstream = None

    def finish(self):
        try:
            super().finish()
        finally:
            if self.upstream is not None:
                self.upstream.close()

    def log_message(self, fmt, *args):  # quiet
        pass

    def _reply_local(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _upstream(self):
        if self.upstream is None:
            host, port = self.server.upstream
            conn = http.client.HTTPConnection(host, port, timeout=UPSTREAM_TIMEOUT)
            conn.connect()
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.upstream = conn
        return self.upstream

    def _forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path == "/__counts" and self.command == "GET":
            return self._reply_local(200, self.server.counts.snapshot())
        if self.path == "/__reset" and self.command == "POST":
            self.server.counts.reset()
            return self._reply_local(200, {"ok": True})
        sent = len(self.raw_requestline) + 2 + len(body)
        headers = {}
        for name, value in self.headers.items():
            sent += len(name) + 2 + len(value) + 2
            if name.lower() not in HOP_BY_HOP and name.lower() != "host":
                headers[name] = value
        headers["Host"] = "%s:%d" % self.server.upstream
        if self.server.latency:
            time.sleep(self.server.latency)
        for attempt in range(2):  # one reconnect if the kept-alive upstream connection was closed
            try:
                conn = self._upstream()
                conn.request(self.command, self.path, body=body or None, headers=headers)
                response = conn.getresponse()
                payload = response.read()
                break
            except (http.client.HTTPException, ConnectionError, OSError):
                if self.upstream is not None:
                    self.upstream.close()
                    self.upstream = None
                if attempt == 1:
                    self.send_error(502, "upstream failed")
                    return
        out = [("HTTP/1.1 %d %s\r\n" % (response.status, response.reason)).encode()]
        for name, value in response.getheaders():
            if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                out.append(("%s: %s\r\n" % (name, value)).encode())
        out.append(("Content-Length: %d\r\n\r\n" % len(payload)).encode())
        head = b"".join(out)
        answer = payload
        if (response.getheader("Content-Encoding") or "").lower() == "gzip":
            try:
                answer = gzip.decompress(payload)
            except OSError:
                answer = b""
        # Counted before the answer is forwarded: a client that has its answer
        # (and a test that then asks /__counts) always finds it counted.
        documents, billed = billed_reads(self.command, self.path, response.status, answer)
        self.server.counts.add(self.command, self.path, response.status, sent, len(head) + len(payload),
                               names_only(self.path, body), documents, billed)
        self.wfile.write(head + payload)
        self.wfile.flush()
        if response.will_close:
            self.upstream.close()
            self.upstream = None

    do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _forward


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def main():
    parser = argparse.ArgumentParser(description="Counting HTTP forwarding proxy on 127.0.0.1 (see module docstring).",
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--upstream", required=True, help="host:port to forward to (loopback only)")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: a free one)")
    parser.add_argument("--dump", help="write the counts as JSON here on SIGTERM/SIGINT")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="delay added to every request (0..1000 ms)")
    args = parser.parse_args()
    host, port = args.upstream.rsplit(":", 1)
    if host not in ("127.0.0.1", "localhost"):
        parser.error("the upstream must be on loopback")
    server = Server(("127.0.0.1", args.port), Handler)
    server.upstream = (host, int(port))
    server.counts = Counts()
    if not 0 <= args.latency_ms <= 1000:
        parser.error("--latency-ms must be 0..1000")
    server.latency = args.latency_ms / 1000.0

    def stop(signum, frame):
        if args.dump:
            with open(args.dump, "w") as f:
                json.dump(server.counts.snapshot(), f)
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("COUNT_PROXY_HOST=127.0.0.1:%d" % server.server_address[1], flush=True)
    server.serve_forever(poll_interval=0.2)
    server.server_close()


if __name__ == "__main__":
    main()
