"""A small HTTP server of the tests' own that serves files from a folder with range support and,
per path, misbehaves on purpose (closed connections, 500s, slow answers, short bodies, ignored
Range, wrong Content-Length, 401/403, redirect loops). Threaded, on 127.0.0.1 port 0.

    with FaultServer(root) as server:
        server.faults["/a/c/0/0"] = Fault("status", status=500, times=2)   # 500 twice, then fine
        zarrdirect.open(server.url + "/a").read()
        server.log   # [(method, path, range header or None, had Authorization)]
"""

from __future__ import annotations

import dataclasses
import http.server
import os
import re
import socket
import threading
import time


@dataclasses.dataclass
class Fault:
    kind: str                 # status | close | slow | short | ignore_range | long_length | small_length
                              # | wrong_range | redirect | redirect_loop | require_token
    status: int = 500
    times: int | None = None  # misbehave this many times, then serve normally; None: always
    delay: float = 0.0        # slow: seconds before answering
    token: str = ""           # require_token: the bearer token expected


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    def _serve(self, head: bool) -> None:
        server: FaultServer = self.server.owner  # type: ignore[attr-defined]
        path = self.path.split("?")[0]
        with server.lock:
            server.log.append((self.command, path, self.headers.get("Range"), "Authorization" in self.headers))
            server.headers.append(dict(self.headers))
            fault = server.faults.get(path)
            if fault is not None and fault.times is not None:
                if fault.times <= 0:
                    fault = None
                else:
                    fault.times -= 1
        if path.startswith("/redirected/"):
            self._redirect(path[len("/redirected"):])
            return
        if server.required_token and self.headers.get("Authorization") != f"Bearer {server.required_token}":
            self._answer(401, b"who are you", head)
            return
        body = server.read(path)
        if fault is not None:
            if self._misbehave(fault, path, body, head):
                return
        if body is None:
            self._answer(404, b"not found", head)
            return
        self._send_body(body, head, honour_range=True)

    def _misbehave(self, fault: Fault, path: str, body: bytes | None, head: bool) -> bool:
        """True when the fault answered the request itself."""
        kind = fault.kind
        if kind == "status":
            self._answer(fault.status, b"injected failure", head)
        elif kind == "close":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        elif kind == "slow":
            time.sleep(fault.delay)
            return False
        elif kind == "redirect_loop":
            self._redirect(path)
        elif kind == "require_token":
            if self.headers.get("Authorization") != f"Bearer {fault.token}":
                self._answer(401, b"who are you", head)
            else:
                return False
        elif body is None:
            return False
        elif kind == "ignore_range":
            self._send_body(body, head, honour_range=False)
        elif kind in ("short", "long_length", "small_length", "wrong_range"):
            start, stop, status = self._range(len(body))
            piece = body[start:stop]
            self.send_response(status)
            if status == 206:
                first = start + 1 if kind == "wrong_range" else start
                self.send_header("Content-Range", f"bytes {first}-{stop - 1}/{len(body)}")
            stated = {"short": len(piece), "long_length": len(piece) + 7,
                      "small_length": max(len(piece) - 3, 0), "wrong_range": len(piece)}[kind]
            self.send_header("Content-Length", str(stated))
            self.send_header("Connection", "close")
            self.end_headers()
            if not head:
                self.wfile.write(piece[: len(piece) // 2] if kind == "short" else piece)
            self.close_connection = True
            if kind == "short":  # the body ends early: the stated length never arrives
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
        else:
            raise ValueError(kind)
        return True

    def _range(self, size: int) -> tuple[int, int, int]:
        header = self.headers.get("Range")
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", header or "")
        if not match:
            return 0, size, 200
        first, last = match.groups()
        if first == "":
            start = max(size - int(last), 0)
            return start, size, 206
        start = int(first)
        stop = size if last == "" else min(int(last) + 1, size)
        return start, stop, 206

    def _send_body(self, body: bytes, head: bool, honour_range: bool) -> None:
        start, stop, status = self._range(len(body)) if honour_range else (0, len(body), 200)
        if status == 206 and start >= len(body):
            self._answer(416, b"", head)
            return
        self.send_response(status)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{stop - 1}/{len(body)}")
        self.send_header("Content-Length", str(stop - start))
        self.end_headers()
        if not head:
            self.wfile.write(body[start:stop])

    def _answer(self, status: int, text: bytes, head: bool) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        if not head:
            self.wfile.write(text)

    def _redirect(self, target: str) -> None:
        self.send_response(302)
        self.send_header("Location", target)
        self.send_header("Content-Length", "0")
        self.end_headers()


class _Server(http.server.ThreadingHTTPServer):
    # Readers open tens of connections at once: the default backlog of 5 would drop SYNs (1 s stalls).
    request_queue_size = 256
    daemon_threads = True


class FaultServer:
    def __init__(self, root: str | os.PathLike):
        self.root = os.path.abspath(root)
        self.faults: dict[str, Fault] = {}
        self.log: list[tuple[str, str, str | None, bool]] = []
        self.headers: list[dict[str, str]] = []  # each request's headers, in order
        self.required_token = ""  # when set, every request without "Bearer <token>" gets 401
        self.lock = threading.Lock()
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.owner = self  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def read(self, path: str) -> bytes | None:
        relative = path.lstrip("/")
        full = os.path.normpath(os.path.join(self.root, relative))
        if not full.startswith(self.root + os.sep) or not os.path.isfile(full):
            return None
        with open(full, "rb") as source:
            return source.read()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "FaultServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
