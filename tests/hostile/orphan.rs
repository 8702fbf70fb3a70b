// tries: a grandchild orphaned to init (the shell that started it exits at once) that keeps running
// at: naive
// lost: naive_correct
// says: orphan left: 962.5
// marker: 962.5
    let _ = std::process::Command::new("sh")
        .args(["-c", "(sleep 962.5 &) ; exit 0"])
        .status();
    panic!("orphan left: 962.5");
