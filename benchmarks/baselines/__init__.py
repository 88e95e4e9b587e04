"""Code as it was before an optimisation, kept as a benchmark's baseline and the tests' reference (not benchmarks)."""
