//! The event stream a run, a verify or a recover reads: generated from a spec, or read
//! from an events file from its start.

use anyhow::Result;

use super::EventStream;
use crate::workload::{EventSource, EventsReader, FillStates, Generator};

/// The events a run sends: a generated stream's from the first the database does not
/// hold (`held_events`), a file's from its start.
pub fn open_stream(source: &EventSource) -> Result<EventStream> {
    Ok(match source {
        EventSource::Generated { workload } => Box::new(Generator::new(workload).map(Ok)),
        EventSource::File(_) => open_whole_stream(source)?,
    })
}

/// The stream from its first event, the ones the database held when the run began
/// (`held_events`) included: what `verify` replays. A file whose order writes lack
/// their state hashes (hand-written) gets them filled in as it is read.
pub fn open_whole_stream(source: &EventSource) -> Result<EventStream> {
    Ok(match source {
        EventSource::Generated { workload } => Box::new(Generator::from_start(workload).map(Ok)),
        EventSource::File(info) => {
            // Swapped for a FIFO since it was checked, it would hold the open.
            let file = crate::workload::open_regular(&info.path)?;
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
