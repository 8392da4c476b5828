//! The targets that exist at a point of the stream, in creation order: orders by id
//! (1, 2, 3, …) or keys by index (0, 1, 2, …), both handed out in increasing order.
//!
//! A Fenwick tree of "alive" counts over every id ever created gives the k-th live one
//! in O(log n), so zipfian and latest can rank by age while targets come and go. It costs
//! 4 bytes per id ever created (a `Vec::remove` on a list of live ids cost O(n) per delete).

pub struct LiveSet {
    /// The id of slot 0.
    base: u64,
    /// Fenwick tree, 1-based: `tree[i]` counts live slots in `(i - lowbit(i), i]`.
    tree: Vec<u32>,
    alive: Vec<u64>,
    live: usize,
}

impl LiveSet {
    pub fn new(first_id: u64) -> Self {
        LiveSet {
            base: first_id,
            tree: vec![0],
            alive: Vec::new(),
            live: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Adds the next id (ids come in order, without gaps).
    pub fn push(&mut self, id: u64) {
        let slot = self.tree.len(); // 1-based position of the new slot
        debug_assert_eq!(id, self.base + slot as u64 - 1, "ids come in order");
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
        self.live += 1;
    }

    pub fn contains(&self, id: u64) -> bool {
        let Some(bit) = id.checked_sub(self.base).map(|b| b as usize) else {
            return false;
        };
        bit < self.tree.len() - 1 && self.alive[bit / 64] & (1 << (bit % 64)) != 0
    }

    pub fn remove(&mut self, id: u64) {
        if !self.contains(id) {
            return;
        }
        let bit = (id - self.base) as usize;
        self.alive[bit / 64] &= !(1 << (bit % 64));
        let mut i = bit + 1;
        while i < self.tree.len() {
            self.tree[i] -= 1;
            i += i & i.wrapping_neg();
        }
        self.live -= 1;
    }

    /// The live id of rank `k` (0 = the oldest); `k < len()`.
    pub fn nth(&self, k: usize) -> u64 {
        debug_assert!(k < self.live);
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
        self.base + pos as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_follow_creation_order_through_removals() {
        let mut set = LiveSet::new(1);
        let mut model: Vec<u64> = Vec::new();
        let mut state = 17u64;
        for id in 1..=5_000u64 {
            set.push(id);
            model.push(id);
            if crate::workload::splitmix64(&mut state).is_multiple_of(3) {
                let k = (crate::workload::splitmix64(&mut state) % model.len() as u64) as usize;
                set.remove(model.remove(k));
            }
        }
        assert_eq!(set.len(), model.len());
        for (k, id) in model.iter().enumerate() {
            assert_eq!(set.nth(k), *id, "rank {k}");
            assert!(set.contains(*id));
        }
        assert!(!set.contains(0) && !set.contains(9_999));
    }
}
