#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what is missing, then runs
# formatting, lints and every test (tests that need a live server included).
set -euo pipefail
cd "$(dirname "$0")"

step() { printf '\n== %s\n' "$*"; }

step "toolchain"
if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo is not installed (install Rust with rustup first)" >&2
  exit 1
fi
if command -v rustup >/dev/null 2>&1; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi
cargo --version

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --locked --all-targets -- -D warnings

step "cargo test"
cargo test --locked --all-targets -- --include-ignored
