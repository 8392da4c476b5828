//! A verdict you can bet a decision on: `verify` cannot be fooled by a kill at any
//! phase, `recover` never forgets what a run recorded, a verdict never outlives its
//! database, hatshop never replaces what it did not make, and no typo shows a
//! password. Each test is a probe that once fooled hatshop (SQLite and `null://`).

use crate::common;

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{assert_one_line_error, hatshop, json, run_ok, signal, spawn, text};
use serde_json::Value;
use tempfile::TempDir;

/// Waits until run.json says the measured phase was about to begin (its load and
/// warm-up are on disk), 90 s at most.
fn wait_until_measuring(out: &Path) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if let Ok(text) = std::fs::read_to_string(out.join("run.json"))
            && let Ok(run) = serde_json::from_str::<Value>(&text)
            && !run["unmeasured"].is_null()
        {
            return run;
        }
        assert!(Instant::now() < deadline, "the run never began measuring");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn empty_tables(db: &Path) {
    let db = rusqlite::Connection::open(db).unwrap();
    db.execute_batch("DELETE FROM line_items; DELETE FROM orders; DELETE FROM kv;")
        .unwrap();
}

fn verify(dir: &Path, out: &Path) -> std::process::Output {
    hatshop(dir).arg("verify").arg(out).output().unwrap()
}

/// `verify` of `out`, which must find differences (exit 1) and print `line`: its
/// verify.json.
fn verify_differs(dir: &Path, out: &Path, line: &str) -> Value {
    let differs = verify(dir, out);
    let said = text(&differs.stdout);
    assert_eq!(differs.status.code(), Some(1), "{said}");
    assert!(said.contains(line), "{said}");
    json(&out.join("verify.json"))
}

/// Killed while measuring but before its op log held a row (it is written in blocks):
/// the load it had finished is on record, so an intact database is exact and an
/// emptied one is missing everything the load made.
#[test]
fn a_run_killed_before_its_first_op_log_block_is_judged_from_its_load() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("kr1");
    let out_arg = out.to_str().unwrap();
    let child = spawn(
        tmp.path(),
        &[
            "run", "--quiet", "--rate", "100", "--orders", "5000", "--events", "10000", "-o",
            out_arg,
        ],
    );
    let run = wait_until_measuring(&out);
    assert_eq!(run["unmeasured"]["through_seq"], 4999);
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, libc::SIGKILL);
    let _ = child.wait_with_output();
    assert_eq!(
        common::op_rows(&out).len(),
        0,
        "the probe needs a log with no rows yet"
    );
    hatshop(tmp.path())
        .args(["recover", out_arg])
        .assert()
        .success();
    let intact = verify(tmp.path(), &out);
    assert!(intact.status.success(), "{}", text(&intact.stdout));
    assert_eq!(json(&out.join("verify.json"))["extra_orders"], 0);
    empty_tables(&out.join("hatshop.db"));
    let emptied = verify(tmp.path(), &out);
    assert_eq!(emptied.status.code(), Some(1), "{}", text(&emptied.stdout));
    let report = json(&out.join("verify.json"));
    assert!(
        report["missing_orders"].as_u64().unwrap() > 4000,
        "{report}"
    );
}

/// Killed in its load: how far the load got is not known, so nothing can be judged,
/// and verify says so rather than call any database exact.
#[test]
fn a_run_killed_in_its_load_is_never_verified() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("in-load");
    let out_arg = out.to_str().unwrap();
    let child = spawn(
        tmp.path(),
        &["run", "--quiet", "--orders", "50000000", "-o", out_arg],
    );
    common::wait_for_file(&out.join("run.json"));
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, libc::SIGKILL);
    let _ = child.wait_with_output();
    hatshop(tmp.path())
        .args(["recover", out_arg])
        .assert()
        .success();
    assert_one_line_error(
        tmp.path(),
        &["verify", out_arg],
        "was killed before its measured phase began",
    );
    empty_tables(&out.join("hatshop.db"));
    assert_one_line_error(
        tmp.path(),
        &["verify", out_arg],
        "was killed before its measured phase began",
    );
}

/// A load whose writes mostly fail stops the run before anything is measured.
#[test]
fn a_load_that_fails_stops_the_run_before_measuring() {
    let tmp = TempDir::new().unwrap();
    let db = format!("sqlite://{}", tmp.path().join("shared.db").display());
    hatshop(tmp.path())
        .args(["prepare", "--db", &db])
        .assert()
        .success();
    // Two shards of one run: run twice, the second load meets the first's orders.
    let shard = [
        "run", "--quiet", "--db", &db, "--events", "500", "--shard", "0/2",
    ];
    let again = common::shard_run_twice(tmp.path(), &shard);
    assert_eq!(again.status.code(), Some(1));
    let stderr = text(&again.stderr);
    assert!(
        stderr.contains("load and warm-up operations failed")
            && stderr.contains("nothing was measured"),
        "{stderr}"
    );
    // The refusal names the batch the server refused, and why.
    assert!(
        stderr.contains("the load's batch of") && stderr.contains("UNIQUE"),
        "{stderr}"
    );
    let run = json(&tmp.path().join("again/run.json"));
    assert_eq!(run["status"], "failed");
    assert_eq!(run["measured_ops"], 0);
    // What the load came to stays on record after the run ends.
    assert!(run["unmeasured"]["failed"].as_u64().unwrap() > 0, "{run}");
}

/// Recover rebuilds beside what the run recorded; one that fails part-way leaves the
/// folder as it found it and can be run again.
#[test]
fn a_recover_that_fails_changes_nothing_and_can_be_run_again() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("killed");
    let out_arg = out.to_str().unwrap();
    let child = spawn(
        tmp.path(),
        &["run", "--quiet", "--events", "50000000", "-o", out_arg],
    );
    common::wait_for_bytes(&common::op_journal(&out), 100_000);
    signal(&child, libc::SIGKILL);
    let _ = child.wait_with_output();
    let before = std::fs::read(out.join("run.json")).unwrap();
    // A file where the page's figures folder must go: the report cannot be written.
    std::fs::write(out.join("figures"), "in the way").unwrap();
    let failed = hatshop(tmp.path())
        .args(["recover", out_arg])
        .output()
        .unwrap();
    assert!(!failed.status.success());
    let stderr = text(&failed.stderr);
    assert!(
        stderr.contains("recover changed nothing") && stderr.contains("again"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(out.join("run.json")).unwrap(), before);
    for made in [
        "summary.json",
        "intervals.csv",
        "latency.hlog",
        "report.html",
    ] {
        assert!(!out.join(made).exists(), "{made} was left behind");
    }
    std::fs::remove_file(out.join("figures")).unwrap();
    hatshop(tmp.path())
        .args(["recover", out_arg])
        .assert()
        .success();
    assert!(verify(tmp.path(), &out).status.success());
}

/// A verify that cannot finish leaves a verdict that says so, and another database's
/// verdict never goes into the run's folder; a database set up again by a later run
/// is named as that run's.
#[test]
fn a_verdict_never_outlives_its_database() {
    let tmp = TempDir::new().unwrap();
    let a = run_ok(&tmp, "a", &["--events", "2000"]);
    let b = run_ok(&tmp, "b", &["--events", "3000"]);
    assert!(verify(tmp.path(), &a).status.success());
    let exact = std::fs::read(a.join("verify.json")).unwrap();
    assert!(text(&exact).contains("\"database\": \"sqlite://"));
    // Another database: the verdict is printed, the folder keeps its own.
    let other = format!("sqlite://{}", b.join("hatshop.db").display());
    let elsewhere = hatshop(tmp.path())
        .args(["verify", a.to_str().unwrap(), "--db", &other])
        .output()
        .unwrap();
    assert!(!elsewhere.status.success());
    assert_eq!(std::fs::read(a.join("verify.json")).unwrap(), exact);
    // The database gone: the old verdict is replaced by one that says why.
    std::fs::rename(a.join("hatshop.db"), tmp.path().join("moved.db")).unwrap();
    assert!(!verify(tmp.path(), &a).status.success());
    let failed = json(&a.join("verify.json"));
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .contains("no SQLite database")
    );
    hatshop(tmp.path())
        .args(["report", a.to_str().unwrap()])
        .assert()
        .success();
    let page = std::fs::read_to_string(a.join("report.html")).unwrap();
    assert!(page.contains("not verified") && !page.contains(">exact<"));
    // Two runs on one file: the second set the tables up again.
    let shared = format!("sqlite://{}", tmp.path().join("shared.db").display());
    let first = run_ok(&tmp, "first", &["--events", "500", "--db", &shared]);
    run_ok(&tmp, "second", &["--events", "500", "--db", &shared]);
    assert_one_line_error(
        tmp.path(),
        &["verify", first.to_str().unwrap()],
        "holds the tables of another run: its marker says \"hatshop",
    );
}

/// What looked like dead ends: a run without an op log is never sent to recover; a
/// folder name with `?` or `%` is a path; an in-memory SQLite works at any concurrency.
#[test]
fn no_dead_ends() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("no-log");
    let out_arg = out.to_str().unwrap();
    let child = spawn(
        tmp.path(),
        &[
            "run",
            "--quiet",
            "--no-op-log",
            "--events",
            "50000000",
            "-o",
            out_arg,
        ],
    );
    wait_until_measuring(&out);
    std::thread::sleep(Duration::from_millis(200));
    signal(&child, libc::SIGKILL);
    let _ = child.wait_with_output();
    for command in ["verify", "report", "recover"] {
        let said = assert_one_line_error(tmp.path(), &[command, out_arg], "run it again");
        assert!(!said.contains("`hatshop recover"), "{said}");
    }
    for name in ["a?b", "%41"] {
        let out = run_ok(&tmp, name, &["--events", "500"]);
        assert!(out.join("hatshop.db").exists(), "{name}");
        assert!(verify(tmp.path(), &out).status.success(), "{name}");
    }
    assert!(!tmp.path().join("A").exists());
    let memory = run_ok(
        &tmp,
        "memory",
        &[
            "--db",
            "sqlite://:memory:",
            "-c",
            "4",
            "--events",
            "2000",
            "--verify",
        ],
    );
    assert_eq!(json(&memory.join("summary.json"))["errors"], 0);
    assert!(json(&memory.join("verify.json"))["error"].is_null());
    assert_one_line_error(
        tmp.path(),
        &["verify", memory.to_str().unwrap()],
        "kept its database in memory",
    );
}

/// Output paths outside the result folder are checked before the run and written
/// through: a device stays a device, a link a link, a pipe a pipe.
#[test]
fn hatshop_never_replaces_what_it_did_not_make() {
    let tmp = TempDir::new().unwrap();
    let said = assert_one_line_error(
        tmp.path(),
        &[
            "run",
            "--quiet",
            "--events",
            "300",
            "-o",
            "never",
            "--export-json",
            "/nonexistent/x.json",
        ],
        "--export-json /nonexistent/x.json: there is no folder /nonexistent",
    );
    assert!(!tmp.path().join("never").exists(), "{said}");
    std::fs::write(tmp.path().join("target.json"), "mine").unwrap();
    std::os::unix::fs::symlink("target.json", tmp.path().join("link.json")).unwrap();
    run_ok(
        &tmp,
        "linked",
        &["--events", "300", "--export-json", "link.json"],
    );
    let link = std::fs::symlink_metadata(tmp.path().join("link.json")).unwrap();
    assert!(link.file_type().is_symlink());
    assert!(
        std::fs::read_to_string(tmp.path().join("target.json"))
            .unwrap()
            .contains("\"run_id\": \"linked\"")
    );
    run_ok(
        &tmp,
        "device",
        &["--events", "300", "--export-json", "/dev/null"],
    );
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    let fifo = tmp.path().join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    run_ok(&tmp, "piped", &["--events", "300", "--export-json", "pipe"]);
    assert!(reader.join().unwrap().contains("\"run_id\": \"piped\""));
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    hatshop(tmp.path())
        .args(["compare", "linked", "device", "-o", "link.json"])
        .assert()
        .success();
    assert!(
        std::fs::symlink_metadata(tmp.path().join("link.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(tmp.path().join("target.json"))
            .unwrap()
            .contains("hatshop comparison")
    );
}

/// An events file edited by hand: the database holds what its events write, though
/// not the state hash they carry; that is said, not counted as the database's fault.
/// A difference in the database is shown with its order, field and both values.
#[test]
fn every_difference_verify_counts_it_shows() {
    let tmp = TempDir::new().unwrap();
    let events = tmp.path().join("events.jsonl");
    hatshop(tmp.path())
        .args(["generate", "--events", "5000"])
        .arg(&events)
        .assert()
        .success();
    let mut lines: Vec<Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let order_of = |e: &Value| e["op"]["order_id"].as_u64();
    // An order created, then updated, and never deleted.
    let deleted: Vec<u64> = lines
        .iter()
        .filter(|e| e["op"]["type"] == "delete_order")
        .filter_map(order_of)
        .collect();
    let updated: Vec<u64> = lines
        .iter()
        .filter(|e| e["op"]["type"] == "update_order")
        .filter_map(order_of)
        .collect();
    let create = lines
        .iter_mut()
        .find(|e| {
            let id = e["op"]["order"]["order_id"].as_u64();
            id.is_some_and(|id| updated.contains(&id) && !deleted.contains(&id))
        })
        .unwrap();
    let id = create["op"]["order"]["order_id"].as_u64().unwrap();
    create["op"]["order"]["customer"] = "Edited By Hand".into();
    let edited: String = lines.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(&events, edited).unwrap();
    let out = run_ok(&tmp, "edited", &["--events-file", events.to_str().unwrap()]);
    let verified = verify(tmp.path(), &out);
    let said = text(&verified.stdout);
    assert!(verified.status.success(), "{said}");
    assert!(said.contains("not the state hash"), "{said}");
    let db = rusqlite::Connection::open(out.join("hatshop.db")).unwrap();
    db.execute(
        "UPDATE orders SET customer = 'Somebody Else' WHERE order_id = ?1",
        [id as i64],
    )
    .unwrap();
    drop(db);
    let report = verify_differs(
        tmp.path(),
        &out,
        &format!("order {id}: customer \"Somebody Else\" (expected \"Edited By Hand\")"),
    );
    assert_eq!(report["differing_orders"], 1);
    assert_eq!(report["first_differences"].as_array().unwrap().len(), 1);
}

/// An order's payload is the order's own text at the length its stream drew: a run with
/// `--order-bytes` verifies exact, and a payload changed by one letter, or cut short,
/// is a difference that names both.
#[test]
fn a_payload_changed_or_cut_is_a_difference() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(
        &tmp,
        "paid",
        &[
            "--events",
            "500",
            "--orders",
            "200",
            "--order-bytes",
            "100..300",
        ],
    );
    assert!(verify(tmp.path(), &out).status.success());
    let db = rusqlite::Connection::open(out.join("hatshop.db")).unwrap();
    let (id, bytes): (i64, i64) = db
        .query_row(
            "SELECT order_id, length(payload) FROM orders ORDER BY order_id LIMIT 1",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert!((100..=300).contains(&bytes), "{bytes}");
    db.execute(
        "UPDATE orders SET payload = '!' || substr(payload, 2) WHERE order_id = ?1",
        [id],
    )
    .unwrap();
    db.execute(
        "UPDATE orders SET payload = substr(payload, 2) WHERE order_id = \
         (SELECT MAX(order_id) FROM orders)",
        [],
    )
    .unwrap();
    drop(db);
    let report = verify_differs(
        tmp.path(),
        &out,
        &format!(
            "order {id}: payload \"{bytes} bytes, not the order's own text\" (expected \"{bytes} bytes\")"
        ),
    );
    assert_eq!(report["differing_orders"], 2);
}

/// A plan that would outlast any run is refused with what it would take; a long one
/// is said before it starts; a warm-up past a year is refused with the limit.
#[test]
fn plans_that_never_end_are_refused_or_said() {
    let tmp = TempDir::new().unwrap();
    assert_one_line_error(
        tmp.path(),
        &["run", "--rate", "1e-9", "--events", "100", "-o", "x"],
        "years, longer than any run may (a year): raise --rate, or bound the run with --duration",
    );
    assert_one_line_error(
        tmp.path(),
        &["run", "--warmup", "99999999h", "-o", "x"],
        "--warmup must be at most a year",
    );
    assert!(!tmp.path().join("x").exists());
    let long = spawn(
        tmp.path(),
        &[
            "run", "--quiet", "--rate", "0.0001", "--events", "10", "-o", "slow",
        ],
    );
    common::wait_for_file(&tmp.path().join("slow/run.json"));
    signal(&long, libc::SIGINT);
    let stderr = text(&long.wait_with_output().unwrap().stderr);
    assert!(
        stderr.contains("the plan takes about 1day") && stderr.contains("--duration bounds it"),
        "{stderr}"
    );
}

/// A URL typed where a path, a name or a folder belongs never shows its password, and
/// a Redis URL's lone user-info word (a password to some of its clients) is hidden.
#[test]
fn no_password_from_a_typo() {
    let tmp = TempDir::new().unwrap();
    let url = "mysql://root:SECRETX@127.0.0.1:3306/hatshop";
    for args in [
        vec!["verify", url],
        vec!["report", url],
        vec!["recover", url],
        vec!["run", url],
        vec!["run", "-o", url, "--events", "10"],
        vec!["run", "-w", url],
        vec!["compare", url, url],
        vec![
            "run",
            "--db",
            "redis://SECRETX@127.0.0.1:1/0",
            "--events",
            "10",
        ],
        vec!["verify", "redis://SECRETX@127.0.0.1:1/0"],
    ] {
        let output = hatshop(tmp.path()).args(&args).output().unwrap();
        let all = text(&output.stdout) + &text(&output.stderr);
        assert!(!output.status.success(), "{args:?}");
        assert!(!all.contains("SECRETX"), "{args:?}: {all}");
    }
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "a URL became a folder"
    );
}

/// Every certificate, key, password and option file is read as a regular file of
/// bounded size: a device or a FIFO in its place is one line at once (no hang, no
/// memory filled), whichever store's setting or credential file names it.
#[test]
fn certificate_key_and_credential_files_are_read_as_regular_files() {
    let tmp = TempDir::new().unwrap();
    let fifo = tmp.path().join("fifo");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let fifo = fifo.to_str().unwrap();
    // Nothing listens on port 1: the files are read before anything connects.
    for (file, kind) in [("/dev/zero", "is a device"), (fifo, "is a FIFO")] {
        for url in [
            format!("postgres://u@127.0.0.1:1/x?sslmode=verify-full&sslrootcert={file}"),
            format!("postgres://u@127.0.0.1:1/x?sslmode=require&sslcert={file}&sslkey={file}"),
            format!("mysql://u@127.0.0.1:1/x?ssl-mode=VERIFY_CA&ssl-ca={file}"),
            format!("rediss://127.0.0.1:1/0?cacert={file}"),
            format!("cassandra://127.0.0.1:1/x?ssl=true&ssl_ca={file}"),
        ] {
            let started = std::time::Instant::now();
            assert_one_line_error(tmp.path(), &["run", "--events", "10", "--db", &url], kind);
            assert!(started.elapsed() < Duration::from_secs(5), "{url}");
        }
    }
    // Credential files the stores' own tools read: said, left out, never waited on.
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join(".cassandra")).unwrap();
    std::os::unix::fs::symlink(fifo, home.join(".my.cnf")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", home.join(".cassandra/cqlshrc")).unwrap();
    for (env, url) in [
        ("PGPASSFILE", "postgres://u@127.0.0.1:1/x"),
        ("HOME", "mysql://u@127.0.0.1:1/x"),
        ("HOME", "cassandra://127.0.0.1:1/x"),
    ] {
        let value = if env == "HOME" {
            home.to_str().unwrap()
        } else {
            fifo
        };
        let started = std::time::Instant::now();
        let output = hatshop(tmp.path())
            .env(env, value)
            .args([
                "run",
                "--events",
                "10",
                "--connect-timeout",
                "1s",
                "--db",
                url,
            ])
            .output()
            .unwrap();
        assert!(!output.status.success());
        assert!(started.elapsed() < Duration::from_secs(10), "{url}");
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains("not a regular file") || stderr.contains("not read"),
            "{url}: {stderr}"
        );
    }
}

/// verify first proves that run.json still describes the stream the run hashed: a
/// changed seed or a zeroed plan_sha256 is refused by name, never blamed on an exact
/// database.
#[test]
fn verify_refuses_a_run_json_whose_stream_is_not_the_one_hashed() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(&tmp, "exact", &["--events", "2000"]);
    hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .assert()
        .success();
    let record = std::fs::read_to_string(out.join("run.json")).unwrap();
    let run: Value = serde_json::from_str(&record).unwrap();
    let sha = run["plan_sha256"].as_str().unwrap().to_string();
    for (name, changed) in [
        ("seed", record.replace("\"seed\": 42", "\"seed\": 43")),
        ("zeroed", record.replace(&sha, &"0".repeat(64))),
    ] {
        assert_ne!(changed, record, "{name}");
        std::fs::write(out.join("run.json"), &changed).unwrap();
        assert_one_line_error(
            tmp.path(),
            &["verify", out.to_str().unwrap()],
            "run.json does not describe the stream this run replayed",
        );
    }
}
