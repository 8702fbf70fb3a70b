//! Checked runs report two streams touching one device allocation, one writing, with nothing
//! ordering them (no event waited on, no synchronisation). cudarc orders its slices by events
//! itself, so these programs turn that off; the correct twins order the streams explicitly
//! (an event recorded on one, waited on by the other) or only read from both.

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

const KERNELS: &str = r#"
extern "C" __global__ void scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}
extern "C" __global__ void copy(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
"#;

const N: usize = 256;

/// How the second stream is ordered after the first.
#[derive(Clone, Copy, PartialEq)]
enum Order {
    /// Stream a writes, stream b reads, nothing between them.
    None,
    /// Stream a writes, records an event, stream b waits for it, then reads.
    Event,
    /// The host uploads and synchronizes; both streams only read.
    ReadsOnly,
}

fn run(order: Order) {
    let ctx = CudaContext::new(0).unwrap();
    // SAFETY: the program orders its streams itself (or, in the racy twin, does not: that
    // is what the test is about).
    unsafe { ctx.disable_event_tracking() };
    let module = ctx.load_module(compile_ptx(KERNELS).unwrap()).unwrap();
    let scale = module.load_function("scale").unwrap();
    let copy = module.load_function("copy").unwrap();
    let a = ctx.new_stream().unwrap();
    let b = ctx.new_stream().unwrap();
    let input: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let mut x = a.clone_htod(&input).unwrap();
    let mut y = b.alloc_zeros::<f32>(N).unwrap();
    let mut z = a.alloc_zeros::<f32>(N).unwrap();
    let n = N as i32;
    let cfg = LaunchConfig::for_num_elems(N as u32);
    if order == Order::ReadsOnly {
        a.synchronize().unwrap();
        b.synchronize().unwrap();
        let mut l = a.launch_builder(&copy);
        l.arg(&x).arg(&mut z).arg(&n);
        unsafe { l.launch(cfg) }.unwrap();
    } else {
        let mut l = a.launch_builder(&scale);
        l.arg(&mut x).arg(&n);
        unsafe { l.launch(cfg) }.unwrap();
    }
    if order == Order::Event {
        let e = a.record_event(None).unwrap();
        b.wait(&e).unwrap();
    }
    let mut l = b.launch_builder(&copy);
    l.arg(&x).arg(&mut y).arg(&n);
    unsafe { l.launch(cfg) }.unwrap();
    let got = b.clone_dtoh(&y).unwrap();
    a.synchronize().unwrap();
    if order != Order::None {
        let k = if order == Order::Event { 2.0 } else { 1.0 };
        for (i, g) in got.iter().enumerate() {
            assert_eq!(
                *g,
                k * i as f32,
                "index {i}: expected {}, got {g}",
                k * i as f32
            );
        }
    }
}

/// The stream hazard lines of a checked run of test `name`.
fn hazards_of(name: &str) -> Vec<String> {
    common::checked_child(name, &[])
        .lines()
        .filter(|l| l.starts_with("gpu-labs emulator: stream hazard"))
        .map(str::to_string)
        .collect()
}

macro_rules! hazard_test {
    ($name:ident, $order:expr, |$found:ident| $check:block) => {
        #[test]
        fn $name() {
            if common::is_child(stringify!($name)) {
                run($order);
                return;
            }
            let plain = common::run_child(stringify!($name));
            assert!(plain.status.success(), "plain run failed");
            let $found = hazards_of(stringify!($name));
            $check
        }
    };
}

hazard_test!(
    write_then_read_on_another_stream_unordered_is_reported,
    Order::None,
    |found| {
        assert_eq!(found.len(), 1, "{found:?}");
        let r = &found[0];
        // Stream b's `copy` is ordered after neither of stream a's writes of `x` (the upload
        // and `scale`); which pair is named depends on which ran first.
        assert!(r.contains("kernel `copy` on stream"), "{r}");
        assert!(
            r.contains("kernel `scale` on stream") || r.contains("a copy from the host"),
            "{r}"
        );
        assert!(r.contains(" writes ") && r.contains(" reads "), "{r}");
        assert!(
            r.contains("cuEventRecord") && r.contains("cuStreamWaitEvent"),
            "{r}"
        );
    }
);

hazard_test!(
    write_then_event_wait_then_read_is_silent,
    Order::Event,
    |found| {
        assert!(found.is_empty(), "{found:?}");
    }
);

hazard_test!(
    two_streams_reading_one_buffer_are_silent,
    Order::ReadsOnly,
    |found| {
        assert!(found.is_empty(), "{found:?}");
    }
);
