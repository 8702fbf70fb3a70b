// gpu-labs emulator: `cuda::barrier` at block scope, for asynchronous copies into shared memory
// (gpu_labs_async.h). A barrier whose expected count is the block's threads: `init(&bar, n)`,
// `arrive_and_wait()`, `arrive()` then `wait(token)`; a thread's arrival first does the copies
// it started (`cuda::memcpy_async(dst, src, size, bar)` or with a group), and the wait is the
// block's `__syncthreads()`.
#pragma once
#include <gpu_labs_async.h>
namespace cuda {
// The barrier's completion function is not supported: it fails to compile.
struct __gl_no_completion {
    void operator()() const {}
};
template <class C>
struct __gl_is_no_completion {
    static constexpr bool value = false;
};
template <>
struct __gl_is_no_completion<__gl_no_completion> {
    static constexpr bool value = true;
};
template <thread_scope Scope, class Completion = __gl_no_completion>
struct barrier {
    static_assert(__gl_is_no_completion<Completion>::value,
                  "gpu-labs emulator: a cuda::barrier's completion function is not supported");
    long expected;
    struct arrival_token {};
    friend void init(barrier* b, long count) { b->expected = count; }
    arrival_token arrive() {
        __gl_async::drain();
        return arrival_token{};
    }
    void wait(arrival_token&&) { __syncthreads(); }
    void arrive_and_wait() {
        __gl_async::drain();
        __syncthreads();
    }
};
template <class T, thread_scope S, class C>
static inline void memcpy_async(T* dst, const T* src, unsigned long size, barrier<S, C>&) {
    __gl_async::start(dst, src, size, 0, 1);
}
template <class G, class T, thread_scope S, class C>
static inline void memcpy_async(const G& g, T* dst, const T* src, unsigned long size, barrier<S, C>&) {
    __gl_async::start(dst, src, size, g.thread_rank(), g.size());
}
}  // namespace cuda
