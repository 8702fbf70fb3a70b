//! Where a batch keeps each student's result: `<feedback>/<student>/record.json` (the whole
//! record, read back to resume and by `grader collect`), `results.json` (Gradescope's format)
//! and `feedback.md` (every lost point explained). Each file is written whole and renamed into
//! place, so an interrupted batch never leaves half a result.

use crate::report::{self, Report};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How grading one submission ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Built and graded (whatever the score).
    Graded,
    /// Did not compile: every item scored 0 with the compiler's error.
    NotCompiled,
    /// Contains code a lab may not: every item scored 0 with the file and line.
    Refused,
    /// Graded, but at least one item ran past its time limit.
    TimedOut,
    /// Could not be graded (not a lab crate, a grader failure): the record says why.
    Error,
}

impl Outcome {
    /// The word the gradebook and the summary use.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Graded => "graded",
            Outcome::NotCompiled => "not-compiled",
            Outcome::Refused => "refused",
            Outcome::TimedOut => "timed-out",
            Outcome::Error => "error",
        }
    }
}

/// One student's result in a batch.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// The student: their repository's folder name.
    pub student: String,
    /// A hash of what was graded (the submission's files, the rubric, the grader version, the
    /// GPU mode): an unchanged submission is not graded again.
    pub fingerprint: String,
    /// How it ended.
    pub outcome: Outcome,
    /// The report, unless grading failed.
    pub report: Option<Report>,
    /// Why it could not be graded, for [`Outcome::Error`].
    pub error: Option<String>,
    /// When it was graded (RFC 3339, UTC).
    pub graded_at: String,
    /// Seconds it took, building included.
    pub seconds: f64,
    /// Seconds its build took (from the start of the build to its end, waiting for the shared
    /// build cache included); `None` when nothing was built (refused before building, not a
    /// crate) and in records written before builds were timed, which still load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_seconds: Option<f64>,
}

impl Record {
    /// The gradebook's status cell: the outcome, and the reason of an error.
    pub fn status(&self) -> String {
        match &self.error {
            Some(e) => format!("error: {}", e.lines().next().unwrap_or("")),
            None => self.outcome.word().to_string(),
        }
    }
}

/// The longest folder name kept as the student wrote it, in bytes: a file system allows 255,
/// and an escaped name is several times longer than the name.
const LONGEST_PLAIN: usize = 120;

/// The name of a student's feedback folder: their name itself when it is plain (printable
/// ASCII without capitals or `~`, not hidden, not long), which is the usual
/// `assignment-username`. Any other name is shown with its controls escaped, cut short, and
/// followed by `~` and a hash of the exact name, so that every name gets a folder of its own
/// even where the file system folds case or Unicode normalization (macOS, Windows shares) or
/// limits a name's length, and no name can take another's folder.
pub fn folder_name(student: &str) -> String {
    let plain = !student.is_empty()
        && student.len() <= LONGEST_PLAIN
        && !student.starts_with('.')
        && student
            .chars()
            .all(|c| matches!(c, ' '..='~') && !c.is_ascii_uppercase() && c != '~');
    if plain {
        return student.to_string();
    }
    // A name read from a record may hold what no folder name can: `/` shows as its escape.
    let shown = crate::report::escape::name(student).replace('/', "\\u{2f}");
    let mut cut = LONGEST_PLAIN.min(shown.len());
    while !shown.is_char_boundary(cut) {
        cut -= 1;
    }
    let prefix = shown[..cut].trim_start_matches('.');
    format!(
        "{prefix}~{:016x}",
        grader_engine::fingerprint::of_text(student)
    )
}

/// The feedback folder of one student.
pub fn student_dir(feedback: &Path, student: &str) -> PathBuf {
    feedback.join(folder_name(student))
}

/// Reads a student's record, if a complete one of theirs is there.
pub fn read(feedback: &Path, student: &str) -> Option<Record> {
    let path = student_dir(feedback, student).join("record.json");
    let record: Record = serde_json::from_slice(
        &grader_engine::intake::read_file(&path, grader_engine::intake::GRADER_FILE_BYTES, "")
            .ok()?,
    )
    .ok()?;
    (record.student == student).then_some(record)
}

/// The record of a student who has none that can be read: a gradebook row that says why,
/// so that no student is left out of the gradebook.
pub fn missing(student: &str, why: String) -> Record {
    Record {
        student: student.to_string(),
        fingerprint: String::new(),
        outcome: Outcome::Error,
        report: None,
        error: Some(why),
        graded_at: String::new(),
        seconds: 0.0,
        build_seconds: None,
    }
}

/// Every record under `feedback`, by student name: each folder's record.json, read whatever
/// the folder's name (a record names its student), and one that cannot be read as an error
/// record named after its folder, so a damaged record still has its gradebook row.
pub fn read_all(feedback: &Path) -> std::io::Result<Vec<Record>> {
    let mut records = Vec::new();
    for entry in std::fs::read_dir(feedback)? {
        let entry = entry?;
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let path = entry.path().join("record.json");
        let Ok(bytes) =
            grader_engine::intake::read_file(&path, grader_engine::intake::GRADER_FILE_BYTES, "")
        else {
            continue;
        };
        match serde_json::from_slice::<Record>(&bytes) {
            Ok(record) => records.push(record),
            Err(e) => records.push(missing(
                &entry.file_name().to_string_lossy(),
                format!(
                    "its record {} cannot be read ({e}): grade it again",
                    path.display()
                ),
            )),
        }
    }
    records.sort_by(|a, b| a.student.cmp(&b.student));
    Ok(records)
}

/// Writes `text` to `path` whole: a temporary file beside it, renamed into place.
fn write_whole(path: &Path, text: &[u8]) -> std::io::Result<()> {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, text)?;
    std::fs::rename(&partial, path)
}

/// Writes a student's record, results.json and feedback.md. The record goes last: a record on
/// disk means the other two are complete.
/// A folder that holds another student's record is not written over (two names that one file
/// system takes for the same): an error, and the gradebook row of the one not written says so.
pub fn write(feedback: &Path, record: &Record) -> std::io::Result<()> {
    let dir = student_dir(feedback, &record.student);
    std::fs::create_dir_all(&dir)?;
    if let Ok(bytes) = grader_engine::intake::read_file(
        &dir.join("record.json"),
        grader_engine::intake::GRADER_FILE_BYTES,
        "",
    ) {
        if let Ok(other) = serde_json::from_slice::<Record>(&bytes) {
            if other.student != record.student {
                return Err(std::io::Error::other(format!(
                    "{} holds the record of {}: not written over",
                    dir.display(),
                    report::escape::name(&other.student)
                )));
            }
        }
    }
    let (results, markdown) = match &record.report {
        Some(report) => (
            report::gradescope::to_json(report),
            report::markdown::feedback(&record.student, report),
        ),
        None => {
            let why = record.error.as_deref().unwrap_or("it could not be graded");
            (
                serde_json::json!({
                    "score": 0.0,
                    "output": report::escape::terminal(&format!("Not graded: {why}")),
                    "tests": [],
                })
                .to_string(),
                report::markdown::not_graded(&record.student, why),
            )
        }
    };
    write_whole(&dir.join("results.json"), results.as_bytes())?;
    // The speed chart that feedback.md links (it links one exactly when there is one).
    if let Some(svg) = record.report.as_ref().and_then(report::chart::svg) {
        write_whole(&dir.join(report::chart::FILE_NAME), svg.as_bytes())?;
    }
    write_whole(&dir.join("feedback.md"), markdown.as_bytes())?;
    let json = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
    write_whole(&dir.join("record.json"), &json)
}

/// Now as RFC 3339 in UTC (`2026-11-22T10:04:05Z`), for the gradebook.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339(secs)
}

/// Seconds since 1970 as RFC 3339 in UTC (Howard Hinnant's days-to-civil algorithm).
fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_written_before_builds_were_timed_still_loads() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("old")).unwrap();
        std::fs::write(
            dir.path().join("old/record.json"),
            r#"{"student": "old", "fingerprint": "f", "outcome": "graded", "report": null,
                "error": null, "graded_at": "2026-11-22T10:00:00Z", "seconds": 3.5}"#,
        )
        .unwrap();
        let record = read(dir.path(), "old").expect("an old record loads");
        assert_eq!(record.build_seconds, None);
        assert_eq!(record.seconds, 3.5);
    }

    #[test]
    fn dates_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_349_045), "2026-11-22T12:04:05Z");
    }

    #[test]
    fn a_record_round_trips_and_half_written_files_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let record = Record {
            build_seconds: Some(0.25),
            ..record("alice")
        };
        write(dir.path(), &record).unwrap();
        assert_eq!(read(dir.path(), "alice").unwrap().fingerprint, "f");
        assert_eq!(read(dir.path(), "alice").unwrap().build_seconds, Some(0.25));
        assert_eq!(
            read(dir.path(), "alice").unwrap().status(),
            "error: not a lab crate"
        );
        std::fs::create_dir_all(dir.path().join("bob")).unwrap();
        std::fs::write(dir.path().join("bob/record.json"), "{\"student\": \"bo").unwrap();
        // A damaged record is not graded from, but its student keeps a row that says why.
        assert!(read(dir.path(), "bob").is_none());
        let all = read_all(dir.path()).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].student, "bob");
        assert!(
            all[1].status().starts_with("error: its record"),
            "{:?}",
            all[1]
        );
        let feedback = std::fs::read_to_string(dir.path().join("alice/feedback.md")).unwrap();
        assert!(
            feedback.contains("could not be graded:\n\n```text\nnot a lab crate\n```"),
            "{feedback}"
        );
    }

    fn record(student: &str) -> Record {
        Record {
            student: student.into(),
            fingerprint: "f".into(),
            outcome: Outcome::Error,
            report: None,
            error: Some("not a lab crate".into()),
            graded_at: now_utc(),
            seconds: 0.5,
            build_seconds: None,
        }
    }

    /// Names a student's folder can have that are not plain.
    fn odd_names() -> Vec<String> {
        vec![
            "=HYPERLINK(\"x\",\"y\")".into(),
            "+cmd|' /C calc'!A0".into(),
            "line\nbreak\u{202e}kcatta".into(),
            "-rf".into(),
            "Alice".into(),
            "alice".into(),
            "ALICE".into(),
            "Jos\u{e9}".into(),
            "Jose\u{301}".into(),
            ".hidden".into(),
            "x".repeat(255),
            "\u{202e}".repeat(85),
            "alice~0123456789abcdef".into(),
            "a\\xFF".into(),
        ]
    }

    #[test]
    fn every_name_gets_a_folder_of_its_own_even_where_case_and_accents_fold() {
        let names = odd_names();
        let folders: Vec<String> = names.iter().map(|n| folder_name(n)).collect();
        let folded: std::collections::HashSet<String> =
            folders.iter().map(|f| f.to_lowercase()).collect();
        assert_eq!(folded.len(), names.len(), "{folders:#?}");
        for f in &folders {
            assert!(f.len() <= 255, "{f}");
            assert!(!f.starts_with('.'), "{f}");
            assert!(!f.contains(['/', '\n', '\u{202e}', '\u{301}']), "{f:?}");
        }
        assert_eq!(folder_name("alice"), "alice");
        assert_eq!(folder_name("-rf"), "-rf");
        assert!(folder_name("Alice").starts_with("Alice~"));
    }

    #[test]
    fn a_record_per_odd_name_is_written_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let names = odd_names();
        for name in &names {
            write(dir.path(), &record(name)).unwrap_or_else(|e| panic!("{name:?}: {e}"));
        }
        for name in &names {
            assert_eq!(
                read(dir.path(), name).map(|r| r.student),
                Some(name.clone())
            );
        }
        let all: Vec<String> = read_all(dir.path())
            .unwrap()
            .into_iter()
            .map(|r| r.student)
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(all, sorted);
    }

    #[test]
    fn a_folder_that_holds_another_students_record_is_not_written_over() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &record("Alice")).unwrap();
        // As a file system that folds case would see it: Eve's folder is Alice's.
        let alice = student_dir(dir.path(), "Alice");
        let eve = student_dir(dir.path(), "Eve");
        std::fs::rename(&alice, &eve).unwrap();
        let err = write(dir.path(), &record("Eve")).unwrap_err();
        assert!(
            err.to_string().contains("holds the record of Alice"),
            "{err}"
        );
        assert_eq!(read_all(dir.path()).unwrap()[0].student, "Alice");
    }
}
