//! A page and the numbers behind its figures. Each chart comes with the table it was
//! drawn from; writing the page puts every table beside it as a CSV (one row per point
//! or bar, named columns), linked under its figure, so the numbers open in a
//! spreadsheet or pandas without reading them off the picture.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::figure::{Figure, Table};
use super::svg::{PALETTE, escape};

const TEMPLATE: &str = include_str!("template.html");
/// The folder beside a page that holds its figures' CSVs.
pub const FIGURES: &str = "figures";

/// Fills the page template.
pub fn fill(title: &str, body: &str) -> String {
    TEMPLATE
        .replace("{{title}}", &escape(title))
        .replace("{{version}}", env!("CARGO_PKG_VERSION"))
        .replace("{{body}}", body)
}

/// A page being built: its HTML body, and the tables of its figures by file name.
pub struct Page {
    file_name: String,
    stem: String,
    body: String,
    tables: Vec<(String, Table)>,
}

impl Page {
    /// A page to be written as `file_name` ("report.html"); its CSVs are named
    /// `report-NN-….csv`.
    pub fn new(file_name: &str) -> Page {
        Page {
            file_name: file_name.into(),
            stem: file_name.strip_suffix(".html").unwrap_or(file_name).into(),
            body: String::new(),
            tables: Vec::new(),
        }
    }

    /// Appends HTML.
    pub fn push_str(&mut self, html: &str) {
        self.body.push_str(html);
    }

    /// Appends a figure: the chart, its legend and a link to its numbers.
    pub fn figure(&mut self, figure: Figure) {
        let file = format!(
            "{}-{:02}-{}.csv",
            self.stem,
            self.tables.len() + 1,
            slug(&figure.title)
        );
        let _ = write!(
            self.body,
            r#"<figure class="chart">{}<figcaption>"#,
            figure.svg
        );
        for (i, name) in figure.legend.iter().enumerate() {
            let _ = write!(
                self.body,
                r#"<span class="key"><i style="background:{}"></i>{}</span>"#,
                PALETTE[i % PALETTE.len()],
                escape(name)
            );
        }
        let _ = write!(
            self.body,
            r#"<a class="numbers" href="{FIGURES}/{file}">numbers (CSV)</a></figcaption></figure>"#
        );
        self.tables.push((file, figure.table));
    }

    /// Appends a link to `table` as a CSV beside the page, named after `title`: the
    /// numbers of a table that is not a figure's.
    pub fn numbers(&mut self, title: &str, table: Table) {
        let file = format!(
            "{}-{:02}-{}.csv",
            self.stem,
            self.tables.len() + 1,
            slug(title)
        );
        let _ = write!(
            self.body,
            r#"<p><a class="numbers" href="{FIGURES}/{file}">numbers (CSV)</a></p>"#
        );
        self.tables.push((file, table));
    }

    /// Writes the page into `dir` under its file name and its figures' CSVs into
    /// `dir/figures/`, replacing what an earlier version of the page left there.
    /// Returns the page's path.
    pub fn write(self, dir: &Path, title: &str) -> Result<PathBuf> {
        let path = dir.join(&self.file_name);
        self.write_figures(dir)?;
        crate::files::write_atomic(&path, fill(title, &self.body).as_bytes())?;
        Ok(path)
    }

    /// Writes the page to `path`, a file the user named outside hatshop's folders
    /// (`compare -o`): written through as a stream where it exists (a device, a pipe,
    /// a link), its figures' CSVs beside it where it is a plain file. Returns whether
    /// the CSVs were written.
    pub fn write_out(self, path: &Path, title: &str) -> Result<bool> {
        let beside = crate::files::is_plain_file(path);
        if beside {
            self.write_figures(path.parent().unwrap_or(Path::new("")))?;
        }
        crate::files::write_out(path, fill(title, &self.body).as_bytes())?;
        Ok(beside)
    }

    /// The figures' CSVs into `dir/figures/`, in place of an earlier version's.
    fn write_figures(&self, dir: &Path) -> Result<()> {
        let figures = dir.join(FIGURES);
        remove_earlier(&figures, &self.stem)?;
        if !self.tables.is_empty() {
            std::fs::create_dir_all(&figures)
                .with_context(|| format!("cannot create {}", figures.display()))?;
        }
        for (file, table) in &self.tables {
            crate::files::write_atomic(&figures.join(file), &table.csv())?;
        }
        Ok(())
    }
}

impl Write for Page {
    fn write_str(&mut self, html: &str) -> std::fmt::Result {
        self.body.push_str(html);
        Ok(())
    }
}

/// Removes the CSVs an earlier version of a page wrote (it may have had more figures).
fn remove_earlier(figures: &Path, stem: &str) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(figures) else {
        return Ok(());
    };
    let prefix = format!("{stem}-");
    // `{stem}-NN-….csv` alone: a page named `{stem}-x.html` keeps its own.
    let of_this_page = |name: &str| {
        let Some((number, _)) = name.strip_prefix(&prefix).and_then(|r| r.split_once('-')) else {
            return false;
        };
        number.len() == 2 && number.bytes().all(|b| b.is_ascii_digit()) && name.ends_with(".csv")
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if of_this_page(&name) {
            std::fs::remove_file(entry.path())
                .with_context(|| format!("cannot remove {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// A title as part of a file name: lower case words joined by dashes, its
/// parenthesised explanations left out.
fn slug(title: &str) -> String {
    let title = title.split('(').next().unwrap_or(title);
    let words: Vec<String> = title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut slug = String::new();
    for word in words {
        if slug.len() + word.len() > 48 {
            break;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(&word);
    }
    if slug.is_empty() {
        "figure".into()
    } else {
        slug
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::figure::cell;

    #[test]
    fn a_figure_title_becomes_a_short_file_name() {
        assert_eq!(
            slug("Latency over time: read_order"),
            "latency-over-time-read-order"
        );
        assert_eq!(
            slug("Throughput by events (mean of repeats, whiskers min–max)"),
            "throughput-by-events"
        );
        assert_eq!(slug("µs"), "µs");
        assert_eq!(slug("—"), "figure");
    }

    #[test]
    fn a_page_links_each_figure_to_its_csv_and_writes_them_beside_it() {
        let tmp = tempfile::TempDir::new().unwrap();
        let mut table = Table::new(&["series", "time (s)", "latency (µs)"]);
        table
            .rows
            .push(vec!["p50".into(), cell(1.0), cell(f64::NAN)]);
        let mut page = Page::new("report.html");
        page.figure(Figure {
            title: "Latency, over time".into(),
            svg: "<svg></svg>".into(),
            legend: vec!["p50".into()],
            table,
        });
        let path = page.write(tmp.path(), "t").unwrap();
        let html = std::fs::read_to_string(path).unwrap();
        assert!(html.contains(r#"href="figures/report-01-latency-over-time.csv""#));
        let csv =
            std::fs::read_to_string(tmp.path().join("figures/report-01-latency-over-time.csv"))
                .unwrap();
        assert_eq!(csv, "series,time (s),latency (µs)\np50,1,\n");
        // A later version with no figures leaves no stale CSV behind, and another
        // page's CSVs alone.
        let other = tmp.path().join("figures/report-x-01-latency.csv");
        std::fs::write(&other, "").unwrap();
        Page::new("report.html").write(tmp.path(), "t").unwrap();
        let left: Vec<_> = std::fs::read_dir(tmp.path().join("figures"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(left, [other]);
    }
}
