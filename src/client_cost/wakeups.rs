//! Under `--rate`, whether the client sent each operation when its lane was free to:
//! what the client's own delay added to the response times, told apart from the
//! database's backlog.

use std::time::Instant;

use serde::{Deserialize, Serialize};

/// A lane sent an operation later than this after it was free to (its slot had come
/// and the database had answered its previous call): the client made it wait.
const LATE_WAKEUP: std::time::Duration = std::time::Duration::from_millis(1);
/// The share of late sends past which a run is warned of a starved client.
const LATE_SHARE: f64 = 0.01;

/// Under `--rate`, how late the lanes sent the measured operations after they were
/// free to: after the operation's slot, or after the database answered the lane's
/// previous call if that came later. Lateness there is the client's alone (its threads
/// starved of CPU, or its timers coarse), where the time a lane waits for an answer is
/// the database's backlog. An operation due while the client held its lane (from when
/// the lane was free to send an operation it sent late, until it sent it) is late too:
/// a client starved for 200 ms delays every operation due in them, not only the first,
/// and a client behind from its first operation, which never waits for a slot, is
/// judged as well.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Wakeups {
    /// Measured operations sent under `--rate` (older run.json files counted only those
    /// a lane waited for).
    #[serde(alias = "waited_for")]
    pub sent: u64,
    /// Of those, sent more than [`LATE_WAKEUP`] after the lane was free to, or due
    /// while the client held the lane.
    pub late: u64,
    /// The latest any was sent after the lane was free to, ms.
    pub latest_ms: f64,
    /// The last time the client held the lane: (free to send, sent).
    #[serde(skip)]
    held: Option<(Instant, Instant)>,
}

impl Wakeups {
    /// One operation, due at `due`, that the lane was free to send at `free` (its slot,
    /// or its previous answer if later) and sent at `sent`.
    pub fn sent(&mut self, due: Instant, free: Instant, sent: Instant) {
        self.sent += 1;
        let late = sent.saturating_duration_since(free);
        self.latest_ms = self.latest_ms.max(late.as_secs_f64() * 1e3);
        let held_when_due = self
            .held
            .is_some_and(|(from, until)| due >= from && due < until);
        if late > LATE_WAKEUP {
            self.late += 1;
            self.held = Some((free, sent));
        } else if held_when_due {
            self.late += 1;
        }
    }

    /// Both lanes' counts.
    pub fn add(&mut self, other: &Wakeups) {
        self.sent += other.sent;
        self.late += other.late;
        self.latest_ms = self.latest_ms.max(other.latest_ms);
    }

    /// The warning when the client starved: more than 1 % of the operations went out
    /// over 1 ms after the lane was free to send them, or were due while it was held.
    pub fn starved(&self) -> Option<String> {
        let share = self.late as f64 / self.sent.max(1) as f64;
        (share > LATE_SHARE).then(|| {
            format!(
                "the client woke late: {:.1} % of the operations went out more than {} ms after their lane was free to send them (its slot come and its previous answer back), or were due while the client held their lane (the latest {:.1} ms late): its threads were starved of CPU, and response times include that delay; give hatshop more CPU, or fewer lanes",
                share * 100.0,
                LATE_WAKEUP.as_millis(),
                self.latest_ms
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stalled_client_is_late_for_every_operation_due_in_its_stall_and_a_backlog_is_not_its() {
        let ms = |n: u64| std::time::Duration::from_millis(n);
        let t0 = Instant::now();
        // One operation every 2 ms, answered at once; the client stalls 100 ms at the
        // 10th, then sends what fell due meanwhile as fast as it can.
        let mut stalled = Wakeups::default();
        for k in 0..100u64 {
            let due = t0 + ms(2 * k);
            let sent = if (10..60).contains(&k) {
                t0 + ms(120) + std::time::Duration::from_micros(10 * (k - 10))
            } else {
                due
            };
            let free = if k > 10 && k < 60 { sent } else { due };
            stalled.sent(due, free, sent);
        }
        assert_eq!(stalled.late, 50, "{stalled:?}");
        assert!(stalled.starved().is_some());
        // The database holds one call 100 ms: what fell due meanwhile goes out behind
        // it, each as soon as its lane is free. A 2 ms hiccup of the client's then is
        // late, and so is the one operation due in it (at 122 ms); the 49 held back by
        // the database are not.
        let mut backlog = Wakeups::default();
        for k in 0..100u64 {
            let due = t0 + ms(2 * k);
            let answered =
                t0 + ms(120) + std::time::Duration::from_micros(10 * k.saturating_sub(10));
            let (free, sent) = match k {
                11..30 => (answered, answered),
                30 => (answered, answered + ms(2)),
                31..62 => (answered + ms(2), answered + ms(2)),
                _ => (due, due),
            };
            backlog.sent(due, free, sent);
        }
        assert_eq!(backlog.late, 2, "{backlog:?}");
        assert_eq!(backlog.sent, 100);
    }
}
