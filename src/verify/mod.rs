//! Verification: replay the run's event stream into a compact expected state, read the
//! database back, and count what is missing, extra, different or uncertain.
//!
//! Orders are compared by state hash; the ones that differ are then described field by
//! field from a second, narrow replay of whole orders. Key-value records are read back
//! a page at a time, so values never pile up in memory.

mod expected;
mod keys;
mod orders;
mod report;

pub use expected::Expected;
pub use keys::KeyCheck;
pub use orders::{compare_orders, describe, row_of};
pub use report::{Verdict, VerifyReport};
