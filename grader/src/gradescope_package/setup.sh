#!/usr/bin/env bash
# Gradescope runs this once, as root and with the network, when it builds the autograder's
# image (written by `grader gradescope`; the zip's files are in /autograder/source). It
# installs a C++ compiler, Rust and the grader, then grades the lab's template once so that a
# student's run builds only the student's own code.
set -euo pipefail

LAB=@LAB@
GRADER_GIT=@GRADER_GIT@
GRADER_REV=@GRADER_REV@

# Absolute paths: workers run in folders of their own.
AUTOGRADER_ROOT="$(cd "${AUTOGRADER_ROOT:-/autograder}" && pwd)"
SOURCE="$AUTOGRADER_ROOT/source"
export RUSTUP_HOME="${RUSTUP_HOME:-/usr/local/rustup}"
export CARGO_HOME="${CARGO_HOME:-/usr/local/cargo}"
export PATH="$CARGO_HOME/bin:$PATH"
mkdir -p "${GPU_LABS_CACHE:=$AUTOGRADER_ROOT/cache}"
GPU_LABS_CACHE="$(cd "$GPU_LABS_CACHE" && pwd)"
export GPU_LABS_CACHE

# A C++ compiler for GPU kernels on the grader's CPU emulator (Gradescope has no GPU), and
# what rustup and cargo need.
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends build-essential ca-certificates curl git

if ! command -v cargo >/dev/null 2>&1; then
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs |
        sh -s -- -y --no-modify-path --profile minimal --default-toolchain stable
fi
# The installed grader builds every submission against its own sources in cargo's git
# checkout: keep cargo's automatic cache cleaning from removing them months from now.
mkdir -p "$CARGO_HOME"
if ! grep -q '^auto-clean-frequency' "$CARGO_HOME/config.toml" 2>/dev/null; then
    printf '[cache]\nauto-clean-frequency = "never"\n' >>"$CARGO_HOME/config.toml"
fi

# GRADER names a grader already built (an image that has one, or a test of this script).
if [ -z "${GRADER:-}" ]; then
    cargo install --locked --git "$GRADER_GIT" --rev "$GRADER_REV" grader
    GRADER="$CARGO_HOME/bin/grader"
fi

# What run_autograder grades with: this toolchain, this grader, this cache.
{
    printf 'export RUSTUP_HOME=%q\n' "$RUSTUP_HOME"
    printf 'export CARGO_HOME=%q\n' "$CARGO_HOME"
    printf 'export PATH=%q\n' "$PATH"
    printf 'export GPU_LABS_CACHE=%q\n' "$GPU_LABS_CACHE"
    printf 'export GRADER=%q\n' "$GRADER"
} >"$AUTOGRADER_ROOT/gpu-labs.env"

# Build the grading area, its dependencies and the GPU emulator once, by grading the template
# (every item scores 0: "not implemented yet"). --container: Gradescope's container is the
# sandbox; Docker's seccomp profile refuses namespaces (older ones Landlock too), so workers
# get what the kernel still allows and every result says so.
"$GRADER" grade "$SOURCE/template" --assignment "$LAB" --seed 1 --container \
    --json "$GPU_LABS_CACHE/template-results.json"
