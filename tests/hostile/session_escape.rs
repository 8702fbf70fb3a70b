// tries: to leave its process group (setsid, setpgid) so that a process outlives its worker
// at: naive
// lost: naive_correct
// says: escape: setsid false, setpgid refused
// marker: 961.5
    let sid = std::process::Command::new("setsid")
        .args(["sleep", "961.5"])
        .status()
        .is_ok_and(|s| s.success());
    let pgid = std::process::Command::new("python3")
        .args(["-c", "import os, time\ntry:\n    os.setpgid(0, 0)\n    print('moved')\nexcept OSError:\n    print('refused')\n", "961.5"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    panic!("escape: setsid {sid}, setpgid {pgid}");
