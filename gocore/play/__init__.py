"""Games between players: `match` (any two agents or GTP engines, results with reasons), `ratings`
(Wilson intervals, Elo, SPRT), `gtp` (our GTP v2 engine) and `gtp_client` (driving external engines).

Start reading at `match.play_game`.
"""
