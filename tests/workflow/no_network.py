"""A machine without internet, for the workflow's tests: an environment in which every Python process (Snakemake and
each job it starts) fails any network connection at once, and posbias runs offline (POSBIAS_OFFLINE=1).

The block is a `sitecustomize` module on PYTHONPATH, which Python imports at every start: it replaces the socket
calls that reach another machine (`connect` of an internet socket, name resolution) with one that raises. Local
sockets (AF_UNIX: multiprocessing's pipes) still connect. The JVM pyserini starts is not Python and is not
blocked; nothing of it reaches the network either.
"""

from __future__ import annotations

import os
from pathlib import Path

BLOCKED = "network blocked by the test: this machine has no internet"

SITECUSTOMIZE = f'''"""Written by tests/workflow/no_network.py: no Python process started with this directory on PYTHONPATH
reaches the network."""
import socket

_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex


def _refuse(*args, **kwargs):
    raise OSError(101, {BLOCKED!r})


def _local_only(original):
    def connect(self, address):
        if self.family == getattr(socket, "AF_UNIX", None):
            return original(self, address)
        _refuse()
    return connect


socket.socket.connect = _local_only(_connect)
socket.socket.connect_ex = _local_only(_connect_ex)
socket.getaddrinfo = socket.gethostbyname = socket.gethostbyname_ex = socket.create_connection = _refuse
'''


def offline_environment(env: dict[str, str], directory: Path) -> dict[str, str]:
    """`env` with the network blocked (the `sitecustomize` written into `directory`) and posbias offline."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    path = os.pathsep.join(part for part in (str(directory), env.get("PYTHONPATH", "")) if part)
    return {**env, "PYTHONPATH": path, "POSBIAS_OFFLINE": "1"}
