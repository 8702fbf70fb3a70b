//! `grader batch … --slurm`: the batch as a Slurm job array, one task per submission, for a
//! university cluster (real GPUs when the partition has them). Each task runs this grader's
//! `batch --only STUDENT --no-gradebook` and leaves the student's record in the feedback
//! folder; `grader collect FEEDBACK` then writes the gradebook from the records.

use std::fmt::Write;
use std::path::{Path, PathBuf};

/// What the array script needs to know.
#[derive(Debug, Clone)]
pub struct SlurmOptions {
    /// The grader binary every task runs (an absolute path on the shared filesystem).
    pub grader: PathBuf,
    /// The submissions folder.
    pub dir: PathBuf,
    /// The students, one task each, in task order.
    pub students: Vec<String>,
    /// `--assignment` as the tasks pass it (a lab name or an absolute rubric path).
    pub assignment: String,
    /// The feedback folder the tasks write records into.
    pub feedback: PathBuf,
    /// The build cache the tasks share.
    pub cache: PathBuf,
    /// `--gpu` for the tasks.
    pub gpu: &'static str,
    /// The seed every task uses.
    pub seed: u64,
    /// What each task asks of the cluster.
    pub resources: Resources,
    /// Grade again even when unchanged.
    pub force: bool,
    /// Grade without the workers' sandbox (`--unsandboxed`): compute nodes without Landlock.
    pub unsandboxed: bool,
}

/// What each array task asks Slurm for; the defaults fit one grading of a lab (a build of the
/// student's crate, then its items one at a time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resources {
    /// `--cpus-per-task`: cargo builds with them; items are timed one at a time.
    pub cpus_per_task: u32,
    /// `--mem`, in Slurm's notation (`4G`, `8000M`): memory per task.
    pub mem: String,
    /// `--time`, in Slurm's notation (`30`, `00:30:00`, `1-00:00:00`): the task's limit.
    pub time: String,
    /// `--partition`, when given.
    pub partition: Option<String>,
    /// `--gres` (`gpu:1`), when given.
    pub gres: Option<String>,
}

impl Default for Resources {
    fn default() -> Self {
        Resources {
            cpus_per_task: DEFAULT_CPUS_PER_TASK,
            mem: DEFAULT_MEM.to_string(),
            time: DEFAULT_TIME.to_string(),
            partition: None,
            gres: None,
        }
    }
}

/// `--cpus-per-task` when the instructor gives none.
pub const DEFAULT_CPUS_PER_TASK: u32 = 2;
/// `--mem` when the instructor gives none.
pub const DEFAULT_MEM: &str = "4G";
/// `--time` when the instructor gives none.
pub const DEFAULT_TIME: &str = "00:30:00";

/// Why no script can be written.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SlurmError {
    /// A value that cannot go on a `#SBATCH` line (a line break would end the directive).
    #[error("{what} {value:?} cannot go into a Slurm script: it holds a line break")]
    LineBreak {
        /// Which value.
        what: &'static str,
        /// The value.
        value: String,
    },
    /// A resource not in Slurm's notation.
    #[error("--{option} {value:?} is not in Slurm's notation: {expected}")]
    Notation {
        /// The option.
        option: &'static str,
        /// The value.
        value: String,
        /// What it should look like.
        expected: &'static str,
    },
}

/// Quotes a value for bash (single quotes, with `'` written as `'\''`).
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn quoted_path(path: &Path) -> String {
    quoted(&path.display().to_string())
}

/// A value for a `#SBATCH` line: sbatch reads double quotes and backslash escapes there, so a
/// space or a `#` stays part of the value.
fn directive_value(what: &'static str, text: &str) -> Result<String, SlurmError> {
    if text.contains(['\n', '\r']) {
        return Err(SlurmError::LineBreak {
            what,
            value: text.to_string(),
        });
    }
    Ok(format!(
        "\"{}\"",
        text.replace('\\', r"\\").replace('"', r#"\""#)
    ))
}

/// A file name for `--output`, where Slurm expands `%` patterns (`%a`, the array index):
/// a `%` of the path itself is written `%%`.
fn output_pattern(folder: &Path, pattern: &str) -> String {
    format!(
        "{}/{pattern}",
        folder.display().to_string().replace('%', "%%")
    )
}

impl Resources {
    /// Checks the values against Slurm's notation, so a typo fails here and not in sbatch.
    pub fn check(&self) -> Result<(), SlurmError> {
        let mem_ok = {
            let digits = self.mem.trim_end_matches(['K', 'M', 'G', 'T']);
            !digits.is_empty()
                && digits.chars().all(|c| c.is_ascii_digit())
                && self.mem.len() - digits.len() <= 1
        };
        if !mem_ok {
            return Err(SlurmError::Notation {
                option: "mem",
                value: self.mem.clone(),
                expected: "a number with an optional unit K, M, G or T (4G, 8000M)",
            });
        }
        let time_ok = !self.time.is_empty()
            && self
                .time
                .chars()
                .all(|c| c.is_ascii_digit() || c == ':' || c == '-')
            && self.time.starts_with(|c: char| c.is_ascii_digit());
        if !time_ok {
            return Err(SlurmError::Notation {
                option: "time",
                value: self.time.clone(),
                expected: "minutes, HH:MM:SS or D-HH:MM:SS (30, 00:30:00, 1-00:00:00)",
            });
        }
        if self.cpus_per_task == 0 {
            return Err(SlurmError::Notation {
                option: "cpus-per-task",
                value: "0".into(),
                expected: "at least 1",
            });
        }
        Ok(())
    }
}

/// The sbatch array script.
pub fn script(o: &SlurmOptions) -> Result<String, SlurmError> {
    let r = &o.resources;
    r.check()?;
    let mut s = String::new();
    let _ = writeln!(s, "#!/usr/bin/env bash");
    let _ = writeln!(
        s,
        "# Written by `grader batch --slurm`: one array task per submission. Submit with\n#   sbatch {}\n# then, when every task is done, write the gradebook with\n#   {} collect {} --assignment {} --out grades.csv --submissions {}\n# A task fails (exit status 2) when its submission could not be graded (the grader\n# could not run there, say); a low grade is not a failure.",
        quoted_path(&o.feedback.join("slurm").join("grade.sbatch")),
        quoted_path(&o.grader),
        quoted_path(&o.feedback),
        quoted(&o.assignment),
        quoted_path(&o.dir)
    );
    let _ = writeln!(s, "#SBATCH --job-name=grade");
    let _ = writeln!(
        s,
        "#SBATCH --array=0-{}",
        o.students.len().saturating_sub(1)
    );
    let _ = writeln!(s, "#SBATCH --cpus-per-task={}", r.cpus_per_task);
    let _ = writeln!(s, "#SBATCH --mem={}", r.mem);
    let _ = writeln!(s, "#SBATCH --time={}", r.time);
    let log = output_pattern(&o.feedback.join("slurm"), "task-%a.log");
    let _ = writeln!(
        s,
        "#SBATCH --output={}",
        directive_value("the feedback folder", &log)?
    );
    if let Some(p) = &r.partition {
        let _ = writeln!(
            s,
            "#SBATCH --partition={}",
            directive_value("--partition", p)?
        );
    }
    if let Some(g) = &r.gres {
        let _ = writeln!(s, "#SBATCH --gres={}", directive_value("--gres", g)?);
    }
    let _ = writeln!(s, "set -euo pipefail");
    let _ = writeln!(s, "students=(");
    for student in &o.students {
        let _ = writeln!(s, "  {}", quoted(student));
    }
    let _ = writeln!(s, ")");
    let _ = writeln!(
        s,
        "task=\"${{SLURM_ARRAY_TASK_ID:?run by sbatch as an array}}\""
    );
    let _ = writeln!(s, "student=\"${{students[$task]}}\"");
    let _ = writeln!(
        s,
        "exec {} batch {} --assignment {} --only=\"$student\" --no-gradebook --jobs 1 --feedback {} --cache-dir {} --gpu {} --seed {}{}{}",
        quoted_path(&o.grader),
        quoted_path(&o.dir),
        quoted(&o.assignment),
        quoted_path(&o.feedback),
        quoted_path(&o.cache),
        o.gpu,
        o.seed,
        if o.force { " --force" } else { "" },
        if o.unsandboxed { " --unsandboxed" } else { "" }
    );
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> SlurmOptions {
        SlurmOptions {
            grader: "/opt/grader".into(),
            dir: "/class/subs".into(),
            students: vec!["alice".into(), "o'brien".into()],
            assignment: "matmul".into(),
            feedback: "/class/feedback".into(),
            cache: "/class/cache".into(),
            gpu: "real",
            seed: 7,
            resources: Resources {
                partition: Some("gpu".into()),
                gres: Some("gpu:1".into()),
                ..Resources::default()
            },
            force: false,
            unsandboxed: false,
        }
    }

    #[test]
    fn one_task_per_student_with_the_cluster_options_and_quoted_names() {
        let text = script(&options()).expect("a script");
        assert!(text.contains("#SBATCH --array=0-1\n"), "{text}");
        assert!(text.contains("#SBATCH --partition=\"gpu\"\n"), "{text}");
        assert!(text.contains("#SBATCH --gres=\"gpu:1\"\n"), "{text}");
        assert!(text.contains("#SBATCH --cpus-per-task=2\n"), "{text}");
        assert!(text.contains("#SBATCH --mem=4G\n"), "{text}");
        assert!(text.contains("#SBATCH --time=00:30:00\n"), "{text}");
        assert!(text.contains("  'o'\\''brien'\n"), "{text}");
        assert!(
            text.contains("--only=\"$student\" --no-gradebook --jobs 1"),
            "{text}"
        );
        assert!(text.contains("--gpu real --seed 7\n"), "{text}");
    }

    #[test]
    fn the_log_path_is_quoted_with_its_percent_signs_doubled() {
        let text = script(&SlurmOptions {
            feedback: "/class/fall 100% \"best\" #1/feedback".into(),
            ..options()
        })
        .expect("a script");
        assert!(
            text.contains(
                "#SBATCH --output=\"/class/fall 100%% \\\"best\\\" #1/feedback/slurm/task-%a.log\"\n"
            ),
            "{text}"
        );
        let broken = script(&SlurmOptions {
            feedback: "/class/a\nb".into(),
            ..options()
        });
        assert!(matches!(broken, Err(SlurmError::LineBreak { .. })));
    }

    #[test]
    fn unsandboxed_and_the_chosen_resources_reach_the_tasks() {
        let text = script(&SlurmOptions {
            unsandboxed: true,
            force: true,
            resources: Resources {
                cpus_per_task: 8,
                mem: "16G".into(),
                time: "1-00:00:00".into(),
                partition: None,
                gres: None,
            },
            ..options()
        })
        .expect("a script");
        assert!(text.contains("--seed 7 --force --unsandboxed\n"), "{text}");
        assert!(
            text.contains(
                "#SBATCH --cpus-per-task=8\n#SBATCH --mem=16G\n#SBATCH --time=1-00:00:00\n"
            ),
            "{text}"
        );
        assert!(
            !text.contains("--partition") && !text.contains("--gres"),
            "{text}"
        );
    }

    #[test]
    fn resources_not_in_slurms_notation_are_refused() {
        for (mem, time) in [
            ("4 GB", "30"),
            ("G", "30"),
            ("4G", "half an hour"),
            ("4G", ""),
        ] {
            let r = Resources {
                mem: mem.into(),
                time: time.into(),
                ..Resources::default()
            };
            assert!(r.check().is_err(), "{mem} {time}");
        }
        for (mem, time) in [("4G", "30"), ("8000", "00:45:00"), ("512M", "2-12")] {
            let r = Resources {
                mem: mem.into(),
                time: time.into(),
                ..Resources::default()
            };
            assert_eq!(r.check(), Ok(()), "{mem} {time}");
        }
    }
}
