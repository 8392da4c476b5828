//! What hatshop writes where the user says: never over a file of a result folder, and
//! never a quiet exit 0 when it could not be written.

use crate::common;

use std::process::Command as StdCommand;

use common::{assert_one_line_error, run_ok, text};
use tempfile::TempDir;

#[test]
fn no_output_is_opened_on_a_file_of_a_result_folder() {
    let tmp = TempDir::new().unwrap();
    let a = run_ok(&tmp, "a", &["--events", "500"]);
    let b = run_ok(&tmp, "b", &["--events", "500"]);
    let (a_arg, b_arg) = (a.to_str().unwrap(), b.to_str().unwrap());
    let keep = |name: &str| std::fs::read(a.join(name)).unwrap();
    let before: Vec<Vec<u8>> = ["ops/part-000000.parquet", "hatshop.db", "run.json"]
        .iter()
        .map(|f| keep(f))
        .collect();
    // Through a link and `..` too: the file, not its spelling, is what counts.
    std::os::unix::fs::symlink(a.join("run.json"), tmp.path().join("link.json")).unwrap();
    let sideways = format!("{b_arg}/../a/summary.json");
    for args in [
        vec!["export", a_arg, "--csv", "-o", "a/ops/part-000000.parquet"],
        vec!["export", a_arg, "--csv", "-o", "a/hatshop.db"],
        vec!["export", a_arg, "--csv", "-o", "a/run.json"],
        vec!["export", a_arg, "--csv", "-o", "a/ops/new.csv"],
        vec!["export", a_arg, "--csv", "-o", "link.json"],
        vec!["compare", a_arg, b_arg, "-o", &sideways],
        vec!["compare", a_arg, b_arg, "-o", "a/run.json"],
        vec!["run", "--events", "10", "--export-markdown", "a/run.json"],
    ] {
        assert_one_line_error(
            tmp.path(),
            &args,
            "which hatshop reads: name a path outside it",
        );
    }
    let after: Vec<Vec<u8>> = ["ops/part-000000.parquet", "hatshop.db", "run.json"]
        .iter()
        .map(|f| keep(f))
        .collect();
    assert!(before == after, "a result folder's file was written over");
    // Its own CSV export lands in the folder, and may be written again.
    for _ in 0..2 {
        common::hatshop(tmp.path())
            .args(["export", a_arg, "--csv"])
            .assert()
            .success();
    }
    assert!(a.join("ops.csv").exists());
}

#[test]
fn standard_output_that_cannot_be_written_is_an_error() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(&tmp, "a", &["--events", "500"]);
    for args in [
        vec!["show", out.to_str().unwrap()],
        vec!["export", out.to_str().unwrap(), "--csv", "-o", "-"],
        vec!["run", "--quiet", "--events", "100", "--export-json", "-"],
    ] {
        let ran = StdCommand::new(assert_cmd::cargo::cargo_bin("hatshop"))
            .current_dir(tmp.path())
            .args(&args)
            .stdout(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .output()
            .unwrap();
        let stderr = text(&ran.stderr);
        assert!(!ran.status.success(), "{args:?}: {stderr}");
        assert!(
            stderr.contains("No space left on device"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn an_export_to_a_fifo_waits_for_its_reader_and_hears_sigterm() {
    let tmp = TempDir::new().unwrap();
    let fifo = tmp.path().join("fifo");
    let made = StdCommand::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let fifo_arg = fifo.to_str().unwrap();
    let run = |out: &str| {
        common::spawn(
            tmp.path(),
            &[
                "run",
                "--quiet",
                "--events",
                "300",
                "-o",
                out,
                "--export-csv",
                fifo_arg,
            ],
        )
    };

    // A reader comes: the table goes through the FIFO.
    let child = run("read");
    let reader = std::thread::spawn({
        let fifo = fifo.clone();
        move || std::fs::read_to_string(fifo).unwrap()
    });
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success(), "{}", text(&done.stderr));
    assert!(reader.join().unwrap().starts_with("event_type,count"));

    // None comes: SIGTERM ends the wait, and the folder is whole.
    let child = run("unread");
    let journal_gone = tmp.path().join("unread/summary.json");
    let began = std::time::Instant::now();
    while !journal_gone.exists() {
        assert!(began.elapsed().as_secs() < 20, "the run did not finish");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    common::signal(&child, libc::SIGTERM);
    let signalled = std::time::Instant::now();
    let done = child.wait_with_output().unwrap();
    assert!(signalled.elapsed().as_secs_f64() < 2.0);
    let stderr = text(&done.stderr);
    assert!(!done.status.success(), "{stderr}");
    assert!(
        stderr.contains("interrupted while waiting for a reader"),
        "{stderr}"
    );
    common::hatshop(tmp.path())
        .args(["verify", "unread"])
        .assert()
        .success();
}
