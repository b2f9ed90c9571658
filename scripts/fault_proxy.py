#!/usr/bin/env python3
"""A fault-injecting HTTP proxy on 127.0.0.1, between booksync and the emulator.

Usage: fault_proxy.py --upstream 127.0.0.1:PORT [--port 0] [--kinds all] [--rate 0.3]
                      [--seed N] [--stall 3] [--max-seconds 600]

Prints "PROXY 127.0.0.1:PORT" when ready. Each request is forwarded to the
upstream emulator, except that with probability --rate one of the chosen fault
kinds is injected instead:

  429       answer 429 RESOURCE_EXHAUSTED with Retry-After: 0.05 (not forwarded)
  500, 503  answer that status with a Firestore error body (not forwarded)
  reset     forward, then drop the connection without answering (the server
            applied the request but the answer is lost)
  stall     wait --stall seconds, longer than booksync's timeout, then drop
  truncate  forward, then send half of the body with the full Content-Length
  garbage   forward, then answer 200 with a body that is not JSON

Control, over HTTP on the same port:
  GET  /__stats            JSON counts of requests and of each fault injected
  POST /__faults?rate=R    change the rate (0 stops all faults)
The proxy exits by itself after --max-seconds.
"""
import argparse
import http.client
import http.server
import json
import random
import socket
import socketserver
import struct
import sys
import threading
import time
import urllib.parse

KINDS = ["429", "500", "503", "reset", "stall", "truncate", "garbage"]


class State:
    def __init__(self, args):
        self.lock = threading.Lock()
        self.rate = args.rate
        self.kinds = KINDS if args.kinds == "all" else args.kinds.split(",")
        self.random = random.Random(args.seed)
        self.stall = args.stall
        self.upstream = args.upstream
        self.stats = {"requests": 0, **{k: 0 for k in KINDS}}

    def pick(self):
        with self.lock:
            self.stats["requests"] += 1
            if self.rate > 0 and self.random.random() < self.rate:
                kind = self.random.choice(self.kinds)
                self.stats[kind] += 1
                return kind
            return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None  # set by main

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send_body(self, status, body, headers=None, declared_length=None):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) if declared_length is None else declared_length))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def drop(self):
        """Closes the connection with a TCP reset: no answer at all."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def control(self):
        if self.path.startswith("/__stats"):
            with self.state.lock:
                body = json.dumps(self.state.stats).encode()
            self.send_body(200, body)
            return True
        if self.path.startswith("/__faults"):
            query = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
            with self.state.lock:
                self.state.rate = float(query.get("rate", ["0"])[0])
            self.send_body(200, b"{}")
            return True
        return False

    def forward(self, body):
        connection = http.client.HTTPConnection(self.state.upstream, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        connection.request(self.command, self.path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, data

    def handle_any(self):
        length = int(self.headers.get("Content-Length", "0") or 0)
        body = self.rfile.read(length) if length else None
        if self.path.startswith("/__"):
            if self.control():
                return
        kind = self.state.pick()
        if kind in ("429", "500", "503"):
            status = int(kind)
            name = {"429": "RESOURCE_EXHAUSTED", "500": "INTERNAL", "503": "UNAVAILABLE"}[kind]
            error = json.dumps({"error": {"code": status, "message": "injected fault", "status": name}}).encode()
            self.send_body(status, error, {"Retry-After": "0.05"} if kind == "429" else None)
            return
        if kind == "stall":
            time.sleep(self.state.stall)
            self.drop()
            return
        status, data = self.forward(body)
        if kind == "reset":
            self.drop()
        elif kind == "truncate":
            self.send_body(status, data[: len(data) // 2], declared_length=len(data))
            self.close_connection = True
        elif kind == "garbage":
            self.send_body(200, b"<html>502 Bad Gateway</html> not json {")
        else:
            self.send_body(status, data)

    do_GET = do_POST = do_PATCH = do_DELETE = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--kinds", default="all", help="comma-separated subset of: " + ",".join(KINDS))
    parser.add_argument("--rate", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stall", type=float, default=3.0)
    parser.add_argument("--max-seconds", type=float, default=600)
    args = parser.parse_args()
    Handler.state = State(args)
    server = Server(("127.0.0.1", args.port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("PROXY 127.0.0.1:%d" % server.server_address[1], flush=True)
    time.sleep(args.max_seconds)
    server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
