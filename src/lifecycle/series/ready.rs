//! The server a cell runs on, made ready: started or found, within its budget, warmed
//! up once, and every server settled before the cell measures.

use std::time::Duration;

use anyhow::Result;

use super::{Series, run_one};
use crate::console::note;
use crate::interrupt;
use crate::lifecycle::servers::ServerGuard;
use crate::studies::cells::{Cell, Verb, with_query};

/// Makes a server of `servers` the one `cell` needs, within its budget, warmed up, and
/// every server settled (no background work left from the cells before), and gives
/// the cell's URL; `None` when interrupted. One after the other (`side_by_side`
/// false), the last server is stopped before the next starts: they share the cores.
/// Side by side, a server gives way only to one of its own kind. The user's own
/// machines, given by URL, are only used.
pub(super) async fn ready_server(
    series: &Series<'_>,
    servers: &mut Vec<ServerGuard>,
    side_by_side: bool,
    cell: &Cell,
) -> Result<Option<String>> {
    let need = &cell.need;
    let given = need.url.as_deref().or_else(|| {
        series
            .server_url
            .iter()
            .find(|(name, nodes, _)| *name == need.server && *nodes == need.nodes)
            .map(|(_, _, url)| url.as_str())
    });
    if let Some(url) = given {
        return Ok(Some(with_query(url, &need.query)));
    }
    let found = servers
        .iter()
        .position(|s| s.serves(&need.server, need.nodes, &need.set));
    let at = match found {
        Some(at) => at,
        None => {
            // Stopped in the order they started.
            let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(servers)
                .into_iter()
                .partition(|s| !side_by_side || s.name() == need.server);
            drop(gone);
            *servers = kept;
            let started = if need.fresh {
                ServerGuard::fresh(series.home, &need.server, need.nodes).await
            } else {
                ServerGuard::find_or_start(
                    series.home,
                    &need.server,
                    need.nodes,
                    &need.set,
                    series.install,
                )
                .await
            };
            match started {
                Ok(started) => servers.push(started),
                Err(_) if interrupt::requested() => return Ok(None),
                Err(e) => return Err(e),
            }
            servers.len() - 1
        }
    };
    let serving = &mut servers[at];
    serving.budget(need.budget).await?;
    // A budget of a fraction of a core can starve a node until gossip marks it down.
    serving.wait_ring().await;
    let url = serving.url_with(&need.query);
    // At least the series' warm-up, and until the server has been up long enough not
    // to be cold, so that its first cell does not measure a cold server.
    let cold = Duration::from_secs_f64(crate::result_dir::warmth::COLD_FOR_S);
    let up = serving.up_for().unwrap_or(cold);
    let length = series.warm_up.max(cold.saturating_sub(up));
    if !serving.warmed && !length.is_zero() {
        if !warm_up(series, serving.name(), cell, &url, length).await {
            return Ok(None);
        }
        serving.warmed = true;
    }
    // A server idle beside this cell may still be compacting what its own cell left.
    for server in servers.iter() {
        server.settle().await;
    }
    if interrupt::requested() {
        return Ok(None);
    }
    Ok(Some(url))
}

/// Warms a fresh server up with `cell`'s own load for `length`, unmeasured,
/// into a folder thrown away after; false when interrupted. A warm-up that fails is
/// said and the cells go on: they measure what they find.
async fn warm_up(
    series: &Series<'_>,
    server: &str,
    cell: &Cell,
    url: &str,
    length: Duration,
) -> bool {
    let secs = length.as_secs_f64().ceil().max(1.0) as u64;
    match cell.verb {
        Verb::Run | Verb::Search => note!(
            "warming {server} up first: {} s of the load of {}",
            secs,
            cell.name()
        ),
        Verb::Load => note!(
            "warming {server} up first: one pass of the load of {}",
            cell.name()
        ),
    }
    let scratch = series.dir.join(".warm-up");
    let _ = std::fs::remove_dir_all(&scratch);
    let argv = cell.warm_up_argv(url, &scratch, &series.home.root, secs);
    let ran = run_one(&argv).await;
    let _ = std::fs::remove_dir_all(&scratch);
    if interrupt::requested() {
        return false;
    }
    if let Err(e) = ran {
        note!("the warm-up of {server} did not run to its end ({e:#}); the cells go on");
    }
    true
}
