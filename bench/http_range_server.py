"""A small range-capable static file server (HTTP/1.1 keep-alive, GET/HEAD, one byte range,
os.sendfile), for machines without nginx (the GPU machine): bench/http_bench.py --server python.

    python3 bench/http_range_server.py ROOT   # prints the URL, serves until killed
"""

from __future__ import annotations

import http.server
import os
import re
import sys
import threading


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        self.server.log.append(f"{self.command} {self.path} {args[1] if len(args) > 1 else ''}")  # type: ignore

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    def _serve(self, head: bool) -> None:
        root = self.server.root  # type: ignore[attr-defined]
        full = os.path.normpath(os.path.join(root, self.path.split("?")[0].lstrip("/")))
        if not full.startswith(root + os.sep) or not os.path.isfile(full):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        size = os.path.getsize(full)
        start, stop, status = 0, size, 200
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range") or "")
        if match:
            first, last = match.groups()
            if first == "":
                start, status = max(size - int(last), 0), 206
            else:
                start, stop, status = int(first), size if last == "" else min(int(last) + 1, size), 206
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        self.send_response(status)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{stop - 1}/{size}")
        self.send_header("Content-Length", str(stop - start))
        self.end_headers()
        if head:
            return
        self.wfile.flush()
        with open(full, "rb") as source:
            offset, left = start, stop - start
            while left > 0:
                sent = os.sendfile(self.connection.fileno(), source.fileno(), offset, left)
                if sent == 0:
                    break
                offset += sent
                left -= sent


class _Server(http.server.ThreadingHTTPServer):
    request_queue_size = 256
    daemon_threads = True


class RangeServer:
    def __init__(self, root: str):
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.root = os.path.abspath(root)  # type: ignore[attr-defined]
        self.httpd.log = []  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def requests(self) -> list[str]:
        return list(self.httpd.log)  # type: ignore[attr-defined]

    def clear_log(self) -> None:
        self.httpd.log.clear()  # type: ignore[attr-defined]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


if __name__ == "__main__":
    server = RangeServer(sys.argv[1])
    print(server.url, flush=True)
    threading.Event().wait()
