"""seer_env beside the PDES engines the paper compares with: ROSS, ROOT-Sim and USE.

``python -m bench.peers`` (``make bench-peers``) builds our PCS and PHOLD
runners against each engine's checkout (``bench/peers/<engine>/``) and runs
them beside seer in alternating rounds; ``python -m bench.peers.agreement``
checks that the engines' runs and seer's agree. docs/peers.md has the model
alignment and the results; bench/peers/README.md how to get the engines.
"""
