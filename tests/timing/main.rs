//! hatshop's timing seen from the outside, one test at a time (each measures time,
//! which another test's load on two cores would disturb):
//! - `known_delays`: latencies against a proxy that adds known delays to real servers;
//! - `open_loop`: rates swept, searched, ramped and staged.

use std::sync::{Mutex, MutexGuard};

#[path = "../common/mod.rs"]
mod common;
mod known_delays;
mod open_loop;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The lock every test here holds while it runs.
pub fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}
