//! One file per subcommand: each wires the modules together for its job.

pub mod compare;
pub mod find_max;
pub mod generate;
pub mod load;
pub mod merge;
pub mod prepare;
pub mod recover;
pub mod repeat;
pub mod run;
pub mod server;
pub mod shell_and_man;
pub mod study;
pub mod sweep;
pub mod verify;
pub mod workloads;

use anyhow::Result;

use crate::runner::EventStream;
use crate::workload::EventSource;
use crate::workload::{EventsReader, FillStates, Generator};

/// The event stream a source describes, from the start. A file whose order writes lack
/// their state hashes (hand-written) gets them filled in as it is read.
pub fn open_stream(source: &EventSource) -> Result<EventStream> {
    Ok(match source {
        EventSource::Generated { workload } => Box::new(Generator::new(workload).map(Ok)),
        EventSource::File(info) => {
            let file = std::fs::File::open(&info.path).map_err(|e| {
                anyhow::anyhow!("cannot open events file {}: {e}", info.path.display())
            })?;
            let reader = EventsReader::new(
                std::io::BufReader::with_capacity(1 << 20, file),
                &info.path.display().to_string(),
            );
            if info.has_states {
                Box::new(reader)
            } else {
                Box::new(FillStates::new(reader))
            }
        }
    })
}
