"""Benchmark hosts other than this machine: fio servers reached directly or over ssh.

Submodules: `fio_probe` (fio's network protocol probe), `ssh_tunnel` (a fio server started
over ssh, bound to the remote loopback, reached through a port forward) and `checks` (one
host's reachability, fio version and protocol match). No Qt here (import-linter contract).
"""
