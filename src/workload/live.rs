//! The targets that exist at a point of the stream, in creation order, with what the
//! generator keeps of each: orders by id, keys by index, both handed out in increasing
//! order.
//!
//! While the ids run without a gap and none was removed (a load, then reads or more
//! inserts), the k-th live target is the k-th slot and its id follows from the first:
//! the table holds the values alone (4 bytes per key). The first gap or removal builds
//! the index: a Fenwick tree of "alive" counts over the slots gives the k-th live target
//! in O(log n), so zipfian and latest can rank by age while targets come and go, and a
//! removal finds its id by binary search. Deleted targets leave their slot until they
//! outnumber the live ones, then the table compacts: memory follows the live targets,
//! never the events (with the index, 12 bytes and a bit per slot beside the values).

/// Live targets by id, with their values; its memory follows the live count.
pub struct LiveTable<T> {
    values: Vec<T>,
    /// The id of slot 0 while there is no index.
    first: u64,
    /// Made at the first gap in the ids or the first removal.
    index: Option<Index>,
    live: usize,
}

struct Index {
    /// Ids by slot, increasing.
    ids: Vec<u64>,
    alive: Vec<u64>,
    /// Fenwick tree, 1-based: `tree[i]` counts live slots in `(i - lowbit(i), i]`.
    tree: Vec<u32>,
}

/// Dead slots tolerated before a compaction, at the least.
const MIN_DEAD: usize = 1024;

impl<T> Default for LiveTable<T> {
    fn default() -> Self {
        LiveTable {
            values: Vec::new(),
            first: 0,
            index: None,
            live: 0,
        }
    }
}

impl<T> LiveTable<T> {
    /// Live targets.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no target is live.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Adds a target; ids come in increasing order.
    pub fn push(&mut self, id: u64, value: T) {
        if self.values.len() == self.values.capacity() {
            // Grow by an eighth, not double: at millions of targets, doubling would
            // leave hundreds of megabytes unused.
            let more = (self.values.len() / 8).max(1024);
            self.values.reserve_exact(more);
            if let Some(index) = &mut self.index {
                index.ids.reserve_exact(more);
            }
        }
        match self.index {
            None if self.values.is_empty() => self.first = id,
            None if id == self.first + self.values.len() as u64 => {}
            _ => self.index_mut().push(id),
        }
        self.values.push(value);
        self.live += 1;
    }

    /// The index, made from the gapless ids when there is none yet.
    fn index_mut(&mut self) -> &mut Index {
        let (first, n) = (self.first, self.values.len() as u64);
        let capacity = self.values.capacity();
        self.index.get_or_insert_with(|| {
            let mut ids = Vec::with_capacity(capacity);
            ids.extend(first..first + n);
            Index::all_alive(ids)
        })
    }

    fn slot_of(&self, id: u64) -> Option<usize> {
        match &self.index {
            None => (id >= self.first && id - self.first < self.values.len() as u64)
                .then(|| (id - self.first) as usize),
            Some(index) => index
                .ids
                .binary_search(&id)
                .ok()
                .filter(|&slot| index.is_alive(slot)),
        }
    }

    /// The live target of rank `k` (0 = the oldest), `k < len()`: its id and value.
    pub fn nth_mut(&mut self, k: usize) -> (u64, &mut T) {
        debug_assert!(k < self.live);
        let (slot, id) = match &self.index {
            // No index: the rank is the slot, and the id follows from it. Spares a
            // tree walk (a cache miss per level: 6 % of the client's CPU samples on
            // race-cql-read, by perf) and the id's cache line.
            None => (k, self.first + k as u64),
            Some(index) => {
                let slot = index.slot_of_rank(k, self.live);
                (slot, index.ids[slot])
            }
        };
        (id, &mut self.values[slot])
    }

    /// The live targets, oldest first: their ids and values.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &T)> {
        self.values
            .iter()
            .enumerate()
            .filter_map(move |(slot, value)| match &self.index {
                None => Some((self.first + slot as u64, value)),
                Some(index) => index.is_alive(slot).then(|| (index.ids[slot], value)),
            })
    }

    /// Removes a target; an id that is not live changes nothing.
    pub fn remove(&mut self, id: u64) {
        let Some(slot) = self.slot_of(id) else {
            return;
        };
        self.index_mut().kill(slot);
        self.live -= 1;
        let dead = self.values.len() - self.live;
        if dead > self.live && dead > MIN_DEAD {
            self.compact();
        }
    }

    /// Drops the dead slots, keeping creation order, and rebuilds the index: O(n), once
    /// the dead outnumber the live, so O(1) per removal over time.
    fn compact(&mut self) {
        let Some(index) = self.index.take() else {
            return; // no index, no dead slot
        };
        let mut slot = 0;
        self.values.retain(|_| {
            let keep = index.is_alive(slot);
            slot += 1;
            keep
        });
        self.values.shrink_to_fit();
        let mut ids: Vec<u64> = (0..index.ids.len())
            .filter(|&slot| index.is_alive(slot))
            .map(|slot| index.ids[slot])
            .collect();
        ids.shrink_to_fit();
        self.index = Some(Index::all_alive(ids));
    }
}

impl Index {
    /// The index of slots that are all alive.
    fn all_alive(ids: Vec<u64>) -> Index {
        let n = ids.len();
        let mut alive = vec![u64::MAX; n.div_ceil(64)];
        if !n.is_multiple_of(64) {
            *alive.last_mut().expect("n > 0") = (1 << (n % 64)) - 1;
        }
        let mut tree = vec![1; n + 1];
        tree[0] = 0;
        for i in 1..=n {
            let parent = i + (i & i.wrapping_neg());
            if parent <= n {
                tree[parent] += tree[i];
            }
        }
        Index { ids, alive, tree }
    }

    fn push(&mut self, id: u64) {
        debug_assert!(
            self.ids.last().is_none_or(|&last| last < id),
            "ids increase"
        );
        self.ids.push(id);
        let slot = self.tree.len(); // 1-based position of the new slot
        // The new node covers (slot - lowbit, slot]: itself plus the nodes below it.
        let low = slot & slot.wrapping_neg();
        let mut sum = 1u32;
        let mut j = slot - 1;
        while j > slot - low {
            sum += self.tree[j];
            j -= j & j.wrapping_neg();
        }
        self.tree.push(sum);
        let bit = slot - 1;
        if bit / 64 >= self.alive.len() {
            self.alive.push(0);
        }
        self.alive[bit / 64] |= 1 << (bit % 64);
    }

    fn is_alive(&self, slot: usize) -> bool {
        self.alive[slot / 64] & (1 << (slot % 64)) != 0
    }

    fn kill(&mut self, slot: usize) {
        self.alive[slot / 64] &= !(1 << (slot % 64));
        let mut i = slot + 1;
        while i < self.tree.len() {
            self.tree[i] -= 1;
            i += i & i.wrapping_neg();
        }
    }

    fn slot_of_rank(&self, k: usize, live: usize) -> usize {
        if live == self.ids.len() {
            // No dead slot (compacted): the rank is the slot.
            return k;
        }
        let mut remaining = k as u32;
        let mut pos = 0usize;
        let mut step = (self.tree.len() - 1).next_power_of_two();
        while step > 0 {
            let next = pos + step;
            if next < self.tree.len() && self.tree[next] <= remaining {
                remaining -= self.tree[next];
                pos = next;
            }
            step >>= 1;
        }
        pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_of_dense_and_gapped_ids() {
        let mut dense = LiveTable::default();
        for id in 10..20u64 {
            dense.push(id, id);
        }
        for k in 0..10 {
            assert_eq!(dense.nth_mut(k), (10 + k as u64, &mut (10 + k as u64)));
        }
        assert!(dense.index.is_none(), "gapless ids need no index");
        let mut gapped = LiveTable::default();
        for id in [1u64, 3, 4] {
            gapped.push(id, id);
        }
        let got: Vec<u64> = (0..3).map(|k| gapped.nth_mut(k).0).collect();
        assert_eq!(got, [1, 3, 4]);
    }

    #[test]
    fn the_index_is_made_at_the_first_gap_or_removal_and_agrees_with_the_slots() {
        let table = |ids: &[u64]| {
            let mut table = LiveTable::default();
            for &id in ids {
                table.push(id, id * 10);
            }
            table
        };
        let ranks = |table: &mut LiveTable<u64>| -> Vec<(u64, u64)> {
            (0..table.len())
                .map(|k| {
                    let (id, value) = table.nth_mut(k);
                    (id, *value)
                })
                .collect()
        };
        // A gap after gapless ids: the ids before it are kept in the index.
        let mut gap = table(&[5, 6, 7, 9, 10]);
        assert!(gap.index.is_some());
        assert_eq!(
            ranks(&mut gap),
            [(5, 50), (6, 60), (7, 70), (9, 90), (10, 100)]
        );
        assert_eq!((gap.slot_of(8), gap.slot_of(9)), (None, Some(3)));
        // A removal from gapless ids, then more of them.
        let mut removed = table(&[5, 6, 7]);
        removed.remove(4);
        removed.remove(8);
        assert!(
            removed.index.is_none(),
            "removing an id never pushed changes nothing"
        );
        removed.remove(6);
        removed.push(8, 80);
        assert_eq!(ranks(&mut removed), [(5, 50), (7, 70), (8, 80)]);
        removed.remove(6);
        assert_eq!(
            removed.len(),
            3,
            "a second removal of the same id changes nothing"
        );
        // Removing every one of them, then pushing again.
        for id in [5, 7, 8] {
            removed.remove(id);
        }
        assert!(removed.is_empty());
        removed.push(20, 200);
        assert_eq!(ranks(&mut removed), [(20, 200)]);
    }

    #[test]
    fn ranks_follow_creation_order_through_removals_and_compactions() {
        let mut table = LiveTable::default();
        let mut model: Vec<u64> = Vec::new();
        let mut state = 17u64;
        for id in 1..=50_000u64 {
            table.push(id, id * 10);
            model.push(id);
            // Remove more than is added now and then, so the table compacts.
            let removals = if id % 1000 < 600 { 1 } else { 0 };
            for _ in 0..removals {
                if crate::workload::splitmix64(&mut state).is_multiple_of(2) && !model.is_empty() {
                    let k = (crate::workload::splitmix64(&mut state) % model.len() as u64) as usize;
                    table.remove(model.remove(k));
                }
            }
        }
        assert_eq!(table.len(), model.len());
        assert!(
            table.values.len() < 2 * model.len() + MIN_DEAD + 2,
            "compacted"
        );
        for (k, id) in model.iter().enumerate() {
            let (got, value) = table.nth_mut(k);
            assert_eq!((got, *value), (*id, id * 10), "rank {k}");
        }
        assert_eq!(table.slot_of(0), None);
        // Once compacted with no dead slot left, ranks take the short way.
        table.compact();
        assert_eq!(table.live, table.values.len());
        for (k, id) in model.iter().enumerate() {
            assert_eq!(table.nth_mut(k).0, *id, "rank {k} after compacting");
        }
        assert_eq!(table.slot_of(99_999), None);
    }
}
