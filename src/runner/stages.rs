//! `--stages 30s:1000,1m:5000,30s:0`: an open loop whose rate moves in straight lines
//! from one target to the next, as k6's ramping arrival rate does. Each operation is
//! due when the area under the rate line reaches its slot, so the stages send exactly
//! the operations their lines hold.

use std::sync::Arc;
use std::time::Duration;

/// The most stages one run takes.
pub const MOST_STAGES: usize = 16;

/// The stages of a run: the rate it starts at, then for each stage the time it ends
/// (seconds into the measured phase) and the rate it reaches then.
#[derive(Debug, Clone, PartialEq)]
pub struct Stages {
    from: f64,
    ends: Arc<[(f64, f64)]>,
}

impl Stages {
    /// Stages starting at `from` operations per second, each (how long, the rate it
    /// reaches); one line on a bad list.
    pub fn new(from: f64, stages: &[(Duration, f64)]) -> Result<Stages, String> {
        if stages.is_empty() || stages.len() > MOST_STAGES {
            return Err(format!("--stages takes 1 to {MOST_STAGES} stages"));
        }
        if stages.iter().any(|(length, _)| length.is_zero()) {
            return Err("a stage lasts longer than 0 s".into());
        }
        let mut at = 0.0;
        let ends = stages
            .iter()
            .map(|(length, to)| {
                at += length.as_secs_f64();
                (at, *to)
            })
            .collect();
        let stages = Stages { from, ends };
        if stages.warmup_rate() == 0.0 {
            return Err("every stage's rate is 0: no operation would be sent".into());
        }
        Ok(stages)
    }

    /// The rate the measured phase starts at.
    pub fn from(&self) -> f64 {
        self.from
    }

    /// Each stage as (its length in seconds, the rate it reaches).
    pub fn each(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        let mut began = 0.0;
        self.ends.iter().map(move |&(end, to)| {
            let length = end - began;
            began = end;
            (length, to)
        })
    }

    /// How long the stages take: the measured phase's length.
    pub fn length(&self) -> Duration {
        Duration::from_secs_f64(self.ends[self.ends.len() - 1].0)
    }

    /// The warm-up's rate: the start, or the first rate above 0.
    pub fn warmup_rate(&self) -> f64 {
        std::iter::once(self.from)
            .chain(self.ends.iter().map(|(_, to)| *to))
            .find(|rate| *rate > 0.0)
            .unwrap_or(0.0)
    }

    /// When the `slot`-th measured operation is due, in seconds after measuring began.
    /// A slot past what the stages hold is due after they end (never, in the run).
    pub fn due_s(&self, slot: u64) -> f64 {
        let k = slot as f64;
        let (mut began, mut rate, mut held) = (0.0, self.from, 0.0);
        for &(end, to) in self.ends.iter() {
            let length = end - began;
            let area = (rate + to) / 2.0 * length;
            if k < held + area {
                return began + within(k - held, rate, (to - rate) / length);
            }
            held += area;
            (began, rate) = (end, to);
        }
        // Past the last stage: the run's deadline ends it first.
        began + 1.0
    }
}

/// The time into a line starting at `rate` and climbing `slope` per second at which
/// its area reaches `k`: solves rate·t + slope·t²/2 = k.
fn within(k: f64, rate: f64, slope: f64) -> f64 {
    if slope == 0.0 {
        return k / rate;
    }
    (-rate + (rate * rate + 2.0 * slope * k).max(0.0).sqrt()) / slope
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn stages_send_the_operations_their_lines_hold() {
        // 0 → 1,000 over 10 s (5,000 ops), 1,000 for 10 s (10,000), 1,000 → 0 over 10 s.
        let stages = Stages::new(
            0.0,
            &[(secs(10), 1000.0), (secs(10), 1000.0), (secs(10), 0.0)],
        )
        .unwrap();
        assert_eq!(stages.length(), secs(30));
        assert_eq!(stages.warmup_rate(), 1000.0);
        let due = |k| stages.due_s(k);
        assert!((due(5_000) - 10.0).abs() < 1e-9);
        assert!((due(10_000) - 15.0).abs() < 1e-9);
        assert!((due(15_000) - 20.0).abs() < 1e-9);
        // Half the last stage's 5,000 are sent in its first 2.93 s (1 − 1/√2 of it).
        assert!((due(17_500) - (30.0 - 10.0 / 2f64.sqrt())).abs() < 1e-6);
        assert!((1..19_999).all(|k| due(k) > due(k - 1)));
        // What the lines do not hold is due after the stages end.
        assert!(due(20_000) > 30.0);
        let stages: Vec<(f64, f64)> = stages.each().collect();
        assert_eq!(stages, [(10.0, 1000.0), (10.0, 1000.0), (10.0, 0.0)]);
    }

    #[test]
    fn a_stage_list_that_sends_nothing_is_refused() {
        assert!(Stages::new(0.0, &[(secs(5), 0.0)]).is_err());
        assert!(Stages::new(10.0, &[(Duration::ZERO, 5.0)]).is_err());
        assert!(Stages::new(10.0, &[]).is_err());
        let many = vec![(secs(1), 1.0); MOST_STAGES + 1];
        assert!(Stages::new(1.0, &many).is_err());
    }
}
