//! A series on one load, against SQLite in a temporary folder: a run goes on from the
//! tables an earlier run of the same stream left whole (`--reuse-load`), its events are
//! the ones one long run would have sent, and verify replays the stream from its start.

use std::path::Path;

use crate::common;

use common::{assert_one_line_error, hatshop, json, sha256_of};
use tempfile::TempDir;

const STREAM: [&str; 6] = ["--orders", "2000", "--warmup", "300", "--events", "3000"];

fn run(dir: &Path, db: &str, out: &str, extra: &[&str]) -> std::process::Output {
    let output = hatshop(dir)
        .args(["run", "--db", db, "-o", out, "--verify", "-c", "4"])
        .args(STREAM)
        .args(extra)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{out}: {said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

#[test]
fn a_run_goes_on_from_the_whole_stream_an_earlier_run_left_and_verifies() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let db = format!("sqlite://{}", dir.join("one.db").display());
    run(dir, &db, "first", &[]);
    let first = json(&dir.join("first/run.json"));
    let output = run(dir, &db, "second", &["--reuse-load"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("load: none: the database held the first 5,300 events"),
        "{stdout}"
    );
    assert!(
        stdout.contains("0 missing, 0 extra, 0 differing"),
        "{stdout}"
    );
    let second = json(&dir.join("second/run.json"));
    assert_eq!(second["events"]["workload"]["held_events"], 5300);
    assert_eq!(second["went_on_from"]["run"], first["run_id"]);
    // Reads of orders the first run wrote were judged, and none was wrong.
    let summary = json(&dir.join("second/summary.json"));
    assert_eq!(summary["errors"], 0, "{summary}");

    // The stream's contract holds: the run's events are what `generate` writes for a
    // spec whose database holds the first 5,300.
    std::fs::write(
        dir.join("held.toml"),
        "name = \"held\"\nseed = 42\ninitial_orders = 2000\nheld_events = 5300\nwarmup = 300\n\
         events = 3000\n[mix]\ncreate_order = 1\nread_order = 1\nupdate_order = 1\n\
         update_items = 1\nupdate_status = 1\ndelete_order = 1\n",
    )
    .unwrap();
    hatshop(dir)
        .args(["generate", "-w", "held.toml", "-o", "held.jsonl"])
        .assert()
        .success();
    assert_eq!(second["plan_sha256"], sha256_of(&dir.join("held.jsonl")));

    // Compared, the two are said to be one stream's stretches on one load.
    let compared = hatshop(dir)
        .args(["compare", "first", "second"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&compared.stdout);
    assert!(
        said.contains("note: these runs replayed one seeded stream, each going on from where"),
        "{said}"
    );
    // The first run's state is no longer there alone: its verify says so.
    assert_one_line_error(
        dir,
        &["verify", "first"],
        "which came after run first in these tables",
    );
    hatshop(dir).args(["verify", "second"]).assert().success();
}

#[test]
fn a_database_that_holds_no_whole_stream_of_this_shape_is_refused_or_loaded() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let db = format!("sqlite://{}", dir.join("one.db").display());
    assert_one_line_error(
        dir,
        &["run", "--db", &db, "--events", "10", "--reuse-load"],
        "it holds no tables of hatshop's",
    );
    run(dir, &db, "first", &[]);
    assert_one_line_error(
        dir,
        &[
            "run",
            "--db",
            &db,
            "--orders",
            "2000",
            "--seed",
            "7",
            "--reuse-load",
        ],
        "of another seed, load, mix, size or store setting",
    );
    // A run stopped by its --duration that was not asked to go on leaves no whole
    // stream; one asked to (as a series' runs are) drains what it handed out, unmeasured,
    // and the next goes on from it.
    let timed = [
        "--orders",
        "2000",
        "--warmup",
        "300",
        "--duration",
        "1s",
        "--rate",
        "500",
    ];
    hatshop(dir)
        .args(["run", "--db", &db, "-o", "timed", "--recreate"])
        .args(timed)
        .assert()
        .success();
    assert_one_line_error(
        dir,
        &["run", "--db", &db, "-o", "refused", "--reuse-load"],
        "hatshop has no note of a whole stream in it",
    );
    // `if-held` loads where it cannot go on, as a series' runs do.
    let output = run(dir, &db, "loaded", &["--reuse-load=if-held"]);
    assert!(!String::from_utf8_lossy(&output.stdout).contains("load: none"));
    assert!(
        json(&dir.join("loaded/run.json"))
            .get("went_on_from")
            .is_none()
    );
    hatshop(dir)
        .args(["run", "--db", &db, "-o", "drained", "--reuse-load=if-held"])
        .args(timed)
        .assert()
        .success();
    let drained = json(&dir.join("drained/run.json"));
    assert!(
        drained["drained_after_deadline"].as_u64().unwrap() > 0,
        "{drained}"
    );
    run(dir, &db, "after-drain", &["--reuse-load"]);
    let after = json(&dir.join("after-drain/run.json"));
    assert_eq!(after["went_on_from"]["run"], drained["run_id"], "{after}");
}

#[test]
fn a_sweep_loads_once_and_its_later_steps_go_on() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let db = format!("sqlite://{}", dir.join("one.db").display());
    let output = hatshop(dir)
        .args([
            "sweep",
            "--db",
            &db,
            "-o",
            "sweep",
            "--vary",
            "concurrency=1,2,4",
        ])
        .args(STREAM)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert_eq!(stdout.matches("verify exact").count(), 3, "{stdout}");
    assert_eq!(stdout.matches(", on the tables ").count(), 2, "{stdout}");
    let held: Vec<u64> = ["concurrency=1-r1", "concurrency=2-r1", "concurrency=4-r1"]
        .iter()
        .map(|step| {
            json(&dir.join("sweep").join(step).join("run.json"))["events"]["workload"]
                ["held_events"]
                .as_u64()
                .unwrap_or(0)
        })
        .collect();
    assert_eq!(held, [0, 5300, 8600]);
    // `--reuse-load` given to a series is each run's own: every repeat goes on.
    let output = hatshop(dir)
        .args([
            "run",
            "--db",
            &db,
            "-o",
            "repeats",
            "--repeat",
            "2",
            "--reuse-load",
        ])
        .args(STREAM)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.contains("repeat 1/2: ") && stdout.contains("concurrency=4-r1 left"),
        "{stdout}"
    );
    assert!(
        stdout.contains("repeats/repeat-1 left, verify exact"),
        "{stdout}"
    );
}

#[test]
fn a_search_loads_at_its_first_step_and_its_later_steps_go_on() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let db = format!("sqlite://{}", dir.join("one.db").display());
    hatshop(dir)
        .args(["run", "--find-max", "--p99-under", "1ns", "--rate", "40"])
        .args([
            "--duration",
            "0.2",
            "--orders",
            "2000",
            "--db",
            &db,
            "-o",
            "search",
        ])
        .assert()
        .success();
    let went_on = |rate: &str| {
        let run = json(
            &dir.join("search")
                .join(format!("rate={rate}"))
                .join("run.json"),
        );
        assert_eq!(run["status"], "finished", "{run}");
        run["went_on_from"]["run"].as_str().map(str::to_string)
    };
    // 40 ops/s missed the bound, then 20, 10, … 1: each step 0.2 s of its rate's events.
    assert_eq!(went_on("40"), None);
    assert_eq!(went_on("20").as_deref(), Some("rate=40"));
    assert_eq!(went_on("1").as_deref(), Some("rate=2"));
}

#[test]
fn a_run_that_stops_at_its_floor_leaves_a_whole_stream() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let db = format!("sqlite://{}", dir.join("one.db").display());
    let floor = [
        "--orders",
        "200",
        "--events",
        "100",
        "--min-duration",
        "0.3s",
    ];
    hatshop(dir)
        .args(["run", "--db", &db, "-o", "floored", "--quiet", "-c", "4"])
        .args(floor)
        .assert()
        .success();
    let floored = json(&dir.join("floored/run.json"));
    assert_eq!(floored["stream_complete"], false, "{floored}");
    let handed_out = floored["planned_events"].as_u64().unwrap();
    hatshop(dir)
        .args([
            "run",
            "--db",
            &db,
            "-o",
            "after",
            "--verify",
            "--reuse-load",
        ])
        .args(["--orders", "200", "--events", "300"])
        .assert()
        .success()
        .stdout(predicates::str::contains("0 missing, 0 extra, 0 differing"));
    let after = json(&dir.join("after/run.json"));
    assert_eq!(after["events"]["workload"]["held_events"], handed_out);
}

#[test]
fn a_run_on_tables_verified_exact_reads_back_only_its_own_writes() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    let file = dir.join("one.db");
    let db = format!("sqlite://{}", file.display());
    let small = |out: &str, extra: &[&str]| {
        let output = hatshop(dir)
            .args(["run", "--db", &db, "-o", out, "--verify", "-c", "2"])
            .args(["--orders", "4000", "--warmup", "0", "--events", "300"])
            .args(extra)
            .output()
            .unwrap();
        assert!(output.status.success(), "{out}: {output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    small("first", &[]);
    let said = small("second", &["--reuse-load"]);
    assert!(
        said.contains("read back:  what this run's own events wrote; the rest as run first"),
        "{said}"
    );
    let verdict = json(&dir.join("second/verify.json"));
    assert_eq!(verdict["rests_on"]["run"], "first");
    let read = verdict["orders_expected"].as_u64().unwrap();
    assert!(read > 0 && read < 1000, "{verdict}");

    // An order the second run wrote, changed behind its back, is found; one it never
    // wrote is the earlier verdict's, and only a full read finds it.
    let db_file = rusqlite::Connection::open(&file).unwrap();
    let written = |second: bool| -> i64 {
        let order = if second { "DESC" } else { "ASC" };
        db_file
            .query_row(
                &format!("SELECT order_id FROM orders ORDER BY order_id {order} LIMIT 1"),
                [],
                |row| row.get(0),
            )
            .unwrap()
    };
    // The stream's newest order is one the second run created; its oldest, one the load did.
    let (theirs, loaded) = (written(true), written(false));
    for id in [theirs, loaded] {
        db_file
            .execute(
                "UPDATE orders SET customer = 'someone else' WHERE order_id = ?1",
                [id],
            )
            .unwrap();
    }
    let scoped = hatshop(dir).args(["verify", "second"]).output().unwrap();
    let scoped_said = String::from_utf8_lossy(&scoped.stdout);
    assert!(!scoped.status.success());
    assert!(
        scoped_said.contains("0 missing, 0 extra, 1 differing"),
        "{scoped_said}"
    );
    let full = hatshop(dir)
        .args(["verify", "second", "--full"])
        .output()
        .unwrap();
    let full_said = String::from_utf8_lossy(&full.stdout);
    assert!(
        full_said.contains("0 missing, 0 extra, 2 differing"),
        "{full_said}"
    );
    assert!(!full_said.contains("read back:"), "{full_said}");

    // Tables no verify found exact are read back whole.
    let unverified = TempDir::new().unwrap();
    let other = format!("sqlite://{}", unverified.path().join("two.db").display());
    for (out, extra) in [("a", &[][..]), ("b", &["--reuse-load"][..])] {
        hatshop(dir)
            .args(["run", "--db", &other, "-o", out, "--quiet", "-c", "2"])
            .args(["--orders", "4000", "--warmup", "0", "--events", "300"])
            .args(extra)
            .assert()
            .success();
    }
    hatshop(dir).args(["verify", "b"]).assert().success();
    assert!(json(&dir.join("b/verify.json")).get("rests_on").is_none());
}
