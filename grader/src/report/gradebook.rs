//! A class's reports as a CSV gradebook an LMS imports: one row per student, one column per
//! rubric item, then total, max, status, seed and when it was graded.

use super::{points, Report};

/// One student's row: their report, or why there is none.
#[derive(Debug, Clone)]
pub struct Row<'a> {
    /// The student (their repository's folder name).
    pub student: &'a str,
    /// Their report, when they were graded.
    pub report: Option<&'a Report>,
    /// How grading ended: `graded`, `not-compiled`, `timed-out`, `error: …`.
    pub status: String,
    /// When it was graded (RFC 3339, UTC).
    pub graded_at: &'a str,
}

/// One row's numbers exactly as the gradebook writes them; the class report shows these same
/// strings, so the two cannot disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cells {
    /// Each item's points, in the order asked for; empty where the report lacks the item or
    /// skipped it (a skipped item is out of the maximum: no score, not a zero).
    pub items: Vec<String>,
    /// The points earned, empty without a report.
    pub total: String,
    /// The points possible, empty without a report.
    pub max: String,
}

/// The numbers of the gradebook row of `report` for the columns `items`.
pub fn cells(items: &[String], report: Option<&Report>) -> Cells {
    let scores = items
        .iter()
        .map(|id| {
            report
                .and_then(|r| r.items.iter().find(|i| &i.id == id))
                .filter(|i| i.status != super::Status::Skipped)
                .map(|i| points(i.score))
                .unwrap_or_default()
        })
        .collect();
    Cells {
        items: scores,
        total: report.map(|r| points(r.score())).unwrap_or_default(),
        max: report.map(|r| points(r.max_score())).unwrap_or_default(),
    }
}

/// Writes the gradebook: `student`, each of `items`, `total`, `max`, `status`, `seed`,
/// `graded_at`. An item a report lacks, or skipped (not counted), is left empty.
pub fn write_csv<W: std::io::Write>(
    out: W,
    items: &[String],
    rows: &[Row<'_>],
) -> Result<(), csv::Error> {
    let mut csv = csv::Writer::from_writer(out);
    let mut header = vec!["student".to_string()];
    header.extend(items.iter().cloned());
    header.extend(["total", "max", "status", "seed", "graded_at"].map(String::from));
    csv.write_record(&header)?;
    for row in rows {
        // The student's folder name and the status (which may quote an error about their
        // files) are theirs to shape: shown in a spreadsheet, never run as a formula.
        let mut record =
            vec![super::escape::spreadsheet(&super::escape::name(row.student)).into_owned()];
        let numbers = cells(items, row.report);
        record.extend(numbers.items);
        record.push(numbers.total);
        record.push(numbers.max);
        record.push(super::escape::spreadsheet(&row.status).into_owned());
        record.push(row.report.map(|r| r.seed.to_string()).unwrap_or_default());
        record.push(row.graded_at.to_string());
        csv.write_record(&record)?;
    }
    csv.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{sample_item, BuildStatus, Status};

    #[test]
    fn a_row_per_student_with_a_column_per_item_and_commas_quoted() {
        let item = |id: &str, score: f64| sample_item(id, score, 3.0, Status::Passed);
        let report = Report {
            assignment: "matmul".into(),
            build: BuildStatus::Built,
            notes: vec![],
            seed: 42,
            items: vec![item("a", 3.0), item("b", 1.5)],
            execution_time: 1.0,
            sandbox: None,
        };
        let rows = [
            Row {
                student: "alice",
                report: Some(&report),
                status: "graded".into(),
                graded_at: "2026-11-22T10:00:00Z",
            },
            Row {
                student: "bob, jr",
                report: None,
                status: "error: not a lab crate".into(),
                graded_at: "2026-11-22T10:00:01Z",
            },
        ];
        let mut out = Vec::new();
        write_csv(&mut out, &["a".into(), "b".into()], &rows).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "student,a,b,total,max,status,seed,graded_at\n\
             alice,3,1.5,4.5,6,graded,42,2026-11-22T10:00:00Z\n\
             \"bob, jr\",,,,,error: not a lab crate,,2026-11-22T10:00:01Z\n"
        );
    }

    #[test]
    fn every_hostile_name_has_its_row_shown_not_run() {
        let hostile = crate::report::escape::tests::HOSTILE;
        let rows: Vec<Row<'_>> = hostile
            .iter()
            .map(|h| Row {
                student: h,
                report: None,
                status: format!("error: {h}"),
                graded_at: "2026-11-22T10:00:00Z",
            })
            .collect();
        let mut out = Vec::new();
        write_csv(&mut out, &["a".into()], &rows).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            !text
                .chars()
                .any(|c| (c.is_control() && c != '\n') || ('\u{2066}'..='\u{2069}').contains(&c)),
            "{text:?}"
        );
        // One line per row: no name or status breaks a line.
        assert_eq!(text.lines().count(), hostile.len() + 1, "{text}");
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let cells: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        assert_eq!(cells.len(), hostile.len());
        for row in &cells {
            for cell in [&row[0], &row[4]] {
                assert!(
                    !cell
                        .trim_start()
                        .starts_with(['=', '+', '-', '@', '\u{ff1d}']),
                    "{cell:?} is a formula"
                );
                assert!(!cell.contains(['\u{202e}', '\u{1b}']), "{cell:?}");
            }
        }
        assert!(text.contains("'=HYPERLINK("), "{text}");
        assert!(
            text.contains("line one\\u{a}line two\\u{202e}txt.exe"),
            "{text}"
        );
    }
}
