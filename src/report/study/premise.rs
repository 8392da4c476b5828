//! What a figure rests on beyond its numbers, checked from the figure's own cells:
//! what its spec declares (nodes that add capacity, data beyond what a node may cache),
//! held or failed; and what every figure rests on (a warm server, a client with CPU to
//! spare, a host with CPU to spare), said where it failed. Never claimed.

use std::collections::BTreeMap;

use super::cells::CellResult;
use super::spec::{Dim, FigureSpec, Premise};
use crate::numbers::counted;
use crate::numbers::{bytes_text, thousands};

/// A premise checked: whether it held, and the sentence that says so.
pub(super) struct Checked {
    pub(super) held: bool,
    pub(super) said: String,
}

/// A client thread busy this share of the wall time or more may be the limit itself.
const CLIENT_BUSY: f64 = 0.8;

/// Each of `spec`'s premises checked against its cells, then what every figure rests
/// on (a warm server, a client and a host with CPU to spare) where it failed; none
/// where its cells cannot say (not run yet).
pub(super) fn check(spec: &FigureSpec, cells: &[CellResult]) -> Vec<Checked> {
    let drawn: Vec<&CellResult> = cells
        .iter()
        .filter(|c| spec.draws(&c.part) && c.counted && c.matches(&spec.only))
        .collect();
    let declared = spec.premises.iter().filter_map(|premise| match premise {
        Premise::NodesAddCapacity => nodes_add_capacity(spec, &drawn),
        Premise::DataBeyondCache => data_beyond_cache(&drawn),
    });
    declared
        .chain(server_warm(&drawn))
        .chain(client_spare(&drawn))
        .chain(host_spare(&drawn))
        .collect()
}

/// A host whose cores were this busy while a cell was measured (all its processes:
/// the servers, hatshop, the rest) had none to spare: what the cell measured is what
/// CPU each side needed on shared cores.
const HOST_SATURATED: f64 = 0.9;

/// Cells measured on a host with no CPU to spare: its cores nearly all in use, or
/// other processes (or a hypervisor) taking what a run warns of. Their numbers are the
/// shared host's: a latency or a winner there says which side needed less CPU, not
/// how the database behaves where it has cores of its own.
fn host_spare(drawn: &[&CellResult]) -> Option<Checked> {
    let short: Vec<String> = drawn
        .iter()
        .filter_map(|cell| {
            let host = cell.facts.as_ref()?.host_load.as_ref()?;
            let others = host.busy(false).is_some();
            (host.busy_share >= HOST_SATURATED || others).then(|| {
                format!(
                    "{}: its {} cores {:.0} % busy (other processes {:.0} %, stolen {:.0} %)",
                    cell.name(),
                    host.cores,
                    host.busy_share * 100.0,
                    host.others_share * 100.0,
                    host.steal_share * 100.0
                )
            })
        })
        .collect();
    (!short.is_empty()).then(|| Checked {
        held: false,
        said: format!(
            "Premise failed: the host is to have CPU to spare, but in {} its cores were {:.0} \
             % busy or more, or other processes took a share a run warns of ({}). There the \
             servers and the client waited for CPU: the numbers say which needed less of \
             it on these shared cores, not how the database runs on cores of its own.",
            counted(short.len() as u64, "cell"),
            HOST_SATURATED * 100.0,
            short.join("; ")
        ),
    })
}

/// Cells whose mean latency fell by a quarter or more from the first third of their
/// measured batches to the last, beyond the noise: the server was still warming up.
fn server_warm(drawn: &[&CellResult]) -> Option<Checked> {
    let warming: Vec<String> = drawn
        .iter()
        .filter_map(|cell| {
            let fell = crate::report::warming::latency_fell(&cell.intervals)?;
            let p = crate::numbers::p_value_text(fell.p_value);
            Some(format!(
                "{}: {:.2} ms in its first third, {:.2} ms in its last ({p})",
                cell.name(),
                fell.first_third_us / 1e3,
                fell.last_third_us / 1e3,
            ))
        })
        .collect();
    (!warming.is_empty()).then(|| Checked {
        held: false,
        said: format!(
            "Premise failed: a cell is to measure a warm server, but the mean latency of \
             {} fell by a quarter or more while it was measured ({}). The server was still \
             warming up: those numbers mix a cold server's with a warm one's.",
            counted(warming.len() as u64, "cell"),
            warming.join("; ")
        ),
    })
}

/// Cells whose client had a thread busy nearly all the time: their throughput may be
/// the client's limit, not the server's.
fn client_spare(drawn: &[&CellResult]) -> Option<Checked> {
    let busy: Vec<String> = drawn
        .iter()
        .filter_map(|cell| {
            let (thread, share) = cell.facts.as_ref()?.client_busiest.as_ref()?;
            (*share >= CLIENT_BUSY).then(|| {
                format!(
                    "{}: its {thread} thread busy {:.0} % of the time",
                    cell.name(),
                    share * 100.0
                )
            })
        })
        .collect();
    (!busy.is_empty()).then(|| Checked {
        held: false,
        said: format!(
            "Premise failed: the client is to have CPU to spare, but in {} a client thread \
             was busy {:.0} % of the measured time or more ({}). There the throughput may be \
             the client's limit, not the server's.",
            counted(busy.len() as u64, "cell"),
            CLIENT_BUSY * 100.0,
            busy.join("; ")
        ),
    })
}

/// A ring's throughput at one size, and what an operation cost its servers' CPU.
struct NodesPoint {
    nodes: u64,
    ops_s: f64,
    cpu_us_per_op: Option<f64>,
}

/// CPU per operation this many times higher at the most nodes than at the fewest: the
/// ring's own work, not the operations', took the nodes' CPU.
const COSTLIER: f64 = 1.5;

/// The drawn cells as rings of each series, by size; `None` where a cell has no node
/// count or no numbers (the figure is then not by nodes).
fn rings_by_series(
    spec: &FigureSpec,
    drawn: &[&CellResult],
) -> Option<BTreeMap<String, Vec<NodesPoint>>> {
    let mut by_series: BTreeMap<String, Vec<NodesPoint>> = BTreeMap::new();
    for cell in drawn {
        let nodes: u64 = cell.label("nodes")?.parse().ok()?;
        let series = match &spec.series {
            Dim::Label(key) => cell.label(key).unwrap_or(&cell.id).to_string(),
            Dim::EventType => cell.name(),
        };
        let all = cell.rows.iter().find(|r| r.event_type == "all")?;
        by_series.entry(series).or_default().push(NodesPoint {
            nodes,
            ops_s: all.ops_s,
            cpu_us_per_op: cell.facts.as_ref().and_then(|f| f.server_cpu_us_per_op),
        });
    }
    Some(by_series)
}

/// Each series' throughput at its fewest nodes against its most: a node that adds
/// capacity never leaves the ring slower.
fn nodes_add_capacity(spec: &FigureSpec, drawn: &[&CellResult]) -> Option<Checked> {
    let by_series = rings_by_series(spec, drawn)?;
    let mut fell = Vec::new();
    let mut grew = Vec::new();
    let mut costlier = false;
    for (series, mut points) in by_series {
        points.sort_by_key(|p| p.nodes);
        let (Some(first), Some(last)) = (points.first(), points.last()) else {
            continue;
        };
        if first.nodes == last.nodes {
            continue;
        }
        let mut said = format!(
            "{series}: {} ops/s on {} against {} on {}",
            thousands(first.ops_s.round() as u64),
            counted(first.nodes, "node"),
            thousands(last.ops_s.round() as u64),
            counted(last.nodes, "node")
        );
        if last.ops_s >= first.ops_s {
            grew.push(said);
            continue;
        }
        if let (Some(few), Some(many)) = (first.cpu_us_per_op, last.cpu_us_per_op)
            && many >= few * COSTLIER
        {
            costlier = true;
            said.push_str(&format!(
                ", the servers spending {} µs of CPU per operation against {}",
                thousands(few.round() as u64),
                thousands(many.round() as u64)
            ));
        }
        fell.push(said);
    }
    if fell.is_empty() && grew.is_empty() {
        return None;
    }
    Some(if fell.is_empty() {
        Checked {
            held: true,
            said: format!(
                "Premise held: nodes added capacity (throughput at the most nodes no lower \
                 than at the fewest; {}).",
                grew.join("; ")
            ),
        }
    } else {
        Checked {
            held: false,
            said: format!(
                "Premise failed: each node was to add capacity as another machine would, \
                 but throughput fell as nodes were added ({}). {}These latencies are of a \
                 ring that loses capacity as it grows, not of the study's machines; run the \
                 study with --server-url against machines of their own for that.",
                fell.join("; "),
                if costlier {
                    "Each operation cost the ring more CPU the more nodes it had: a node \
                     spent its share on work that grows with the nodes, not with the \
                     operations. "
                } else {
                    "The nodes share this host's disk and kernel. "
                }
            ),
        }
    })
}

/// The values loaded against the room a node had to cache them in: its memory (its
/// budget, or the host's where it has none) less what its own processes held while
/// measured. Data beyond that room cannot all be served from memory, and the nodes'
/// reads from the disk while measured say whether they were.
fn data_beyond_cache(drawn: &[&CellResult]) -> Option<Checked> {
    let facts: Vec<_> = drawn.iter().filter_map(|c| c.facts.as_ref()).collect();
    let data = facts.iter().map(|f| f.data_bytes).min()?;
    // Machines given by URL are the user's: their memory is not this host's to read.
    if data == 0 || facts.iter().any(|f| !f.started_here) {
        return None;
    }
    // The cell with the most room decides: data beyond its room is beyond every node's.
    let (room, memory_said) = facts
        .iter()
        .filter_map(|f| {
            let memory = f.node_memory_bytes.unwrap_or(f.memory_bytes);
            let held = f.nodes_seen.map_or(0, |seen| seen.rss_bytes);
            (memory > 0).then(|| (memory.saturating_sub(held), memory_of(f, held)))
        })
        .max_by_key(|(room, _)| *room)?;
    let budgeted = facts.iter().all(|f| f.node_memory_bytes.is_some());
    let read = facts
        .iter()
        .filter_map(|f| f.nodes_seen)
        .map(|seen| seen.disk_read_bytes)
        .min();
    let (data_said, room_said) = (bytes_text(data), bytes_text(room));
    let read_said = read.map_or(String::new(), |bytes| {
        format!(
            " The nodes read {} from the disk while measured (the cell that read least).",
            bytes_text(bytes)
        )
    });
    Some(if data > room {
        Checked {
            held: true,
            said: format!(
                "Premise held: the data ({data_said} of values) exceeds the {room_said} a \
                 node had left to cache it ({memory_said}), so reads reach the disk as the \
                 study's did.{read_said}"
            ),
        }
    } else {
        let instead = if budgeted {
            "a larger --scale loads more than that"
        } else {
            "no node had a memory budget; `hatshop server start --memory-per-node` \
             gives one"
        };
        Checked {
            held: false,
            said: format!(
                "Premise failed: the study's reads waited on the disk, its data beyond what a \
                 node could cache; here the data ({data_said} of values) fits in the \
                 {room_said} a node had left to cache it ({memory_said}), so reads can be \
                 served from memory and the study's disk-bound tails need not occur \
                 ({instead}).{read_said} Read these tails as an in-memory store's, not as \
                 the study's."
            ),
        }
    })
}

/// Where a node's room came from: "a memory budget of 768 MiB, 600 MiB of it held by
/// the node's processes".
fn memory_of(facts: &super::CellFacts, held: u64) -> String {
    let memory = match facts.node_memory_bytes {
        Some(budget) => format!("a memory budget of {}", bytes_text(budget)),
        None => format!("the host's {} of memory", bytes_text(facts.memory_bytes)),
    };
    if held == 0 {
        return memory;
    }
    format!(
        "{memory}, {} of it held by the node's processes",
        bytes_text(held)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::intervals::IntervalRow;
    use crate::report::study::{CellFacts, CellStatus, Metric, MetricRow, NodesSeen, Shape};
    use crate::verify::Verdict;

    fn ring(nodes: &str, ops_s: f64) -> CellResult {
        CellResult {
            id: format!("nodes-{nodes}"),
            part: "nodes".into(),
            labels: vec![
                ("store".into(), "Cassandra".into()),
                ("nodes".into(), nodes.into()),
            ],
            command: String::new(),
            dir: "d".into(),
            status: CellStatus::Ran(Some(Verdict::Exact)),
            counted: true,
            rows: vec![MetricRow {
                event_type: "all".into(),
                ops: 100,
                ops_s,
                ..MetricRow::default()
            }],
            facts: Some(CellFacts {
                data_bytes: 12_000_000,
                memory_bytes: 24 << 30,
                started_here: true,
                ..CellFacts::default()
            }),
            intervals: Vec::new(),
        }
    }

    fn by_nodes() -> FigureSpec {
        FigureSpec {
            part: "nodes".into(),
            shape: Shape::Lines,
            x: Dim::Label("nodes".into()),
            metric: Metric::Mean,
            premises: vec![Premise::NodesAddCapacity, Premise::DataBeyondCache],
            ..FigureSpec::default()
        }
    }

    #[test]
    fn a_ring_that_slows_as_it_grows_fails_the_premise_that_nodes_add_capacity() {
        let checked = check(
            &by_nodes(),
            &[ring("1", 356.0), ring("3", 200.0), ring("5", 125.0)],
        );
        assert!(!checked[0].held);
        assert!(
            checked[0].said.contains(
                "fell as nodes were added (Cassandra: 356 ops/s on 1 node against 125 on 5 nodes)"
            ),
            "{}",
            checked[0].said
        );
        assert!(
            checked[0]
                .said
                .contains("share this host's disk and kernel")
        );
        let checked = check(&by_nodes(), &[ring("1", 356.0), ring("5", 900.0)]);
        assert!(checked[0].held, "{}", checked[0].said);

        // The servers' CPU per operation says where the capacity went.
        let with_cpu = |nodes, ops_s, cpu| {
            let mut cell = ring(nodes, ops_s);
            if let Some(facts) = cell.facts.as_mut() {
                facts.server_cpu_us_per_op = Some(cpu);
            }
            cell
        };
        let checked = check(
            &by_nodes(),
            &[with_cpu("1", 682.0, 411.0), with_cpu("5", 124.0, 9_465.0)],
        );
        assert!(
            checked[0].said.contains(
                "(Cassandra: 682 ops/s on 1 node against 124 on 5 nodes, the servers spending \
                 411 µs of CPU per operation against 9,465). Each operation cost the ring more \
                 CPU the more nodes it had"
            ),
            "{}",
            checked[0].said
        );
        let checked = check(
            &by_nodes(),
            &[with_cpu("1", 682.0, 400.0), with_cpu("5", 124.0, 450.0)],
        );
        assert!(
            !checked[0].said.contains("µs of CPU"),
            "{}",
            checked[0].said
        );
    }

    #[test]
    fn data_that_fits_in_memory_fails_the_premise_of_disk_bound_tails() {
        let checked = check(&by_nodes(), &[ring("1", 1.0)]);
        // One node count: nothing to say of capacity; the data premise alone.
        assert_eq!(checked.len(), 1);
        assert!(!checked[0].held);
        assert!(
            checked[0].said.contains(
                "here the data (12 MB of values) fits in the 24 GiB a node had left to cache \
                 it (the host's 24 GiB of memory)"
            ),
            "{}",
            checked[0].said
        );
        assert!(checked[0].said.contains("no node had a memory budget"));
    }

    /// A 3-node cell whose nodes had `budget` each, held `held` themselves, read `read`
    /// from the disk, with `data` of values loaded.
    fn budgeted(data: u64, budget: u64, held: u64, read: u64) -> CellResult {
        let mut cell = ring("3", 1.0);
        cell.facts = Some(CellFacts {
            data_bytes: data,
            memory_bytes: 24 << 30,
            started_here: true,
            node_memory_bytes: Some(budget),
            nodes_seen: Some(NodesSeen {
                rss_bytes: held,
                disk_read_bytes: read,
            }),
            ..CellFacts::default()
        });
        cell
    }

    #[test]
    fn data_beyond_what_a_budgeted_node_has_left_holds_the_premise() {
        let checked = check(
            &by_nodes(),
            &[budgeted(600_000_000, 768 << 20, 600 << 20, 2_000_000_000)],
        );
        assert!(checked[0].held, "{}", checked[0].said);
        assert!(
            checked[0].said.contains(
                "the data (600 MB of values) exceeds the 168 MiB a node had left to cache it \
                 (a memory budget of 768 MiB, 600 MiB of it held by the node's processes)"
            ),
            "{}",
            checked[0].said
        );
        assert!(
            checked[0]
                .said
                .contains("The nodes read 1.86 GiB from the disk")
        );
        // The same budget with less data: the room holds it all.
        let checked = check(
            &by_nodes(),
            &[budgeted(100_000_000, 768 << 20, 600 << 20, 0)],
        );
        assert!(!checked[0].held);
        assert!(
            checked[0]
                .said
                .contains("a larger --scale loads more than that")
        );
    }

    /// A cell of `means` (ms), one interval of 100 operations each, with a client
    /// whose busiest thread was busy `busy` of the time.
    fn measured(means: &[f64], busy: f64) -> CellResult {
        let mut cell = ring("1", 100.0);
        cell.intervals = means
            .iter()
            .map(|ms| IntervalRow {
                event_type: "all".into(),
                ops: 100,
                mean_us: ms * 1e3,
                ..IntervalRow::default()
            })
            .collect();
        if let Some(facts) = cell.facts.as_mut() {
            facts.client_busiest = Some(("runtime".into(), busy));
        }
        cell
    }

    fn plain() -> FigureSpec {
        FigureSpec {
            part: "nodes".into(),
            premises: vec![],
            ..by_nodes()
        }
    }

    #[test]
    fn a_server_still_warming_and_a_busy_client_are_said_where_they_failed_only() {
        // Falls from 3.5 ms to about 2 ms over 12 intervals, as MariaDB measured 3 s
        // after it was set up.
        let cooling: Vec<f64> = (0..12)
            .map(|i| 3.5 - 1.5 * (i as f64 / 11.0) + 0.05 * (i % 2) as f64)
            .collect();
        let checked = check(&plain(), &[measured(&cooling, 0.95)]);
        assert_eq!(checked.len(), 2);
        assert!(checked.iter().all(|c| !c.held));
        assert!(
            checked[0]
                .said
                .contains("the mean latency of 1 cell fell by a quarter")
                && checked[0]
                    .said
                    .contains("3.32 ms in its first third, 2.23 ms in its last"),
            "{}",
            checked[0].said
        );
        assert!(
            checked[1]
                .said
                .contains("in 1 cell a client thread was busy 80 %")
                && checked[1]
                    .said
                    .contains("its runtime thread busy 95 % of the time"),
            "{}",
            checked[1].said
        );
        // A host whose cores were all in use: the numbers are the shared host's.
        let host = |busy_share: f64, others_share: f64| crate::host_load::HostLoad {
            cores: 2,
            busy_share,
            others_cpu_s: 0.0,
            others_share,
            steal_share: 0.0,
            servers_watched: true,
        };
        let on = |load| {
            let mut cell = measured(&[2.0; 12], 0.3);
            cell.facts.as_mut().unwrap().host_load = Some(load);
            cell
        };
        let checked = check(&plain(), &[on(host(0.96, 0.02))]);
        assert_eq!(checked.len(), 1);
        assert!(
            checked[0].said.contains("the host is to have CPU to spare")
                && checked[0]
                    .said
                    .contains("its 2 cores 96 % busy (other processes 2 %, stolen 0 %)"),
            "{}",
            checked[0].said
        );
        assert_eq!(check(&plain(), &[on(host(0.6, 0.3))]).len(), 1);
        assert!(check(&plain(), &[on(host(0.6, 0.05))]).is_empty());
        let steady: Vec<f64> = (0..12).map(|i| 2.0 + 0.1 * (i % 3) as f64).collect();
        assert!(check(&plain(), &[measured(&steady, 0.3)]).is_empty());
        // Too few batches to judge warmth.
        assert!(check(&plain(), &[measured(&cooling[..6], 0.3)]).is_empty());
    }
}
