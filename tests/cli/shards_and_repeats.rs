//! Runs made of several runs, against SQLite in a temporary folder: the shards of one
//! run merged into one folder, and repeats with their medians and spread.

use crate::common;

use common::{assert_one_line_error, hatshop, json, run_shards};
use tempfile::TempDir;

#[test]
fn shards_of_one_sqlite_run_merge_and_verify_exactly() {
    let tmp = TempDir::new().unwrap();
    let db_file = tmp.path().join("shared.db");
    let db = format!("sqlite://{}", db_file.display());
    let dir = tmp.path();
    // A shard never makes tables: it needs `prepare`, and says so.
    assert_one_line_error(
        dir,
        &["run", "--db", &db, "--shard", "0/2", "--events", "10"],
        "no SQLite database",
    );
    let empty = dir.join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    assert_one_line_error(
        dir,
        &[
            "run",
            "--db",
            &format!("sqlite://{}", empty.display()),
            "--shard",
            "1/2",
        ],
        "holds no hatshop tables",
    );
    hatshop(dir)
        .args(["prepare", "--db", &db])
        .assert()
        .success();
    let shards = run_shards(&tmp, 2, &["--db", &db, "-c", "3", "--events", "3000"]);
    let records: Vec<_> = shards.iter().map(|s| json(&s.join("run.json"))).collect();
    // Both replayed the whole stream, each its share of the orders.
    assert_eq!(records[0]["plan_sha256"], records[1]["plan_sha256"]);
    assert_eq!(
        records[1]["shard"],
        serde_json::json!({"index": 1, "count": 2})
    );
    let ops: Vec<u64> = records
        .iter()
        .map(|r| r["measured_ops"].as_u64().unwrap())
        .collect();
    assert_eq!(ops.iter().sum::<u64>(), 3000, "{ops:?}");
    assert!(ops.iter().all(|&n| n > 1000), "{ops:?}");
    // A shard alone cannot be verified; two copies of one shard do not merge.
    let s0 = shards[0].to_str().unwrap();
    assert_one_line_error(dir, &["verify", s0], "hatshop merge");
    assert_one_line_error(dir, &["merge", s0, s0, "-o", "m0"], "given twice");
    assert_one_line_error(dir, &["merge", s0, "-o", "m0"], "shard 1/2 is missing");
    let merged = dir.join("merged");
    hatshop(dir)
        .args(["merge", shards[1].to_str().unwrap(), s0, "-o"])
        .arg(&merged)
        .assert()
        .success();
    let record = json(&merged.join("run.json"));
    assert_eq!(record["plan"]["concurrency"], 6);
    assert_eq!(record["shards"].as_array().unwrap().len(), 2);
    assert_eq!(record["lane_last_seq"].as_array().unwrap().len(), 6);
    // Each shard says how its lanes shared the work; the merge, whose lanes were
    // counted apart, does not.
    assert!(
        records
            .iter()
            .all(|r| r["fairness"]["lanes"].as_u64().is_some())
    );
    assert!(record["fairness"].is_null(), "{}", record["fairness"]);
    // The histograms add up exactly: counts are sums, the max is the larger max.
    let summary = json(&merged.join("summary.json"));
    assert_eq!(summary["ops"], 3000);
    // It names the merged run, with every shard's lanes.
    assert_eq!(summary["run"]["run_id"], record["run_id"]);
    assert_eq!(summary["run"]["concurrency"], 6);
    let parts: Vec<_> = shards
        .iter()
        .map(|s| json(&s.join("summary.json")))
        .collect();
    for event in summary["events"].as_array().unwrap() {
        let of_shards: Vec<&serde_json::Value> = parts
            .iter()
            .filter_map(|p| {
                p["events"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|e| e["event_type"] == event["event_type"])
            })
            .collect();
        let count: u64 = of_shards.iter().map(|e| e["count"].as_u64().unwrap()).sum();
        assert_eq!(event["count"].as_u64().unwrap(), count, "{event}");
        let max = of_shards
            .iter()
            .map(|e| e["max_us"].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert_eq!(event["max_us"].as_f64().unwrap(), max, "{event}");
    }
    // A merge killed part-way (as it left the folder) is told as one, and the same
    // merge again starts it afresh.
    let killed = dir.join("killed-merge");
    std::fs::create_dir_all(killed.join("ops")).unwrap();
    std::fs::write(killed.join(".merging"), "").unwrap();
    std::fs::write(killed.join(".hatshop.lock"), "").unwrap();
    std::fs::write(killed.join("ops/_part-000000.partial"), "PAR1").unwrap();
    let killed_arg = killed.to_str().unwrap();
    assert_one_line_error(
        dir,
        &["report", killed_arg],
        "holds a merge that did not finish",
    );
    hatshop(dir)
        .args(["merge", shards[1].to_str().unwrap(), s0, "-o", killed_arg])
        .assert()
        .success()
        .stdout(predicates::str::contains("starting afresh"));
    assert!(!killed.join(".merging").exists());
    assert_eq!(json(&killed.join("summary.json"))["ops"], 3000);
    // Killed while it drew the report: recover draws it.
    std::fs::remove_file(merged.join("report.html")).unwrap();
    hatshop(dir)
        .args(["recover"])
        .arg(&merged)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "wrote the report it was killed before writing",
        ));
    assert!(merged.join("report.html").exists());

    let rows = common::op_maps(&merged);
    assert_eq!(rows.len(), 3000);
    let shard_column: std::collections::BTreeSet<String> =
        rows.iter().map(|r| r["shard"].clone()).collect();
    assert_eq!(shard_column, ["0".to_string(), "1".to_string()].into());
    hatshop(dir)
        .args(["verify"])
        .arg(&merged)
        .assert()
        .success()
        .stdout(predicates::str::contains("exact"));
    hatshop(dir)
        .args(["compare"])
        .arg(&merged)
        .arg(&shards[0])
        .assert()
        .success();

    // Shards that wrote to different databases, or ran different plans, are no one run.
    let other_db = format!("sqlite://{}", dir.join("other.db").display());
    hatshop(dir)
        .args(["prepare", "--db", &other_db])
        .assert()
        .success();
    let shard1 = ["-c", "3", "--events", "3000", "--quiet", "--shard", "1/2"];
    hatshop(dir)
        .args(["run", "--db", &other_db, "--out", "elsewhere"])
        .args(shard1)
        .assert()
        .success();
    // Its load would fail on the orders shard 1 already wrote (and a load that fails
    // stops a run short of measuring): the tables are made again first.
    hatshop(dir)
        .args(["prepare", "--db", &db])
        .assert()
        .success();
    hatshop(dir)
        .args(["run", "--db", &db, "--retries", "2", "--out", "retrying"])
        .args(shard1)
        .assert()
        .success();
    for (other, differ) in [
        ("elsewhere", "databases"),
        ("retrying", "plans (retries: 0 against 2)"),
    ] {
        assert_one_line_error(dir, &["merge", s0, other, "-o", "m1"], differ);
    }
}

#[test]
fn repeats_give_medians_with_their_spread_and_compare_tests_across_them() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let output = hatshop(dir)
        .args([
            "run", "--quiet", "--repeat", "3", "--events", "2000", "-o", "r",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", common::text(&output.stderr));
    let stdout = common::text(&output.stdout);
    assert!(
        stdout.contains("median (min–max) over 3 repeats"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("repeat ").count(), 3, "{stdout}");
    let summary = json(&dir.join("r/summary.json"));
    assert_eq!(summary["repeats"], 3);
    let all = &summary["overall"];
    assert_eq!(all["count"]["median"], 2000.0);
    for figure in [
        &all["mean_us"],
        &all["latency_us"]["p99"],
        &all["throughput_ops_s"],
    ] {
        let (lo, mid, hi) = (
            figure["min"].as_f64().unwrap(),
            figure["median"].as_f64().unwrap(),
            figure["max"].as_f64().unwrap(),
        );
        assert!(lo <= mid && mid <= hi && lo > 0.0, "{figure}");
        // Mean ± σ beside them: the mean within the range, σ no wider than it.
        let (mean, sd) = (
            figure["mean"].as_f64().unwrap(),
            figure["stddev"].as_f64().unwrap(),
        );
        assert!(
            lo <= mean && mean <= hi && sd >= 0.0 && sd <= hi - lo,
            "{figure}"
        );
    }
    assert!(stdout.contains("mean ± σ of all: "), "{stdout}");
    // The folder has a page of its own: what ran, the table, each repeat's throughput
    // and p99 (their numbers beside it), and a link to each repeat's report.
    let page = std::fs::read_to_string(dir.join("r/report.html")).unwrap();
    for said in [
        r#"<table class="facts">"#,
        r#"<table id="repeats""#,
        "Median (min–max) over 3 repeats",
        "mean ± σ of all: ",
        r#"<a href="repeat-3/report.html">"#,
    ] {
        assert!(page.contains(said), "{said}");
    }
    assert!(!page.contains("))"), "a range closes once");
    let mut bars = csv::Reader::from_path(
        dir.join("r/figures/report-01-throughput-of-each-repeat-all-operations.csv"),
    )
    .unwrap();
    assert_eq!(bars.records().count(), 3);
    // Each repeat was verified as it ran, and the same command again keeps them.
    for i in 1..=3 {
        let verified = json(&dir.join(format!("r/repeat-{i}/verify.json")));
        assert_eq!(
            verified["orders_found"], verified["orders_expected"],
            "{verified}"
        );
        assert_eq!(
            verified["first_differences"],
            serde_json::json!([]),
            "{verified}"
        );
    }
    let again = hatshop(dir)
        .args([
            "run", "--quiet", "--repeat", "3", "--events", "2000", "-o", "r",
        ])
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", common::text(&again.stderr));
    assert!(
        common::text(&again.stderr).contains("3 of the 3 repeats finished earlier, kept"),
        "{}",
        common::text(&again.stderr)
    );
    assert_eq!(json(&dir.join("r/summary.json")), summary);
    // Each repeat is a complete folder on its own fresh tables, and verifies.
    for i in 1..=3 {
        hatshop(dir)
            .arg("verify")
            .arg(dir.join(format!("r/repeat-{i}")))
            .assert()
            .success();
    }
    assert_one_line_error(dir, &["verify", "r"], "holds repeats");
    let output = hatshop(dir)
        .args(["compare", "r", "r", "-o", "c.html"])
        .output()
        .unwrap();
    let text = common::text(&output.stdout);
    assert!(text.contains("median of 3 repeats"), "{text}");
    assert!(text.contains("each repeat's mean latency"), "{text}");
    assert!(text.contains("no significant difference"), "{text}");
}

#[test]
fn a_sweeps_repeats_take_turns_a_round_of_every_step_at_a_time() {
    let tmp = TempDir::new().unwrap();
    let out = hatshop(tmp.path())
        .args([
            "sweep",
            "--db",
            "sqlite://s.db",
            "--vary",
            "concurrency=1,2",
            "--repeat",
            "2",
            "--events",
            "300",
            "-o",
            "out",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let said = common::text(&out.stdout) + &common::text(&out.stderr);
    let runs: Vec<String> = said
        .lines()
        .filter(|line| line.starts_with("concurrency="))
        .map(|line| line.split(':').next().unwrap().to_string())
        .collect();
    assert_eq!(
        runs,
        [
            "concurrency=1 #1",
            "concurrency=2 #1",
            "concurrency=1 #2",
            "concurrency=2 #2"
        ]
    );
}

#[test]
fn compare_with_an_objective_judges_each_run_and_a_repeat_folder_over_its_repeats() {
    let tmp = TempDir::new().unwrap();
    for (out, extra) in [("one", &[][..]), ("three", &["--repeat", "3"][..])] {
        let ran = hatshop(tmp.path())
            .args([
                "run",
                "--db",
                &format!("sqlite://{out}.db"),
                "--events",
                "300",
            ])
            .args(["--rate", "300", "--quiet", "-o", out])
            .args(extra)
            .output()
            .unwrap();
        assert!(ran.status.success(), "{}", common::text(&ran.stderr));
    }
    let compared = hatshop(tmp.path())
        .args([
            "compare",
            "one",
            "three",
            "--slo",
            "p99<10s",
            "--slo",
            "errors<1%",
            "-o",
            "c",
        ])
        .output()
        .unwrap();
    assert!(
        compared.status.success(),
        "{}",
        common::text(&compared.stderr)
    );
    let said = common::text(&compared.stdout);
    // Far inside a 10 s bound: one run is called, three repeats give an interval.
    assert!(said.contains("#1 one: meets (p99<10s: meets: "), "{said}");
    assert!(
        said.contains("one run: called only beyond half or twice the bound"),
        "{said}"
    );
    assert!(said.contains("#2 three: meets ("), "{said}");
    assert!(said.contains(", 3 runs)"), "{said}");
    let table =
        std::fs::read_to_string(tmp.path().join("c/figures/compare-01-verdict.csv")).unwrap();
    assert!(
        table.starts_with("run,verdict,p99<10s,errors<1%\n#1 one,meets,"),
        "{table}"
    );
    let page = std::fs::read_to_string(tmp.path().join("c/compare.html")).unwrap();
    assert!(page.contains("The verdict"), "{page}");
    assert_one_line_error(
        tmp.path(),
        &["compare", "one", "three", "--slo", "p99"],
        "has no < or >",
    );
}
