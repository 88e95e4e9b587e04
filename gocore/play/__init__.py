"""Games between players: `game_match` (the match core of every game: one game over a
`gocore.rules.game.Game`, forfeits, a match's pairing), `match` (Go: any two agents or GTP engines,
results with reasons) and `baghchal_match` on top of it, `ratings` (Wilson intervals, Elo, SPRT),
`gtp` (our GTP v2 engine) and `gtp_client` (driving external engines).

Start reading at `game_match.play_game`, then `match.play_game`.
"""
