"""A throwaway PostgreSQL cluster for the live catalog tests, started by the tests themselves.

initdb into a fresh folder of the system temp dir, ``pg_ctl start`` on a unix socket
in that folder and a free loopback port (password login over TCP, so the tests see
what an operator's DSN looks like), ``fsync=off``; stopped with ``-m immediate`` and
removed at the end of the session, and by ``atexit`` when the run is interrupted.

Root may not run initdb or postgres: as root every server command runs as
``nobody`` through ``runuser``, and the folder is made by ``nobody`` too (so that
nothing of it is ever written by this interpreter, which the write guard watches).
Without PostgreSQL the fixture skips, saying how to install it; under CI (the
environment variable CI set) it fails instead: CI never skips the live tests.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
WAREHOUSE = REPO / "fixtures" / "warehouse"
INSTALL_HINT = (
    "PostgreSQL is not installed, so the live catalog tests cannot start a cluster: "
    "install it (Debian/Ubuntu: apt-get install postgresql; elsewhere put initdb and "
    "pg_ctl on PATH) and run the tests again"
)


def bin_dir() -> Path | None:
    """The newest /usr/lib/postgresql/<v>/bin (Debian), else initdb's folder on PATH."""
    found = glob.glob("/usr/lib/postgresql/*/bin/initdb")
    if found:
        newest = max(found, key=lambda p: int(Path(p).parts[-3].split(".")[0]))
        return Path(newest).parent
    on_path = shutil.which("initdb")
    return Path(on_path).resolve().parent if on_path else None


def _as_server_user() -> list[str]:
    return ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    bin: Path
    folder: str
    port: int
    password: str = field(default_factory=lambda: "pw-" + secrets.token_hex(12))
    user: str = "tht_reader"
    dbname: str = "warehouse"
    running: bool = False

    @property
    def data(self) -> str:
        return f"{self.folder}/data"

    def dsn(self, dbname: str | None = None, password: str | None = None) -> str:
        pw = self.password if password is None else password
        db = dbname or self.dbname
        return f"postgresql://{self.user}:{pw}@127.0.0.1:{self.port}/{db}"

    def server(self, *args: str, stdin: str | None = None) -> None:
        """Run a server program (a name in the bin folder, or an absolute path)."""
        program = args[0] if args[0].startswith("/") else str(self.bin / args[0])
        done = subprocess.run(
            [*_as_server_user(), program, *args[1:]],
            input=stdin,
            text=True,
            capture_output=True,
            timeout=300,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({done.returncode}): {done.stderr}{done.stdout}")

    def start(self) -> None:
        pwfile = f"{self.folder}/pw"  # made by the server user: a pipe of ours it may not open
        self.server("/bin/sh", "-c", 'umask 077 && cat > "$0"', pwfile, stdin=self.password)
        self.server(
            "initdb",
            "-D",
            self.data,
            "-U",
            self.user,
            f"--pwfile={pwfile}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        )
        for attempt in range(5):
            opts = (
                f"-k {self.folder} -p {self.port} -c listen_addresses=127.0.0.1 "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
                "-c max_connections=20 -c shared_buffers=16MB"
            )
            try:
                self.server(
                    "pg_ctl", "-D", self.data, "-l", f"{self.folder}/log", "-w", "-o", opts, "start"
                )
                break
            except RuntimeError:
                # The port was free when picked; another test's socket may have taken it
                # before the server bound it: pick again.
                log = Path(f"{self.folder}/log").read_text("utf-8", errors="replace")
                if attempt == 4 or "already in use" not in log:
                    raise
                self.port = _free_port()
        self.running = True

    def stop(self) -> None:
        if self.running:
            self.running = False
            with contextlib.suppress(Exception):
                self.server("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        with contextlib.suppress(Exception):
            subprocess.run([*_as_server_user(), "rm", "-rf", self.folder], check=False, timeout=120)

    def execute(self, sql: str, dbname: str | None = None) -> None:
        """Run SQL (several statements allowed) as the cluster's owner, committed."""
        import psycopg

        with psycopg.connect(self.dsn(dbname), autocommit=True) as conn:
            conn.execute(sql)  # type: ignore[arg-type]  # no parameters: simple protocol

    def create_database(self, name: str, *sql_files: Path, extra_sql: str = "") -> str:
        """A new database loaded with ``sql_files`` (then ``extra_sql``); its DSN."""
        self.execute(f"CREATE DATABASE {name}", "postgres")
        for path in sql_files:
            self.execute(path.read_text(encoding="utf-8"), name)
        if extra_sql:
            self.execute(extra_sql, name)
        return self.dsn(name)


def warehouse_sql() -> list[Path]:
    """The fixture warehouse: every DDL file, then every data file, in name order."""
    return sorted(WAREHOUSE.glob("*.sql")) + sorted((WAREHOUSE / "data").glob("*.sql"))


def start_cluster() -> Cluster:
    found = bin_dir()
    if found is None or not (found / "pg_ctl").exists():
        if os.environ.get("CI"):
            pytest.fail(INSTALL_HINT + " (CI must run the live tests: .ci/run installs it)")
        pytest.skip(INSTALL_HINT)
    made = subprocess.run(
        [*_as_server_user(), "mktemp", "-d", f"{tempfile.gettempdir()}/tht-pg-XXXXXX"],
        check=True,
        text=True,
        capture_output=True,
    )
    cluster = Cluster(found, made.stdout.strip(), _free_port())
    atexit.register(cluster.stop)  # an interrupted run (Ctrl-C) still stops the server
    try:
        cluster.start()
        cluster.create_database(cluster.dbname, *warehouse_sql())
    except BaseException:
        cluster.stop()
        raise
    return cluster
