//! Black-box tests of the `hatshop` binary against SQLite in a temporary folder: the
//! stream, the op log, verify, and bad input.

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command as StdCommand;

use predicates::prelude::*;

use common::{assert_one_line_error, hatshop, json, op_rows, run_ok, sha256_of};
use tempfile::TempDir;

#[test]
fn generate_is_byte_identical_for_a_seed_and_differs_across_seeds() {
    let tmp = TempDir::new().unwrap();
    for (name, seed) in [("a.jsonl", "7"), ("b.jsonl", "7"), ("c.jsonl", "8")] {
        hatshop(tmp.path())
            .args(["generate", "--events", "3000", "--seed", seed, name])
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
    let exported = common::exported_csv(&out);
    let mut reader = csv::Reader::from_reader(exported.as_bytes());
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "run_id",
            "database",
            "event_type",
            "seq",
            "target",
            "timestamp",
            "latency_us",
            "success",
            "error_kind",
            "error",
            "node",
            "attempts",
            "error_code",
            "intended_start_ns",
            "queue_us"
        ]
    );
    let rows = op_rows(&out);
    assert_eq!(rows.len(), 3000);
    assert!(rows.iter().all(|r| r.success));
    // One SQLite file: no node to name, one call per operation, a connection lock
    // (queue) for each.
    assert!(rows.iter().all(|r| r.queue_us.is_some()));
    assert!(
        rows.iter()
            .all(|r| r.node.is_none() && r.attempts == Some(1) && r.error_code.is_empty())
    );
    // A closed loop: nothing was due at a set time.
    assert!(rows.iter().all(|r| r.intended_start_ns.is_none()));
    let run = json(&out.join("run.json"));
    assert_eq!(run["status"], "finished");
    // What the client spent measuring.
    let client = &run["client"];
    assert!(client["cpu_s"].as_f64().unwrap() > 0.0, "{client}");
    assert!(client["cpu_us_per_op"].as_f64().unwrap() > 0.0, "{client}");
    assert!(client["peak_rss_mb"].as_f64().unwrap() > 1.0, "{client}");
    assert_eq!(run["stream_version"], 1);
    assert_eq!(run["measured_ops"], 3000);
    assert_eq!(run["op_log_rows"], 3000);
    assert_eq!(run["stream_complete"], true);
    assert_eq!(run["database"]["file"], "hatshop.db");
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
        if let Some(previous) = last_seen.get(&row.target) {
            assert!(
                previous.as_str() <= row.timestamp.as_str(),
                "order {} ran out of order",
                row.target
            );
        }
        last_seen.insert(row.target, row.timestamp);
    }
}

#[test]
fn a_replayed_events_file_matches_the_generated_run() {
    let tmp = TempDir::new().unwrap();
    hatshop(tmp.path())
        .args(["generate", "--events", "2000", "events.jsonl"])
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
fn key_value_presets_run_and_verify_on_sqlite() {
    let tmp = TempDir::new().unwrap();
    for preset in [
        "kv-50w-50r",
        "kv-10w-40rw-50r",
        "kv-50rw-50r",
        "kv-90rw-10r",
    ] {
        let out = run_ok(
            &tmp,
            preset,
            &[
                "-w",
                preset,
                "--records",
                "500",
                "--warmup",
                "200",
                "--events",
                "2000",
                "--value-size",
                "300",
                "-c",
                "4",
                "--verify",
            ],
        );
        let summary = json(&out.join("summary.json"));
        assert_eq!(summary["ops"], 2000, "{preset}");
        assert_eq!(summary["errors"], 0, "{preset}: {summary}");
        let verify = json(&out.join("verify.json"));
        assert!(
            verify["keys_found"].as_u64().unwrap() >= 500,
            "{preset}: {verify}"
        );
        assert_eq!(verify["stale_keys"], 0);
    }
}

#[test]
fn a_hand_written_events_file_without_states_verifies() {
    let tmp = TempDir::new().unwrap();
    let order = r#"{"order_id":1,"client_id":7,"customer":"Ada Hale","address":"1 Felt Street, Luton","created_at_ms":0,"status":"pending","subtotal_cents":999,"items":[{"line_item_id":1,"product":"Fez","colour":"Teal","size":"7","quantity":1,"unit_price_cents":999}]}"#;
    let events = format!(
        "{{\"seq\":0,\"phase\":\"load\",\"op\":{{\"type\":\"create_order\",\"order\":{order}}}}}\n\
         {{\"seq\":1,\"phase\":\"measure\",\"op\":{{\"type\":\"update_status\",\"order_id\":1,\"status\":\"dispatched\"}}}}\n\
         {{\"seq\":2,\"phase\":\"measure\",\"op\":{{\"type\":\"read_order\",\"order_id\":1}}}}\n\
         {{\"seq\":3,\"phase\":\"measure\",\"op\":{{\"type\":\"update_order\",\"order_id\":1,\"created_at_ms\":5,\"status\":\"delivered\",\"subtotal_cents\":900}}}}\n\
         {{\"seq\":4,\"phase\":\"measure\",\"op\":{{\"type\":\"read_order\",\"order_id\":1}}}}\n"
    );
    std::fs::write(tmp.path().join("hand.jsonl"), events).unwrap();
    let out = run_ok(&tmp, "hand", &["--events-file", "hand.jsonl", "--verify"]);
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["errors"], 0, "{summary}");
    assert_eq!(json(&out.join("verify.json"))["orders_found"], 1);
}

#[test]
fn the_null_store_runs_without_errors_and_takes_no_location() {
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
    assert_one_line_error(
        tmp.path(),
        &["run", "--db", "null://u:pw@h"],
        "null:// takes no user or password",
    );
    assert_one_line_error(
        tmp.path(),
        &["run", "--db", "null://somewhere"],
        "null:// takes no host or path",
    );
}

#[test]
fn a_run_of_no_operations_says_so_and_reads_as_no_latency() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("empty");
    hatshop(tmp.path())
        .args(["run", "-w", "creates", "--events", "0", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "warning: no operation was measured",
        ));
    for file in ["intervals.csv", "failed_writes.csv"] {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        assert_eq!(text.lines().count(), 1, "{file}: {text:?}");
        assert!(text.contains(','), "{file}: {text:?}");
    }
    // The op log has its columns and no row: a part, and its export a header.
    assert!(out.join("ops/part-000000.parquet").exists());
    let exported = common::exported_csv(&out);
    assert_eq!(exported.lines().count(), 1, "{exported:?}");
    // An empty histogram has no latency: null, never 0.
    let summary = json(&out.join("summary.json"));
    let overall = &summary["overall"];
    assert!(overall["mean_us"].is_null(), "{summary}");
    assert!(overall["max_us"].is_null(), "{summary}");
    assert!(overall["percentiles_us"]["p99"].is_null(), "{summary}");
    // ... and the folder still reads back.
    hatshop(tmp.path())
        .arg("report")
        .arg(&out)
        .assert()
        .success();
}

/// Files of bad input the cases below name, in a folder of their own.
fn bad_input_folder() -> TempDir {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("bad.toml"), "name = \"x\"\nevents = 5\n[mix\n").unwrap();
    std::fs::write(
        dir.join("neg.toml"),
        "name = \"x\"\nevents = 5\n[mix]\ncreate_order = 1\nread_order = -2\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("zero.toml"),
        "name = \"x\"\nevents = 5\nconcurrency = 0\n[mix]\ncreate_order = 1\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("bad.jsonl"),
        "{\"seq\":0,\"phase\":\"measure\",\"op\":{\"type\":\"read_order\",\"order_id\":1}}\n{\"seq\":1,\n",
    )
    .unwrap();
    std::fs::write(dir.join("plain-file"), "").unwrap();
    std::fs::create_dir(dir.join("a-dir")).unwrap();
    tmp
}

/// Each case its own test: `hatshop ARGS…`, run in [`bad_input_folder`], fails with one
/// line holding what is expected.
macro_rules! one_clear_line {
    ($($name:ident: [$($arg:expr),*] => $expected:expr;)*) => {
        mod bad_input_gets_one_clear_line {
            use super::*;
            $(
                #[test]
                fn $name() {
                    let tmp = bad_input_folder();
                    assert_one_line_error(tmp.path(), &[$($arg),*], $expected);
                }
            )*
        }
    };
}

one_clear_line! {
    spec_that_does_not_parse: ["run", "-w", "bad.toml"] => "bad.toml is not a valid spec: line 3";
    negative_mix_weight: ["run", "-w", "neg.toml"] => "neg.toml: line 5: mix.read_order must be a non-negative number";
    zero_concurrency_in_a_spec: ["run", "-w", "zero.toml"] => "zero.toml: line 3: concurrency must be at least 1";
    events_file_cut_mid_line: ["run", "--events-file", "bad.jsonl"] => "bad.jsonl:2: not a valid event";
    rate_of_zero: ["run", "--rate", "0"] => "a rate is above zero";
    negative_rate: ["run", "--rate", "-10"] => "invalid value '-10' for '--rate <OPS>': a rate is operations per second";
    rate_beyond_ten_million: ["run", "--rate", "2e7"] => "--rate must be operations per second above 0 and at most 10,000,000";
    negative_duration: ["run", "--duration", "-1"] => "invalid value '-1' for '--duration <TIME>': a time cannot be negative";
    negative_seed: ["run", "--seed", "-1"] => "invalid value '-1' for '--seed <SEED>'";
    rate_not_a_number: ["run", "--rate", "NaN"] => "a rate is operations per second";
    rate_range_without_ramp: ["run", "--rate", "1000..2000"] => "--rate 1000..2000 needs --ramp";
    ramp_without_rate_range: ["run", "--rate", "1000", "--ramp", "10s"] => "--ramp needs --rate FROM..TO";
    unknown_workload: ["run", "-w", "no-such-preset"] => "unknown workload 'no-such-preset'";
    workload_that_is_a_folder: ["run", "-w", "a-dir"] => "cannot read workload file a-dir: is a folder, not a regular file";
    unknown_scheme: ["run", "--db", "oracle://scott:tiger@h/db"] => "unknown database URL scheme 'oracle'";
    // A port that is not one is bad input, never a connection that failed.
    port_that_is_not_one: ["run", "--db", "mysql://root@:notaport/x"] => "error: bad port in mysql://***@:***/x";
    // Text that may be a password is never echoed, even in a URL that did not parse.
    password_in_url_without_host: ["run", "--db", "mysql://u:SECRETX@/db"] => "error: mysql://***@/db names no host after its '@'";
    password_in_url_without_port: ["run", "--db", "mysql://u:SECRETX"] => "error: bad port in mysql://u:***";
    out_under_a_plain_file: ["run", "--out", "plain-file/run"] => "cannot create result folder plain-file/run";
    generate_from_a_bad_spec: ["generate", "-w", "bad.toml", "-o", "x.jsonl"] => "line 3";
    verify_a_folder_not_there: ["verify", "no-such-dir"] => "no result folder no-such-dir";
    report_a_folder_not_a_result: ["report", "a-dir"] => "a-dir is not a result folder";
    duration_negative_after_equals: ["run", "--duration=-1"] => "a time cannot be negative";
    duration_beyond_range: ["run", "--duration", "1e20"] => "--duration must be a number of seconds";
    interval_beyond_range: ["run", "--interval", "1e30"] => "--interval must be a number of seconds";
    op_timeout_below_a_millisecond: ["run", "--op-timeout", "0.0001"] => "--op-timeout must be a number of seconds";
    value_size_too_small: ["run", "--value-size", "8", "-w", "kv-50w-50r"] => "value_size must be between 16";
    cl_on_a_store_without_it: ["run", "--cl", "ONE"] => "--cl is a setting of cassandra, not of sqlite://";
    // `--pool` is the old name of `--connections`.
    old_pool_flag: ["run", "--pool", "2"] => "--connections is a setting of mysql and postgres";
    zero_connections_in_url: ["run", "--db", "mysql://root@127.0.0.1:1/x?pool=0"] => "mysql setting connections=0: expected at least 1";
    setting_a_store_does_not_take: ["run", "--db", "sqlite://x.db?cl=ONE"] => "unknown setting 'cl' for sqlite://";
    any_for_reads: ["run", "--db", "cassandra://h/ks", "--read-cl", "ANY"] => "ANY is for writes only";
    sweep_of_unknown_setting: ["sweep", "--vary", "nonsense=1,2"] => "'nonsense' is not something a run takes";
    // Every name a user types gets the nearest one it may have meant.
    mistyped_workload: ["run", "-w", "hatshop-randm"] => "unknown workload 'hatshop-randm' (did you mean 'hatshop-random'?)";
    mistyped_scheme: ["run", "--db", "sqlit://x.db"] => "unknown database URL scheme 'sqlit' (did you mean 'sqlite'?)";
    mistyped_setting: ["run", "--db", "mysql://root@127.0.0.1:1/x?connectons=2"] => "unknown setting 'connectons' (did you mean 'connections'?) for mysql://";
    mistyped_study: ["study", "hat-shp"] => "no study named 'hat-shp' (did you mean 'hat-shop'?)";
}

#[test]
fn a_password_in_a_bad_url_is_never_echoed_and_a_failed_sweep_leaves_no_folder() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let output = hatshop(dir)
        .args(["run", "--db", "oracle://scott:tiger@h/db"])
        .output()
        .unwrap();
    assert!(
        !common::text(&output.stderr).contains("tiger"),
        "a password leaked"
    );
    // A sweep whose database cannot be reached leaves no folder behind.
    assert_one_line_error(
        dir,
        &[
            "sweep",
            "--vary",
            "events=10,20",
            "--db",
            "mysql://root@127.0.0.1:1/x",
        ],
        "cannot connect to mysql://root@127.0.0.1:1/x",
    );
    assert!(!dir.join("results").exists());
}

#[test]
fn a_bad_command_line_is_one_line_and_exits_2_and_a_failed_check_exits_1() {
    let tmp = TempDir::new().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "--rat", "5"],
            "(a similar argument exists: '--rate')",
        ),
        (&["run", "--events"], "a value is required for '--events"),
        (&["nosuch"], "unrecognized subcommand 'nosuch'"),
        (&["run", "--seed", "-1"], "invalid value '-1' for '--seed"),
        // Every malformed value is the command line's fault, said with what is accepted.
        (
            &["run", "--duration", "10x"],
            "invalid value '10x' for '--duration <TIME>': a time is a number with a unit: 500ms, 10s",
        ),
        (
            &["run", "--events", "1x"],
            "a count is a whole number: 20000, 20_000, 20,000, 20k",
        ),
        (&["run", "--events", "1.5"], "not whole"),
        (
            &["run", "-c", "0"],
            "'--concurrency <CONCURRENCY>': it must be at least 1",
        ),
        (&["run", "--repeat", "0"], "it must be at least 1"),
        (
            &["run", "--conflicts", "2"],
            "a share is from 0 to 1 (0.2) or a percentage",
        ),
        (
            &["run", "--p99-under", "x"],
            "a bare number is milliseconds",
        ),
        (
            &["sweep", "--vary", "concurrency=1,x"],
            "concurrency: 'x': a count is a whole number",
        ),
        (
            &["sweep", "--vary", "concurency=1,2"],
            "(did you mean 'concurrency'?)",
        ),
        // A store's settings read alike: a choice by its words, a count by the grammar.
        (
            &["run", "--synchronous", "ful"],
            "invalid value 'ful' for '--synchronous <off|normal|full|extra>' (a similar value exists: 'full')",
        ),
        (
            &["run", "--connections", "0"],
            "'--connections <N>': it must be at least 1",
        ),
        // A span that cannot be empty or negative reads alike on every time flag.
        (
            &["run", "--duration", "0"],
            "'--duration <TIME>': it must be above zero",
        ),
        (
            &["run", "--interval", "0"],
            "'--interval <TIME>': it must be above zero",
        ),
        (
            &["run", "--duration", "-1s"],
            "invalid value '-1s' for '--duration <TIME>': a time cannot be negative",
        ),
        (&["run", "--op-timeout", "0s"], "it must be above zero"),
        (
            &["run", "--find-max", "--p99-under", "0"],
            "it must be above zero",
        ),
        // Flags that each read well but do not go together.
        (
            &["run", "--p99-under", "5"],
            "--p99-under is the bound of --find-max: add --find-max",
        ),
        (&["run", "--find-max"], "--find-max needs --p99-under"),
        (
            &["run", "--db", "sqlite://", "--db", "null://"],
            "a run takes one --db",
        ),
        (
            &[
                "sweep",
                "--vary",
                "concurrency=1,2",
                "--threshold",
                "p99<1ms",
            ],
            "--threshold bounds one run or its --repeat",
        ),
        (
            &["run", "--shard", "0/2", "--verify", "--db", "null://"],
            "a shard cannot verify alone",
        ),
    ];
    for (args, expected) in cases {
        let stderr = assert_one_line_error(tmp.path(), args, expected);
        assert!(stderr.trim_end().ends_with("; see --help"), "{stderr}");
        let output = hatshop(tmp.path()).args(*args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
    // A value that reads well but that hatshop's own checks refuse exits 1.
    let output = hatshop(tmp.path())
        .args(["run", "--rate", "2e7"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn times_counts_and_rates_read_alike_on_every_flag() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("units");
    let output = hatshop(tmp.path())
        .args([
            "run", "--db", "null://", "--quiet", "--events", "1.5k", "--warmup", "1_000",
        ])
        .args([
            "--orders",
            "2,000",
            "--duration",
            "1m",
            "--op-timeout",
            "500ms",
            "--rate",
            "20k",
        ])
        .args(["--progress-interval", "0", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", common::text(&output.stderr));
    let summary: serde_json::Value = json(&out.join("summary.json"));
    assert_eq!(summary["ops"], 1500);
    let run: serde_json::Value = json(&out.join("run.json"));
    assert_eq!(run["events"]["workload"]["warmup"], 1000);
    assert_eq!(run["events"]["workload"]["initial_orders"], 2000);
}

#[test]
fn a_duration_without_events_runs_that_long() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("timed");
    let started = std::time::Instant::now();
    let output = hatshop(tmp.path())
        .args([
            "run",
            "--db",
            "null://",
            "--quiet",
            "--duration",
            "1.5s",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", common::text(&output.stderr));
    // --quiet leaves out the progress, its first line included.
    assert!(
        !common::text(&output.stderr).contains("running "),
        "{}",
        common::text(&output.stderr)
    );
    assert!(started.elapsed().as_secs_f64() >= 1.5);
    let summary: serde_json::Value = json(&out.join("summary.json"));
    let measured = summary["elapsed_s"].as_f64().unwrap();
    assert!((1.4..2.5).contains(&measured), "measured for {measured} s");
    // Rates are per second of the duration, however late the last operation ended.
    assert!(measured >= 1.5, "measured for {measured} s");
    // More than the preset's own 200,000 events would be; its count no longer ends it.
    let run: serde_json::Value = json(&out.join("run.json"));
    assert_eq!(run["status"], "stopped_at_deadline");
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains("measured events until the run's length (--duration or --stages) ended them")
    );
    assert!(!page.contains("It stopped at its --duration deadline"));
    // With --events beside it, --duration is a cap again.
    let capped = tmp.path().join("capped");
    let output = hatshop(tmp.path())
        .args([
            "run",
            "--db",
            "null://",
            "--quiet",
            "--duration",
            "30",
            "--events",
            "500",
            "-o",
        ])
        .arg(&capped)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", common::text(&output.stderr));
    let summary: serde_json::Value = json(&capped.join("summary.json"));
    assert_eq!(summary["ops"], 500);
    // Two runs of one stream cut by their deadlines did the same work, as far as each
    // went: compare says so, and warns of nothing.
    let again = tmp.path().join("again");
    let output = hatshop(tmp.path())
        .args([
            "run",
            "--db",
            "null://",
            "--quiet",
            "--duration",
            "0.5s",
            "-o",
        ])
        .arg(&again)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", common::text(&output.stderr));
    let output = hatshop(tmp.path())
        .arg("compare")
        .args([&out, &again])
        .output()
        .unwrap();
    let stdout = common::text(&output.stdout);
    assert!(
        stdout.contains("note: these runs replayed one event stream (one spec, one seed), each as far as its --duration or --min-duration took it (#1 "),
        "{stdout}"
    );
    assert!(!stdout.contains("warning"), "{stdout}");
}

/// `--min-duration` is a floor, not a cap: a run goes on past its count until it has
/// measured that long, and stops at its count when the time has passed by then; either
/// way the events that ran are hashed as `generate` writes them, and verify is exact.
#[test]
fn a_floor_runs_past_its_count_until_its_time_and_keeps_the_streams_contract() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(
        &tmp,
        "floored",
        &[
            "--events",
            "200",
            "--min-duration",
            "1s",
            "--seed",
            "5",
            "--verify",
        ],
    );
    let run = json(&out.join("run.json"));
    let summary = json(&out.join("summary.json"));
    assert_eq!(run["status"], "finished");
    assert_eq!(run["plan"]["min_events"], 200);
    assert_eq!(run["plan"]["min_duration_s"], 1.0);
    assert!(summary["elapsed_s"].as_f64().unwrap() >= 1.0, "{summary}");
    let ops = summary["ops"].as_u64().unwrap();
    assert!(ops > 200, "the floor kept the stream going: {ops} ops");
    let verify = json(&out.join("verify.json"));
    assert_eq!(verify["orders_found"], verify["orders_expected"]);
    assert_eq!(verify["missing_orders"], 0);
    assert_eq!(verify["differing_orders"], 0);
    hatshop(tmp.path())
        .args(["generate", "--seed", "5", "--events"])
        .arg(ops.to_string())
        .args(["-o", "same.jsonl"])
        .assert()
        .success();
    assert_eq!(
        run["plan_sha256"],
        sha256_of(&tmp.path().join("same.jsonl"))
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("at least 200 measured events and 1 s of them (--min-duration"));
    assert!(page.contains("where --min-duration ended the stream"));

    // A time already passed leaves the count in charge.
    let counted = run_ok(
        &tmp,
        "counted",
        &[
            "--events",
            "20000",
            "--min-duration",
            "0.05s",
            "--seed",
            "5",
        ],
    );
    assert_eq!(json(&counted.join("summary.json"))["ops"], 20_000);

    // Paced, the floor ends at the event due at its time, not when the source, which
    // runs ahead of paced lanes, next reads the clock.
    let paced = run_ok(
        &tmp,
        "paced",
        &["--events", "10", "--min-duration", "1s", "--rate", "50"],
    );
    assert_eq!(json(&paced.join("summary.json"))["ops"], 50);

    assert_one_line_error(
        tmp.path(),
        &["run", "--min-duration", "1s", "--duration", "5s"],
        "--min-duration",
    );
}

/// A paced warm-up counted in events that takes the whole --duration would measure
/// nothing: a run refuses it, and a --find-max search stops at the first rate where it
/// would, with the steps it measured, never printing a sentinel as a latency.
#[test]
fn a_paced_warmup_that_outlasts_the_duration_is_refused_and_no_step_prints_a_sentinel() {
    let tmp = TempDir::new().unwrap();
    let stderr = assert_one_line_error(
        tmp.path(),
        &[
            "run",
            "--db",
            "null://",
            "--rate",
            "1000",
            "--warmup",
            "1000",
            "--duration",
            "1s",
        ],
        "--warmup of 1,000 events at --rate 1000 takes 1.0 s, not less than --duration 1 s",
    );
    assert!(stderr.contains("nothing would be measured"), "{stderr}");
    let search = tmp.path().join("search");
    let output = hatshop(tmp.path())
        .args([
            "run",
            "--db",
            "null://",
            "--find-max",
            "--p99-under",
            "1us",
            "--warmup",
            "2500",
            "--duration",
            "3s",
            "-c",
            "8",
            "-o",
        ])
        .arg(&search)
        .output()
        .unwrap();
    let (stdout, stderr) = (common::text(&output.stdout), common::text(&output.stderr));
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "the search stopped short of its answer: rate 250 ops/s was not tried (a step is \
             cut at 9 s, 3 times its length): --warmup of 2,500 events at --rate 250 takes 10.0 s"
        ),
        "{stderr}"
    );
    // What a step did rests on the shared host's timing (999 or 1,000 a second): the
    // step ran and said what it did, which is what is asked here.
    assert!(stdout.contains("rate 1,000 ops/s: did "), "{stdout}");
    assert!(stdout.contains("rate 500 ops/s"), "{stdout}");
    assert!(!stdout.contains("18,446"), "{stdout}");
    let rows = common::csv_maps(&search.join("sweep.csv"));
    assert_eq!(rows.iter().filter(|r| r["event_type"] == "all").count(), 2);
}

#[test]
fn help_lists_every_store_and_its_settings() {
    let tmp = TempDir::new().unwrap();
    let help = hatshop(tmp.path())
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = common::text(&help.stdout);
    for needle in [
        "sqlite://",
        "null://",
        "cassandra://",
        "mysql://",
        "postgres://",
        "redis://",
        "Settings of cassandra",
        "Settings of mysql, postgres",
        "Settings of redis",
        "Settings of sqlite",
        "--connect-timeout",
        "--op-timeout",
        "--recreate",
        "voldemort://",
        "[env: HATSHOP_SHARD]",
    ] {
        assert!(help.contains(needle), "{needle} not in --help:\n{help}");
    }
    // An unset variable is named alone, never as `NAME=` with nothing after it.
    assert!(!help.contains("=]"), "{help}");
}

#[test]
fn workloads_are_listed_and_shown_as_valid_specs() {
    let tmp = TempDir::new().unwrap();
    hatshop(tmp.path())
        .arg("workloads")
        .assert()
        .success()
        .stdout(
            predicate::str::contains("hatshop-random").and(predicate::str::contains("kv-90rw-10r")),
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

/// `generate - | head` is a reader that took what it wanted, not a failure.
#[test]
fn generate_into_a_pipe_closed_early_ends_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let tmp = TempDir::new().unwrap();
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("hatshop"))
        .current_dir(tmp.path())
        .args(["generate", "--events", "2M", "-o", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("\"seq\""), "{first}");
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{:?}", output.status);
    assert!(
        !common::text(&output.stderr).contains("error"),
        "{}",
        common::text(&output.stderr)
    );
}

#[test]
fn a_bad_fault_timeline_is_one_line_before_anything_runs() {
    let tmp = TempDir::new().unwrap();
    let file = |name: &str, body: &str| {
        let path = tmp.path().join(name);
        std::fs::write(&path, body).unwrap();
        path.display().to_string()
    };
    let fault = |at: &str, action: &str, node: u32| {
        format!("[[faults]]\nat = \"{at}\"\naction = \"{action}\"\nnode = {node}\n")
    };
    for (name, body, expected) in [
        (
            "at.toml",
            fault("soon", "kill", 2),
            "fault 1: at = \"soon\" is not a duration",
        ),
        (
            "action.toml",
            fault("20s", "explode", 2),
            "fault 1: action = \"explode\" is not one of kill, stop, start, pause, resume",
        ),
        (
            "node.toml",
            fault("20s", "kill", 9),
            "fault 1: node = 9 is out of range",
        ),
        ("field.toml", "[[faults]]\nwhen = \"1s\"\n".into(), "line 2"),
        (
            "late.toml",
            fault("2m", "kill", 1),
            "due at 2m but --duration ends",
        ),
        (
            "sqlite.toml",
            fault("1s", "kill", 1),
            "sqlite:// is not a server",
        ),
    ] {
        let path = file(name, &body);
        assert_one_line_error(
            tmp.path(),
            &["run", "--faults", &path, "--duration", "60"],
            expected,
        );
    }
    // The same tables inside a workload spec are checked as part of it.
    let spec = file(
        "spec.toml",
        &format!(
            "name = \"x\"\nevents = 10\n[mix]\ncreate_order = 1\n{}",
            fault("later", "kill", 1)
        ),
    );
    assert_one_line_error(tmp.path(), &["run", "-w", &spec], "line 5: fault 1: at");
    assert!(!tmp.path().join("results").exists(), "nothing ran");
}

/// A store that does not have a capability says so in one line, naming the stores
/// that do, before anything is made.
#[test]
fn a_capability_a_store_lacks_is_refused_in_one_line_naming_who_has_it() {
    let tmp = TempDir::new().unwrap();
    let db = format!("sqlite://{}", tmp.path().join("x.db").display());
    assert_one_line_error(
        tmp.path(),
        &["run", "--db", &db, "--trace-sample", "0.1", "-o", "run"],
        "--trace-sample reads the server's own times: Cassandra, MariaDB/MySQL and PostgreSQL only, not sqlite://",
    );
    assert_one_line_error(
        tmp.path(),
        &[
            "load",
            "--db",
            &db,
            "--rows",
            "100",
            "--trace-sample",
            "0.1",
            "-o",
            "load",
        ],
        "--trace-sample traces batches on the server: Cassandra (CQL tracing) only, not sqlite://",
    );
    for made in ["run", "load", "x.db"] {
        assert!(!tmp.path().join(made).exists(), "{made} was made");
    }
}

#[test]
fn a_series_says_its_header_first_and_what_each_runs_verify_found() {
    let tmp = TempDir::new().unwrap();
    let output = hatshop(tmp.path())
        .args(["sweep", "--vary", "concurrency=1,2", "--events", "200"])
        .args(["--verify", "--out", "sweep"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stderr = common::text(&output.stderr);
    assert!(stderr.starts_with("sweep of concurrency"), "{stderr}");
    assert!(!stderr.contains("running "), "{stderr}");
    let stdout = common::text(&output.stdout);
    assert_eq!(stdout.matches(", verify exact").count(), 2, "{stdout}");
    let output = hatshop(tmp.path())
        .args(["run", "--repeat", "2", "--events", "200", "--verify"])
        .args(["--out", "repeats"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = common::text(&output.stdout);
    assert!(stdout.contains("repeat 1/2: "), "{stdout}");
    assert_eq!(stdout.matches(", verify exact").count(), 2, "{stdout}");
}

/// The README's sample of the first command's output has the lines a run prints, each
/// kind once, and no line a run does not print.
#[test]
fn the_readmes_sample_output_has_the_lines_a_run_prints() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let sample = readme
        .split("## What the first command prints\n\n```\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README's sample output");
    // A line's kind: its first word ("queue", "client:", "create_order", …).
    let kinds = |text: &str| -> std::collections::BTreeSet<String> {
        text.lines()
            .filter_map(|line| line.split_whitespace().next())
            .filter(|word| *word != "*") // only where a percentile rests on few samples
            .map(|word| word.split('=').next().unwrap().to_string())
            // A rule is as long as its table's columns, which follow the numbers.
            .map(|word| {
                if word.trim_start_matches('-').is_empty() {
                    "---".into()
                } else {
                    word
                }
            })
            .collect()
    };
    let tmp = TempDir::new().unwrap();
    let output = hatshop(tmp.path())
        .args(["run", "--events", "20000"])
        .output()
        .unwrap();
    assert!(output.status.success());
    // The suite's other tests run beside this one: the host may be said to be busy.
    let printed: String = common::text(&output.stdout)
        .lines()
        .filter(|line| !line.starts_with("warning: the host was busy"))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(
        kinds(sample),
        kinds(&printed),
        "README:\n{sample}\nrun:\n{printed}"
    );
}

/// summary.json says which run it is of, as run.json does, so it reads alone.
#[test]
fn summary_json_names_its_run() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(
        &tmp,
        "named",
        &[
            "-w",
            "kv-50w-50r",
            "--records",
            "100",
            "--warmup",
            "0",
            "--events",
            "500",
        ],
    );
    let out = out.as_path();
    let run = json(&out.join("run.json"));
    let summary = json(&out.join("summary.json"));
    let of = &summary["run"];
    assert_eq!(of["run_id"], run["run_id"], "{summary}");
    assert_eq!(of["store"], "sqlite");
    assert_eq!(of["workload"], "kv-50w-50r");
    assert_eq!(of["concurrency"], run["plan"]["concurrency"]);
    assert_eq!(of["plan_sha256"], run["plan_sha256"]);
    assert!(of["plan_sha256"].as_str().is_some_and(|h| h.len() == 64));
}

/// Completions and the man page come from the same definitions as `--help`.
#[test]
fn completions_and_the_man_page_know_every_subcommand() {
    let tmp = TempDir::new().unwrap();
    let bash = hatshop(tmp.path())
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(bash.status.success());
    let bash = common::text(&bash.stdout);
    for needle in [
        "_hatshop()",
        "--concurrency",
        "--events-file",
        "sweep",
        "verify",
    ] {
        assert!(
            bash.contains(needle),
            "{needle} not in the bash completions"
        );
    }
    // Values are completed by their names, not as file names.
    let words_of = |flag: &str| {
        let branch = bash
            .split(&format!("{flag})\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("{flag} has no branch"));
        branch.lines().next().unwrap().to_string()
    };
    assert!(words_of("--workload").contains("compgen -W \"hatshop-random updates"));
    assert!(words_of("--synchronous").contains("off normal full extra"));
    let study = bash.split("hatshop__subcmd__study)\n").nth(1).unwrap();
    assert!(
        study.lines().next().unwrap().contains("hat-shop clusters"),
        "study names are completed: {study:.200}"
    );
    let man = hatshop(tmp.path()).arg("man").output().unwrap();
    assert!(man.status.success());
    let man = common::text(&man.stdout);
    assert!(man.contains(".TH hatshop 1"), "{man}");
    assert!(man.contains("workbench"), "{man}");
    let run = hatshop(tmp.path()).args(["man", "run"]).output().unwrap();
    let run = common::text(&run.stdout);
    let footer = format!("\"hatshop {}\"", env!("CARGO_PKG_VERSION"));
    assert!(
        run.contains(&format!(".TH hatshop-run 1  {footer}")),
        "{run}"
    );
    assert!(run.contains("warmup"), "{run}");
    // The sections a man reader looks for, the exit codes among them, not under EXTRA.
    for section in [".SH \"EXIT STATUS\"", ".SH EXAMPLES", ".SH ENVIRONMENT"] {
        assert!(run.contains(section), "{section}: {run}");
    }
    assert!(!run.contains(".SH EXTRA"), "{run}");
    assert!(run.contains("HATSHOP_DB"), "{run}");
    assert!(run.contains("HATSHOP_HOME"), "{run}");
    assert!(run.contains("\\fB130\\fR"), "{run}");
    assert!(run.contains("\\-\\-find\\-max"), "{run}");
    let start = hatshop(tmp.path())
        .args(["man", "server", "start"])
        .output()
        .unwrap();
    assert!(common::text(&start.stdout).contains("persistence"));
    hatshop(tmp.path())
        .args(["man", "-o", "pages"])
        .assert()
        .success();
    for page in [
        "hatshop.1",
        "hatshop-run.1",
        "hatshop-server-start.1",
        "hatshop-verify.1",
    ] {
        let text = std::fs::read_to_string(tmp.path().join("pages").join(page)).unwrap();
        assert!(text.contains(&footer), "{page}: {text}");
    }
    // A value the command cannot do without is shown as required (`<FILE>`).
    for (command, usage) in [
        ("generate", "Usage: hatshop generate [OPTIONS] <FILE>"),
        ("study", "Usage: hatshop study [OPTIONS] <NAME|FILE>"),
    ] {
        let help = hatshop(tmp.path())
            .args([command, "--help"])
            .output()
            .unwrap();
        assert!(common::text(&help.stdout).contains(usage), "{command}");
        let bare = hatshop(tmp.path()).arg(command).output().unwrap();
        assert_eq!(bare.status.code(), Some(2), "{command} without its value");
        // The man page's synopsis says so too.
        let man = hatshop(tmp.path()).args(["man", command]).output().unwrap();
        let synopsis = common::text(&man.stdout);
        let value = usage.rsplit(' ').next().unwrap();
        let shown = format!("\\fI{}\\fR", value.trim_matches(['<', '>']));
        assert!(
            synopsis.contains(&shown) && !synopsis.contains(&format!("[{shown}]")),
            "{command}: {synopsis}"
        );
    }
    assert_one_line_error(tmp.path(), &["man", "fly"], "not a command of hatshop");
    assert_one_line_error(tmp.path(), &["completions", "tcsh"], "invalid value 'tcsh'");
}

/// `--export-json -` gives a script the summary alone on standard output; a file gets
/// the same; a series refuses it in one line.
#[test]
fn export_json_gives_a_script_the_summary_alone() {
    let tmp = TempDir::new().unwrap();
    let output = hatshop(tmp.path())
        .args([
            "run",
            "--events",
            "300",
            "--out",
            "piped",
            "--export-json",
            "-",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let piped: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(piped["ops"], 300);
    assert!(common::text(&output.stderr).contains("latencies in µs"));
    hatshop(tmp.path())
        .args([
            "run",
            "--events",
            "300",
            "--out",
            "filed",
            "--export-json",
            "filed.json",
        ])
        .assert()
        .success();
    let filed = json(&tmp.path().join("filed.json"));
    assert_eq!(filed, json(&tmp.path().join("filed/summary.json")));
    assert_one_line_error(
        tmp.path(),
        &["run", "--repeat", "2", "--export-json", "x.json"],
        "--export-json is for one run",
    );
}

/// `--export-csv` and `--export-markdown` hand the run's table to a spreadsheet and a
/// pull request: its rows and columns, one on standard output if asked.
#[test]
fn export_csv_and_markdown_carry_the_runs_table() {
    let tmp = TempDir::new().unwrap();
    let output = hatshop(tmp.path())
        .args([
            "run",
            "--events",
            "600",
            "--out",
            "table",
            "--percentiles",
            "50,99",
            "--export-csv",
            "table.csv",
            "--export-markdown",
            "-",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", common::text(&output.stderr));
    let summary = json(&tmp.path().join("table/summary.json"));
    let mut rows = csv::Reader::from_path(tmp.path().join("table.csv")).unwrap();
    let header: Vec<String> = rows.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(
        header,
        [
            "event_type",
            "count",
            "errors",
            "ops_s",
            "mean_us",
            "stddev_us",
            "p50_us",
            "p99_us",
            "max_us",
            "thin_percentiles"
        ]
    );
    let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    let all = rows.last().unwrap();
    assert_eq!(&all[0], "all");
    assert_eq!(
        all[1].parse::<u64>().unwrap(),
        summary["ops"].as_u64().unwrap()
    );
    let p99: f64 = all[7].parse().unwrap();
    let recorded = summary["overall"]["percentiles_us"]["p99"]
        .as_f64()
        .unwrap();
    assert!((p99 - recorded).abs() < 0.001, "{p99} against {recorded}");
    let stddev: f64 = all[5].parse().unwrap();
    let recorded = summary["overall"]["stddev_us"].as_f64().unwrap();
    assert!(
        stddev > 0.0 && (stddev - recorded).abs() < 0.001,
        "{stddev} against {recorded}"
    );
    // Standard output carries the Markdown table alone; the terminal's goes to stderr.
    let markdown = common::text(&output.stdout);
    let lines: Vec<&str> = markdown.lines().collect();
    assert_eq!(
        lines[0],
        "| event | count | errors | ops/s | mean µs | stddev µs | p50 µs | p99 µs | max µs |"
    );
    assert_eq!(lines[1], "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    assert!(
        lines.iter().any(|l| l.starts_with("| all | 600 | 0 | ")),
        "{markdown}"
    );
    assert!(common::text(&output.stderr).contains("latencies in µs"));
    assert_one_line_error(
        tmp.path(),
        &["run", "--export-csv", "-", "--export-json", "-"],
        "standard output carries one export",
    );
    assert_one_line_error(
        tmp.path(),
        &["run", "--export-markdown", "nofolder/x.md"],
        "--export-markdown nofolder/x.md: there is no folder nofolder",
    );
}

/// Off a terminal, a run says how it goes in plain lines at the interval asked, with
/// the latency of the intervals done since the line before.
#[test]
fn a_run_off_a_terminal_prints_plain_progress_lines() {
    let tmp = TempDir::new().unwrap();
    let args = [
        "run",
        "--db",
        "null://",
        "--rate",
        "1000",
        "--events",
        "800",
        "--interval",
        "0.1",
    ];
    let output = hatshop(tmp.path())
        .args(args)
        .args(["--progress-interval", "0.2", "--out", "paced"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stderr = common::text(&output.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();
    assert!(lines.len() >= 2, "{stderr}");
    assert!(
        lines.iter().any(|l| l.contains(", measuring, ")),
        "each line names the phase: {stderr}"
    );
    assert!(
        lines[0].contains(" events, ") && lines[0].contains(" measured, "),
        "{stderr}"
    );
    // "…, 1,000 ops/s, p50 2.31 µs, p99 8.05 µs, 612 measured, …"
    let latency = |line: &str, label: &str| -> Option<f64> {
        let text = line
            .split(&format!(", {label} "))
            .nth(1)?
            .split(" µs")
            .next()?;
        text.replace(',', "").parse().ok()
    };
    let with_latency: Vec<(f64, f64)> = lines
        .iter()
        .filter_map(|l| Some((latency(l, "p50")?, latency(l, "p99")?)))
        .collect();
    assert!(!with_latency.is_empty(), "{stderr}");
    assert!(
        with_latency
            .iter()
            .all(|(p50, p99)| 0.0 < *p50 && p50 <= p99),
        "{stderr}"
    );
    let quiet = hatshop(tmp.path())
        .args(args)
        .args(["--progress-interval", "0.2", "--quiet", "--out", "quiet"])
        .output()
        .unwrap();
    assert!(!common::text(&quiet.stderr).contains("progress: "));
}

/// `--percentiles` picks the table's columns, rising and each once, and summary.json
/// gets them beside its standard ladder.
#[test]
fn percentiles_asked_for_are_the_tables_columns_and_join_the_summary() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("chosen");
    let output = hatshop(tmp.path())
        .args([
            "run",
            "--events",
            "2000",
            "--percentiles",
            "99.999,50,p99.5,50",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = common::text(&output.stdout);
    let header = stdout.lines().find(|l| l.starts_with("event ")).unwrap();
    let columns: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        columns,
        [
            "event", "count", "errors", "mean", "stddev", "p50", "p99.5", "p99.999", "max"
        ]
    );
    let summary = json(&out.join("summary.json"));
    let ladder = &summary["overall"]["percentiles_us"];
    for label in ["p50", "p75", "p99.99", "p99.5", "p99.999"] {
        assert!(ladder[label].as_f64().is_some(), "{label}: {summary}");
    }
    assert!(ladder["p99.5"].as_f64() <= ladder["p99.999"].as_f64());
    // `show` prints the run's own table again; a percentile it did not store is read
    // off latency.hlog, as the run would have read it, never printed as 0.
    let header_of = |args: &[&str]| {
        let output = hatshop(tmp.path()).args(args).output().unwrap();
        assert!(output.status.success(), "{}", common::text(&output.stderr));
        let stdout = common::text(&output.stdout);
        let header = stdout
            .lines()
            .find(|l| l.starts_with("event "))
            .unwrap()
            .to_string();
        let all = stdout
            .lines()
            .find(|l| l.starts_with("all "))
            .unwrap()
            .to_string();
        (header, all)
    };
    let shown = header_of(&["show", out.to_str().unwrap()]);
    assert_eq!(shown.0, header);
    let (header, all) = header_of(&["show", out.to_str().unwrap(), "--percentiles", "50,99.9999"]);
    assert!(header.contains("p99.9999"), "{header}");
    let cells: Vec<&str> = all.split_whitespace().collect();
    // all, count, errors, mean, stddev, p50, p99.9999, max
    let p999999 = cells[6].trim_end_matches('*').replace(',', "");
    let max = cells[7].replace(',', "");
    assert_eq!(
        p999999.parse::<f64>().unwrap(),
        max.parse::<f64>().unwrap(),
        "{all}"
    );
    for (bad, expected) in [
        ("50,101", "101 is not a percentile above 0 and at most 100"),
        ("abc", "'abc' is not a percentile"),
    ] {
        let line = assert_one_line_error(tmp.path(), &["run", "--percentiles", bad], expected);
        assert!(line.contains("--percentiles"), "{line}");
        let code = hatshop(tmp.path())
            .args(["run", "--percentiles", bad])
            .output()
            .unwrap()
            .status
            .code();
        assert_eq!(code, Some(2), "a malformed value is a command-line error");
    }
}

/// A settings file names a flag as `--help` does, or by the name it had before, as the
/// command line still reads it.
#[test]
fn a_settings_file_takes_a_flags_old_name_too() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    for (i, (key, n)) in [("rows-in-flight", 9), ("in-flight", 7)].iter().enumerate() {
        std::fs::write(
            dir.join("hatshop.toml"),
            format!("[load]\n{key} = {n}\nrows = 100\n"),
        )
        .unwrap();
        let out = format!("load-{i}");
        hatshop(dir)
            .args(["load", "--db", "sqlite://", "--out", &out])
            .assert()
            .success();
        let plan = &json(&dir.join(&out).join("load.json"))["plan"];
        assert_eq!(plan["in_flight"], *n, "{key}: {plan}");
    }
}

/// A settings file fills in what neither the command line nor the environment gave:
/// flag > environment > file > default.
#[test]
fn a_settings_file_is_read_after_flags_and_the_environment() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("hatshop.toml"),
        "[run]\nevents = \"0.3k\"\nwarmup = 0\nop-timeout = \"5s\"\ndb = \"null://\"\npercentiles = \"50,99\"\n",
    )
    .unwrap();
    let measured = |out: &str| json(&dir.join(out).join("summary.json"))["ops"].clone();
    let store = |out: &str| json(&dir.join(out).join("summary.json"))["run"]["store"].clone();
    // The file alone.
    let output = hatshop(dir)
        .args(["run", "--out", "file"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", common::text(&output.stderr));
    assert_eq!(measured("file"), 300);
    assert_eq!(store("file"), "null");
    assert!(common::text(&output.stdout).contains(" p99 "));
    // A flag wins over the file; the environment does too.
    hatshop(dir)
        .args(["run", "--events", "100", "--out", "flag"])
        .env("HATSHOP_DB", "sqlite://")
        .assert()
        .success();
    assert_eq!(measured("flag"), 100);
    assert_eq!(store("flag"), "sqlite");
    // A file named with --config, and one that names no flag of the subcommand.
    std::fs::write(dir.join("typo.toml"), "[run]\nevnts = 3\n").unwrap();
    let stderr = assert_one_line_error(
        dir,
        &["run", "--config", "typo.toml"],
        "has no setting 'evnts'",
    );
    assert!(stderr.contains("typo.toml"), "{stderr}");
    assert!(stderr.contains("(did you mean 'events'?)"), "{stderr}");
    std::fs::write(dir.join("table.toml"), "[runn]\nevents = 3\n").unwrap();
    assert_one_line_error(
        dir,
        &["run", "--config", "table.toml"],
        "[runn] is not a command of hatshop (did you mean 'run'?)",
    );
    std::fs::write(dir.join("folder.toml"), "[verify]\nresult_dir = \"x\"\n").unwrap();
    assert_one_line_error(
        dir,
        &["verify", "x", "--config", "folder.toml"],
        "result_dir is given on the command line, not in a settings file",
    );
    std::fs::write(dir.join("broken.toml"), "[run\n").unwrap();
    assert_one_line_error(
        dir,
        &["run", "--config", "broken.toml"],
        "is not valid TOML",
    );
    // A value of the wrong shape or sense names the file and the key.
    for (text, says) in [
        (
            "[run]\nquiet = \"yes\"\n",
            "wrong.toml: [run] quiet: a switch is true or false",
        ),
        (
            "[run]\nevents = [1, 2]\n",
            "wrong.toml: [run] events: takes one value, not an array",
        ),
        (
            "[run]\nevents = \"1,00\"\n",
            "wrong.toml: [run] events: invalid value '1,00'",
        ),
        (
            "[run]\nevents = true\n",
            "wrong.toml: [run] events: takes a value, not true/false",
        ),
    ] {
        std::fs::write(dir.join("wrong.toml"), text).unwrap();
        assert_one_line_error(dir, &["run", "--config", "wrong.toml"], says);
    }
    // What is not a file is said, never passed over.
    assert_one_line_error(
        dir,
        &["run", "--config", "/tmp"],
        "is a folder; name a TOML file",
    );
    let own = TempDir::new().unwrap();
    std::fs::create_dir(own.path().join("hatshop.toml")).unwrap();
    assert_one_line_error(own.path(), &["run"], "hatshop.toml: is a folder");
    std::fs::remove_dir(own.path().join("hatshop.toml")).unwrap();
    std::os::unix::fs::symlink("loop", own.path().join("hatshop.toml")).unwrap();
    std::os::unix::fs::symlink("hatshop.toml", own.path().join("loop")).unwrap();
    assert_one_line_error(own.path(), &["run"], "hatshop.toml: cannot be read");
}

/// `--warmup 300ms` warms up for a time; run.json records the events it came to, so
/// the folder verifies exactly and regenerates the same stream. A written stream needs
/// a count.
#[test]
fn a_warmup_given_as_a_time_is_recorded_as_the_events_it_came_to() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(
        &tmp,
        "timed",
        &["--events", "3000", "--warmup", "300ms", "--verify"],
    );
    let run = json(&out.join("run.json"));
    assert_eq!(run["plan"]["warmup_s"], 0.3, "{run}");
    let warmup = run["events"]["workload"]["warmup"].as_u64().unwrap();
    assert!(warmup > 0, "{run}");
    assert_eq!(run["measured_ops"], 3000);
    let first_measured = op_rows(&out).iter().map(|op| op.seq).min().unwrap();
    let load = run["events"]["workload"]["initial_orders"]
        .as_u64()
        .unwrap();
    assert_eq!(first_measured, load + warmup);
    common::verify_ok(tmp.path(), &out);
    assert_one_line_error(
        tmp.path(),
        &["generate", "--warmup", "10s", "-o", "x.jsonl"],
        "needs its warm-up as a count of events",
    );
    assert_one_line_error(
        tmp.path(),
        &["run", "--warmup", "10s", "--duration", "5"],
        "nothing would be measured",
    );
    assert_one_line_error(
        tmp.path(),
        &["run", "--db", "null://", "--warmup", "1s", "--shard", "0/2"],
        "shards share one stream",
    );
    assert_one_line_error(
        tmp.path(),
        &["run", "--warmup", "settled", "--duration", "60s"],
        "--warmup settled (it may take 120 s) is not shorter than --duration 60 s",
    );
    assert_one_line_error(
        tmp.path(),
        &["generate", "--warmup", "settled", "-o", "x.jsonl"],
        "needs its warm-up as a count of events",
    );
    assert_one_line_error(
        tmp.path(),
        &["run", "--warmup", "soon"],
        "a warm-up is a count of events (20000, 20k), a time (10s, 1m) or `settled`",
    );
}

/// `--warmup settled` warms up until the mean latency per 5 s window stops falling (15 s
/// at least, 120 s at most), keeps each window's mean in run.json, and records the
/// events it came to, so the folder verifies exactly. Paced, so that its seconds of
/// warm-up leave the cores to the tests beside it.
#[test]
fn a_warmup_until_settled_keeps_its_windows_and_verifies() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(
        &tmp,
        "settled",
        &[
            "--events", "2000", "--rate", "1000", "--warmup", "settled", "--verify",
        ],
    );
    let run = json(&out.join("run.json"));
    let settling = &run["warmth"]["settling"];
    let after_s = settling["after_s"].as_f64().unwrap();
    assert!((15.0..125.0).contains(&after_s), "{run}");
    let windows = settling["window_means_us"].as_array().unwrap();
    assert_eq!(windows.len(), (after_s / 5.0) as usize, "{run}");
    assert!(
        windows
            .iter()
            .all(|mean| mean.as_f64().is_some_and(|us| us > 0.0)),
        "{run}"
    );
    assert!(run["plan"].get("warmup_s").is_none(), "{run}");
    assert!(
        run["events"]["workload"]["warmup"].as_u64().unwrap() > 0,
        "{run}"
    );
    assert_eq!(run["measured_ops"], 2000);
    common::verify_ok(tmp.path(), &out);
}

/// `--client-threads` is in the help of the commands that run work and no other (the
/// old spelling before the subcommand still works); every default is shown one way.
#[test]
fn help_shows_each_flag_where_it_acts_and_each_default_one_way() {
    let tmp = TempDir::new().unwrap();
    let help = |args: &[&str]| {
        let out = hatshop(tmp.path())
            .args(args)
            .arg("--help")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        common::text(&out.stdout)
    };
    for command in ["run", "sweep", "load"] {
        assert!(help(&[command]).contains("--client-threads"), "{command}");
    }
    let commands = [
        "generate",
        "load",
        "prepare",
        "merge",
        "verify",
        "report",
        "recover",
        "compare",
        "export",
        "sweep",
        "workloads",
        "server",
        "completions",
        "man",
    ];
    for command in commands {
        let text = help(&[command]);
        if !["load", "sweep"].contains(&command) {
            assert!(!text.contains("--client-threads"), "{command}: {text}");
        }
        assert!(!text.contains("(default"), "{command}: {text}");
    }
    let text = help(&["run"]);
    assert!(!text.contains("(default"), "{text}");
    assert!(text.contains("[default: the spec's count]"), "{text}");
    for action in ["start", "logs"] {
        assert!(!help(&["server", action]).contains("(default"), "{action}");
    }
    hatshop(tmp.path())
        .args([
            "--client-threads",
            "1",
            "run",
            "--quiet",
            "--db",
            "null://",
            "--events",
            "10",
        ])
        .assert()
        .success();
}

/// A run's runtime threads are the flag's, else its store's choice (SQLite makes none:
/// one per core), as run.json records them.
#[test]
fn a_run_records_the_runtime_threads_it_ran_on() {
    let tmp = TempDir::new().unwrap();
    let given = run_ok(&tmp, "given", &["--client-threads", "3", "--events", "200"]);
    assert_eq!(json(&given.join("run.json"))["host"]["client_threads"], 3);
    let chosen = run_ok(&tmp, "chosen", &["--events", "200"]);
    let run = json(&chosen.join("run.json"));
    assert_eq!(run["host"]["client_threads"], run["host"]["cores"], "{run}");
}

/// `-o` names a folder everywhere: a run's, compare's (compare.html inside), the man
/// pages'. The old file forms still work: `generate -o FILE`, `compare -o x.html`.
#[test]
fn o_is_a_folder_for_every_command() {
    let tmp = TempDir::new().unwrap();
    let a = run_ok(&tmp, "a", &["--db", "null://", "--events", "500"]);
    let b = run_ok(&tmp, "b", &["--db", "null://", "--events", "500"]);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    hatshop(tmp.path())
        .args(["compare", a, b, "-o", "side-by-side"])
        .assert()
        .success()
        .stdout(predicate::str::contains("side-by-side/compare.html"));
    assert!(tmp.path().join("side-by-side/compare.html").is_file());
    hatshop(tmp.path())
        .args(["compare", a, b, "--output", "old.html"])
        .assert()
        .success();
    assert!(tmp.path().join("old.html").is_file());
    hatshop(tmp.path())
        .args(["generate", "--events", "10", "-o", "old.jsonl"])
        .assert()
        .success();
    assert!(tmp.path().join("old.jsonl").is_file());
    for command in ["run", "load", "merge", "compare", "man", "sweep"] {
        let out = hatshop(tmp.path())
            .args([command, "--help"])
            .output()
            .unwrap();
        let help = common::text(&out.stdout);
        assert!(help.contains("-o, --out <DIR>"), "{command}: {help}");
    }
    let out = hatshop(tmp.path())
        .args(["generate", "--help"])
        .output()
        .unwrap();
    assert!(!common::text(&out.stdout).contains("-o,"));
    assert_one_line_error(tmp.path(), &["generate"], "FILE");
}

/// Every spelling the glossary lists as changed still works, for one more release.
#[test]
fn the_names_that_changed_still_work() {
    let tmp = TempDir::new().unwrap();
    // `--pool` and `?pool=` are read as `connections` (checked before connecting).
    assert_one_line_error(
        tmp.path(),
        &["run", "--db", "mysql://root@127.0.0.1:1/x", "--pool", "0"],
        "'--connections <N>': it must be at least 1",
    );
    assert_one_line_error(
        tmp.path(),
        &["run", "--db", "mysql://root@127.0.0.1:1/x?pool=0"],
        "mysql setting connections=0",
    );
    // `server … mysql` is MariaDB's server.
    hatshop(tmp.path())
        .env("HATSHOP_HOME", tmp.path().join("home"))
        .args(["server", "stop", "mysql"])
        .assert()
        .success()
        .stdout(predicate::str::contains("mariadb: not running"));
    // `--preset seed-002` is study 002's load.
    hatshop(tmp.path())
        .args([
            "load", "--preset", "seed-002", "--rows", "100", "--repeat", "1", "-o", "load",
        ])
        .assert()
        .success();
    let glossary =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/glossary.md"))
            .unwrap();
    for old in [
        "`--pool`",
        "`hatshop server start mysql`",
        "`--preset seed-002`",
    ] {
        assert!(glossary.contains(old), "{old}");
    }
}

/// A run whose operations fail more often than `--max-errors` (1 % unless set) exits 3
/// and says so, with its folder complete; a looser bound, or 100 %, lets it pass.
#[test]
fn a_run_over_its_error_bound_exits_3_with_its_folder_complete() {
    let tmp = TempDir::new().unwrap();
    let generated = hatshop(tmp.path())
        .args(["generate", "--events", "40", "-o", "stream.jsonl"])
        .output()
        .unwrap();
    assert!(generated.status.success());
    // Every fifth measured event creates an order the load already made: 20 % fail.
    let stream = std::fs::read_to_string(tmp.path().join("stream.jsonl")).unwrap();
    let mut lines: Vec<serde_json::Value> = stream
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let first_create = lines[0]["op"].clone();
    let mut measured = 0;
    for line in lines.iter_mut().filter(|l| l["phase"] == "measure") {
        measured += 1;
        if measured % 5 == 0 {
            line["op"] = first_create.clone();
        }
    }
    let body: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(tmp.path().join("dup.jsonl"), body.join("\n") + "\n").unwrap();
    let run = |name: &str, extra: &[&str]| {
        hatshop(tmp.path())
            .args(["run", "--quiet", "--events-file", "dup.jsonl", "-o", name])
            .args(extra)
            .output()
            .unwrap()
    };

    let over = run("over", &[]);
    assert_eq!(over.status.code(), Some(3));
    let stderr = common::text(&over.stderr);
    assert!(
        stderr.contains("8 of 40 measured operations failed (20.0 %), more than --max-errors 1 %"),
        "{stderr}"
    );
    let summary = json(&tmp.path().join("over/summary.json"));
    assert_eq!(summary["errors"], 8, "{summary}");
    assert_eq!(op_rows(&tmp.path().join("over")).len(), 40);

    for (name, bound) in [("loose", "25%"), ("never", "100%"), ("share", "0.3")] {
        let output = run(name, &["--max-errors", bound]);
        assert!(
            output.status.success(),
            "{bound}: {}",
            common::text(&output.stderr)
        );
    }
    let output = run("tight", &["--max-errors", "0.19"]);
    assert_eq!(output.status.code(), Some(3));
    // Repeats are held to it, each; a sweep, which does not apply it, refuses it.
    let repeated = run("repeated", &["--repeat", "2", "--max-errors", "0%"]);
    assert_eq!(repeated.status.code(), Some(3));
    let stderr = common::text(&repeated.stderr);
    assert!(
        stderr.contains("error: repeat-1: 8 of 40") && stderr.contains("error: repeat-2: 8 of 40"),
        "{stderr}"
    );
    // Resumed, the repeats kept from before are held to it as well.
    let resumed = run("repeated", &["--repeat", "2", "--max-errors", "0%"]);
    assert_eq!(resumed.status.code(), Some(3));
    let stderr = common::text(&resumed.stderr);
    assert!(
        stderr.contains("2 of the 2 repeats finished earlier, kept")
            && stderr.contains("error: repeat-1: 8 of 40")
            && stderr.contains("error: repeat-2: 8 of 40"),
        "{stderr}"
    );
    assert!(
        run("repeated-loose", &["--repeat", "2", "--max-errors", "25%"])
            .status
            .success()
    );
    assert_one_line_error(
        tmp.path(),
        &["sweep", "--vary", "concurrency=1,2", "--max-errors", "0%"],
        "--max-errors bounds one run or its --repeat",
    );
    assert_one_line_error(
        tmp.path(),
        &["run", "--max-errors", "2"],
        "a share is from 0 to 1 (0.2) or a percentage (20%)",
    );
}

/// On a terminal of 80 columns (`$COLUMNS`) the table keeps what fits and says what it
/// left out; `--wide` and a pipe get every column, the standard deviation among them.
#[test]
fn the_table_fits_80_columns_where_the_terminal_is_that_narrow() {
    let tmp = TempDir::new().unwrap();
    let narrow = hatshop(tmp.path())
        .env("COLUMNS", "80")
        .args(["run", "--quiet", "--events", "3000", "-o", "narrow"])
        .output()
        .unwrap();
    assert!(narrow.status.success(), "{}", common::text(&narrow.stderr));
    let stdout = common::text(&narrow.stdout);
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("event "))
        .take_while(|l| !l.starts_with("latencies in"))
        .collect();
    assert_eq!(table.len(), 10, "{stdout}");
    for line in &table {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    let columns: Vec<&str> = table[0].split_whitespace().collect();
    assert_eq!(
        columns,
        [
            "event", "count", "errors", "mean", "p50", "p99", "p99.9", "max"
        ]
    );
    assert!(stdout.contains("--wide shows them"), "{stdout}");
    let header = |args: &[&str], columns: Option<&str>| {
        let mut show = hatshop(tmp.path());
        if let Some(columns) = columns {
            show.env("COLUMNS", columns);
        }
        let out = show.args(args).output().unwrap();
        let text = common::text(&out.stdout);
        text.lines()
            .find(|l| l.starts_with("event "))
            .unwrap()
            .to_string()
    };
    for (args, columns) in [
        (&["show", "narrow", "--wide"][..], Some("80")),
        (&["show", "narrow"][..], None),
    ] {
        let header = header(args, columns);
        let columns: Vec<&str> = header.split_whitespace().collect();
        assert!(
            columns.contains(&"stddev") && columns.ends_with(&["p99.99", "max"]),
            "{header}"
        );
    }
}

/// A run whose numbers break a `--threshold` exits 4 with its folder complete, says which
/// bound broke by how much, and keeps every verdict in run.json; hatshop.toml takes a
/// list of them, repeats are each held to them, and a bound with nothing to measure
/// is broken, not passed.
#[test]
fn a_run_that_breaks_a_threshold_exits_4_with_its_folder_complete() {
    let tmp = TempDir::new().unwrap();
    let run = |name: &str, extra: &[&str]| {
        hatshop(tmp.path())
            .args(["run", "--quiet", "--events", "2000", "-o", name])
            .args(extra)
            .output()
            .unwrap()
    };
    let bounds = [
        "--threshold",
        "p50 < 1us",
        "--threshold",
        "errors<1%",
        "--threshold",
        "read_order:throughput>1",
    ];
    let broken = run("broken", &bounds);
    assert_eq!(
        broken.status.code(),
        Some(4),
        "{}",
        common::text(&broken.stderr)
    );
    let stderr = common::text(&broken.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: the run broke --threshold p50<1us: p50 of all was ")
            && stderr.contains("× the bound (bound < 1.0 µs)"),
        "{stderr}"
    );
    let stdout = common::text(&broken.stdout);
    assert!(
        stdout.contains("threshold errors<1% kept: error share of all was 0.0 %"),
        "{stdout}"
    );
    assert!(stdout.contains("threshold p50<1us broken: "), "{stdout}");
    let dir = tmp.path().join("broken");
    let record = json(&dir.join("run.json"));
    assert_eq!(record["status"], "finished");
    let verdicts = record["thresholds"].as_array().unwrap();
    assert_eq!(verdicts.len(), 3, "{verdicts:?}");
    assert_eq!(verdicts[0]["kept"], false);
    assert!(verdicts[0]["measured"].as_f64().unwrap() > 1.0);
    assert_eq!(
        (&verdicts[1]["kept"], &verdicts[2]["kept"]),
        (&true.into(), &true.into())
    );
    assert_eq!(op_rows(&dir).len(), 2000);
    assert!(dir.join("summary.json").exists());
    let report = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        report.contains(r#"<div class="warning">broken · p50&lt;1us: p50 of all was "#)
            && report.contains("<div>kept · errors&lt;1%: error share of all was 0.0 %"),
        "the report lists each threshold"
    );

    // A percentile off the ladder is added to summary.json for the bound to read.
    std::fs::write(
        tmp.path().join("hatshop.toml"),
        "[run]\nthreshold = [\"p99.95<1h\", \"max<=1h\"]\n",
    )
    .unwrap();
    let kept = run("kept", &[]);
    assert!(kept.status.success(), "{}", common::text(&kept.stderr));
    let record = json(&tmp.path().join("kept/run.json"));
    assert_eq!(
        record["thresholds"].as_array().unwrap().len(),
        2,
        "{record}"
    );
    let summary = json(&tmp.path().join("kept/summary.json"));
    assert!(
        summary["overall"]["percentiles_us"]["p99.95"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    std::fs::remove_file(tmp.path().join("hatshop.toml")).unwrap();

    // Nothing to measure: the creates workload has no delete_order.
    let absent = run(
        "absent",
        &["-w", "creates", "--threshold", "delete_order:p99<1h"],
    );
    assert_eq!(absent.status.code(), Some(4));
    assert!(
        common::text(&absent.stderr).contains("no delete_order operation was measured"),
        "{}",
        common::text(&absent.stderr)
    );

    let repeated = run("repeated", &["--repeat", "2", "--threshold", "p50<1us"]);
    assert_eq!(repeated.status.code(), Some(4));
    let stderr = common::text(&repeated.stderr);
    assert!(
        stderr.contains("error: repeat-1: the run broke --threshold p50<1us")
            && stderr.contains("error: repeat-2: the run broke --threshold p50<1us"),
        "{stderr}"
    );
    assert_one_line_error(
        tmp.path(),
        &[
            "sweep",
            "--vary",
            "concurrency=1,2",
            "--threshold",
            "p99<1s",
        ],
        "--threshold bounds one run or its --repeat",
    );
    let malformed = assert_one_line_error(
        tmp.path(),
        &["run", "--threshold", "p99 5ms"],
        "has no < or >",
    );
    assert!(
        malformed.trim_end().ends_with("; see --help"),
        "{malformed}"
    );
}

/// Every flag whose value has a shape (a number, a time, a share, a choice…) refuses a
/// value of no shape as the command line's fault: one line ending "; see --help", exit
/// 2, as the table of exit codes says. Flags that take any text (a path, a URL, a name)
/// are checked where that text is read.
#[test]
fn every_shaped_flag_refuses_a_malformed_value_with_exit_2() {
    use clap::CommandFactory;
    use std::any::TypeId;
    fn walk(command: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        let free_text = [
            TypeId::of::<String>(),
            TypeId::of::<std::path::PathBuf>(),
            TypeId::of::<std::ffi::OsString>(),
        ];
        for arg in command.get_arguments() {
            let shaped = !free_text
                .iter()
                .any(|t| arg.get_value_parser().type_id() == *t);
            if !arg.get_action().takes_values() || !shaped || arg.is_positional() {
                continue;
            }
            let flag = match (arg.get_long(), arg.get_short()) {
                (Some(long), _) => format!("--{long}"),
                (None, Some(short)) => format!("-{short}"),
                (None, None) => continue,
            };
            let mut line = path.clone();
            line.extend([flag, "§".to_string()]);
            out.push(line);
        }
        for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut deeper = path.clone();
            deeper.push(sub.get_name().to_string());
            walk(sub, deeper, out);
        }
    }
    let mut lines = Vec::new();
    walk(&hatshop::cli::Cli::command(), Vec::new(), &mut lines);
    assert!(lines.len() > 40, "{} flags found: {lines:?}", lines.len());
    let tmp = TempDir::new().unwrap();
    for line in &lines {
        let output = hatshop(tmp.path()).args(line).output().unwrap();
        let stderr = common::text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{line:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{line:?}: {stderr}");
        assert!(
            stderr.trim_end().ends_with("; see --help"),
            "{line:?}: {stderr}"
        );
    }
}

/// The table of exit codes in docs/runs.md is the one `--help` prints.
#[test]
fn the_exit_codes_in_the_docs_are_the_ones_help_prints() {
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/runs.md")).unwrap();
    let rows: Vec<(String, String)> = docs
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            match cells.as_slice() {
                [code, meaning] if code.parse::<u8>().is_ok() => {
                    Some((code.to_string(), meaning.to_string()))
                }
                _ => None,
            }
        })
        .collect();
    assert_eq!(
        rows.iter().map(|(c, _)| c.as_str()).collect::<Vec<_>>(),
        ["0", "1", "2", "3", "4", "130"]
    );
    for args in [&["--help"][..], &["run", "--help"]] {
        let help = hatshop(Path::new(".")).args(args).output().unwrap();
        let help = common::text(&help.stdout);
        let printed: Vec<(String, String)> = help
            .lines()
            .skip_while(|l| *l != "Exit codes:")
            .skip(1)
            .filter_map(|l| {
                let (code, meaning) = l.trim().split_once(' ')?;
                Some((code.to_string(), meaning.trim().to_string()))
            })
            .collect();
        assert_eq!(printed, rows, "{args:?}");
    }
}

/// A switch the settings file turns on can be turned off on the command line, by
/// `--no-NAME` or `--NAME=false`, as the last word wins.
#[test]
fn every_switch_can_be_switched_off_on_the_command_line() {
    let tmp = TempDir::new().unwrap();
    std::fs::write(
        tmp.path().join("hatshop.toml"),
        "[run]\nquiet = true\nverify = true\nevents = 300\nrate = 500\nprogress-interval = \"100ms\"\n",
    )
    .unwrap();
    let progress_lines = |name: &str, extra: &[&str]| {
        let output = hatshop(tmp.path())
            .args(["run", "--db", "null://", "--no-verify", "-o", name])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{extra:?}: {}",
            common::text(&output.stderr)
        );
        common::text(&output.stderr).matches("progress: ").count()
    };
    assert_eq!(progress_lines("file", &[]), 0, "the file's quiet holds");
    assert!(progress_lines("no-form", &["--no-quiet"]) > 0);
    assert!(progress_lines("false", &["--quiet=false"]) > 0);
    assert_eq!(progress_lines("last-wins", &["--no-quiet", "--quiet"]), 0);
    assert_one_line_error(
        tmp.path(),
        &["run", "--quiet=maybe"],
        "invalid value 'maybe' for '--quiet[=<true|false>]'",
    );
}

/// `hatshop show` prints a saved run's table as the run printed it when it ended, and a
/// repeat folder's medians as the repeats did.
#[test]
fn show_prints_a_saved_runs_table_again() {
    let tmp = TempDir::new().unwrap();
    let ran = hatshop(tmp.path())
        .args(["run", "--quiet", "--events", "1000", "-o", "once"])
        .output()
        .unwrap();
    assert!(ran.status.success());
    let ran = common::text(&ran.stdout);
    let table_of = |text: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.starts_with("hatshop-random · "))
            .take_while(|l| !l.starts_with("results: "))
            .map(str::to_string)
            .collect()
    };
    let shown = hatshop(tmp.path()).args(["show", "once"]).output().unwrap();
    assert!(shown.status.success(), "{}", common::text(&shown.stderr));
    let shown = common::text(&shown.stdout);
    assert!(table_of(&ran).len() > 10, "{ran}");
    assert_eq!(table_of(&shown), table_of(&ran));

    let repeated = hatshop(tmp.path())
        .args([
            "run", "--quiet", "--events", "300", "--repeat", "2", "-o", "twice",
        ])
        .output()
        .unwrap();
    assert!(repeated.status.success());
    let medians = |text: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.starts_with("median (min–max) over 2 repeats"))
            .take_while(|l| !l.starts_with("results: "))
            .map(str::to_string)
            .collect()
    };
    let shown = hatshop(tmp.path())
        .args(["show", "once", "twice"])
        .output()
        .unwrap();
    let shown = common::text(&shown.stdout);
    assert!(medians(&shown).len() > 5, "{shown}");
    assert_eq!(medians(&shown), medians(&common::text(&repeated.stdout)));
    assert_one_line_error(tmp.path(), &["show", "nosuch"], "no result folder nosuch");
}

/// `--tag` names a run in its records, its table, its report and every comparison's
/// legend, as latte's `--tag` and hyperfine's `-n` do.
#[test]
fn a_tag_names_the_run_everywhere_it_is_shown() {
    let tmp = TempDir::new().unwrap();
    let run = |name: &str, tag: &str| {
        let output = hatshop(tmp.path())
            .args([
                "run", "--quiet", "--events", "400", "--tag", tag, "-o", name,
            ])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", common::text(&output.stderr));
        common::text(&output.stdout)
    };
    let table = run("before", "before the index");
    run("after", "after");
    assert!(
        table.contains("before the index · hatshop-random · sqlite ("),
        "{table}"
    );
    assert_eq!(
        json(&tmp.path().join("before/run.json"))["tag"],
        "before the index"
    );
    assert_eq!(
        json(&tmp.path().join("before/summary.json"))["run"]["tag"],
        "before the index"
    );
    let report = std::fs::read_to_string(tmp.path().join("before/report.html")).unwrap();
    assert!(report.contains("before the index: hatshop-random on sqlite"));
    let compared = hatshop(tmp.path())
        .args(["compare", "before", "after", "-o", "page.html"])
        .output()
        .unwrap();
    assert!(
        compared.status.success(),
        "{}",
        common::text(&compared.stderr)
    );
    let page = std::fs::read_to_string(tmp.path().join("page.html")).unwrap();
    assert!(page.contains("#1 before the index") && page.contains("#2 after"));
    let figure = std::fs::read_to_string(
        tmp.path()
            .join("figures/page-01-mean-latency-per-event-type.csv"),
    )
    .unwrap();
    assert!(figure.contains("#1 before the index") && figure.contains("#2 after"));
    assert_one_line_error(
        tmp.path(),
        &["run", "--tag", ""],
        "a tag is one line of 1 to 64 characters",
    );
}

/// compare exports its table as hyperfine does: CSV with plain numbers and each run's
/// verdict (no ratio or p-value for the baseline), and Markdown for a pull request;
/// `hatshop show` prints its table again from the folder of its page.
#[test]
fn compare_exports_its_table_as_csv_and_markdown() {
    let tmp = TempDir::new().unwrap();
    let a = run_ok(&tmp, "a", &["--db", "null://", "--events", "3000"]);
    let b = run_ok(&tmp, "b", &["--db", "null://", "--events", "3000"]);
    let output = hatshop(tmp.path())
        .args([
            "compare",
            "-o",
            "cmp",
            "--export-csv",
            "-",
            "--export-markdown",
            "table.md",
        ])
        .args([&a, &b])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", common::text(&output.stderr));
    let csv = common::text(&output.stdout);
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header[..4], ["event_type", "run", "dir", "label"], "{csv}");
    let rows: Vec<std::collections::HashMap<String, String>> =
        reader.deserialize().map(Result::unwrap).collect();
    let all: Vec<_> = rows.iter().filter(|r| r["event_type"] == "all").collect();
    assert_eq!(all.len(), 2, "{csv}");
    assert_eq!(
        (
            all[0]["run"].as_str(),
            all[0]["ratio"].as_str(),
            all[0]["p_value"].as_str()
        ),
        ("1", "", ""),
        "{csv}"
    );
    assert_eq!(all[0]["verdict"], "baseline");
    assert!(all[1]["ratio"].parse::<f64>().unwrap() > 0.0, "{csv}");
    assert!(all[1]["ops_s"].parse::<f64>().unwrap() > 0.0, "{csv}");
    // The table went to standard error, the CSV alone to standard output.
    assert!(common::text(&output.stderr).contains("verdict"));
    let markdown = std::fs::read_to_string(tmp.path().join("table.md")).unwrap();
    assert!(
        markdown.contains("| event | run | ops/s | mean µs |"),
        "{markdown}"
    );
    assert!(markdown.contains("| all | #1 |"), "{markdown}");
    // JSON carries the CSV's rows: numbers as numbers, the baseline's ratio as null.
    let exported = hatshop(tmp.path())
        .args(["compare", "-o", "cmp-json", "--export-json", "-"])
        .args([&a, &b])
        .output()
        .unwrap();
    assert!(
        exported.status.success(),
        "{}",
        common::text(&exported.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&exported.stdout).unwrap();
    let all: Vec<&serde_json::Value> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["event_type"] == "all")
        .collect();
    assert_eq!(all.len(), 2, "{rows}");
    assert!(all[0]["ratio"].is_null() && all[0]["run"] == 1, "{rows}");
    assert!(all[1]["ratio"].as_f64().unwrap() > 0.0, "{rows}");
    assert!(
        all[1]["verdict"].as_str().is_some_and(|v| !v.is_empty()),
        "{rows}"
    );
    let shown = hatshop(tmp.path()).args(["show", "cmp"]).output().unwrap();
    assert!(shown.status.success(), "{}", common::text(&shown.stderr));
    let shown = common::text(&shown.stdout);
    assert!(
        shown.contains("verdict") && shown.contains("baseline") && shown.contains("#2 "),
        "{shown}"
    );
    assert_one_line_error(
        tmp.path(),
        &[
            "compare",
            "--export-csv",
            "-",
            "--export-markdown",
            "-",
            "x",
            "y",
        ],
        "standard output carries one export",
    );
}

#[test]
fn an_events_file_that_is_a_fifo_a_device_or_endless_is_one_line() {
    let tmp = TempDir::new().unwrap();
    let fifo = tmp.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for (file, says) in [
        (
            fifo.to_str().unwrap(),
            "it is not a regular file (a FIFO or a device)",
        ),
        ("/dev/zero", "it is not a regular file (a FIFO or a device)"),
        ("-", "standard input cannot be read twice"),
    ] {
        common::assert_one_line_error(tmp.path(), &["run", "--events-file", file], says);
    }
    // A file of one endless line: refused at the bound, not read into memory whole.
    let endless = tmp.path().join("endless.jsonl");
    std::fs::write(&endless, vec![b'x'; (1 << 20) + 10]).unwrap();
    common::assert_one_line_error(
        tmp.path(),
        &["run", "--events-file", endless.to_str().unwrap()],
        "endless.jsonl:1: a line longer than 1 MiB",
    );
}
