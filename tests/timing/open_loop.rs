//! The open loop seen from the outside: a sweep over rates, the search for the highest
//! rate under a p99 bound, a ramp along its rate line, and stages along theirs.

use crate::common;

use common::{hatshop, json};
use tempfile::TempDir;

#[test]
fn a_rate_sweep_reports_response_time_at_each_rate() {
    let _paced = crate::one_at_a_time();
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("rates");
    hatshop(tmp.path())
        .args([
            "sweep",
            "--quiet",
            "--vary",
            "rate=2000,4000",
            "--events",
            "2000",
            "-c",
            "2",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let mut reader = csv::Reader::from_path(out.join("sweep.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let all: Vec<&csv::StringRecord> = rows
        .iter()
        .filter(|r| &r[column("event_type")] == "all")
        .collect();
    assert_eq!(all.len(), 2);
    for row in all {
        let rate: f64 = row[column("value")].parse().unwrap();
        let achieved: f64 = row[column("throughput_ops_s")].parse().unwrap();
        assert!(
            (achieved - rate).abs() <= rate * 0.05,
            "{achieved} ops/s at --rate {rate}"
        );
        // Each operation's response time spans its service time, so every
        // percentile of one is at least the other's.
        let service: f64 = row[column("p99_us")].parse().unwrap();
        let response: f64 = row[column("response_p99_us")].parse().unwrap();
        assert!(response >= service, "{response} < {service}");
    }
}

#[test]
fn find_max_searches_each_database_a_round_at_a_time_into_one_table() {
    let _paced = crate::one_at_a_time();
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("searches");
    let output = hatshop(tmp.path())
        .args([
            "run",
            "--find-max",
            "--p99-under",
            "1ns",
            "--rate",
            "4",
            "--duration",
            "0.2",
            "--db",
            "null://",
            "--db",
            "sqlite://s.db",
            "--repeat",
            "2",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let order: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("searching "))
        .collect();
    assert_eq!(
        order,
        [
            "searching null (repeat 1 of 2)",
            "searching sqlite (repeat 1 of 2)",
            "searching null (repeat 2 of 2)",
            "searching sqlite (repeat 2 of 2)",
        ]
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("  null: no rate tried kept the bound"),
        "{stdout}"
    );
    // One table: a row per database and repeat, each search in its own folder.
    let table = std::fs::read_to_string(out.join("findmax.csv")).unwrap();
    let rows: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(
        rows,
        ["null,1,,1,", "null,2,,1,", "sqlite,1,,1,", "sqlite,2,,1,"]
    );
    for search in ["null-r1", "null-r2", "sqlite-r1", "sqlite-r2"] {
        assert!(
            out.join(search)
                .join("rate=4")
                .join("summary.json")
                .exists(),
            "{search}"
        );
        assert!(out.join(search).join("rate=1").exists(), "{search}");
    }
    assert!(out.join("sweep.html").exists());
}

#[test]
fn find_max_halves_below_a_bound_no_rate_meets_and_says_so() {
    let _paced = crate::one_at_a_time();
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("search");
    let output = hatshop(tmp.path())
        .args([
            "run",
            "--find-max",
            "--p99-under",
            "1ns",
            "--rate",
            "64",
            "--duration",
            "0.2",
            "--db",
            "null://",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("no rate tried kept response p99 under the bound"),
        "{stdout}"
    );
    // 64, 32, … 1 op/s: each missed, each has its folder and its rows.
    let mut reader = csv::Reader::from_path(out.join("sweep.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let value = headers.iter().position(|h| h == "value").unwrap();
    let event = headers.iter().position(|h| h == "event_type").unwrap();
    let rates: Vec<String> = reader
        .records()
        .map(Result::unwrap)
        .filter(|r| &r[event] == "all")
        .map(|r| r[value].to_string())
        .collect();
    assert_eq!(rates, ["1", "2", "4", "8", "16", "32", "64"]);
    assert!(out.join("rate=64").join("summary.json").exists());
    // The page says the answer first, then draws response p99 against the rate, a
    // curve on a rate axis, with the bound.
    let page = std::fs::read_to_string(out.join("sweep.html")).unwrap();
    assert!(
        page.contains("No rate tried kept response p99 under 0.00 µs."),
        "{page}"
    );
    assert!(page.contains("p99 response time by rate, and the bound"));
    let curve = std::fs::read_to_string(
        out.join("figures/sweep-01-p99-response-time-by-rate-and-the-bound.csv"),
    )
    .unwrap();
    assert!(
        curve.contains("response p99") && curve.contains("bound"),
        "{curve}"
    );

    // The bound belongs to the search.
    hatshop(tmp.path())
        .args(["run", "--p99-under", "10ms"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("add --find-max"));
    hatshop(tmp.path())
        .args(["run", "--find-max"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("--find-max needs --p99-under"));
}

#[test]
fn a_ramp_climbs_along_its_rate_line() {
    let _paced = crate::one_at_a_time();
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("ramp");
    hatshop(tmp.path())
        .args([
            "run",
            "--quiet",
            "--db",
            "null://",
            "--events",
            "100000",
            "--rate",
            "2000..6000",
            "--ramp",
            "1s",
            "--duration",
            "1.5",
            "--interval",
            "0.25",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let rates = rates_of(&out);
    // The rate line's mean over each quarter second, then 6,000 flat.
    let expected = [2500.0, 3500.0, 4500.0, 5500.0, 6000.0, 6000.0];
    assert_rates_near(&rates, &expected, 0.05);
    let plan = &json(&out.join("run.json"))["plan"];
    assert_eq!(plan["ramp_to_ops_s"], 6000.0, "{plan}");
    assert_eq!(plan["ramp_s"], 1.0, "{plan}");
    // Response time over time too: in intervals.csv, latency.hlog and compare.
    let mut reader = csv::Reader::from_path(out.join("intervals.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    for row in reader.records().map(Result::unwrap) {
        let response: f64 = row[column("response_max_us")].parse().unwrap();
        let service: f64 = row[column("max_us")].parse().unwrap();
        assert!(response >= service, "{row:?}");
    }
    let log = std::fs::read_to_string(out.join("latency.hlog")).unwrap();
    assert!(log.contains("Tag=response-"), "{log}");
    let output = hatshop(tmp.path())
        .arg("compare")
        .arg(&out)
        .arg(&out)
        .args(["-o", "c.html"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("\nresponse time (--rate"), "{text}");
    let page = std::fs::read_to_string(tmp.path().join("c.html")).unwrap();
    assert!(page.contains(r#"<table id="response">"#));
}

/// `--stages` as k6 writes them: the rate moves in straight lines from stage to stage,
/// each quarter second sends what its line holds, the stages are the run's length,
/// and run.json and the report say what the stages were.
#[test]
fn stages_move_the_rate_along_their_lines_and_end_the_run() {
    let _paced = crate::one_at_a_time();
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("stages");
    let started = std::time::Instant::now();
    hatshop(tmp.path())
        .args([
            "run",
            "--quiet",
            "--db",
            "null://",
            "--stages",
            "0.5s:4000, 0.5s:4000, 0.5s:0",
            "--interval",
            "0.25",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    assert!(
        started.elapsed().as_secs_f64() < 10.0,
        "the stages end the run"
    );
    let rates = rates_of(&out);
    // 0 → 4,000 over half a second, 4,000 flat, then back to 0: each quarter's mean.
    let expected = [1000.0, 3000.0, 4000.0, 4000.0, 3000.0, 1000.0];
    assert_rates_near(&rates, &expected, 0.08);
    let run = json(&out.join("run.json"));
    assert_eq!(run["status"], "stopped_at_deadline", "{run}");
    let plan = &run["plan"];
    assert_eq!(plan["max_duration_s"], 1.5, "{plan}");
    assert_eq!(plan["rate_ops_s"], 0.0, "{plan}");
    assert_eq!(plan["stages"][1]["to_ops_s"], 4000.0, "{plan}");
    assert_eq!(plan["stages"][2]["length_s"], 0.5, "{plan}");
    // Exactly the operations the lines hold: 1,000 + 2,000 + 1,000.
    let measured = run["measured_ops"].as_u64().unwrap();
    assert!((3_960..=4_000).contains(&measured), "{measured}");
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        report.contains("open loop in stages from 0 ops/s: to 4,000 ops/s over 0.5 s"),
        "the report says what ran"
    );

    for (flags, expected) in [
        (
            &["--stages", "1s:100", "--duration", "5"][..],
            "leave out --duration",
        ),
        (
            &["--stages", "1s:100", "--ramp", "1s", "--rate", "1..2"],
            "leave out --ramp",
        ),
        (&["--stages", "5s"], "'5s' is not TIME:RATE"),
    ] {
        let output = hatshop(tmp.path()).arg("run").args(flags).output().unwrap();
        let stderr = common::text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(expected), "{flags:?}: {stderr}");
    }
    common::assert_one_line_error(
        tmp.path(),
        &["run", "--stages", "1s:0"],
        "every stage's rate is 0",
    );
}

/// Another process keeping a core busy while a run measures: run.json says how much of
/// the host it took, and the table and the report warn that the host was busy; the
/// same run on the quiet host is not warned.
#[test]
fn a_busy_host_is_said_and_a_quiet_one_is_not() {
    let _alone = crate::one_at_a_time();
    let tmp = TempDir::new().unwrap();
    let run = |name: &str| {
        let output = hatshop(tmp.path())
            .env_remove("HATSHOP_DB")
            .args([
                "run",
                "--events",
                "20000",
                "--min-duration",
                "2s",
                "-o",
                name,
            ])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", common::text(&output.stderr));
        let load = json(&tmp.path().join(name).join("run.json"))["host_load"].clone();
        (common::text(&output.stdout), load)
    };
    let (quiet_said, quiet) = run("quiet");
    let mut hog = std::process::Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let (busy_said, busy) = run("busy");
    let _ = hog.kill();
    let _ = hog.wait();
    let share = |load: &serde_json::Value| load["others_share"].as_f64().unwrap();
    assert!(share(&quiet) < 0.2, "{quiet}");
    assert!(!quiet_said.contains("the host was busy"), "{quiet_said}");
    // One of the two cores, less what the run's own waits left it.
    assert!(share(&busy) > 0.3, "{busy}");
    assert!(
        busy_said.contains("warning: the host was busy: other processes used "),
        "{busy_said}"
    );
    let report = std::fs::read_to_string(tmp.path().join("busy/report.html")).unwrap();
    assert!(report.contains("the host was busy"));
}

/// A client starved of CPU (hatshop at nice 10 on a core another process keeps busy)
/// sends the operations its lanes wait for late: the run says so, in its table, its
/// report and run.json, as the client's delay rather than the database's.
///
/// Both runs send a count of events, not a duration's worth: a client starved while
/// it starts could otherwise see its duration pass before its lanes send anything.
#[test]
fn a_starved_client_says_its_wakeups_were_late() {
    let _paced = crate::one_at_a_time();
    let tmp = TempDir::new().unwrap();
    let hatshop_bin = assert_cmd::cargo::cargo_bin("hatshop");
    let run = |name: &str, starved: bool| {
        let mut command = std::process::Command::new("taskset");
        command.args(["-c", "0"]);
        if starved {
            command.args(["nice", "-n", "10"]);
        }
        let output = command
            .arg(&hatshop_bin)
            .current_dir(tmp.path())
            .env_remove("HATSHOP_DB")
            .env_remove("COLUMNS")
            .args([
                "run", "--quiet", "--db", "null://", "--rate", "2000", "-c", "4",
            ])
            .args(["--events", "4000", "-o", name])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", common::text(&output.stderr));
        let wakeups = json(&tmp.path().join(name).join("run.json"))["client"]["wakeups"].clone();
        (common::text(&output.stdout), wakeups)
    };
    let (_, fed) = run("fed", false);
    let mut hog = std::process::Command::new("taskset")
        .args(["-c", "0", "sh", "-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let (stdout, starved) = run("starved", true);
    let _ = hog.kill();
    let _ = hog.wait();
    let share =
        |w: &serde_json::Value| w["late"].as_f64().unwrap() / w["sent"].as_f64().unwrap().max(1.0);
    assert!(fed["sent"].as_u64().unwrap() > 1_000, "{fed}");
    assert!(starved["sent"].as_u64().unwrap() > 1_000, "{starved}");
    // Five times the share the warning needs: the starved client gets the core in
    // slices far apart, and every operation due between them goes out late.
    assert!(
        share(&starved) > 0.05 && share(&starved) > share(&fed),
        "{starved} {fed}"
    );
    assert!(starved["latest_ms"].as_f64().unwrap() > 1.0, "{starved}");
    assert!(
        stdout.contains("warning: the client woke late: "),
        "{stdout}"
    );
    let report = std::fs::read_to_string(tmp.path().join("starved/report.html")).unwrap();
    assert!(
        report.contains("the client woke late"),
        "the report says so too"
    );
}

/// Each interval's throughput over all event types, from a run's intervals.csv.
fn rates_of(out: &std::path::Path) -> Vec<f64> {
    let mut reader = csv::Reader::from_path(out.join("intervals.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    reader
        .records()
        .map(Result::unwrap)
        .filter(|r| &r[column("event_type")] == "all")
        .map(|r| r[column("throughput_ops_s")].parse().unwrap())
        .collect()
}

/// As many intervals as expected, and the operations sent by the end of each within
/// `share` of the rate line's: an open-loop client that a busy host holds up for part of
/// one interval sends what was due in the next, so the running total is what the
/// schedule promises, where one interval's own rate is the host's noise.
fn assert_rates_near(rates: &[f64], expected: &[f64], share: f64) {
    assert_eq!(rates.len(), expected.len(), "{rates:?}");
    let (mut got_total, mut want_total) = (0.0, 0.0);
    for (got, want) in rates.iter().zip(expected) {
        got_total += got;
        want_total += want;
        assert!(
            (got_total - want_total).abs() <= want_total * share,
            "by this interval the rates sum to {got_total} where the line sums to {want_total}: {rates:?}"
        );
    }
}
