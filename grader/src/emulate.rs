//! Puts the CPU stand-in for libcuda / libnvrtc / libcublas in place for a child process.
//! (Being written: see grader/cuda-emulator.)
