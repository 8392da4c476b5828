//! One set of checks that every store passes, a file per check:
//! - `stream`: what a store keeps (order events and key-value records) verifies
//!   exactly, and its op log, read by column name, agrees with the summary;
//! - `ownership`: a run drops only what hatshop made;
//! - `login`: a wrong password ends the run in one line that holds no password, and a
//!   store that checks no login refuses one;
//! - `gone`: a server out of reach, or killed mid-run for good, ends the run in one
//!   line, with every operation that ran in its folder;
//! - `garbled`: a server whose answers a proxy spoils ends the run whole, in time;
//! - `tls`: servers as production runs them (TLS required, password logins) are
//!   reached, with credentials from where each store's tools keep them.
//!
//! Where a store has two client stacks (its driver, and hatshop's own wire for runs of
//! key-value events alone, `kv_wire`), every check that makes key-value runs makes them
//! over both (`common::each_client_stack`).
//!
//! `null://` and SQLite run in every `cargo test`; the servers' checks need the servers
//! `./test.sh` starts (their URLs in HATSHOP_TEST_*), and fail, never skip, without
//! them. A store added to the one list is held at once to the checks that read that
//! list (a server out of reach, a login it does not check); a line in each file gives
//! it the rest.

#[path = "../common/mod.rs"]
mod common;
mod drivers;
mod garbled;
mod gone;
mod login;
mod ownership;
mod stream;
mod tls;

use std::sync::Mutex;

/// Tests that use a suite server's shared database take its lock.
pub static MYSQL: Mutex<()> = Mutex::new(());
pub static POSTGRES: Mutex<()> = Mutex::new(());
pub static REDIS: Mutex<()> = Mutex::new(());
pub static VOLDEMORT: Mutex<()> = Mutex::new(());
pub static SECURE_POSTGRES: Mutex<()> = Mutex::new(());
pub static SECURE_MYSQL: Mutex<()> = Mutex::new(());
pub static SECURE_REDIS: Mutex<()> = Mutex::new(());
