//! Study 004, "Choosing a key-value storage system (Cassandra vs. Voldemort)": four
//! mixes of writes, rewrites and reads at 1.5 KB and 15 KB values, on 3-node clusters.

use super::cells::{Cell, ServerNeed, scaled};
use super::{CASSANDRA, Study, VOLDEMORT, fact, labels, need, row};
use crate::cluster::NodeBudget;
use crate::report::study::{
    Dim, FIGURE, Fact, FigureSpec, Metric, Ours, PartSpec, Premise, SeedValue,
};

const MIXES: [(&str, &str); 4] = [
    ("kv-50w-50r", "50 % write / 50 % read"),
    ("kv-10w-40rw-50r", "10 % write / 40 % rewrite / 50 % read"),
    ("kv-50rw-50r", "50 % rewrite / 50 % read"),
    ("kv-90rw-10r", "90 % rewrite / 10 % read"),
];

const FIFTEEN_KB: &[(&str, &str)] = &[("value size", "15 KB")];

/// Each node's memory, its page cache included: its heap, what the JVM holds beside it,
/// and 150–280 MiB to cache data in. Measured on 3-node rings at 40 in flight, 90 %
/// rewrites of 15 KB values: Cassandra's nodes (heap 512 MB) held 1,001–1,012 MiB
/// themselves with 215–277 MiB of page cache; Voldemort's (heap 256 MB) 603–611 MiB
/// with 152–160 MiB.
const CASSANDRA_MEMORY: u64 = 1280 << 20;
const VOLDEMORT_MEMORY: u64 = 768 << 20;
/// The fewest 15 KB records a cell loads at any scale: 450 MB, beyond what a node at
/// its budget has left to cache, so reads reach the disk as the study's did.
const FIFTEEN_KB_RECORDS: u64 = 30_000;
const ONE_AND_A_HALF_KB: &[(&str, &str)] = &[("value size", "1.5 KB")];

const fn mix_figure(
    title: &'static str,
    metric: Metric,
    events: &'static [&'static str],
    only: &'static [(&'static str, &'static str)],
) -> FigureSpec {
    FigureSpec {
        part: "mixes",
        title,
        x: Dim::Label("mix"),
        metric,
        events,
        only,
        ..FIGURE
    }
}

/// A read tail of the mix the study decided on (90 % rewrites, 15 KB values), with its
/// figures for both stores beside ours.
const fn heavy_rewrite_tail(
    title: &'static str,
    metric: Metric,
    seed: &'static [SeedValue],
    seed_says: &'static str,
) -> FigureSpec {
    FigureSpec {
        seed,
        seed_says,
        premises: &[Premise::DataBeyondCache],
        ..mix_figure(
            title,
            metric,
            &["read"],
            &[("value size", "15 KB"), ("mix", "90 % rewrite / 10 % read")],
        )
    }
}

/// The study's Cassandra and Voldemort values (µs) for one tail of that mix.
const fn cassandra_and_voldemort(cassandra: f64, voldemort: f64) -> [SeedValue; 2] {
    let x = "90 % rewrite / 10 % read";
    [
        SeedValue {
            x,
            series: "Cassandra",
            value: cassandra,
        },
        SeedValue {
            x,
            series: "Voldemort",
            value: voldemort,
        },
    ]
}

/// The study's stated result, under its first pair of charts.
const WRITES_FASTER: &str = "as expected, Cassandra write (and rewrite) times were \
                             consistently faster than Voldemort, while read times varied a \
                             bit depending on the scenario but were more or less the same in \
                             general.";

pub(super) const STUDY: Study = Study {
    name: "kv-mixes",
    seed: "Choosing a key-value storage system (Cassandra vs. Voldemort) (study 004)",
    title: "Cassandra against Voldemort: key-value mixes × value sizes",
    question: "For four mixes of writes, rewrites and reads at 1.5 KB and 15 KB values, \
               which store answers faster on average, which has the lower tail latency \
               (p99 to p99.99), and which the higher throughput?",
    seed_machine: "three 8-core servers",
    seed_cores: Some(24),
    caveats: &[
        "The study had 5 million records, 500,000 operations per test and three 8-core \
         servers; here both 3-node clusters share the host's cores, with 50,000 records \
         (at 15 KB values never fewer than 30,000, 450 MB) and 100,000 operations per \
         cell at scale 1.",
        "The study's data (75 GB at 15 KB values) was far beyond what a node could \
         cache, so its reads waited on the disk. Here each node has a memory budget, its \
         page cache included (1.25 GiB for Cassandra, 768 MiB for Voldemort: the heap, \
         the JVM beside it and 150–280 MiB to cache in), so that the 15 KB values are \
         beyond it too; the tail figures check it from their cells.",
        "Server settings differ from the study's, so that six JVMs fit on this host \
         beside the client: heap 512 MB (Cassandra) and 256 MB (Voldemort) against 4 GB; \
         Voldemort's BDB cache 64 MB against 1,536 MB; Cassandra's concurrent_writes 16 \
         against 32 (concurrent_reads 16 as theirs); no row cache, where the study's \
         column family cached 10,000 rows. Cassandra 5.0 uses the Murmur3 partitioner, \
         the study's 0.6 the RandomPartitioner.",
        "A tail percentile rests on the operations beyond it: at 10,000 reads a p99.99 \
         rests on one. Those on fewer than 10 are marked * in the figures and their \
         numbers.",
    ],
    setup: &[
        row(
            "servers",
            "3 similar nodes, 8 processors each (Xeon E5504 2 GHz), a 1 TB 7200 \
                   RPM disk",
            Ours::Fact(Fact::Machines),
            "one host for both 3-node clusters",
        ),
        fact(
            "client machine",
            "not given (vpork, modified)",
            Fact::Machine,
        ),
        row(
            "versions",
            "Voldemort 0.80.1, Cassandra 0.6.0-beta3",
            Ours::Fact(Fact::ServerVersion),
            "the releases Maven Central serves, and Voldemort's last source",
        ),
        row(
            "heap per node",
            "4 GB",
            Ours::Fact(Fact::ServerSetting("heap")),
            "six JVMs share this host",
        ),
        row(
            "replication",
            "N=3, R=2, W=2 (Cassandra RF 3)",
            Ours::Text("Voldemort N=3 R=2 W=2; Cassandra RF 3 at QUORUM (2 of 3)"),
            "",
        ),
        row(
            "caches and pools",
            "bdb.cache.size 1,536 MB; RowsCached 10,000; ConcurrentReads 16, \
                   ConcurrentWrites 32",
            Ours::Text(
                "bdb.cache.size 64 MB; no row cache; concurrent_reads 16, \
                 concurrent_writes 16",
            ),
            "memory for six JVMs on one host",
        ),
        row(
            "memory per node",
            "not given; 4 GB of heap against 75 GB of 15 KB values",
            Ours::Fact(Fact::NodeMemory),
            "a budget of the kernel's memory controller, page cache included",
        ),
        fact("client threads", "40", Fact::Concurrency),
        row(
            "initial load",
            "5 million records",
            Ours::Fact(Fact::Loaded),
            "the disk and time of one host",
        ),
        row(
            "warm-up",
            "20,000 writes before measuring",
            Ours::Fact(Fact::Warmup),
            "scaled with the rest; and 20 s of load on each fresh cluster first",
        ),
        fact("operations per test", "500,000", Fact::Events),
        fact("value sizes", "1.5 KB and 15 KB", Fact::ValueSize),
    ],
    parts: &[PartSpec {
        id: "mixes",
        title: "Four mixes at two value sizes, 40 in flight",
        about: "Each mix on both stores, a warm-up first, as the study's 40 client \
                threads.",
        addition: false,
    }],
    figures: &[
        FigureSpec {
            seed_says: WRITES_FASTER,
            ..mix_figure(
                "Mean read latency by mix, 15 KB values",
                Metric::Mean,
                &["read"],
                FIFTEEN_KB,
            )
        },
        FigureSpec {
            seed_says: WRITES_FASTER,
            ..mix_figure(
                "Mean write and rewrite latency by mix, 15 KB values (mean of the two where a mix has both)",
                Metric::Mean,
                &["write", "rewrite"],
                FIFTEEN_KB,
            )
        },
        mix_figure(
            "Mean read latency by mix, 1.5 KB values",
            Metric::Mean,
            &["read"],
            ONE_AND_A_HALF_KB,
        ),
        mix_figure(
            "Mean write and rewrite latency by mix, 1.5 KB values (mean of the two where a mix has both)",
            Metric::Mean,
            &["write", "rewrite"],
            ONE_AND_A_HALF_KB,
        ),
        FigureSpec {
            seed_says: "the second pair of charts shows the maximum time in the best 99 \
                        % of cases … we were concerned about the peak for Cassandra read \
                        in the last scenario for 15KB.",
            ..mix_figure(
                "p99 read latency by mix, 15 KB values",
                Metric::P99,
                &["read"],
                FIFTEEN_KB,
            )
        },
        mix_figure(
            "p99 write and rewrite latency by mix, 15 KB values (mean of the two where a mix has both)",
            Metric::P99,
            &["write", "rewrite"],
            FIFTEEN_KB,
        ),
        mix_figure(
            "Throughput by mix, 15 KB values",
            Metric::OpsPerSecond,
            &[],
            FIFTEEN_KB,
        ),
        mix_figure(
            "p99 read latency by mix, 1.5 KB values",
            Metric::P99,
            &["read"],
            ONE_AND_A_HALF_KB,
        ),
        mix_figure(
            "p99 write and rewrite latency by mix, 1.5 KB values (mean of the two where a mix has both)",
            Metric::P99,
            &["write", "rewrite"],
            ONE_AND_A_HALF_KB,
        ),
        mix_figure(
            "Throughput by mix, 1.5 KB values",
            Metric::OpsPerSecond,
            &[],
            ONE_AND_A_HALF_KB,
        ),
        heavy_rewrite_tail(
            "p99.9 read latency, 90 % rewrite / 10 % read, 15 KB values",
            Metric::P999,
            &cassandra_and_voldemort(5_050_000.0, 748_000.0),
            "5050 ms for Cassandra and 748 ms for Voldemort at p99.9 … this huge \
             difference was a key decision factor for us.",
        ),
        heavy_rewrite_tail(
            "p99.99 read latency, 90 % rewrite / 10 % read, 15 KB values",
            Metric::P9999,
            &cassandra_and_voldemort(9_176_000.0, 1_129_000.0),
            "9176 ms against 1129 ms at p99.99.",
        ),
    ],
    cells: kv_cells,
};

fn kv_cells(scale: f64) -> Vec<Cell> {
    let records = scaled(50_000, scale, 1_000);
    let events = scaled(100_000, scale, 2_000);
    let warmup = scaled(20_000, scale, 400).to_string();
    let mut cells = Vec::new();
    for (server, store, query, memory) in [
        (VOLDEMORT, "Voldemort", "", VOLDEMORT_MEMORY),
        (CASSANDRA, "Cassandra", "rf=3&cl=QUORUM", CASSANDRA_MEMORY),
    ] {
        let need = ServerNeed {
            budget: NodeBudget {
                cores: None,
                memory: Some(memory),
            },
            ..need(server, 3, query)
        };
        for (size, size_label, records) in [
            ("15000", "15 KB", records.max(FIFTEEN_KB_RECORDS)),
            ("1500", "1.5 KB", records),
        ] {
            let records = records.to_string();
            for (mix, words) in MIXES {
                cells.push(Cell::run(
                    format!("{mix}-{size}-{server}"),
                    "mixes",
                    labels(&[
                        ("store", store.into()),
                        ("mix", words.into()),
                        ("value size", size_label.into()),
                    ]),
                    need.clone(),
                    mix,
                    events,
                    &[
                        "--value-size",
                        size,
                        "--records",
                        &records,
                        "--warmup",
                        &warmup,
                        "--concurrency",
                        "40",
                    ],
                ));
            }
        }
    }
    cells
}
