//! The order a series' cells run in: the cells of one server together, or, where
//! repeats span servers that can stand side by side, a round of every server at a time.

use crate::studies::cells::Cell;

/// The order the cells run in, and whether their servers stand side by side. Where
/// repeats span several servers that can run side by side (no two of one kind at other
/// sizes or settings), the servers stay up together and their rounds take turns (A B
/// C, A B C), so that a burst of the host's load lands on every candidate alike;
/// otherwise the cells of one server run together, each server started once, one
/// after the other.
pub fn in_run_order(cells: Vec<Cell>) -> (Vec<Cell>, bool) {
    let clash = cells.iter().any(|a| {
        cells
            .iter()
            .any(|b| a.need.server == b.need.server && !same_server(a, b))
    });
    let rounds_span_servers = cells.iter().filter(|c| c.round > 1).any(|a| {
        cells
            .iter()
            .any(|b| b.round == a.round && !same_server(a, b))
    });
    if clash || !rounds_span_servers {
        return (by_server(cells), false);
    }
    let last = cells.iter().map(|c| c.round).max().unwrap_or(1);
    let mut ordered = Vec::with_capacity(cells.len());
    for round in 1..=last {
        let of_round = cells.iter().filter(|c| c.round == round).cloned().collect();
        ordered.extend(by_server(of_round));
    }
    (ordered, true)
}

/// Whether two cells need the one server: of one kind, size and settings.
fn same_server(a: &Cell, b: &Cell) -> bool {
    a.need.server == b.need.server && a.need.nodes == b.need.nodes && a.need.set == b.need.set
}

/// The cells with those of one server together, each group where its first cell
/// stood.
fn by_server(cells: Vec<Cell>) -> Vec<Cell> {
    let mut groups: Vec<Vec<Cell>> = Vec::new();
    for cell in cells {
        match groups.iter_mut().find(|g| same_server(&g[0], &cell)) {
            Some(group) => group.push(cell),
            None => groups.push(vec![cell]),
        }
    }
    groups.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies;
    use crate::studies::cells::Verb;

    #[test]
    fn the_cells_of_one_server_stand_together() {
        let study = studies::open("hat-shop").unwrap();
        let (cells, side_by_side) = in_run_order(study.cells(0.05).unwrap());
        assert!(
            !side_by_side,
            "no round of hat-shop's repeats spans two servers"
        );
        let servers: Vec<&str> = cells.iter().map(|c| c.need.server.as_str()).collect();
        let mut changes = servers.windows(2).filter(|w| w[0] != w[1]).count();
        changes += 1;
        assert_eq!(changes, 2, "{servers:?}");
        assert!(cells.iter().all(|c| c.verb == Verb::Run));
    }

    #[test]
    fn repeats_over_several_servers_take_turns_a_round_at_a_time() {
        let doc = include_str!("../../../docs/studies.md");
        let example = doc
            .split("```toml\n")
            .nth(1)
            .unwrap()
            .split("```")
            .next()
            .unwrap();
        let file = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
        std::fs::write(file.path(), example).unwrap();
        let study = studies::open(file.path().to_str().unwrap()).unwrap();
        let (cells, side_by_side) = in_run_order(study.cells(1.0).unwrap());
        assert!(side_by_side);
        let order: Vec<(u64, &str)> = cells
            .iter()
            .map(|c| (c.round, c.need.server.as_str()))
            .collect();
        // Round 1 holds the headroom searches too: each server's cells of a round
        // together, the servers in turn, round after round.
        let expected: Vec<(u64, &str)> = (1..=3)
            .flat_map(|round| {
                let each = if round == 1 { 4 } else { 3 };
                ["mariadb", "postgres", "cassandra"]
                    .into_iter()
                    .flat_map(move |server| std::iter::repeat_n((round, server), each))
            })
            .collect();
        assert_eq!(order, expected);
    }
}
