//! A warm-up that ends on the clock (`--warmup 10s`, `--warmup settled`): the
//! generator's warm-up runs until its end says so, asked with how long ago the warm-up
//! began, then the measured events follow. The count it came to is what run.json
//! records, so `verify` and a replay regenerate the same stream.

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

/// Whether a warm-up has ended, asked with how long ago it began.
pub type WarmupEnds = Box<dyn FnMut(Duration) -> bool + Send>;

/// The generator of `spec`, its warm-up lasting from `began` until `ends` says so.
pub struct TimedWarmup {
    generator: Generator,
    ends: WarmupEnds,
    /// Set by whoever hands the events out, when the first warm-up event is on its way
    /// (not when it is generated: the load may still be draining then).
    began: Arc<OnceLock<Instant>>,
    count: WarmupCount,
    ended: bool,
}

impl TimedWarmup {
    /// The stream, its warm-up lasting `length`, and where its count will be.
    pub fn lasting(
        spec: &WorkloadSpec,
        length: Duration,
        began: Arc<OnceLock<Instant>>,
    ) -> (TimedWarmup, WarmupCount) {
        TimedWarmup::until(spec, Box::new(move |elapsed| elapsed >= length), began)
    }

    /// The stream, its warm-up lasting until `ends` says so, and where its count will
    /// be.
    pub fn until(
        spec: &WorkloadSpec,
        ends: WarmupEnds,
        began: Arc<OnceLock<Instant>>,
    ) -> (TimedWarmup, WarmupCount) {
        let mut generator = Generator::new(spec);
        generator.open_warmup();
        let count = WarmupCount::default();
        let stream = TimedWarmup {
            generator,
            ends,
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
            && self.began.get().is_some_and(|b| (self.ends)(b.elapsed()))
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
        let (mut timed, count) = TimedWarmup::lasting(&spec(), Duration::ZERO, began.clone());
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
        let (timed, count) = TimedWarmup::lasting(&spec(), Duration::from_secs(3600), began);
        let given = timed.take(80).count();
        assert_eq!(given, 80);
        assert_eq!(count.get(), 30);
    }
}
