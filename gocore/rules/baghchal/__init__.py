"""Baghchal (Tigers and Goats, issue #37): the second game through our AlphaGo Zero design.

- `geometry`  the 25 points, the lines (diagonals only through even points), the 217 actions and
              the 8 symmetries of the square on points and actions;
- `kernels`   numba: legal actions, playing one, the game's end, random playouts;
- `position`  `Position` (immutable, `play` -> new position or `IllegalAction` with the reason) and
              `BaghchalRules` (captures to win, the repetition draw, the ply cap);
- `notation`  the `baghchal` library's move text, records (``1. G33 B1122 ...``) and FEN
              (``B3B/5/5/5/B3B G 0``), and a text board.

Start reading at `position.Position`.
"""
