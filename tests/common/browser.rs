//! Pages in a real browser: headless Chromium lays a page out, a script measures what
//! a reader would see clipped, overlapping or too wide, and a screenshot is kept.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use serde_json::Value;

/// Headless Chromium with `args`, given two minutes (coreutils' `timeout`): a browser
/// that hangs fails the test instead of holding the suite.
pub fn chromium(args: &[&str], profile: &Path) -> std::process::Output {
    StdCommand::new("timeout")
        .args(["--kill-after=5", "120", "chromium"])
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium runs (./test.sh installs it)")
}

/// What headless Chromium measures of `page` laid out in a window `width` pixels wide
/// (see layout_check.js).
pub struct Layout {
    pub charts: usize,
    /// Text outside a chart, texts on top of each other, a page too wide.
    pub problems: Vec<String>,
    /// What the reader scrolls sideways to see.
    pub scrolls: Vec<String>,
}

pub fn layout(page: &Path, width: u32, profile: &Path) -> Layout {
    let html = std::fs::read_to_string(page).unwrap();
    let checked = page.with_file_name(".layout-check.html");
    let script = format!(
        "<script>{}</script></body>",
        include_str!("../layout_check.js")
    );
    std::fs::write(&checked, html.replacen("</body>", &script, 1)).unwrap();
    let dom = chromium(
        &[
            &format!("--window-size={width},1200"),
            "--dump-dom",
            &format!("file://{}", checked.display()),
        ],
        profile,
    );
    std::fs::remove_file(&checked).unwrap();
    let dom = String::from_utf8(dom.stdout).unwrap();
    // The last one: the script's own text names the element too.
    let found = dom
        .rsplit_once(r#"<pre id="layout-check">"#)
        .and_then(|(_, rest)| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the check did not run on {}", page.display()));
    // The DOM is dumped as HTML: the text of the <pre> is escaped.
    let found = found
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let found: Value = serde_json::from_str(&found).unwrap();
    let strings = |key: &str| {
        found[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_string())
            .collect()
    };
    Layout {
        charts: found["charts"].as_u64().unwrap() as usize,
        problems: strings("problems"),
        scrolls: strings("scrolls"),
    }
}

/// A screenshot of `page` for a person to look at, kept under the test's target folder.
pub fn screenshot(page: &Path, name: &str, profile: &Path) -> PathBuf {
    let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pages");
    std::fs::create_dir_all(&keep).unwrap();
    let png = keep.join(format!("{name}.png"));
    let shot = chromium(
        &[
            "--window-size=1200,3000",
            &format!("--screenshot={}", png.display()),
            &format!("file://{}", page.display()),
        ],
        profile,
    );
    assert!(
        shot.status.success(),
        "{}",
        String::from_utf8_lossy(&shot.stderr)
    );
    png
}
