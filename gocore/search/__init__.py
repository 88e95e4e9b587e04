"""Search and the players built on it: batched PUCT and AlphaGo's λ-mixed search (`mcts`), agents
with `select_move(position) -> move` (`agents`), and self-play games to training rows (`selfplay`).

Start reading at `mcts.BatchedSearch.search`.
"""
