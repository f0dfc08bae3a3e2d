"""Debian's nginx run unprivileged on 127.0.0.1 from a temporary config, serving a folder.

Used by the Python tests (python/tests/test_http.py), the benchmark (bench/http_bench.py) and, as
a command, by the C++ tests (tests/http_nginx_test.cpp):

    python3 tests/http/nginx_server.py ROOT     # prints "PORT ACCESS_LOG", serves until stdin closes
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

NGINX_CANDIDATES = ("/usr/sbin/nginx", "/usr/bin/nginx")


def find_nginx() -> str | None:
    for candidate in NGINX_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("nginx")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _user_line() -> str:
    # Started as root, nginx's workers would switch to "nobody" and could not read private temporary
    # folders: they stay the current user. Unprivileged, nginx runs as who started it anyway.
    if os.geteuid() != 0:
        return ""
    import pwd
    return f"user {pwd.getpwuid(os.geteuid()).pw_name};"


CONFIG = """
{user}
daemon off;
worker_processes {workers};
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log {tmp}/access.log;
  client_body_temp_path {tmp}/client_body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;
  default_type application/octet-stream;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  server {{
    listen 127.0.0.1:{port};
    root {root};
    location / {{ }}
  }}
}}
"""


class NginxServer:
    """A running nginx; `url` is http://127.0.0.1:PORT, `access_log` its log file."""

    def __init__(self, root: str, nginx: str | None = None, library_path: str | None = None,
                 workers: int | str = 2):
        """`nginx`: the executable (default: Debian's); `library_path`: LD_LIBRARY_PATH for it alone
        (a packed nginx and its libraries: scripts/pack_device_nginx.sh); `workers`: nginx's
        worker_processes (2 keeps the tests light; "auto", one per core, is what a benchmark wants:
        with 2 a 16-core client measures the server, not itself)."""
        self.nginx = nginx or find_nginx()
        env = None
        if library_path:
            env = dict(os.environ, LD_LIBRARY_PATH=os.path.abspath(library_path))
        if not self.nginx:
            raise FileNotFoundError("nginx not found (Debian package nginx-light: scripts/setup.sh installs it)")
        self.tmp = tempfile.mkdtemp(prefix="zarrdirect-nginx-")
        self.access_log = os.path.join(self.tmp, "access.log")
        last_error = ""
        for _ in range(5):  # the port is free when probed; another process may take it meanwhile
            self.port = _free_port()
            config = os.path.join(self.tmp, "nginx.conf")
            with open(config, "w") as out:
                out.write(CONFIG.format(tmp=self.tmp, port=self.port, root=os.path.abspath(root), user=_user_line(),
                                        workers=workers))
            self.process = subprocess.Popen(
                [self.nginx, "-p", self.tmp, "-e", os.path.join(self.tmp, "error.log"), "-c", config],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
            if self._wait_listening():
                self.url = f"http://127.0.0.1:{self.port}"
                return
            self.process.kill()
            _, err = self.process.communicate(timeout=10)
            last_error = err.decode(errors="replace")
        shutil.rmtree(self.tmp, ignore_errors=True)
        raise RuntimeError(f"nginx did not start: {last_error.strip()}")

    def _wait_listening(self) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return True
            except OSError:
                time.sleep(0.02)
        return False

    def requests(self) -> list[str]:
        """The request lines logged so far ("GET /a/zarr.json HTTP/1.1" ...) with their status."""
        with open(self.access_log) as log:
            return [line.split('"')[1] + " " + line.split('"')[2].split()[0] for line in log if '"' in line]

    def clear_log(self) -> None:
        # nginx appends to the open file: truncating it keeps the descriptor valid.
        with open(self.access_log, "w"):
            pass

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> "NginxServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def main() -> int:
    server = NginxServer(sys.argv[1])
    try:
        print(server.port, server.access_log, flush=True)
        sys.stdin.read()  # serve until the parent closes our stdin (or dies)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
