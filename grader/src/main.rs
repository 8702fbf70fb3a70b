//! The `grader` command: official grading of a lab crate anywhere on disk, and the tools around
//! it. Library code returns errors; this binary decides how to print them.

use clap::{Parser, Subcommand};
use grader::event::Event;
use grader::gpu::GpuMode;
use grader::grade::{GradeOptions, Target};
use grader::report;
use grader::rubric::{self, Assignment};
use grader::stage;
use grader::{inputs, template};
use std::path::PathBuf;
use std::process::ExitCode;

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
        /// Where GPU items run: a real GPU when there is one else the CPU emulator (auto), a
        /// real GPU or an error (real), the emulator (emulate), or nowhere (off: skipped).
        #[arg(long, value_enum, env = "GRADER_GPU", default_value_t = GpuMode::Auto)]
        gpu: GpuMode,
        /// Where builds are cached across submissions [default: $GPU_LABS_CACHE, else
        /// ~/.cache/gpu-labs].
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
    },
    /// Run a command with the CPU emulator in place of libcuda, libnvrtc and libcublas
    /// (`grader emulate -- cargo run`), or print the environment for a shell (`--env`).
    Emulate {
        /// Print `export …` lines for a shell instead of running a command.
        #[arg(long)]
        env: bool,
        /// The command and its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<std::ffi::OsString>,
    },
    /// Write the student template generated from a reference solution (for maintainers).
    MakeTemplate {
        /// The solution crate, e.g. solutions/matmul.
        solution: PathBuf,
        /// Where the template goes, e.g. templates/matmul.
        out: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Commands::Grade {
            path,
            assignment,
            json,
            seed,
            gpu,
            cache_dir,
        } => grade(GradeArgs {
            path,
            assignment,
            json,
            seed,
            gpu,
            cache: cache_dir.unwrap_or_else(stage::default_cache_dir),
        }),
        Commands::Emulate { env, command } => {
            return match grader::emulate::run_cli(&command, env) {
                Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            };
        }
        Commands::MakeTemplate { solution, out } => template::write(&solution, &out)
            .map(|n| eprintln!("wrote {n} files to {}", out.display()))
            .map_err(|e| e.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
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
    } = args;
    let assignment = assignment_for(&path, assignment.as_deref())?;
    let seed = seed.unwrap_or_else(inputs::fresh_seed);
    let options = GradeOptions {
        seed,
        gpu,
        cache,
        only: None,
    };
    let report = grader::grade::grade(
        &Target::Crate(path.clone()),
        &assignment,
        &options,
        &mut progress_lines,
    )
    .map_err(|e| e.to_string())?;
    for note in &report.notes {
        eprintln!("note: {note}");
    }
    print!("{}", report::table::failures(&report));
    print!("{}", report::table::render(&report));
    println!(
        "seed {seed}: repeat with `grader grade {} --seed {seed}`",
        path.display()
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
            eprintln!("building {} as lab `{lab}` …", path.display())
        }
        Event::NotCompiled { first_line } => {
            eprintln!("the submission does not compile: {first_line}")
        }
        Event::BuildingEmulator => eprintln!(
            "building the GPU emulator for the GPU items (first run only, about a minute) …"
        ),
        Event::Started {
            seed,
            backend_label,
            ..
        } => eprintln!("grading with seed {seed}, GPU items on: {backend_label} …"),
        Event::ItemFinished { item, result } => eprintln!(
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
