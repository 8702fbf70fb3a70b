//! The Landlock part of a worker's sandbox: which files it may read and write, no TCP, no
//! signal to a process outside its sandbox.

use super::{Protections, SandboxError, Spec};

/// The Landlock ABI of the running kernel (0 when it has none).
#[cfg(not(target_os = "linux"))]
pub fn landlock_abi() -> i64 {
    0
}

/// The Landlock ABI of the running kernel (0 when it has none).
#[cfg(target_os = "linux")]
pub fn landlock_abi() -> i64 {
    // SAFETY: LANDLOCK_CREATE_RULESET_VERSION with a null attribute only returns the version.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    v.max(0)
}

#[cfg(not(target_os = "linux"))]
pub fn restrict(_: &Spec, _: Protections) -> Result<(), SandboxError> {
    Err(SandboxError("Landlock exists only on Linux".into()))
}

/// Restricts this thread (and all it starts) to `spec`'s files, as `wanted` says.
#[cfg(target_os = "linux")]
pub fn restrict(spec: &Spec, wanted: Protections) -> Result<(), SandboxError> {
    use landlock::RulesetStatus;
    let status = ruleset(&spec.readable, &spec.writable, wanted)?
        .restrict_self()
        .map_err(fail)?;
    match status.ruleset {
        RulesetStatus::NotEnforced => Err(SandboxError(
            "Landlock is not enforced on this kernel although it reported support".into(),
        )),
        _ => Ok(()),
    }
}

#[cfg(target_os = "linux")]
fn fail(e: landlock::RulesetError) -> SandboxError {
    SandboxError(e.to_string())
}

/// A ruleset, not yet applied, that allows reading `readable`, reading and writing
/// `writable`, and (as `wanted` says) no TCP and no signals outside.
#[cfg(target_os = "linux")]
pub fn ruleset(
    readable: &[std::path::PathBuf],
    writable: &[std::path::PathBuf],
    wanted: Protections,
) -> Result<landlock::RulesetCreated, SandboxError> {
    use landlock::{
        path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset,
        RulesetAttr, RulesetCreatedAttr, Scope, ABI,
    };
    let abi = ABI::V6;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(fail)?;
    if wanted.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(fail)?;
    }
    if wanted.signals {
        ruleset = ruleset.scope(Scope::from_all(abi)).map_err(fail)?;
    }
    ruleset
        .create()
        .map_err(fail)?
        .add_rules(path_beneath_rules(readable, AccessFs::from_read(abi)))
        .map_err(fail)?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(abi)))
        .map_err(fail)
}
