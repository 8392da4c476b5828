//! Builds Project Voldemort from source, in the way found to work on JDK 17 without upstream's Gradle build (whose repositories cannot be reached):
//! plain `javac --release 8` over `src/java` against Maven Central jars, after two
//! small edits and one file left out. The build is cached under the hatshop home by
//! the source's hash; the jars are fetched once and shared by every build.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use super::super::{Home, maven, process};
use crate::workload::hex;

/// The upstream source hatshop carries (Apache-2.0): the last upstream commit.
const VENDORED: &[u8] = include_bytes!("../../../vendor/voldemort/voldemort-src-99127eab3.tar.gz");
const VENDORED_COMMIT: &str = "99127eab3078eed90faa66cc671259a85cb89464";

/// The direct dependencies, Maven Central coordinates (the notes say which differ from
/// upstream's and why: je 5.0.104 and libthrift 0.5.0.0 are not on Central).
const JARS: &[&str] = &[
    "org.apache.avro:avro:1.4.0",
    "commons-codec:commons-codec:1.4",
    "commons-dbcp:commons-dbcp:1.2.2",
    "commons-io:commons-io:2.1",
    "commons-lang:commons-lang:2.6",
    "com.ning:compress-lzf:0.9.1",
    "com.google.guava:guava:14.0.1",
    "org.apache.httpcomponents:httpclient:4.1.2",
    "org.apache.httpcomponents:httpcore:4.1.2",
    "org.codehaus.jackson:jackson-core-asl:1.9.13",
    "org.codehaus.jackson:jackson-mapper-asl:1.9.13",
    "org.jdom:jdom:1.1",
    "org.mortbay.jetty:jetty:6.1.18",
    "org.mortbay.jetty:jetty-util:6.1.18",
    "jline:jline:0.9.94",
    "net.java.dev.jna:jna:3.2.7",
    "joda-time:joda-time:1.6",
    "net.sf.jopt-simple:jopt-simple:4.6",
    "log4j:log4j:1.2.17",
    "javax.mail:mail:1.4.1",
    "io.netty:netty:3.5.8.Final",
    "com.google.protobuf:protobuf-java:2.3.0",
    "javax.servlet:servlet-api:2.5",
    "org.slf4j:slf4j-api:1.5.6",
    "org.slf4j:slf4j-log4j12:1.5.6",
    "org.iq80.snappy:snappy:0.2",
    "org.apache.velocity:velocity:1.6.2",
    "com.sleepycat:je:5.0.73",
    "io.tehuti:tehuti:0.7.0",
    "org.rocksdb:rocksdbjni:3.13.1",
    "org.bouncycastle:bcprov-jdk15on:1.48",
    "org.apache.thrift:libthrift:0.6.1",
];
/// The Berkeley DB Java Edition release Voldemort's store is built against.
pub const JE_VERSION: &str = "5.0.73";
/// Pulled in by avro; it clashes with io.netty 3.5.8.
const CLASHING_JAR: &str = "netty-3.2.1.Final.jar";

/// The edits JDK 17 and je 5.0.73 need: (file, text, replacement, name).
const PATCHES: &[(&str, &str, &str, &str)] = &[
    (
        "voldemort/store/readonly/io/ByteBufferCloser.java",
        "        sun.misc.Cleaner cl = ((sun.nio.ch.DirectBuffer) buff).cleaner();\n\n        if(cl != null) {\n            cl.clean();\n        }\n",
        "        buff = null; // hatshop: sun.misc.Cleaner is not in --release 8 on JDK 17\n",
        "ByteBufferCloser drops the buffer (no sun.misc.Cleaner)",
    ),
    (
        "voldemort/store/bdb/BdbStorageConfiguration.java",
        "        environmentConfig.setConfigParam(EnvironmentConfig.CLEANER_ADJUST_UTILIZATION,\n                                         Boolean.toString(config.getBdbCleanerAdjustUtilization()));\n",
        "",
        "no CLEANER_ADJUST_UTILIZATION (not in je 5.0.73)",
    ),
];
/// Its only Hadoop import; nothing references it.
const LEFT_OUT: &str = "voldemort/store/readonly/checksum/CheckSumMetadata.java";

/// A finished build: where its classes and jars are, and what it was built from.
#[derive(Debug, Clone)]
pub struct Build {
    pub classes: PathBuf,
    pub lib: PathBuf,
    /// What run.json records: source, its hash or commit, je version, patches.
    pub facts: Vec<(String, String)>,
}

/// Where the source comes from: the vendored archive, a folder or archive, a git URL.
enum Source {
    Vendored,
    Path(PathBuf),
    Git(String),
}

impl Source {
    fn of(given: Option<&str>) -> Source {
        match given {
            None | Some("vendored") => Source::Vendored,
            Some(url)
                if url.starts_with("https://")
                    || url.starts_with("git@")
                    || url.ends_with(".git") =>
            {
                Source::Git(url.to_string())
            }
            Some(path) => Source::Path(PathBuf::from(path)),
        }
    }
}

/// The build of `source` (`None`: the archive hatshop carries), made once.
pub fn ensure(home: &Home, source: Option<&str>) -> Result<Build> {
    let cache = home.cache_dir();
    let lib = jars(&cache)?;
    let (label, tree, hash, cleanup) = unpack(&cache, Source::of(source))?;
    let dir = cache.join(format!("voldemort-build-{}", &hash[..16]));
    let classes = dir.join("classes");
    let facts_file = dir.join("build.facts");
    if !facts_file.exists() {
        let started = Instant::now();
        crate::console::note!(
            "building Project Voldemort from {label} with javac (once; about 20 s) …"
        );
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let java_src = dir.join("src");
        copy_tree(&tree.join("src/java"), &java_src)?;
        let patched = patch(&java_src)?;
        compile(&java_src, &classes, &lib)?;
        let facts = [
            ("source".to_string(), label.clone()),
            ("source_sha256".to_string(), hash.clone()),
            ("je".to_string(), JE_VERSION.to_string()),
            ("patches".to_string(), patched.join("; ")),
        ];
        let text: String = facts.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
        std::fs::write(&facts_file, text)?;
        crate::console::note!("built in {:.0} s", started.elapsed().as_secs_f64());
    }
    if let Some(tmp) = cleanup {
        let _ = std::fs::remove_dir_all(tmp);
    }
    let facts = std::fs::read_to_string(&facts_file)?
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (format!("build.{k}"), v.to_string()))
        .collect();
    Ok(Build {
        classes,
        lib,
        facts,
    })
}

/// The source tree (the folder holding `src/java`), a label, its hash, and a scratch
/// folder to remove afterwards.
fn unpack(cache: &Path, source: Source) -> Result<(String, PathBuf, String, Option<PathBuf>)> {
    let scratch = cache.join(format!("voldemort-unpack-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)?;
    let untar = |archive: &Path| -> Result<PathBuf> {
        process::run_command(
            Command::new("tar")
                .arg("xzf")
                .arg(archive)
                .arg("-C")
                .arg(&scratch),
            "tar",
        )?;
        source_root(&scratch)
    };
    match source {
        Source::Vendored => {
            let archive = scratch.join("voldemort-src.tar.gz");
            std::fs::write(&archive, VENDORED)?;
            let tree = untar(&archive)?;
            let label = format!("vendored upstream archive, commit {VENDORED_COMMIT}");
            Ok((label, tree, sha256_hex(VENDORED), Some(scratch)))
        }
        Source::Path(path) if path.is_file() => {
            let bytes =
                std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
            let tree = untar(&path)?;
            Ok((
                format!("archive {}", path.display()),
                tree,
                sha256_hex(&bytes),
                Some(scratch),
            ))
        }
        Source::Path(path) => {
            let _ = std::fs::remove_dir_all(&scratch);
            if !path.join("src/java/voldemort").is_dir() {
                bail!(
                    "{} is not a Voldemort source tree (no src/java/voldemort)",
                    path.display()
                );
            }
            let hash = tree_hash(&path.join("src/java"))?;
            Ok((format!("folder {}", path.display()), path, hash, None))
        }
        Source::Git(url) => {
            let (label, tree, hash) = clone(&url, &scratch)?;
            Ok((label, tree, hash, Some(scratch)))
        }
    }
}

/// A shallow clone of `url` into `scratch`: what it is, its tree, and its commit's hash.
fn clone(url: &str, scratch: &Path) -> Result<(String, PathBuf, String)> {
    let git = process::find_program("git", &[])
        .context("git is not installed: `apt-get install -y git`")?;
    let tree = scratch.join("voldemort");
    crate::console::note!("cloning {url} …");
    process::run_command(
        Command::new(&git)
            // A stalled transfer (under 1 KB/s for a minute) fails.
            .args([
                "-c",
                "http.lowSpeedLimit=1000",
                "-c",
                "http.lowSpeedTime=60",
            ])
            .args(["clone", "-q", "--depth", "1", url])
            .arg(&tree),
        "git clone",
    )?;
    let commit = process::run_command(
        Command::new(&git)
            .arg("-C")
            .arg(&tree)
            .args(["rev-parse", "HEAD"]),
        "git rev-parse",
    )?
    .trim()
    .to_string();
    Ok((
        format!("git {url} at commit {commit}"),
        tree,
        sha256_hex(commit.as_bytes()),
    ))
}

/// The folder under `dir` that holds `src/java` (an archive's top folder, or `dir`).
fn source_root(dir: &Path) -> Result<PathBuf> {
    if dir.join("src/java").is_dir() {
        return Ok(dir.to_path_buf());
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.join("src/java").is_dir() {
            return Ok(path);
        }
    }
    bail!("the archive holds no src/java: is it Voldemort's source?")
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A hash of every file's path and content under `dir`, in path order.
fn tree_hash(dir: &Path) -> Result<String> {
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    files.sort();
    let mut hasher = Sha256::new();
    for file in files {
        hasher.update(
            file.strip_prefix(dir)
                .unwrap_or(&file)
                .to_string_lossy()
                .as_bytes(),
        );
        hasher.update(std::fs::read(&file)?);
    }
    Ok(hex(&hasher.finalize()))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let mut files = Vec::new();
    walk(from, &mut files)?;
    for file in files {
        let target = to.join(file.strip_prefix(from).expect("under from"));
        std::fs::create_dir_all(target.parent().expect("a parent"))?;
        std::fs::copy(&file, &target).with_context(|| format!("cannot copy {}", file.display()))?;
    }
    Ok(())
}

/// Applies the edits (already applied ones are fine) and leaves out the Hadoop file;
/// says what it did.
fn patch(src: &Path) -> Result<Vec<String>> {
    let mut done = Vec::new();
    for (file, text, replacement, name) in PATCHES {
        let path = src.join(file);
        let content = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if content.contains(text) {
            std::fs::write(&path, content.replacen(text, replacement, 1))?;
            done.push(name.to_string());
        } else if !replacement.is_empty() && content.contains(replacement) {
            done.push(format!("{name} (already in the source)"));
        } else {
            bail!(
                "{file} differs from what hatshop knows how to patch; build this source by hand \
                 (docs/stores.md, Project Voldemort) or give --source the upstream archive"
            );
        }
    }
    if std::fs::remove_file(src.join(LEFT_OUT)).is_ok() {
        done.push(format!("left out {LEFT_OUT}"));
    }
    Ok(done)
}

/// The jars, fetched with Maven once into the cache.
fn jars(cache: &Path) -> Result<PathBuf> {
    let coordinates: Vec<String> = JARS.iter().map(|c| c.to_string()).collect();
    let dist = cache.join("voldemort-jars");
    let lib = maven::jars(
        &dist,
        &coordinates,
        &format!("je-{JE_VERSION}.jar"),
        "Voldemort's jars (about 23 MB)",
    )?;
    let _ = std::fs::remove_file(lib.join(CLASHING_JAR));
    Ok(lib)
}

/// javac over every source file, then the resources (log4j.properties, the XML
/// schemas) next to the classes.
fn compile(src: &Path, classes: &Path, lib: &Path) -> Result<()> {
    let javac = process::find_program("javac", &[])
        .context("javac is not installed: `apt-get install -y openjdk-17-jdk-headless`")?;
    let mut files = Vec::new();
    walk(src, &mut files)?;
    let (java, resources): (Vec<PathBuf>, Vec<PathBuf>) = files
        .into_iter()
        .partition(|f| f.extension().is_some_and(|e| e == "java"));
    let list = src.with_file_name("sources.txt");
    let text: String = java.iter().map(|f| format!("{}\n", f.display())).collect();
    std::fs::write(&list, text)?;
    process::run_command(
        Command::new(javac)
            .args([
                "-J-Xmx1g",
                "-nowarn",
                "--release",
                "8",
                "-encoding",
                "UTF-8",
                "-d",
            ])
            .arg(classes)
            .arg("-cp")
            .arg(format!("{}/*", lib.display()))
            .arg(format!("@{}", list.display())),
        "javac",
    )?;
    for file in resources {
        let target = classes.join(file.strip_prefix(src).expect("under src"));
        std::fs::create_dir_all(target.parent().expect("a parent"))?;
        std::fs::copy(&file, &target)?;
    }
    Ok(())
}
