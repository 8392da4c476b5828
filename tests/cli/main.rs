//! The `hatshop` binary against SQLite and `null://` in temporary folders, a file per
//! subject:
//! - `commands`: each command's output, and bad input in one clear line;
//! - `outputs`: never over a file of a result folder, never a quiet exit 0;
//! - `golden_stream`: the stream's bytes pinned by their hashes;
//! - `op_log`: the op log proves itself;
//! - `full_disk`: a result folder on a disk that fills up;
//! - `shards_and_repeats`: shards merged into one folder, repeats and their spread;
//! - `verdicts`: a verdict that cannot be fooled;
//! - `stop`: never stuck, nothing lost, nothing leaked;
//! - `reuse_load`: a series on one load, each run going on from the last;
//! - `sealed`: a folder's statistics read only as hatshop wrote them.

mod commands;
#[path = "../common/mod.rs"]
mod common;
mod full_disk;
mod golden_stream;
mod op_log;
mod outputs;
mod reuse_load;
mod sealed;
mod shards_and_repeats;
mod stop;
mod verdicts;
