//! The open loop seen from the outside: a sweep over rates, the search for the highest
//! rate under a p99 bound, and a ramp along its rate line.

mod common;

use std::sync::Mutex;

use common::{hatshop, json, lock};
use tempfile::TempDir;

/// These runs check achieved rates: one at a time, so none paces against another.
static PACED: Mutex<()> = Mutex::new(());

#[test]
fn a_rate_sweep_reports_response_time_at_each_rate() {
    let _paced = lock(&PACED);
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
fn find_max_halves_below_a_bound_no_rate_meets_and_says_so() {
    let _paced = lock(&PACED);
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
    let _paced = lock(&PACED);
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
    let mut reader = csv::Reader::from_path(out.join("intervals.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let rates: Vec<f64> = reader
        .records()
        .map(Result::unwrap)
        .filter(|r| &r[column("event_type")] == "all")
        .map(|r| r[column("throughput_ops_s")].parse().unwrap())
        .collect();
    // The rate line's mean over each quarter second, then 6,000 flat.
    let expected = [2500.0, 3500.0, 4500.0, 5500.0, 6000.0, 6000.0];
    assert_eq!(rates.len(), expected.len(), "{rates:?}");
    for (got, want) in rates.iter().zip(expected) {
        assert!((got - want).abs() <= want * 0.05, "{rates:?}");
    }
    let plan = &json(&out.join("run.json"))["plan"];
    assert_eq!(plan["ramp_to_ops_s"], 6000.0, "{plan}");
    assert_eq!(plan["ramp_s"], 1.0, "{plan}");
    // Response time over time too: in intervals.csv, latency.hlog and compare.
    let mut reader = csv::Reader::from_path(out.join("intervals.csv")).unwrap();
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
