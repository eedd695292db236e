# The CPU seconds (user + system) of this process's children: the PyFlink mini-cluster's
# JVM, for the per-core figures of the Flink benchmark scripts.
import os


def children_cpu_seconds():
    total = 0.0
    me = os.getpid()
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            stat = open(f'/proc/{pid}/stat').read()
        except OSError:
            continue
        rest = stat[stat.rfind(')') + 2:].split()
        if int(rest[1]) == me:  # ppid
            total += (int(rest[11]) + int(rest[12])) / os.sysconf('SC_CLK_TCK')
    return total
