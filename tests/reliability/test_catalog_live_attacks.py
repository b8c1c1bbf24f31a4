"""Attacks on the live PostgreSQL catalog: a leaked DSN, a wrong password, a server that
is gone, a table locked by a migration, a missing driver.  Each is a coded answer
(E187, E189, W188), never a traceback, and the DSN and its password appear in no
output and no file."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest
from cli_runner import CliResult, invoke, tht
from pg_cluster import Cluster

WANTED_TYPES = 6  # formulas of the fixture workspace


def files_holding(root: Path, secret: str) -> list[str]:
    needle = secret.encode("utf-8")
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def check_live(ws: Path, *more: str, installation: Path | None = None) -> CliResult:
    return tht(ws, "check", "--catalog", "postgres", *more, installation=installation)


@pytest.mark.parametrize("how", ["ok", "wrong-password", "no-server", "no-database"])
def test_attack_the_dsn_and_its_password_appear_in_no_output_and_no_file(
    workspace: Path,
    tmp_path: Path,
    pg_cluster: Cluster,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    password = "Wr0ng-" + pg_cluster.password if how == "wrong-password" else pg_cluster.password
    dsn = {
        "ok": pg_cluster.dsn(),
        "wrong-password": pg_cluster.dsn(password=password),
        "no-server": pg_cluster.dsn().replace(f":{pg_cluster.port}/", ":1/"),
        "no-database": pg_cluster.dsn("nowhere"),
    }[how]
    monkeypatch.setenv("THT_CATALOG_DSN", dsn)
    runs = [
        check_live(workspace, "--sample-values"),
        invoke(
            [
                "workspace",
                "evidence",
                "check",
                "--workspace-root",
                str(workspace),
                "--catalog",
                "postgres",
            ]
        ),
    ]
    for result in runs:
        out = result.stdout + result.stderr
        assert password not in out and dsn not in out and pg_cluster.user not in out
        assert "Traceback" not in out
    assert files_holding(tmp_path, password) == []
    first = runs[0]
    if how == "ok":
        assert first.exit_code == 0 and len(first.json["result"]["formula_types"]) == WANTED_TYPES
        text = runs[1].stdout.splitlines()
        assert text[0] == "48 unit(s) checked against 19 relation(s) (postgres), 0 finding(s)"
        assert "evidence/curated/formula/age-at-admission.md: formula type integer" in text
        assert len(text) == 1 + WANTED_TYPES
        return
    assert first.exit_code == 6, first.stdout
    error = first.json["errors"][0]
    assert error["code"] == "E189"
    assert "host 127.0.0.1" in error["message"]
    assert "THT_CATALOG_DSN" in error["hint"]
    if how == "wrong-password":
        assert "password authentication failed" in error["message"]


def test_attack_an_unset_dsn_variable_named_by_the_descriptor_is_e189(
    workspace: Path, tmp_path: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    inst = tmp_path / "installation.yaml"
    inst.write_text(
        json.dumps(
            {
                "installation_version": 1,
                "evidence": {"catalog": {"kind": "postgres", "dsn_env": "DWH_DSN"}},
            }
        ),
        encoding="utf-8",
    )
    monkeypatch.delenv("DWH_DSN", raising=False)
    monkeypatch.setenv("THT_CATALOG_DSN", pg_cluster.dsn())  # not the variable it names
    unset = tht(workspace, "check", installation=inst)
    assert unset.exit_code == 6
    assert unset.json["errors"][0]["code"] == "E189"
    assert "DWH_DSN holds no PostgreSQL DSN" in unset.json["errors"][0]["message"]
    monkeypatch.setenv("DWH_DSN", pg_cluster.dsn())
    named = tht(workspace, "check", installation=inst)
    assert named.exit_code == 0, named.stdout
    assert named.json["result"]["catalog"]["kind"] == "postgres"


def test_attack_a_table_locked_by_a_migration_is_w188_not_a_type_error(
    workspace: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A migration holds ACCESS EXCLUSIVE on clinical.discharges: the formulas and the enum
    on it wait for the lock_timeout and say so (W188); every other unit is checked."""
    import psycopg

    from evidence_tool.catalog import postgres

    monkeypatch.setattr(postgres, "LOCK_TIMEOUT_MS", 300)
    monkeypatch.setenv("THT_CATALOG_DSN", pg_cluster.dsn())
    locked = threading.Event()
    release = threading.Event()

    def migration() -> None:
        with psycopg.connect(pg_cluster.dsn()) as conn:
            conn.execute("LOCK TABLE clinical.discharges IN ACCESS EXCLUSIVE MODE")
            locked.set()
            release.wait(120)

    holder = threading.Thread(target=migration)
    holder.start()
    try:
        assert locked.wait(60)
        result = check_live(workspace, "--sample-values")
    finally:
        release.set()
        holder.join(60)
    assert result.exit_code == 0, result.stdout
    assert result.json["errors"] == []
    stopped = sorted((w["code"], w["path"].rsplit("/", 1)[1]) for w in result.json["warnings"])
    assert stopped == [
        ("W188", "degenza-media-cardiologia.md"),  # an example's SQL reading discharges
        ("W188", "giornate-di-degenza.md"),
        ("W188", "modalita-dimissione.md"),
        ("W188", "readmissions-30-days.md"),  # an example's SQL too
        ("W188", "tasso-di-mortalita.md"),
    ]
    assert all("lock timeout" in w["message"] for w in result.json["warnings"])
    types = {t["path"].rsplit("/", 1)[1]: t["type"] for t in result.json["result"]["formula_types"]}
    assert types["giornate-di-degenza.md"] is None and types["age-at-admission.md"] == "integer"


def test_attack_psycopg_missing_is_e187_with_the_install_command(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg -> ImportError
    monkeypatch.setenv("THT_CATALOG_DSN", "postgresql://u:pw-x1@127.0.0.1:1/d")
    result = check_live(workspace)
    assert result.exit_code == 6
    assert result.json["errors"][0]["code"] == "E187"
    assert "pip install 'evidence-tool[postgres]'" in result.json["errors"][0]["message"]


def test_attack_a_reader_without_select_on_a_table_gets_w188_for_its_enum_only(
    workspace: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A least-privilege DSN: the sample of a table the user may not read is W188 naming
    the refusal; the catalog, the types (prepare checks no privilege) and the other
    samples still come through."""
    pg_cluster.execute(
        "DROP ROLE IF EXISTS limited_reader; "
        "CREATE ROLE limited_reader LOGIN PASSWORD 'lim-pw-93x'; "
        "GRANT USAGE ON SCHEMA admin, clinical, lab, pharmacy TO limited_reader; "
        "GRANT SELECT ON ALL TABLES IN SCHEMA admin, clinical, lab, pharmacy TO limited_reader; "
        "REVOKE SELECT ON lab.results FROM limited_reader;"
    )
    dsn = f"postgresql://limited_reader:lim-pw-93x@127.0.0.1:{pg_cluster.port}/warehouse"
    monkeypatch.setenv("THT_CATALOG_DSN", dsn)
    result = check_live(workspace, "--sample-values")
    assert result.exit_code == 0, result.stdout
    warnings = [(w["code"], w["path"].rsplit("/", 1)[1]) for w in result.json["warnings"]]
    assert warnings == [("W188", "lab-result-flag.md")]
    assert "permission denied for table results" in result.json["warnings"][0]["message"]
    types = {t["path"].rsplit("/", 1)[1]: t["type"] for t in result.json["result"]["formula_types"]}
    assert types["hba1c-ifcc-from-ngsp.md"] == "numeric"
    assert "lim-pw-93x" not in result.stdout + result.stderr


def test_attack_a_server_that_accepts_and_never_answers_is_e189_within_the_timeout(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A black hole on the loopback (it accepts the TCP connection and says nothing):
    connect_timeout ends the wait with E189 instead of hanging the check."""
    import socket

    from evidence_tool.catalog import postgres

    monkeypatch.setattr(postgres, "CONNECT_TIMEOUT_S", 2)  # libpq's smallest
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(8)
    port = hole.getsockname()[1]
    try:
        monkeypatch.setenv("THT_CATALOG_DSN", f"postgresql://u:hole-pw-1@127.0.0.1:{port}/dwh")
        result = check_live(workspace)
    finally:
        hole.close()
    assert result.exit_code == 6, result.stdout
    error = result.json["errors"][0]
    assert error["code"] == "E189"
    assert "timeout" in error["message"] and "database dwh" in error["message"]
    assert "hole-pw-1" not in result.stdout + result.stderr
