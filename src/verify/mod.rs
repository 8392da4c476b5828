//! Verification: replay the run's event stream into a compact expected state, read the
//! database back, and count what is missing, extra, different or uncertain.
//!
//! Orders are compared by state hash; the ones that differ are then described field by
//! field from a second, narrow replay of whole orders. Key-value records are read back
//! a page at a time, so values never pile up in memory. A run that went on from tables
//! verified exact has only what its own events wrote read back ([`Touched`]).

mod expected;
mod keys;
mod orders;
mod report;
mod touched;

pub use expected::Expected;
pub use keys::KeyCheck;
pub use orders::{compare_orders, describe, row_of};
pub use report::{RestsOn, Verdict, VerifyReport};
pub use touched::Touched;
