"""The executor and thread-count pairs the equivalence tests compare against serial."""

import seer_env


def executor_configs(max_threads: int = 16) -> list[tuple[str, int]]:
    """Every (executor, num_threads) pair to compare against serial."""
    configs = [("serial", 1)]
    for name in seer_env.executor_names():
        if name == "serial":
            continue
        configs += [(name, t) for t in (1, 2, 3, 4, 8, 16) if t <= max_threads]
    return configs
