//! A warm-up given as a time (`--warmup 10s`): the generator's warm-up runs until that
//! long after the warm-up began, then the measured events follow. The count it came to
//! is what run.json records, so `verify` and a replay regenerate the same stream.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use super::{Generator, OrderEvent, WorkloadSpec};

/// Warm-up events given out by a [`TimedWarmup`], final once it has ended or is dropped.
#[derive(Debug, Clone, Default)]
pub struct WarmupCount(Arc<AtomicU64>);

impl WarmupCount {
    /// The warm-up's length in events.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    fn set(&self, events: u64) {
        self.0.store(events, Ordering::Release);
    }
}

/// The generator of `spec`, its warm-up lasting `length` from `began`.
pub struct TimedWarmup {
    generator: Generator,
    length: Duration,
    /// Set by whoever hands the events out, when the first warm-up event is on its way
    /// (not when it is generated: the load may still be draining then).
    began: Arc<OnceLock<Instant>>,
    count: WarmupCount,
    ended: bool,
}

impl TimedWarmup {
    /// The stream, and where its warm-up count will be.
    pub fn new(
        spec: &WorkloadSpec,
        length: Duration,
        began: Arc<OnceLock<Instant>>,
    ) -> (TimedWarmup, WarmupCount) {
        let mut generator = Generator::new(spec);
        generator.open_warmup();
        let count = WarmupCount::default();
        let stream = TimedWarmup {
            generator,
            length,
            began,
            count: count.clone(),
            ended: false,
        };
        (stream, count)
    }

    /// The generator, where it stands now.
    pub fn generator(&self) -> &Generator {
        &self.generator
    }

    fn end(&mut self) {
        self.count.set(self.generator.end_warmup());
        self.ended = true;
    }
}

impl Iterator for TimedWarmup {
    type Item = OrderEvent;

    fn next(&mut self) -> Option<OrderEvent> {
        if !self.ended
            && self.generator.in_warmup()
            && self.began.get().is_some_and(|b| b.elapsed() >= self.length)
        {
            self.end();
        }
        self.generator.next()
    }
}

impl Drop for TimedWarmup {
    /// A run stopped during its warm-up ends it where it got to.
    fn drop(&mut self) {
        if !self.ended {
            self.end();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Phase, presets};

    fn spec() -> WorkloadSpec {
        let mut spec = presets::find("hatshop-random").unwrap();
        spec.initial_orders = 50;
        spec.warmup = 0;
        spec.events = 300;
        spec
    }

    /// Once ended, the stream is event for event the one of a counted warm-up as long.
    #[test]
    fn a_timed_warmup_gives_the_stream_of_its_count() {
        let began = Arc::new(OnceLock::new());
        let (mut timed, count) = TimedWarmup::new(&spec(), Duration::ZERO, began.clone());
        let mut events: Vec<OrderEvent> = timed.by_ref().take(170).collect();
        assert!(events.iter().skip(50).all(|e| e.phase == Phase::Warmup));
        began.set(Instant::now()).unwrap();
        events.extend(timed.by_ref());
        drop(timed);
        assert_eq!(count.get(), 120);
        let mut counted = spec();
        counted.warmup = 120;
        assert_eq!(events, Generator::new(&counted).collect::<Vec<_>>());
    }

    /// Stopped before it ended, the warm-up is as long as what was given out.
    #[test]
    fn a_warmup_dropped_early_counts_what_was_given() {
        let began = Arc::new(OnceLock::new());
        let (timed, count) = TimedWarmup::new(&spec(), Duration::from_secs(3600), began);
        let given = timed.take(80).count();
        assert_eq!(given, 80);
        assert_eq!(count.get(), 30);
    }
}
