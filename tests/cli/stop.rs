//! Never stuck, nothing lost, nothing leaked, nobody's data dropped: the probes of an
//! adversarial user, against the binary (SQLite, and silent listeners that stand in
//! for servers that accept a connection and never answer: our own test code).

use crate::common;

use std::net::TcpListener;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{
    assert_one_line_error, csv_maps, hatshop, json, logged_calls, op_journal, op_rows, run_ok,
    signal, spawn, text, wait_for_bytes,
};
use tempfile::TempDir;

/// Sends `sig` once the run measures, and returns (exit code, seconds from signal to exit).
fn stop_with(dir: &Path, args: &[&str], out: &Path, sig: i32) -> (Option<i32>, f64, String) {
    let child = spawn(dir, args);
    wait_for_bytes(&op_journal(out), 100_000);
    let sent = Instant::now();
    signal(&child, sig);
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        sent.elapsed().as_secs_f64(),
        text(&output.stderr),
    )
}

#[test]
fn sigint_and_sigterm_end_a_four_lane_sqlite_run_within_a_second() {
    let tmp = TempDir::new().unwrap();
    for (name, sig) in [("int", libc::SIGINT), ("term", libc::SIGTERM)] {
        let out = tmp.path().join(name);
        let out_arg = out.to_str().unwrap();
        let (code, secs, stderr) = stop_with(
            tmp.path(),
            &[
                "run", "--quiet", "-c", "4", "--events", "50000000", "--out", out_arg,
            ],
            &out,
            sig,
        );
        assert_eq!(code, Some(130), "{stderr}");
        assert!(secs < 1.0, "{name}: exit {secs:.2} s after the signal");
        let run = json(&out.join("run.json"));
        assert_eq!(run["status"], "interrupted");
        let measured = run["measured_ops"].as_u64().unwrap();
        assert_eq!(op_rows(&out).len() as u64, logged_calls(&run));
        assert_eq!(json(&out.join("summary.json"))["ops"], measured);
        // Exactly what the lanes applied reached the store.
        hatshop(tmp.path())
            .arg("verify")
            .arg(&out)
            .assert()
            .success();
    }
}

/// Ctrl-C in the initial load ends it within a second; the folder says how far the
/// lanes got, and verify finds the database holding that, batches in flight included.
#[test]
fn a_run_interrupted_in_its_load_ends_at_once_and_verifies() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("in-load");
    let child = spawn(
        tmp.path(),
        &[
            "run",
            "--quiet",
            "-c",
            "2",
            "--orders",
            "50000000",
            "--load-batch",
            "500",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    common::wait_for_file(&out.join("hatshop.db-wal"));
    std::thread::sleep(Duration::from_millis(500));
    let sent = Instant::now();
    signal(&child, libc::SIGINT);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    assert!(sent.elapsed() < Duration::from_secs(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("interrupted in the load or warm-up, before measuring"),
        "{stderr}"
    );
    let run = json(&out.join("run.json"));
    assert_eq!(run["status"], "interrupted");
    assert!(
        run["lane_last_seq"]
            .as_array()
            .unwrap()
            .iter()
            .any(|seq| seq.as_u64() > Some(0)),
        "{run}"
    );
    hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .assert()
        .success();
}

#[test]
fn a_deadline_ends_the_run_within_a_second_whatever_the_event_count() {
    let tmp = TempDir::new().unwrap();
    let started = Instant::now();
    let out = run_ok(
        &tmp,
        "deadline",
        &["--events", "1000000000000", "--duration", "1.5", "--verify"],
    );
    let took = started.elapsed().as_secs_f64();
    assert!(took < 2.5 + 1.0, "took {took:.2} s");
    let run = json(&out.join("run.json"));
    assert_eq!(run["status"], "stopped_at_deadline");
    assert_eq!(run["stream_complete"], false);
    let planned = run["planned_events"].as_u64().unwrap();
    assert!(planned > 500 && planned < 1_000_000_000_000, "{planned}");
    assert_eq!(op_rows(&out).len() as u64, logged_calls(&run));
    // A warm-up longer than --duration is stopped too.
    let started = Instant::now();
    let out = run_ok(
        &tmp,
        "warm",
        &[
            "--warmup",
            "1000000000000",
            "--events",
            "10",
            "--duration",
            "1",
        ],
    );
    assert!(started.elapsed().as_secs_f64() < 3.0);
    assert_eq!(json(&out.join("run.json"))["measured_ops"], 0);
}

#[test]
fn a_second_signal_ends_at_once_and_the_folder_says_so() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("twice");
    let child = spawn(
        tmp.path(),
        &[
            "run",
            "--quiet",
            "-c",
            "2",
            "--events",
            "50000000",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    wait_for_bytes(&op_journal(&out), 100_000);
    // Two different signals while it is stopped arrive together when it resumes: the
    // second one lands while the first is still being acted on.
    signal(&child, libc::SIGSTOP);
    signal(&child, libc::SIGINT);
    signal(&child, libc::SIGTERM);
    let sent = Instant::now();
    signal(&child, libc::SIGCONT);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    assert!(sent.elapsed() < Duration::from_secs(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("stopped at once by a second signal"),
        "{stderr}"
    );
    assert_eq!(json(&out.join("run.json"))["status"], "aborted");
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("not finished") && page.contains("hatshop recover"));
    assert_one_line_error(
        tmp.path(),
        &["report", out.to_str().unwrap()],
        "`hatshop recover",
    );
    hatshop(tmp.path())
        .arg("recover")
        .arg(&out)
        .assert()
        .success();
    assert_eq!(json(&out.join("run.json"))["status"], "recovered");
    hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .assert()
        .success();
}

#[test]
fn a_killed_run_is_recognised_and_recovered_from_its_op_log() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("killed");
    let out_arg = out.to_str().unwrap();
    let mut child = spawn(
        tmp.path(),
        &[
            "run", "--quiet", "-c", "4", "--events", "50000000", "--out", out_arg,
        ],
    );
    wait_for_bytes(&op_journal(&out), 150_000);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    assert_eq!(json(&out.join("run.json"))["status"], "running");
    for command in ["verify", "report"] {
        assert_one_line_error(
            tmp.path(),
            &[command, out_arg],
            "did not finish (its process is gone: killed, or the machine stopped): `hatshop recover",
        );
    }
    let compare = hatshop(tmp.path())
        .args(["compare", out_arg, out_arg])
        .output()
        .unwrap();
    assert!(text(&compare.stderr).contains("hatshop recover"));

    let recovered = hatshop(tmp.path())
        .arg("recover")
        .arg(&out)
        .output()
        .unwrap();
    assert!(recovered.status.success(), "{}", text(&recovered.stderr));
    let run = json(&out.join("run.json"));
    assert_eq!(run["status"], "recovered");
    // Recover cuts a half-written last line off the op log, so every row left is counted.
    let dropped = run["recovered"]["dropped_lines"].as_u64().unwrap();
    assert!(dropped <= 1);
    assert_eq!(
        run["recovered"]["logged_ops"].as_u64().unwrap(),
        op_rows(&out).len() as u64
    );
    // What the run recorded stays as it was: recover adds beside it, and sets nothing
    // it did not see (a kill is not a Ctrl-C).
    assert_eq!(run["measured_ops"], 0);
    assert_eq!(run["interrupted"], false);
    assert_eq!(run["recovered"]["from_status"], "running");
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["ops"], run["recovered"]["logged_ops"]);
    assert_eq!(summary["run"]["run_id"], run["run_id"]);
    assert!(out.join("report.html").exists());
    let verify = hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .output()
        .unwrap();
    assert!(verify.status.success(), "{}", text(&verify.stdout));
    hatshop(tmp.path())
        .args(["report", out_arg])
        .assert()
        .success();
    assert_one_line_error(tmp.path(), &["recover", out_arg], "nothing to recover");
}

/// A run warmed up for a time and killed while measuring: run.json already holds the
/// events its warm-up came to, so the recovered folder verifies exactly.
#[test]
fn a_killed_run_warmed_up_for_a_time_recovers_and_verifies() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("killed");
    let out_arg = out.to_str().unwrap();
    let mut child = spawn(
        tmp.path(),
        &[
            "run", "--quiet", "-c", "4", "--warmup", "300ms", "--events", "50000000", "--out",
            out_arg,
        ],
    );
    wait_for_bytes(&op_journal(&out), 150_000);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    let run = json(&out.join("run.json"));
    assert_eq!(run["status"], "running");
    let warmup = run["events"]["workload"]["warmup"].as_u64().unwrap();
    assert!(warmup > 0, "{run}");
    hatshop(tmp.path())
        .args(["recover", out_arg])
        .assert()
        .success();
    let load = run["events"]["workload"]["initial_orders"]
        .as_u64()
        .unwrap();
    // No warm-up event is logged as measured. (The first measured one itself may be
    // among the few a killed lane had not logged yet.)
    let first_measured = op_rows(&out).iter().map(|op| op.seq).min().unwrap();
    assert!(
        first_measured >= load + warmup,
        "{first_measured} < {load} + {warmup}"
    );
    let verify = hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .output()
        .unwrap();
    assert!(verify.status.success(), "{}", text(&verify.stdout));
}

/// A kill leaves writes the op log never saw; verify must still catch a database that lost
/// everything, not call it exact because nothing it expected could be checked.
#[test]
fn a_killed_run_whose_database_was_emptied_does_not_verify() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("wiped");
    let out_arg = out.to_str().unwrap();
    let mut child = spawn(
        tmp.path(),
        &[
            "run", "--quiet", "-c", "1", "--events", "50000000", "--out", out_arg,
        ],
    );
    wait_for_bytes(&op_journal(&out), 150_000);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    hatshop(tmp.path())
        .args(["recover", out_arg])
        .assert()
        .success();
    let db = rusqlite::Connection::open(out.join("hatshop.db")).unwrap();
    db.execute_batch("DELETE FROM line_items; DELETE FROM orders; DELETE FROM kv;")
        .unwrap();
    drop(db);
    let verify = hatshop(tmp.path())
        .args(["verify", out_arg])
        .output()
        .unwrap();
    assert_eq!(verify.status.code(), Some(1), "{}", text(&verify.stdout));
    let report = json(&out.join("verify.json"));
    assert!(report["missing_orders"].as_u64().unwrap() > 0, "{report}");
}

/// Runs started together into one folder: exactly one writes it; each other is refused
/// in one line, and the folder holds one run's operations, whole.
/// The lock is made and opened as a regular file of the folder's own: a link in its
/// place is never written through (its target keeps its bytes), and a FIFO never
/// blocks the run; either is refused in one line, by `run` and `--repeat` alike.
#[test]
fn a_lock_that_is_a_link_or_a_fifo_is_refused_and_nothing_is_written_through() {
    let tmp = TempDir::new().unwrap();
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    for (name, expected) in [
        ("link", "is a link"),
        ("dangling", "not empty"),
        ("fifo", "not a regular file"),
    ] {
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        let lock = dir.join(".hatshop.lock");
        match name {
            "link" => std::os::unix::fs::symlink("../victim", &lock).unwrap(),
            "dangling" => std::os::unix::fs::symlink("../nowhere", &lock).unwrap(),
            _ => {
                let path = std::ffi::CString::new(lock.to_str().unwrap()).unwrap();
                assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
            }
        }
        for extra in [&[][..], &["--repeat", "2"][..]] {
            let mut args = vec![
                "run",
                "--quiet",
                "--events",
                "100",
                "-o",
                dir.to_str().unwrap(),
            ];
            args.extend(extra);
            assert_one_line_error(tmp.path(), &args, expected);
        }
        assert!(
            !tmp.path().join("nowhere").exists(),
            "{name}: written through"
        );
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
}

#[test]
fn a_result_folder_has_one_writer() {
    let tmp = TempDir::new().unwrap();
    for trial in 0..6 {
        let out = tmp.path().join(format!("same-{trial}"));
        let out_arg = out.to_str().unwrap();
        let children: Vec<_> = (0..8)
            .map(|seed| {
                let seed = seed.to_string();
                spawn(
                    tmp.path(),
                    &[
                        "run", "--quiet", "--db", "null://", "--events", "20000", "--seed", &seed,
                        "-o", out_arg,
                    ],
                )
            })
            .collect();
        let outputs: Vec<_> = children
            .into_iter()
            .map(|child| child.wait_with_output().unwrap())
            .collect();
        let winners = outputs.iter().filter(|o| o.status.success()).count();
        assert_eq!(winners, 1, "trial {trial}");
        for refused in outputs.iter().filter(|o| !o.status.success()) {
            let stderr = text(&refused.stderr);
            assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
            // The holder is named once it has written its name; a run refused in the
            // instant between its lock and its name is told "another hatshop".
            assert!(
                stderr.contains("is being written by hatshop (pid")
                    || stderr.contains("is being written by another hatshop")
                    || stderr.contains("is not empty"),
                "{stderr}"
            );
        }
        let run = json(&out.join("run.json"));
        assert_eq!(run["status"], "finished");
        assert_eq!(logged_calls(&run), op_rows(&out).len() as u64);
    }
    // A folder of other files is refused as it is: no lock is left in it.
    let theirs = tmp.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("notes.txt"), "mine").unwrap();
    assert_one_line_error(
        tmp.path(),
        &["run", "--db", "null://", "-o", theirs.to_str().unwrap()],
        "is not empty",
    );
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 1);
}

/// Every command that writes into an existing folder takes its lock: none runs while
/// another holds it. A copy of a folder whose run still writes is no running folder:
/// no process holds the copy's lock.
#[test]
fn commands_that_write_a_folder_wait_their_turn_and_a_copy_is_not_running() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("killed");
    let out_arg = out.to_str().unwrap();
    let mut child = spawn(
        tmp.path(),
        &[
            "run", "--quiet", "-c", "2", "--events", "50000000", "--out", out_arg,
        ],
    );
    wait_for_bytes(&op_journal(&out), 100_000);
    let copy = tmp.path().join("copy");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(&out)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(copied.success());
    // The original is running; its copy was killed, as far as anyone can tell.
    assert_one_line_error(tmp.path(), &["report", out_arg], "is still running");
    assert_one_line_error(
        tmp.path(),
        &["report", copy.to_str().unwrap()],
        "did not finish (its process is gone",
    );
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();

    // Held by another command: recover, report, verify and export wait their turn.
    let lock = std::fs::File::open(out.join(".hatshop.lock")).unwrap();
    lock.lock().unwrap();
    assert_one_line_error(tmp.path(), &["recover", out_arg], "is being written by");
    lock.unlock().unwrap();
    hatshop(tmp.path())
        .args(["recover", out_arg])
        .assert()
        .success();
    lock.lock().unwrap();
    for args in [
        vec!["report", out_arg],
        vec!["verify", out_arg],
        vec!["export", out_arg, "--csv"],
    ] {
        assert_one_line_error(tmp.path(), &args, "is being written by");
    }
    lock.unlock().unwrap();
    hatshop(tmp.path())
        .args(["verify", out_arg])
        .assert()
        .success();
}

/// A repeat or a sweep point cut short by Ctrl-C is no sample of the whole run: it is kept
/// on disk and said to be cut short, never folded into medians or charts.
#[test]
fn a_run_cut_short_is_left_out_of_medians_and_sweep_charts() {
    let tmp = TempDir::new().unwrap();
    let repeats = tmp.path().join("repeats");
    let child = spawn(
        tmp.path(),
        &[
            "run",
            "--repeat",
            "3",
            "--duration",
            "1",
            "-o",
            repeats.to_str().unwrap(),
        ],
    );
    wait_for_bytes(&op_journal(&repeats.join("repeat-2")), 50_000);
    signal(&child, libc::SIGINT);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    let summary = json(&repeats.join("summary.json"));
    assert_eq!(summary["repeats"], 1, "{summary}");
    let left_out = summary["left_out"][0].as_str().unwrap();
    assert!(
        left_out.starts_with("repeat-2 (interrupted after"),
        "{left_out}"
    );
    let compare = hatshop(tmp.path())
        .args([
            "compare",
            repeats.to_str().unwrap(),
            repeats.join("repeat-1").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(compare.status.success(), "{}", text(&compare.stderr));
    assert!(text(&compare.stdout).contains("cut short and left out: repeat-2"));

    let sweep = tmp.path().join("sweep");
    let child = spawn(
        tmp.path(),
        &[
            "sweep",
            "--vary",
            "events=2000,50000000",
            "-o",
            sweep.to_str().unwrap(),
        ],
    );
    wait_for_bytes(&op_journal(&sweep.join("events=50000000-r1")), 50_000);
    signal(&child, libc::SIGINT);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    let rows = csv_maps(&sweep.join("sweep.csv"));
    let status = |events: &str| {
        rows.iter()
            .find(|r| r["value"] == events && r["event_type"] == "all")
            .map(|r| r["status"].clone())
    };
    assert_eq!(status("2000").as_deref(), Some("finished"));
    assert_eq!(status("50000000").as_deref(), Some("interrupted"));
    let page = std::fs::read_to_string(sweep.join("sweep.html")).unwrap();
    assert!(page.contains("Left out of the charts: events=50000000"));
}

#[test]
fn closing_stdout_never_stops_the_folder_from_being_finished() {
    let tmp = TempDir::new().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("hatshop");
    let status = std::process::Command::new("sh")
        .current_dir(tmp.path())
        .arg("-c")
        .arg(format!(
            "'{}' run --events 20000 --verify --out piped | head -1",
            bin.display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let out = tmp.path().join("piped");
    let run = json(&out.join("run.json"));
    assert_eq!(run["status"], "finished");
    assert!(out.join("verify.json").exists());
    assert!(out.join("report.html").exists());
}

#[test]
fn a_result_folder_verifies_its_own_copy_of_the_database() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(&tmp, "original", &["--events", "3000"]);
    let copy = tmp.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    // The folder's files; its figures' CSVs are no part of verify.
    for entry in std::fs::read_dir(&out).unwrap() {
        let entry = entry.unwrap();
        if entry.path().is_file() {
            std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
        }
    }
    // Tamper with the copy only.
    let db = rusqlite::Connection::open(copy.join("hatshop.db")).unwrap();
    db.execute("UPDATE orders SET status = 'cancelled' WHERE order_id = (SELECT MIN(order_id) FROM orders)", [])
        .unwrap();
    drop(db);
    hatshop(tmp.path())
        .arg("verify")
        .arg(&out)
        .assert()
        .success();
    let copied = hatshop(tmp.path())
        .arg("verify")
        .arg(&copy)
        .output()
        .unwrap();
    assert_eq!(copied.status.code(), Some(1));
    // It reads the copy's own file, and says so.
    let stdout = text(&copied.stdout);
    assert!(
        stdout.contains(&format!("{}", copy.join("hatshop.db").display())),
        "{stdout}"
    );
    // A moved folder still finds its database.
    let moved = tmp.path().join("moved");
    std::fs::rename(&out, &moved).unwrap();
    hatshop(tmp.path())
        .arg("verify")
        .arg(&moved)
        .assert()
        .success();
    // Verify never creates a database.
    std::fs::remove_file(moved.join("hatshop.db")).unwrap();
    let _ = std::fs::remove_file(moved.join("hatshop.db-wal"));
    let _ = std::fs::remove_file(moved.join("hatshop.db-shm"));
    assert_one_line_error(
        tmp.path(),
        &["verify", moved.to_str().unwrap()],
        "no SQLite database at",
    );
    assert!(!moved.join("hatshop.db").exists());
}

/// verify says which database it reads, and a HATSHOP_DB left in the shell cannot make
/// it read another one unasked.
#[test]
fn verify_names_the_database_it_reads_and_refuses_a_contradicting_environment() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(&tmp, "own", &["--events", "2000"]);
    let out_arg = out.to_str().unwrap();
    let own = hatshop(tmp.path())
        .args(["verify", out_arg])
        .output()
        .unwrap();
    assert!(own.status.success());
    assert!(
        text(&own.stdout).contains("against sqlite://"),
        "{}",
        text(&own.stderr)
    );
    let other = tmp.path().join("other.db");
    let env = format!("sqlite://{}", other.display());
    let refused = hatshop(tmp.path())
        .env("HATSHOP_DB", &env)
        .args(["verify", out_arg])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("HATSHOP_DB names") && stderr.contains("--db"),
        "{stderr}"
    );
    assert!(!other.exists());
    // The run's own file through the environment is no contradiction.
    let own_file = format!("sqlite://{}", out.join("hatshop.db").display());
    hatshop(tmp.path())
        .env("HATSHOP_DB", &own_file)
        .args(["verify", out_arg])
        .assert()
        .success();
    // Asked for with --db, another database is read, and named.
    let asked = hatshop(tmp.path())
        .args(["verify", "--db", &env, out_arg])
        .output()
        .unwrap();
    assert!(!asked.status.success());
    assert!(
        text(&asked.stderr).contains(&env),
        "{}",
        text(&asked.stderr)
    );
}

#[test]
fn report_and_compare_refuse_a_cut_op_log() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(&tmp, "cut", &["--events", "2000"]);
    let dir = out.to_str().unwrap();
    // run.json counting rows the log does not hold.
    let record = out.join("run.json");
    let kept = std::fs::read(&record).unwrap();
    let mut run = json(&record);
    run["op_log_rows"] = 3000.into();
    std::fs::write(&record, serde_json::to_string_pretty(&run).unwrap()).unwrap();
    for args in [vec!["report", dir], vec!["compare", dir, dir]] {
        assert_one_line_error(
            tmp.path(),
            &args,
            "has 2000 rows but run.json says 3000: it was cut or changed",
        );
    }
    std::fs::write(&record, kept).unwrap();
    // The part of a shorter run in place of its own, its manifest too: each part is
    // what its manifest says, and its rows are another run's.
    let shorter = run_ok(&tmp, "shorter", &["--events", "1000"]);
    for file in ["ops/part-000000.parquet", "ops/_parts"] {
        std::fs::copy(shorter.join(file), out.join(file)).unwrap();
    }
    for args in [vec!["report", dir], vec!["compare", dir, dir]] {
        assert_one_line_error(tmp.path(), &args, "holds rows of run shorter");
    }
    // A part cut short fails its checksum.
    let part = out.join("ops/part-000000.parquet");
    let bytes = std::fs::read(&part).unwrap();
    std::fs::write(&part, &bytes[..bytes.len() - 40]).unwrap();
    assert_one_line_error(tmp.path(), &["report", dir], "fails its checksum");
}

#[test]
fn verify_refuses_a_folder_of_another_stream_version() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(&tmp, "old", &["--events", "500"]);
    let path = out.join("run.json");
    let mut run = json(&path);
    run["stream_version"] = 0.into();
    std::fs::write(&path, serde_json::to_string_pretty(&run).unwrap()).unwrap();
    assert_one_line_error(
        tmp.path(),
        &["verify", out.to_str().unwrap()],
        "was made by stream version 0 and this hatshop makes version 1",
    );
}

#[test]
fn an_events_file_changed_mid_run_fails_the_run_with_a_complete_folder() {
    let tmp = TempDir::new().unwrap();
    hatshop(tmp.path())
        .args(["generate", "--events", "400000", "-o", "big.jsonl"])
        .assert()
        .success();
    let out = tmp.path().join("changed");
    let child = spawn(
        tmp.path(),
        &[
            "run",
            "--quiet",
            "--events-file",
            "big.jsonl",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    wait_for_bytes(&op_journal(&out), 50_000);
    let file = tmp.path().join("big.jsonl");
    let text_now = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, &text_now[..text_now.len() / 2]).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let run = json(&out.join("run.json"));
    assert_eq!(run["status"], "failed");
    let error = run["error"].as_str().unwrap();
    assert!(error.contains("big.jsonl"), "{error}");
    assert_eq!(op_rows(&out).len() as u64, logged_calls(&run));
    assert!(out.join("summary.json").exists() && out.join("report.html").exists());
}

#[test]
fn hatshop_drops_only_tables_it_made() {
    let tmp = TempDir::new().unwrap();
    let db_path = tmp.path().join("mine.db");
    let db = rusqlite::Connection::open(&db_path).unwrap();
    db.execute_batch(
        "CREATE TABLE orders (id INT, note TEXT); INSERT INTO orders VALUES (1, 'mine');",
    )
    .unwrap();
    drop(db);
    assert_one_line_error(
        tmp.path(),
        &["run", "--db", "sqlite://mine.db", "--events", "100"],
        "refusing to drop orders in sqlite://mine.db: hatshop did not create it (no hatshop_meta marker)",
    );
    let db = rusqlite::Connection::open(&db_path).unwrap();
    let note: String = db
        .query_row("SELECT note FROM orders", [], |r| r.get(0))
        .unwrap();
    assert_eq!(note, "mine");
    drop(db);
    assert!(
        !tmp.path().join("results").exists(),
        "a run that never began left a folder"
    );
    run_ok(
        &tmp,
        "recreate",
        &["--db", "sqlite://mine.db", "--events", "100", "--recreate"],
    );
    // Now the tables carry the marker: the next run replaces them without asking.
    run_ok(
        &tmp,
        "again",
        &["--db", "sqlite://mine.db", "--events", "100", "--verify"],
    );
}

#[test]
fn a_read_changed_behind_hatshops_back_is_counted_not_current() {
    let tmp = TempDir::new().unwrap();
    let mut events = String::from(
        "{\"seq\":0,\"phase\":\"load\",\"op\":{\"type\":\"write\",\"key\":7,\"size\":64}}\n\
         {\"seq\":1,\"phase\":\"measure\",\"op\":{\"type\":\"rewrite\",\"key\":7,\"version\":2,\"size\":64}}\n",
    );
    for seq in 2..300_000 {
        events.push_str(&format!(
            "{{\"seq\":{seq},\"phase\":\"measure\",\"op\":{{\"type\":\"read\",\"key\":7,\"version\":2}}}}\n"
        ));
    }
    std::fs::write(tmp.path().join("reads.jsonl"), events).unwrap();
    let out = tmp.path().join("behind");
    let child = spawn(
        tmp.path(),
        &[
            "run",
            "--quiet",
            "--events-file",
            "reads.jsonl",
            // Stale reads are the point here.
            "--max-errors",
            "100%",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    wait_for_bytes(&op_journal(&out), 50_000);
    // A second connection puts the key's first version back.
    let db = rusqlite::Connection::open(out.join("hatshop.db")).unwrap();
    db.busy_timeout(Duration::from_secs(5)).unwrap();
    let key = hatshop::workload::KeyText::of(7);
    db.execute(
        "UPDATE kv SET v = ?1 WHERE k = ?2",
        rusqlite::params![hatshop::workload::kv::value(7, 1, 64), key.as_str()],
    )
    .unwrap();
    drop(db);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let summary = json(&out.join("summary.json"));
    let reads = summary["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event_type"] == "read")
        .unwrap();
    let stale = reads["errors_by_kind"]["stale"].as_u64().unwrap_or(0);
    assert!(stale > 0, "{reads}");
    assert!(reads["ok"].as_u64().unwrap() > 0, "{reads}");
    assert_eq!(reads["errors"].as_u64().unwrap(), stale, "{reads}");
}

/// Listens on a free port and accepts connections without ever answering.
fn silent_listener() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    port
}

/// A server that answers every connection with one line that never ends, as fast as it
/// can: the client must stop reading at a bound, never buffer it whole.
#[test]
fn a_redis_server_that_sends_an_endless_line_is_refused_at_a_bound() {
    use std::io::Write;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let chunk = vec![b'a'; 64 * 1024];
                let _ = stream.write_all(b"+");
                while stream.write_all(&chunk).is_ok() {}
            });
        }
    });
    let tmp = TempDir::new().unwrap();
    let started = Instant::now();
    let said = assert_one_line_error(
        tmp.path(),
        &[
            "run",
            "--events",
            "10",
            "--db",
            &format!("redis://127.0.0.1:{port}/0"),
        ],
        "a line of more than 65536 bytes",
    );
    assert!(said.contains("is it a Redis server?"), "{said}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_silent_server_gives_one_line_within_the_connect_timeout() {
    let tmp = TempDir::new().unwrap();
    let port = silent_listener();
    let urls = [
        format!("postgres://u:pw@127.0.0.1:{port}/x"),
        format!("mysql://root:pw@127.0.0.1:{port}/x"),
        format!("cassandra://127.0.0.1:{port}/x"),
        format!("redis://127.0.0.1:{port}/0"),
    ];
    let checks: Vec<_> = urls
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, url)| {
            let dir = tmp.path().join(format!("store{i}"));
            std::fs::create_dir(&dir).unwrap();
            std::thread::spawn(move || {
                let started = Instant::now();
                let output = hatshop(&dir)
                    .args(["run", "--connect-timeout", "2", "--db", &url])
                    .output()
                    .unwrap();
                // A run that never began leaves no folder behind.
                assert!(!dir.join("results").exists(), "{url}");
                (url, started.elapsed(), output)
            })
        })
        .collect();
    // The default deadline (10 s) holds too, for the store of the original report.
    let started = Instant::now();
    let default = hatshop(tmp.path())
        .args(["run", "--events", "2000", "--db", &urls[0]])
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(12), "{took:?}");
    assert!(
        text(&default.stderr).contains("within 10 s"),
        "{}",
        text(&default.stderr)
    );
    for check in checks {
        let (url, took, output) = check.join().unwrap();
        assert!(!output.status.success(), "{url}");
        assert!(took < Duration::from_secs(4), "{url}: {took:?}");
        let stderr = text(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{url}: {stderr}");
        assert!(
            stderr.starts_with("error: cannot connect to "),
            "{url}: {stderr}"
        );
        assert!(
            !stderr.contains(":pw@"),
            "{url}: a password leaked: {stderr}"
        );
    }
    // verify --db hears the same deadline.
    let out = run_ok(&tmp, "for-verify", &["--events", "100"]);
    let started = Instant::now();
    let output = hatshop(tmp.path())
        .args(["verify", "--connect-timeout", "2", "--db", &urls[0]])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(started.elapsed() < Duration::from_secs(4));
    assert!(!tmp.path().join("results").exists());
}

#[test]
fn ctrl_c_while_connecting_ends_at_once() {
    let tmp = TempDir::new().unwrap();
    let port = silent_listener();
    let child = spawn(
        tmp.path(),
        &["run", "--db", &format!("postgres://u@127.0.0.1:{port}/x")],
    );
    std::thread::sleep(Duration::from_millis(800));
    let sent = Instant::now();
    signal(&child, libc::SIGINT);
    let output = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "{:?}",
        sent.elapsed()
    );
    assert!(!output.status.success());
    assert!(text(&output.stderr).contains("interrupted before the run began"));
    assert!(!tmp.path().join("results").exists());
}
