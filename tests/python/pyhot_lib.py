# pyhot_lib.py - the second file of buildtrace's Python test workload (see pyhot_main.py): a method
# and the functions the hot loops are in, each loop on one line.
import time


class Worker:
    def step(self, n):
        return inner(n)  # bt:step


def inner(n):
    acc = 0
    for i in range(n): acc = (acc * 31 + i) % 1000003  # bt:inner
    return acc


def spin_a(n):
    acc = 0
    for i in range(n): acc = (acc * 17 + i) % 999983  # bt:spin_a
    return acc


def spin_b(n):
    acc = 1
    for i in range(n): acc = (acc * 13 + i) % 999979  # bt:spin_b
    return acc


def rec(n, end):
    if n:
        return rec(n - 1, end)  # bt:rec
    acc = 0
    while time.process_time() < end:
        for i in range(100000): acc = (acc * 7 + i) % 999961  # bt:rec_leaf
    return acc
