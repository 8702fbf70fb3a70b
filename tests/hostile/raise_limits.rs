// tries: to raise its limits back to what the instructor's shell allowed (the batch runs under `ulimit -s unlimited`) and its priority above the grader's
// at: naive
// lost: naive_correct
// says: limits: stack 8388608/8388608 raise refused, nice refused, cpu raise refused
    let probe = "import os, resource\nout = []\ns, h = resource.getrlimit(resource.RLIMIT_STACK)\nout.append(f'stack {s}/{h}')\ntry:\n    resource.setrlimit(resource.RLIMIT_STACK, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n    out[-1] += ' raised'\nexcept (ValueError, OSError):\n    out[-1] += ' raise refused'\ntry:\n    os.nice(-5)\n    out.append('nice raised')\nexcept OSError:\n    out.append('nice refused')\ntry:\n    resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n    out.append('cpu raised')\nexcept (ValueError, OSError):\n    out.append('cpu raise refused')\nprint(', '.join(out))\n";
    let out = std::process::Command::new("python3").args(["-c", probe]).output().expect("python3");
    panic!("limits: {}", String::from_utf8_lossy(&out.stdout).trim());
