"""Networks and what feeds them: feature encoders (`features`), SGF games to rows (`encode`),
torch nets and presets (`nets`), device choice (`device`), batched evaluation (`inference`) and the
pure training loop (`training`). Imports `gocore.rules` only.

Start reading at `nets.build_net` and `features.get_encoder`.
"""
