//! Helpers shared by the black-box tests: the binary in a folder, JSON files.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

/// `hatshop` run in `dir`, without a HATSHOP_DB from the environment.
pub fn hatshop(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("hatshop").unwrap();
    cmd.current_dir(dir).env_remove("HATSHOP_DB");
    cmd
}

pub fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
