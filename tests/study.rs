//! `hatshop study`: a published study reproduced on the suite's real Cassandra and
//! MariaDB (started by `./test.sh`; a study uses a server that runs already and leaves
//! it running), interrupted, resumed, and its page laid out in headless Chromium.

mod common;

use std::path::Path;

use common::browser::{layout, screenshot};
use common::{csv_maps, hatshop, signal, spawn, text, wait_for_file};
use tempfile::TempDir;

#[test]
fn study_lists_every_study_and_refuses_what_it_cannot_run() {
    let tmp = TempDir::new().unwrap();
    let listed = hatshop(tmp.path())
        .args(["study", "--list"])
        .output()
        .unwrap();
    assert!(listed.status.success());
    let names: Vec<String> = text(&listed.stdout)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "hat-shop",
            "clusters",
            "bulk-insert",
            "cassandra-throughput",
            "kv-mixes"
        ]
    );
    common::assert_one_line_error(
        tmp.path(),
        &["study", "hats"],
        "no study named 'hats': the studies are hat-shop,",
    );
    common::assert_one_line_error(
        tmp.path(),
        &["study", "hat-shop", "--scale", "0"],
        "--scale 0: give a fraction of the study's work above 0 and at most 1",
    );
    std::fs::create_dir(tmp.path().join("busy")).unwrap();
    std::fs::write(tmp.path().join("busy/x"), "x").unwrap();
    common::assert_one_line_error(
        tmp.path(),
        &["study", "hat-shop", "-o", "busy"],
        "busy is not empty and holds no study",
    );
}

/// The cells of study.html's table whose status says they finished and verified.
fn verified_cells(page: &Path) -> usize {
    std::fs::read_to_string(page)
        .unwrap()
        .matches("finished, verify exact")
        .count()
}

#[test]
#[ignore = "needs the suite's Cassandra and MariaDB: ./test.sh starts them"]
fn a_study_interrupted_keeps_its_finished_cells_and_resumes_to_one_page() {
    let tmp = TempDir::new().unwrap();
    let args = ["study", "hat-shop", "--scale", "0.02", "-o", "hat-shop"];
    let dir = tmp.path().join("hat-shop");
    // The third cell has begun: the first two finished.
    let first = spawn(tmp.path(), &args);
    wait_for_file(&dir.join("updates-5000-cassandra"));
    signal(&first, libc::SIGINT);
    let first = first.wait_with_output().unwrap();
    let said = text(&first.stderr);
    assert_eq!(first.status.code(), Some(130), "{said}");
    assert!(
        said.contains("[3/18] Cassandra · updates · events 100"),
        "{said}"
    );
    assert!(
        said.contains("run the same command again to resume"),
        "{said}"
    );
    let page = dir.join("study.html");
    assert_eq!(
        verified_cells(&page),
        2,
        "the finished cells are on the page"
    );
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .contains("16 of 18 cells have no numbers yet")
    );

    let second = hatshop(tmp.path()).args(args).output().unwrap();
    let said = text(&second.stderr);
    assert!(second.status.success(), "{said}");
    assert!(said.contains("18 cells into"), "{said}");
    assert!(said.contains("(2 finished earlier, kept)"), "{said}");
    assert!(
        !said.contains("[1/18]") && said.contains("[18/18]"),
        "{said}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(verified_cells(&page), 18, "every cell verified");
    assert!(!html.contains("no numbers yet"));
    assert!(html.contains("Scaled to 2 % of the study's work"));

    // Fig 4's numbers: a mean per event type per store, and the sentence computed from
    // them names the faster store of each.
    let rows =
        csv_maps(&dir.join("figures/study-01-mean-latency-by-event-type-cassandra-against.csv"));
    assert_eq!(rows.len(), 12, "6 event types × 2 stores: {rows:?}");
    for row in &rows {
        assert!(
            ["Cassandra", "MariaDB"].contains(&row["series"].as_str()),
            "{row:?}"
        );
        assert!(
            row["mean latency (µs)"].parse::<f64>().unwrap() > 0.0,
            "{row:?}"
        );
    }
    let sentence = html
        .split("<p class=\"finding\">")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .unwrap();
    assert!(
        sentence.starts_with("Mean latency: create_order: "),
        "{sentence}"
    );
    assert_eq!(sentence.matches("× faster on ").count(), 6, "{sentence}");
    // The study's own numbers stand beside ours.
    assert!(html.contains("the study's (s)") && html.contains("<td>55.7</td>"));
    // MariaDB's pool: one bar per pool size.
    let pool =
        csv_maps(&dir.join("figures/study-04-total-time-of-50-000-creates-by-pool-size.csv"));
    let sizes: Vec<&str> = pool.iter().map(|r| r["connections"].as_str()).collect();
    assert_eq!(sizes, ["1", "2", "4", "8", "16", "30"]);

    // The page as a reader's browser lays it out.
    let mut found = Vec::new();
    for width in [1200, 700] {
        let seen = layout(&page, width, &tmp.path().join(format!("profile-{width}")));
        assert_eq!(seen.charts, 5);
        found.extend(seen.problems.iter().map(|p| format!("{width} px: {p}")));
        if width >= 1200 {
            found.extend(
                seen.scrolls
                    .iter()
                    .map(|s| format!("{width} px: scrolls {s}")),
            );
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    let png = screenshot(&page, "study", &tmp.path().join("profile-shot"));
    println!("study: {}", png.display());
}
