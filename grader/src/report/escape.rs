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

/// `text` for one line of Markdown (a table cell, a list item, a heading): one line, where
/// every character with a meaning in Markdown or HTML is escaped, so it shows as written and
/// cannot start a heading, emphasis, a link, an HTML tag or comment, or end a table cell.
/// Code spans (`` `name` ``, matched as CommonMark matches them) are kept: inside one nothing
/// is Markdown or HTML, so only its pipes are escaped (a table would end the cell there).
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
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            // These start a block only at the start of a line.
            '#' | '-' | '+' | '=' if out.is_empty() => {
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
/// carriage return is a formula to Excel, LibreOffice and Google Sheets, so it gets a leading
/// `'` (shown, not run); characters that act are escaped as for a terminal.
pub fn spreadsheet(text: &str) -> Cow<'_, str> {
    let starts_formula = text
        .chars()
        .next()
        .is_some_and(|c| matches!(c, '=' | '+' | '-' | '@' | '\t' | '\r'));
    match (starts_formula, terminal(text)) {
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
mod tests {
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
}
