//! `hatshop generate`: the event stream to a JSON Lines file (or standard output).

use anyhow::{Context, Result};

use crate::cli::{GenerateArgs, WarmupArg};
use crate::config::resolve_spec;
use crate::console::note;
use crate::files::{OutStream, closed_pipe};
use crate::numbers::thousands;
use crate::workload::{Generator, write_events};

/// Writes the stream to a JSON Lines file (or standard output), and its sha256.
pub fn run(args: &GenerateArgs) -> Result<()> {
    match args.stream.warmup {
        Some(WarmupArg::Time(time)) => anyhow::bail!(
            "--warmup {}: a written stream needs its warm-up as a count of events; a time is for `hatshop run`",
            humantime::format_duration(time)
        ),
        Some(WarmupArg::Settled) => anyhow::bail!(
            "--warmup settled: a written stream needs its warm-up as a count of events; waiting for latency to settle is for `hatshop run`"
        ),
        _ => {}
    }
    let spec = resolve_spec(&args.stream)?;
    let target = args.target();
    let mut out = OutStream::open(target)?;
    let (count, sha) = match write_events(Generator::new(&spec), &mut out.writer) {
        Ok(written) => written,
        Err(e) if closed_pipe(&e) => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot write {}", out.name)),
    };
    let name = out.name.clone();
    match out.finish() {
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(closed_pipe) => return Ok(()),
        finished => finished?,
    }
    note!(
        "wrote {} events of '{}' (seed {}) to {}\nsha256 {sha}",
        thousands(count),
        spec.name,
        spec.seed,
        name
    );
    Ok(())
}
