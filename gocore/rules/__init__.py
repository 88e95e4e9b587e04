"""The game of Go: a move is an int (`coords`), `board.Position` is immutable and over numba kernels
(`kernels`, `batch`), `sgf` reads and writes game records, `symmetry` has the 8 dihedral ops.

Start reading at `board.Position`.
"""
