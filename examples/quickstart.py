"""The README's example: a pcs_v0 episode with random guard-channel actions."""

import argparse

from seer_env.envs import pcs_v0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--height", type=int, default=64)
    parser.add_argument("--max-cycles", type=int, default=50)
    args = parser.parse_args(argv)
    env = pcs_v0.parallel_env(
        width=args.width, height=args.height, max_cycles=args.max_cycles, seed=0
    )
    observations, infos = env.reset()
    while env.agents:
        actions = {agent: env.action_space(agent).sample() for agent in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)
    print(env.runtime)  # executor and threads STPA chose, events, rounds
    print(env.unwrapped.stats())  # blocking probability and counters
    return env.unwrapped.stats()


if __name__ == "__main__":
    main()
