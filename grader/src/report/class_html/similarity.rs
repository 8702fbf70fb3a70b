//! The class report's similarity section: the pairs of submissions that share code beyond
//! the template ([`crate::similarity`]), their shares, and each pair's matched regions side by
//! side. Everything from a submission (names, file paths, lines of code) goes through
//! [`escape::html`]; each number is also in a `data-*` attribute.

use super::super::escape;
use crate::similarity::{ClassSimilarity, SimilarPair, SimilaritySection};
use std::io::Write;

/// `share` (0 to 1) as a whole percentage.
fn percent(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// Writes the section for `section`.
pub(super) fn write<W: Write>(out: &mut W, section: &SimilaritySection) -> std::io::Result<()> {
    writeln!(
        out,
        "<section id=\"similarity\">\n<h2>Similar submissions</h2>"
    )?;
    match section {
        SimilaritySection::NotCompared(why) => writeln!(
            out,
            "<p class=\"not-compared\">Not compared: {}</p>",
            escape::html(why)
        )?,
        SimilaritySection::Compared(found) => compared(out, found)?,
    }
    writeln!(out, "</section>")
}

fn compared<W: Write>(out: &mut W, found: &ClassSimilarity) -> std::io::Result<()> {
    writeln!(
        out,
        "<p id=\"similarity-summary\" data-threshold=\"{t}\" data-submissions=\"{n}\" \
         data-with-code=\"{c}\" data-pairs-above=\"{above}\" data-seconds=\"{s:.3}\">\
         {n} submissions compared ({c} with code of their own beyond the template) in {s:.1} s. \
         Pairs in which one side shares {tp} or more of its code with the other: {above}.</p>\n\
         <p class=\"muted\">A lead for you to read, never proof of copying: students given the \
         same template, hints and tutorial write alike, and short or heavily restructured \
         copies are missed. Names, numbers and strings are compared as placeholders (renaming \
         hides nothing), comments and layout are ignored, the template's code and code common \
         to more than {common} submissions are left out. A pair's share is the part of one \
         side's fingerprints (winnowed runs of {k} tokens) the other side has too; each side \
         is shown.</p>",
        t = found.threshold,
        n = found.submissions,
        c = found.with_code,
        above = found.pairs_above,
        s = found.seconds,
        tp = percent(found.threshold),
        common = found.common_limit,
        k = found.k,
    )?;
    if found.pairs.is_empty() {
        writeln!(out, "<p>No pair reaches the threshold.</p>")?;
    } else {
        if found.pairs_above > found.pairs.len() {
            writeln!(
                out,
                "<p>The {} most similar pairs are shown.</p>",
                found.pairs.len()
            )?;
        }
        pairs_table(out, &found.pairs)?;
        for (i, pair) in found.pairs.iter().enumerate() {
            pair_view(out, i + 1, pair)?;
        }
    }
    if !found.notes.is_empty() {
        writeln!(
            out,
            "<h3>Left out of the comparison</h3>\n<ul class=\"notes\">"
        )?;
        for (student, note) in &found.notes {
            writeln!(
                out,
                "<li><b>{}</b>: {}</li>",
                escape::html(&escape::name(student)),
                escape::html(note)
            )?;
        }
        writeln!(out, "</ul>")?;
    }
    Ok(())
}

/// The pairs, most similar first, each linking to its view.
fn pairs_table<W: Write>(out: &mut W, pairs: &[SimilarPair]) -> std::io::Result<()> {
    writeln!(
        out,
        "<table class=\"similar\">\n<tr><th>pair</th><th>student</th><th>share of theirs</th>\
         <th>student</th><th>share of theirs</th><th>fingerprints matched</th></tr>"
    )?;
    for (i, p) in pairs.iter().enumerate() {
        writeln!(
            out,
            "<tr data-pair=\"{n}\" data-a=\"{a}\" data-b=\"{b}\" data-share-a=\"{sa:.4}\" \
             data-share-b=\"{sb:.4}\" data-matched=\"{m}\"><td><a href=\"#pair-{n}\">{n}</a></td>\
             <td>{a}</td><td class=\"n\">{pa}</td><td>{b}</td><td class=\"n\">{pb}</td>\
             <td class=\"n\">{m}</td></tr>",
            n = i + 1,
            a = escape::html(&escape::name(&p.a.student)),
            b = escape::html(&escape::name(&p.b.student)),
            sa = p.a.share,
            sb = p.b.share,
            pa = percent(p.a.share),
            pb = percent(p.b.share),
            m = p.matched,
        )?;
    }
    writeln!(out, "</table>")
}

/// One pair's matched regions, side by side.
fn pair_view<W: Write>(out: &mut W, n: usize, pair: &SimilarPair) -> std::io::Result<()> {
    let a = escape::html(&escape::name(&pair.a.student)).into_owned();
    let b = escape::html(&escape::name(&pair.b.student)).into_owned();
    writeln!(
        out,
        "<h3 id=\"pair-{n}\">{n}. {a} ({}) and {b} ({})</h3>\n\
         <table class=\"regions\" data-pair=\"{n}\">\n<tr><th>{a}</th><th>{b}</th></tr>",
        percent(pair.a.share),
        percent(pair.b.share),
    )?;
    for r in &pair.regions {
        let side = |e: &crate::similarity::regions::Excerpt| {
            let width = e.last_line.to_string().len();
            let lines: String = e
                .lines
                .iter()
                .enumerate()
                .map(|(i, l)| format!("{:>width$}  {}\n", e.first_line + i, escape::html(l)))
                .collect();
            let more = (e.last_line + 1 - e.first_line).saturating_sub(e.lines.len());
            let more = if more > 0 {
                format!("<div class=\"muted\">… {more} more lines</div>")
            } else {
                String::new()
            };
            format!(
                "<td data-file=\"{f}\" data-first=\"{}\" data-last=\"{}\"><div class=\"file\">\
                 {f}:{}–{}</div><pre class=\"code\">{lines}</pre>{more}</td>",
                e.first_line,
                e.last_line,
                e.first_line,
                e.last_line,
                f = escape::html(&e.file),
            )
        };
        writeln!(
            out,
            "<tr class=\"region\" data-prints=\"{}\">{}{}</tr>",
            r.prints,
            side(&r.a),
            side(&r.b)
        )?;
    }
    writeln!(out, "</table>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::similarity::regions::{Excerpt, Region};
    use crate::similarity::Side;

    const HOSTILE: &str = "eve<img src=x onerror=alert(1)>\"'&amp;";

    fn excerpt(file: &str, line: &str) -> Excerpt {
        Excerpt {
            file: file.into(),
            first_line: 7,
            last_line: 40,
            lines: vec![line.into(), "    x += 1;".into()],
        }
    }

    fn found(pairs: Vec<SimilarPair>) -> ClassSimilarity {
        ClassSimilarity {
            threshold: 0.5,
            k: 15,
            w: 8,
            submissions: 3,
            with_code: 2,
            common_limit: 10,
            pairs_above: pairs.len(),
            pairs,
            notes: vec![(HOSTILE.into(), "src/<b>.rs: not compared".into())],
            seconds: 0.25,
        }
    }

    fn page(section: &SimilaritySection) -> String {
        let mut out = Vec::new();
        write(&mut out, section).expect("written");
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn a_pair_is_shown_side_by_side_and_what_a_student_wrote_never_runs() {
        let pair = SimilarPair {
            a: Side {
                student: HOSTILE.into(),
                prints: 100,
                share: 0.93,
            },
            b: Side {
                student: "bob".into(),
                prints: 120,
                share: 0.775,
            },
            matched: 93,
            regions: vec![Region {
                a: excerpt("src/<lib>.rs", "</pre></td><script>alert(1)</script>"),
                b: excerpt("src/lib.rs", "let s = \"</table>\";"),
                prints: 40,
            }],
        };
        let shown = page(&SimilaritySection::Compared(found(vec![pair])));
        for markup in ["<img", "<script", "</pre></td>", "src/<b>.rs", "\"</table>"] {
            assert!(!shown.contains(markup), "{markup}: {shown}");
        }
        assert!(shown.contains("data-share-a=\"0.9300\" data-share-b=\"0.7750\""));
        assert!(shown.contains("<td class=\"n\">93%</td><td>bob</td><td class=\"n\">78%</td>"));
        assert!(
            shown.contains(" 7  &lt;/pre&gt;&lt;/td&gt;&lt;script&gt;"),
            "{shown}"
        );
        assert!(shown.contains("… 32 more lines"), "{shown}");
        assert!(shown.contains("<h3 id=\"pair-1\">"));
        assert!(shown.contains("src/&lt;lib&gt;.rs:7–40"));
        assert!(shown.contains("src/&lt;b&gt;.rs: not compared"));
    }

    #[test]
    fn no_pair_and_no_comparison_each_say_so() {
        let none = page(&SimilaritySection::Compared(found(Vec::new())));
        assert!(none.contains("No pair reaches the threshold."), "{none}");
        assert!(!none.contains("class=\"similar\""));
        let not = page(&SimilaritySection::NotCompared("no <folder>".into()));
        assert!(not.contains("Not compared: no &lt;folder&gt;"), "{not}");
    }
}
