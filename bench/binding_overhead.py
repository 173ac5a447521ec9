"""The Python side of bench/binding_overhead.sh: times collage.Session.run
one call at a time and prints "python median_us p10_us p90_us"."""
import sys
import time

import numpy as np

import collage


def main(model, input_name, input_path, runs, threads):
    session = collage.Session(model, threads=threads)
    inputs = {input_name: np.load(input_path)}
    for _ in range(runs // 10 + 1):
        session.run(inputs)
    micros = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run(inputs)
        micros.append((time.perf_counter() - start) * 1e6)
    micros.sort()
    at = lambda q: micros[int(q * (len(micros) - 1))]  # noqa: E731
    print(f"python {at(0.5):.3f} {at(0.1):.3f} {at(0.9):.3f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]),
         int(sys.argv[5]) if len(sys.argv) > 5 else 1)
