// tries: to leave a System V shared-memory segment behind (whose size carries a token a classmate's worker could read with ipcs), made by a program it starts
// at: naive
// says: all 6 cases right
let made = std::process::Command::new("ipcmk")
    .args(["-M", "962537"])
    .output()
    .map(|o| o.status.success())
    .unwrap_or(false);
assert!(!made, "a shared segment outlives its worker: 962537");
let seen = std::process::Command::new("ipcs")
    .output()
    .map(|o| String::from_utf8_lossy(&o.stdout).contains("962537"))
    .unwrap_or(false);
assert!(!seen, "a classmate's segment is visible: 962537");
