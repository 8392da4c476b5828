//! The names of the op log's parts in `ops/`: `part-N.parquet` once closed,
//! `_part-N.partial` while written (the underscore keeps it out of readers' sight).

/// A closed part's file name.
pub fn part_name(index: u32) -> String {
    format!("part-{index:06}.parquet")
}

/// The index of the closed part named `name`.
pub fn part_index(name: &str) -> Option<u32> {
    name.strip_prefix("part-")?
        .strip_suffix(".parquet")?
        .parse()
        .ok()
}

/// The name of part `index` while it is written.
pub fn partial_name(index: u32) -> String {
    format!("_part-{index:06}.partial")
}
