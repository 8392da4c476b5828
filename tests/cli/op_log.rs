//! The op log proves itself, through the binary on SQLite: a changed byte in a part or
//! the journal is refused by name, a lost log is called lost, and `recover` keeps what
//! it could not read.

use crate::common;

use common::{assert_one_line_error, hatshop, json, op_journal, run_ok, signal, spawn, text};
use common::{exported_csv, wait_for_bytes};
use tempfile::TempDir;

#[test]
fn export_report_and_compare_refuse_a_part_changed_added_or_lost() {
    let tmp = TempDir::new().unwrap();
    let out = run_ok(&tmp, "whole", &["--events", "3000"]);
    let dir = out.to_str().unwrap();
    let part = out.join("ops/part-000000.parquet");
    let bytes = std::fs::read(&part).unwrap();

    // One byte changed in the middle of the rows.
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 3] ^= 0x01;
    std::fs::write(&part, &flipped).unwrap();
    let csv = tmp.path().join("ops.csv");
    for args in [
        vec!["export", dir, "--csv", "-o", csv.to_str().unwrap()],
        vec!["report", dir],
        vec!["compare", dir, dir],
    ] {
        assert_one_line_error(
            tmp.path(),
            &args,
            "part-000000.parquet fails its checksum: it changed after the run wrote it",
        );
    }
    assert!(!csv.exists(), "export wrote before it checked");
    std::fs::write(&part, &bytes).unwrap();

    // The same part again under the next name: rows the run never made.
    let copy = out.join("ops/part-000001.parquet");
    std::fs::copy(&part, &copy).unwrap();
    assert_one_line_error(
        tmp.path(),
        &["export", dir, "--csv", "-o", "-"],
        "part-000001.parquet is not a part this run wrote",
    );
    std::fs::remove_file(&copy).unwrap();

    // The parts gone, then the whole log.
    std::fs::remove_file(&part).unwrap();
    assert_one_line_error(
        tmp.path(),
        &["export", dir, "--csv", "-o", "-"],
        "op log lost: ",
    );
    std::fs::remove_dir_all(out.join("ops")).unwrap();
    for args in [vec!["export", dir, "--csv", "-o", "-"], vec!["report", dir]] {
        assert_one_line_error(tmp.path(), &args, "op log lost: ");
    }
}

/// Another run's whole log, sound in itself and of the same length, is refused by the
/// run id its rows carry: export, report and recover never read it as this run's.
#[test]
fn another_runs_whole_op_log_is_refused_by_its_run_id() {
    let tmp = TempDir::new().unwrap();
    let mine = run_ok(&tmp, "mine", &["--events", "2000", "--tag", "mine"]);
    let other = run_ok(&tmp, "other", &["--events", "2000", "--tag", "other"]);
    std::fs::remove_dir_all(mine.join("ops")).unwrap();
    let copied = std::process::Command::new("cp")
        .args(["-r"])
        .arg(other.join("ops"))
        .arg(mine.join("ops"))
        .status()
        .unwrap();
    assert!(copied.success());
    let other_id = json(&other.join("run.json"))["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let dir = mine.to_str().unwrap();
    for args in [vec!["export", dir, "--csv", "-o", "-"], vec!["report", dir]] {
        let said =
            assert_one_line_error(tmp.path(), &args, &format!("holds rows of run {other_id}"));
        assert!(said.contains("it is another run's log"), "{said}");
    }
}

/// A SQLite run killed with SIGKILL once its journal holds some rows: its folder.
fn killed_run(tmp: &TempDir) -> std::path::PathBuf {
    let out = tmp.path().join("killed");
    let mut child = spawn(
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
    wait_for_bytes(&op_journal(&out), 150_000);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    out
}

#[test]
fn a_killed_runs_damaged_journal_is_recovered_up_to_the_damage_and_kept() {
    let tmp = TempDir::new().unwrap();
    let out = killed_run(&tmp);
    let out_arg = out.to_str().unwrap();
    let journal = op_journal(&out);

    let mut bytes = std::fs::read(&journal).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x20;
    std::fs::write(&journal, &bytes).unwrap();

    let recovered = hatshop(tmp.path())
        .args(["recover", out_arg])
        .output()
        .unwrap();
    assert!(
        !recovered.status.success(),
        "a damaged journal recovered quietly"
    );
    let stderr = text(&recovered.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("_journal is damaged at byte")
            && stderr.contains("only the rows before it were recovered")
            && stderr.contains("_journal.damaged"),
        "{stderr}"
    );
    // Nothing it could not read is gone: the damaged file is kept as it was.
    assert_eq!(
        std::fs::read(out.join("ops/_journal.damaged")).unwrap(),
        bytes
    );
    assert!(!journal.exists());

    let run = json(&out.join("run.json"));
    assert_eq!(run["status"], "recovered");
    assert_eq!(run["recovered"]["op_log_complete"], false);
    assert!(
        run["recovered"]["journal_damage"]
            .as_str()
            .unwrap()
            .contains("is damaged at byte")
    );
    // What was recovered reads whole: every reader counts the same rows.
    let rows = exported_csv(&out).lines().count() as u64 - 1;
    assert_eq!(run["recovered"]["logged_ops"].as_u64().unwrap(), rows);
    assert!(rows > 0);
    hatshop(tmp.path())
        .args(["report", out_arg])
        .assert()
        .success();
    assert_one_line_error(tmp.path(), &["recover", out_arg], "recovered already");

    // The database is as the run left it: verify says what the damage leaves unknown,
    // and blames nothing on the database.
    let lost = run["recovered"]["lost_rows_at_most"].as_u64().unwrap();
    assert!(lost > 0, "{run}");
    let verified = hatshop(tmp.path())
        .args(["verify", out_arg])
        .output()
        .unwrap();
    let said = text(&verified.stdout);
    assert!(
        verified.status.success(),
        "{said}{}",
        text(&verified.stderr)
    );
    assert!(
        said.contains("note: the op log's journal was damaged")
            && said.contains("operations after it are not known"),
        "{said}"
    );
}

#[test]
fn a_recover_cut_short_after_its_record_is_finished_by_the_next() {
    let tmp = TempDir::new().unwrap();
    let out = killed_run(&tmp);
    let out_arg = out.to_str().unwrap();
    let journal = op_journal(&out);
    // As a recover killed after it wrote run.json and before it sealed the log: the
    // journal is still there beside the parts.
    let kept = std::fs::read(&journal).unwrap();
    hatshop(tmp.path())
        .args(["recover", out_arg])
        .assert()
        .success();
    let sealed_rows = exported_csv(&out).lines().count();
    let last = std::fs::read_dir(out.join("ops"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .max()
        .unwrap();
    std::fs::remove_file(&last).unwrap();
    std::fs::write(&journal, &kept).unwrap();
    let manifest = out.join("ops/_parts");
    let listed = std::fs::read_to_string(&manifest).unwrap();
    let unsealed: Vec<&str> = listed
        .lines()
        .filter(|l| *l != "end" && !l.starts_with(last.file_name().unwrap().to_str().unwrap()))
        .collect();
    std::fs::write(&manifest, unsealed.join("\n") + "\n").unwrap();

    let again = hatshop(tmp.path())
        .args(["recover", out_arg])
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert!(text(&again.stdout).contains("finished sealing the op log"));
    assert!(!journal.exists());
    assert_eq!(exported_csv(&out).lines().count(), sealed_rows);
    hatshop(tmp.path())
        .args(["report", out_arg])
        .assert()
        .success();
}
