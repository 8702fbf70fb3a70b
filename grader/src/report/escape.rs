//! Text a submission controls (panic messages, its output, compiler errors quoting its code,
//! dependency and file names) escaped for the place it goes, so that it can only ever be read,
//! never act: no terminal escape sequences or carriage returns that rewrite what is shown, no
//! Markdown or HTML that forges a line ("Score: 25/25") or hides the rest (`<!--`), no cell a
//! spreadsheet runs as a formula. Each renderer calls the function for its place on every
//! string that came from a report.

use std::borrow::Cow;

/// Whether `c` would act on a terminal or a reader instead of showing: C0 and C1 control
/// characters (escape, carriage return, backspace, …; not line feed and tab), DEL, and the
/// Unicode controls that reorder or hide text (bidirectional overrides and isolates, zero-width
/// characters).
fn acts(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// `text` for a terminal: every character that would act shows as its escape (`\u{1b}`), so an
/// escape sequence in a panic message cannot clear the screen, recolour or rewrite a line.
pub fn terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if acts(c) {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// `text` with every control character shown as its escape, line feed and tab included: for
/// a name, which is one line (a folder name with a line break would look like two rows).
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| acts(c) || matches!(c, '\n' | '\t')) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if acts(c) || matches!(c, '\n' | '\t') {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// Whether `c` is invisible or changes the letter before it, so that two names that differ
/// only there look the same: combining marks (`e` + U+0301 shows as `é`, as U+00E9 does),
/// soft hyphens, joiners and fillers.
fn looks_like_nothing(c: char) -> bool {
    matches!(c,
        '\u{300}'..='\u{36f}' | '\u{1ab0}'..='\u{1aff}' | '\u{1dc0}'..='\u{1dff}'
        | '\u{20d0}'..='\u{20ff}' | '\u{fe00}'..='\u{fe0f}' | '\u{fe20}'..='\u{fe2f}'
        | '\u{ad}' | '\u{61c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}'
        | '\u{180b}'..='\u{180e}' | '\u{2060}'..='\u{2064}' | '\u{3164}' | '\u{ffa0}')
}

/// A student's name (their folder's name) as every report shows it: one line, control and
/// bidirectional characters as escapes, and the characters that look like nothing (combining
/// marks, joiners) as escapes too, so names that differ only in case or in Unicode
/// normalization (`José` written with U+00E9 or with `e` + U+0301) show differently.
pub fn name(text: &str) -> Cow<'_, str> {
    if !text.chars().any(looks_like_nothing) {
        return one_line(text);
    }
    Cow::Owned(
        one_line(text)
            .chars()
            .map(|c| {
                if looks_like_nothing(c) {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// Whether the word that starts at `chars[i]` would become a link on its own in GitHub's
/// Markdown (an autolink: `https://…`, `www.…`, `name@host.org`).
fn autolinks(word: &[char]) -> bool {
    let word: String = word.iter().collect::<String>().to_ascii_lowercase();
    word.contains("://")
        || word.contains("www.")
        || word.contains(':') && (word.contains("mailto") || word.contains("xmpp"))
        || word
            .split_once('@')
            .is_some_and(|(_, host)| host.contains('.'))
}

/// `word` as an inline code span that nothing inside can close: the backtick run around it
/// is longer than any inside, with a space where it starts or ends with a backtick, and pipes
/// escaped (a table would end its cell there even inside code).
pub fn markdown_code(word: &str) -> String {
    let word = one_line(word);
    let longest = word.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if word.starts_with('`') || word.ends_with('`') || word.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{}{pad}{fence}", word.replace('|', "\\|"))
}

/// `text` for one line of Markdown (a table cell, a list item, a heading): one line, where
/// every character with a meaning in Markdown or HTML is escaped, so it shows as written and
/// cannot start a heading, a list, emphasis, math, a link or an autolink, an HTML tag or
/// comment, or end a table cell. Code spans (`` `name` ``, matched as CommonMark matches them)
/// are kept: inside one nothing is Markdown or HTML, so only its pipes are escaped (a table
/// would end the cell there). A word GitHub would turn into a link is shown as code.
pub fn markdown_inline(text: &str) -> String {
    let chars: Vec<char> = terminal(text)
        .chars()
        .map(|c| if matches!(c, '\n' | '\t') { ' ' } else { c })
        .collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|c| **c == '`').count();
    let mut out = String::with_capacity(text.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '`' {
            let run = run_at(i);
            // The span closes at the next run of exactly as many backticks.
            let mut j = i + run;
            let close = loop {
                match chars[j..].iter().position(|c| *c == '`') {
                    None => break None,
                    Some(k) => {
                        let at = j + k;
                        let len = run_at(at);
                        if len == run {
                            break Some(at);
                        }
                        j = at + len;
                    }
                }
            };
            match close {
                Some(at) => {
                    for &c in &chars[i..at + run] {
                        if c == '|' {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                    i = at + run;
                }
                None => {
                    out.push_str(&"\\`".repeat(run));
                    i += run;
                }
            }
            continue;
        }
        // A word (up to a space or a backtick) that would be an autolink is shown as code.
        let starts_word = i == 0 || chars[i - 1] == ' ';
        if starts_word && c != ' ' {
            let len = chars[i..]
                .iter()
                .take_while(|c| !matches!(c, ' ' | '`'))
                .count();
            if autolinks(&chars[i..i + len]) {
                out.push_str(&markdown_code(
                    &chars[i..i + len].iter().collect::<String>(),
                ));
                i += len;
                continue;
            }
        }
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '*' | '_' | '[' | ']' | '|' | '~' | '$' => {
                out.push('\\');
                out.push(c);
            }
            // These start a block only at the start of a line.
            '#' | '-' | '+' | '=' | ':' if out.chars().all(|c| c == ' ') => {
                out.push('\\');
                out.push(c);
            }
            // `1.` or `1)` at the start of a line starts a numbered list.
            '.' | ')'
                if out.trim_start().chars().all(|c| c.is_ascii_digit())
                    && !out.trim_start().is_empty()
                    && chars.get(i + 1).is_none_or(|c| *c == ' ') =>
            {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// `text` as a fenced block of Markdown, shown exactly as written: the fence is longer than
/// any run of backticks in it (so nothing inside can close it), and characters that would act
/// on a terminal show as escapes.
pub fn markdown_block(text: &str, info: &str) -> String {
    let text = terminal(text);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}{info}\n{text}\n{fence}")
}

/// `text` for a spreadsheet's cell: a cell that starts with `=`, `+`, `-`, `@`, a tab or a
/// carriage return (or their full-width forms, or any of them after spaces) is a formula to
/// Excel, LibreOffice or Google Sheets, so it gets a leading `'` (shown, not run: OWASP's
/// advice for CSV injection); every control character (line breaks and tabs too: a cell is
/// one line) and every bidirectional control shows as its escape (`\u{202e}`).
pub fn spreadsheet(text: &str) -> Cow<'_, str> {
    let starts_formula = text
        .trim_start_matches(' ')
        .chars()
        .next()
        .is_some_and(|c| {
            matches!(
                c,
                '=' | '+'
                    | '-'
                    | '@'
                    | '\t'
                    | '\r'
                    | '\n'
                    | '\u{ff1d}'
                    | '\u{ff0b}'
                    | '\u{ff0d}'
                    | '\u{ff20}'
            )
        });
    match (starts_formula, one_line(text)) {
        (true, shown) => Cow::Owned(format!("'{shown}")),
        (false, shown) => shown,
    }
}

/// `text` for HTML, as element content or inside a quoted attribute value: `&`, `<`, `>`, `"`
/// and `'` become character references, so a student's folder name such as
/// `<img src=x onerror=…>` shows as those characters and never opens a tag, closes an
/// attribute or starts an entity; characters that would act are escaped as for a terminal
/// (a bidirectional override cannot reorder the page's text).
pub fn html(text: &str) -> Cow<'_, str> {
    let shown = terminal(text);
    if !shown.contains(['&', '<', '>', '"', '\'']) {
        return shown;
    }
    let mut out = String::with_capacity(shown.len() + 16);
    for c in shown.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn terminal_escapes_show_instead_of_acting() {
        assert_eq!(terminal("plain\nlines\tand tabs"), "plain\nlines\tand tabs");
        assert_eq!(
            terminal("\u{1b}[2J\u{1b}[1;1Hok\rScore: 25/25"),
            "\\u{1b}[2J\\u{1b}[1;1Hok\\u{d}Score: 25/25"
        );
        assert_eq!(terminal("a\u{202e}b\u{9b}c"), "a\\u{202e}b\\u{9b}c");
    }

    #[test]
    fn markdown_inline_cannot_start_a_line_a_tag_or_emphasis() {
        let shown = markdown_inline("x\n\n**Score: 25/25**\n<!-- hide | the rest");
        assert!(!shown.contains('\n'));
        assert!(!shown.contains("<!--"));
        assert!(!shown.contains("**"));
        assert!(!shown.contains(" | "));
        assert_eq!(markdown_inline("# Score"), "\\# Score");
        // Code spans stay code; an unmatched backtick is shown, not opened.
        assert_eq!(
            markdown_inline("adds `foo_bar` and <b>"),
            "adds `foo_bar` and &lt;b&gt;"
        );
        assert_eq!(markdown_inline("`a``<!--"), "\\`a\\`\\`&lt;!--");
        assert_eq!(markdown_inline("`a|b`"), "`a\\|b`");
    }

    #[test]
    fn a_block_cannot_be_closed_from_inside() {
        let block = markdown_block("panic: ````\n# Score: 25/25\n```", "text");
        let fence = block.lines().next().unwrap();
        assert_eq!(fence, "`````text");
        assert_eq!(block.lines().last().unwrap(), "`````");
        // Every line in between is inside the fence: none is as long a run of backticks.
        assert!(block
            .lines()
            .skip(1)
            .take(3)
            .all(|l| !l.starts_with("`````")));
    }

    #[test]
    fn html_shows_a_hostile_name_as_text() {
        let name = "eve\"><script>alert('x')</script>&amp;\u{202e}";
        assert_eq!(
            html(name),
            "eve&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp;\\u{202e}"
        );
        assert_eq!(html("alice"), "alice");
    }

    #[test]
    fn a_formula_is_shown_not_run() {
        assert_eq!(spreadsheet("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(spreadsheet("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(spreadsheet("graded"), "graded");
        assert_eq!(spreadsheet("error: x"), "error: x");
    }

    /// Strings a submission could choose (a folder name, a dependency name, a panic message),
    /// each aimed at one renderer or another.
    pub(crate) const HOSTILE: &[&str] = &[
        "\u{1b}[2J\u{1b}[31mred\u{1b}[0m",
        "\u{9b}31m C1 CSI",
        "back\rScore: 25/25",
        "bell\u{7}and\u{8}backspace",
        "=HYPERLINK(\"http://x\",\"y\")",
        "+cmd|' /C calc'!A0",
        "-2+3",
        "@SUM(A1)",
        "  =1+1",
        "\t=1+1",
        "\u{ff1d}1+1",
        "line one\nline two\u{202e}txt.exe",
        "\u{2066}isolated\u{2069}\u{200b}\u{feff}",
        "<!-- the rest is hidden",
        "x` <!-- `y",
        "</details><script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "```\n# Score: 25/25\n```",
        "````` five ` one `` two",
        "`",
        "[click](http://evil.example)",
        "![pixel](http://evil.example/p.png)",
        "https://evil.example/x",
        "see www.evil.example now",
        "mail eve@evil.example",
        "$$\\color{red}{25/25}$$",
        "1. a list",
        "2) another",
        "# Score: 25/25",
        "> quoted",
        "| a | b |",
        "**bold** _em_ ~~gone~~",
        "&lt;entity&#x3c;",
        "name\u{0}nul",
        "\\`escaped backtick`",
    ];

    /// Whether `c` is a raw control (not line feed or tab) or a bidirectional or invisible
    /// control: what no output may hold.
    fn raw(c: char) -> bool {
        acts(c)
    }

    /// `line` as CommonMark reads it outside code spans: backslash escapes taken as text
    /// (dropped with the character they escape), code spans removed.
    pub(crate) fn outside_code(line: &str) -> String {
        let chars: Vec<char> = line.chars().collect();
        let run_at = |i: usize| chars[i..].iter().take_while(|c| **c == '`').count();
        let mut out = String::new();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '\\' if i + 1 < chars.len() => i += 2,
                '`' => {
                    let run = run_at(i);
                    let mut j = i + run;
                    let mut close = None;
                    while j < chars.len() {
                        if chars[j] == '`' {
                            let len = run_at(j);
                            if len == run {
                                close = Some(j + len);
                                break;
                            }
                            j += len;
                        } else {
                            j += 1;
                        }
                    }
                    match close {
                        Some(end) => i = end,
                        None => {
                            out.push_str(&"`".repeat(run));
                            i += run;
                        }
                    }
                }
                c => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        out
    }

    #[test]
    fn every_hostile_string_is_inert_in_a_markdown_line() {
        for text in HOSTILE {
            let shown = markdown_inline(text);
            assert!(!shown.contains('\n'), "{text:?} -> {shown:?}");
            assert!(!shown.chars().any(raw), "{text:?} -> {shown:?}");
            let plain = outside_code(&shown);
            for bad in ["<", ">", "*", "_", "[", "]", "|", "~", "$", "://", "www."] {
                assert!(
                    !plain.contains(bad),
                    "{text:?} -> {shown:?}: {bad:?} outside code"
                );
            }
            let first = plain.trim_start();
            assert!(
                !first.starts_with(['#', '-', '+', '=', '>']),
                "{text:?} -> {shown:?} starts a block"
            );
            let digits = first.chars().take_while(char::is_ascii_digit).count();
            assert!(
                digits == 0 || !first[digits..].starts_with(['.', ')']),
                "{text:?} -> {shown:?} starts a list"
            );
        }
    }

    #[test]
    fn every_hostile_string_stays_inside_its_code_span_and_its_block() {
        for text in HOSTILE {
            let span = markdown_code(text);
            assert!(!span.chars().any(|c| raw(c) || c == '\n'), "{span:?}");
            assert_eq!(
                outside_code(&span),
                "",
                "{text:?} -> {span:?} leaves its span"
            );
            let block = markdown_block(text, "text");
            let lines: Vec<&str> = block.lines().collect();
            let fence = lines[0].trim_end_matches("text");
            assert!(
                fence.len() >= 3 && fence.chars().all(|c| c == '`'),
                "{block}"
            );
            assert_eq!(*lines.last().unwrap(), fence, "{block}");
            for line in &lines[1..lines.len() - 1] {
                let run = line.trim_start().chars().take_while(|c| *c == '`').count();
                assert!(run < fence.len(), "{text:?}: {line:?} closes the fence");
            }
            assert!(!block.chars().any(raw), "{block:?}");
        }
    }

    #[test]
    fn every_hostile_string_is_inert_on_a_terminal_in_html_and_in_a_spreadsheet() {
        for text in HOSTILE {
            let shown = terminal(text);
            assert!(!shown.chars().any(raw), "{text:?} -> {shown:?}");
            let shown = html(text);
            assert!(!shown.chars().any(raw), "{text:?} -> {shown:?}");
            assert!(
                !shown.contains(['<', '>', '"', '\'']),
                "{text:?} -> {shown:?}"
            );
            let cell = spreadsheet(text);
            assert!(
                !cell.chars().any(|c| raw(c) || c == '\n' || c == '\t'),
                "{text:?} -> {cell:?}"
            );
            let first = cell.trim_start_matches(' ');
            assert!(
                !first.starts_with([
                    '=', '+', '-', '@', '\u{ff1d}', '\u{ff0b}', '\u{ff0d}', '\u{ff20}'
                ]),
                "{text:?} -> {cell:?} is a formula"
            );
            let shown = name(text);
            assert!(
                !shown.chars().any(|c| raw(c) || c == '\n' || c == '\t'),
                "{text:?} -> {shown:?}"
            );
        }
    }

    #[test]
    fn names_that_look_alike_show_differently() {
        let composed = "Jos\u{e9}";
        let decomposed = "Jose\u{301}";
        assert_ne!(name(composed), name(decomposed));
        assert_eq!(name(composed), composed);
        assert_eq!(name(decomposed), "Jose\\u{301}");
        assert_eq!(name("a\u{ad}b"), "a\\u{ad}b");
        assert_eq!(name("two\nlines"), "two\\u{a}lines");
        assert_eq!(name("alice"), "alice");
        assert_ne!(name("Alice"), name("alice"));
    }

    #[test]
    fn links_are_shown_as_code_and_lists_are_not_started() {
        assert_eq!(
            markdown_inline("see https://evil.example/a now"),
            "see `https://evil.example/a` now"
        );
        assert_eq!(markdown_inline("1. first"), "1\\. first");
        assert_eq!(markdown_inline("cost $5"), "cost \\$5");
        assert_eq!(markdown_code("a`b"), "``a`b``");
        assert_eq!(markdown_code("`x"), "`` `x ``");
    }
}
