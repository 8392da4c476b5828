//! One run's life in one place, for every command that runs, loads, verifies or
//! studies: the store reached and set up within deadlines (`reach`), its records
//! (`record`, `run_json`, `db_time`), the run from start to end (`run`), a bulk load
//! (`bulk_load`), the search for the highest rate under a bound (`find_max`), the servers
//! a series stands on and what becomes of them (`servers`), a run that goes on from what
//! an earlier one left (`held_load`), and the verdict on a database (`verify`). Its folder is named and claimed by
//! `result_dir::folder`. Commands are thin callers of it, and never call each other.

pub mod bulk_load;
mod db_time;
pub mod find_max;
pub mod held_load;
pub mod reach;
pub mod record;
pub mod run;
mod run_json;
pub mod series;
pub mod servers;
pub mod verify;
