"""Benchmark hosts other than this machine: fio servers reached directly or over ssh.

Submodules: `ssh_tunnel` (a fio server started over ssh, bound to the remote loopback,
reached through a port forward), `checks` (one host's reachability, fio version and protocol
match) and `group_run` (one benchmark on several hosts). What they know of fio (its network
probe, its client process and output, the job file) is `stripewise.fio`'s. No Qt here
(import-linter contract).
"""
