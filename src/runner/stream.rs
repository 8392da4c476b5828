//! The event stream a run, a verify or a recover reads: generated from a spec, or read
//! from an events file from its start.

use anyhow::Result;

use super::EventStream;
use crate::workload::{EventSource, EventsReader, FillStates, Generator};

/// The event stream a source describes, from the start. A file whose order writes lack
/// their state hashes (hand-written) gets them filled in as it is read.
pub fn open_stream(source: &EventSource) -> Result<EventStream> {
    Ok(match source {
        EventSource::Generated { workload } => Box::new(Generator::new(workload).map(Ok)),
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
