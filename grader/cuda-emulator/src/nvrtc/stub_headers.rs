// The CUDA headers the emulator provides in place of the toolkit's, as (name, text) pairs.
// Plain comments, no inner doc comment: the grader's engine `include!`s this file too, to lay
// the headers out beside the emulator library it builds, where no worker can write (a folder
// a worker could write is searched before the system's headers, so a `cmath` left there
// would come before the prelude's rules).

/// The linker's version script among the stub headers (`-Wl,--version-script`): a module
/// exports the emulator's own entry points alone (`__gl_*`: the block runner, the kernel and
/// variable descriptors, the build's marks). The prelude's C library for device code
/// (`malloc`, `free`, `operator new`, `memcpy`...) stays inside the module, so that no other
/// library loaded beside it (the C++ runtime the module needs) binds to them.
pub const EXPORTS_FILE: &str = "gpu-labs-exports.map";

/// CUDA headers tutorials include, provided empty (the prelude already defines what they
/// would): `cuda_runtime.h`, `cuda.h`, ...; `math_constants.h` with its common constants;
/// `cooperative_groups.h` with its basics; `cuda_fp16.h`, `cuda_bf16.h` and `cuda_fp8.h`
/// with the reduced-precision types; `cuda/std/limits`; `cuda/barrier`, `cuda/pipeline` and
/// `cuda_pipeline.h`, asynchronous copies into shared memory (`gpu_labs_async.h`).
pub const STUB_HEADERS: &[(&str, &str)] = &[
    // Not a header: the list of what a module exports (see [`EXPORTS_FILE`]).
    (
        EXPORTS_FILE,
        "{ global: __gl_*; local: *; };\n",
    ),
    ("cuda_runtime.h", ""),
    ("cuda_runtime_api.h", ""),
    ("cuda.h", ""),
    ("device_launch_parameters.h", ""),
    ("device_functions.h", ""),
    ("sm_60_atomic_functions.h", ""),
    ("cooperative_groups.h", include_str!("cooperative_groups.h")),
    (
        "cooperative_groups/reduce.h",
        "#pragma once\n#include <cooperative_groups.h>\n",
    ),
    (
        "cooperative_groups/memcpy_async.h",
        "#pragma once\n#include <cooperative_groups.h>\n",
    ),
    ("gpu_labs_async.h", include_str!("gpu_labs_async.h")),
    ("cuda/barrier", include_str!("cuda_barrier.h")),
    ("cuda/pipeline", include_str!("cuda_pipeline.h")),
    ("cuda_pipeline.h", include_str!("cuda_pipeline.h")),
    ("cuda_fp16.h", include_str!("cuda_fp16.h")),
    ("cuda_bf16.h", "#pragma once\n#include <cuda_fp16.h>\n"),
    ("cuda_fp8.h", "#pragma once\n#include <cuda_fp16.h>\n"),
    (
        "cuda/std/limits",
        "#pragma once\n#include <limits>\nnamespace cuda { namespace std { using ::std::numeric_limits; } }\n",
    ),
    (
        "math_constants.h",
        "#pragma once\n#define CUDART_PI_F 3.141592654f\n#define CUDART_PI 3.1415926535897931e+0\n\
         #define CUDART_INF_F __int_as_float(0x7f800000)\n#define CUDART_NAN_F __int_as_float(0x7fffffff)\n\
         #define CUDART_INF __longlong_as_double(0x7ff0000000000000ULL)\n#define CUDART_SQRT_2PI_F 2.506628275f\n",
    ),
];
