"""The Firestore emulator's REST API, as the scripts use it: read, write in
batches, delete, query, and reset a project (standard library only).

Client is one kept-alive HTTP/1.1 connection with TCP_NODELAY, sequential
requests, authorized as the emulator's owner; the benchmark's reference client
(scripts/benchmark/reference.py) is timed through it, so it stays this lean.
A Client belongs to one thread at a time: a thread of its own makes its own.
"""
import http.client
import json
import socket
import urllib.parse

PAGE_SIZE = 300
MAX_PAGES = 1_000_000  # bound on every listing loop
MAX_WRITES = 500  # writes per :commit, Firestore's limit
TIMEOUT = 60.0  # seconds per request
RETRIED = (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected, http.client.BadStatusLine)


class Error(RuntimeError):
    """An answer other than 200: `status`, and the server's text in the message."""

    def __init__(self, method, path, status, payload):
        super().__init__("%s %s -> %d: %s" % (method, path, status, payload[:300].decode(errors="replace")))
        self.status = status


class Client:
    """The REST API of the emulator at `host` (loopback only), for `project`
    (None: only raw calls, e.g. to a proxy's control paths)."""

    def __init__(self, host, project=None, database="(default)", timeout=TIMEOUT):
        if not host.startswith("127.0.0.1:") and not host.startswith("localhost:"):
            raise SystemExit("harness.emulator talks to a loopback emulator only, not %r" % host)
        self.host, self.project, self.timeout = host, project, timeout
        self.database = "projects/%s/databases/%s" % (project, database)
        self.root = self.database + "/documents"
        self.conn = None
        self.requests = 0

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _connect(self):
        hostname, port = self.host.rsplit(":", 1)
        conn = http.client.HTTPConnection(hostname, int(port), timeout=self.timeout)
        conn.connect()
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.conn = conn

    def call(self, method, path, body=None):
        """One request to `path` (from the host's root, e.g. "/v1/..."); returns (status, payload bytes).
        A kept-alive connection the server has closed meanwhile is opened again, once."""
        headers = {"Authorization": "Bearer owner"}
        data = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        for attempt in range(2):
            reused = self.conn is not None
            if not reused:
                self._connect()
            self.requests += 1
            try:
                self.conn.request(method, path, body=data, headers=headers)
                response = self.conn.getresponse()
                return response.status, response.read()
            except RETRIED:
                self.close()
                if not reused or attempt:
                    raise
            except BaseException:
                self.close()
                raise

    def request(self, method, path, body=None):
        """A request to `path` below /v1/; returns the decoded JSON answer, or raises Error."""
        status, payload = self.call(method, "/v1/" + path, body)
        if status != 200:
            raise Error(method, path, status, payload)
        return json.loads(payload) if payload else {}

    def name(self, path):
        """The full name of a document or collection `path` (e.g. "books/dune")."""
        return "%s/%s" % (self.root, path)

    def _document(self, path):
        return urllib.parse.quote(self.name(path), safe="/()")

    # Reading.

    def list(self, collection="books", mask=None):
        """Yields every document of `collection`, page by page; `mask`: the field paths
        to return (["__name__"]: names and times only)."""
        token = None
        for _ in range(MAX_PAGES):
            query = [("pageSize", str(PAGE_SIZE))] + [("mask.fieldPaths", f) for f in (mask or [])]
            if token:
                query.append(("pageToken", token))
            page = self.request("GET", "%s/%s?%s" % (self.root, collection, urllib.parse.urlencode(query)))
            docs = page.get("documents", [])
            yield from docs
            token = page.get("nextPageToken")
            if not docs or not token:
                return
        raise RuntimeError("listing did not end after %d pages" % MAX_PAGES)

    def get(self, path):
        """The document at `path` (e.g. "books/dune"), or None when there is none."""
        try:
            return self.request("GET", self._document(path))
        except Error as error:
            if error.status == 404:
                return None
            raise

    def query(self, structured_query):
        """The documents a :runQuery of `structured_query` answers."""
        answer = self.request("POST", self.root + ":runQuery", {"structuredQuery": structured_query})
        return [entry["document"] for entry in answer if "document" in entry]

    def query_all(self, collection="books"):
        """Every document of a top-level collection, with bodies, in one :runQuery."""
        return self.query({"from": [{"collectionId": collection}]})

    # Writing.

    def commit(self, writes):
        return self.request("POST", self.root + ":commit", {"writes": writes})

    def write(self, writes, batch=MAX_WRITES):
        """Commits `writes` (a list of Firestore Write objects) `batch` at a time."""
        for start in range(0, len(writes), batch):
            self.commit(writes[start:start + batch])

    def update_fields(self, collection, ids, fields, transforms=None):
        """Sets `fields` (Firestore values by field path) of the existing documents `ids`
        with an update mask, as an app edits a field; `transforms`: updateTransforms
        to add to each write (e.g. a server time)."""
        writes = []
        for doc_id in ids:
            write = {"update": {"name": self.name("%s/%s" % (collection, doc_id)), "fields": fields},
                     "updateMask": {"fieldPaths": list(fields)}, "currentDocument": {"exists": True}}
            if transforms:
                write["updateTransforms"] = transforms
            writes.append(write)
        self.write(writes)

    def patch(self, path, fields, mask=None):
        """Writes the document at `path` (created if missing); `mask`: only these field paths."""
        query = "?" + urllib.parse.urlencode([("updateMask.fieldPaths", f) for f in mask]) if mask else ""
        return self.request("PATCH", self._document(path) + query, {"fields": fields})

    def delete(self, path):
        self.request("DELETE", self._document(path))

    def reset(self):
        """Deletes every document of the project (the emulator's own endpoint); returns the HTTP status."""
        status, _ = self.call("DELETE", "/emulator/v1/%s" % self.root)
        return status


def documents(host, project, collection="books", mask=None):
    """Every document of `collection` in `project` on the emulator at `host`
    (Client.list on a connection of its own)."""
    with Client(host, project, timeout=30) as client:
        return list(client.list(collection, mask))
