//! `hatshop generate`: the event stream to a JSON Lines file (or standard output).

use std::fs::File;
use std::io::{BufWriter, Write};

use anyhow::{Context, Result};

use crate::cli::{GenerateArgs, WarmupArg};
use crate::config::resolve_spec;
use crate::console::note;
use crate::report::table::thousands;
use crate::workload::{Generator, write_events};

/// Writes the stream to a JSON Lines file (or standard output), and its sha256.
pub fn run(args: &GenerateArgs) -> Result<()> {
    if let Some(WarmupArg::Time(time)) = args.stream.warmup {
        anyhow::bail!(
            "--warmup {}: a written stream needs its warm-up as a count of events; a time is for `hatshop run`",
            humantime::format_duration(time)
        );
    }
    let spec = resolve_spec(&args.stream)?;
    let target = args.target();
    let to_stdout = target.as_os_str() == "-";
    let mut out: Box<dyn Write> = if to_stdout {
        Box::new(BufWriter::with_capacity(1 << 20, std::io::stdout().lock()))
    } else {
        let file =
            File::create(target).with_context(|| format!("cannot create {}", target.display()))?;
        Box::new(BufWriter::with_capacity(1 << 20, file))
    };
    let (count, sha) = match write_events(Generator::new(&spec), &mut out) {
        Ok(written) => written,
        // A reader that stopped early (`generate - | head`) took what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot write {}", target.display())),
    };
    note!(
        "wrote {} events of '{}' (seed {}) to {}\nsha256 {sha}",
        thousands(count),
        spec.name,
        spec.seed,
        if to_stdout {
            "standard output".to_string()
        } else {
            target.display().to_string()
        }
    );
    Ok(())
}
