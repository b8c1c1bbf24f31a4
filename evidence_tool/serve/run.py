"""Start the server on a transport and stop it cleanly on SIGTERM (SPEC.md 14)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import ipaddress
import os
import select
import signal
import socket
import sys
import threading
import time
from types import FrameType

from evidence_tool.errors import UsageError
from evidence_tool.serve.service import EvidenceService
from evidence_tool.serve.workspaces import ServeSettings

TRANSPORTS = ("stdio", "http")
MAX_WORKERS = 64
WATCH_S = 0.05  # how often the supervisor of several workers looks for a new activation
STOPS = {signal.SIGTERM, signal.SIGINT}
READY_S = 60.0  # how long new workers may take to serve before the old ones stop anyway
# How long a stopping worker, no longer accepting, waits for the connections it accepted
# to send their request before uvicorn's shutdown closes the silent ones as idle.
DRAIN_S = 0.5
# A worker that dies within STEADY_S of its start is replaced after a pause that doubles
# (from WATCH_S to RESTART_MAX_S) while its replacements keep dying young: one that fails
# at every start is not forked twenty times a second.
STEADY_S = 10.0
RESTART_MAX_S = 5.0


def is_loopback(host: str) -> bool:
    """Does ``host`` (a name or an address) resolve to loopback addresses only?"""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


def check_bind(host: str, settings: ServeSettings) -> str | None:
    """The token required on ``host``; a non-loopback address without one is refused."""
    token = settings.token()
    if token is None and not is_loopback(host):
        raise UsageError(
            f"refusing to serve on {host} without a token: set {settings.token_env} "
            "(the bearer token clients must send), or bind 127.0.0.1"
        )
    return token


def serve(settings: ServeSettings, transport: str, host: str, port: int, workers: int = 1) -> None:
    """Serve until stdin closes (stdio) or SIGTERM/SIGINT arrives (both); HTTP with
    ``workers`` processes.  One is the default: two halve the waits of eight clients on
    two cores and hold each revision once (``_Supervisor``), but each worker copies the
    shared pages it touches (at 10,000 units just over the 300 MiB target after a run:
    docs/performance.md), and MCP over HTTP loses its sessions."""
    if transport not in TRANSPORTS:
        raise UsageError(f"unknown transport '{transport}'; the transports: stdio, http")
    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be from 0 to 65535, not {port}")
    if not 1 <= workers <= MAX_WORKERS:
        raise UsageError(f"--workers must be from 1 to {MAX_WORKERS}, not {workers}")
    try:
        import mcp  # noqa: F401  # the serve extra
    except ModuleNotFoundError as exc:
        raise UsageError(
            f"serve needs the MCP SDK ({exc.name} is missing): pip install 'evidence-tool[serve]'"
        ) from None
    # One thread per forward pass of the query model: the server embeds several questions
    # side by side, and a pass's extra threads spin-wait for cores the others hold (one
    # query took 326 ms of wall and 186 ms of CPU with torch's two threads on a loaded
    # 2-core machine, 22 and 12 ms with one).  The environment may say otherwise.
    os.environ.setdefault("THT_TORCH_THREADS", "1")
    os.environ.setdefault("THT_ONNX_THREADS", "1")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's, read when it loads
    service = EvidenceService(settings)
    if transport == "stdio":
        _stdio(service)
    else:
        _http(service, host, port, check_bind(host, settings), workers)


def _stdio(service: EvidenceService) -> None:
    from evidence_tool.serve.mcp_app import build_mcp

    def stop(signum: int, frame: FrameType | None) -> None:
        # Nothing to finish: the server never writes. Flush what was said and leave.
        sys.stdout.flush()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    with contextlib.suppress(KeyboardInterrupt):
        build_mcp(service).run("stdio")


def _http(service: EvidenceService, host: str, port: int, token: str | None, workers: int) -> None:
    """uvicorn on one listening socket: in this process, or (``workers`` > 1) in that
    many forked by this one, which supervises them (``_Supervisor``)."""
    import uvicorn

    from evidence_tool.serve.http_app import build_http

    listener = _listen(host, port)  # bound here, so a port in use is a coded error
    bound = listener.getsockname()[1]
    # MCP sessions live in one process; with several, a session's next request may reach
    # another, so each MCP request stands alone (the tools need no session state).
    app = build_http(service, host, token, stateless=workers > 1)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=5,
        lifespan="on",
    )
    # uvicorn finishes the requests in flight on SIGTERM, then raises the signal again
    # under the handler it found: that one ends the process with status 0, not -15.
    signal.signal(signal.SIGTERM, lambda signum, frame: None)
    print(f"serving http://{host}:{bound}/mcp and /v1 (Ctrl-C or SIGTERM stops)", file=sys.stderr)
    if workers == 1:
        uvicorn.Server(config).run(sockets=[listener])  # in-flight requests finish first
    else:
        _Supervisor(service, config, listener, workers).run()


class _Supervisor:
    """Serves nothing itself: it reads every active revision (postings, names, texts),
    freezes what it read (gc.freeze: the forks' collector leaves those pages shared) and
    forks the workers, which load nothing.  On a new activation it reads the new
    revision, forks fresh workers and, once they serve, stops the old ones (SIGTERM:
    they finish their requests), so one copy of a revision is held, not one a worker.
    A worker that dies is replaced; the workers stop when this process ends."""

    def __init__(self, service: EvidenceService, config: object, listener: socket.socket, n: int):
        self.service, self.config, self.listener, self.n = service, config, listener, n
        self.serving: set[int] = set()  # the workers of the newest revision
        self.retiring: set[int] = set()  # older ones, finishing their requests
        self.stopping = False
        self.born: dict[int, float] = {}  # each worker's start (monotonic)
        self.missing, self.pause, self.retry_at = 0, 0.0, 0.0  # dead workers to replace

    def run(self) -> None:
        def stop(signum: int, frame: FrameType | None) -> None:
            self.stopping = True

        for sig in STOPS:
            signal.signal(sig, stop)
        self.alive_r, self.alive_w = os.pipe()  # a worker stops when the supervisor is gone
        self.service.supervised()
        self.service.warm()
        try:
            self._renew()
            while not self.stopping:
                time.sleep(WATCH_S)  # a new activation: a stat of state.yaml a workspace
                self._reap()
                if not self.stopping and self.service.warm():
                    self._renew()
        finally:
            _signal(self.serving | self.retiring, signal.SIGTERM)
            for pid in self.serving | self.retiring:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
            os.close(self.alive_r)
            os.close(self.alive_w)
            gc.unfreeze()  # what _renew froze, handed back to a host that runs on

    def _renew(self) -> None:
        """Fork ``n`` workers of what is read now; once they serve, stop the others."""
        from evidence_tool.activation._speed.postings import give_back  # the serve extra's numpy

        gc.unfreeze()  # the revision just replaced is garbage now: freed, heap returned
        gc.collect()
        give_back()
        gc.freeze()
        ready_r, ready_w = os.pipe()
        self.missing = 0
        old, self.serving = self.serving, {self._fork(ready_w) for _ in range(self.n)}
        os.close(ready_w)
        told, deadline = 0, time.monotonic() + READY_S
        while told < self.n and not self.stopping:
            if not select.select([ready_r], [], [], max(0, deadline - time.monotonic()))[0]:
                break
            # End of file: every new worker is serving, or died (then it is replaced).
            told += len(os.read(ready_r, self.n)) or self.n
        os.close(ready_r)
        _signal(old, signal.SIGTERM)
        self.retiring |= old

    def _reap(self) -> None:
        """Replace a worker of the newest revision that died (after ``pause`` if it died
        young); forget an old one."""
        now = time.monotonic()
        with contextlib.suppress(ChildProcessError):  # no worker at all
            while (pid := os.waitpid(-1, os.WNOHANG)[0]) != 0:
                self.retiring.discard(pid)
                young = now - self.born.pop(pid, now) < STEADY_S
                if pid in self.serving:
                    self.serving.remove(pid)
                    self.pause = min(RESTART_MAX_S, max(WATCH_S, 2 * self.pause)) if young else 0
                    self.missing, self.retry_at = self.missing + 1, now + self.pause
        while self.missing and now >= self.retry_at:
            self.missing -= 1
            self.serving.add(self._fork(None))

    def _fork(self, ready: int | None) -> int:
        # A stop signal is held until the worker has its own handler: under the
        # supervisor's, inherited, it would be lost (and the supervisor wait for ever).
        signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
        pid = os.fork()
        if pid == 0:  # the worker: never back into the caller's stack
            try:
                # Stopped before it serves: nothing to finish.  uvicorn's own handlers
                # stop it once it serves, then raise the signal again under this one.
                for sig in STOPS:
                    signal.signal(sig, lambda signum, frame: os._exit(0))
                signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
                self._worker(ready)
            finally:
                os._exit(0)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
        self.born[pid] = time.monotonic()
        return pid

    def _worker(self, ready: int | None) -> None:
        import uvicorn

        os.close(self.alive_w)  # only the supervisor holds the pipe's writing end
        alive = self.alive_r

        def orphaned() -> None:
            os.read(alive, 1)  # end of file: the supervisor ended (even by SIGKILL)
            os.kill(os.getpid(), signal.SIGTERM)

        def started() -> None:
            while not server.started and not server.should_exit:
                time.sleep(0.005)
            if ready is not None:
                os.write(ready, b"1")
                os.close(ready)

        class Worker(uvicorn.Server):
            async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
                # The kernel hands a new connection to whichever worker accepts first: a
                # retiring one may hold a connection whose request has not arrived yet.
                for listening in self.servers:
                    listening.close()
                await asyncio.sleep(DRAIN_S)
                await super().shutdown(sockets)

        threading.Thread(target=orphaned, daemon=True).start()
        assert isinstance(self.config, uvicorn.Config)
        server = Worker(self.config)
        threading.Thread(target=started, daemon=True).start()
        server.run(sockets=[self.listener])


def _signal(pids: set[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say so, and without
    # it every answer waited 40 ms for the client's delayed ACK (Nagle).
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host.strip("[]"), port))
    except OSError as exc:
        listener.close()
        raise UsageError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}): choose another --port "
            "or stop what holds it"
        ) from None
    listener.set_inheritable(True)
    return listener
