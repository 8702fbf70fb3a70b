//! A real browser for the tests of the pages the grader writes: Debian's Chromium, headless,
//! opening a page from disk ([`dump_dom`], [`screenshot`]), and a reader of the DOM it dumps
//! ([`elements`]). `.ci/install-chromium` installs it for the full suite.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Chromium's path, or `None` when it is not installed and this is not the full suite (the
/// test then returns, saying why). The full suite fails without it: CI installs it.
pub fn chromium_or_skip() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("chromium"))
            .find(|p| p.is_file())
    });
    match found {
        Some(path) => Some(path),
        None if crate::full_suite() => {
            panic!("Chromium is not installed: install it with .ci/install-chromium")
        }
        None => {
            eprintln!(
                "skipped: Chromium is not installed (install it with .ci/install-chromium; \
                 GPU_LABS_FULL=1 requires it)"
            );
            None
        }
    }
}

/// What the browser made of a page.
#[derive(Debug)]
pub struct Rendered {
    /// The DOM after loading, serialised.
    pub dom: String,
    /// The lines of the browser's log that report the page's console: none for a page that
    /// loads without a script error or a blocked resource.
    pub console: Vec<String>,
}

/// The headless browser's common flags: no sandbox (tests run as root in CI), no GPU, its own
/// profile folder, the page's console in its log.
fn headless(chromium: &Path, profile: &Path) -> Command {
    let mut command = Command::new(chromium);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()));
    command
}

/// Opens `page` (a file) in headless Chromium and returns its DOM and console lines.
pub fn dump_dom(chromium: &Path, page: &Path) -> Rendered {
    let profile = tempfile::tempdir().expect("a profile folder");
    let url = file_url(page);
    let out = headless(chromium, profile.path())
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .expect("chromium runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "chromium could not open {url}: {stderr}"
    );
    Rendered {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        console: stderr
            .lines()
            .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
            .map(str::to_string)
            .collect(),
    }
}

/// Takes a screenshot of `page` (a file) at `width`×`height` into `png`.
pub fn screenshot(chromium: &Path, page: &Path, png: &Path, (width, height): (u32, u32)) {
    let profile = tempfile::tempdir().expect("a profile folder");
    let out = headless(chromium, profile.path())
        .arg("--hide-scrollbars")
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(file_url(page))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success() && png.is_file(),
        "chromium took no screenshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `file://` and `path`, absolute, each byte outside the unreserved ones percent-encoded.
fn file_url(path: &Path) -> String {
    let path = std::path::absolute(path).expect("an absolute path");
    let mut url = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'.' | b'_' | b'~') {
            url.push(b as char);
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}

/// One element of a serialised DOM: its attributes (entities decoded) and its text (tags
/// dropped, entities decoded), up to its closing tag.
#[derive(Debug, Clone)]
pub struct Element {
    /// Its attributes by name.
    pub attributes: BTreeMap<String, String>,
    /// Its text.
    pub text: String,
}

impl Element {
    /// An attribute's value; panics, naming it, when the element lacks it.
    pub fn attr(&self, name: &str) -> &str {
        self.attributes
            .get(name)
            .unwrap_or_else(|| panic!("no {name} in {:?}", self.attributes))
    }
}

/// Every `<tag …>` element of `dom` (Chromium's serialisation: attribute values in double
/// quotes), in order. Elements of the same tag are not expected to nest.
pub fn elements(dom: &str, tag: &str) -> Vec<Element> {
    let open = format!("<{tag}");
    let close = format!("</{tag}>");
    let mut found = Vec::new();
    let mut rest = dom;
    while let Some(at) = rest.find(&open) {
        rest = &rest[at + open.len()..];
        if !rest.starts_with([' ', '>', '\n', '/']) {
            continue;
        }
        let (attributes, after) = attributes(rest);
        let end = after.find(&close).unwrap_or(after.len());
        found.push(Element {
            attributes,
            text: text(&after[..end]),
        });
        rest = after;
    }
    found
}

/// The attributes at the start of `s` (just after a tag's name), and what follows the tag.
fn attributes(mut s: &str) -> (BTreeMap<String, String>, &str) {
    let mut found = BTreeMap::new();
    loop {
        s = s.trim_start();
        if let Some(after) = s.strip_prefix('>') {
            return (found, after);
        }
        if let Some(after) = s.strip_prefix("/>") {
            return (found, after);
        }
        if s.is_empty() {
            return (found, s);
        }
        let name_end = s
            .find(|c: char| c == '=' || c == '>' || c.is_whitespace())
            .unwrap_or(s.len());
        let name = s[..name_end].to_string();
        s = &s[name_end..];
        if let Some(after) = s.strip_prefix("=\"") {
            let end = after.find('"').unwrap_or(after.len());
            found.insert(name, decode(&after[..end]));
            s = &after[(end + 1).min(after.len())..];
        } else {
            found.insert(name, String::new());
        }
    }
}

/// `s` without its tags, entities decoded, whitespace runs made one space.
fn text(s: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    decode(&out.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// HTML's character references as a serialised DOM writes them.
fn decode(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_and_their_attributes_are_read_back() {
        let dom =
            "<table><tr data-a=\"x &amp;lt; &lt;b&gt;\" hidden><td>1 &amp; <b>2</b></td></tr>\
                   <tr data-a=\"y\"></tr><track></track></table>";
        let rows = elements(dom, "tr");
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].attr("data-a"), "x &lt; <b>");
        assert_eq!(rows[0].attr("hidden"), "");
        assert_eq!(rows[0].text, "1 & 2");
        assert_eq!(rows[1].attr("data-a"), "y");
    }
}
