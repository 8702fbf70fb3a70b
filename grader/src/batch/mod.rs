//! `grader batch`: official grades for a whole class. Each subfolder of a folder is one
//! student's repository (the layout `gh classroom clone student-repos` makes); each is graded
//! with [`crate::grade::grade`] (only its `src/` counts: the lab's manifest, harness, rubric and
//! grader are imposed), in parallel, and its record is written as soon as it is done, so an
//! interrupted batch resumes where it stopped and an unchanged submission is not graded again.
//! The gradebook (CSV), the class report (HTML, [`class_report`], with the pairs of
//! submissions that share code: [`crate::similarity`]) and each student's feedback are
//! rendered from the records.

pub mod class_report;
pub mod slurm;
pub mod store;

use crate::grade::{grade, GradeOptions, Target};
use crate::report::gradebook::{self, Row};
use crate::report::{self, BuildStatus, Report};
use crate::rubric::Assignment;
use grader_engine::event::Event;
use grader_engine::gpu::GpuMode;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;
pub use store::{Outcome, Record};

/// Why a batch could not run (one submission's failure is not here: it is its record).
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// The submissions folder cannot be read.
    #[error("cannot read the submissions folder {path}: {source}")]
    Submissions {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `--only` names a student who has no folder.
    #[error("no submission named `{0}` in the submissions folder")]
    NoSuchStudent(String),
    /// An output could not be written.
    #[error("cannot write {path}: {message}")]
    Write { path: PathBuf, message: String },
}

/// How to grade a class, resolved before the batch starts.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// The folder of submissions, one subfolder per student.
    pub dir: PathBuf,
    /// The rubric.
    pub assignment: Assignment,
    /// Submissions graded at once.
    pub jobs: usize,
    /// The CSV gradebook, or `None` to write none (one task of a Slurm array).
    pub gradebook: Option<PathBuf>,
    /// Where each student's record, results.json and feedback.md go.
    pub feedback: PathBuf,
    /// Where GPU items run.
    pub gpu: GpuMode,
    /// The seed every submission's inputs come from.
    pub seed: u64,
    /// Grade again even when a submission did not change.
    pub force: bool,
    /// Grade only these students.
    pub only: Option<Vec<String>>,
    /// The build cache shared by every submission.
    pub cache: PathBuf,
    /// How the class report compares the submissions with each other, or `None` for not at
    /// all (`--no-similarity`).
    pub similarity: Option<crate::similarity::Settings>,
}

/// What happens during a batch, for the caller's progress display.
#[derive(Debug)]
pub enum BatchEvent<'a> {
    /// The batch starts: how many submissions will be graded and how many are unchanged.
    Started { to_grade: usize, unchanged: usize },
    /// A submission starts building or grading.
    Grading { student: &'a str },
    /// A submission is done.
    Done { record: &'a Record },
}

/// What a finished batch did.
#[derive(Debug)]
pub struct BatchSummary {
    /// Every student's record (graded now or before), by name.
    pub records: Vec<Record>,
    /// How many were graded in this run.
    pub graded_now: usize,
    /// How many were unchanged since their last grading and kept.
    pub unchanged: usize,
}

/// One student's submission: the name every output shows and keys it by, and its folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    /// The folder's name; bytes that are not UTF-8 written `\xFF`, and ` (2)` added to a name
    /// that would otherwise be another's, so each folder has a name of its own.
    pub name: String,
    /// The folder (or link) itself, its name exactly as on disk.
    pub folder: PathBuf,
}

/// Folders of a class folder that are tools', not students': version control and editors.
const NOT_STUDENTS: [&str; 6] = [".git", ".github", ".hg", ".svn", ".vscode", ".idea"];

/// A folder's name as text, losing nothing: bytes that are not UTF-8 as `\xFF`.
fn name_of(file_name: &std::ffi::OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for chunk in file_name.as_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

/// The submissions in `dir`: every subfolder and link (links are not graded: [`grade_one`]
/// says why in their records), whatever its name, but the tools' own folders (`.git`, …),
/// sorted by name.
pub fn submissions(dir: &Path) -> Result<Vec<Submission>, BatchError> {
    let read_err = |source| BatchError::Submissions {
        path: dir.to_path_buf(),
        source,
    };
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read_err)? {
        let entry = entry.map_err(read_err)?;
        let kind = entry.file_type().map_err(read_err)?;
        let file_name = entry.file_name();
        let tool = NOT_STUDENTS.iter().any(|t| file_name == *t);
        if (kind.is_dir() || kind.is_symlink()) && !tool {
            found.push((name_of(&file_name), entry.path()));
        }
    }
    found.sort();
    let mut taken = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (name, folder) in found {
        let mut unique = name.clone();
        let mut n = 1;
        while !taken.insert(unique.clone()) {
            n += 1;
            unique = format!("{name} ({n})");
        }
        out.push(Submission {
            name: unique,
            folder,
        });
    }
    Ok(out)
}

/// The students in `dir`: the names of its [`submissions`].
pub fn students(dir: &Path) -> Result<Vec<String>, BatchError> {
    Ok(submissions(dir)?.into_iter().map(|s| s.name).collect())
}

/// What decides whether a submission must be graded again: its files, the rubric, this
/// grader's version and the GPU mode.
fn fingerprint(submission: &Path, options: &BatchOptions) -> String {
    let files = grader_engine::fingerprint::submission(submission);
    let rubric = &options.assignment.text;
    let context = format!(
        "{files}|{rubric}|{}|{:?}",
        env!("CARGO_PKG_VERSION"),
        options.gpu
    );
    format!("{:016x}", grader_engine::fingerprint::of_text(&context))
}

/// Grades every submission (or those `only` names) and writes the gradebook.
pub fn run(
    options: &BatchOptions,
    on_event: &(dyn Fn(BatchEvent<'_>) + Sync),
) -> Result<BatchSummary, BatchError> {
    let all = submissions(&options.dir)?;
    let names: Vec<String> = all.iter().map(|s| s.name.clone()).collect();
    let chosen: Vec<&Submission> = match &options.only {
        Some(only) => {
            for name in only {
                if !names.contains(name) {
                    return Err(BatchError::NoSuchStudent(name.clone()));
                }
            }
            all.iter().filter(|s| only.contains(&s.name)).collect()
        }
        None => all.iter().collect(),
    };
    let mut queue = Vec::new();
    let mut unchanged = 0;
    for submission in &chosen {
        let student = &submission.name;
        let print = fingerprint(&submission.folder, options);
        let kept = store::read(&options.feedback, student);
        match kept {
            Some(record)
                if !options.force
                    && record.fingerprint == print
                    && record.outcome != Outcome::Error =>
            {
                unchanged += 1
            }
            _ => queue.push((*submission, print)),
        }
    }
    on_event(BatchEvent::Started {
        to_grade: queue.len(),
        unchanged,
    });
    let next = Mutex::new(queue.into_iter());
    let write_error: Mutex<Option<BatchError>> = Mutex::new(None);
    let graded_now = Mutex::new(0usize);
    // One gradebook writer at a time: they share its temporary file.
    let gradebook_turn = Mutex::new(());
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.max(1) {
            // The queue's lock is taken and dropped inside `and_then`, not held while grading.
            scope.spawn(|| {
                while let Some((submission, print)) = next.lock().ok().and_then(|mut q| q.next()) {
                    let student = &submission.name;
                    on_event(BatchEvent::Grading { student });
                    let record = grade_one(options, submission, print);
                    if let Err(e) = store::write(&options.feedback, &record) {
                        if let Ok(mut slot) = write_error.lock() {
                            slot.get_or_insert(BatchError::Write {
                                path: store::student_dir(&options.feedback, student),
                                message: e.to_string(),
                            });
                        }
                    }
                    if let Ok(mut n) = graded_now.lock() {
                        *n += 1;
                    }
                    on_event(BatchEvent::Done { record: &record });
                    // The gradebook is current after every submission: an interrupted batch
                    // leaves one that holds everything finished so far.
                    if let (Some(path), Ok(_turn)) = (&options.gradebook, gradebook_turn.lock()) {
                        let _ = write_gradebook_of(
                            &options.feedback,
                            path,
                            &options.assignment,
                            &names,
                        );
                    }
                }
            });
        }
    });
    // The gradebook is written before a write error is returned: its row of the student
    // whose record could not be written says so.
    if let Some(path) = &options.gradebook {
        // The whole class is compared, whoever `--only` graded now.
        let similarity = options.similarity.map(|settings| {
            crate::similarity::of_class(
                all.iter().map(|s| (s.name.as_str(), s.folder.as_path())),
                crate::release::template_sources(&options.assignment.assignment.name),
                settings,
            )
        });
        let records = write_gradebook_of(&options.feedback, path, &options.assignment, &names)?;
        class_report::write(
            &options.feedback,
            path,
            &options.assignment,
            &records,
            similarity,
        )?;
    }
    if let Some(e) = write_error.into_inner().ok().flatten() {
        return Err(e);
    }
    let chosen: Vec<String> = chosen.iter().map(|s| s.name.clone()).collect();
    let records = with_every_student(&options.feedback, &chosen)
        .map_err(|e| BatchError::Write {
            path: options.feedback.clone(),
            message: e.to_string(),
        })?
        .into_iter()
        .filter(|r| chosen.contains(&r.student))
        .collect();
    Ok(BatchSummary {
        records,
        graded_now: graded_now.into_inner().unwrap_or(0),
        unchanged,
    })
}

/// Grades one student's submission; every way it can go wrong becomes its record.
fn grade_one(options: &BatchOptions, submission: &Submission, fingerprint: String) -> Record {
    let student = submission.name.as_str();
    let started = Instant::now();
    let grade_options = GradeOptions {
        seed: options.seed,
        gpu: options.gpu,
        cache: options.cache.clone(),
        only: None,
        // The batch's jobs already share the cores among submissions.
        items_at_once: 1,
    };
    let folder = submission.folder.clone();
    // The build ends at the first event after it starts (not compiled, the emulator's build,
    // the items' start).
    let mut build_started: Option<Instant> = None;
    let mut build_seconds = None;
    let mut on_event = |event: Event<'_>| match event {
        Event::Building { .. } => build_started = Some(Instant::now()),
        _ => {
            if let Some(start) = build_started.take() {
                build_seconds = Some(start.elapsed().as_secs_f64());
            }
        }
    };
    // A link in the class folder would grade whatever it points at (another student's
    // submission, the solution): only a folder of its own is a submission.
    let graded = match std::fs::read_link(&folder) {
        Ok(target) => Err(format!(
            "{} is a symbolic link (to {}), not a folder: not graded; put the \
             submission itself in {}",
            crate::report::escape::name(student),
            target.display(),
            options.dir.display()
        )),
        Err(_) => grade(
            &Target::Crate(folder),
            &options.assignment,
            &grade_options,
            &mut on_event,
        )
        .map_err(|e| e.to_string()),
    };
    let (outcome, report, error) = match graded {
        Ok(report) => (outcome_of(&report), Some(report), None),
        Err(e) => (Outcome::Error, None, Some(e)),
    };
    Record {
        student: student.to_string(),
        fingerprint,
        outcome,
        report,
        error,
        graded_at: store::now_utc(),
        seconds: started.elapsed().as_secs_f64(),
        build_seconds,
    }
}

/// A graded report's outcome: did not compile, an item ran past its limit, or graded.
fn outcome_of(report: &Report) -> Outcome {
    if report.build == BuildStatus::NotCompiled {
        Outcome::NotCompiled
    } else if report.build == BuildStatus::Refused {
        Outcome::Refused
    } else if report.items.iter().any(|i| i.timed_out()) {
        Outcome::TimedOut
    } else {
        Outcome::Graded
    }
}

/// Every record under `feedback`, and for each of `students` who has none, a record that says
/// so: every student folder has its gradebook row.
fn with_every_student(feedback: &Path, students: &[String]) -> std::io::Result<Vec<Record>> {
    let mut records = if feedback.is_dir() {
        store::read_all(feedback)?
    } else {
        Vec::new()
    };
    for student in students {
        if !records.iter().any(|r| &r.student == student) {
            let folder = store::student_dir(feedback, student);
            records.push(store::missing(
                student,
                format!(
                    "not graded: no record in {} (grade it again with --only)",
                    folder.display()
                ),
            ));
        }
    }
    records.sort_by(|a, b| a.student.cmp(&b.student));
    Ok(records)
}

/// Writes the CSV gradebook from every record under `feedback` (`grader collect`, which does
/// not know the submissions folder).
pub fn write_gradebook(
    feedback: &Path,
    path: &Path,
    assignment: &Assignment,
) -> Result<Vec<Record>, BatchError> {
    write_gradebook_of(feedback, path, assignment, &[])
}

/// Writes the CSV gradebook from every record under `feedback`, with a row for each of
/// `students` (the class's submissions) even without a record.
pub fn write_gradebook_of(
    feedback: &Path,
    path: &Path,
    assignment: &Assignment,
    students: &[String],
) -> Result<Vec<Record>, BatchError> {
    let write_err = |message: String| BatchError::Write {
        path: path.to_path_buf(),
        message,
    };
    let records = with_every_student(feedback, students).map_err(|e| write_err(e.to_string()))?;
    let items: Vec<String> = assignment
        .items
        .iter()
        .map(|i| i.id().to_string())
        .collect();
    let rows = gradebook_rows(&records);
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| write_err(e.to_string()))?;
    }
    let partial = path.with_extension("csv.partial");
    let file = std::fs::File::create(&partial).map_err(|e| write_err(e.to_string()))?;
    gradebook::write_csv(file, &items, &rows).map_err(|e| write_err(e.to_string()))?;
    std::fs::rename(&partial, path).map_err(|e| write_err(e.to_string()))?;
    Ok(records)
}

/// Each record's gradebook row: the gradebook and the class report read these same rows.
fn gradebook_rows(records: &[Record]) -> Vec<Row<'_>> {
    records
        .iter()
        .map(|r| Row {
            student: &r.student,
            report: r.report.as_ref(),
            status: r.status(),
            graded_at: &r.graded_at,
        })
        .collect()
}

/// The end-of-batch summary: counts by outcome, mean and median score, the slowest
/// submissions.
pub fn summary_text(summary: &BatchSummary) -> String {
    use std::fmt::Write;
    let records = &summary.records;
    let count = |o: Outcome| records.iter().filter(|r| r.outcome == o).count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} submissions: {} graded, {} did not compile, {} refused, {} timed out, {} could not be graded ({} graded now, {} unchanged since their last grading)",
        records.len(),
        count(Outcome::Graded),
        count(Outcome::NotCompiled),
        count(Outcome::Refused),
        count(Outcome::TimedOut),
        count(Outcome::Error),
        summary.graded_now,
        summary.unchanged
    );
    let mut scores: Vec<(f64, f64)> = records
        .iter()
        .filter_map(|r| r.report.as_ref())
        .map(|r| (r.score(), r.max_score()))
        .collect();
    if !scores.is_empty() {
        scores.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mean = scores.iter().map(|s| s.0).sum::<f64>() / scores.len() as f64;
        let mid = scores.len() / 2;
        let median = if scores.len().is_multiple_of(2) {
            (scores[mid - 1].0 + scores[mid].0) / 2.0
        } else {
            scores[mid].0
        };
        let max = scores.iter().map(|s| s.1).fold(0.0, f64::max);
        let _ = writeln!(
            out,
            "score: mean {:.1}, median {} (out of {})",
            mean,
            report::points(median),
            report::points(max)
        );
    }
    let mut slowest: Vec<&Record> = records.iter().collect();
    slowest.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    let slow: Vec<String> = slowest
        .iter()
        .take(3)
        .map(|r| format!("{} {:.1} s", report::escape::name(&r.student), r.seconds))
        .collect();
    if !slow.is_empty() {
        let _ = writeln!(out, "slowest: {}", slow.join(", "));
    }
    for r in records.iter().filter(|r| r.outcome == Outcome::Error) {
        let _ = writeln!(
            out,
            "not graded: {}: {}",
            report::escape::name(&r.student),
            r.status()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn every_student_folder_is_a_submission_whatever_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<&OsStr> = vec![
            OsStr::new("=HYPERLINK(\"x\",\"y\")"),
            OsStr::new("+cmd|' -C calc'!A0"),
            OsStr::new("line\nbreak\u{202e}kcatta"),
            OsStr::new("-rf"),
            OsStr::new("Alice"),
            OsStr::new("alice"),
            OsStr::new("Jos\u{e9}"),
            OsStr::new("Jose\u{301}"),
            OsStr::new(".hidden"),
            OsStr::from_bytes(b"bad\xff\xfeutf8"),
            OsStr::from_bytes(b"bad\xfe\xffutf8"),
            OsStr::new("bad\\xFF\\xFEutf8"),
        ];
        let long = "x".repeat(255);
        let mut all = names.clone();
        all.push(OsStr::new(&long));
        for name in &all {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        // Tools' folders and plain files are not students.
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        let found = submissions(dir.path()).unwrap();
        assert_eq!(found.len(), all.len(), "{found:#?}");
        let unique: std::collections::HashSet<&str> =
            found.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(unique.len(), found.len(), "{found:#?}");
        for s in &found {
            assert!(s.folder.is_dir(), "{s:?}: its folder is the one on disk");
        }
        assert!(unique.contains("bad\\xFF\\xFEutf8"), "{unique:?}");
        assert!(unique.contains("bad\\xFE\\xFFutf8"), "{unique:?}");
        assert!(unique.contains("bad\\xFF\\xFEutf8 (2)"), "{unique:?}");
        assert!(unique.contains(".hidden"));
    }

    #[test]
    fn the_gradebook_has_a_row_for_each_student_with_or_without_a_record() {
        let dir = tempfile::tempdir().unwrap();
        let feedback = dir.path().join("feedback");
        let students: Vec<String> = vec![
            "=cmd".into(),
            "line\nbreak\u{202e}x".into(),
            "Alice".into(),
            "alice".into(),
        ];
        // Two were graded; the other two have no record (a task that never ran).
        for s in &students[..2] {
            store::write(&feedback, &store::missing(s, "not a lab crate".into())).unwrap();
        }
        let assignment = crate::rubric::resolve("matmul").unwrap();
        let path = dir.path().join("grades.csv");
        let records = write_gradebook_of(&feedback, &path, &assignment, &students).unwrap();
        assert_eq!(records.len(), 4);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let names: Vec<String> = reader
            .records()
            .map(|r| r.unwrap()[0].to_string())
            .collect();
        assert_eq!(
            names,
            ["'=cmd", "Alice", "alice", "line\\u{a}break\\u{202e}x"],
            "{text}"
        );
        assert!(text.contains("error: not graded: no record"), "{text}");
    }
}
