//! Time left in a series, from the cells this attempt ran.

use std::time::Duration;

use crate::studies::cells::Cell;

/// Time left, from the cells this attempt ran: their seconds per unit of work (server
/// starts, setup and verify included) times the work left.
pub(super) struct Estimate {
    left_work: u64,
    spent: Duration,
    done_work: u64,
    done_cells: usize,
}

impl Estimate {
    pub(super) fn new(cells: &[Cell]) -> Estimate {
        Estimate {
            left_work: cells.iter().map(|c| c.work).sum(),
            spent: Duration::ZERO,
            done_work: 0,
            done_cells: 0,
        }
    }

    /// A cell an earlier attempt finished.
    pub(super) fn skip(&mut self, cell: &Cell) {
        self.left_work -= cell.work;
    }

    pub(super) fn done(&mut self, cell: &Cell, took: Duration) {
        self.skip(cell);
        self.spent += took;
        self.done_work += cell.work;
        self.done_cells += 1;
    }

    /// ", about 4 min left", once a cell has run.
    pub(super) fn left(&self) -> String {
        if self.done_cells == 0 || self.done_work == 0 {
            return String::new();
        }
        let per_work = self.spent.as_secs_f64() / self.done_work as f64;
        let seconds = per_work * self.left_work as f64;
        let minutes = (seconds / 60.0).ceil().max(1.0);
        format!(", about {minutes:.0} min left")
    }
}
