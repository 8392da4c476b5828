//! Jars from Maven Central, fetched once into the hatshop cache: a small pom that
//! lists them, `mvn dependency:copy-dependencies`, and a `.complete` marker.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use super::process;

/// `dist/lib`, filled on first use with `coordinates` (group:artifact:version) and
/// what they depend on; `expected` must be among the jars. `what` names them in
/// messages, with their rough size.
pub fn jars(dist: &Path, coordinates: &[String], expected: &str, what: &str) -> Result<PathBuf> {
    let lib = dist.join("lib");
    let complete = dist.join(".complete");
    if complete.exists() {
        return Ok(lib);
    }
    let mvn = process::find_program("mvn", &[]).with_context(|| {
        format!("mvn is not installed: run `apt-get install -y maven` to fetch {what} from Maven Central")
    })?;
    std::fs::create_dir_all(dist).with_context(|| format!("cannot create {}", dist.display()))?;
    let dependencies: String = coordinates
        .iter()
        .map(|c| {
            let mut parts = c.split(':');
            let (g, a, v) = (
                parts.next().unwrap_or(""),
                parts.next().unwrap_or(""),
                parts.next().unwrap_or(""),
            );
            format!(
                "<dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>\n"
            )
        })
        .collect();
    std::fs::write(
        dist.join("pom.xml"),
        format!(
            "<project><modelVersion>4.0.0</modelVersion>\n\
             <groupId>local.hatshop</groupId><artifactId>dist</artifactId><version>1</version>\n\
             <dependencies>\n{dependencies}</dependencies></project>\n"
        ),
    )?;
    crate::console::note!(
        "fetching {what} from Maven Central into {} (once) …",
        lib.display()
    );
    let started = Instant::now();
    process::run_command(
        Command::new(mvn).current_dir(dist).args([
            "-q",
            "-B",
            "dependency:copy-dependencies",
            "-DoutputDirectory=lib",
        ]),
        "mvn dependency:copy-dependencies",
    )?;
    if !lib.join(expected).exists() {
        bail!("Maven finished but {} holds no {expected}", lib.display());
    }
    std::fs::write(&complete, b"")?;
    crate::console::note!("fetched in {:.0} s", started.elapsed().as_secs_f64());
    Ok(lib)
}
