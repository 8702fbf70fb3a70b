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
    /// `--partition`, when given.
    pub partition: Option<String>,
    /// `--gres` (`gpu:1`), when given.
    pub gres: Option<String>,
    /// Grade again even when unchanged.
    pub force: bool,
}

/// Quotes a value for bash (single quotes, with `'` written as `'\''`).
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn quoted_path(path: &Path) -> String {
    quoted(&path.display().to_string())
}

/// The sbatch array script.
pub fn script(o: &SlurmOptions) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "#!/usr/bin/env bash");
    let _ = writeln!(
        s,
        "# Written by `grader batch --slurm`: one array task per submission. Submit with\n#   sbatch {}\n# then, when every task is done, write the gradebook with\n#   {} collect {} --assignment {} --out grades.csv",
        quoted_path(&o.feedback.join("slurm").join("grade.sbatch")),
        quoted_path(&o.grader),
        quoted_path(&o.feedback),
        quoted(&o.assignment)
    );
    let _ = writeln!(s, "#SBATCH --job-name=grade");
    let _ = writeln!(
        s,
        "#SBATCH --array=0-{}",
        o.students.len().saturating_sub(1)
    );
    let _ = writeln!(s, "#SBATCH --cpus-per-task=2");
    let _ = writeln!(s, "#SBATCH --time=00:30:00");
    let _ = writeln!(
        s,
        "#SBATCH --output={}",
        o.feedback.join("slurm").join("task-%a.log").display()
    );
    if let Some(p) = &o.partition {
        let _ = writeln!(s, "#SBATCH --partition={p}");
    }
    if let Some(g) = &o.gres {
        let _ = writeln!(s, "#SBATCH --gres={g}");
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
        "exec {} batch {} --assignment {} --only \"$student\" --no-gradebook --jobs 1 --feedback {} --cache-dir {} --gpu {} --seed {}{}",
        quoted_path(&o.grader),
        quoted_path(&o.dir),
        quoted(&o.assignment),
        quoted_path(&o.feedback),
        quoted_path(&o.cache),
        o.gpu,
        o.seed,
        if o.force { " --force" } else { "" }
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_task_per_student_with_the_cluster_options_and_quoted_names() {
        let text = script(&SlurmOptions {
            grader: "/opt/grader".into(),
            dir: "/class/subs".into(),
            students: vec!["alice".into(), "o'brien".into()],
            assignment: "matmul".into(),
            feedback: "/class/feedback".into(),
            cache: "/class/cache".into(),
            gpu: "real",
            seed: 7,
            partition: Some("gpu".into()),
            gres: Some("gpu:1".into()),
            force: false,
        });
        assert!(text.contains("#SBATCH --array=0-1\n"), "{text}");
        assert!(text.contains("#SBATCH --partition=gpu\n"), "{text}");
        assert!(text.contains("#SBATCH --gres=gpu:1\n"), "{text}");
        assert!(text.contains("  'o'\\''brien'\n"), "{text}");
        assert!(
            text.contains("--only \"$student\" --no-gradebook --jobs 1"),
            "{text}"
        );
        assert!(text.contains("--gpu real --seed 7\n"), "{text}");
    }
}
