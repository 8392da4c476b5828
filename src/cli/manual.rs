//! What a man page says beyond the flags: examples of each command, and the environment
//! hatshop reads whatever the flags, beside the exit codes ([`super::EXIT_CODES`]).

/// Examples by the page they belong to (`hatshop`, `hatshop-run`, `hatshop-server-start`):
/// a command line, and what it does. Each parses as written (a test holds them).
pub const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "hatshop",
        &[
            (
                "hatshop run",
                "the default workload on SQLite, in a file of the result folder: no server needed",
            ),
            (
                "hatshop run --db postgres://postgres@127.0.0.1:5432/hatshop -c 16 --duration 60s",
                "a minute of the same workload against a PostgreSQL, 16 operations in flight",
            ),
            (
                "hatshop compare results/A results/B",
                "two runs side by side, with significance",
            ),
        ],
    ),
    (
        "hatshop-run",
        &[
            (
                "hatshop run -w kv-50w-50r --db redis://127.0.0.1:6379/0 --duration 30s",
                "half writes, half reads of key-value records on a Redis, for 30 s",
            ),
            (
                "hatshop run --rate 2000 --duration 1m --db mysql://root@127.0.0.1:3306/hatshop",
                "an open loop: 2,000 operations a second, each timed from when it was due",
            ),
            (
                "hatshop run --find-max --p99-under 5ms --db mysql://root@127.0.0.1:3306/hatshop",
                "the highest rate whose response time p99 stays under 5 ms",
            ),
            (
                "hatshop run --repeat 3 --tag baseline --verify",
                "three runs on one load, each verified, given as median (min–max)",
            ),
        ],
    ),
    (
        "hatshop-show",
        &[(
            "hatshop show results/RUN --percentiles 50,99,99.999",
            "a run's table again, with percentiles of your choosing",
        )],
    ),
    (
        "hatshop-compare",
        &[(
            "hatshop compare results/A results/B -o cmp",
            "the table here, and cmp/compare.html with the charts",
        )],
    ),
    (
        "hatshop-sweep",
        &[(
            "hatshop sweep --vary concurrency=1,4,16 --db postgres://postgres@127.0.0.1:5432/hatshop",
            "one run per concurrency, charted against it (sweep.html)",
        )],
    ),
    (
        "hatshop-verify",
        &[(
            "hatshop verify results/RUN",
            "check that the run's database holds exactly what its stream says",
        )],
    ),
    (
        "hatshop-server-start",
        &[(
            "hatshop server start postgres",
            "a local PostgreSQL for hatshop; prints its URL",
        )],
    ),
];

/// Variables hatshop reads whatever the command's flags; a flag's own variable
/// (`--db`'s HATSHOP_DB) is listed on its page from the flag's definition.
pub const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "HATSHOP_HOME",
        "where servers started by hatshop live (--home wins) [default: $XDG_DATA_HOME/hatshop, else ~/.local/share/hatshop]",
    ),
    (
        "JOB_COMPLETION_INDEX",
        "the shard of --shard auto/N (a Kubernetes Indexed Job sets it)",
    ),
];

/// What the ENVIRONMENT section says of the stores' own variables and files.
pub const STORES_ENVIRONMENT: &str = "Each store reads a password and TLS files where its own client reads them (PostgreSQL's PGPASSWORD, PGPASSFILE and PGSSL*, MySQL's ~/.my.cnf and MYSQL_PWD, Redis's REDISCLI_AUTH, cqlsh's cqlshrc): see --help of --db.";

/// The examples of the page named `page`, if it has any.
pub fn examples_of(page: &str) -> &'static [(&'static str, &'static str)] {
    EXAMPLES
        .iter()
        .find(|(name, _)| *name == page)
        .map_or(&[], |(_, examples)| examples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_parses_as_written() {
        for (_, examples) in EXAMPLES {
            for (line, _) in *examples {
                let words: Vec<&str> = line.split_whitespace().collect();
                super::super::Cli::definitions()
                    .try_get_matches_from(&words)
                    .unwrap_or_else(|e| panic!("{line}: {e}"));
            }
        }
    }
}
