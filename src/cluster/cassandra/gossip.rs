//! What a node's log says of its peers: gossip writes "/PEER:7000 is now UP" (or DOWN)
//! each time it changes its mind, and the last word on a peer is the node's view of it.
//! A log is read line by line, so a long-running node's log costs time, never memory.

use std::io::{BufRead, BufReader};
use std::path::Path;

use super::GOSSIP_PORT;
use crate::cluster::NodeRecord;

/// Which of `peers` (hosts) the log at `log_file` last said is up, in their order; a
/// peer the log never mentions is not up, nor is any where the log cannot be read.
pub(super) fn peers_up(log_file: &Path, peers: &[&str]) -> Vec<bool> {
    let mut up = vec![false; peers.len()];
    let Ok(file) = std::fs::File::open(log_file) else {
        return up;
    };
    let marks: Vec<String> = peers
        .iter()
        .map(|peer| format!("/{peer}:{GOSSIP_PORT} is now "))
        .collect();
    for line in BufReader::new(file).split(b'\n').map_while(Result::ok) {
        let line = String::from_utf8_lossy(&line);
        for (mark, up) in marks.iter().zip(up.iter_mut()) {
            if let Some(at) = line.find(mark.as_str()) {
                let word = &line[at + mark.len()..];
                if word.starts_with("UP") {
                    *up = true;
                } else if word.starts_with("DOWN") {
                    *up = false;
                }
            }
        }
    }
    up
}

/// The peers some node of a running ring does not see up, as its own log last said:
/// `node 2 sees 127.0.0.13 down`, one clause per node; `None` where every node sees
/// every other up. Gossip can mark a starved node down after the ring started whole
/// (a CPU budget of a fraction of a core), and a cell on such a ring cannot reach its
/// consistency level.
pub fn peers_unseen(nodes: &[NodeRecord]) -> Option<String> {
    let unseen: Vec<String> = nodes
        .iter()
        .filter_map(|node| {
            let peers: Vec<&str> = nodes
                .iter()
                .filter(|peer| peer.node != node.node)
                .map(|peer| peer.host.as_str())
                .collect();
            let up = peers_up(&node.log_file, &peers);
            let down: Vec<&str> = peers
                .iter()
                .zip(up)
                .filter(|(_, up)| !up)
                .map(|(peer, _)| *peer)
                .collect();
            (!down.is_empty()).then(|| format!("node {} sees {} down", node.node, down.join(", ")))
        })
        .collect();
    (!unseen.is_empty()).then(|| unseen.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::cassandra::CQL_PORT;
    use crate::cluster::node_record;

    #[test]
    fn a_ring_has_gaps_where_a_node_last_saw_a_peer_down() {
        let dir = tempfile::tempdir().unwrap();
        let node = |number: usize, log: &str| {
            let log_file = dir.path().join(format!("node{number}.log"));
            std::fs::write(&log_file, log).unwrap();
            let host = format!("127.0.0.1{number}");
            node_record(
                number,
                &host,
                CQL_PORT,
                1,
                dir.path(),
                dir.path().join("data"),
                log_file,
            )
        };
        let up = |peer: usize| format!("INFO Node /127.0.0.1{peer}:{GOSSIP_PORT} is now UP\n");
        let down = |peer: usize| format!("INFO Node /127.0.0.1{peer}:{GOSSIP_PORT} is now DOWN\n");
        let whole = [node(1, &up(2)), node(2, &up(1))];
        assert_eq!(peers_unseen(&whole), None);
        let gap = [node(1, &(up(2) + &down(2))), node(2, &up(1))];
        assert_eq!(
            peers_unseen(&gap).as_deref(),
            Some("node 1 sees 127.0.0.12 down")
        );
        // A node whose log never said a peer is up does not see it yet.
        let young = [node(1, ""), node(2, &up(1))];
        assert_eq!(
            peers_unseen(&young).as_deref(),
            Some("node 1 sees 127.0.0.12 down")
        );
    }

    #[test]
    fn a_peer_is_up_when_its_last_word_is_up() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("system.log");
        std::fs::write(
            &log,
            "x /127.0.0.12:7000 is now UP\ny /127.0.0.12:7000 is now DOWN\n\
             z /127.0.0.13:7000 is now UP\n/127.0.0.1:7000 is now UP\n",
        )
        .unwrap();
        let peers = ["127.0.0.12", "127.0.0.13", "127.0.0.14", "127.0.0.1"];
        assert_eq!(peers_up(&log, &peers), [false, true, false, true]);
        let missing = dir.path().join("none.log");
        assert_eq!(peers_up(&missing, &peers[..1]), [false]);
    }
}
