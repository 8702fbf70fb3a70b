# The engine's student-facing messages, in English.

## Items not graded here (src/check/gpu.rs)

not-graded-prefix = Not graded:{" "}
skipped-reason = skipped: { $reason }
skipped-details = Not graded: { $reason }.
