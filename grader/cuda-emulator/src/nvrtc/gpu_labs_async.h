// gpu-labs emulator: asynchronous copies into shared memory, for `cooperative_groups::
// memcpy_async`, `cuda::memcpy_async` (with `cuda::pipeline` or `cuda::barrier`) and the
// pipeline primitives of `cuda_pipeline.h`. A copy is started by each thread that calls it
// (its share: 4-byte words rank, rank + size, ... of a group's copy, all of a thread's own) and
// done when that thread waits for its copies (`wait`, `consumer_wait`, `arrive_and_wait`,
// `__pipeline_wait_prior`), as CUDA allows: until then the destination holds what it held. So
// a checked run reports a read of shared memory before its copy was waited on, as a read of
// memory never written or as a race with the thread that copies it at its wait.
#pragma once
namespace __gl_async {
// This thread's share of one copy, byte by byte so that the race check sees every store.
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static inline void share(
    char* dst, const char* src, unsigned long long bytes, unsigned rank, unsigned size) {
    if (((unsigned long long)dst & 3) != 0 || size == 0) {
        if (rank == 0)
            for (unsigned long long i = 0; i < bytes; i++) dst[i] = src[i];
        return;
    }
    for (unsigned long long w = rank; w * 4 < bytes; w += size) {
        unsigned long long end = w * 4 + 4 < bytes ? w * 4 + 4 : bytes;
        for (unsigned long long i = w * 4; i < end; i++) dst[i] = src[i];
    }
}
// Does every copy this thread started.
static inline void drain() {
    char* d;
    const char* s;
    uint64_t n;
    unsigned r, z;
    while (__gl_async_pop(&d, &s, &n, &r, &z)) share(d, s, n, r, z);
}
// Starts this thread's share of a copy (done at once when its list is full or it has none).
static inline void start(void* dst, const void* src, unsigned long long bytes, unsigned rank, unsigned size) {
    if (!__gl_async_push(dst, src, bytes, rank, size)) {
        drain();
        share((char*)dst, (const char*)src, bytes, rank, size);
    }
}
}  // namespace __gl_async

namespace cuda {
enum thread_scope { thread_scope_system = 0, thread_scope_device = 1, thread_scope_block = 2, thread_scope_thread = 3 };
// A copy's size with the alignment its caller promises (the emulator needs none).
template <unsigned long Align>
struct aligned_size_t {
    unsigned long value;
    explicit aligned_size_t(unsigned long v) : value(v) {}
    operator unsigned long() const { return value; }
};
}  // namespace cuda
