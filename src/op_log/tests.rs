//! The op log read back as written: through parts and the journal, after a kill, and
//! once sealed.

use std::io::Write as _;
use std::path::Path;

use super::journal::{JOURNAL, Journal};
use super::{LoggedOp, OpLog, PartWriter, RunOf, seal};

fn op(seq: u64) -> LoggedOp {
    let failed = seq % 7 == 3;
    LoggedOp {
        event_type: ["create_order", "read_order", "update_items"][seq as usize % 3],
        seq,
        target: seq * 31 % 1000,
        sent_ns: 1_763_000_000_000_000_000 + seq * 1_234,
        latency_ns: 900 + seq * 7 % 5_000,
        error: failed.then(|| ("conflict", format!("row {seq}: \"deadlock\", again\n"))),
        error_code: failed.then(|| "1213".to_string()),
        node: (seq % 4) as u16,
        attempts: 1 + seq.is_multiple_of(5) as u32,
        intended_start_ns: seq
            .is_multiple_of(2)
            .then_some(1_763_000_000_000_000_000 + seq * 1_000),
        queue_ns: seq.is_multiple_of(3).then_some(seq),
        shard: None,
    }
}

/// Writes `rows` rows as the op log thread does, in parts of 2 groups of 10 rows, and
/// stops as a kill would: nothing finished, the journal flushed.
fn killed_run(dir: &Path, rows: u64) {
    let ops = OpLog::dir_of(dir);
    let mut parts = PartWriter::create(&ops, 0, false, "run-1", "a-store")
        .unwrap()
        .sized(10, 2);
    let mut journal = Journal::create(&ops.join(JOURNAL), "run-1", "a-store", 0).unwrap();
    for seq in 0..rows {
        journal.push(&op(seq));
        if parts.push(&op(seq)).unwrap() {
            journal.start(parts.next_part()).unwrap();
        }
    }
    journal.flush().unwrap();
}

fn read_all(dir: &Path) -> (Vec<LoggedOp>, super::LogRead) {
    let mut rows = Vec::new();
    let read = OpLog::open(dir)
        .unwrap()
        .for_each(|run, row| {
            assert_eq!(
                run,
                &RunOf {
                    run_id: "run-1".into(),
                    database: "a-store".into()
                }
            );
            rows.push(row);
            Ok(())
        })
        .unwrap();
    (rows, read)
}

#[test]
fn a_killed_log_gives_every_row_from_its_parts_and_journal() {
    let tmp = tempfile::TempDir::new().unwrap();
    killed_run(tmp.path(), 47);
    let names: Vec<String> = std::fs::read_dir(OpLog::dir_of(tmp.path()))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // Two closed parts of 20 rows, 7 rows in the journal, none yet in a closed third part.
    assert!(
        names.contains(&"part-000001.parquet".to_string()),
        "{names:?}"
    );
    assert!(
        !names.contains(&"part-000002.parquet".to_string()),
        "{names:?}"
    );
    let (rows, read) = read_all(tmp.path());
    assert_eq!(rows, (0..47).map(op).collect::<Vec<_>>());
    assert_eq!(read.cut, 0);
    assert_eq!(OpLog::open(tmp.path()).unwrap().count().unwrap(), read);
}

#[test]
fn a_row_cut_by_the_kill_is_left_out_and_counted() {
    let tmp = tempfile::TempDir::new().unwrap();
    killed_run(tmp.path(), 45);
    let journal = OpLog::dir_of(tmp.path()).join(JOURNAL);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .unwrap();
    file.write_all(&60u32.to_le_bytes()).unwrap();
    file.write_all(&[1, 2, 3]).unwrap();
    let (rows, read) = read_all(tmp.path());
    assert_eq!((rows.len(), read.rows, read.cut), (45, 45, 1));
}

#[test]
fn sealing_puts_the_journal_into_the_last_part() {
    let tmp = tempfile::TempDir::new().unwrap();
    killed_run(tmp.path(), 47);
    seal(tmp.path()).unwrap();
    let ops = OpLog::dir_of(tmp.path());
    assert!(!ops.join(JOURNAL).exists());
    assert!(ops.join("part-000002.parquet").exists());
    let (rows, read) = read_all(tmp.path());
    assert_eq!(rows, (0..47).map(op).collect::<Vec<_>>());
    assert_eq!(read.cut, 0);
}

#[test]
fn a_journal_whose_part_was_closed_is_left_out() {
    // Killed after the part closed and before the journal started again.
    let tmp = tempfile::TempDir::new().unwrap();
    let ops = OpLog::dir_of(tmp.path());
    let mut parts = PartWriter::create(&ops, 0, false, "run-1", "a-store")
        .unwrap()
        .sized(10, 1);
    let mut journal = Journal::create(&ops.join(JOURNAL), "run-1", "a-store", 0).unwrap();
    for seq in 0..10 {
        journal.push(&op(seq));
        parts.push(&op(seq)).unwrap();
    }
    journal.flush().unwrap();
    let (rows, _) = read_all(tmp.path());
    assert_eq!(rows.len(), 10);
}

#[test]
fn a_run_of_no_rows_leaves_a_part_with_the_columns() {
    let tmp = tempfile::TempDir::new().unwrap();
    let ops = OpLog::dir_of(tmp.path());
    PartWriter::create(&ops, 0, false, "run-1", "a-store")
        .unwrap()
        .finish()
        .unwrap();
    assert!(ops.join("part-000000.parquet").exists());
    assert_eq!(read_all(tmp.path()).0.len(), 0);
}

#[test]
fn each_row_keeps_its_run_when_runs_change_within_a_row_group() {
    let tmp = tempfile::TempDir::new().unwrap();
    let ops = OpLog::dir_of(tmp.path());
    // Runs of 1, 0 and 9,000 rows (more than the copies handed over at a time), in
    // row groups of 5,000 rows (more than the reader decodes at a time): the first
    // group holds two runs.
    let runs = [
        ("run-a", "store-1", 1),
        ("run-b", "store-2", 0),
        ("run-c", "store-3", 9_000),
    ];
    let mut parts = PartWriter::create(&ops, 0, true, "unused", "unused")
        .unwrap()
        .sized(5_000, 10);
    let mut seq = 0;
    for (run_id, database, rows) in runs {
        parts.set_run(run_id, database);
        for _ in 0..rows {
            let mut row = op(seq);
            row.shard = Some(0);
            parts.push(&row).unwrap();
            seq += 1;
        }
    }
    parts.finish().unwrap();
    let mut read = Vec::new();
    OpLog::open(tmp.path())
        .unwrap()
        .for_each(|run, row| {
            read.push((run.run_id.clone(), run.database.clone(), row.seq));
            Ok(())
        })
        .unwrap();
    let expected: Vec<_> = std::iter::once(("run-a".to_string(), "store-1".to_string(), 0))
        .chain((1..9_001).map(|seq| ("run-c".to_string(), "store-3".to_string(), seq)))
        .collect();
    assert_eq!(read, expected);
}

/// Every row read before a refusal, and the error, if any.
fn read_until_refused(dir: &Path) -> (Vec<LoggedOp>, Result<super::LogRead, String>) {
    let mut rows = Vec::new();
    let read = OpLog::open(dir)
        .and_then(|log| {
            log.for_each(|_, row| {
                rows.push(row);
                Ok(())
            })
        })
        .map_err(|e| format!("{e:#}"));
    (rows, read)
}

#[test]
fn a_changed_byte_anywhere_in_the_journal_is_refused_by_its_offset() {
    let tmp = tempfile::TempDir::new().unwrap();
    killed_run(tmp.path(), 47);
    let journal = OpLog::dir_of(tmp.path()).join(JOURNAL);
    let bytes = std::fs::read(&journal).unwrap();
    for at in 0..bytes.len() {
        let mut flipped = bytes.clone();
        flipped[at] ^= 1 << (at % 8);
        std::fs::write(&journal, &flipped).unwrap();
        let (_, read) = read_until_refused(tmp.path());
        let error = read.expect_err(&format!("a flip at byte {at} went unseen"));
        assert!(error.contains("_journal is damaged at byte"), "{error}");
        // recover's reading stops there: whole rows before it, none changed.
        let log = OpLog::open(tmp.path()).unwrap();
        let mut kept = Vec::new();
        let read = log
            .for_each_until_damage(|_, row| {
                kept.push(row);
                Ok(())
            })
            .unwrap();
        assert!(read.damage.is_some());
        assert_eq!(kept, (0..kept.len() as u64).map(op).collect::<Vec<_>>());
    }
}

#[test]
fn a_changed_byte_in_a_part_is_refused_by_its_checksum() {
    let tmp = tempfile::TempDir::new().unwrap();
    killed_run(tmp.path(), 47);
    let part = OpLog::dir_of(tmp.path()).join("part-000000.parquet");
    let bytes = std::fs::read(&part).unwrap();
    for at in (0..bytes.len()).step_by(7) {
        let mut flipped = bytes.clone();
        flipped[at] ^= 0x10;
        std::fs::write(&part, &flipped).unwrap();
        let error = read_until_refused(tmp.path()).1.unwrap_err();
        assert!(
            error.contains("part-000000.parquet fails its checksum"),
            "{error}"
        );
        let count = OpLog::open(tmp.path())
            .unwrap()
            .count()
            .map_err(|e| e.to_string());
        assert!(count.unwrap_err().contains("fails its checksum"));
    }
}

#[test]
fn a_part_gone_added_or_unlisted_and_a_journal_gone_are_refused() {
    let refused = |change: &dyn Fn(&Path), says: &str| {
        let tmp = tempfile::TempDir::new().unwrap();
        killed_run(tmp.path(), 47);
        change(&OpLog::dir_of(tmp.path()));
        let error = read_until_refused(tmp.path()).1.unwrap_err();
        assert!(error.contains(says), "{error}");
    };
    refused(
        &|ops| std::fs::remove_file(ops.join("part-000001.parquet")).unwrap(),
        "op log lost: ",
    );
    refused(
        &|ops| {
            std::fs::copy(
                ops.join("part-000001.parquet"),
                ops.join("part-000002.parquet"),
            )
            .unwrap();
        },
        "part-000002.parquet is not a part this run wrote",
    );
    refused(
        &|ops| std::fs::remove_file(ops.join("_parts")).unwrap(),
        "has no list of its parts (_parts)",
    );
    refused(
        &|ops| std::fs::remove_file(ops.join(JOURNAL)).unwrap(),
        "_journal is gone, and with it the rows after the log's 2 closed part(s)",
    );
    refused(
        &|ops| std::fs::write(ops.join(JOURNAL), b"").unwrap(),
        "_journal is damaged at byte 0",
    );
}

#[test]
fn sealing_a_damaged_journal_keeps_the_rows_before_and_the_file_beside() {
    let tmp = tempfile::TempDir::new().unwrap();
    killed_run(tmp.path(), 47);
    let ops = OpLog::dir_of(tmp.path());
    let journal = ops.join(JOURNAL);
    let mut bytes = std::fs::read(&journal).unwrap();
    let last = bytes.len() - 10;
    bytes[last] ^= 0xff;
    std::fs::write(&journal, &bytes).unwrap();
    let sealed = seal(tmp.path()).unwrap();
    let (kept, damage) = sealed.damaged.expect("damage told");
    assert_eq!(kept, ops.join(super::DAMAGED_JOURNAL));
    assert_eq!(std::fs::read(&kept).unwrap(), bytes);
    assert!(damage.contains("after 6 whole rows"), "{damage}");
    let (rows, read) = read_all(tmp.path());
    assert_eq!(rows, (0..46).map(op).collect::<Vec<_>>());
    assert_eq!(read.cut, 0);
    assert!(!super::needs_sealing(tmp.path()).unwrap());
}

#[test]
fn a_part_listed_before_its_rename_is_read_and_then_named() {
    // Killed after the manifest listed the part and before it took its name.
    let tmp = tempfile::TempDir::new().unwrap();
    killed_run(tmp.path(), 47);
    let ops = OpLog::dir_of(tmp.path());
    std::fs::rename(
        ops.join("part-000001.parquet"),
        ops.join("_part-000001.partial"),
    )
    .unwrap();
    assert_eq!(read_all(tmp.path()).0.len(), 47);
    assert!(super::needs_sealing(tmp.path()).unwrap());
    seal(tmp.path()).unwrap();
    assert!(ops.join("part-000001.parquet").exists());
    assert_eq!(read_all(tmp.path()).0, (0..47).map(op).collect::<Vec<_>>());
    assert!(!super::needs_sealing(tmp.path()).unwrap());
}
