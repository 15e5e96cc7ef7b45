"""A throwaway PostgreSQL server for tests: `initdb` into a temp folder, started on a free
loopback port, deleted at the end.

It runs Debian's `postgresql` binaries (`initdb`, `pg_ctl`; `make test` installs the package
where they are missing). PostgreSQL refuses to run as root, and CI runs as root: then the
server runs as `nobody`, in a folder handed to it. Durability is off (`fsync=off`): a test
server loses nothing to a crash that a test cares about, and a database per test is then
cheap enough (`create_database`, ~0.1 s).
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import psycopg
from psycopg import sql

SUPERUSER = "bot_test"


def find_binary(name: str) -> str:
    """`name` from PATH, else from Debian's versioned folder (newest first)."""
    found = shutil.which(name)
    if found:
        return found
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        candidate = Path(folder) / name
        if candidate.exists():
            return str(candidate)
    raise RuntimeError(f"PostgreSQL's {name} is not installed (Debian: apt-get install postgresql)")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """One PostgreSQL cluster for a test session; `create_database` gives each test its own."""

    def __init__(self) -> None:
        self.password = secrets.token_hex(12)
        self.port = free_port()
        self.directory = Path(tempfile.mkdtemp(prefix="bot-postgres-"))
        self.data = self.directory / "data"
        self.log = self.directory / "server.log"
        self._names = itertools.count(1)
        self._run_as: pwd.struct_passwd | None = (
            pwd.getpwnam("nobody") if os.geteuid() == 0 else None
        )

    @property
    def admin_url(self) -> str:
        return self.url_for("postgres")

    def url_for(self, database: str, password: str | None = None) -> str:
        secret = self.password if password is None else password
        return f"postgresql://{SUPERUSER}:{secret}@127.0.0.1:{self.port}/{database}"

    def start(self) -> PostgresServer:
        if self._run_as is not None:  # the server's own user must own its folder
            os.chown(self.directory, self._run_as.pw_uid, self._run_as.pw_gid)
        password_file = self.directory / "password"
        password_file.write_text(self.password)
        if self._run_as is not None:
            os.chown(password_file, self._run_as.pw_uid, self._run_as.pw_gid)
        self._run(
            find_binary("initdb"),
            "--pgdata",
            str(self.data),
            "--username",
            SUPERUSER,
            "--pwfile",
            str(password_file),
            "--auth",
            "scram-sha-256",
            "--encoding",
            "UTF8",
            "--locale",
            "C",
            "--no-sync",
        )
        password_file.unlink()
        self.resume()
        return self

    def resume(self) -> None:
        """Start the server (again, after `pause`) and wait until it accepts connections."""
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=200"
        )
        self._run(
            find_binary("pg_ctl"), "start", "-D", str(self.data), "-l", str(self.log),
            "-o", options, "-w", "-t", "60",
        )  # fmt: skip

    def pause(self) -> None:
        """Stop the server, ending every connection, as an outage looks to the bot. A fast
        (not an immediate) stop: with durability off, only a clean stop keeps the last
        commits."""
        self._run(find_binary("pg_ctl"), "stop", "-D", str(self.data), "-m", "fast", "-w")

    def stop(self) -> None:
        try:
            self.pause()
        except RuntimeError:
            pass  # already stopped
        shutil.rmtree(self.directory, ignore_errors=True)

    def create_database(self) -> str:
        """A new, empty database; returns its URL (password included, as DATABASE_URL)."""
        name = f"test_{next(self._names)}"
        with psycopg.connect(self.admin_url, autocommit=True) as admin:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url_for(name)

    def _run(self, *command: str) -> None:
        user = self._run_as
        try:
            subprocess.run(
                command,
                check=True,
                capture_output=True,
                cwd=self.directory,
                user=user.pw_uid if user else None,
                group=user.pw_gid if user else None,
                extra_groups=[] if user else None,
            )
        except subprocess.CalledProcessError as exc:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(
                f"{Path(command[0]).name} failed: {exc.stderr.decode(errors='replace')}\n{log}"
            ) from exc
