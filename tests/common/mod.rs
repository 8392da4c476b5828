//! Helpers shared by the black-box tests: the binary in a folder, JSON files, the op
//! log, signals.

#![allow(dead_code)] // each test file uses its own share of these

pub mod browser;
pub mod fake_store;
pub mod garbling_proxy;

use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;
use tempfile::TempDir;

/// A live server's URL from the variable `./test.sh` sets; missing, the test fails.
pub fn url(var: &str) -> String {
    std::env::var(var)
        .unwrap_or_else(|_| panic!("{var} is not set: run ./test.sh, which starts the servers"))
}

/// `db` once for each client stack its store can carry key-value operations on: as
/// given (hatshop's own wire, the default) and with each other `kv_wire` the store
/// declares (its driver), so a check of key-value runs holds for both stacks.
pub fn each_client_stack(db: &str) -> Vec<String> {
    let scheme = db.split("://").next().unwrap();
    let store = hatshop::db::STORES
        .iter()
        .find(|s| s.scheme == scheme || s.tls_scheme == Some(scheme))
        .unwrap_or_else(|| panic!("no store of {scheme}://"));
    let wires = store.settings.iter().find(|s| s.name == "kv_wire");
    let mut urls = vec![db.to_string()];
    if let Some(hatshop::db::Setting {
        value: hatshop::db::Value::Choice(wires),
        default,
        ..
    }) = wires
    {
        let joiner = if db.contains('?') { '&' } else { '?' };
        for wire in wires.iter().filter(|w| *w != default) {
            urls.push(format!("{db}{joiner}kv_wire={wire}"));
        }
    }
    urls
}

/// A run whose URL asked for a `kv_wire` says in run.json that it ran on that one.
pub fn assert_ran_on_the_asked_wire(out: &Path, db: &str) {
    if let Some((_, wire)) = db.split_once("kv_wire=") {
        let wire = wire.split('&').next().unwrap();
        let run = json(&out.join("run.json"));
        let settings = &run["database"]["store"]["settings"];
        assert_eq!(settings["kv_wire"], wire, "{db}: {settings}");
    }
}

/// The suite's Cassandra with another keyspace (each test its own, so none sees
/// another's tables).
pub fn cassandra(keyspace: &str) -> String {
    let base = url("HATSHOP_TEST_CASSANDRA");
    let hosts = base
        .trim_start_matches("cassandra://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    format!("cassandra://{hosts}/{keyspace}")
}

/// A lock that a panicking holder does not spoil: tests on one server share its tables.
pub fn lock(m: &'static std::sync::Mutex<()>) -> std::sync::MutexGuard<'static, ()> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A small key-value run: 100 records and no warm-up (the events are added).
pub const SMALL_KV: &[&str] = &["-w", "kv-50w-50r", "--records", "100", "--warmup", "0"];

/// `hatshop` run in `dir`, without a HATSHOP_DB from the environment.
pub fn hatshop(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("hatshop").unwrap();
    // A table is cut to `$COLUMNS`: the tests read it whole unless they set it.
    cmd.current_dir(dir)
        .env_remove("HATSHOP_DB")
        .env_remove("COLUMNS");
    cmd
}

/// A shard's run made twice in `dir`, into `first` and then `again`: the second load
/// meets the first's rows, which the server refuses. The first must succeed; the
/// second's output is returned.
pub fn shard_run_twice(dir: &Path, shard_run: &[&str]) -> std::process::Output {
    hatshop(dir)
        .args(shard_run)
        .args(["-o", "first"])
        .assert()
        .success();
    hatshop(dir)
        .args(shard_run)
        .args(["-o", "again"])
        .output()
        .unwrap()
}

/// `hatshop server ARGS… --home HOME`: servers in a home of their own, so the suite's
/// are not touched.
pub fn server(home: &Path, args: &[&str]) -> std::process::Output {
    StdCommand::new(assert_cmd::cargo::cargo_bin("hatshop"))
        .arg("server")
        .args(args)
        .arg("--home")
        .arg(home)
        .output()
        .unwrap()
}

/// `hatshop verify DIR`, which must succeed (its output shown if not).
pub fn verify_ok(dir: &Path, out: &Path) {
    let verify = hatshop(dir).arg("verify").arg(out).output().unwrap();
    assert!(
        verify.status.success(),
        "{}\n{}",
        text(&verify.stdout),
        text(&verify.stderr)
    );
}

/// The errors of one kind in a summary.json.
pub fn errors_of(summary: &Value, kind: &str) -> u64 {
    summary["overall"]["errors_by_kind"][kind]
        .as_u64()
        .unwrap_or(0)
}

/// `hatshop ARGS…` started in the background in `dir`, stderr kept.
pub fn spawn(dir: &Path, args: &[&str]) -> Child {
    StdCommand::new(assert_cmd::cargo::cargo_bin("hatshop"))
        .current_dir(dir)
        .env_remove("HATSHOP_DB")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

pub fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// How much `prepares` (the server's count of statements prepared) grew over a run of
/// 1,000 events of `workload` (its flags; none: the default) against `db` and over one
/// of 8,000, with 4 connections each.
pub fn prepares_by_run(db: &str, workload: &[&str], prepares: impl Fn() -> u64) -> [u64; 2] {
    ["1000", "8000"].map(|events| {
        let before = prepares();
        let tmp = TempDir::new().unwrap();
        hatshop(tmp.path())
            .args([
                "run", "--quiet", "--db", db, "--events", events, "--pool", "4",
            ])
            .args(workload)
            .assert()
            .success();
        prepares() - before
    })
}

/// Rows of a CSV file with a header, each as column → value.
pub fn csv_maps(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    csv::Reader::from_path(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .deserialize()
        .map(Result::unwrap)
        .collect()
}

/// Runs `hatshop run --quiet --out tmp/<name> EXTRA…`, which must succeed.
pub fn run_ok(tmp: &TempDir, name: &str, extra: &[&str]) -> PathBuf {
    let out = tmp.path().join(name);
    let output = hatshop(tmp.path())
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{extra:?}: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

/// One operation of the op log, as `hatshop export --csv` writes it.
#[derive(Debug, serde::Deserialize)]
pub struct OpRow {
    pub run_id: String,
    pub event_type: String,
    pub seq: u64,
    pub target: u64,
    pub timestamp: String,
    pub latency_us: f64,
    pub success: bool,
    pub error_kind: String,
    pub error: String,
    pub node: Option<u16>,
    pub attempts: Option<u32>,
    pub error_code: String,
    pub intended_start_ns: Option<u64>,
    pub queue_us: Option<f64>,
    pub shard: Option<u32>,
}

/// The op log of the folder `dir` (a killed run's too), as `hatshop export DIR --csv
/// -o -` prints it.
pub fn exported_csv(dir: &Path) -> String {
    let output = hatshop(Path::new("."))
        .args(["export", "--csv", "-o", "-"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// The calls a run's op log holds by its run.json: every measured operation, and every
/// call the run's end cut while in flight (logged as `cancelled`, counted apart).
pub fn logged_calls(run: &Value) -> u64 {
    run["measured_ops"].as_u64().unwrap() + run["cut_calls"].as_u64().unwrap_or(0)
}

/// The op log's rows, through `hatshop export --csv`.
pub fn op_rows(dir: &Path) -> Vec<OpRow> {
    csv::Reader::from_reader(exported_csv(dir).as_bytes())
        .deserialize()
        .map(Result::unwrap)
        .collect()
}

/// The op log's rows by column name, through `hatshop export --csv`.
pub fn op_maps(dir: &Path) -> Vec<std::collections::HashMap<String, String>> {
    csv::Reader::from_reader(exported_csv(dir).as_bytes())
        .deserialize()
        .map(Result::unwrap)
        .collect()
}

/// The op log's journal, which grows as a run logs its operations.
pub fn op_journal(dir: &Path) -> PathBuf {
    dir.join("ops").join("_journal")
}

/// Waits until `file` holds at least `bytes` (the run is measuring).
pub fn wait_for_bytes(file: &Path, bytes: u64) {
    wait_for(file, &format!("grew to {bytes} bytes"), |size| {
        size >= bytes
    });
}

/// Waits until `file` exists, however empty.
pub fn wait_for_file(file: &Path) {
    wait_for(file, "appeared", |_| true);
}

/// Waits until `file` exists and its size satisfies `enough`, 90 s at most.
fn wait_for(file: &Path, what: &str, enough: impl Fn(u64) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(90);
    while !std::fs::metadata(file).is_ok_and(|m| enough(m.len())) {
        assert!(Instant::now() < deadline, "{} never {what}", file.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn signal(child: &Child, signal: i32) {
    // SAFETY: kill(2) on a pid we started; no memory is touched.
    unsafe {
        libc::kill(child.id() as libc::pid_t, signal);
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every bad input ends in one clear line on stderr and a non-zero exit, never a panic.
pub fn assert_one_line_error(dir: &Path, args: &[&str], expected: &str) -> String {
    let output = hatshop(dir).args(args).output().unwrap();
    assert!(!output.status.success(), "{args:?} succeeded");
    let stderr = text(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    stderr
}

/// Runs the shards of one run at once, each `hatshop run --shard I/N EXTRA…`, and
/// returns their folders.
pub fn run_shards(tmp: &TempDir, shards: usize, extra: &[&str]) -> Vec<std::path::PathBuf> {
    let children: Vec<_> = (0..shards)
        .map(|i| {
            let out = tmp.path().join(format!("shard{i}"));
            let shard = format!("{i}/{shards}");
            let child = StdCommand::new(assert_cmd::cargo::cargo_bin("hatshop"))
                .current_dir(tmp.path())
                .env_remove("HATSHOP_DB")
                .args(["run", "--quiet", "--shard", &shard, "--out"])
                .arg(&out)
                .args(extra)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (out, child)
        })
        .collect();
    children
        .into_iter()
        .map(|(out, child)| {
            let output = child.wait_with_output().unwrap();
            assert!(output.status.success(), "{}", text(&output.stderr));
            out
        })
        .collect()
}

/// A run that must succeed, with verification; returns the result folder.
pub fn run_and_verify(tmp: &TempDir, db: &str, extra: &[&str]) -> PathBuf {
    let out = tmp.path().join(format!("run{}", extra.len()));
    let _ = std::fs::remove_dir_all(&out);
    let output = hatshop(tmp.path())
        .args([
            "run", "--quiet", "--db", db, "--seed", "5", "--verify", "--out",
        ])
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{db} {extra:?}: {}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["errors"], 0, "{db} {extra:?}: {summary}");
    let verify = json(&out.join("verify.json"));
    assert_eq!(
        verify["first_differences"],
        serde_json::json!([]),
        "{verify}"
    );
    // The separate verify command agrees, where the database outlives the run.
    let in_memory = hatshop::db::DbUrl::parse(db).is_ok_and(|url| url.in_memory());
    if !in_memory {
        hatshop(tmp.path())
            .arg("verify")
            .arg(&out)
            .assert()
            .success();
    }
    out
}

/// A run of 3,000 order events that must succeed and verify.
pub fn orders(tmp: &TempDir, db: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["--events", "3000"];
    args.extend_from_slice(extra);
    let out = run_and_verify(tmp, db, &args);
    assert_eq!(op_rows(&out).len(), 3000);
    out
}

pub const KV_PRESETS: [&str; 4] = [
    "kv-50w-50r",
    "kv-10w-40rw-50r",
    "kv-50rw-50r",
    "kv-90rw-10r",
];

/// Every key-value preset, small, on one store, over each client stack it has.
pub fn key_value_presets(db: &str, extra: &[&str]) {
    for (preset, db) in KV_PRESETS
        .iter()
        .flat_map(|p| each_client_stack(db).into_iter().map(move |db| (p, db)))
    {
        let tmp = TempDir::new().unwrap();
        let mut args = vec![
            "-w",
            preset,
            "--records",
            "600",
            "--warmup",
            "100",
            "--events",
            "1500",
            "-c",
            "8",
        ];
        args.extend_from_slice(extra);
        let out = run_and_verify(&tmp, &db, &args);
        assert_ran_on_the_asked_wire(&out, &db);
        let verify = json(&out.join("verify.json"));
        assert!(
            verify["keys_found"].as_u64().unwrap() >= 600,
            "{preset} on {db}: {verify}"
        );
    }
}

/// A hatshop home of a test's own; every server in it is stopped when it is dropped,
/// also when the test fails.
pub struct OwnHome(pub TempDir);

impl OwnHome {
    /// A home of its own with `hatshop server start ARGS…` run in it: the home and
    /// the server's URL (the test fails if it does not start).
    pub fn with_server(args: &[&str]) -> (OwnHome, String) {
        let home = OwnHome(TempDir::new().unwrap());
        let started = server(home.0.path(), &[&["start"], args].concat());
        assert!(started.status.success(), "{}", text(&started.stderr));
        let url = text(&started.stdout).trim().to_string();
        (home, url)
    }
}

impl Drop for OwnHome {
    fn drop(&mut self) {
        server(self.0.path(), &["stop", "--all"]);
    }
}

/// The file's sha256 as `sha256sum` prints it: what a plan hash is checked against.
pub fn sha256_of(path: &Path) -> String {
    let out = StdCommand::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

/// The node rows of `hatshop server status`'s node tables, each as its fields: node,
/// address, state, pid, then the rest (memory, budget, data folder).
pub fn status_nodes(status: &str) -> Vec<Vec<String>> {
    status
        .lines()
        .map(|line| {
            line.split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .filter(|fields| fields.len() >= 5 && fields[0].parse::<usize>().is_ok())
        .collect()
}
