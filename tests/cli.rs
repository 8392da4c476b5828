//! Black-box tests of the `hatshop` binary against SQLite in a temporary folder.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::Duration;

use predicates::prelude::*;

use common::{hatshop, json};
use tempfile::TempDir;

fn sha256_of(path: &Path) -> String {
    let out = StdCommand::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

struct OpRow {
    seq: u64,
    order_id: u64,
    timestamp: String,
    success: bool,
}

fn op_rows(dir: &Path) -> Vec<OpRow> {
    let mut reader = csv::Reader::from_path(dir.join("ops.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    assert_eq!(
        headers.iter().collect::<Vec<_>>(),
        [
            "test_id",
            "database",
            "event_type",
            "seq",
            "order_id",
            "timestamp",
            "latency_us",
            "success",
            "error_kind",
            "error"
        ]
    );
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            OpRow {
                seq: r[3].parse().unwrap(),
                order_id: r[4].parse().unwrap(),
                timestamp: r[5].to_string(),
                success: &r[7] == "true",
            }
        })
        .collect()
}

/// Runs `hatshop run` into `tmp/<name>` and returns that folder.
fn run_ok(tmp: &TempDir, name: &str, extra: &[&str]) -> PathBuf {
    let out = tmp.path().join(name);
    hatshop(tmp.path())
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .args(extra)
        .assert()
        .success();
    out
}

#[test]
fn generate_is_byte_identical_for_a_seed_and_differs_across_seeds() {
    let tmp = TempDir::new().unwrap();
    for (name, seed) in [("a.jsonl", "7"), ("b.jsonl", "7"), ("c.jsonl", "8")] {
        hatshop(tmp.path())
            .args(["generate", "--events", "3000", "--seed", seed, "-o", name])
            .assert()
            .success()
            .stderr(predicate::str::contains("wrote 3,500 events"));
    }
    let a = sha256_of(&tmp.path().join("a.jsonl"));
    assert_eq!(a, sha256_of(&tmp.path().join("b.jsonl")));
    assert_ne!(a, sha256_of(&tmp.path().join("c.jsonl")));
}

#[test]
fn a_small_run_logs_every_op_and_verifies_exactly() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(&tmp, "small", &["--events", "3000", "--seed", "11"]);
    let rows = op_rows(&out);
    assert_eq!(rows.len(), 3000);
    assert!(rows.iter().all(|r| r.success));
    let run = json(&out.join("run.json"));
    assert_eq!(run["status"], "finished");
    assert_eq!(run["measured_ops"], 3000);
    assert_eq!(run["op_log_rows"], 3000);
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["ops"], 3000);
    assert_eq!(summary["errors"], 0);
    assert!(
        summary["overall"]["percentiles_us"]["p50"]
            .as_f64()
            .unwrap()
            > 0.0
    );

    // The plan hash is the sha256 of the stream that `generate` writes.
    hatshop(tmp.path())
        .args([
            "generate",
            "--events",
            "3000",
            "--seed",
            "11",
            "-o",
            "same.jsonl",
        ])
        .assert()
        .success();
    assert_eq!(
        run["plan_sha256"],
        sha256_of(&tmp.path().join("same.jsonl"))
    );

    hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("0 missing, 0 extra, 0 differing").count(2));
    assert_eq!(json(&out.join("verify.json"))["missing_orders"], 0);
}

#[test]
fn orders_keep_their_event_order_under_sixteen_lanes() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(
        &tmp,
        "c16",
        &["--events", "6000", "--concurrency", "16", "--verify"],
    );
    let mut rows = op_rows(&out);
    assert_eq!(rows.len(), 6000);
    assert!(
        rows.iter().all(|r| r.success),
        "an event found its order missing or changed"
    );
    rows.sort_by_key(|r| r.seq);
    let mut last_seen: HashMap<u64, String> = HashMap::new();
    for row in rows {
        if let Some(previous) = last_seen.get(&row.order_id) {
            assert!(
                *previous <= row.timestamp,
                "order {} ran out of order",
                row.order_id
            );
        }
        last_seen.insert(row.order_id, row.timestamp);
    }
}

#[test]
fn a_replayed_events_file_matches_the_generated_run() {
    let tmp = TempDir::new().unwrap();
    hatshop(tmp.path())
        .args(["generate", "--events", "2000", "-o", "events.jsonl"])
        .assert()
        .success();
    let replay = run_ok(
        &tmp,
        "replay",
        &["--events-file", "events.jsonl", "--verify"],
    );
    let generated = run_ok(&tmp, "generated", &["--events", "2000"]);
    let a = json(&replay.join("run.json"));
    let b = json(&generated.join("run.json"));
    assert_eq!(a["plan_sha256"], b["plan_sha256"]);
    assert_eq!(op_rows(&replay).len(), 2000);
}

#[test]
fn a_deadline_stops_the_run_cleanly() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(
        &tmp,
        "deadline",
        &["--events", "400000", "--duration", "0.3", "--verify"],
    );
    let run = json(&out.join("run.json"));
    assert_eq!(run["status"], "stopped_at_deadline");
    let measured = run["measured_ops"].as_u64().unwrap();
    assert!(measured > 0 && measured < 400_000);
    assert_eq!(op_rows(&out).len() as u64, measured);
    // The whole planned stream is still hashed, so runs of one spec compare.
    assert_eq!(run["plan_sha256"].as_str().unwrap().len(), 64);
}

#[test]
fn an_interrupted_run_keeps_every_operation() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("interrupted");
    let child = StdCommand::new(assert_cmd::cargo::cargo_bin("hatshop"))
        .current_dir(tmp.path())
        .args(["run", "--quiet", "--events", "5000000", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until measuring has begun (the op log has rows), then interrupt.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::fs::metadata(out.join("ops.csv")).map_or(0, |m| m.len()) < 100_000 {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never started measuring"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    StdCommand::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&output.stderr).contains("interrupted"));

    let run = json(&out.join("run.json"));
    assert_eq!(run["interrupted"], true);
    assert_eq!(run["status"], "interrupted");
    let measured = run["measured_ops"].as_u64().unwrap();
    assert!(measured > 0 && measured < 5_000_000);
    assert_eq!(op_rows(&out).len() as u64, measured);
    assert_eq!(json(&out.join("summary.json"))["ops"], measured);
    // Exactly the events the lanes applied reached the store.
    hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .assert()
        .success();
}

#[test]
fn the_null_store_runs_without_errors() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(
        &tmp,
        "null",
        &["--db", "null://", "--events", "20000", "-c", "4"],
    );
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["ops"], 20000);
    assert_eq!(summary["errors"], 0);
    hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .assert()
        .failure()
        .stderr(predicate::str::contains("keeps no data"));
}

/// Every bad input ends in one clear line on stderr and a non-zero exit, never a panic.
fn assert_one_line_error(tmp: &TempDir, args: &[&str], expected: &str) {
    let output = hatshop(tmp.path()).args(args).output().unwrap();
    assert!(!output.status.success(), "{args:?} succeeded");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"));
}

#[test]
fn bad_input_gets_one_clear_line() {
    let tmp = TempDir::new().unwrap();
    std::fs::write(
        tmp.path().join("bad.toml"),
        "name = \"x\"\nevents = 5\n[mix\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("bad.jsonl"),
        "{\"seq\":0,\"phase\":\"measure\",\"op\":{\"type\":\"read_order\",\"order_id\":1}}\n{\"seq\":1,\n",
    )
    .unwrap();
    std::fs::write(tmp.path().join("plain-file"), "").unwrap();
    assert_one_line_error(
        &tmp,
        &["run", "-w", "bad.toml"],
        "bad.toml is not a valid spec: line 3",
    );
    assert_one_line_error(
        &tmp,
        &["run", "--events-file", "bad.jsonl"],
        "bad.jsonl:2: not a valid event",
    );
    assert_one_line_error(
        &tmp,
        &["run", "-w", "no-such-preset"],
        "unknown workload 'no-such-preset'",
    );
    assert_one_line_error(
        &tmp,
        &["run", "--db", "oracle://scott:tiger@h/db"],
        "unknown database URL scheme 'oracle'",
    );
    assert_one_line_error(
        &tmp,
        &["run", "--out", "plain-file/run"],
        "cannot create result folder plain-file/run",
    );
    assert_one_line_error(
        &tmp,
        &["generate", "-w", "bad.toml", "-o", "x.jsonl"],
        "line 3",
    );
    assert_one_line_error(
        &tmp,
        &["verify", "no-such-dir"],
        "cannot read no-such-dir/run.json",
    );
    assert_one_line_error(
        &tmp,
        &["run", "--duration=-1"],
        "--duration must be a positive number",
    );
    let output = hatshop(tmp.path())
        .args(["run", "--db", "oracle://scott:tiger@h/db"])
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&output.stderr).contains("tiger"),
        "a password leaked"
    );
}

#[test]
fn workloads_are_listed_and_shown_as_valid_specs() {
    let tmp = TempDir::new().unwrap();
    hatshop(tmp.path())
        .arg("workloads")
        .assert()
        .success()
        .stdout(
            predicate::str::contains("hatshop-random").and(predicate::str::contains("creates")),
        );
    let shown = hatshop(tmp.path())
        .args(["workloads", "show", "updates"])
        .output()
        .unwrap();
    std::fs::write(tmp.path().join("mine.toml"), &shown.stdout).unwrap();
    hatshop(tmp.path())
        .args(["generate", "-w", "mine.toml", "--events", "10", "-o", "-"])
        .assert()
        .success()
        .stdout(predicate::str::contains("update_order"));
}
