// tries: 4.4 GiB held by four processes, each under the limit a process has
// at: naive
// lost: naive_correct
// says: ran out of memory
// marker: hog-4412
    for _ in 0..4 {
        let _ = std::process::Command::new("python3")
            .args(["-c", "import time\nb = b'x' * (1100 << 20)\ntime.sleep(600)", "hog-4412"])
            .spawn();
    }
    std::thread::sleep(std::time::Duration::from_secs(60));
    panic!("the hogs were left alone");
