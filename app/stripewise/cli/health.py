"""`stripewise health [--device DEV ...] [--json]`: each disk's SMART health through the
helper's read-only `disk.health` (smartctl --json).

Without --device: the whole disks of the hardware map (the live inventory's disks: SATA, SAS,
NVMe, virtio; loop, zram and RAM disks are not on it), so the CLI and the map ask the same
disks. --device names any whole disk in /sys/block (`sdb`, `/dev/nvme0n1`, `loop3`).
Exit 0 when every disk was answered, available or with its reason. `health_before_run` asks
the same for the disks under a benchmark's target, for `bench --save`'s run context.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from stripewise import environment
from stripewise.cli.errors import EXIT_FAILED, EXIT_OK, CliError, fail
from stripewise.cli.helper_client import HelperClient, start_helper
from stripewise.model.health import DiskHealth, verdict
from stripewise.model.topology import DiskKind
from stripewise.protocol.health import MAX_HEALTH_DEVICES, DiskHealthArgs
from stripewise.protocol.wire import ProtocolError

_SHOWN = (  # the text table's columns beside the verdict: (attribute, heading)
    ("temperature_c", "°C"),
    ("power_on_hours", "HOURS"),
)


def fill_parser(health: argparse.ArgumentParser) -> None:
    health.add_argument(
        "--device",
        action="append",
        metavar="DEV",
        help="a whole disk (sdb or /dev/sdb); repeat for several (default: every disk of the "
        "hardware map)",
    )
    health.add_argument(
        "--json",
        action="store_true",
        help='print {"disks": [...]}: device, available, reason, passed, attributes, verdict, '
        "reasons",
    )


def run(args: argparse.Namespace) -> int:
    names = [d.removeprefix("/dev/") for d in args.device] if args.device else _map_disks()
    if not names:
        raise CliError("no disks to ask: this machine's hardware map has none (give --device)")
    try:
        asked = DiskHealthArgs.from_json({"devices": names})
    except ProtocolError as exc:
        raise CliError(str(exc)) from None
    privileges = environment.probe_privileges()
    if not args.json and not privileges.available:
        print(f"note: {privileges.explanation}: SMART usually needs root", file=sys.stderr)
    client = start_helper(privileges)
    if isinstance(client, str):
        return fail(client, EXIT_FAILED)
    try:
        reply = client.ask(asked)
        if reply is None:
            return fail(client.stopped_reason(), EXIT_FAILED)
    finally:
        client.close()
    if reply.result is None:
        return fail(reply.message, EXIT_FAILED if reply.code == "unavailable" else 2)
    disks = reply.result.disks
    if args.json:
        json.dump({"disks": [health_json(d) for d in disks]}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(health_text(disks))
    return EXIT_OK


def _map_disks() -> list[str]:
    from stripewise.inventory import InventoryError, read_live

    try:
        inventory = read_live()
    except InventoryError as exc:
        raise CliError(f"cannot read this machine's disks: {exc}") from None
    return [d.name for d in inventory.disks if d.kind is DiskKind.DISK]


def health_json(health: DiskHealth) -> dict[str, Any]:
    """One disk as `--json` prints it: the contract's keys first, then what helps read them."""
    judged = verdict(health)
    return {
        "device": health.device,
        "available": health.available,
        "reason": health.reason,
        "passed": health.passed,
        "attributes": health.attributes,
        "verdict": judged.level,
        "reasons": list(judged.reasons) if health.available else [],
        "protocol": health.protocol,
        "model": health.model,
        "serial": health.serial,
        "exit_status": health.exit_status,
    }


def health_text(disks: tuple[DiskHealth, ...]) -> str:
    """A table of the disks read, then one line for each that could not be."""
    read = [d for d in disks if d.available]
    lines: list[str] = []
    if read:
        # HEALTH: our verdict; SMART: the drive's own overall assessment (passed or FAILED)
        rows = [("DISK", "HEALTH", "SMART", *(h for _, h in _SHOWN), "MODEL")]
        for health in read:
            values = [getattr(health, name) for name, _ in _SHOWN]
            rows.append(
                (
                    health.device,
                    verdict(health).level,
                    {True: "passed", False: "FAILED", None: "-"}[health.passed],
                    *("-" if v is None else f"{v:,}" for v in values),
                    health.model or "-",
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines += [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
        ]
        for health in read:
            for reason in verdict(health).reasons:
                lines.append(f"  {health.device}: {reason}")
    lines += [f"{d.device}: {d.reason}" for d in disks if not d.available]
    return "\n".join(lines) + "\n"


def health_before_run(client: HelperClient, target: str) -> dict[str, DiskHealth]:
    """The SMART health of the whole disks under a benchmark target (an md or dm device's
    members; a partition's disk), asked before the run starts: the helper reads none while a
    run goes. Empty when there are none or the helper cannot say."""
    names = disks_under(target)
    if not names:
        return {}
    reply = client.ask(DiskHealthArgs(names[:MAX_HEALTH_DEVICES]))
    if reply is None or reply.result is None:
        return {}
    return {health.device: health for health in reply.result.disks}


def disks_under(target: str) -> tuple[str, ...]:
    """Whole disks the target's I/O reaches, following md and dm devices to their members."""
    from stripewise.system.block_tunables import Tree
    from stripewise.system.target_device import target_device

    tree = Tree()
    top = target_device(target, tree)
    found: list[str] = []
    waiting = [top] if top else []
    while waiting and len(found) < MAX_HEALTH_DEVICES:
        name = waiting.pop(0)
        name = tree.parent_disk(name) or name
        slaves = sorted(p.name for p in tree.block(name, "slaves").glob("*"))
        if slaves:
            waiting += slaves
        elif tree.exists(name) and name not in found:
            found.append(name)
    return tuple(found)
