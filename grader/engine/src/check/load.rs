//! What else ran on this machine's cores while a speed item was sampled: the processor time
//! the kernel counts on the cores the grader may use (`/proc/stat`, time stolen by a
//! hypervisor included), less what the grader's own processes used (the supervisor and the
//! two workers being timed, with every process of their process groups: a submission's own
//! helper processes are its work, not another program's). A classmate's build, another Slurm task or a browser shows up
//! there; a speedup measured while it ran is not the submission's.
//!
//! A process the submission starts and leaves running counts as another program: it can only
//! make the item not measured (no points), never earn it any.

use std::time::Instant;

/// How much of a core other programs may use during a round of samples before the round is
/// called contended: on an idle machine they use under 0.01 (a few ticks in seconds); one busy
/// program uses a whole core, and a quarter of one already takes an eighth of a two-core
/// machine from a parallel product, enough to move a speedup across a tier's edge.
pub const CONTENDED_CORES: f64 = 0.25;

/// The processor time counted on this process's cores, and its own processes' share, at one
/// moment.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot {
    at: Instant,
    /// Ticks the cores were busy (user, nice, system, interrupts, stolen).
    busy: u64,
    /// Ticks of the grader's own processes.
    own: u64,
}

/// Reads one of the kernel's files under `/proc` (`/proc/self` is a link, which the bounded
/// reader for files a user names refuses; nothing here is a user's).
#[allow(clippy::disallowed_methods)]
fn proc_text(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Reads a [`Snapshot`] counting `pids` (the workers, each the leader of its process group)
/// with their groups, and this process, as the grader's own; `None` where `/proc` cannot tell
/// (another system).
pub fn snapshot(pids: &[i32]) -> Option<Snapshot> {
    let stat = proc_text("/proc/stat")?;
    let cores = allowed_cores()?;
    let busy = busy_ticks(&stat, &cores)?;
    let mut own = process_ticks("self")?.0;
    // A process that has ended counts nothing more.
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if let Some((ticks, group)) = process_ticks(pid) {
            let id: i32 = pid.parse().unwrap_or(0);
            if pids.contains(&id) || pids.contains(&group) {
                own += ticks;
            }
        }
    }
    Some(Snapshot {
        at: Instant::now(),
        busy,
        own,
    })
}

/// The cores other programs used on average between `before` and `after` (0 when nothing
/// else ran).
pub fn others_cores(before: &Snapshot, after: &Snapshot) -> f64 {
    let seconds = after.at.duration_since(before.at).as_secs_f64();
    if seconds <= 0.0 {
        return 0.0;
    }
    let busy = after.busy.saturating_sub(before.busy);
    let own = after.own.saturating_sub(before.own);
    busy.saturating_sub(own) as f64 / ticks_per_second() / seconds
}

/// Ticks a second, as `/proc` counts them.
fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}

/// The cores this process may run on (its workers inherit them).
fn allowed_cores() -> Option<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity writes at most its
    // size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        Some(
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect(),
        )
    }
}

/// The busy ticks of `cores` in `/proc/stat`'s text: each `cpuN` line's user, nice, system,
/// irq, softirq and steal (not idle or iowait; guest time is already in user).
fn busy_ticks(stat: &str, cores: &[usize]) -> Option<u64> {
    let mut busy = 0;
    let mut seen = 0;
    for line in stat.lines() {
        let mut fields = line.split_ascii_whitespace();
        let Some(core) = fields
            .next()
            .and_then(|name| name.strip_prefix("cpu"))
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        if !cores.contains(&core) {
            continue;
        }
        let ticks: Vec<u64> = fields.map(|f| f.parse().unwrap_or(0)).collect();
        // user nice system idle iowait irq softirq steal
        busy += [0, 1, 2, 5, 6, 7]
            .iter()
            .map(|&i| ticks.get(i).copied().unwrap_or(0))
            .sum::<u64>();
        seen += 1;
    }
    (seen > 0).then_some(busy)
}

/// A process's user and system ticks, its waited-for children's included, and its process
/// group.
fn process_ticks(pid: &str) -> Option<(u64, i32)> {
    let stat = proc_text(&format!("/proc/{pid}/stat"))?;
    // The command name is in parentheses and may hold spaces: count fields after it.
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split_ascii_whitespace().collect();
    // Field 5 of the line (the process group) is 2 after the name; fields 14 to 17 (utime,
    // stime, cutime, cstime) are 11 to 14.
    let group = fields.get(2)?.parse().ok()?;
    let ticks = (11..=14).try_fold(0u64, |sum, i| {
        Some(sum + fields.get(i)?.parse::<u64>().ok()?)
    })?;
    Some((ticks, group))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn busy_ticks_count_only_the_allowed_cores_and_not_idle_time() {
        let stat = "cpu  100 0 100 900 0 0 0 0 0 0\n\
                    cpu0 10 1 20 500 7 3 4 5 0 0\n\
                    cpu1 90 0 80 400 0 0 0 0 0 0\n\
                    intr 1 2 3\n";
        assert_eq!(busy_ticks(stat, &[0]), Some(10 + 1 + 20 + 3 + 4 + 5));
        assert_eq!(busy_ticks(stat, &[0, 1]), Some(43 + 170));
        assert_eq!(busy_ticks(stat, &[7]), None);
    }

    #[test]
    fn a_busy_program_beside_the_grader_is_seen_and_an_idle_machine_is_not() {
        let idle_before = snapshot(&[]).expect("/proc");
        std::thread::sleep(std::time::Duration::from_millis(300));
        let idle_after = snapshot(&[]).expect("/proc");
        let idle = others_cores(&idle_before, &idle_after);
        // A busy program (not the grader's: no pid of it is given), in a process group of its
        // own whose busy member is a child of its leader, as a worker's helper process is.
        let mut busy = std::process::Command::new("sh")
            .args(["-c", "(while :; do :; done) & wait"])
            .process_group(0)
            .spawn()
            .expect("sh");
        std::thread::sleep(std::time::Duration::from_millis(100));
        let before = snapshot(&[]).expect("/proc");
        std::thread::sleep(std::time::Duration::from_millis(600));
        let after = snapshot(&[]).expect("/proc");
        // The same program counted as the grader's own.
        let own_before = snapshot(&[busy.id() as i32]).expect("/proc");
        std::thread::sleep(std::time::Duration::from_millis(600));
        let own_after = snapshot(&[busy.id() as i32]).expect("/proc");
        // SAFETY: kill has no memory preconditions; the group is the test's own child's.
        unsafe { libc::kill(-(busy.id() as i32), libc::SIGKILL) };
        let _ = busy.wait();
        let others = others_cores(&before, &after);
        let own = others_cores(&own_before, &own_after);
        eprintln!("others: idle {idle:.2}, busy {others:.2}, own {own:.2} cores");
        if idle >= CONTENDED_CORES {
            eprintln!("skipped: this machine is busy already");
            return;
        }
        assert!(others >= CONTENDED_CORES, "{others}");
        assert!(own < CONTENDED_CORES, "{own}");
    }
}
