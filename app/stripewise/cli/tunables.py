"""What `tune`'s reading and writing commands share: the --device option."""

from __future__ import annotations

import argparse


def add_device_option(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument(
        "--device",
        dest="devices",
        action="append",
        required=required,
        metavar="DEV",
        help="a whole disk or md array: kernel name (sdb, md0) or /dev path; repeatable",
    )
