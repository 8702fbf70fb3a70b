//! The real-GPU kit's variants (`scripts/real-gpu-check`, built by `src/bin/real_gpu_kit.rs`):
//! the labs' solutions and faulty copies of them, each with the items a real GPU must fail
//! it on. Here, not in the binary, so that a test can check every edit still applies.

use std::path::PathBuf;

/// One crate of the kit: a lab's solution with `edits` made in `src/gpu.rs`, and the items a
/// real GPU must fail it on.
pub struct Variant {
    /// The crate's name in the kit (`crates/NAME`, `bin/NAME`).
    pub name: &'static str,
    /// The lab (`solutions/<lab>`, `templates/<lab>`).
    pub lab: &'static str,
    /// (find, replace) in `src/gpu.rs`, each `find` code (no comment) found once in its code.
    pub edits: &'static [(&'static str, &'static str)],
    /// The items it must fail.
    pub fails: &'static [&'static str],
    /// Items that may fail too, downstream of the mistake (as in the e2e tests).
    pub may_fail: &'static [&'static str],
}

const AFTER_LAUNCH: &str =
    "launch_product(stream, &kernel, (a, b, c), shape)?;\n    stream.synchronize()?;";
const BEFORE_CLOCK: &str = "stream.synchronize()?;\n    let start = Instant::now();";
const EPOCH_END: &str =
    "    let count = launch_epoch(model, loader, lr, &mut loss_sum)?;\n    stream.synchronize()?;\n";

/// Each lab's solution and the faulty submissions whose verdict must not depend on the device.
/// (A kernel without its bounds check may not fault on a real GPU: it is not here.) Host work
/// passed off as GPU work is caught on a real GPU by the tracer the kit carries.
pub const VARIANTS: &[Variant] = &[
    Variant {
        name: "solution",
        lab: "matmul",
        edits: &[],
        fails: &[],
        may_fail: &[],
    },
    Variant {
        name: "timer-without-synchronize",
        lab: "matmul",
        edits: &[
            (
                AFTER_LAUNCH,
                "launch_product(stream, &kernel, (a, b, c), shape)?;",
            ),
            (BEFORE_CLOCK, "let start = Instant::now();"),
        ],
        fails: &["gpu_timer_sync"],
        may_fail: &[],
    },
    Variant {
        name: "clock-before-pending-work",
        lab: "matmul",
        edits: &[(BEFORE_CLOCK, "let start = Instant::now();")],
        fails: &["gpu_timer_sync"],
        may_fail: &[],
    },
    Variant {
        name: "grid-too-small",
        lab: "matmul",
        edits: &[(
            "grid_dim: (n.div_ceil(16) as u32, m.div_ceil(16) as u32, 1),",
            "grid_dim: ((n / 16).max(1) as u32, (m / 16).max(1) as u32, 1),",
        )],
        fails: &["gpu_correct", "gpu_tiled_correct"],
        may_fail: &[],
    },
    Variant {
        name: "cublas-operands-swapped",
        lab: "matmul",
        edits: &[(
            "unsafe { blas.gemm(config, &b_dev, &a_dev, &mut c_dev) }",
            "unsafe { blas.gemm(config, &a_dev, &b_dev, &mut c_dev) }",
        )],
        fails: &["cublas_correct"],
        may_fail: &[],
    },
    Variant {
        name: "training-solution",
        lab: "training",
        edits: &[],
        fails: &[],
        may_fail: &[],
    },
    Variant {
        name: "training-epoch-timer-without-synchronize",
        lab: "training",
        edits: &[(
            EPOCH_END,
            "    let count = launch_epoch(model, loader, lr, &mut loss_sum)?;\n",
        )],
        fails: &["time_gpu_epoch"],
        may_fail: &[],
    },
    Variant {
        name: "host-work",
        lab: "matmul",
        edits: &crate::HOST_WORK,
        fails: &["cublas_correct", "gpu_correct", "gpu_tiled_correct"],
        may_fail: &[],
    },
    Variant {
        name: "training-host-step",
        lab: "training",
        edits: &[crate::HOST_STEP],
        fails: &["gpu_epoch_mlp", "gpu_epoch_simple_nn"],
        // On a GPU the tracer may be missing; then train_on_gpu, which only counts the
        // calls, cannot tell.
        may_fail: &["time_gpu_epoch", "train_on_gpu"],
    },
];

/// The file of a lab's solution that the variants edit.
pub const EDITED_FILE: &str = "src/gpu.rs";

/// The solution that `variant` edits (`solutions/<lab>`).
pub fn solution_of(variant: &Variant) -> PathBuf {
    crate::workspace().join("solutions").join(variant.lab)
}

/// The variant's `src/gpu.rs`: its solution's with its edits made. The error names the
/// variant and the edit that no longer applies, and why (see [`crate::edit::apply`]); an edit
/// that anchors on a comment is refused too, since a comment may change with no code change.
pub fn edited_source(variant: &Variant) -> Result<String, String> {
    let path = solution_of(variant).join(EDITED_FILE);
    let place = |index: usize| {
        format!(
            "variant `{}`: edit {} of {}",
            variant.name,
            index + 1,
            path.display()
        )
    };
    if let Some(index) = variant
        .edits
        .iter()
        .position(|(find, _)| crate::edit::has_comment(find))
    {
        return Err(format!(
            "{}: the text to find holds a comment; anchor the edit on code only",
            place(index)
        ));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "variant `{}`: cannot read {}: {e}",
            variant.name,
            path.display()
        )
    })?;
    crate::edit::apply(&text, variant.edits).map_err(|(index, e)| format!("{}: {e}", place(index)))
}
