//! What hatshop shows of finished runs, read as a person or another tool would:
//! - `report`: the pages, comparisons and sweeps of real SQLite runs (their numbers,
//!   the HdrHistogram log, the CSVs, the layout in headless Chromium);
//! - `metrics`: `run --metrics` scraped by a real Prometheus.

#[path = "../common/mod.rs"]
mod common;
mod metrics;
mod report;
