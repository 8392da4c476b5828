//! The floor under the event source: what an event of a preset's measured phase costs
//! to make as the stream's contract fixes it, with nothing of the runner around it. The
//! generator (with the state hash each order write carries), the event's JSON line and
//! SHA-256 over that line (`plan_sha256`, equal to `sha256sum` of `hatshop generate`'s
//! file) are all the stream's bytes ask for; a run's event source does these and deals
//! the events out to lanes, so its cost per event cannot fall below this.
//!
//!   cargo run --release --example stream_floor -- [PRESET ...] [--events N]
//!
//! For each preset (default: hatshop-random race-pg-select), on one thread, best of
//! three rounds over N measured events (default 1,000,000; load and warm-up are made
//! first, untimed): the line's mean bytes; ns per event for all of it; SHA-256 alone,
//! over the same lines; and the state hash alone, an order's hash timed over the
//! orders the window creates times the share of events that carry one.

use std::hint::black_box;
use std::time::Instant;

use hatshop::workload::{Generator, Operation, Order, OrderEvent, Phase, PlanHasher};
use hatshop::workload::{WorkloadSpec, state};
use sha2::{Digest, Sha256};

const ROUNDS: usize = 3;
const USAGE: &str = "usage: stream_floor [PRESET ...] [--events N]";

fn main() {
    let (presets, events) = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(why) => {
            eprintln!("error: {why}; {USAGE}");
            std::process::exit(2);
        }
    };
    println!("| preset | line bytes | stream ns/event | of it SHA-256 | of it state hash |");
    println!("|---|---|---|---|---|");
    for preset in presets {
        let spec = match WorkloadSpec::load(&preset) {
            Ok(spec) => spec,
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        };
        let window = Window::of(&spec, events);
        let stream = best(|| time_stream(&spec, events));
        let sha = best(|| {
            time_ns(|| {
                black_box(Sha256::digest(&window.lines));
            })
        });
        let per_order = best(|| time_ns(|| window.orders.iter().for_each(hash_order)));
        let state = per_order / window.orders.len().max(1) as f64 * window.stated as f64;
        let per_event = |ns: f64| ns / window.events as f64;
        println!(
            "| {preset} | {:.0} | {:.0} | {:.0} | {:.0} |",
            window.lines.len() as f64 / window.events as f64,
            per_event(stream),
            per_event(sha),
            per_event(state),
        );
    }
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<(Vec<String>, u64), String> {
    let mut presets = Vec::new();
    let mut events = 1_000_000;
    while let Some(arg) = args.next() {
        if arg == "--events" {
            let n = args.next().ok_or("--events wants a count")?;
            events = n
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .ok_or(format!("--events {n}: not a positive count"))?;
        } else {
            presets.push(arg);
        }
    }
    if presets.is_empty() {
        presets = vec!["hatshop-random".into(), "race-pg-select".into()];
    }
    Ok((presets, events))
}

/// The measured window, made once and kept, to time its parts apart.
struct Window {
    events: u64,
    lines: Vec<u8>,
    /// The orders the window creates.
    orders: Vec<Order>,
    /// Events that carry a state hash.
    stated: u64,
}

impl Window {
    fn of(spec: &WorkloadSpec, events: u64) -> Window {
        let mut hasher = PlanHasher::new();
        let mut window = Window {
            events: 0,
            lines: Vec::new(),
            orders: Vec::new(),
            stated: 0,
        };
        let Some((first, rest)) = at_measure(spec) else {
            return window;
        };
        for event in std::iter::once(first).chain(rest).take(events as usize) {
            window.events += 1;
            window.lines.extend_from_slice(hasher.add(&event));
            match event.op {
                Operation::CreateOrder { order } => window.orders.push(*order),
                Operation::UpdateOrder { state, .. }
                | Operation::UpdateItems { state, .. }
                | Operation::UpdateStatus { state, .. } => {
                    window.stated += u64::from(state.is_some());
                }
                _ => {}
            }
        }
        window
    }
}

/// The spec's first measured event and the generator past it, the load and warm-up
/// before it made and dropped; none when the stream measures nothing.
fn at_measure(spec: &WorkloadSpec) -> Option<(OrderEvent, Generator)> {
    let mut generator = Generator::new(spec);
    let first = generator.find(|event| event.phase == Phase::Measure)?;
    Some((first, generator))
}

/// Generating, writing and hashing the window, as the event source does (its first
/// event made before the clock starts); ns in all.
fn time_stream(spec: &WorkloadSpec, events: u64) -> f64 {
    let Some((first, generator)) = at_measure(spec) else {
        return 0.0;
    };
    let mut hasher = PlanHasher::new();
    let start = Instant::now();
    hasher.add(&first);
    for event in generator.take(events as usize - 1) {
        black_box(hasher.add(&event));
    }
    black_box(hasher.finish());
    start.elapsed().as_nanos() as f64
}

fn hash_order(order: &Order) {
    black_box(state::of_order(order));
}

fn time_ns(work: impl FnOnce()) -> f64 {
    let start = Instant::now();
    work();
    start.elapsed().as_nanos() as f64
}

/// The least of [`ROUNDS`] timings: the noise of a shared machine only adds.
fn best(mut time: impl FnMut() -> f64) -> f64 {
    (0..ROUNDS).map(|_| time()).fold(f64::INFINITY, f64::min)
}
