//! Voldemort's vector clocks: one counter per node that coordinated a write, kept sorted
//! by node id as upstream's `VectorClock` keeps them, and a wall-clock timestamp that
//! only breaks ties between concurrent versions.

use std::cmp::Ordering;

/// A Voldemort vector clock: which node wrote a value how many times.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VectorClock {
    /// (node id, counter), sorted by node id, one entry per node.
    entries: Vec<(i32, i64)>,
    /// Milliseconds since the epoch of the last increment.
    timestamp: i64,
}

/// How one clock stands against another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occurred {
    Before,
    After,
    Equal,
    Concurrent,
}

impl VectorClock {
    /// A clock of these entries, sorted, one per node.
    pub fn from_entries(mut entries: Vec<(i32, i64)>, timestamp: i64) -> VectorClock {
        entries.sort_unstable();
        entries.dedup_by_key(|e| e.0);
        VectorClock { entries, timestamp }
    }

    /// (node id, counter), sorted by node id.
    pub fn entries(&self) -> &[(i32, i64)] {
        &self.entries
    }

    /// Milliseconds since the epoch of the last increment.
    pub fn timestamp(&self) -> i64 {
        self.timestamp
    }

    fn counter(&self, node: i32) -> i64 {
        self.entries
            .binary_search_by_key(&node, |e| e.0)
            .map_or(0, |i| self.entries[i].1)
    }

    /// This clock with `node`'s counter one higher: what the node coordinating a
    /// write sends.
    pub fn incremented(&self, node: i32, now_ms: i64) -> VectorClock {
        let mut entries = self.entries.clone();
        match entries.binary_search_by_key(&node, |e| e.0) {
            Ok(i) => entries[i].1 += 1,
            Err(i) => entries.insert(i, (node, 1)),
        }
        VectorClock {
            entries,
            timestamp: now_ms,
        }
    }

    /// The least clock that is at or after both: what a write that supersedes every
    /// version read must start from.
    pub fn merged(&self, other: &VectorClock) -> VectorClock {
        let mut entries = self.entries.clone();
        for &(node, counter) in &other.entries {
            match entries.binary_search_by_key(&node, |e| e.0) {
                Ok(i) => entries[i].1 = entries[i].1.max(counter),
                Err(i) => entries.insert(i, (node, counter)),
            }
        }
        VectorClock {
            entries,
            timestamp: self.timestamp.max(other.timestamp),
        }
    }

    /// Compares counters node by node (timestamps play no part).
    pub fn compare(&self, other: &VectorClock) -> Occurred {
        let (mut bigger, mut smaller) = (false, false);
        let nodes = self.entries.iter().chain(&other.entries).map(|e| e.0);
        for node in nodes {
            match self.counter(node).cmp(&other.counter(node)) {
                Ordering::Greater => bigger = true,
                Ordering::Less => smaller = true,
                Ordering::Equal => {}
            }
        }
        match (bigger, smaller) {
            (false, false) => Occurred::Equal,
            (true, false) => Occurred::After,
            (false, true) => Occurred::Before,
            (true, true) => Occurred::Concurrent,
        }
    }
}

/// The versions no other version supersedes (upstream's
/// `VectorClockInconsistencyResolver`), each once; `T` carries a clock.
pub fn latest<T>(versions: Vec<T>, clock: impl Fn(&T) -> &VectorClock) -> Vec<T> {
    let mut kept: Vec<T> = Vec::with_capacity(versions.len().min(2));
    'next: for version in versions {
        let mut i = 0;
        while i < kept.len() {
            match clock(&version).compare(clock(&kept[i])) {
                Occurred::Before | Occurred::Equal => continue 'next,
                Occurred::After => {
                    kept.swap_remove(i);
                }
                Occurred::Concurrent => i += 1,
            }
        }
        kept.push(version);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(entries: &[(i32, i64)]) -> VectorClock {
        VectorClock::from_entries(entries.to_vec(), 0)
    }

    #[test]
    fn clocks_order_as_upstream_orders_them() {
        let a = clock(&[(0, 1)]);
        let b = a.incremented(1, 5);
        assert_eq!(b.entries(), &[(0, 1), (1, 1)]);
        assert_eq!(a.compare(&b), Occurred::Before);
        assert_eq!(b.compare(&a), Occurred::After);
        assert_eq!(a.compare(&a.clone()), Occurred::Equal);
        let c = a.incremented(2, 6);
        assert_eq!(b.compare(&c), Occurred::Concurrent);
        let m = b.merged(&c);
        assert_eq!(m.entries(), &[(0, 1), (1, 1), (2, 1)]);
        assert_eq!(m.compare(&b), Occurred::After);
        assert_eq!(m.compare(&c), Occurred::After);
        assert_eq!(m.timestamp(), 6);
        assert_eq!(VectorClock::default().compare(&a), Occurred::Before);
    }

    #[test]
    fn the_latest_versions_drop_superseded_and_duplicate_ones() {
        let old = clock(&[(0, 1)]);
        let new = old.incremented(0, 1);
        let side = old.incremented(1, 1);
        let kept = latest(vec![old.clone(), new.clone(), new.clone()], |c| c);
        assert_eq!(kept, vec![new.clone()]);
        let kept = latest(vec![new.clone(), side.clone(), old], |c| c);
        assert_eq!(kept.len(), 2, "two concurrent versions both stay");
        assert!(kept.contains(&new) && kept.contains(&side));
    }
}
