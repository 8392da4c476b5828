"""The op log opened as docs/guarantees.md says, by the real pandas, polars and DuckDB.

Usage: python tests/oplog_readers.py HATSHOP_BINARY
Runs hatshop into a temporary folder (SQLite, null:// past one part, no operations,
a merge of two shards) and checks that each library reads every row run.json counts,
with the types the docs give, and that `hatshop export --csv` holds the same rows.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import pandas as pd
import polars as pl

HATSHOP = str(Path(sys.argv[1]).resolve())


def hatshop(*args, cwd):
    done = subprocess.run([HATSHOP, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (args, done.stderr)


def measured(run):
    return json.loads((run / "run.json").read_text())["measured_ops"]


def check(run, shards=False):
    ops = run / "ops"
    want = measured(run)
    by_pandas = pd.read_parquet(ops)
    by_polars = pl.read_parquet(str(ops / "*.parquet"))
    by_duckdb = duckdb.sql(
        f"SELECT count(*), sum(latency_ns) FROM '{ops}/*.parquet'"
    ).fetchall()[0]
    assert len(by_pandas) == want, (run, len(by_pandas), want)
    assert by_polars.height == want, (run, by_polars.height, want)
    assert by_duckdb[0] == want, (run, by_duckdb, want)
    if want:
        total = int(by_pandas["latency_ns"].sum())
        assert int(by_polars["latency_ns"].sum()) == total
        assert int(by_duckdb[1]) == total
        assert str(by_pandas["timestamp"].dtype) == "datetime64[ns, UTC]", by_pandas.dtypes
        assert by_pandas["success"].dtype == bool
    assert ("shard" in by_pandas.columns) == shards, by_pandas.columns
    exported = run / "exported.csv"
    hatshop("export", str(run), "--csv", "-o", str(exported), cwd=run.parent)
    csv = pd.read_csv(exported)
    assert len(csv) == want, (run, len(csv), want)
    if want:
        assert list(csv["seq"]) == list(by_pandas["seq"])
        # The CSV gives microseconds to the nanosecond.
        assert (csv["latency_us"] * 1000).round().astype("int64").sum() == total
    print(f"{run.name}: {want} rows read alike by pandas, polars, DuckDB and the CSV export")


with tempfile.TemporaryDirectory() as tmp:
    tmp = Path(tmp)
    hatshop("run", "--quiet", "--events", "3000", "-o", "sqlite-run", cwd=tmp)
    check(tmp / "sqlite-run")
    # Past a million rows: two parts.
    hatshop("run", "--quiet", "--db", "null://", "--events", "1100000", "-o", "two-parts", cwd=tmp)
    assert len(list((tmp / "two-parts" / "ops").glob("*.parquet"))) == 2
    check(tmp / "two-parts")
    hatshop("run", "--quiet", "-w", "creates", "--events", "0", "-o", "empty", cwd=tmp)
    check(tmp / "empty")
    for shard in ("0/2", "1/2"):
        name = "shard-" + shard[0]
        hatshop("run", "--quiet", "--db", "null://", "--events", "2000", "--shard", shard, "-o", name, cwd=tmp)
    hatshop("merge", "shard-0", "shard-1", "-o", "merged", cwd=tmp)
    check(tmp / "merged", shards=True)
