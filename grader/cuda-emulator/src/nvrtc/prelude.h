// gpu-labs CUDA emulator prelude: compiled (by the host C++ compiler) before every CUDA C
// source given to nvrtcCompileProgram. It provides the CUDA C language extensions the labs
// use and the block runner the emulator's worker threads call. __GL_USE_FIBERS is defined
// (0 or 1) before this file: 1 when the source synchronises threads (__syncthreads, warp
// shuffles...), which then run as cooperative fibers; 0 runs the threads of a block in a loop.
// __GL_USE_CORO is defined 1 (with __GL_USE_FIBERS 1) when the source's barrier kernels were
// rewritten into coroutines (nvrtc/coroutine.rs): each of their threads is then a stackless
// coroutine, and each region between barriers a loop over the block's threads.
#ifndef __GL_RACECHECK
#define __GL_RACECHECK 0
#endif
// __GL_CONFINE (1, in a build that is not checked): the kernel is instrumented as a checked
// one is, but each hook only confines the access to device memory, shared memory and the
// thread's own locals (timed runs: no race detection, blocks still in parallel).
#ifndef __GL_CONFINE
#define __GL_CONFINE 0
#endif
#if __GL_RACECHECK
#undef __GL_CONFINE
#define __GL_CONFINE 0
#endif
#include <cfloat>
#include <climits>
#include <cmath>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <type_traits>
#include <utility>
#include <new>
#ifndef __GL_USE_CORO
#define __GL_USE_CORO 0
#endif
#if __GL_USE_CORO
#if __GL_RACECHECK
#error "checked builds run threads as fibers"
#endif
#include <coroutine>
// A module with coroutine kernels may have fiber kernels beside them, and the coroutines'
// block runner shares the fibers' barrier and warp checks.
#undef __GL_USE_FIBERS
#define __GL_USE_FIBERS 1
#endif

#define __GL_VIS __attribute__((visibility("default")))
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
// Shared memory is per block: each worker thread runs one block at a time, so a thread-local
// static is the block's, in every form a kernel declares it (in a kernel, a device function,
// a template, a lambda). Checked runs find it by address in the module's thread-local block
// (the compiler ignores a section attribute on a template's static, so sections cannot).
#define __shared__ static thread_local
#if __GL_RACECHECK || __GL_CONFINE
// Runtime code of the prelude: not instrumented (its own accesses and indices are not the
// kernel's); its calls through pointers (the emulator's callbacks, the kernel's entry) are
// made as written, where a kernel's go through the checked thunks below
// (`__gl_indirect_call`); and it takes no part in the shadow stack of returns (`__fentry__`,
// `__x86_return_thunk` below).
#define __GL_RT                                                                                  \
    __attribute__((no_sanitize_thread, no_sanitize_undefined, indirect_branch("keep"),          \
                   function_return("keep"), no_instrument_function))
// A kernel's entry (the trampoline that unpacks its arguments): reads the emulator's argument
// array unchecked, but returns through the shadow stack like the kernel's own functions, since
// its frame lies where the kernel may write.
#define __GL_TRAMP __attribute__((no_sanitize_thread))
#else
#define __GL_RT
#define __GL_TRAMP
#endif
// The prelude's own memory: the C library's allocator under its internal name, since in a
// module `malloc` and `free` are device code's heap (below); and copies that are not a kernel's,
// never through `memcpy`, which in a module is the kernel's checked copy (below). The loops are
// kept loops: the compiler would otherwise turn them into calls of `memcpy`.
extern "C" void __libc_free(void*) noexcept;
namespace __gl {
__GL_RT __attribute__((noinline, optimize("no-tree-loop-distribute-patterns"))) static void
raw_copy(void* d, const void* s, size_t n) {
    unsigned char* to = (unsigned char*)d;
    const unsigned char* from = (const unsigned char*)s;
    while (n--) *to++ = *from++;
}
__GL_RT __attribute__((noinline, optimize("no-tree-loop-distribute-patterns"))) static void
raw_zero(void* d, size_t n) {
    unsigned char* to = (unsigned char*)d;
    while (n--) *to++ = 0;
}
__GL_RT __attribute__((noinline, optimize("no-tree-loop-distribute-patterns"))) static bool
raw_same(const void* a, const void* b, size_t n) {
    const unsigned char* x = (const unsigned char*)a;
    const unsigned char* y = (const unsigned char*)b;
    while (n--)
        if (*x++ != *y++) return false;
    return true;
}
}  // namespace __gl
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#define __restrict__ __restrict
#define __align__(n) alignas(n)
#define __launch_bounds__(...)
#define __grid_constant__
#define __CUDACC__ 1
#define __CUDACC_RTC__ 1
#define __CUDA_ARCH__ 800
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 8
#define warpSize 32

// ---------------------------------------------------------------- vector types
#define __GL_VEC(T, N, A2, A4)                                                         \
    struct __attribute__((aligned(A2))) N##2 { T x, y; };                                \
    struct N##3 { T x, y, z; };                                                          \
    struct __attribute__((aligned(A4))) N##4 { T x, y, z, w; };                          \
    struct N##1 { T x; };                                                                \
    static inline N##1 make_##N##1(T x) { return N##1{x}; }                              \
    static inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }                      \
    static inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }              \
    static inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
__GL_VEC(float, float, 8, 16)
__GL_VEC(double, double, 16, 16)
__GL_VEC(int, int, 8, 16)
__GL_VEC(unsigned int, uint, 8, 16)
__GL_VEC(long long, longlong, 16, 16)
__GL_VEC(unsigned long long, ulonglong, 16, 16)
__GL_VEC(short, short, 4, 8)
__GL_VEC(unsigned short, ushort, 4, 8)
__GL_VEC(signed char, char, 2, 4)
__GL_VEC(unsigned char, uchar, 2, 4)
#undef __GL_VEC

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int a = 1, unsigned int b = 1, unsigned int c = 1) : x(a), y(b), z(c) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

// Built-in variables: per OS thread, set by the block runner before each GPU thread runs.
// Every thread-local of the prelude has an initialiser: checked and confined builds
// (-fno-zero-initialized-in-bss) then keep them in the module's .tdata, apart from a kernel's
// `__shared__` variables (no initialiser: .tbss), so that a kernel may write only the latter:
// a shared array indexed out of its bounds cannot rewrite the block runner's state.
static thread_local uint3 threadIdx = {};
static thread_local uint3 blockIdx = {};
static thread_local uint3 blockDim = {};
static thread_local uint3 gridDim = {};

// ---------------------------------------------------------------- runtime state
namespace __gl {
// Must match `exec::LaunchDesc` on the Rust side.
struct Launch {
    void (*tramp)(void**);
    void** args;
    uint32_t grid[3];
    uint32_t block[3];
    uint64_t dyn_smem;
    uint64_t* next_block;
    uint32_t* abort;
    uint32_t fault_block[3];
    uint32_t fault_thread[3];
    int32_t fault_kind;
    char message[512];
    // Returns a fiber stack of the given size with a guard page below it, or null: the
    // emulator allocates them, so that modules need neither mmap nor mprotect.
    void* (*alloc_stack)(uint64_t);
    // Checked runs: the first data race found (linear block and thread indices of the two
    // accesses, the address, what each was), and how many racing accesses were seen.
    uint64_t race_count;
    uint64_t race_addr;
    uint32_t race_block[2];
    uint32_t race_thread[2];
    uint32_t race_pc[2];       // code offsets in the module of the two accesses
    uint8_t race_write[2];
    uint8_t race_volatile[2];
    uint8_t race_shared;       // 1: shared memory (static), 2: dynamic shared memory
    uint8_t race_rmw;          // the earlier access's thread read and wrote the element
    uint8_t race_next;         // the later thread's next write: 1 the same element, 2 another
    uint8_t race_pad;
    uint32_t race_size;
    uint32_t race_rmw_pc;      // the earlier thread's read of the element (race_rmw)
    uint32_t race_pad2;
    // The worker thread's own stack (private to each GPU thread in turn: not checked).
    uintptr_t stack_lo;
    uintptr_t stack_hi;
    // Checked runs: the span of the live device allocation (or module global) that holds
    // `addr`, guard pages included, as span[0] <= addr < span[1]; 0 when none holds it.
    // Every global access of a checked kernel must fall in one (a kernel reads GPU memory
    // only): else the launch stops (FAULT_HOST) with the access below.
    uint32_t (*device_span)(uint64_t addr, uint64_t* span);
    uint64_t host_addr;
    uint32_t host_size;
    uint32_t host_write;
    // Checked and confined runs: the calling thread's instance of the module's thread-local
    // block (whose ELF header is at `base`), as span[0] <= addr < span[1], and span[2] the
    // start of its zero-initialised part (.tbss: static `__shared__` variables, which alone a
    // kernel may write); 0 when it has none.
    uint32_t (*tls_span)(uint64_t base, uint64_t* span);
    // Checked runs (initcheck): the first read of shared memory that no thread of its block
    // had written (an atomic update counts as a read), and how many such reads there were.
    uint64_t uninit_count;
    uint64_t uninit_addr;      // offset in the thread-local block (static) or dynamic buffer
    uint32_t uninit_block, uninit_thread, uninit_pc, uninit_size;
    uint32_t uninit_shared;    // 1: static __shared__, 2: dynamic (extern __shared__)
    uint32_t uninit_pad;
    // Checked runs (synccheck): the first warp operation called with a mask naming lanes
    // that did not reach it (a full mask inside a divergent branch), and how many there were.
    uint64_t sync_count;
    uint32_t sync_block, sync_thread, sync_line, sync_op;
    uint32_t sync_mask;        // the mask the thread passed
    uint32_t sync_present;     // the lanes of its warp that reached the same call
    // Checked runs (stream hazards): each device span this launch reads or writes is told
    // once per worker thread, as touch(touch_ctx, span start, write), for the stream check.
    uint64_t touch_id;         // unique per launch, never 0
    void* touch_ctx;
    void (*touch)(void* ctx, uint64_t lo, uint32_t write);
    // Threads of a block that waited at different barriers, as one line the emulator records
    // (empty: none; the first of the module only).
    char barrier_note[384];
    // Checked runs: the bytes the launch's threads read from device and shared memory (their
    // own stacks apart), which tell the work the device did.
    uint64_t loaded_bytes;
    // Checked runs: racing writes that left their bytes as they were (every lane of a warp
    // storing the warp's sum into one shared word): no order of them changes a result.
    uint64_t same_value_writes;
    // How the kernel's blocks run, whatever the rest of its module needs: 1 when its own
    // code (its body and the functions it calls) never synchronises (its threads one after
    // another in a loop), 2 when it was made a coroutine (`run_block_coro`), 0 as fibers.
    uint32_t plain;
    // A replay of the launch (`src/replay.rs`): it runs as it ran, but prints nothing.
    uint32_t quiet;
    // Device code's heap (`malloc`, `new`): a block of `size` bytes aligned to `align`, in
    // device memory the emulator allocates, or null when the heap is full; and the release of
    // one, which returns its size, or 0 when `addr` is not a block the heap handed out and
    // still holds (the launch then stops: FAULT_FREE, the address in `host_addr`).
    void* (*heap_alloc)(uint64_t size, uint64_t align);
    uint64_t (*heap_free)(uint64_t addr);
    // Checked runs: racing writes of two threads to one place that changed what it held (as
    // opposed to a read racing with a write): no second order can make those harmless.
    uint64_t race_ww;
    // Checked runs: run the blocks, and the threads of each block, last first (`exec::
    // reorder`: the launch again with every racing pair the other way round).
    uint32_t reverse;
    // Checked runs: the launch cannot be put back as it was before it ran (the shadow was
    // full, or device code's heap was used), so it is never run again in another order.
    uint32_t undo_lost;
    // Checked runs: the bytes of device memory as they were before the launch first wrote
    // them, told in batches as undo(undo_ctx, words, count) (`exec::reorder::UndoWord`).
    void* undo_ctx;
    void (*undo)(void* ctx, const void* words, uint64_t count);
    // Checked runs: 0, or how many bytes the launch may read (`loaded_bytes`) before it stops
    // (FAULT_TRAP): a second run in the other order may wait forever for a flag that only
    // the first order had set already.
    uint64_t load_budget;
};
// Must match `driver::module::KernelDesc`.
struct KernelDesc {
    const char* name;
    void (*tramp)(void**);
    uint32_t nargs;
    const uint32_t* sizes;
    const uint32_t* aligns;
    uint64_t static_smem;
    uint32_t plain;  // see `Launch::plain`
    uint32_t plain_pad;
};
// Must match `driver::module::GlobalDesc`.
struct GlobalDesc {
    void* addr;
    uint64_t size;
};

enum { RUNNING = 0, WARP_WAIT = 1, BLOCK_WAIT = 2, DONE = 3 };
enum { FAULT_SEGV = 1, FAULT_ASSERT = 2, FAULT_TRAP = 3, FAULT_HOST = 5, FAULT_FREE = 6, FAULT_BOUNDS = 7, FAULT_CALL = 8, FAULT_RETURN = 9 };

// An asynchronous copy a thread started (`cuda::memcpy_async`, `cooperative_groups::
// memcpy_async`, `__pipeline_memcpy_async`): its share of `bytes` (4-byte words `rank`,
// `rank + size`, ...), done when the thread waits for its copies (`gpu_labs_async.h`).
struct AsyncCopy {
    char* dst;
    const char* src;
    uint64_t bytes;
    uint32_t rank, size;
};
static const unsigned ASYNC_MAX = 8;
struct Fiber {
    void* sp;
    char* stack;
    // Checked and confined builds: the top of the part of `stack` the kernel may write (below
    // the runtime's frame that calls it), and the fiber's shadow stack of returns (where it is
    // now, and its empty top).
    uintptr_t bound;
    uint64_t* shadow;
    uint64_t* shadow_top;
    int state;
    uint3 tid;
    int barrier_line;        // source line of the __syncthreads() it waits at
    unsigned barrier_count;  // how many __syncthreads() it has reached
    unsigned warp_count;     // how many warp-wide operations (__syncwarp, shuffles) it has done
    // The warp operation it waits at: its source line, which one (`WarpOp`), the mask it
    // passed, its phase (a shuffle waits twice: 0 arriving, 1 reading), and the lanes of its
    // warp waiting at the same call (set by the scheduler: what __activemask() returns).
    int warp_line;
    unsigned warp_op, warp_mask, warp_phase, present;
    // Coroutine threads (`__GL_USE_CORO`): the thread's kernel coroutine (destroyed when the
    // block ends) and its innermost coroutine (what the block runner resumes: the kernel, or
    // a device function it awaits), and a warp operation's operands (the value given, the
    // lane read, whether it reads) and where its result goes (in the awaiting operation
    // itself), which the block runner computes once every lane has come.
    void* top;
    void* leaf;
    unsigned long long wval;
    unsigned long long* wout;
    int wsrc;
    unsigned wtake, lane;
    // Copies started and not yet waited for, oldest first (last: the fields above are the
    // ones every wait touches).
    unsigned async_n;
    AsyncCopy async_copies[ASYNC_MAX];
};
// Must match `exec::synccheck::OPS`.
enum WarpOp {
    OP_SYNCWARP, OP_SHFL, OP_SHFL_UP, OP_SHFL_DOWN, OP_SHFL_XOR, OP_BALLOT, OP_ANY, OP_ALL,
    OP_ACTIVEMASK
};

static thread_local sigjmp_buf jump = {};
static thread_local Launch* launch = {};
static thread_local char* dyn_smem_buf = {};
static thread_local uint64_t dyn_smem_cap = {};
static thread_local void (*tramp)(void**) = {};
static thread_local void** args = {};
static thread_local Fiber* fibers = {};
static thread_local unsigned fiber_cap = {};   // how many of them have a stack
static thread_local unsigned thread_cap = {};  // how many there are
static thread_local Fiber* current = {};
static thread_local void* sched_sp = {};
static thread_local unsigned long long warp_slots[32][32] = {};
static thread_local int block_counter = {};
// Set when the threads of a block reached different barriers: barrier intervals then mean
// nothing, so the race check says nothing about this launch (the barrier report says why).
static bool barriers_diverged;
// Checked runs: the GPU thread running now, kept by the block runner in plain statics (a
// checked launch runs on one OS thread) so that the access hooks read no thread-locals.
struct RcNow {
    Launch* launch;
    uint32_t block, thread, epoch, warp;
    uintptr_t stack_lo, stack_len, fiber_lo, fiber_len, dyn_lo, dyn_len, tls_lo, tls_len, tls_wlo;
};
static RcNow rc_now;
#if __GL_RACECHECK
#define __GL_RC(...) __VA_ARGS__
#else
#define __GL_RC(...)
#endif

__GL_RT static inline char* dyn_smem() { return dyn_smem_buf; }
__GL_RT static inline unsigned linear_tid() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__GL_RT [[noreturn]] static inline void stop(int kind) { siglongjmp(jump, kind); }
// At least `n` thread records (stacks are the fibers' business: `ensure_fibers`).
__GL_RT static bool ensure_threads(unsigned n) {
    if (n <= thread_cap) return true;
    Fiber* fs = (Fiber*)realloc(fibers, sizeof(Fiber) * n);
    if (!fs) return false;
    fibers = fs;
    thread_cap = n;
    return true;
}
}  // namespace __gl

#if __GL_RACECHECK || __GL_CONFINE
extern "C" __attribute__((visibility("hidden"))) const char __ehdr_start[];
namespace __gl {
// The calling thread's instance of the module's thread-local block: where it starts, how long
// it is, and where its .tbss (the kernels' `__shared__` variables) starts; all 0 when none.
struct TlsBlock {
    uintptr_t lo, len, wlo;
};
__GL_RT static TlsBlock tls_block(Launch* L) {
    uint64_t tls[3] = {0, 0, 0};
    if (L->tls_span((uint64_t)(uintptr_t)__ehdr_start, tls) && tls[1] > tls[0])
        return TlsBlock{(uintptr_t)tls[0], (uintptr_t)(tls[1] - tls[0]), (uintptr_t)tls[2]};
    return TlsBlock{0, 0, 0};
}
}  // namespace __gl
#endif

__GL_RT [[noreturn]] static inline void __gl_assert_fail(const char* expr, const char* file, int line,
                                                 const char* func) {
    snprintf(__gl::launch->message, sizeof(__gl::launch->message), "%s:%d: %s: Assertion `%s` failed.",
             file, line, func, expr);
    __gl::stop(__gl::FAULT_ASSERT);
}
#undef assert
#define assert(e) ((e) ? (void)0 : __gl_assert_fail(#e, __FILE__, __LINE__, __func__))
__GL_RT [[noreturn]] static inline void __trap() { __gl::stop(__gl::FAULT_TRAP); }
static inline void __brkpt() { __trap(); }

#if __GL_RACECHECK || __GL_CONFINE
// An array indexed outside its bounds (checked and confined builds are compiled with
// -fsanitize=bounds-strict, which calls this before the access). It is the wall for the one
// kind of access the access hooks never see: a local array whose address is never taken is
// not instrumented, so `local[i]` with `i` far past its end could read or write anywhere in
// the process (the worker's memory, the emulator's records). Every array of known size is
// indexed through this check, so such an access stops the launch first, in every form a
// kernel can write it (`a[i]`, `s.a[i]`, `a[i][j]`). The layouts are the compiler's
// (GCC's ubsan handlers): a source location, then the array's and the index's types.
namespace __gl {
struct UbsanType {
    uint16_t kind;  // 0: an integer
    uint16_t info;  // for an integer: log2(bits) << 1 | signed
    char name[1];
};
struct UbsanBounds {
    const char* file;
    uint32_t line;
    uint32_t column;
    const UbsanType* array;
    const UbsanType* index;
};
}  // namespace __gl
extern "C" __GL_RT [[noreturn]] void __ubsan_handle_out_of_bounds_abort(void* data, uintptr_t value) {
    const __gl::UbsanBounds* d = (const __gl::UbsanBounds*)data;
    unsigned bits = d->index->kind == 0 ? 1u << (d->index->info >> 1) : 64u;
    bool is_signed = d->index->kind == 0 && (d->index->info & 1);
    // Wider than a pointer: the handler gets the index's address.
    uint64_t raw = bits > 64 ? *(const uint64_t*)value : (uint64_t)value;
    long long index = is_signed && bits < 64 ? (long long)(raw << (64 - bits)) >> (64 - bits) : (long long)raw;
    // Read by the emulator (`exec/fault.rs`): the index, the array's type, the file and line.
    if (is_signed || (long long)raw >= 0)
        snprintf(__gl::launch->message, sizeof(__gl::launch->message), "%lld\t%s\t%s\t%u", index,
                 d->array->name, d->file, d->line);
    else
        snprintf(__gl::launch->message, sizeof(__gl::launch->message), "%llu\t%s\t%s\t%u",
                 (unsigned long long)raw, d->array->name, d->file, d->line);
    __gl::stop(__gl::FAULT_BOUNDS);
}
extern "C" __GL_RT [[noreturn]] void __ubsan_handle_out_of_bounds(void* data, uintptr_t value) {
    __ubsan_handle_out_of_bounds_abort(data, value);
}
// A call or jump through a pointer in a kernel (checked and confined builds are compiled with
// -mindirect-branch=thunk-extern and -mindirect-branch-register: each one becomes a call of
// `__x86_indirect_thunk_<register>`, with the target in that register). A target could be any
// address of the process, the host's functions included (their addresses are taken in safe
// Rust), which would run uninstrumented with the kernel's arguments: so no kernel call goes
// through a pointer, and the launch stops there. Jump tables are off in these builds (a
// `switch` compiles to compares), so what reaches the thunks is a kernel's function pointer
// or virtual call.
extern "C" __GL_RT [[noreturn]] __attribute__((used)) void __gl_indirect_call(uintptr_t target) {
    snprintf(__gl::launch->message, sizeof(__gl::launch->message), "%#lx", (unsigned long)target);
    __gl::stop(__gl::FAULT_CALL);
}
#define __GL_THUNK(R)                                                                           \
    ".globl __x86_indirect_thunk_" #R "\n.hidden __x86_indirect_thunk_" #R "\n"                \
    ".type __x86_indirect_thunk_" #R ",@function\n__x86_indirect_thunk_" #R ":\n"              \
    "  movq %" #R ", %rdi\n  jmp __gl_indirect_call\n"                                          \
    ".size __x86_indirect_thunk_" #R ",.-__x86_indirect_thunk_" #R "\n"
asm(".text\n" __GL_THUNK(rax) __GL_THUNK(rbx) __GL_THUNK(rcx) __GL_THUNK(rdx) __GL_THUNK(rsi)
        __GL_THUNK(rdi) __GL_THUNK(rbp) __GL_THUNK(r8) __GL_THUNK(r9) __GL_THUNK(r10) __GL_THUNK(r11)
            __GL_THUNK(r12) __GL_THUNK(r13) __GL_THUNK(r14) __GL_THUNK(r15));
#undef __GL_THUNK

// The shadow stack of returns. A kernel may write its own stack frames through a pointer to one
// of its locals (as C allows), and there lie its functions' return addresses and the registers
// their callers keep: rewriting them would let it run code of its choosing (the host's, or the
// runtime's with its own values). So checked and confined builds are compiled with -pg
// -mfentry (each of a kernel's functions calls `__fentry__` first, which records where it will
// return, where that address lies, and the six registers its caller keeps) and
// -mfunction-return=thunk-extern (each return goes through `__x86_return_thunk`, which checks
// them all against the record, and stops the launch on any difference). The records are in
// memory a kernel cannot write (the emulator's, found through `__gl_shadow_sp`, a thread-local
// of the module's initialised part); the runtime resets them for each GPU thread and keeps one
// stack of them per fiber. Sibling calls are off, so every function returns itself. Outside a
// launch (the module's constructor) `__gl_shadow_sp` is null and nothing is recorded.
extern "C" __attribute__((visibility("hidden"))) thread_local uint64_t* __gl_shadow_sp = nullptr;
extern "C" __GL_RT [[noreturn]] __attribute__((used)) void __gl_bad_return(const uint64_t* record,
                                                                             uint64_t found) {
    snprintf(__gl::launch->message, sizeof(__gl::launch->message), "%#lx\t%#lx",
             (unsigned long)record[0], (unsigned long)found);
    __gl::stop(__gl::FAULT_RETURN);
}
asm(".text\n"
    ".globl __fentry__\n.hidden __fentry__\n.type __fentry__,@function\n"
    "__fentry__:\n"
    "  pushq %rax\n  subq $8, %rsp\n"
    "  leaq __gl_shadow_sp@TLSDESC(%rip), %rax\n  call *__gl_shadow_sp@TLSCALL(%rax)\n"
    "  movq %fs:(%rax), %r11\n  testq %r11, %r11\n  jz 1f\n"
    "  subq $64, %r11\n  movq %r11, %fs:(%rax)\n"
    "  movq 24(%rsp), %rax\n  movq %rax, (%r11)\n  leaq 24(%rsp), %rax\n  movq %rax, 8(%r11)\n"
    "  movq %rbx, 16(%r11)\n  movq %rbp, 24(%r11)\n  movq %r12, 32(%r11)\n"
    "  movq %r13, 40(%r11)\n  movq %r14, 48(%r11)\n  movq %r15, 56(%r11)\n"
    "1:\n  addq $8, %rsp\n  popq %rax\n  ret\n"
    ".size __fentry__,.-__fentry__\n"
    ".globl __x86_return_thunk\n.hidden __x86_return_thunk\n.type __x86_return_thunk,@function\n"
    "__x86_return_thunk:\n"
    "  pushq %rax\n"
    "  leaq __gl_shadow_sp@TLSDESC(%rip), %rax\n  call *__gl_shadow_sp@TLSCALL(%rax)\n"
    "  movq %fs:(%rax), %r11\n  testq %r11, %r11\n  jz 1f\n"
    "  addq $64, %fs:(%rax)\n"
    "  leaq 8(%rsp), %rax\n  cmpq %rax, 8(%r11)\n  jne 2f\n"
    "  movq 8(%rsp), %rax\n  cmpq %rax, (%r11)\n  jne 2f\n"
    "  cmpq %rbx, 16(%r11)\n  jne 2f\n  cmpq %rbp, 24(%r11)\n  jne 2f\n"
    "  cmpq %r12, 32(%r11)\n  jne 2f\n  cmpq %r13, 40(%r11)\n  jne 2f\n"
    "  cmpq %r14, 48(%r11)\n  jne 2f\n  cmpq %r15, 56(%r11)\n  jne 2f\n"
    "1:\n  popq %rax\n  ret\n"
    "2:\n  movq %r11, %rdi\n  movq 8(%rsp), %rsi\n  subq $8, %rsp\n  jmp __gl_bad_return\n"
    ".size __x86_return_thunk,.-__x86_return_thunk\n");
namespace __gl {
// Shadow stacks hold 1024 records (a kernel's calls nested that deep, far more than a GPU
// thread's 1 KiB stack allows); past them is a guard page, so deeper recursion faults instead
// of writing anywhere. 64 KiB a fiber, beside its 256 KiB stack.
static const uint64_t SHADOW = 1024 * 64;
// The worker thread's shadow stack (the loop of threads), its empty top.
static thread_local uint64_t* worker_shadow = nullptr;
// The worker thread's stack pointer, read in a runtime function: everything at or above it is
// the runtime's (its frames, its spilled values, the return addresses above the kernel's).
__GL_RT static inline uintptr_t stack_pointer() {
    uintptr_t sp;
    asm volatile("movq %%rsp, %0" : "=r"(sp));
    return sp;
}
}  // namespace __gl
#endif

// Device printf: the C library's, but without `%n`, which writes the count of characters
// printed through a pointer (a kernel could reach any host address with it). Kernels' calls
// come here (`printf` names this function after the prelude); a `%n` stops the launch.
__GL_RT static int __gl_printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
__GL_RT static int __gl_printf(const char* fmt, ...) {
    for (const char* p = fmt; *p; p++) {
        if (*p != '%') continue;
        p++;
        while (*p == '-' || *p == '+' || *p == ' ' || *p == '#' || *p == '\'' || *p == '*' || *p == '.' ||
               *p == '$' || (*p >= '0' && *p <= '9') || *p == 'h' || *p == 'l' || *p == 'L' || *p == 'q' ||
               *p == 'j' || *p == 'z' || *p == 't' || *p == 'I')
            p++;
        if (*p == 'n') {
            snprintf(__gl::launch->message, sizeof(__gl::launch->message),
                     "printf's %%n (which writes through a pointer) is not supported in a kernel");
            __gl::stop(__gl::FAULT_ASSERT);
        }
        if (!*p) break;
    }
    if (__gl::launch->quiet) return 0;
    va_list ap;
    va_start(ap, fmt);
    int r = vprintf(fmt, ap);
    va_end(ap);
    return r;
}

// Asynchronous copies: the calling GPU thread's list (see `AsyncCopy`), kept out of the
// kernel's reach (host memory) and handed over through its own locals. A thread of a kernel
// that never synchronises has no list: its copies are done at once (push returns false).
__GL_RT static inline bool __gl_async_push(void* dst, const void* src, uint64_t bytes, unsigned rank,
                                           unsigned size) {
    __gl::Fiber* f = __gl::current;
    if (!f || f->async_n >= __gl::ASYNC_MAX) return false;
    f->async_copies[f->async_n++] = __gl::AsyncCopy{(char*)dst, (const char*)src, bytes, rank, size};
    return true;
}
// Takes the calling thread's oldest copy; false when none is left.
__GL_RT static inline bool __gl_async_pop(char** dst, const char** src, uint64_t* bytes, unsigned* rank,
                                          unsigned* size) {
    __gl::Fiber* f = __gl::current;
    if (!f || f->async_n == 0) return false;
    __gl::AsyncCopy c = f->async_copies[0];
    for (unsigned i = 1; i < f->async_n; i++) f->async_copies[i - 1] = f->async_copies[i];
    f->async_n--;
    *dst = c.dst;
    *src = c.src;
    *bytes = c.bytes;
    *rank = c.rank;
    *size = c.size;
    return true;
}

#if __GL_RACECHECK || __GL_CONFINE
namespace __gl {
__GL_RT static void kernel_window(uintptr_t sp);
}  // namespace __gl
#endif
// ---------------------------------------------------------------- fibers
#if __GL_USE_FIBERS
extern "C" __attribute__((visibility("hidden"))) void __gl_switch(void** save, void* to);
extern "C" __attribute__((visibility("hidden"), noreturn, used)) void __gl_fiber_main(__gl::Fiber* f);
#if defined(__x86_64__)
asm(".text\n"
    ".globl __gl_switch\n.hidden __gl_switch\n.type __gl_switch,@function\n"
    "__gl_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  subq $16, %rsp\n  stmxcsr 8(%rsp)\n  fnstcw (%rsp)\n"
    "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
    "  ldmxcsr 8(%rsp)\n  fldcw (%rsp)\n  addq $16, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n  ret\n"
    ".size __gl_switch,.-__gl_switch\n"
    ".globl __gl_fiber_start\n.hidden __gl_fiber_start\n.type __gl_fiber_start,@function\n"
    "__gl_fiber_start:\n  movq %rbx, %rdi\n  call __gl_fiber_main\n  ud2\n"
    ".size __gl_fiber_start,.-__gl_fiber_start\n");
extern "C" __attribute__((visibility("hidden"))) void __gl_fiber_start();
namespace __gl {
static const size_t STACK = 256 * 1024;
// Fiber `i`'s stack top is staggered by whole cache lines (64 of them in turn, under 4 KiB):
// stacks are a multiple of 4 KiB apart, so unstaggered tops, where every switch saves and
// loads a context, would all fall in the same few cache sets and evict each other (a block
// of 1024 threads ran twice as slow).
__GL_RT static inline void fiber_reset(Fiber* f, unsigned i) {
    uintptr_t stagger = (uintptr_t)(i % 64) * 64;
    uintptr_t top = ((uintptr_t)f->stack + STACK - stagger) & ~(uintptr_t)15;
    uint64_t* sp = (uint64_t*)(top - 88);
    raw_zero(sp, 88);
    ((uint16_t*)sp)[0] = 0x037f;           // x87 control word
    ((uint32_t*)sp)[2] = 0x1f80;           // mxcsr
    sp[6] = (uint64_t)f;                   // rbx: the fiber
    sp[8] = (uint64_t)&__gl_fiber_start;   // return address
    f->sp = sp;
    f->bound = (uintptr_t)f->stack;  // nothing to write until `__gl_fiber_main` calls the kernel
    f->shadow = f->shadow_top;
}
}  // namespace __gl
#else
#include <ucontext.h>
#error "gpu-labs emulator: fibers are only implemented for x86_64"
#endif

namespace __gl {
__GL_RT static bool ensure_fibers(unsigned n) {
    if (n <= fiber_cap) return true;
    if (!ensure_threads(n)) return false;
    for (unsigned i = fiber_cap; i < n; i++) {
        char* stack = (char*)launch->alloc_stack(STACK);
        if (!stack) return false;
        fibers[i].stack = stack;
        fibers[i].shadow_top = nullptr;
#if __GL_RACECHECK || __GL_CONFINE
        char* shadow = (char*)launch->alloc_stack(SHADOW);
        if (!shadow) return false;
        fibers[i].shadow_top = (uint64_t*)(shadow + SHADOW);
#endif
        fiber_cap = i + 1;
    }
    return true;
}
__GL_RT static inline void yield(int state) {
    Fiber* f = current;
    f->state = state;
    if (state == WARP_WAIT) f->warp_count++;
    __gl_switch(&f->sp, sched_sp);
}
// A warp operation `op` on `line` with `mask`, phase 0 (arriving); `present` tells who came.
__GL_RT static inline unsigned warp_arrive(unsigned op, unsigned mask, int line) {
    Fiber* f = current;
    f->warp_op = op;
    f->warp_mask = mask;
    f->warp_line = line;
    f->warp_phase = 0;
    yield(WARP_WAIT);
    return f->present;
}
// The second wait of a shuffle or vote (the lanes read what the others wrote).
__GL_RT static inline void warp_leave() {
    current->warp_phase = 1;
    yield(WARP_WAIT);
}
// Every thread of a block must reach the same __syncthreads() the same number of times; one
// inside an `if` that only some threads take is undefined on a GPU (a hang or wrong results).
// The emulator says so once per module, in its record (the launch's `barrier_note`).
// (Builtins, not std::atomic, whose inline members a checked build would instrument.)
static bool warned_divergent_barrier = false;
__GL_RT static void check_barrier(unsigned n) {
    unsigned waiting = 0, done = 0;
    const Fiber* first = nullptr;
    const Fiber* other = nullptr;
    for (unsigned t = 0; t < n; t++) {
        const Fiber* f = &fibers[t];
        if (f->state == DONE) done++;
        if (f->state != BLOCK_WAIT) continue;
        waiting++;
        if (!first) first = f;
        else if (!other && (f->barrier_line != first->barrier_line ||
                            f->barrier_count != first->barrier_count))
            other = f;
    }
    if (waiting && (done || other)) {
        // Whatever the block did from here on says nothing: the barrier is the report.
        barriers_diverged = true;
        launch->race_count = 0;
        launch->undo_lost = 1;
        launch->uninit_count = 0;
        launch->same_value_writes = 0;
    }
    if (!waiting || (!done && !other) || __atomic_exchange_n(&warned_divergent_barrier, true, __ATOMIC_RELAXED)) return;
    char what[200];
    if (other && other->barrier_line != first->barrier_line)
        snprintf(what, sizeof what, "threads waited at different __syncthreads() (line %d and line %d)",
                 first->barrier_line, other->barrier_line);
    else if (other)
        snprintf(what, sizeof what, "threads were at different rounds of the __syncthreads() on line %d",
                 first->barrier_line);
    else
        snprintf(what, sizeof what, "__syncthreads() was reached by %u of %u threads while the others "
                 "had already finished the kernel", waiting, n);
    snprintf(launch->barrier_note, sizeof launch->barrier_note,
             "gpu-labs emulator: block (%u,%u,%u): %s; every thread of a block must reach each "
             "__syncthreads() (is one inside an `if` or a loop that only some threads take?)",
             blockIdx.x, blockIdx.y, blockIdx.z, what);
}
// After a round of warp lanes lo..hi: the lanes waiting at one warp operation (same line,
// same phase) are the ones present there; a lane whose mask names a lane of its warp that
// is not (it took another branch, or finished) is what compute-sanitizer's synccheck reports:
// on a GPU the call hangs or returns garbage. Checked runs record the first one.
__GL_RT static void warp_groups(unsigned lo, unsigned hi) {
    unsigned exists = hi - lo == 32 ? 0xffffffffu : (1u << (hi - lo)) - 1;
    unsigned seen = 0;
    for (unsigned a = lo; a < hi; a++) {
        const Fiber* f = &fibers[a];
        if (f->state != WARP_WAIT || ((seen >> (a - lo)) & 1)) continue;
        unsigned present = 0;
        for (unsigned b = a; b < hi; b++) {
            const Fiber* g = &fibers[b];
            if (g->state == WARP_WAIT && g->warp_line == f->warp_line && g->warp_phase == f->warp_phase)
                present |= 1u << (b - lo);
        }
        seen |= present;
        for (unsigned b = a; b < hi; b++) {
            if (!((present >> (b - lo)) & 1)) continue;
            Fiber* g = &fibers[b];
            g->present = present;
            __GL_RC(if (g->warp_phase == 0 && (g->warp_mask & exists & ~present) && !barriers_diverged) {
                if (launch->sync_count++ == 0) {
                    launch->sync_block = rc_now.block;
                    launch->sync_thread = b;
                    launch->sync_line = (uint32_t)g->warp_line;
                    launch->sync_op = g->warp_op;
                    launch->sync_mask = g->warp_mask;
                    launch->sync_present = present;
                }
            })
        }
    }
}
__GL_RT static void run_block_fibers() {
    unsigned nx = blockDim.x, ny = blockDim.y, nz = blockDim.z;
    unsigned n = nx * ny * nz;
#if __GL_RACECHECK || __GL_CONFINE
    // The kernel's threads run on their fibers' stacks: none of the worker thread's stack is
    // theirs (it holds the scheduler's frames and the context it switches back to).
    kernel_window(0);
#endif
    if (!ensure_fibers(n)) {
        snprintf(launch->message, sizeof(launch->message), "out of memory for %u fiber stacks", n);
        stop(FAULT_TRAP);
    }
    unsigned i = 0;
    for (unsigned z = 0; z < nz; z++)
        for (unsigned y = 0; y < ny; y++)
            for (unsigned x = 0; x < nx; x++, i++) {
                fibers[i].tid = uint3{x, y, z};
                fibers[i].state = RUNNING;
                fibers[i].barrier_line = 0;
                fibers[i].barrier_count = 0;
                fibers[i].warp_count = 0;
                fibers[i].warp_line = 0;
                fibers[i].warp_phase = 0;
                fibers[i].present = 0;
                fibers[i].async_n = 0;
                fiber_reset(&fibers[i], i);
            }
    unsigned warps = (n + 31) / 32;
    bool rev = launch->reverse != 0;  // warps and lanes last first (`Launch::reverse`)
    for (;;) {
        bool all_done = true;
        for (unsigned wi = 0; wi < warps; wi++) {
            unsigned w = rev ? warps - 1 - wi : wi;
            unsigned lo = w * 32, hi = lo + 32 < n ? lo + 32 : n;
            for (;;) {
                bool warp_waiting = false;
                for (unsigned ti = lo; ti < hi; ti++) {
                    unsigned t = rev ? hi - 1 - (ti - lo) : ti;
                    Fiber* f = &fibers[t];
                    if (f->state != RUNNING) continue;
                    current = f;
                    __GL_RC(rc_now.thread = t; rc_now.epoch = f->barrier_count; rc_now.warp = f->warp_count;
                            rc_now.fiber_lo = (uintptr_t)f->stack; rc_now.fiber_len = f->bound - (uintptr_t)f->stack;)
                    threadIdx = f->tid;
#if __GL_RACECHECK || __GL_CONFINE
                    __gl_shadow_sp = f->shadow;
                    __gl_switch(&sched_sp, f->sp);
                    f->shadow = __gl_shadow_sp;
#else
                    __gl_switch(&sched_sp, f->sp);
#endif
                }
                warp_groups(lo, hi);
                for (unsigned t = lo; t < hi; t++)
                    if (fibers[t].state == WARP_WAIT) {
                        fibers[t].state = RUNNING;
                        warp_waiting = true;
                    }
                if (!warp_waiting) break;
            }
        }
        check_barrier(n);
        for (unsigned t = 0; t < n; t++)
            if (fibers[t].state == BLOCK_WAIT) {
                fibers[t].state = RUNNING;
                all_done = false;
            }
        if (all_done) break;
    }
}
}  // namespace __gl

extern "C" __GL_RT void __gl_fiber_main(__gl::Fiber* f) {
#if __GL_RACECHECK || __GL_CONFINE
    // The kernel may write its fiber's stack below this frame only (`kernel_window`).
    f->bound = __gl::stack_pointer();
    __GL_RC(__gl::rc_now.fiber_len = f->bound - (uintptr_t)f->stack;)
#endif
    __gl::tramp(__gl::args);
    f->state = __gl::DONE;
    __gl_switch(&f->sp, __gl::sched_sp);
    __builtin_unreachable();
}

namespace __gl {
__GL_RT static inline void barrier(int line) {
    current->barrier_line = line;
    current->barrier_count++;
    yield(BLOCK_WAIT);
}
}  // namespace __gl
// A macro, so each barrier knows its line in the student's source (`#line` keeps them).
#define __syncthreads() __gl::barrier(__LINE__)
__GL_RT static inline void __syncwarp(unsigned m = 0xffffffffu, int line = __builtin_LINE()) {
    __gl::warp_arrive(__gl::OP_SYNCWARP, m, line);
}
__GL_RT static inline int __gl_block_reduce(int pred, int op) {
    __shared__ int acc;
    if (__gl::linear_tid() == 0) acc = op == 2 ? 1 : 0;
    __syncthreads();
    if (op == 0) acc += pred != 0;
    else if (op == 1) acc |= pred != 0;
    else acc &= pred != 0;
    __syncthreads();
    int r = acc;
    __syncthreads();
    return r;
}
static inline int __syncthreads_count(int p) { return __gl_block_reduce(p, 0); }
static inline int __syncthreads_or(int p) { return __gl_block_reduce(p, 1); }
static inline int __syncthreads_and(int p) { return __gl_block_reduce(p, 2); }

namespace __gl {
template <class T>
__GL_RT static inline T exchange(T v, int src_lane, bool take, unsigned op, unsigned m, int line) {
    static_assert(sizeof(T) <= 8, "warp shuffles of types larger than 8 bytes are not supported");
    unsigned lin = linear_tid(), w = lin >> 5, lane = lin & 31;
    unsigned long long bits = 0;
    memcpy(&bits, &v, sizeof(T));
    warp_slots[w][lane] = bits;
    warp_arrive(op, m, line);
    T r = v;
    if (take) memcpy(&r, &warp_slots[w][src_lane & 31], sizeof(T));
    warp_leave();
    return r;
}
__GL_RT static inline unsigned warp_vote(int pred, unsigned op, unsigned m, int line) {
    unsigned lin = linear_tid(), w = lin >> 5, lane = lin & 31;
    warp_slots[w][lane] = pred != 0;
    unsigned present = warp_arrive(op, m, line);
    unsigned n = blockDim.x * blockDim.y * blockDim.z;
    unsigned r = 0;
    for (unsigned l = 0; l < 32 && w * 32 + l < n; l++)
        if (warp_slots[w][l]) r |= 1u << l;
    warp_leave();
    // Only the lanes named in the mask and present vote (the others' slots are stale).
    return r & m & present;
}
}  // namespace __gl

// Each warp operation takes the caller's line (`__builtin_LINE()`, which `#line` maps to the
// student's source) for synccheck's report.
template <class T>
static inline T __shfl_sync(unsigned m, T v, int src, int width = 32, int line = __builtin_LINE()) {
    int lane = (int)(__gl::linear_tid() & 31);
    int base = lane & ~(width - 1);
    return __gl::exchange(v, base + (src & (width - 1)), true, __gl::OP_SHFL, m, line);
}
template <class T>
static inline T __shfl_down_sync(unsigned m, T v, unsigned delta, int width = 32,
                                 int line = __builtin_LINE()) {
    int lane = (int)(__gl::linear_tid() & 31);
    int seg = lane & (width - 1);
    return __gl::exchange(v, lane + (int)delta, seg + (int)delta < width, __gl::OP_SHFL_DOWN, m, line);
}
template <class T>
static inline T __shfl_up_sync(unsigned m, T v, unsigned delta, int width = 32,
                               int line = __builtin_LINE()) {
    int lane = (int)(__gl::linear_tid() & 31);
    int seg = lane & (width - 1);
    return __gl::exchange(v, lane - (int)delta, seg - (int)delta >= 0, __gl::OP_SHFL_UP, m, line);
}
template <class T>
static inline T __shfl_xor_sync(unsigned m, T v, int mask, int width = 32, int line = __builtin_LINE()) {
    int lane = (int)(__gl::linear_tid() & 31);
    int src = lane ^ mask;
    return __gl::exchange(v, src, (src & ~(width - 1)) == (lane & ~(width - 1)), __gl::OP_SHFL_XOR, m,
                          line);
}
static inline unsigned __ballot_sync(unsigned m, int pred, int line = __builtin_LINE()) {
    return __gl::warp_vote(pred, __gl::OP_BALLOT, m, line);
}
static inline int __any_sync(unsigned m, int pred, int line = __builtin_LINE()) {
    return __gl::warp_vote(pred, __gl::OP_ANY, m, line) != 0;
}
static inline int __all_sync(unsigned m, int pred, int line = __builtin_LINE()) {
    return __gl::warp_vote(!pred, __gl::OP_ALL, m, line) == 0;
}
// The lanes of the warp that reached this call with this one (a warp operation here, so that
// the scheduler sees who came; it names no other lane, so it is never reported).
static inline unsigned __activemask(int line = __builtin_LINE()) {
    return __gl::warp_arrive(__gl::OP_ACTIVEMASK, 0, line);
}
#else
static inline unsigned __activemask() { return 0xffffffffu; }
#endif  // __GL_USE_FIBERS

__GL_RT static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
__GL_RT static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
__GL_RT static inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __nanosleep(unsigned) {}
static inline long long clock64() {
#if defined(__x86_64__)
    return (long long)__builtin_ia32_rdtsc();
#else
    return 0;
#endif
}

// ---------------------------------------------------------------- race check
// Checked runs (`__GL_RACECHECK`): the kernel is compiled with -fsanitize=thread, so the
// compiler calls a hook before each load and store through memory other threads could see;
// the hooks below (no sanitizer runtime) keep a shadow cell per 4-byte word: the last writer
// and a reader, each with its block, thread, barrier interval (how many __syncthreads() the
// thread had passed) and warp interval (how many warp-wide operations). Two accesses race
// when one writes, neither is atomic, they come from different threads, and nothing orders
// them: different blocks (global memory), or the same block in the same barrier interval,
// and for threads of one warp, the same warp interval too. Shared memory is per block, so a
// cell last touched by another block starts afresh there.
#if __GL_RACECHECK
namespace __gl {
namespace rc {
struct Cell {
    uint32_t gen, wblock, rblock, wpc, rpc, rmwpc;
    uint32_t wepoch, wwarp, repoch, rwarp;
    uint16_t wthread, rthread;
    uint8_t wmask, rmask, flags;
    uint8_t logged;  // global memory: the bytes of the word already in the undo log
};
enum { W = 1, R = 2, WATOM = 4, RATOM = 8, WVOL = 16, RVOL = 32, RMW = 64 };
static const unsigned REGION_BITS = 16;  // 64 KiB of memory per shadow chunk
static const unsigned SLOTS = 1u << 16;
struct Slot {
    uintptr_t region;
    Cell* cells;
};
static Slot* table;
static const unsigned CACHED = 64;  // recently used chunks, direct-mapped by region
static uintptr_t cached_region[CACHED];
static Cell* cached_cells[CACHED];
static uint32_t gen;
static bool off;  // the shadow could not grow: no more checks in this launch
static int busy;
// Device memory seen by this launch: spans of allocations the emulator confirmed (reset at
// each launch, since allocations come and go between launches).
static const unsigned SPANS = 8;
static uintptr_t span_lo[SPANS], span_hi[SPANS];
static unsigned span_n, span_next;
// The launch (touch_id) that last told the emulator it reads / writes each span.
static uint64_t span_rid[SPANS], span_wid[SPANS];
// The built-in variables of the worker thread (threadIdx...): thread-locals the kernel reads.
static uintptr_t builtin_at[4];
struct Me {
    uint32_t block, epoch, warp;
    uint16_t thread;
};
__GL_RT static Cell* cells_for(uintptr_t a) {
    uintptr_t region = a >> REGION_BITS;
    unsigned slot = (unsigned)region & (CACHED - 1);
    if (cached_cells[slot] && cached_region[slot] == region) return cached_cells[slot];
    if (!table) {
        table = (Slot*)rc_now.launch->alloc_stack(sizeof(Slot) * SLOTS);
        if (!table) return nullptr;
    }
    unsigned h = (unsigned)((region * 0x9E3779B97F4A7C15ull) >> 40) & (SLOTS - 1);
    for (unsigned i = 0; i < SLOTS / 2; i++, h = (h + 1) & (SLOTS - 1)) {
        Slot* s = &table[h];
        if (!s->cells) {
            Cell* c = (Cell*)rc_now.launch->alloc_stack(sizeof(Cell) << (REGION_BITS - 2));
            if (!c) return nullptr;
            s->region = region;
            s->cells = c;
        } else if (s->region != region) {
            continue;
        }
        cached_region[slot] = region;
        cached_cells[slot] = s->cells;
        return s->cells;
    }
    return nullptr;
}
// The undo log: the bytes of global memory as they were before the launch first wrote them
// (`Launch::undo`), kept a batch at a time, so that the emulator can put memory back and run
// the launch again in the other order (`exec::reorder`).
struct UndoWord {
    uint64_t addr;  // a 4-byte word
    uint32_t old;   // its bytes before the launch wrote them (those of `mask`)
    uint32_t mask;  // which of its 4 bytes
};
static const unsigned UNDO_BATCH = 512;
static UndoWord undo_buf[UNDO_BATCH];
static unsigned undo_n;
__GL_RT static void undo_flush() {
    Launch* L = rc_now.launch;
    if (undo_n && L->undo) L->undo(L->undo_ctx, undo_buf, undo_n);
    undo_n = 0;
}
__GL_RT static inline void undo_note(uintptr_t w, uint8_t bytes) {
    const unsigned char* p = (const unsigned char*)w;
    uint32_t old = 0;
    for (unsigned j = 0; j < 4; j++)
        if ((bytes >> j) & 1) old |= (uint32_t)p[j] << (8 * j);
    undo_buf[undo_n++] = UndoWord{(uint64_t)w, old, bytes};
    if (undo_n == UNDO_BATCH) undo_flush();
}
// A heap block freed: its words start afresh, so that a block handed out again at the same
// address does not race with what was done to the one before.
__GL_RT static void forget(uintptr_t a, uint64_t n) {
    rc_now.launch->undo_lost = 1;  // its words' undo entries are gone with their cells
    for (uintptr_t w = a & ~(uintptr_t)3; w < a + n; w += 4) {
        Cell* cs = cells_for(w);
        if (!cs) return;
        cs[(w >> 2) & ((1u << (REGION_BITS - 2)) - 1)] = Cell{};
    }
}
__GL_RT static inline bool concurrent(uint32_t b, uint16_t t, uint32_t e, uint32_t w, const Me& m) {
    if (b != m.block) return true;  // blocks never wait for each other within a launch
    if (t == m.thread || e != m.epoch) return false;
    return (t >> 5) != (m.thread >> 5) || w == m.warp;
}
// The first race, when the later thread read an element another thread had updated in place:
// what that later thread writes next tells an update of the same element (a missing atomic)
// from an in-place step over neighbours (a scan that needs two buffers).
struct Pending {
    bool on;
    uint32_t block, epoch;
    uint16_t thread;
    uintptr_t addr;
};
static Pending pending;
// A racing write, held until its store is done: the hook runs before the store, so whether
// the store changed anything is known only at the next hook (of any thread: checked blocks
// run on one OS thread), at the next block, or at the launch's end. A write that left every
// byte as it was races harmlessly (the same value, whichever thread is first); any other is
// the race it looked like.
struct Deferred {
    bool on;
    bool other_wrote, vol;
    int shared;
    unsigned size;
    uint32_t pc;
    uintptr_t addr;
    Cell cell;  // the shadow before this write, as `found` reads it
    Me me;
    unsigned char before[16];
};
static Deferred deferred;
__GL_RT static void found(const Cell* c, bool other_wrote, const Me& m, uintptr_t a, unsigned size,
                          bool write, bool vol, uint32_t pc, int shared);
__GL_RT static void settle() {
    if (!deferred.on) return;
    deferred.on = false;
    // After barriers diverged, the launch's accesses say nothing (the barrier is the report).
    if (barriers_diverged) return;
    const Deferred& d = deferred;
    if (raw_same((const void*)d.addr, d.before, d.size)) {
        rc_now.launch->same_value_writes++;
        return;
    }
    found(&d.cell, d.other_wrote, d.me, d.addr, d.size, true, d.vol, d.pc, d.shared);
}
__GL_RT static void found(const Cell* c, bool other_wrote, const Me& m, uintptr_t a, unsigned size,
                          bool write, bool vol, uint32_t pc, int shared) {
    Launch* L = rc_now.launch;
    if (write && other_wrote) L->race_ww++;
    if (L->race_count++) return;
    if (other_wrote && !write && (c->flags & RMW)) pending = Pending{true, m.block, m.epoch, m.thread, a};
    // Static shared memory: relative to the module's thread-local block, so that the report
    // can name the array (its symbol's value is that offset).
    L->race_addr = shared == 1 ? a - rc_now.tls_lo : a;
    L->race_size = size;
    L->race_block[0] = other_wrote ? c->wblock : c->rblock;
    L->race_thread[0] = other_wrote ? c->wthread : c->rthread;
    L->race_pc[0] = other_wrote ? c->wpc : c->rpc;
    L->race_write[0] = other_wrote;
    L->race_volatile[0] = (c->flags & (other_wrote ? WVOL : RVOL)) != 0;
    L->race_block[1] = m.block;
    L->race_thread[1] = m.thread;
    L->race_pc[1] = pc;
    L->race_write[1] = write;
    L->race_volatile[1] = vol;
    L->race_shared = (uint8_t)shared;
    L->race_rmw = other_wrote && (c->flags & RMW);
    L->race_rmw_pc = c->rmwpc;
}
// A read (or atomic update) of shared memory no thread of the block had written: shared memory
// starts undefined in every block (compute-sanitizer's initcheck).
__GL_RT static void uninit(uintptr_t a, unsigned size, int shared, const Me& m, uint32_t pc) {
    Launch* L = rc_now.launch;
    if (L->uninit_count++) return;
    L->uninit_addr = shared == 1 ? a - rc_now.tls_lo : a - rc_now.dyn_lo;
    L->uninit_size = size;
    L->uninit_block = m.block;
    L->uninit_thread = m.thread;
    L->uninit_pc = pc;
    L->uninit_shared = (uint32_t)shared;
}
// A global access must fall in device memory: a live allocation of the emulator (cuMemAlloc
// and friends, managed memory) or a __device__/__constant__ variable; not the host's memory
// (its heap, its stack, page-locked host buffers), which a kernel on a GPU cannot read in
// graded runs. Else the launch stops and the emulator reports the access. Addresses near zero
// are left to fault as null pointers; guard pages fault as out of bounds.
__GL_RT static void touched(unsigned i, bool write) {
    Launch* L = rc_now.launch;
    uint64_t* seen = write ? span_wid : span_rid;
    if (seen[i] == L->touch_id) return;
    seen[i] = L->touch_id;
    L->touch(L->touch_ctx, (uint64_t)span_lo[i], write ? 1u : 0u);
}
__GL_RT static void confine(uintptr_t a, unsigned size, bool write) {
    uintptr_t end = a + size;
    for (unsigned i = 0; i < span_n; i++)
        if (a >= span_lo[i] && end <= span_hi[i]) {
            touched(i, write);
            return;
        }
    for (unsigned i = 0; i < 4; i++)
        if (a >= builtin_at[i] && end <= builtin_at[i] + sizeof(uint3)) return;
    if (a < 65536) return;
    Launch* L = rc_now.launch;
    uint64_t span[2] = {0, 0};
    if (L->device_span(a, span) && a >= span[0] && end <= span[1]) {
        unsigned i = span_n < SPANS ? span_n++ : (span_next++ % SPANS);
        span_lo[i] = (uintptr_t)span[0];
        span_hi[i] = (uintptr_t)span[1];
        span_rid[i] = span_wid[i] = 0;
        touched(i, write);
        return;
    }
    L->host_addr = a;
    L->host_size = size;
    L->host_write = write ? 1u : 0u;
    stop(FAULT_HOST);
}
__GL_RT static void access(const void* p, unsigned size, bool write, bool vol, bool atom, uintptr_t ret) {
    settle();
    const RcNow& now = rc_now;
    uintptr_t a = (uintptr_t)p;
    // The worker's stack below the runtime's frames: a thread's own locals.
    if (a - now.stack_lo < now.stack_len && size <= now.stack_len - (a - now.stack_lo)) return;
#if __GL_USE_FIBERS
    // The running fiber's stack, below `__gl_fiber_main`'s frame.
    if (a - now.fiber_lo < now.fiber_len && size <= now.fiber_len - (a - now.fiber_lo)) return;
#endif
    // The built-in variables (threadIdx...) are thread-locals too, but no shared memory.
    for (unsigned i = 0; i < 4; i++)
        if (a - builtin_at[i] < sizeof(uint3)) return;
    int shared = a - now.tls_lo < now.tls_len ? 1 : (a - now.dyn_lo < now.dyn_len ? 2 : 0);
    if (shared == 1 && a < now.tls_wlo) {
        // The prelude's own thread-locals (.tdata): read, never written by a kernel.
        if (!write) return;
        shared = 0;
    }
    if (!write) {
        Launch* L = now.launch;
        L->loaded_bytes += size;
        if (L->load_budget && L->loaded_bytes > L->load_budget) {
            snprintf(L->message, sizeof L->message, "run in the other order, it read far more than it had");
            stop(FAULT_TRAP);
        }
    }
    if (!shared) confine(a, size, write);
    if (off || barriers_diverged) return;
    Me m;
    m.block = now.block;
    m.thread = (uint16_t)now.thread;
    m.epoch = now.epoch;
    m.warp = now.warp;
    uint32_t pc = (uint32_t)(ret - 1 - (uintptr_t)__ehdr_start);
    if (write && pending.on && pending.block == m.block && pending.thread == m.thread &&
        pending.epoch == m.epoch) {
        now.launch->race_next = pending.addr - a < size ? 1 : 2;
        pending.on = false;
    }
    bool unwritten = false;
    for (uintptr_t w = a & ~(uintptr_t)3; w < a + size; w += 4) {
        unsigned lo = a > w ? (unsigned)(a - w) : 0u;
        unsigned hi = a + size - w < 4 ? (unsigned)(a + size - w) : 4u;
        uint8_t mask = (uint8_t)(((1u << hi) - 1) & ~((1u << lo) - 1));
        Cell* cs = cells_for(w);
        if (!cs) {
            off = true;
            now.launch->undo_lost = 1;
            return;
        }
        Cell* c = &cs[(w >> 2) & ((1u << (REGION_BITS - 2)) - 1)];
        if (c->gen != gen ||
            (shared && (((c->flags & W) && c->wblock != m.block) || ((c->flags & R) && c->rblock != m.block)))) {
            *c = Cell{};
            c->gen = gen;
        }
        if (write && !shared) {
            uint8_t fresh = (uint8_t)(mask & ~c->logged);
            if (fresh) {
                undo_note(w, fresh);
                c->logged |= fresh;
            }
        }
        if (shared && (!write || atom) && !(c->flags & W)) unwritten = true;
        bool wconc = (c->flags & W) && (c->wmask & mask) && !atom && !(c->flags & WATOM) &&
                     concurrent(c->wblock, c->wthread, c->wepoch, c->wwarp, m);
        bool rconc = (c->flags & R) && concurrent(c->rblock, c->rthread, c->repoch, c->rwarp, m);
        bool raced = wconc || (write && rconc && (c->rmask & mask) && !atom && !(c->flags & RATOM));
        if (raced && write && !atom && size <= sizeof deferred.before && !deferred.on) {
            // Decided once the store is done (see `Deferred`).
            deferred = Deferred{true, wconc, vol, shared, size, pc, a, *c, m, {}};
            raw_copy(deferred.before, (const void*)a, size);
        } else if (raced && !(write && deferred.on && deferred.addr == a)) {
            found(c, wconc, m, a, size, write, vol, pc, shared);
        }
        if (write) {
            bool rmw = (c->flags & R) && c->rblock == m.block && c->rthread == m.thread && c->repoch == m.epoch;
            c->flags = (uint8_t)((c->flags & (R | RATOM | RVOL)) | W | (atom ? WATOM : 0) | (vol ? WVOL : 0) |
                                 (rmw ? RMW : 0));
            c->wblock = m.block;
            c->wthread = m.thread;
            c->wepoch = m.epoch;
            c->wwarp = m.warp;
            c->wmask = mask;
            c->wpc = pc;
            c->rmwpc = rmw ? c->rpc : 0;
        } else if (!rconc) {
            c->flags = (uint8_t)((c->flags & ~(RATOM | RVOL)) | R | (atom ? RATOM : 0) | (vol ? RVOL : 0));
            c->rblock = m.block;
            c->rthread = m.thread;
            c->repoch = m.epoch;
            c->rwarp = m.warp;
            c->rmask = mask;
            c->rpc = pc;
        }
    }
    if (unwritten) uninit(a, size, shared, m, pc);
}
__GL_RT static inline void begin_launch() {
    int expected = 0;
    while (!__atomic_compare_exchange_n(&busy, &expected, 1, true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) expected = 0;
    gen++;
    off = false;
    Launch* L = launch;
    rc_now.launch = L;
    // None of the worker's stack is the kernel's until the block runner opens its window
    // (`kernel_window`).
    rc_now.stack_lo = L->stack_lo;
    rc_now.stack_len = 0;
    rc_now.dyn_lo = (uintptr_t)dyn_smem_buf;
    rc_now.dyn_len = L->dyn_smem;
    rc_now.fiber_lo = 0;
    rc_now.fiber_len = 0;
    TlsBlock tls = tls_block(L);
    rc_now.tls_lo = tls.lo;
    rc_now.tls_len = tls.len;
    rc_now.tls_wlo = tls.wlo;
    barriers_diverged = false;
    pending.on = false;
    undo_n = 0;
    span_n = 0;
    span_next = 0;
    builtin_at[0] = (uintptr_t)&threadIdx;
    builtin_at[1] = (uintptr_t)&blockIdx;
    builtin_at[2] = (uintptr_t)&blockDim;
    builtin_at[3] = (uintptr_t)&gridDim;
}
__GL_RT static inline void end_launch() {
    settle();
    undo_flush();
    __atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
}
}  // namespace rc
}  // namespace __gl
namespace __gl {
// What every instrumented access does in a checked build (`__GL_TSAN_HOOKS` below).
__GL_RT static inline void hook(const void* p, unsigned long n, bool write, bool vol, uintptr_t ret) {
    rc::access(p, (unsigned)n, write, vol, false, ret);
}
}  // namespace __gl
extern "C" __GL_VIS const uint32_t __gl_racecheck = 1;
#define __GL_ANOTE(p) ::__gl::rc::access((p), sizeof(*(p)), true, false, true, (uintptr_t)__builtin_return_address(0))
#elif __GL_CONFINE
namespace __gl {
namespace cf {
__GL_RT static void check(const void* p, size_t size, bool write);
}  // namespace cf
}  // namespace __gl
#define __GL_ANOTE(p) ::__gl::cf::check((p), sizeof(*(p)), true)
#else
#define __GL_ANOTE(p) ((void)0)
#endif

// ---------------------------------------------------------------- atomics
#define __GL_ATOMIC_INT(T)                                                                               \
    __GL_RT static inline T atomicAdd(T* p, T v) { __GL_ANOTE(p); return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }          \
    __GL_RT static inline T atomicSub(T* p, T v) { __GL_ANOTE(p); return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }          \
    __GL_RT static inline T atomicExch(T* p, T v) { __GL_ANOTE(p); return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }        \
    __GL_RT static inline T atomicAnd(T* p, T v) { __GL_ANOTE(p); return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }          \
    __GL_RT static inline T atomicOr(T* p, T v) { __GL_ANOTE(p); return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }            \
    __GL_RT static inline T atomicXor(T* p, T v) { __GL_ANOTE(p); return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }          \
    __GL_RT static inline T atomicCAS(T* p, T cmp, T v) { __GL_ANOTE(p);                                                        \
        __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);              \
        return cmp;                                                                                      \
    }                                                                                                    \
    __GL_RT static inline T atomicMax(T* p, T v) { __GL_ANOTE(p);                                                               \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                                    \
        while (old < v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {} \
        return old;                                                                                      \
    }                                                                                                    \
    __GL_RT static inline T atomicMin(T* p, T v) { __GL_ANOTE(p);                                                               \
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                                    \
        while (old > v && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {} \
        return old;                                                                                      \
    }
__GL_ATOMIC_INT(int)
__GL_ATOMIC_INT(unsigned int)
__GL_ATOMIC_INT(long long)
__GL_ATOMIC_INT(unsigned long long)
#undef __GL_ATOMIC_INT
#define __GL_ATOMIC_FLOAT(T)                                                                             \
    __GL_RT static inline T atomicAdd(T* p, T v) { __GL_ANOTE(p);                                                               \
        T old;                                                                                           \
        __atomic_load(p, &old, __ATOMIC_RELAXED);                                                        \
        T sum;                                                                                           \
        do { sum = old + v; } while (!__atomic_compare_exchange(p, &old, &sum, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)); \
        return old;                                                                                      \
    }                                                                                                    \
    __GL_RT static inline T atomicExch(T* p, T v) { __GL_ANOTE(p);                                                              \
        T old;                                                                                           \
        __atomic_exchange(p, &v, &old, __ATOMIC_RELAXED);                                                \
        return old;                                                                                      \
    }
__GL_ATOMIC_FLOAT(float)
__GL_ATOMIC_FLOAT(double)
#undef __GL_ATOMIC_FLOAT
// 16-bit compare-and-swap (compute capability 7.0 and up): the reduced-precision atomics of
// cuda_fp16.h are built on it.
__GL_RT static inline unsigned short atomicCAS(unsigned short* p, unsigned short cmp, unsigned short v) { __GL_ANOTE(p);
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return cmp;
}
__GL_RT static inline unsigned atomicInc(unsigned* p, unsigned lim) { __GL_ANOTE(p);
    unsigned old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &old, old >= lim ? 0u : old + 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    return old;
}
__GL_RT static inline unsigned atomicDec(unsigned* p, unsigned lim) { __GL_ANOTE(p);
    unsigned old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &old, (old == 0 || old > lim) ? lim : old - 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    return old;
}

// ---------------------------------------------------------------- math and intrinsics
// CUDA declares the classification functions at global scope, as C does (<cmath> only in std).
using std::isfinite;
using std::isinf;
using std::isnan;
using std::signbit;
template <class A, class B>
static inline typename std::common_type<A, B>::type min(A a, B b) { return b < a ? b : a; }
template <class A, class B>
static inline typename std::common_type<A, B>::type max(A a, B b) { return a < b ? b : a; }
// glibc declares (but does not export) __expf, __logf, ...: rename ours.
#define __expf __gl_expf
#define __exp10f __gl_exp10f
#define __logf __gl_logf
#define __log2f __gl_log2f
#define __log10f __gl_log10f
#define __sinf __gl_sinf
#define __cosf __gl_cosf
#define __tanf __gl_tanf
#define __sincosf __gl_sincosf
#define __powf __gl_powf
static inline float __gl_expf(float x) { return expf(x); }
static inline float __gl_exp10f(float x) { return powf(10.0f, x); }
static inline float __gl_logf(float x) { return logf(x); }
static inline float __gl_log2f(float x) { return log2f(x); }
static inline float __gl_log10f(float x) { return log10f(x); }
static inline float __gl_sinf(float x) { return sinf(x); }
static inline float __gl_cosf(float x) { return cosf(x); }
static inline float __gl_tanf(float x) { return tanf(x); }
static inline void __gl_sincosf(float x, float* s, float* c) { *s = sinf(x); *c = cosf(x); }
static inline float __gl_powf(float a, float b) { return powf(a, b); }
static inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned umax(unsigned a, unsigned b) { return a < b ? b : a; }
static inline float __fdividef(float a, float b) { return a / b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __frcp_rn(float a) { return 1.0f / a; }
static inline float __fsqrt_rn(float a) { return sqrtf(a); }
static inline float __frsqrt_rn(float a) { return 1.0f / sqrtf(a); }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
static inline float saturate(float x) { return __saturatef(x); }
static inline float normcdff(float x) { return 0.5f * erfcf(-x * 0.70710678f); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * 0.70710678118654752); }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
static inline long long __double_as_longlong(double d) { long long i; memcpy(&i, &d, 8); return i; }
static inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }
static inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __float2int_rd(float x) { return (int)floorf(x); }
static inline int __float2int_ru(float x) { return (int)ceilf(x); }
static inline unsigned __float2uint_rn(float x) { return (unsigned)nearbyintf(x); }
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned x) { return (float)x; }
static inline int __double2int_rn(double x) { return (int)nearbyint(x); }
static inline float __double2float_rn(double x) { return (float)x; }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
static inline int __mul24(int a, int b) { return a * b; }
static inline unsigned __umul24(unsigned a, unsigned b) { return a * b; }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
template <class T>
static inline T __ldg(const T* p) { return *p; }
template <class T>
static inline T __ldcs(const T* p) { return *p; }
template <class T>
static inline void __stcs(T* p, T v) { __GL_ANOTE(p); *p = v; }
// The other cache hints of loads and stores: hints only, the same access.
template <class T>
static inline T __ldcg(const T* p) { return *p; }
template <class T>
static inline T __ldca(const T* p) { return *p; }
template <class T>
static inline T __ldlu(const T* p) { return *p; }
template <class T>
static inline T __ldcv(const T* p) { return *p; }
template <class T>
static inline void __stcg(T* p, T v) { __GL_ANOTE(p); *p = v; }
template <class T>
static inline void __stwb(T* p, T v) { __GL_ANOTE(p); *p = v; }
template <class T>
static inline void __stwt(T* p, T v) { __GL_ANOTE(p); *p = v; }

// ---------------------------------------------------------------- barrier regions as loops
#if __GL_USE_CORO
namespace __gl {
// Coroutine frames: one bump arena per worker thread, reset per block. Every thread of a
// block runs the same kernel, so the first frame's size tells how much the block needs.
static thread_local char* arena;
static thread_local size_t arena_cap, arena_top;
static thread_local unsigned arena_threads;
// What a barrier kernel returns: its thread, suspended before its first line. Its promise,
// like a waiting device function's, holds the thread's record, so that the waits reach it
// without a thread-local's lookup.
struct Task {
    struct promise_type {
        Fiber* fiber;
        __GL_RT static void* operator new(size_t n) {
            size_t size = (n + 63) & ~(size_t)63;
            if (arena_top == 0 && arena_cap < size * arena_threads) {
                __libc_free(arena);
                arena = (char*)aligned_alloc(64, size * arena_threads);
                arena_cap = arena ? size * arena_threads : 0;
            }
            if (arena_top + size > arena_cap) {
                snprintf(launch->message, sizeof(launch->message),
                         "out of memory for the frames of %u threads", arena_threads);
                stop(FAULT_TRAP);
            }
            void* p = arena + arena_top;
            arena_top += size;
            return p;
        }
        __GL_RT static void operator delete(void*) {}
        __GL_RT Task get_return_object() {
            fiber = current;
            return Task{std::coroutine_handle<promise_type>::from_promise(*this)};
        }
        std::suspend_always initial_suspend() noexcept { return {}; }
        struct Final {
            __GL_RT bool await_ready() const noexcept { return false; }
            __GL_RT void await_suspend(std::coroutine_handle<promise_type> h) const noexcept {
                h.promise().fiber->state = DONE;
            }
            __GL_RT void await_resume() const noexcept {}
        };
        Final final_suspend() noexcept { return {}; }
        void return_void() {}
        void unhandled_exception() {}
    };
    std::coroutine_handle<promise_type> h;
};

// The frames of device functions that wait (`Sub`): a free list per size (in cache lines,
// up to 64 of them) on each worker thread, since a thread's calls come and go in the order
// of its warp's rounds, not one stack's.
struct FreeFrame {
    FreeFrame* next;
};
static const unsigned FRAME_CLASSES = 64;
static thread_local FreeFrame* free_frames[FRAME_CLASSES + 1];
__GL_RT static void* frame_alloc(size_t n) {
    size_t c = (n + 63) / 64;
    if (c <= FRAME_CLASSES && free_frames[c]) {
        FreeFrame* f = free_frames[c];
        free_frames[c] = f->next;
        return f;
    }
    void* p = aligned_alloc(64, c * 64);
    if (!p) {
        snprintf(launch->message, sizeof(launch->message), "out of memory for a device function's frame");
        stop(FAULT_TRAP);
    }
    return p;
}
__GL_RT static void frame_free(void* p, size_t n) {
    size_t c = (n + 63) / 64;
    if (c > FRAME_CLASSES) return __libc_free(p);
    FreeFrame* f = (FreeFrame*)p;
    f->next = free_frames[c];
    free_frames[c] = f;
}
template <class T>
struct SubValue {
    T value{};
    template <class U>
    void return_value(U&& v) { value = static_cast<U&&>(v); }
    T take() { return static_cast<T&&>(value); }
};
template <>
struct SubValue<void> {
    void return_void() {}
    void take() {}
};
// What a device function that waits returns (its `T` made `Sub<T>` by the rewrite, each call
// of it a `co_await`). It starts when its caller awaits it (not when it is called: the
// compiler may evaluate the calls of one expression, `f(a) + f(b)`, before awaiting any),
// runs in the caller's place until it ends, and then hands its value and the thread back to
// the caller. Whichever coroutine of the thread stops at a wait makes itself the thread's
// `leaf`, what the block runner resumes.
template <class T>
struct Sub {
    struct promise_type : SubValue<T> {
        std::coroutine_handle<> parent;
        Fiber* fiber;
        __GL_RT static void* operator new(size_t n) { return frame_alloc(n); }
        __GL_RT static void operator delete(void* p, size_t n) { frame_free(p, n); }
        __GL_RT Sub get_return_object() { return Sub{std::coroutine_handle<promise_type>::from_promise(*this)}; }
        std::suspend_always initial_suspend() noexcept { return {}; }
        struct Final {
            __GL_RT bool await_ready() const noexcept { return false; }
            __GL_RT std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) const noexcept {
                return h.promise().parent;
            }
            __GL_RT void await_resume() const noexcept {}
        };
        Final final_suspend() noexcept { return {}; }
        void unhandled_exception() {}
    };
    std::coroutine_handle<promise_type> h;
    __GL_RT bool await_ready() const noexcept { return false; }
    template <class P>
    __GL_RT std::coroutine_handle<> await_suspend(std::coroutine_handle<P> caller) const noexcept {
        h.promise().parent = caller;
        h.promise().fiber = caller.promise().fiber;
        return h;
    }
    __GL_RT T await_resume() const {
        struct Done {
            std::coroutine_handle<promise_type> h;
            __GL_RT ~Done() { h.destroy(); }
        } done{h};
        return h.promise().take();
    }
};
// `__syncthreads()` in a coroutine: the thread stops here until the block runner has run
// every other thread of the block up to a barrier too.
struct Barrier {
    int line;
    __GL_RT bool await_ready() const noexcept { return false; }
    template <class P>
    __GL_RT void await_suspend(std::coroutine_handle<P> h) const noexcept {
        Fiber* f = h.promise().fiber;
        f->leaf = h.address();
        f->barrier_line = line;
        f->barrier_count++;
        f->state = BLOCK_WAIT;
    }
    __GL_RT void await_resume() const noexcept {}
};
// A warp-wide operation in a coroutine: the thread leaves its operands in its record (the
// value it gives, the lane it reads and whether it reads, as the fibers' `__shfl_*` compute
// them) and stops until the block runner has run every lane of its warp up to a warp
// operation too; the runner then computes each lane's result (`warp_results`) before any
// lane goes on, so one stop is enough (fibers stop twice: arriving, then reading the others'
// slots).
// The result is kept in the operation, not the thread's record: the compiler may call the
// `await_resume` of several operations of one expression only after all of them have
// waited (`__any_sync(m, a) + __all_sync(m, b)`), and each must still read its own.
struct WarpAwait {
    unsigned long long val;
    unsigned op, mask;
    int arg, width, line;
    unsigned long long res;
    __GL_RT bool await_ready() const noexcept { return false; }
    template <class P>
    __GL_RT void await_suspend(std::coroutine_handle<P> h) noexcept {
        Fiber* g = h.promise().fiber;
        g->leaf = h.address();
        int lane = (int)g->lane, src = lane;
        unsigned take = 0;
        int seg = lane & (width - 1);
        switch (op) {
            case OP_SHFL: src = (lane & ~(width - 1)) + (arg & (width - 1)); take = 1; break;
            case OP_SHFL_DOWN: src = lane + arg; take = seg + arg < width; break;
            case OP_SHFL_UP: src = lane - arg; take = seg - arg >= 0; break;
            case OP_SHFL_XOR:
                src = lane ^ arg;
                take = (src & ~(width - 1)) == (lane & ~(width - 1));
                break;
            default: break;
        }
        g->wval = val;
        g->wout = &res;
        g->wsrc = src;
        g->wtake = take;
        g->warp_op = op;
        g->warp_mask = mask;
        g->warp_line = line;
        g->state = WARP_WAIT;
    }
};
template <class T>
struct ShflAwait : WarpAwait {
    __GL_RT T await_resume() const noexcept {
        T r;
        __builtin_memcpy(&r, &res, sizeof(T));
        return r;
    }
};
// Votes and the rest: the result is a lane mask (`warp_results`).
struct VoteAwait : WarpAwait {
    __GL_RT unsigned await_resume() const noexcept {
        unsigned r = (unsigned)res;
        if (op == OP_ANY) return r != 0;
        if (op == OP_ALL) return r == 0;
        return r;
    }
};
// After a round of warp lanes lo..hi: who came to which operation (`warp_groups`, as for
// fibers), then each waiting lane's result: a shuffle's value from its source lane (its own
// when it reads none), a vote's lanes (those present and named in the mask), `__activemask`'s
// lanes present; then the waiting lanes run again.
__GL_RT static void warp_results(unsigned lo, unsigned hi) {
    warp_groups(lo, hi);
    for (unsigned t = lo; t < hi; t++) {
        Fiber* f = &fibers[t];
        if (f->state != WARP_WAIT) continue;
        switch (f->warp_op) {
            case OP_SHFL:
            case OP_SHFL_UP:
            case OP_SHFL_DOWN:
            case OP_SHFL_XOR: {
                unsigned src = lo + ((unsigned)f->wsrc & 31);
                *f->wout = f->wtake && src < hi ? fibers[src].wval : f->wval;
                break;
            }
            case OP_BALLOT:
            case OP_ANY:
            case OP_ALL: {
                unsigned r = 0;
                for (unsigned l = lo; l < hi; l++)
                    if (((f->present >> (l - lo)) & 1) && fibers[l].wval) r |= 1u << (l - lo);
                *f->wout = r & f->warp_mask;
                break;
            }
            case OP_ACTIVEMASK: *f->wout = f->present; break;
            default: break;
        }
    }
    for (unsigned t = lo; t < hi; t++)
        if (fibers[t].state == WARP_WAIT) fibers[t].state = RUNNING;
}
// `warp_results` when the lanes of `waiting` (a mask over lo..hi) all wait at one operation
// (a shuffle's lanes need no `present`: only votes read it).
__GL_RT static void one_group(unsigned lo, unsigned hi, unsigned waiting) {
    const Fiber* f0 = &fibers[lo + (unsigned)__builtin_ctz(waiting)];
    unsigned op = f0->warp_op;
    if (op == OP_SHFL || op == OP_SHFL_UP || op == OP_SHFL_DOWN || op == OP_SHFL_XOR) {
        for (unsigned t = lo; t < hi; t++) {
            Fiber* f = &fibers[t];
            if (!((waiting >> (t - lo)) & 1)) continue;
            unsigned src = lo + ((unsigned)f->wsrc & 31);
            *f->wout = f->wtake && src < hi ? fibers[src].wval : f->wval;
            f->state = RUNNING;
        }
        return;
    }
    unsigned votes = 0;
    for (unsigned t = lo; t < hi; t++)
        if (((waiting >> (t - lo)) & 1) && fibers[t].wval) votes |= 1u << (t - lo);
    for (unsigned t = lo; t < hi; t++) {
        Fiber* f = &fibers[t];
        if (!((waiting >> (t - lo)) & 1)) continue;
        f->present = waiting;
        *f->wout = op == OP_ACTIVEMASK ? waiting : votes & f->warp_mask;
        f->state = RUNNING;
    }
}
static thread_local std::coroutine_handle<> spawned;
// The trampoline of a barrier kernel hands its new thread over here.
__GL_RT static inline void spawn(Task t) { spawned = t.h; }
// Runs a block: each thread is created (suspended before its first line), then, warp by
// warp, every round resumes the warp's threads still running, in order, up to their next
// wait or their end; lanes waiting at a warp operation get their results and go on, until
// the warp's lanes all wait at a barrier or are done; then the next warp. The region between
// two waits is this loop over the threads. The barrier check is the fibers' (same states,
// same report).
__GL_RT static void run_block_coro() {
    unsigned nx = blockDim.x, ny = blockDim.y, nz = blockDim.z;
    unsigned n = nx * ny * nz;
    if (!ensure_threads(n)) {
        snprintf(launch->message, sizeof(launch->message), "out of memory for %u threads", n);
        stop(FAULT_TRAP);
    }
    arena_top = 0;
    arena_threads = n;
    unsigned i = 0;
    for (unsigned z = 0; z < nz; z++)
        for (unsigned y = 0; y < ny; y++)
            for (unsigned x = 0; x < nx; x++, i++) {
                Fiber* f = &fibers[i];
                f->tid = uint3{x, y, z};
                f->barrier_line = 0;
                f->barrier_count = 0;
                f->warp_count = 0;
                f->warp_line = 0;
                f->warp_phase = 0;
                f->present = 0;
                f->async_n = 0;
                f->lane = i & 31;
                current = f;
                threadIdx = f->tid;
                spawned = nullptr;
                tramp(args);
                f->top = f->leaf = spawned.address();
                f->state = spawned ? RUNNING : DONE;
            }
    unsigned warps = (n + 31) / 32;
    // The thread-locals the loop writes, found once (each lookup is a call in a module).
    Fiber* const fs = fibers;
    Fiber** const cur = &current;
    uint3* const tid = &threadIdx;
    for (;;) {
        for (unsigned w = 0; w < warps; w++) {
            unsigned lo = w * 32, hi = lo + 32 < n ? lo + 32 : n;
            for (;;) {
                // The lanes that stop at a warp operation, and whether they all stop at the
                // same one (the usual case: one group, no search).
                unsigned waiting = 0;
                bool one = true;
                const Fiber* first = nullptr;
                for (unsigned t = lo; t < hi; t++) {
                    Fiber* f = &fs[t];
                    if (f->state != RUNNING) continue;
                    *cur = f;
                    *tid = f->tid;
                    std::coroutine_handle<>::from_address(f->leaf).resume();
                    if (f->state != WARP_WAIT) continue;
                    waiting |= 1u << (t - lo);
                    if (!first) first = f;
                    else one = one && f->warp_line == first->warp_line && f->warp_op == first->warp_op;
                }
                if (!waiting) break;
                if (one) one_group(lo, hi, waiting);
                else warp_results(lo, hi);
            }
        }
        check_barrier(n);
        bool all_done = true;
        for (unsigned t = 0; t < n; t++)
            if (fibers[t].state == BLOCK_WAIT) {
                fibers[t].state = RUNNING;
                all_done = false;
            }
        if (all_done) break;
    }
    for (unsigned t = 0; t < n; t++)
        if (fibers[t].top) std::coroutine_handle<>::from_address(fibers[t].top).destroy();
}
}  // namespace __gl
// What the rewrite (`nvrtc/coroutine.rs`) writes in a kernel or device function that waits.
#define __gl_co_syncthreads() co_await ::__gl::Barrier{__LINE__}
#define __GL_TASK ::__gl::Task
#define __GL_SUB ::__gl::Sub
// The warp operations as the rewrite writes them in a coroutine (`co_await __gl_co_…`).
template <class T>
static inline ::__gl::ShflAwait<T> __gl_co_warp(T v, unsigned op, unsigned m, int arg, int width, int line) {
    static_assert(sizeof(T) <= 8, "warp shuffles of types larger than 8 bytes are not supported");
    unsigned long long bits = 0;
    __builtin_memcpy(&bits, &v, sizeof(T));
    return {{bits, op, m, arg, width, line, 0}};
}
template <class T>
static inline ::__gl::ShflAwait<T> __gl_co_shfl_sync(unsigned m, T v, int src, int width = 32,
                                                     int line = __builtin_LINE()) {
    return __gl_co_warp(v, __gl::OP_SHFL, m, src, width, line);
}
template <class T>
static inline ::__gl::ShflAwait<T> __gl_co_shfl_down_sync(unsigned m, T v, unsigned delta, int width = 32,
                                                          int line = __builtin_LINE()) {
    return __gl_co_warp(v, __gl::OP_SHFL_DOWN, m, (int)delta, width, line);
}
template <class T>
static inline ::__gl::ShflAwait<T> __gl_co_shfl_up_sync(unsigned m, T v, unsigned delta, int width = 32,
                                                        int line = __builtin_LINE()) {
    return __gl_co_warp(v, __gl::OP_SHFL_UP, m, (int)delta, width, line);
}
template <class T>
static inline ::__gl::ShflAwait<T> __gl_co_shfl_xor_sync(unsigned m, T v, int mask, int width = 32,
                                                         int line = __builtin_LINE()) {
    return __gl_co_warp(v, __gl::OP_SHFL_XOR, m, mask, width, line);
}
static inline ::__gl::VoteAwait __gl_co_ballot_sync(unsigned m, int pred, int line = __builtin_LINE()) {
    return {{pred != 0 ? 1ull : 0ull, __gl::OP_BALLOT, m, 0, 32, line, 0}};
}
static inline ::__gl::VoteAwait __gl_co_any_sync(unsigned m, int pred, int line = __builtin_LINE()) {
    return {{pred != 0 ? 1ull : 0ull, __gl::OP_ANY, m, 0, 32, line, 0}};
}
// `__all_sync` votes with the negation: all is true when no lane present says false.
static inline ::__gl::VoteAwait __gl_co_all_sync(unsigned m, int pred, int line = __builtin_LINE()) {
    return {{pred == 0 ? 1ull : 0ull, __gl::OP_ALL, m, 0, 32, line, 0}};
}
static inline ::__gl::VoteAwait __gl_co_activemask(int line = __builtin_LINE()) {
    return {{0ull, __gl::OP_ACTIVEMASK, 0u, 0, 32, line, 0}};
}
static inline ::__gl::VoteAwait __gl_co_syncwarp(unsigned m = 0xffffffffu, int line = __builtin_LINE()) {
    return {{0ull, __gl::OP_SYNCWARP, m, 0, 32, line, 0}};
}
#else
namespace __gl {
template <class T>
static inline void spawn(T&&) {}
}  // namespace __gl
#endif  // __GL_USE_CORO

// ---------------------------------------------------------------- block runner
namespace __gl {
__GL_RT static void run_block_loop() {
    unsigned nx = blockDim.x, ny = blockDim.y, nz = blockDim.z;
    void (*f)(void**) = tramp;
    void** a = args;
    current = nullptr;  // no fiber: an asynchronous copy is done at once
#if __GL_RACECHECK || __GL_CONFINE
    // The kernel's frames lie below this one's: it may write there only, and returns through
    // a shadow stack of its own, empty for each thread.
    kernel_window(stack_pointer());
    if (!worker_shadow) {
        char* shadow = (char*)launch->alloc_stack(SHADOW);
        if (!shadow) {
            snprintf(launch->message, sizeof(launch->message), "out of memory for a shadow stack");
            stop(FAULT_TRAP);
        }
        worker_shadow = (uint64_t*)(shadow + SHADOW);
    }
    uint64_t* shadow = worker_shadow;
#define __GL_SHADOW_RESET() (__gl_shadow_sp = shadow)
#else
#define __GL_SHADOW_RESET() ((void)0)
#endif
    if (launch->reverse) {  // last first (`Launch::reverse`)
        for (unsigned i = nx * ny * nz; i-- > 0;) {
            threadIdx = uint3{i % nx, (i / nx) % ny, i / (nx * ny)};
            __GL_RC(rc_now.thread = i;)
            __GL_SHADOW_RESET();
            f(a);
        }
        return;
    }
    for (unsigned z = 0; z < nz; z++)
        for (unsigned y = 0; y < ny; y++)
            for (unsigned x = 0; x < nx; x++) {
                threadIdx = uint3{x, y, z};
                __GL_RC(rc_now.thread = x + nx * (y + ny * z);)
                __GL_SHADOW_RESET();
                f(a);
            }
#undef __GL_SHADOW_RESET
}
}  // namespace __gl

// Runs blocks of a launch until none are left (or another worker faulted). Returns 0, or the
// kind of fault that stopped this worker (details in the Launch).
#if __GL_CONFINE
namespace __gl {
namespace cf {
__GL_RT static void begin_launch(Launch* L);
}  // namespace cf
}  // namespace __gl
#endif
extern "C" __GL_RT __GL_VIS int __gl_run_blocks(__gl::Launch* L) {
    using namespace __gl;
    launch = L;
    tramp = L->tramp;
    args = L->args;
    gridDim = uint3{L->grid[0], L->grid[1], L->grid[2]};
    blockDim = uint3{L->block[0], L->block[1], L->block[2]};
    if (L->dyn_smem > dyn_smem_cap) {
        __libc_free(dyn_smem_buf);
        dyn_smem_buf = (char*)aligned_alloc(64, (L->dyn_smem + 63) / 64 * 64);
        dyn_smem_cap = dyn_smem_buf ? L->dyn_smem : 0;
        if (!dyn_smem_buf) return FAULT_TRAP;
    }
    volatile uint64_t total = (uint64_t)L->grid[0] * L->grid[1] * L->grid[2];
#if __GL_RACECHECK
    rc::begin_launch();
#elif __GL_CONFINE
    cf::begin_launch(L);
#endif
    int kind = sigsetjmp(jump, 1);
    if (kind != 0) {
#if __GL_RACECHECK
        rc::end_launch();
#endif
        L->fault_block[0] = blockIdx.x;
        L->fault_block[1] = blockIdx.y;
        L->fault_block[2] = blockIdx.z;
        L->fault_thread[0] = threadIdx.x;
        L->fault_thread[1] = threadIdx.y;
        L->fault_thread[2] = threadIdx.z;
        L->fault_kind = kind;
        __atomic_store_n(L->abort, 1u, __ATOMIC_RELAXED);
        return kind;
    }
    for (;;) {
        if (__atomic_load_n(L->abort, __ATOMIC_RELAXED)) break;
        uint64_t b = __atomic_fetch_add(L->next_block, 1, __ATOMIC_RELAXED);
        if (b >= total) break;
        if (L->reverse) b = total - 1 - b;  // last first (`Launch::reverse`)
        uint64_t gx = L->grid[0], gy = L->grid[1];
        blockIdx = uint3{(unsigned)(b % gx), (unsigned)((b / gx) % gy), (unsigned)(b / (gx * gy))};
        __GL_RC(rc::settle(); rc_now.block = (uint32_t)b; rc_now.epoch = 0; rc_now.warp = 0; rc_now.fiber_lo = 0;
                rc_now.fiber_len = 0;)
        if (L->plain == 1) {
            run_block_loop();
            continue;
        }
#if __GL_USE_CORO
        if (L->plain == 2) {
            run_block_coro();
            continue;
        }
#endif
#if __GL_USE_FIBERS
        run_block_fibers();
#else
        run_block_loop();
#endif
    }
#if __GL_RACECHECK
    rc::end_launch();
#endif
    fflush(stdout);
    return 0;
}

// Called by the emulator's SIGSEGV handler on the faulting worker thread.
extern "C" __GL_RT __GL_VIS void __gl_fault_jump(int kind) { siglongjmp(__gl::jump, kind); }
extern "C" __GL_VIS const uint32_t __gl_module_abi = 14;

// ---------------------------------------------------------------- kernel descriptors
namespace __gl {
template <class T>
using arg_t = typename std::remove_cv<typename std::remove_reference<T>::type>::type;
// `R` is `void`, or `Task` for a barrier kernel made a coroutine (whose trampoline starts the
// thread and hands it to the block runner).
template <class R, class... A>
struct Sig {
    static constexpr uint32_t n = sizeof...(A);
    static constexpr uint32_t sizes[sizeof...(A) + 1] = {uint32_t(sizeof(arg_t<A>))..., 0u};
    static constexpr uint32_t aligns[sizeof...(A) + 1] = {uint32_t(alignof(arg_t<A>))..., 0u};
    // Not instrumented: the argument array is the emulator's, not memory of the kernel's
    // (a checked kernel F, with attributes of its own, is then not inlined here).
    template <R (*F)(A...), std::size_t... I>
    __GL_RT static inline __attribute__((always_inline)) R call(void** a, std::index_sequence<I...>) {
        return F(*static_cast<arg_t<A>*>(a[I])...);
    }
    template <R (*F)(A...)>
    __GL_TRAMP static void tramp(void** a) {
        if constexpr (std::is_void<R>::value)
            call<F>(a, std::index_sequence_for<A...>{});
        else
            spawn(call<F>(a, std::index_sequence_for<A...>{}));
    }
};
template <class R, class... A>
Sig<R, A...> sig_of(R (*)(A...));
// How a kernel's blocks run (`Launch::plain`): a kernel made a coroutine returns `Task` (2:
// `run_block_coro`, whatever the scan says, since only the runner starts its threads);
// any other one in a loop when the scan found that its code never synchronises (1), else as
// fibers (0).
template <class R, class... A>
constexpr uint32_t runner_of(R (*)(A...), unsigned plain) {
    return std::is_void<R>::value ? (plain ? 1u : 0u) : 2u;
}
}  // namespace __gl
#define __GL_KERNEL(NAME)                                                                  \
    extern "C" __GL_VIS const ::__gl::KernelDesc __gl_kernel_##NAME = {                    \
        #NAME, &decltype(::__gl::sig_of(&NAME))::template tramp<&NAME>,                    \
        decltype(::__gl::sig_of(&NAME))::n, decltype(::__gl::sig_of(&NAME))::sizes,        \
        decltype(::__gl::sig_of(&NAME))::aligns, __gl_smem_##NAME,                       \
        ::__gl::runner_of(&NAME, __gl_plain_##NAME), 0};
// A name expression's kernel (nvrtcAddNameExpression), a template instance maybe: its
// descriptor, and a word holding its address, from which NVRTC reads its lowered name.
#define __GL_KERNEL_EXPR(ID, ...)                                                          \
    static constexpr auto __gl_fnp_##ID = &(__VA_ARGS__);                                  \
    extern "C" __GL_VIS const ::__gl::KernelDesc __gl_kernel_##ID = {                      \
        #ID, &decltype(::__gl::sig_of(__gl_fnp_##ID))::template tramp<__gl_fnp_##ID>,      \
        decltype(::__gl::sig_of(__gl_fnp_##ID))::n, decltype(::__gl::sig_of(__gl_fnp_##ID))::sizes, \
        decltype(::__gl::sig_of(__gl_fnp_##ID))::aligns, __gl_smem_##ID, 0, 0};            \
    extern "C" __GL_VIS void* const __gl_exprfn_##ID = (void*)__gl_fnp_##ID;
#define __GL_GLOBAL(NAME) \
    extern "C" __GL_VIS const ::__gl::GlobalDesc __gl_global_##NAME = {(void*)&(NAME), sizeof(NAME)};
// The dynamic shared memory (what `extern __shared__` arrays are rewritten to).
#define __GL_DYN_SMEM() (::__gl::dyn_smem())

// ---------------------------------------------------------------- checked block copies
// Checked runs: the compiler does not instrument calls of memcpy and friends (nor copies it
// expands inline), so the kernel's spellings of them go through these, which check both
// ranges like any other access (device memory only, and races) before copying.
#if __GL_RACECHECK
namespace __gl {
namespace rc {
__GL_RT static inline void range(const void* p, size_t n, bool write, uintptr_t ret) {
    if (n) access(p, n > 0xffffffffu ? 0xffffffffu : (unsigned)n, write, false, false, ret);
}
}  // namespace rc
}  // namespace __gl
#elif __GL_CONFINE
// Confined runs (timed runs on the emulator): each access of the kernel must fall in device
// memory, the block's shared memory, or the GPU thread's own locals, as in checked runs, so
// that a kernel cannot read or write the host memory of the process it runs in (the grader's
// worker, whose report it could otherwise forge). No shadow and no race check: the blocks
// still run in parallel, each worker thread with its own copy of what it allows.
namespace __gl {
namespace cf {
static const unsigned SPANS = 8;
struct State {
    uintptr_t lo[SPANS], hi[SPANS];
    unsigned n, next;
    uintptr_t stack_lo, stack_len, tls_lo, tls_len, tls_wlo, dyn_lo, dyn_len;
    Launch* launch;
};
static thread_local State st = {};
__GL_RT static void begin_launch(Launch* L) {
    State& s = st;
    // None of the worker's stack is the kernel's until the block runner opens its window
    // (`kernel_window`).
    s.stack_lo = L->stack_lo;
    s.stack_len = 0;
    TlsBlock tls = tls_block(L);
    s.tls_lo = tls.lo;
    s.tls_len = tls.len;
    s.tls_wlo = tls.wlo;
    s.dyn_lo = (uintptr_t)dyn_smem_buf;
    s.dyn_len = (uintptr_t)L->dyn_smem;
    s.launch = L;
    s.n = 0;
    s.next = 0;
}
__GL_RT static void check(const void* p, size_t size, bool write) {
    State& s = st;
    uintptr_t a = (uintptr_t)p, end = a + size;
    // Device memory seen before (most accesses), then the thread's own locals and shared memory.
    for (unsigned i = 0; i < s.n; i++)
        if (a >= s.lo[i] && end <= s.hi[i]) return;
    // The worker thread's stack below the runtime's frames: a thread's locals.
    if (a - s.stack_lo < s.stack_len && size <= s.stack_len - (a - s.stack_lo)) return;
    // Static shared memory (.tbss); the prelude's own thread-locals and the built-in variables
    // (.tdata) are read, never written.
    if (a - s.tls_lo < s.tls_len && (!write || a >= s.tls_wlo)) return;
    if (a - s.dyn_lo < s.dyn_len) return;
#if __GL_USE_FIBERS && !__GL_USE_CORO
    // The running fiber's stack, below `__gl_fiber_main`'s frame.
    if (current && a - (uintptr_t)current->stack < current->bound - (uintptr_t)current->stack &&
        size <= current->bound - a)
        return;
#endif
#if __GL_USE_CORO
    if (a - (uintptr_t)arena < arena_cap) return;  // the coroutine frames of the block's threads
#endif
    if (a < 65536) return;  // left to fault as a null pointer
    Launch* L = s.launch;
    uint64_t span[2] = {0, 0};
    if (L->device_span(a, span) && a >= span[0] && end <= span[1]) {
        unsigned i = s.n < SPANS ? s.n++ : (s.next++ % SPANS);
        s.lo[i] = (uintptr_t)span[0];
        s.hi[i] = (uintptr_t)span[1];
        return;
    }
    L->host_addr = a;
    L->host_size = (uint32_t)(size > 0xffffffffu ? 0xffffffffu : size);
    L->host_write = write ? 1u : 0u;
    stop(FAULT_HOST);
}
}  // namespace cf
}  // namespace __gl
namespace __gl {
// What every instrumented access does in a confined build (`__GL_TSAN_HOOKS` below).
__GL_RT static inline void hook(const void* p, unsigned long n, bool write, bool, uintptr_t) {
    if (n) cf::check(p, n, write);
}
}  // namespace __gl
extern "C" __GL_VIS const uint32_t __gl_confined = 1;
namespace __gl {
namespace rc {
__GL_RT static inline void range(const void* p, size_t n, bool write, uintptr_t) {
    if (n) ::__gl::cf::check(p, n, write);
}
}  // namespace rc
}  // namespace __gl
#endif
#if __GL_RACECHECK || __GL_CONFINE
namespace __gl {
// Where on the worker thread's stack a kernel may write: below `sp`, a stack pointer of the
// runtime's function that calls it (0: nowhere, when its threads run on fibers).
__GL_RT static void kernel_window(uintptr_t sp) {
    Launch* L = launch;
    uintptr_t len = sp > L->stack_lo && sp <= L->stack_hi ? sp - L->stack_lo : 0;
#if __GL_RACECHECK
    rc_now.stack_len = len;
#else
    cf::st.stack_len = len;
#endif
}
}  // namespace __gl
#endif
#if __GL_RACECHECK || __GL_CONFINE
// The hooks the compiler calls before each load and store (no sanitizer runtime is linked):
// each hands the access, and where it was made, to the build's own `__gl::hook`.
#define __GL_TSAN_HOOK(NAME, N, WRITE, VOL)                                                    \
    extern "C" __attribute__((visibility("hidden"))) __GL_RT void NAME(void* p) {             \
        ::__gl::hook(p, N, WRITE, VOL, (uintptr_t)__builtin_return_address(0));              \
    }
#define __GL_TSAN_HOOKS(N)                                          \
    __GL_TSAN_HOOK(__tsan_read##N, N, false, false)                 \
    __GL_TSAN_HOOK(__tsan_write##N, N, true, false)                 \
    __GL_TSAN_HOOK(__tsan_unaligned_read##N, N, false, false)       \
    __GL_TSAN_HOOK(__tsan_unaligned_write##N, N, true, false)       \
    __GL_TSAN_HOOK(__tsan_volatile_read##N, N, false, true)         \
    __GL_TSAN_HOOK(__tsan_volatile_write##N, N, true, true)
__GL_TSAN_HOOKS(1)
__GL_TSAN_HOOKS(2)
__GL_TSAN_HOOKS(4)
__GL_TSAN_HOOKS(8)
__GL_TSAN_HOOKS(16)
#undef __GL_TSAN_HOOKS
#undef __GL_TSAN_HOOK
extern "C" __attribute__((visibility("hidden"))) __GL_RT void __tsan_read_range(void* p, unsigned long n) {
    ::__gl::hook(p, n, false, false, (uintptr_t)__builtin_return_address(0));
}
extern "C" __attribute__((visibility("hidden"))) __GL_RT void __tsan_write_range(void* p, unsigned long n) {
    ::__gl::hook(p, n, true, false, (uintptr_t)__builtin_return_address(0));
}
extern "C" __attribute__((visibility("hidden"))) __GL_RT void __tsan_init() {}
extern "C" __attribute__((visibility("hidden"))) __GL_RT void __tsan_func_entry(void*) {}
extern "C" __attribute__((visibility("hidden"))) __GL_RT void __tsan_func_exit() {}
#endif

// ---------------------------------------------------------------- device code's C library
// What CUDA device code may call from the C library: `malloc`/`free`, `new`/`delete` and
// `memcpy`/`memmove`/`memset`/`memcmp`. They are defined here, in the module, which is linked
// with -Bsymbolic: every call the module makes binds to these, however it is spelled
// (`std::memcpy`, a pointer to the function, a builtin, a name a source undefined, a copy the
// compiler inserts for a large struct), and never to the C library of the process the kernel
// runs in (the grader's worker). So:
// - a copy is confined like a load or a store (checked and confined builds check both ranges,
//   device memory only, and races);
// - the heap is device memory the emulator allocates (CUDA's cudaLimitMallocHeapSize): a
//   block outlives its launch until a kernel frees it, and `free` of anything the heap did not
//   hand out stops the launch (FAULT_FREE) instead of reaching the C library's `free`.
// The symbol check refuses a module that still needs any of them from the C library.
#if __GL_RACECHECK || __GL_CONFINE
#define __GL_RANGE(p, n, w) ::__gl::rc::range(p, n, w, (uintptr_t)__builtin_return_address(0))
#else
#define __GL_RANGE(p, n, w) ((void)0)
#endif
namespace __gl {
namespace heap {
__GL_RT static void* take(size_t n, size_t align) {
    Launch* L = launch;
    if (!L || !L->heap_alloc || n == 0) return nullptr;
    // A second run would be handed other blocks (`Launch::undo_lost`).
    __GL_RC(L->undo_lost = 1;)
    return L->heap_alloc((uint64_t)n, (uint64_t)align);
}
__GL_RT static void give_back(void* p) {
    if (!p) return;
#if __GL_RACECHECK
    rc::settle();  // a racing store held for its value may be into this block
#endif
    Launch* L = launch;
    uint64_t size = L && L->heap_free ? L->heap_free((uint64_t)p) : 0;
    if (size == 0) {
        if (L) {
            L->host_addr = (uint64_t)p;
            L->host_size = 0;
            L->host_write = 1;
        }
        stop(FAULT_FREE);
    }
#if __GL_RACECHECK
    rc::forget((uintptr_t)p, size);
#endif
}
}  // namespace heap
}  // namespace __gl
extern "C" {
__GL_RT __attribute__((noinline)) void* malloc(size_t n) noexcept { return ::__gl::heap::take(n, 16); }
__GL_RT __attribute__((noinline)) void free(void* p) noexcept { ::__gl::heap::give_back(p); }
__GL_RT __attribute__((noinline, optimize("no-tree-loop-distribute-patterns"))) void*
memcpy(void* d, const void* s, size_t n) noexcept {
    __GL_RANGE(s, n, false);
    __GL_RANGE(d, n, true);
    ::__gl::raw_copy(d, s, n);
    return d;
}
__GL_RT __attribute__((noinline, optimize("no-tree-loop-distribute-patterns"))) void*
memmove(void* d, const void* s, size_t n) noexcept {
    __GL_RANGE(s, n, false);
    __GL_RANGE(d, n, true);
    unsigned char* to = (unsigned char*)d;
    const unsigned char* from = (const unsigned char*)s;
    if (to < from || to >= from + n) {
        while (n--) *to++ = *from++;
    } else {
        while (n--) to[n] = from[n];
    }
    return d;
}
__GL_RT __attribute__((noinline, optimize("no-tree-loop-distribute-patterns"))) void*
memset(void* d, int c, size_t n) noexcept {
    __GL_RANGE(d, n, true);
    unsigned char* to = (unsigned char*)d;
    while (n--) *to++ = (unsigned char)c;
    return d;
}
__GL_RT __attribute__((noinline, optimize("no-tree-loop-distribute-patterns"))) int
memcmp(const void* a, const void* b, size_t n) noexcept {
    __GL_RANGE(a, n, false);
    __GL_RANGE(b, n, false);
    const unsigned char* x = (const unsigned char*)a;
    const unsigned char* y = (const unsigned char*)b;
    for (; n; n--, x++, y++)
        if (*x != *y) return *x < *y ? -1 : 1;
    return 0;
}
__GL_RT __attribute__((noinline)) int bcmp(const void* a, const void* b, size_t n) noexcept { return memcmp(a, b, n); }
__GL_RT __attribute__((noinline)) void* mempcpy(void* d, const void* s, size_t n) noexcept {
    return (char*)memcpy(d, s, n) + n;
}
// What `__builtin___memcpy_chk` and friends become (object-size checks are off: the copies
// are checked above instead).
__GL_RT __attribute__((noinline)) void* __memcpy_chk(void* d, const void* s, size_t n, size_t) noexcept {
    return memcpy(d, s, n);
}
__GL_RT __attribute__((noinline)) void* __memmove_chk(void* d, const void* s, size_t n, size_t) noexcept {
    return memmove(d, s, n);
}
__GL_RT __attribute__((noinline)) void* __mempcpy_chk(void* d, const void* s, size_t n, size_t) noexcept {
    return mempcpy(d, s, n);
}
__GL_RT __attribute__((noinline)) void* __memset_chk(void* d, int c, size_t n, size_t) noexcept {
    return memset(d, c, n);
}
}
__GL_RT __attribute__((noinline)) void* operator new(size_t n) { return ::__gl::heap::take(n, 16); }
__GL_RT __attribute__((noinline)) void* operator new[](size_t n) { return ::__gl::heap::take(n, 16); }
__GL_RT __attribute__((noinline)) void* operator new(size_t n, const std::nothrow_t&) noexcept {
    return ::__gl::heap::take(n, 16);
}
__GL_RT __attribute__((noinline)) void* operator new[](size_t n, const std::nothrow_t&) noexcept {
    return ::__gl::heap::take(n, 16);
}
__GL_RT __attribute__((noinline)) void* operator new(size_t n, std::align_val_t a) {
    return ::__gl::heap::take(n, (size_t)a);
}
__GL_RT __attribute__((noinline)) void* operator new[](size_t n, std::align_val_t a) {
    return ::__gl::heap::take(n, (size_t)a);
}
__GL_RT __attribute__((noinline)) void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return ::__gl::heap::take(n, (size_t)a);
}
__GL_RT __attribute__((noinline)) void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return ::__gl::heap::take(n, (size_t)a);
}
__GL_RT __attribute__((noinline)) void operator delete(void* p) noexcept { ::__gl::heap::give_back(p); }
__GL_RT __attribute__((noinline)) void operator delete[](void* p) noexcept { ::__gl::heap::give_back(p); }
__GL_RT __attribute__((noinline)) void operator delete(void* p, size_t) noexcept { ::__gl::heap::give_back(p); }
__GL_RT __attribute__((noinline)) void operator delete[](void* p, size_t) noexcept { ::__gl::heap::give_back(p); }
__GL_RT __attribute__((noinline)) void operator delete(void* p, const std::nothrow_t&) noexcept {
    ::__gl::heap::give_back(p);
}
__GL_RT __attribute__((noinline)) void operator delete[](void* p, const std::nothrow_t&) noexcept {
    ::__gl::heap::give_back(p);
}
__GL_RT __attribute__((noinline)) void operator delete(void* p, std::align_val_t) noexcept { ::__gl::heap::give_back(p); }
__GL_RT __attribute__((noinline)) void operator delete[](void* p, std::align_val_t) noexcept { ::__gl::heap::give_back(p); }
__GL_RT __attribute__((noinline)) void operator delete(void* p, size_t, std::align_val_t) noexcept {
    ::__gl::heap::give_back(p);
}
__GL_RT __attribute__((noinline)) void operator delete[](void* p, size_t, std::align_val_t) noexcept {
    ::__gl::heap::give_back(p);
}
__GL_RT __attribute__((noinline)) void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
    ::__gl::heap::give_back(p);
}
__GL_RT __attribute__((noinline)) void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
    ::__gl::heap::give_back(p);
}
#undef __GL_RANGE
#undef __GL_RT
