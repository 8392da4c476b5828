//! Key-value records against the version of each key the stream leaves, read back a
//! page at a time so that values never pile up.

use super::{Expected, VerifyReport};
use crate::workload::KeyText;
use crate::workload::kv::intact_version;

/// Checks records read back, a page at a time; `seen` marks keys met so far (a scan
/// may return a key twice).
pub struct KeyCheck<'a> {
    expected: &'a Expected,
    seen: Vec<u64>,
}

impl<'a> KeyCheck<'a> {
    /// A check of the records read back against `expected`.
    pub fn new(expected: &'a Expected) -> Self {
        KeyCheck {
            expected,
            seen: vec![0; expected.keys.len().div_ceil(64)],
        }
    }

    fn first_sight(&mut self, key: u64) -> bool {
        let index = key as usize;
        if index / 64 >= self.seen.len() {
            self.seen.resize(index / 64 + 1, 0);
        }
        let bit = 1u64 << (index % 64);
        let new = self.seen[index / 64] & bit == 0;
        self.seen[index / 64] |= bit;
        new
    }

    /// Checks one record the store holds.
    pub fn record(&mut self, text: &str, value: &[u8], report: &mut VerifyReport) {
        let Some(key) = KeyText::parse(text).filter(|k| *k < (1 << 40)) else {
            report.keys_found += 1;
            report.extra_keys += 1;
            report.note(format!("record {text}: not a key hatshop writes"));
            return;
        };
        if !self.first_sight(key) {
            return;
        }
        report.keys_found += 1;
        if self.expected.uncertain_keys.contains(&key) {
            return;
        }
        if let Some(versions) = self.expected.past_log_keys.get(&key) {
            self.record_past_log(text, key, value, versions, report);
            return;
        }
        let want = self.expected.key_version(key);
        if want == 0 {
            unwritten(text, report);
            return;
        }
        match intact_version(key, value) {
            Some(v) if v == want => {}
            Some(v) if v < want => {
                report.stale_keys += 1;
                report.note(format!(
                    "record {text}: version {v}, the stream last wrote version {want} (a lost update)"
                ));
            }
            _ => {
                report.differing_keys += 1;
                report.note(format!(
                    "record {text}: {} bytes that are not version {want} of it",
                    value.len()
                ));
            }
        }
    }

    /// A record written after its lane's last logged event: any version it passed
    /// through from there is right.
    fn record_past_log(
        &mut self,
        text: &str,
        key: u64,
        value: &[u8],
        versions: &[u32],
        report: &mut VerifyReport,
    ) {
        match intact_version(key, value) {
            Some(v) if versions.contains(&v) => {}
            _ if versions.iter().all(|&v| v == 0) => {
                unwritten(text, report);
            }
            _ => {
                report.differing_keys += 1;
                report.note(format!(
                    "record {text}: {} bytes that are none of the versions written after its \
                     lane's last logged operation",
                    value.len()
                ));
            }
        }
    }

    /// After the last page: keys that must exist and were not met.
    pub fn finish(mut self, report: &mut VerifyReport) {
        for key in 0..self.expected.keys.len() as u64 {
            let want = self.expected.key_version(key);
            let uncertain = self.expected.uncertain_keys.contains(&key);
            if want > 0 {
                report.keys_expected += 1;
            }
            if uncertain {
                report.uncertain_keys += 1;
                continue;
            }
            if let Some(versions) = self.expected.past_log_keys.get(&key) {
                report.past_log_keys += 1;
                if !versions.contains(&0) && self.first_sight(key) {
                    report.missing_keys += 1;
                    report.note(format!(
                        "record {:?}: missing (it existed at its lane's last logged operation \
                         and nothing after deletes it)",
                        KeyText::of(key)
                    ));
                }
                continue;
            }
            if want > 0 && self.first_sight(key) {
                report.missing_keys += 1;
                report.note(format!("record {:?}: missing", KeyText::of(key)));
            }
        }
    }
}

/// A record the stream deleted or never wrote, found present.
fn unwritten(text: &str, report: &mut VerifyReport) {
    report.extra_keys += 1;
    report.note(format!(
        "record {text}: present but the stream deleted or never wrote it"
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_judged_by_version() {
        let mut expected = Expected::new(Default::default());
        let event = |seq, op| crate::workload::OrderEvent {
            seq,
            phase: crate::workload::Phase::Load,
            op,
        };
        use crate::workload::Operation::{Rewrite, Write};
        for key in 0..4 {
            expected.apply(&event(key, Write { key, size: 64 }), None);
        }
        expected.apply(
            &event(
                9,
                Rewrite {
                    key: 1,
                    version: 2,
                    size: 64,
                },
            ),
            None,
        );
        let mut report = VerifyReport::default();
        let mut check = KeyCheck::new(&expected);
        let v = crate::workload::kv::value;
        check.record(KeyText::of(0).as_str(), &v(0, 1, 64), &mut report);
        check.record(KeyText::of(1).as_str(), &v(1, 1, 64), &mut report); // lost update
        check.record(KeyText::of(1).as_str(), &v(1, 1, 64), &mut report); // seen twice
        let mut corrupt = v(2, 1, 64);
        corrupt[40] ^= 0xFF;
        check.record(KeyText::of(2).as_str(), &corrupt, &mut report);
        check.record("somebody-else", b"x", &mut report);
        check.finish(&mut report);
        assert_eq!(report.keys_expected, 4);
        assert_eq!(report.keys_found, 4);
        assert_eq!(report.stale_keys, 1);
        assert_eq!(report.differing_keys, 1);
        assert_eq!(report.missing_keys, 1);
        assert_eq!(report.extra_keys, 1);
    }
}
