"""gocore: Go and the learning code, as pure numpy/numba/torch logic (no Prefect, MLflow or storage).

Sub-packages, each importing only the ones before it (`make lint` checks the order):

- `gocore.rules`  the game: coordinates, immutable positions, numba kernels, SGF, symmetries;
- `gocore.nn`     feature planes, torch nets, devices, batched inference, the training loop;
- `gocore.search` PUCT, Gumbel and AlphaGo search, agents, self-play games;
- `gocore.play`   matches between players, ratings, the GTP engine and client.

`gocore.errors` holds `GozeroError`, the root of every error a user can act on.
"""
