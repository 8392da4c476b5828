//! A result folder's statistics are read only as hatshop wrote them: summary.json,
//! intervals.csv and latency.hlog carry their sums in SHA256SUMS, and a changed one, a
//! link in its place or the sums gone is refused by name, never drawn.

use std::path::Path;

use crate::common;

use common::{assert_one_line_error, hatshop, sha256_of};
use tempfile::TempDir;

/// A copy of the folder `from` at `to`.
fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn changed_linked_or_unsealed_statistics_are_refused_by_name() {
    let tmp = TempDir::new().unwrap();
    let dir = tmp.path();
    hatshop(dir)
        .args(["run", "--quiet", "--events", "2000", "-o", "run"])
        .assert()
        .success();
    let run = dir.join("run");
    // The sums are sha256sum's, line for line.
    let sums = std::fs::read_to_string(run.join("SHA256SUMS")).unwrap();
    for name in ["summary.json", "intervals.csv", "latency.hlog"] {
        let line = format!("{}  {name}", sha256_of(&run.join(name)));
        assert!(sums.lines().any(|l| l == line), "{name}: {sums}");
    }
    hatshop(dir).args(["report", "run"]).assert().success();

    for name in ["summary.json", "intervals.csv", "latency.hlog"] {
        // One digit more where the file holds one: a count, a latency, a time.
        let folder = format!("changed-{name}");
        copy(&run, &dir.join(&folder));
        let path = dir.join(&folder).join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let at = text.find(|c: char| c.is_ascii_digit()).unwrap();
        std::fs::write(&path, format!("{}9{}", &text[..at], &text[at..])).unwrap();
        let said = format!("{folder}/{name} was changed after hatshop wrote it");
        assert_one_line_error(dir, &["report", &folder], &said);
        assert_one_line_error(dir, &["compare", "run", &folder], &said);
    }
    assert_one_line_error(
        dir,
        &["show", "changed-summary.json"],
        "changed-summary.json/summary.json was changed after hatshop wrote it",
    );

    // The same bytes through a link are not read: a folder hands over no other file.
    copy(&run, &dir.join("linked"));
    std::fs::rename(dir.join("linked/summary.json"), dir.join("elsewhere.json")).unwrap();
    std::os::unix::fs::symlink(dir.join("elsewhere.json"), dir.join("linked/summary.json"))
        .unwrap();
    assert_one_line_error(dir, &["report", "linked"], "is a symbolic link");
    copy(&run, &dir.join("zeros"));
    std::fs::remove_file(dir.join("zeros/intervals.csv")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("zeros/intervals.csv")).unwrap();
    assert_one_line_error(dir, &["report", "zeros"], "is a symbolic link");

    // The op log's parts are read as files hatshop wrote, never through a link.
    copy(&run, &dir.join("ops-linked"));
    let ops = dir.join("ops-linked/ops");
    std::fs::create_dir_all(&ops).unwrap();
    for part in std::fs::read_dir(run.join("ops")).unwrap() {
        let part = part.unwrap();
        std::os::unix::fs::symlink(part.path(), ops.join(part.file_name())).unwrap();
    }
    assert_one_line_error(
        dir,
        &["export", "ops-linked", "--csv", "-o", "-"],
        "is a symbolic link",
    );

    copy(&run, &dir.join("unsealed"));
    std::fs::remove_file(dir.join("unsealed/SHA256SUMS")).unwrap();
    assert_one_line_error(
        dir,
        &["report", "unsealed"],
        "unsealed/SHA256SUMS is gone, though run.json says hatshop sealed",
    );
}
