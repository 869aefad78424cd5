#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A stand-in for a Grafana Pyroscope server's ingest API, on 127.0.0.1, for tests.

It implements the request as documented for Pyroscope v1
(https://grafana.com/docs/pyroscope/latest/configure-server/about-server-api/):
POST /ingest?name=APP{k=v,...}&from=UNIX_S&until=UNIX_S with a multipart/form-data
body whose file field "profile" holds the pprof and whose optional file field
"sample_type_config" holds JSON. A request the real server would refuse (no name,
from or until; no profile part; a profile that is not gzip; bad JSON) gets 400.
Each accepted request is stored as STORE/N.pb.gz and STORE/N.json (query,
sample_type_config), and one line "N FROM UNTIL NAME" is appended to STORE/log.
GET /ready answers "ready"; GET /api/v1/status/buildinfo a version.

Modes (--mode): ok; fail:N (the first N ingest requests get 500); slow:N (the
first N ingest requests are held --slow-secs seconds, then dropped unstored);
hang-after:N (requests after the first N ingest requests are held for good);
401 (every request is refused with 401). With --token or --basic USER:PASS, a
request without that credential gets 401 whatever the mode.

The port is written to --port-file once listening; --port reuses a port (a
server "restarted").
"""
import argparse
import base64
import email.parser
import email.policy
import gzip
import http.server
import json
import os
import threading
import time
import urllib.parse


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--mode", default="ok")
    ap.add_argument("--slow-secs", type=float, default=5.0)
    ap.add_argument("--token")
    ap.add_argument("--basic")
    return ap.parse_args()


ARGS = parse_args()
LOCK = threading.Lock()
SEEN = {"ingest": 0}
MODE, _, N = ARGS.mode.partition(":")
N = int(N or 0)


def multipart_files(ctype, body):
    """The file fields of a multipart/form-data body, by name."""
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
    if not msg.is_multipart():
        return None
    files = {}
    for part in msg.iter_parts():
        disp = part.get("Content-Disposition", "")
        params = dict(part.get_params(header="content-disposition") or [])
        if not disp.startswith("form-data") or "name" not in params:
            continue
        # Pyroscope reads these parts as form files: a filename is required.
        if "filename" in params:
            files[params["name"]] = part.get_payload(decode=True)
    return files


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, text):
        data = (text + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def authorized(self):
        got = self.headers.get("Authorization", "")
        if MODE == "401":
            return False
        if ARGS.token:
            return got == "Bearer " + ARGS.token
        if ARGS.basic:
            return got == "Basic " + base64.b64encode(ARGS.basic.encode()).decode()
        return True

    def do_GET(self):
        if not self.authorized():
            return self.answer(401, "invalid credentials: the token was not accepted")
        path = urllib.parse.urlsplit(self.path).path
        if path == "/ready":
            return self.answer(200, "ready")
        if path == "/api/v1/status/buildinfo":
            return self.answer(200, json.dumps({"status": "success",
                                                "data": {"version": "rx-test"}}))
        return self.answer(404, "404 page not found")

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if url.path != "/ingest":
            return self.answer(404, "404 page not found")
        with LOCK:
            SEEN["ingest"] += 1
            nth = SEEN["ingest"]
        if not self.authorized():
            return self.answer(401, "invalid credentials: the token was not accepted")
        if MODE == "fail" and nth <= N:
            return self.answer(500, "injected failure %d of %d" % (nth, N))
        if MODE == "slow" and nth <= N:
            time.sleep(ARGS.slow_secs)
            self.close_connection = True
            return None
        if MODE == "hang-after" and nth > N:
            time.sleep(3600)
            return None
        q = urllib.parse.parse_qs(url.query)
        for k in ("name", "from", "until"):
            if k not in q:
                return self.answer(400, "missing query parameter " + k)
        if "format" in q and q["format"][0] == "pprof":
            return self.answer(400, "format=pprof takes a bare body, not a form")
        ctype = self.headers.get("Content-Type", "")
        if not ctype.startswith("multipart/form-data"):
            return self.answer(400, "expected multipart/form-data, got " + ctype)
        files = multipart_files(ctype, body)
        if not files or "profile" not in files:
            return self.answer(400, "no form file named profile")
        try:
            gzip.decompress(files["profile"])
        except OSError as e:
            return self.answer(400, "profile is not gzip: %s" % e)
        stc = None
        if "sample_type_config" in files:
            try:
                stc = json.loads(files["sample_type_config"])
            except ValueError as e:
                return self.answer(400, "sample_type_config: %s" % e)
        with LOCK:
            n = sum(1 for f in os.listdir(ARGS.store) if f.endswith(".json")) + 1
            with open(os.path.join(ARGS.store, "%d.pb.gz" % n), "wb") as f:
                f.write(files["profile"])
            with open(os.path.join(ARGS.store, "%d.json" % n), "w") as f:
                json.dump({"query": {k: v[0] for k, v in q.items()},
                           "sample_type_config": stc,
                           "authorization": self.headers.get("Authorization")}, f)
            with open(os.path.join(ARGS.store, "log"), "a") as f:
                f.write("%d %s %s %s\n" % (n, q["from"][0], q["until"][0], q["name"][0]))
        return self.answer(200, "")


def main():
    os.makedirs(ARGS.store, exist_ok=True)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    srv.daemon_threads = True
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, ARGS.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
