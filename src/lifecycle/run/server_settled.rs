//! The server's own work when measuring begins: a run waits, within a limit, until a
//! server hatshop started has finished what the load left it (Cassandra's memtable
//! flushes and compactions, `observe::settle`), so that the measured operations do
//! not pay for the load, and records how long it waited and what was left. A load of
//! 300,000 rows left a memtable flush running through the first 0.9 s of a measured
//! phase (bench/NOTES.md).

use std::sync::Arc;
use std::time::Duration;

use tokio::runtime::Handle;

use crate::cluster::ServerRecord;
use crate::console::note;
use crate::observe::settle::{Settled, settle};
use crate::observe::thread_pools;
use crate::result_dir::ServerWork;
use crate::runner::StopSignal;

/// The longest a run waits: a compaction of a large table can run for minutes, and the
/// run measures after this anyway, saying so.
const SETTLE_LIMIT: Duration = Duration::from_secs(30);

/// Waits for the server's background work; called on the source's thread just before
/// the first measured event. `None` where there is no server to ask, it could not be
/// read, or the run stopped meanwhile.
pub(super) type SettleServer = Box<dyn Fn() -> Option<ServerWork> + Send + Sync>;

/// Waits for `serving`'s nodes (a server hatshop started whose kind has thread pools
/// to read) until they settle or `stop` (Ctrl-C, SIGTERM, a failure) ends the run, and
/// says on the terminal when measuring begins on a server still busy.
pub(super) fn settle_server(
    serving: Option<&ServerRecord>,
    runtime: Handle,
    stop: Arc<StopSignal>,
) -> SettleServer {
    let nodes = serving.and_then(thread_pools::nodes_of);
    Box::new(move || {
        let nodes = nodes.clone()?;
        let settled = runtime.block_on(stop.unless_stopped(settle(nodes, SETTLE_LIMIT)))?;
        match settled {
            Settled::Quiet(took) => {
                if took >= Duration::from_secs(1) {
                    note!(
                        "waited {:.1} s before measuring for the server's flushes and compactions",
                        took.as_secs_f64()
                    );
                }
                Some(ServerWork {
                    waited_s: took.as_secs_f64(),
                    left: None,
                })
            }
            Settled::Busy(what) => {
                note!(
                    "the server was still busy after {} s ({what}): measuring anyway, as run.json's unmeasured.server_work says",
                    SETTLE_LIMIT.as_secs()
                );
                Some(ServerWork {
                    waited_s: SETTLE_LIMIT.as_secs_f64(),
                    left: Some(what),
                })
            }
            Settled::Unknown(why) => {
                note!("cannot tell whether the server has settled before measuring ({why})");
                None
            }
        }
    })
}
