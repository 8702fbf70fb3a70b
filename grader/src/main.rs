//! The `grader` command: official grading of a lab crate anywhere on disk, and the tools around
//! it. Library code returns errors; this binary decides how to print them.

use clap::{Parser, Subcommand};
use grader::batch::{BatchEvent, BatchOptions};
use grader::event::Event;
use grader::gpu::GpuMode;
use grader::grade::{GradeOptions, Target};
use grader::inputs;
use grader::report;
use grader::rubric::{self, Assignment};
use grader::stage;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;

/// `println!` that drops its line when stdout is closed (`grader collect … | head`) instead of
/// panicking: the command still finishes its work (gradebook, results.json) and exits quietly.
macro_rules! outln {
    ($($arg:tt)*) => {
        quiet::write(&mut std::io::stdout().lock(), format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that drops its text on a closed stdout, as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {
        quiet::write(&mut std::io::stdout().lock(), format_args!($($arg)*))
    };
}

/// `eprintln!` that drops its line on a closed stderr, as [`outln!`].
macro_rules! errln {
    ($($arg:tt)*) => {
        quiet::write(&mut std::io::stderr().lock(), format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Output that a closed pipe cannot turn into a panic.
mod quiet {
    use std::io::Write;

    /// Writes `args`; a failed write (a reader that went away) is dropped: there is no one
    /// left to tell.
    pub fn write(to: &mut impl Write, args: std::fmt::Arguments<'_>) {
        let _ = to.write_fmt(args).and_then(|()| to.flush());
    }
}

/// Grades GPU-programming lab crates.
#[derive(Parser)]
#[command(name = "grader", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Subcommand)]
enum Commands {
    /// Build the lab crate at PATH with the grader's own harness and grade it.
    Grade {
        /// The lab crate's folder (the one with Cargo.toml and src/).
        path: PathBuf,
        /// The lab's name (`matmul`) or the path of an assignment.toml; inferred from the
        /// crate when not given.
        #[arg(long)]
        assignment: Option<String>,
        /// Also write the results as Gradescope's results.json to FILE.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Derive the inputs from this seed (repeats a run exactly); fresh when not given.
        #[arg(long)]
        seed: Option<u64>,
        /// Where GPU items run: a real GPU when one passes a trial (driver, NVRTC, cuBLAS) else
        /// the CPU emulator (auto), a real GPU or an error saying what failed (real), the
        /// emulator (emulate), or nowhere (off: skipped).
        #[arg(long, value_enum, env = "GRADER_GPU", default_value_t = GpuMode::Auto)]
        gpu: GpuMode,
        /// Where builds are cached across submissions [default: $GPU_LABS_CACHE, else (as root)
        /// /var/cache/gpu-labs, else ~/.cache/gpu-labs].
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        /// Grade without the workers' sandbox (no Landlock on this machine, or it breaks
        /// something): every report then says the submission ran with your rights.
        #[arg(long)]
        unsandboxed: bool,
        /// The grader runs inside a container made for grading (Gradescope's): grade with
        /// whatever sandbox this kernel still allows there, and say in every report that the
        /// container isolated the run, instead of refusing where Landlock is missing.
        #[arg(long, conflicts_with = "unsandboxed")]
        container: bool,
        /// Grade only this item (repeat the flag for several; the others are left out of the
        /// report): to check one fix, or one item on many seeds.
        #[arg(long, value_name = "ITEM")]
        only: Vec<String>,
        /// Items graded at once; those that measure speed or use a real GPU always run alone
        /// [default: one per core, at most 4, and no more than half the memory holds].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
        jobs: Option<u16>,
        /// The language of the students' feedback (`en`, `zh-TW`) [default: the rubric's
        /// `[assignment] language`]; the grading machine's locale is never read.
        #[arg(long, env = "GRADER_LANG", value_name = "LANG")]
        lang: Option<grader::i18n::Lang>,
    },
    /// Grade a whole class: every subfolder of DIR is one student's repository. Writes a CSV
    /// gradebook, a class report beside it (the same name ending in .html: one static page of
    /// charts and links, and the pairs of submissions that share code) and, per student,
    /// results.json and feedback.md; re-running grades only what changed.
    Batch {
        /// The folder of submissions (e.g. what `gh classroom clone student-repos` made).
        dir: PathBuf,
        /// The lab's name (`matmul`) or the path of an assignment.toml.
        #[arg(long)]
        assignment: String,
        /// Submissions graded at once [default: the number of cores].
        #[arg(long)]
        jobs: Option<usize>,
        /// The CSV gradebook to write (the class report goes beside it: grades.html).
        #[arg(long, value_name = "FILE", default_value = "grades.csv")]
        out: PathBuf,
        /// Where each student's record, results.json and feedback.md go.
        #[arg(long, value_name = "DIR", default_value = "feedback")]
        feedback: PathBuf,
        /// Where GPU items run (as for `grade`).
        #[arg(long, value_enum, env = "GRADER_GPU", default_value_t = GpuMode::Auto)]
        gpu: GpuMode,
        /// The seed of every submission's inputs; fresh when not given.
        #[arg(long)]
        seed: Option<u64>,
        /// Grade again even the submissions that did not change since their last grading.
        #[arg(long)]
        force: bool,
        /// Grade only these students (folder names; repeat the flag for several).
        #[arg(long, value_name = "STUDENT")]
        only: Vec<String>,
        /// Write no gradebook (a Slurm task; `grader collect` writes it afterwards).
        #[arg(long)]
        no_gradebook: bool,
        /// The language of the students' feedback (`en`, `zh-TW`) [default: the rubric's
        /// `[assignment] language`]; the grading machine's locale is never read.
        #[arg(long, env = "GRADER_LANG", value_name = "LANG")]
        lang: Option<grader::i18n::Lang>,
        /// Where builds are cached [default: $GPU_LABS_CACHE, else (as root) /var/cache/gpu-labs,
        /// else ~/.cache/gpu-labs].
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        /// Grade without the workers' sandbox (no Landlock on this machine, or it breaks
        /// something): every report then says the submission ran with your rights.
        #[arg(long)]
        unsandboxed: bool,
        /// The grader runs inside a container made for grading (Gradescope's): grade with
        /// whatever sandbox this kernel still allows there, and say in every report that the
        /// container isolated the run, instead of refusing where Landlock is missing.
        #[arg(long, conflicts_with = "unsandboxed")]
        container: bool,
        /// Do not grade: write a Slurm array script (one task per submission) into
        /// FEEDBACK/slurm/ to submit with sbatch.
        #[arg(long)]
        slurm: bool,
        /// With --slurm: the partition to run on.
        #[arg(long, requires = "slurm")]
        partition: Option<String>,
        /// With --slurm: generic resources per task, e.g. gpu:1.
        #[arg(long, requires = "slurm")]
        gres: Option<String>,
        /// With --slurm: CPUs per task (cargo builds with them).
        #[arg(long, requires = "slurm", value_name = "N", default_value_t = grader::batch::slurm::DEFAULT_CPUS_PER_TASK)]
        cpus_per_task: u32,
        /// With --slurm: memory per task, in Slurm's notation (4G, 8000M).
        #[arg(long, requires = "slurm", value_name = "SIZE", default_value = grader::batch::slurm::DEFAULT_MEM)]
        mem: String,
        /// With --slurm: each task's time limit, in Slurm's notation (30, 00:30:00, 1-00:00:00).
        #[arg(long, requires = "slurm", value_name = "LIMIT", default_value = grader::batch::slurm::DEFAULT_TIME)]
        time: String,
        /// Leave the class report's similarity section out: do not compare the submissions
        /// with each other.
        #[arg(long)]
        no_similarity: bool,
        /// The class report lists the pairs of submissions of which one shares at least this
        /// part of its code (beyond the template) with the other: a share (0.5) or a
        /// percentage (50%).
        #[arg(long, value_name = "SHARE", default_value = "0.5", value_parser = grader::similarity::parse_threshold, conflicts_with = "no_similarity")]
        similarity_threshold: f64,
    },
    /// Write the gradebook (and the class report beside it) from the records a batch (or its
    /// Slurm tasks) left in FEEDBACK.
    Collect {
        /// The feedback folder of the batch.
        feedback: PathBuf,
        /// The lab's name or the path of an assignment.toml (for the gradebook's columns).
        #[arg(long)]
        assignment: String,
        /// The CSV gradebook to write.
        #[arg(long, value_name = "FILE", default_value = "grades.csv")]
        out: PathBuf,
        /// The folder of submissions the batch graded: the class report then says which
        /// submissions share code (without it, it says they were not compared).
        #[arg(long, value_name = "DIR")]
        submissions: Option<PathBuf>,
        /// Leave the class report's similarity section out: do not compare the submissions
        /// with each other.
        #[arg(long)]
        no_similarity: bool,
        /// The class report lists the pairs of submissions of which one shares at least this
        /// part of its code (beyond the template) with the other: a share (0.5) or a
        /// percentage (50%).
        #[arg(long, value_name = "SHARE", default_value = "0.5", value_parser = grader::similarity::parse_threshold, conflicts_with = "no_similarity")]
        similarity_threshold: f64,
    },
    /// Write a Gradescope autograder zip for LAB: its setup.sh installs Rust and this grader
    /// (from --grader-git at --grader-rev) and builds the grading area once; its
    /// run_autograder grades each submission into results.json.
    Gradescope(GradescopeArgs),
    /// Run a command with the CPU emulator in place of libcuda, libnvrtc and libcublas
    /// (`grader emulate -- cargo run`), or print the environment for a shell (`--env`).
    /// `--check races` reports data races as grading's correctness runs do.
    Emulate {
        /// Print `export …` lines for a shell instead of running a command.
        #[arg(long)]
        env: bool,
        /// Checks of kernels, like compute-sanitizer's --tool: `races` (data races in global
        /// and shared memory, missing barriers, warp lockstep, reads of shared memory
        /// never written, and accesses outside GPU memory, each reported with both threads, the source lines and a hint; grading's
        /// correctness runs use it), `all` (every check: the same today) or `none` (plain, at
        /// full speed; grading's timed runs are confined to GPU memory without race checks).
        /// Out-of-bounds accesses are always reported. Without it, the
        /// environment's GPU_LABS_EMULATOR_RACECHECK=1 turns the checks on.
        #[arg(long, value_name = "CHECK", value_parser = clap::builder::PossibleValuesParser::new(grader::emulate::Check::NAMES))]
        check: Option<String>,
        /// The command and its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<std::ffi::OsString>,
    },
    /// Write the student repository of a lab: the template sources, README, grade test,
    /// .gitignore, Classroom workflow and a grader dependency that works outside this checkout.
    Release {
        /// The lab's name (`matmul`).
        lab: String,
        /// The folder to write (a new student repository).
        #[arg(long)]
        out: PathBuf,
        /// The git URL students' builds fetch the grader from (with --grader-rev).
        #[arg(
            long,
            value_name = "URL",
            requires = "grader_rev",
            conflicts_with = "grader_path"
        )]
        grader_git: Option<String>,
        /// The grader's commit or tag at that URL.
        #[arg(long, value_name = "REV", requires = "grader_git")]
        grader_rev: Option<String>,
        /// The grader's folder instead, relative to --out or absolute (`templates/` uses
        /// ../../grader).
        #[arg(long, value_name = "PATH")]
        grader_path: Option<String>,
        /// Write into a folder that already has files (the generated ones are replaced).
        #[arg(long)]
        force: bool,
    },
    /// Check the rubric's speed tiers on this machine: grade the lab's solution at PATH several
    /// times on its speed items alone and say, for each, whether a tier's edge lies inside (or
    /// near) the spread of the speedups measured, where honest students' grades would flip.
    Calibrate {
        /// The solution's folder (`solutions/matmul`).
        path: PathBuf,
        /// The lab's name or the path of an assignment.toml; inferred from the crate when not
        /// given.
        #[arg(long)]
        assignment: Option<String>,
        /// How many times to grade each speed item.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(2..=100))]
        runs: u16,
        /// Where GPU items run (as for `grade`): GPU speedups are measured on a real GPU only.
        #[arg(long, value_enum, env = "GRADER_GPU", default_value_t = GpuMode::Auto)]
        gpu: GpuMode,
        /// Where builds are cached [default: as for `grade`].
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        /// Grade without the workers' sandbox (as for `grade`).
        #[arg(long)]
        unsandboxed: bool,
    },
    /// Print a lab's GitHub Classroom workflow (.github/workflows/classroom.yml).
    Classroom {
        /// The lab's name (`matmul`) or the path of an assignment.toml.
        lab: String,
    },
}

fn main() -> ExitCode {
    if let Some(code) = grader::gpu::trial::serve_if_asked() {
        return code;
    }
    // A worker's kernel compiler on the emulator: this program, never the submission's.
    if let Some(code) = grader_engine::kernel_compiler::serve_if_asked() {
        return code;
    }
    // Official grading starts this binary as a speed item's baseline worker: a process with no
    // submission code in it (see `grader::grade`).
    if std::env::args().nth(1).as_deref() == Some(grader_engine::protocol::WORKER_FLAG) {
        let served = grader_engine::worker::serve_yardstick(grader::labs::LABS);
        return grader_engine::worker::exit_code(served);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Commands::Grade {
            path,
            assignment,
            json,
            seed,
            gpu,
            cache_dir,
            unsandboxed,
            container,
            only,
            jobs,
            lang,
        } => sandboxed(unsandboxed, container).and_then(|()| {
            grade(GradeArgs {
                path,
                assignment,
                json,
                seed,
                gpu,
                cache: cache_or_default(cache_dir),
                only,
                jobs: jobs.map_or_else(grader::turns::items_at_once, usize::from),
                lang,
            })
        }),
        Commands::Calibrate {
            path,
            assignment,
            runs,
            gpu,
            cache_dir,
            unsandboxed,
        } => sandboxed(unsandboxed, false).and_then(|()| {
            let assignment = assignment_for(&path, assignment.as_deref())?;
            let mut options = GradeOptions::new(inputs::fresh_seed());
            options.gpu = gpu;
            options.cache = cache_or_default(cache_dir);
            let runs = usize::from(runs);
            let items = grader::calibrate::calibrate(
                &path,
                &assignment,
                &options,
                runs,
                &mut progress_lines,
            )?;
            out!(
                "calibration of `{}` on this machine: {runs} gradings of {} alone\n{}",
                assignment.assignment.name,
                path.display(),
                grader::calibrate::render(&items, runs)
            );
            Ok(())
        }),
        Commands::Batch {
            dir,
            assignment,
            jobs,
            out,
            feedback,
            gpu,
            seed,
            force,
            only,
            no_gradebook,
            cache_dir,
            slurm,
            partition,
            gres,
            cpus_per_task,
            mem,
            time,
            unsandboxed,
            container,
            lang,
            no_similarity,
            similarity_threshold,
        } => {
            // A Slurm script grades nothing here: its tasks check the sandbox on their nodes,
            // with the flag carried to them.
            let here = if slurm && container {
                Err(
                    "--container grades here, inside a container; Slurm's tasks grade on the \
                     compute nodes: leave it out (or pass --unsandboxed where their kernels have \
                     no Landlock)"
                        .to_string(),
                )
            } else if slurm {
                Ok(())
            } else {
                sandboxed(unsandboxed, container)
            };
            here.and_then(|()| {
                batch(BatchArgs {
                    dir,
                    assignment,
                    jobs,
                    gradebook: (!no_gradebook).then_some(out),
                    feedback,
                    gpu,
                    seed,
                    force,
                    only,
                    lang,
                    cache: cache_or_default(cache_dir),
                    similarity: similarity_settings(no_similarity, similarity_threshold),
                    slurm: slurm.then_some(SlurmArgs {
                        resources: grader::batch::slurm::Resources {
                            cpus_per_task,
                            mem,
                            time,
                            partition,
                            gres,
                        },
                        unsandboxed,
                    }),
                })
            })
        }
        Commands::Collect {
            feedback,
            assignment,
            out,
            submissions,
            no_similarity,
            similarity_threshold,
        } => collect(
            &feedback,
            &assignment,
            &out,
            submissions.as_deref(),
            similarity_settings(no_similarity, similarity_threshold),
        ),
        Commands::Gradescope(args) => gradescope(&args),
        // The exports are printed here, where a closed pipe is handled.
        Commands::Emulate {
            env: true,
            check: None,
            ..
        } => grader::emulate::Emulator::prepare()
            .map(|emulator| out!("{}", emulator.shell_exports()))
            .map_err(|e| e.to_string()),
        Commands::Emulate {
            env,
            check,
            command,
        } => {
            let check = check.as_deref().and_then(grader::emulate::Check::parse);
            return match grader::emulate::run_cli(&command, env, check) {
                Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
                Err(e) => {
                    errln!("error: {e}");
                    ExitCode::from(2)
                }
            };
        }
        Commands::Release {
            lab,
            out,
            grader_git,
            grader_rev,
            grader_path,
            force,
        } => release(&lab, &out, grader_git.zip(grader_rev), grader_path, force),
        Commands::Classroom { lab } => grader::classroom::workflow_for(&lab)
            .map(|workflow| out!("{workflow}"))
            .map_err(|e| e.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            errln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// The options of `grader grade`.
struct GradeArgs {
    path: PathBuf,
    assignment: Option<String>,
    json: Option<PathBuf>,
    seed: Option<u64>,
    gpu: GpuMode,
    cache: PathBuf,
    only: Vec<String>,
    /// Items graded at once.
    jobs: usize,
    lang: Option<grader::i18n::Lang>,
}

/// `grader grade`: exit 0 whenever grading completed, whatever the score.
fn grade(args: GradeArgs) -> Result<(), String> {
    let GradeArgs {
        path,
        assignment,
        json,
        seed,
        gpu,
        cache,
        only,
        jobs,
        lang,
    } = args;
    let assignment = assignment_for(&path, assignment.as_deref())?;
    grader::i18n::set(lang.unwrap_or_else(|| assignment.language()));
    if let Some(unknown) = only.iter().find(|id| assignment.item(id).is_none()) {
        let ids: Vec<&str> = assignment.items.iter().map(|i| i.id()).collect();
        return Err(format!(
            "--only {unknown}: the rubric `{}` has no such item (its items: {})",
            assignment.assignment.name,
            ids.join(", ")
        ));
    }
    let seed = seed.unwrap_or_else(inputs::fresh_seed);
    let options = GradeOptions {
        seed,
        gpu,
        cache,
        only: (!only.is_empty()).then_some(only),
        items_at_once: jobs,
    };
    let report = grader::grade::grade(
        &Target::Crate(path.clone()),
        &assignment,
        &options,
        &mut progress_lines,
    )
    .map_err(|e| e.to_string())?;
    for note in &report.notes {
        errln!(
            "{}",
            grader::messages::MESSAGES.format(
                "cli-note",
                &[("note", &grader::report::escape::terminal(note))]
            )
        );
    }
    out!("{}", report::table::failures(&report));
    out!("{}", report::table::render(&report));
    outln!(
        "{}",
        grader::messages::MESSAGES
            .format("cli-repeat", &[("seed", &seed), ("path", &path.display())])
    );
    if let Some(json) = json {
        std::fs::write(&json, report::gradescope::to_json(&report))
            .map_err(|e| format!("cannot write {}: {e}", json.display()))?;
    }
    Ok(())
}

/// The rubric to grade the crate at `path` with: `--assignment` (a lab name or a file), else
/// the embedded rubric of the lab the crate declares.
fn assignment_for(path: &std::path::Path, spec: Option<&str>) -> Result<Assignment, String> {
    match spec {
        Some(spec) => rubric::resolve(spec).map_err(|e| e.to_string()),
        None => {
            let krate = stage::read_lab_crate(path).map_err(|e| e.to_string())?;
            let lab = krate.lab_or(None).map_err(|e| e.to_string())?;
            rubric::embedded(lab.name).map_err(|e| e.to_string())
        }
    }
}

/// `grader grade`'s progress on stderr: what is built, then one line per item.
fn progress_lines(event: Event<'_>) {
    match event {
        Event::Building { path, lab } => {
            errln!("building {} as lab `{lab}` …", path.display())
        }
        Event::NotCompiled { first_line } => {
            errln!(
                "the submission does not compile: {}",
                grader::report::escape::terminal(first_line)
            )
        }
        Event::Ignored { note } => {
            errln!("note: {}", grader::report::escape::terminal(note))
        }
        Event::BuildingEmulator => {
            errln!("building the GPU emulator for the GPU items (first run only, about a minute) …")
        }
        Event::Started {
            seed,
            backend_label,
            ..
        } => errln!("grading with seed {seed}, GPU items on: {backend_label} …"),
        Event::ItemFinished { item, result } => errln!(
            "test {} ... {} ({}/{})",
            item.id(),
            match result.status {
                report::Status::Passed => "ok",
                report::Status::Skipped => "skipped",
                _ => "FAILED",
            },
            report::points(result.score),
            report::points(result.max_score)
        ),
        Event::ItemStarted { .. } | Event::Finished { .. } => {}
    }
}

/// Official grading runs submissions sandboxed, or says plainly that it will not: with
/// `--unsandboxed` (or `GPU_LABS_SANDBOX=off`) every report says so; with `--container` (or
/// `GPU_LABS_SANDBOX=container`) the container isolates the run and every report names what
/// the kernel still allowed inside it; without either, a machine that cannot sandbox them stops
/// here.
fn sandboxed(unsandboxed: bool, container: bool) -> Result<(), String> {
    // Before any thread starts: the workers inherit it, and every report says it.
    if unsandboxed {
        std::env::set_var(grader::sandbox::SWITCH, "off");
        return Ok(());
    }
    if container {
        std::env::set_var(grader::sandbox::SWITCH, "container");
        return Ok(());
    }
    if std::env::var(grader::sandbox::SWITCH).is_ok_and(|v| v == "off")
        || grader::sandbox::in_container()
        || grader::sandbox::available().filesystem
    {
        return Ok(());
    }
    Err(
        "this machine cannot sandbox submissions (Landlock needs Linux 5.13 or later): grade \
         in a container made for it and pass --container, or pass --unsandboxed to grade with \
         your own rights"
            .into(),
    )
}

/// The options of `grader batch`.
struct BatchArgs {
    dir: PathBuf,
    assignment: String,
    jobs: Option<usize>,
    gradebook: Option<PathBuf>,
    feedback: PathBuf,
    gpu: GpuMode,
    seed: Option<u64>,
    force: bool,
    only: Vec<String>,
    /// `--lang` (or `$GRADER_LANG`, which Slurm's tasks inherit).
    lang: Option<grader::i18n::Lang>,
    cache: PathBuf,
    /// `--similarity-threshold`, or `None` for `--no-similarity`.
    similarity: Option<grader::similarity::Settings>,
    /// `--slurm`, with what its tasks ask of the cluster.
    slurm: Option<SlurmArgs>,
}

/// What `grader batch --slurm` carries into its script besides the batch's own options.
struct SlurmArgs {
    resources: grader::batch::slurm::Resources,
    unsandboxed: bool,
}

/// `grader batch`: grades a class with a progress bar, then prints a summary.
fn batch(mut args: BatchArgs) -> Result<(), String> {
    if !args.dir.is_dir() {
        return Err(format!(
            "{} is not a folder; pass the folder that holds one subfolder per student",
            args.dir.display()
        ));
    }
    let assignment = rubric::resolve(&args.assignment).map_err(|e| e.to_string())?;
    if grader::labs::find(&assignment.assignment.name).is_none() {
        return Err(format!(
            "this grader has no lab `{}` (known: {})",
            assignment.assignment.name,
            grader::labs::names().join(", ")
        ));
    }
    grader::i18n::set(args.lang.unwrap_or_else(|| assignment.language()));
    let seed = args.seed.unwrap_or_else(inputs::fresh_seed);
    if let Some(slurm) = args.slurm.take() {
        return write_slurm(&args, seed, slurm);
    }
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let options = BatchOptions {
        dir: args.dir,
        assignment,
        jobs,
        gradebook: args.gradebook,
        feedback: args.feedback,
        gpu: args.gpu,
        seed,
        force: args.force,
        only: (!args.only.is_empty()).then_some(args.only),
        cache: args.cache,
        similarity: args.similarity,
    };
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} graded, ETA {eta}  {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let running: std::sync::Mutex<Vec<String>> = std::sync::Mutex::default();
    let show_running = |bar: &ProgressBar, running: &[String]| {
        bar.set_message(
            report::escape::terminal(&format!("grading: {}", running.join(", "))).into_owned(),
        );
    };
    let summary = grader::batch::run(&options, &|event| match event {
        BatchEvent::Started { to_grade, unchanged } => {
            bar.set_length(to_grade as u64);
            if unchanged > 0 {
                bar.println(format!(
                    "{unchanged} submissions unchanged since their last grading: kept (--force regrades them)"
                ));
            }
        }
        BatchEvent::Grading { student } => {
            if let Ok(mut r) = running.lock() {
                r.push(report::escape::name(student).into_owned());
                show_running(&bar, &r);
            }
        }
        BatchEvent::Done { record } => {
            if let Ok(mut r) = running.lock() {
                r.retain(|s| *s != report::escape::name(&record.student));
                show_running(&bar, &r);
            }
            let score = record
                .report
                .as_ref()
                .map(|r| format!("{}/{}", report::points(r.score()), report::points(r.max_score())))
                .unwrap_or_else(|| "-".into());
            bar.println(report::escape::terminal(&format!(
                "{}: {score} {} ({:.1} s)",
                report::escape::name(&record.student),
                record.status(),
                record.seconds
            )));
            bar.inc(1);
        }
    })
    .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    out!(
        "{}",
        report::escape::terminal(&grader::batch::summary_text(&summary))
    );
    if let Some(path) = &options.gradebook {
        outln!("gradebook: {}", path.display());
        outln!(
            "class report: {}",
            grader::batch::class_report::path_beside(path).display()
        );
    }
    outln!(
        "feedback: {}/<student>/feedback.md and results.json",
        options.feedback.display()
    );
    // Low grades are the students'; a submission the grader could not grade is a failure of
    // this run (a Slurm task then shows FAILED, not COMPLETED).
    let ungraded: Vec<String> = summary
        .records
        .iter()
        .filter(|r| r.outcome == grader::batch::Outcome::Error)
        .map(|r| report::escape::name(&r.student).into_owned())
        .collect();
    if !ungraded.is_empty() {
        return Err(format!(
            "could not grade {} of the submissions: {} (the `not graded` lines above say why)",
            ungraded.len(),
            ungraded.join(", ")
        ));
    }
    Ok(())
}

/// `grader batch --slurm`: writes the array script and the command to submit it.
fn write_slurm(args: &BatchArgs, seed: u64, slurm: SlurmArgs) -> Result<(), String> {
    let absolute = |p: &std::path::Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let students = grader::batch::students(&args.dir).map_err(|e| e.to_string())?;
    if students.is_empty() {
        return Err(format!(
            "{} has no submissions (no subfolders)",
            args.dir.display()
        ));
    }
    let assignment = if std::path::Path::new(&args.assignment).exists() {
        absolute(std::path::Path::new(&args.assignment))
            .display()
            .to_string()
    } else {
        args.assignment.clone()
    };
    let grader =
        std::env::current_exe().map_err(|e| format!("cannot find this grader binary: {e}"))?;
    let script = grader::batch::slurm::script(&grader::batch::slurm::SlurmOptions {
        grader,
        dir: absolute(&args.dir),
        students,
        assignment,
        feedback: absolute(&args.feedback),
        cache: absolute(&args.cache),
        gpu: match args.gpu {
            GpuMode::Auto => "auto",
            GpuMode::Real => "real",
            GpuMode::Emulate => "emulate",
            GpuMode::Off => "off",
        },
        seed,
        resources: slurm.resources,
        force: args.force,
        unsandboxed: slurm.unsandboxed,
    })
    .map_err(|e| e.to_string())?;
    let folder = args.feedback.join("slurm");
    std::fs::create_dir_all(&folder)
        .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    let path = folder.join("grade.sbatch");
    std::fs::write(&path, script).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    outln!("wrote {}", path.display());
    outln!("submit it with: sbatch {}", path.display());
    outln!(
        "when every task is done: grader collect {} --assignment … --out grades.csv \
         --submissions {}",
        args.feedback.display(),
        args.dir.display()
    );
    Ok(())
}

/// The similarity settings of `--no-similarity` and `--similarity-threshold`.
fn similarity_settings(off: bool, threshold: f64) -> Option<grader::similarity::Settings> {
    (!off).then_some(grader::similarity::Settings { threshold })
}

/// `grader collect`: the gradebook and summary from a batch's records, and the class report
/// (comparing the `submissions` when given).
fn collect(
    feedback: &std::path::Path,
    assignment: &str,
    out: &std::path::Path,
    submissions: Option<&std::path::Path>,
    similarity: Option<grader::similarity::Settings>,
) -> Result<(), String> {
    let assignment = rubric::resolve(assignment).map_err(|e| e.to_string())?;
    if !feedback.is_dir() {
        return Err(format!(
            "{} is not a folder; pass the --feedback folder of the batch",
            feedback.display()
        ));
    }
    let class = match submissions {
        Some(dir) => Some(grader::batch::submissions(dir).map_err(|e| e.to_string())?),
        None => None,
    };
    let records =
        grader::batch::write_gradebook(feedback, out, &assignment).map_err(|e| e.to_string())?;
    let similarity = similarity.map(|settings| match &class {
        Some(class) => grader::similarity::of_class(
            class.iter().map(|s| (s.name.as_str(), s.folder.as_path())),
            grader::release::template_sources(&assignment.assignment.name),
            settings,
        ),
        None => grader::similarity::SimilaritySection::NotCompared(
            "`grader collect` compares the submissions when given their folder \
             (--submissions DIR)"
                .into(),
        ),
    });
    let page = grader::batch::class_report::write(feedback, out, &assignment, &records, similarity)
        .map_err(|e| e.to_string())?;
    let summary = grader::batch::BatchSummary {
        graded_now: 0,
        unchanged: records.len(),
        records,
    };
    out!(
        "{}",
        report::escape::terminal(&grader::batch::summary_text(&summary))
    );
    outln!("gradebook: {}", out.display());
    outln!("class report: {}", page.display());
    Ok(())
}

/// The options of `grader gradescope`.
#[derive(clap::Args)]
struct GradescopeArgs {
    /// The lab (`matmul`).
    lab: String,
    /// The zip to write.
    #[arg(long, value_name = "FILE", default_value = "autograder.zip")]
    out: PathBuf,
    /// The git repository setup.sh installs the grader from: this workspace, pushed
    /// (required).
    #[arg(long, value_name = "URL")]
    grader_git: Option<String>,
    /// The commit of that repository to install, e.g. `git rev-parse HEAD` (required).
    #[arg(long, value_name = "REV")]
    grader_rev: Option<String>,
    /// Replace --out if it exists.
    #[arg(long)]
    force: bool,
}

/// `grader gradescope`: writes the autograder zip and says what to do with it.
fn gradescope(args: &GradescopeArgs) -> Result<(), String> {
    let package = grader::gradescope_package::Package::new(
        &args.lab,
        args.grader_git.as_deref(),
        args.grader_rev.as_deref(),
    )
    .map_err(|e| e.to_string())?;
    let files = package
        .write(&args.out, args.force)
        .map_err(|e| e.to_string())?;
    errln!(
        "wrote {} ({files} files): upload it as the autograder of a Gradescope programming \
         assignment; its setup.sh installs the grader from {} at {}",
        args.out.display(),
        package.grader_git,
        package.grader_rev
    );
    Ok(())
}

/// `grader release`: writes the student repository of a lab.
fn release(
    lab: &str,
    out: &std::path::Path,
    git: Option<(String, String)>,
    path: Option<String>,
    force: bool,
) -> Result<(), String> {
    use grader::release::{GraderSource, ReleaseError};
    let source = match (git, path) {
        (Some((url, rev)), _) => GraderSource::Git { url, rev },
        (None, Some(path)) => GraderSource::Path(path),
        (None, None) => return Err(ReleaseError::NoGraderSource.to_string()),
    };
    let n = grader::release::write(lab, &source, out, force).map_err(|e| e.to_string())?;
    errln!("wrote {n} files to {}", out.display());
    Ok(())
}

/// `--cache-dir` made absolute, else the default cache.
fn cache_or_default(dir: Option<PathBuf>) -> PathBuf {
    dir.map(stage::absolute)
        .unwrap_or_else(stage::default_cache_dir)
}
