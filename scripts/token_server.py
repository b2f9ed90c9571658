#!/usr/bin/env python3
"""A checking OAuth token endpoint, metadata server and Firestore proxy on 127.0.0.1
for the credentials tests (standard library and the openssl command only).

  token_server.py --upstream 127.0.0.1:8080 --client-email E --public-key pub.pem
                  --client-id C --client-secret S --refresh-token R [--lifetime 120]

One listener serves:

  POST /token   grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=JWT:
                the JWT's RS256 signature is verified with `openssl dgst -sha256 -verify`
                and the service account's public key; header alg RS256; claims iss =
                the client email, aud = this endpoint's URL, scope = Firestore's,
                iat within 5 minutes of now, exp = iat + 3600.
                grant_type=refresh_token: client id, secret and refresh token must match.
                Errors are OAuth's {"error", "error_description"} with status 400.
  GET  /computeMetadata/v1/instance/service-accounts/default/token
                the metadata server: needs `Metadata-Flavor: Google`.
  GET  /subject a URL subject-token source (external_account): needs the header
                --subject-header NAME:VALUE; answers {"id_token": --subject-token}.
  POST /sts     Google's STS stand-in (RFC 8693 token exchange as Google's auth
                libraries send it): grant_type token-exchange, requested_token_type
                access_token, audience = --audience, a subject_token_type, scope
                cloud-platform or datastore, and subject_token = --subject-token.
                A refusal echoes the subject token it got back in its
                error_description, as a careless server would (booksync must
                scrub it). Answers {"access_token", "expires_in", ...}.
  POST /v1/projects/-/serviceAccounts/EMAIL:generateAccessToken
                the IAM Credentials stand-in: EMAIL must be --impersonate, the
                bearer a token issued here by /sts or /token (never one of its
                own), the JSON body {"scope": [datastore], "lifetime": "Ns"} and,
                if any, "delegates" as projects/-/serviceAccounts/EMAIL; answers
                {"accessToken", "expireTime"} (RFC 3339, --lifetime from now).
  *    /v1/...  forwarded to the upstream (the Firestore emulator) only with
                `Authorization: Bearer T` where T is a token issued here and not
                expired (and, with --require-impersonated, issued by the IAM
                stand-in); anything else gets 401 UNAUTHENTICATED. With
                --expire-first N the first N tokens the IAM stand-in issues are
                expired at once, while their expireTime says --lifetime: the
                client learns it from the proxy's 401, as of a token revoked or
                expired in flight.
  GET  /__log   what happened: {"issued": [tokens], "grants": [...], "proxied",
                "rejected", "expired_uses", "quota_projects": [x-goog-user-project
                values], "sts": [scope of each exchange], "sts_refused",
                "subject_gets", "impersonations": [{"bearer_kind", "delegates",
                "lifetime"}]}

Tokens are random and live --lifetime seconds. On start it prints
{"port": PORT} on stdout; it exits when its standard input closes, or after
--max-seconds.
"""
import argparse
import base64
import http.client
import http.server
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

SCOPE = "https://www.googleapis.com/auth/datastore"
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
SUBJECT_TOKEN_TYPES = ("urn:ietf:params:oauth:token-type:jwt", "urn:ietf:params:oauth:token-type:id_token")
IAM_PATH = re.compile(r"^/v1/projects/-/serviceAccounts/([^/:]+):generateAccessToken$")

args = None
lock = threading.Lock()
state = {"issued": {}, "kinds": {}, "grants": [], "proxied": 0, "rejected": 0, "expired_uses": 0, "expired_early": 0, "quota_projects": [],
         "sts": [], "sts_refused": 0, "subject_gets": 0, "impersonations": []}


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verify_signature(signing_input, signature):
    with tempfile.TemporaryDirectory() as directory:
        data_path = os.path.join(directory, "data")
        signature_path = os.path.join(directory, "signature")
        with open(data_path, "wb") as f:
            f.write(signing_input)
        with open(signature_path, "wb") as f:
            f.write(signature)
        result = subprocess.run(["openssl", "dgst", "-sha256", "-verify", args.public_key, "-signature", signature_path, data_path],
                                capture_output=True, timeout=20)
        return result.returncode == 0


def check_assertion(assertion, audience):
    """None when the JWT is good, else why not."""
    parts = assertion.split(".")
    if len(parts) != 3:
        return "Invalid JWT: not three parts."
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        signature = b64url_decode(parts[2])
    except Exception:
        return "Invalid JWT: not base64url JSON."
    if header.get("alg") != "RS256":
        return "Invalid JWT: alg must be RS256."
    if not verify_signature((parts[0] + "." + parts[1]).encode(), signature):
        return "Invalid JWT Signature."
    now = time.time()
    if claims.get("iss") != args.client_email:
        return "Invalid issuer: %s" % claims.get("iss")
    if claims.get("aud") != audience:
        return "Invalid JWT audience: %s" % claims.get("aud")
    if claims.get("scope") != SCOPE:
        return "Invalid scope: %s" % claims.get("scope")
    iat, exp = claims.get("iat"), claims.get("exp")
    if not isinstance(iat, int) or abs(iat - now) > 300:
        return "Invalid JWT: Token must be a short-lived token (iat)."
    if exp != iat + 3600 or exp <= now:
        return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe."
    return None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, body, content_type="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def new_token(self, grant):
        token = "ya29.test-" + secrets.token_urlsafe(24)
        with lock:
            state["issued"][token] = time.time() + args.lifetime
            state["kinds"][token] = grant
            state["grants"].append(grant)
        return token

    def issue(self, grant):
        token = self.new_token(grant)
        self.answer(200, {"access_token": token, "expires_in": args.lifetime, "token_type": "Bearer"})

    def bearer_kind(self):
        """The grant that issued the request's bearer token, if it is one of ours and alive."""
        authorization = self.headers.get("Authorization", "")
        token = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else ""
        with lock:
            expiry = state["issued"].get(token)
            if expiry is None or expiry <= time.time():
                return None
            return state["kinds"].get(token)

    def do_GET(self):
        self.route()

    def do_POST(self):
        self.route()

    def do_PATCH(self):
        self.route()

    def do_DELETE(self):
        self.route()

    def route(self):
        body = self.body()
        if self.path == "/__log":
            with lock:
                snapshot = dict(state, issued=list(state["issued"]))
                del snapshot["kinds"]
            return self.answer(200, snapshot)
        if self.path == "/token" and self.command == "POST":
            return self.token(body)
        if self.path == "/computeMetadata/v1/instance/service-accounts/default/token" and self.command == "GET":
            if self.headers.get("Metadata-Flavor") != "Google":
                return self.answer(403, b"Missing Metadata-Flavor:Google header.", "text/plain")
            return self.issue("metadata")
        if self.path == "/subject" and self.command == "GET":
            return self.subject()
        if self.path == "/sts" and self.command == "POST":
            return self.sts(body)
        match = IAM_PATH.match(self.path)
        if match and self.command == "POST":
            return self.generate_access_token(match.group(1), body)
        if self.path.startswith("/v1/"):
            return self.proxy(body)
        self.answer(404, {"error": "not_found"})

    def token(self, body):
        form = urllib.parse.parse_qs(body.decode(), keep_blank_values=True)
        one = lambda key: (form.get(key) or [""])[0]
        grant_type = one("grant_type")
        if grant_type == JWT_BEARER:
            audience = "http://127.0.0.1:%d/token" % self.server.server_address[1]
            problem = check_assertion(one("assertion"), audience)
            if problem:
                return self.answer(400, {"error": "invalid_grant", "error_description": problem})
            return self.issue("service_account")
        if grant_type == "refresh_token":
            if one("client_id") != args.client_id or one("client_secret") != args.client_secret:
                return self.answer(401, {"error": "invalid_client", "error_description": "The OAuth client was not found."})
            if one("refresh_token") != args.refresh_token:
                return self.answer(400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."})
            return self.issue("authorized_user")
        self.answer(400, {"error": "unsupported_grant_type", "error_description": "Invalid grant_type: %s" % grant_type})

    def subject(self):
        name, _, value = (args.subject_header or ":").partition(":")
        if not args.subject_token or self.headers.get(name) != value:
            return self.answer(403, {"error": "the %s header is missing or wrong" % name})
        with lock:
            state["subject_gets"] += 1
        self.answer(200, {"id_token": args.subject_token, "expires_in": 3600})

    def sts(self, body):
        form = urllib.parse.parse_qs(body.decode(), keep_blank_values=True)
        one = lambda key: (form.get(key) or [""])[0]
        problem = None
        if one("grant_type") != TOKEN_EXCHANGE:
            problem = ("unsupported_grant_type", "Invalid grant_type: %s" % one("grant_type"))
        elif one("requested_token_type") != ACCESS_TOKEN_TYPE:
            problem = ("invalid_request", "Invalid requested_token_type.")
        elif one("audience") != args.audience:
            problem = ("invalid_target", "The target service indicated by the audience parameter is invalid: %s" % one("audience"))
        elif one("subject_token_type") not in SUBJECT_TOKEN_TYPES:
            problem = ("invalid_request", "Invalid subject_token_type.")
        elif one("scope") not in (CLOUD_PLATFORM, SCOPE):
            problem = ("invalid_scope", "Invalid scope: %s" % one("scope"))
        elif not args.subject_token or one("subject_token") != args.subject_token:
            # Echoes what it got, as a careless server would: booksync must scrub it.
            problem = ("invalid_grant", "The subject token %s could not be verified." % one("subject_token"))
        if problem:
            with lock:
                state["sts_refused"] += 1
            return self.answer(400, {"error": problem[0], "error_description": problem[1]})
        with lock:
            state["sts"].append(one("scope"))
        token = self.new_token("sts")
        self.answer(200, {"access_token": token, "issued_token_type": ACCESS_TOKEN_TYPE, "token_type": "Bearer",
                          "expires_in": args.lifetime})

    def generate_access_token(self, email, body):
        def refuse(status, code, message):
            self.answer(status, {"error": {"code": status, "status": code, "message": message}})
        kind = self.bearer_kind()
        if kind not in ("sts", "authorized_user", "service_account"):
            return refuse(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        if email != args.impersonate:
            return refuse(403, "PERMISSION_DENIED", "Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist).")
        try:
            request = json.loads(body)
        except ValueError:
            return refuse(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        delegates = request.get("delegates") or []
        if request.get("scope") != [SCOPE] or not re.fullmatch(r"[0-9]+s", str(request.get("lifetime"))):
            return refuse(400, "INVALID_ARGUMENT", "Invalid scope or lifetime: %s %s" % (request.get("scope"), request.get("lifetime")))
        if any(not re.fullmatch(r"projects/-/serviceAccounts/[^/]+", d) for d in delegates):
            return refuse(400, "INVALID_ARGUMENT", "Invalid delegates: %s" % delegates)
        with lock:
            state["impersonations"].append({"bearer_kind": kind, "delegates": delegates, "lifetime": request.get("lifetime")})
        token = self.new_token("iam")
        with lock:
            if state["expired_early"] < args.expire_first:
                state["expired_early"] += 1
                state["issued"][token] = time.time()
        expire = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + args.lifetime))
        self.answer(200, {"accessToken": token, "expireTime": expire})

    def proxy(self, body):
        authorization = self.headers.get("Authorization", "")
        token = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else ""
        with lock:
            expiry = state["issued"].get(token)
            valid = expiry is not None and expiry > time.time()
            if valid and args.require_impersonated and state["kinds"].get(token) != "iam":
                valid = False
            if not valid and expiry is not None and expiry <= time.time():
                state["expired_uses"] += 1
            if valid:
                state["proxied"] += 1
                quota = self.headers.get("x-goog-user-project")
                if quota:
                    state["quota_projects"].append(quota)
            else:
                state["rejected"] += 1
        if not valid:
            return self.answer(401, {"error": {"code": 401, "status": "UNAUTHENTICATED",
                                               "message": "Request had invalid authentication credentials."}})
        connection = http.client.HTTPConnection(args.upstream, timeout=30)
        try:
            headers = {"Authorization": "Bearer owner"}
            if self.headers.get("Content-Type"):
                headers["Content-Type"] = self.headers["Content-Type"]
            connection.request(self.command, self.path, body=body or None, headers=headers)
            response = connection.getresponse()
            data = response.read()
            self.answer(response.status, data, response.getheader("Content-Type") or "application/json")
        finally:
            connection.close()


def main():
    global args
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--client-email", required=True)
    parser.add_argument("--public-key", required=True)
    parser.add_argument("--client-id", default="test-client")
    parser.add_argument("--client-secret", default="test-secret")
    parser.add_argument("--refresh-token", default="1//test-refresh")
    parser.add_argument("--lifetime", type=int, default=120)
    parser.add_argument("--audience", default="//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/ci/providers/test")
    parser.add_argument("--subject-token", default="")
    parser.add_argument("--subject-header", default="")
    parser.add_argument("--impersonate", default="")
    parser.add_argument("--require-impersonated", action="store_true")
    parser.add_argument("--expire-first", type=int, default=0)
    parser.add_argument("--max-seconds", type=int, default=600)
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    time.sleep(args.max_seconds)
    os._exit(0)


if __name__ == "__main__":
    main()
