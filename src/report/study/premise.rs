//! What a figure rests on beyond its numbers (nodes that add capacity, data beyond
//! what a node may cache), checked from the figure's own cells: held, or failed and
//! said above the figure, never claimed.

use std::collections::BTreeMap;

use super::cells::CellResult;
use super::spec::{Dim, FigureSpec, Premise};
use crate::report::table::thousands;

/// A premise checked: whether it held, and the sentence that says so.
pub(super) struct Checked {
    pub(super) held: bool,
    pub(super) said: String,
}

/// Each of `spec`'s premises checked against its cells; none where its cells cannot
/// say (not run yet).
pub(super) fn check(spec: &FigureSpec, cells: &[CellResult]) -> Vec<Checked> {
    let drawn: Vec<&CellResult> = cells
        .iter()
        .filter(|c| spec.draws(&c.part) && c.counted && c.matches(spec.only))
        .collect();
    spec.premises
        .iter()
        .filter_map(|premise| match premise {
            Premise::NodesAddCapacity => nodes_add_capacity(spec, &drawn),
            Premise::DataBeyondCache => data_beyond_cache(&drawn),
        })
        .collect()
}

/// Each series' throughput at its fewest nodes against its most: a node that adds
/// capacity never leaves the ring slower.
fn nodes_add_capacity(spec: &FigureSpec, drawn: &[&CellResult]) -> Option<Checked> {
    let mut by_series: BTreeMap<String, Vec<(u64, f64)>> = BTreeMap::new();
    for cell in drawn {
        let nodes: u64 = cell.label("nodes")?.parse().ok()?;
        let series = match spec.series {
            Dim::Label(key) => cell.label(key).unwrap_or(&cell.id).to_string(),
            Dim::EventType => cell.name(),
        };
        let all = cell.rows.iter().find(|r| r.event_type == "all")?;
        by_series
            .entry(series)
            .or_default()
            .push((nodes, all.ops_s));
    }
    let mut fell = Vec::new();
    let mut grew = Vec::new();
    for (series, mut points) in by_series {
        points.sort_by_key(|(nodes, _)| *nodes);
        let (Some(first), Some(last)) = (points.first(), points.last()) else {
            continue;
        };
        if first.0 == last.0 {
            continue;
        }
        let said = format!(
            "{series}: {} ops/s on {} against {} on {}",
            thousands(first.1.round() as u64),
            nodes_said(first.0),
            thousands(last.1.round() as u64),
            nodes_said(last.0)
        );
        if last.1 < first.1 {
            fell.push(said);
        } else {
            grew.push(said);
        }
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
                 but throughput fell as nodes were added ({}). The nodes share this host's \
                 disk and kernel, so these latencies are of a ring that loses capacity as \
                 it grows, not of the study's machines; run the study with --server-url \
                 against machines of their own for that.",
                fell.join("; ")
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
    let (data_said, room_said) = (bytes_said(data), bytes_said(room));
    let read_said = read.map_or(String::new(), |bytes| {
        format!(
            " The nodes read {} from the disk while measured (the cell that read least).",
            bytes_said(bytes)
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
        Some(budget) => format!("a memory budget of {}", bytes_said(budget)),
        None => format!("the host's {} of memory", bytes_said(facts.memory_bytes)),
    };
    if held == 0 {
        return memory;
    }
    format!(
        "{memory}, {} of it held by the node's processes",
        bytes_said(held)
    )
}

/// "1 node", "5 nodes".
fn nodes_said(n: u64) -> String {
    if n == 1 {
        "1 node".into()
    } else {
        format!("{n} nodes")
    }
}

/// "12 MB", "768 MiB", "1.5 GiB", "24 GiB".
fn bytes_said(bytes: u64) -> String {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    if gib >= 10.0 {
        format!("{gib:.0} GiB")
    } else if gib >= 1.0 {
        format!("{gib:.1} GiB")
    } else if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{:.0} MB", bytes as f64 / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::study::{CellFacts, FIGURE, Metric, MetricRow, NodesSeen, Shape};

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
            status: "finished".into(),
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

    const BY_NODES: FigureSpec = FigureSpec {
        part: "nodes",
        shape: Shape::Lines,
        x: Dim::Label("nodes"),
        metric: Metric::Mean,
        premises: &[Premise::NodesAddCapacity, Premise::DataBeyondCache],
        ..FIGURE
    };

    #[test]
    fn a_ring_that_slows_as_it_grows_fails_the_premise_that_nodes_add_capacity() {
        let checked = check(
            &BY_NODES,
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
        let checked = check(&BY_NODES, &[ring("1", 356.0), ring("5", 900.0)]);
        assert!(checked[0].held, "{}", checked[0].said);
    }

    #[test]
    fn data_that_fits_in_memory_fails_the_premise_of_disk_bound_tails() {
        let checked = check(&BY_NODES, &[ring("1", 1.0)]);
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
            &BY_NODES,
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
                .contains("The nodes read 1.9 GiB from the disk")
        );
        // The same budget with less data: the room holds it all.
        let checked = check(&BY_NODES, &[budgeted(100_000_000, 768 << 20, 600 << 20, 0)]);
        assert!(!checked[0].held);
        assert!(
            checked[0]
                .said
                .contains("a larger --scale loads more than that")
        );
    }
}
