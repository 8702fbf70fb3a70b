//! The libtest arguments a lab crate's `cargo test -- …` may carry, read the way libtest reads
//! them: filters, `--exact`, `--skip`, `--ignored`, `--list`, `--format`, `--test-threads`,
//! and the flags cargo or an IDE passes that change nothing here (`--nocapture`, `--color`…).
//!
//! Read by hand rather than by a command-line crate: these dozen flags are all the harness
//! needs, and a student's first `cargo test` then compiles no argument parser at all (clap and
//! its derive macro were a tenth of the grader's build in a released lab crate).

/// What the harness does with libtest's arguments (the rest are accepted and change nothing).
#[derive(Debug, Default, PartialEq)]
pub struct TestArgs {
    /// The item filters: an item is selected when one of them is a substring of its id (the
    /// whole id with `--exact`), or when there are none.
    pub filters: Vec<String>,
    /// `--exact`: each filter (and each `--skip`) must be the whole id.
    pub exact: bool,
    /// `--skip FILTER`, any number of times: items left out.
    pub skip: Vec<String>,
    /// `--ignored`: only the items that cannot be graded here.
    pub ignored: bool,
    /// `--list`: print the selected items and grade nothing.
    pub list: bool,
    /// `--format terse` (or `-q`): `--list` prints no count line.
    pub terse: bool,
    /// `--test-threads N`: items graded at once.
    pub test_threads: Option<usize>,
    /// `-h`/`--help`: print [`usage`] and grade nothing.
    pub help: bool,
}

/// Flags that take no value and change nothing here: the grader always shows what it found,
/// in colour where the terminal has it, and has no benchmarks.
const NO_OPS: &[&str] = &[
    "--nocapture",
    "--show-output",
    "--include-ignored",
    "--test",
    "--bench",
    "--force-run-in-process",
    "--exclude-should-panic",
    "--report-time",
    "--ensure-time",
    "--shuffle",
];

/// Options that take a value and change nothing here.
const NO_OP_VALUES: &[&str] = &["--color", "--logfile", "--shuffle-seed", "-Z"];

/// Reads libtest's arguments (without the program's name). `Err` is one line for the student.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<TestArgs, String> {
    let mut parsed = TestArgs::default();
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        if !arg.starts_with('-') || arg == "-" {
            parsed.filters.push(arg);
            continue;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |what: &str| {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| format!("{flag} needs a value ({what})"))
        };
        match flag.as_str() {
            "--exact" => parsed.exact = true,
            "--ignored" => parsed.ignored = true,
            "--list" => parsed.list = true,
            "-q" | "--quiet" => parsed.terse = true,
            "--skip" => parsed.skip.push(value("a filter")?),
            "--format" => match value("pretty, terse or json")?.as_str() {
                "pretty" | "json" => parsed.terse = false,
                "terse" => parsed.terse = true,
                other => {
                    return Err(format!(
                        "--format takes pretty, terse or json, not `{other}`"
                    ))
                }
            },
            "--test-threads" => {
                let n = value("a number of threads")?;
                parsed.test_threads = Some(
                    n.parse()
                        .map_err(|_| format!("--test-threads takes a whole number, not `{n}`"))?,
                );
            }
            f if NO_OPS.contains(&f) => {}
            f if NO_OP_VALUES.contains(&f) => {
                value("a value")?;
            }
            "-h" | "--help" => parsed.help = true,
            _ => return Err(format!("unknown option `{arg}`. {}", usage())),
        }
    }
    Ok(parsed)
}

/// The options a lab crate's grading takes, in one line.
pub fn usage() -> String {
    "Usage: cargo test -- [ITEM...] [--exact] [--skip ITEM] [--list] [--ignored] \
     [--test-threads N] [--seed N] [--gpu auto|real|emulate|off] [--lang en|zh-TW] \
     [--json FILE] [--assignment NAME|PATH]"
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Result<TestArgs, String> {
        parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn what_cargo_and_students_pass_is_read_as_libtest_reads_it() {
        assert_eq!(parsed(&[]), Ok(TestArgs::default()));
        let args = parsed(&[
            "fast",
            "--exact",
            "--skip",
            "naive_correct",
            "--skip=gpu_speedup",
            "--test-threads=1",
            "--nocapture",
            "--color",
            "always",
            "--list",
            "--format",
            "terse",
        ])
        .expect("parses");
        assert_eq!(
            args,
            TestArgs {
                filters: vec!["fast".into()],
                exact: true,
                skip: vec!["naive_correct".into(), "gpu_speedup".into()],
                ignored: false,
                list: true,
                terse: true,
                test_threads: Some(1),
                help: false,
            }
        );
        assert_eq!(
            parsed(&["--test-threads", "2"]).unwrap().test_threads,
            Some(2)
        );
        assert!(parsed(&["--ignored", "-q"]).unwrap().ignored);
        assert!(parsed(&["-q"]).unwrap().terse);
        assert_eq!(
            parsed(&["naive", "fast"]).unwrap().filters,
            ["naive", "fast"]
        );
        assert!(!parsed(&["--format=json"]).unwrap().terse);
    }

    #[test]
    fn a_mistake_is_one_line_that_says_what_to_do() {
        for (args, says) in [
            (&["--test-threads", "two"][..], "whole number, not `two`"),
            (&["--test-threads"][..], "--test-threads needs a value"),
            (
                &["--format", "fancy"][..],
                "pretty, terse or json, not `fancy`",
            ),
            (&["--frobnicate"][..], "unknown option `--frobnicate`"),
            (&["--skip"][..], "--skip needs a value"),
        ] {
            let e = parsed(args).expect_err("refused");
            assert!(e.contains(says), "{args:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        assert!(parsed(&["--help"]).unwrap().help);
        assert!(usage().starts_with("Usage: cargo test --"));
    }
}
