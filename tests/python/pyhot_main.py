# pyhot_main.py - the Python workload of buildtrace's tests: CPU-bound for SECONDS of CPU time.
#   pyhot_main.py chain SECONDS    <module> -> outer -> Worker.step -> inner (the last two in
#                                  pyhot_lib.py)
#   pyhot_main.py threads SECONDS  two threads, one in spin_a, the other in spin_b
#   pyhot_main.py fork SECONDS     a forked child runs the chain while its parent waits
#   pyhot_main.py mixed SECONDS    the chain in the main thread, and the two threads
#   pyhot_main.py rec DEPTH SECONDS  a recursion DEPTH frames deep (rec, in pyhot_lib.py)
# The lines the tests look for carry a "bt:" marker.
import os
import sys
import threading
import time

from pyhot_lib import Worker, rec, spin_a, spin_b


def outer(w, seconds):
    end = time.process_time() + seconds
    total = 0
    while time.process_time() < end:
        total += w.step(200000)  # bt:outer
    return total


def run_thread(fn, seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        fn(100000)  # bt:run_thread


if sys.argv[1] == "threads":
    ts = [threading.Thread(target=run_thread, args=(fn, 2 * float(sys.argv[2]))) for fn in (spin_a, spin_b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
elif sys.argv[1] == "mixed":
    ts = [threading.Thread(target=run_thread, args=(fn, float(sys.argv[2]))) for fn in (spin_a, spin_b)]
    for t in ts:
        t.start()
    outer(Worker(), float(sys.argv[2]))  # bt:mixed
    for t in ts:
        t.join()
elif sys.argv[1] == "rec":
    rec(int(sys.argv[2]) - 1, time.process_time() + float(sys.argv[3]))  # bt:rec_module
elif sys.argv[1] == "fork":
    child = os.fork()
    if child == 0:
        outer(Worker(), float(sys.argv[2]))  # bt:fork
        os._exit(0)
    os.waitpid(child, 0)
else:
    print(outer(Worker(), float(sys.argv[2])))  # bt:module
