"""A protocol fuzzer: thousands of generated messages against a real root helper.

The helper runs as root acting for nobody (`--caller 65534`), with `--root` pointing its tuning
verbs at a copy of sysfs/procfs/etc and `--state-dir` at a temporary directory. Messages come
from a grammar of the real verbs with mutated arguments (wrong types, missing and extra keys,
huge and negative numbers, `1e999`, long and odd strings, deep nesting, nulls), mixed with raw
garbage (invalid UTF-8, truncated and non-object JSON, lines at and past the 64 KiB limit) and
with valid requests that change state: benchmarks started and cancelled, tunables applied,
verified, reverted and persisted under the fake root.

Every line gets exactly one reply, in order, with the id an independent parse of the line
predicts; no reply is `internal`, every error message is one line; stdout carries nothing but
JSON objects; the helper never exits early and writes no traceback. Afterwards nothing
changed outside the files the test asked for: /etc, /root, /var/lib/stripewise, the real block
queue and vm.dirty_* values, the fake root (only its tunable files), the state directory (only
the helper's journal, lock and records) and the benchmark directory (empty again).

STRIPEWISE_FUZZ_SEED picks another seed, STRIPEWISE_FUZZ_MESSAGES another count; the seed is
printed, and a one-line summary with `-s`.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import queue
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.tuning_state import fake_root

SEED = int(os.environ.get("STRIPEWISE_FUZZ_SEED", "5000"))
MESSAGES = int(os.environ.get("STRIPEWISE_FUZZ_MESSAGES", "5000"))
BEFORE_HELLO = 120  # generated messages sent before the first hello (on top of MESSAGES)
BATCH = 250  # lines written before their replies are read
BATCH_TIMEOUT_S = 60
MAX_LINE = 65536  # docs/protocol.md: longer lines are refused with too_large
MAX_DEPTH = 64  # docs/protocol.md: deeper nesting is bad_json
MAX_ID = 2**53 - 1
NOBODY = 65534
PRIVILEGED = os.geteuid() == 0
DEFAULT_STATE = "/var/lib/stripewise"
SERIAL_PREFIX = "fuzz-not-a-serial-"  # every serial the fuzzer types: no real disk has one

KNOWN_CODES = {
    "bad_json", "bad_request", "too_large", "hello_first", "protocol_mismatch", "unknown_verb",
    "bad_args", "not_found", "io_error", "refused", "busy", "not_running", "not_privileged",
    "write_failed", "nothing_to_revert", "nothing_to_verify", "serial_mismatch",
}  # fmt: skip
# array.create must never get as far as mdadm: every serial typed is wrong
ARRAY_CODES = {"bad_args", "not_found", "refused", "serial_mismatch"}
BEFORE_HELLO_CODES = {"hello_first", "bad_json", "bad_request", "too_large"}
VERBS = (
    "hello", "capabilities", "bench.start", "bench.cancel", "drop_caches", "tuning.apply",
    "tuning.verify", "tuning.revert", "tuning.persist", "enclosure.locate", "array.create",
)  # fmt: skip
VERB_WEIGHTS = (3, 3, 14, 6, 1, 14, 5, 6, 9, 7, 8)
DROP_CACHES_AT_MOST = 4  # it really syncs and drops the caches: a few are enough
PHASES = ("seq_write", "rewrite", "seq_read", "random_read", "random_write", "mixed")
VM_FILES = (
    "dirty_ratio", "dirty_bytes", "dirty_background_ratio", "dirty_background_bytes",
    "dirty_expire_centisecs", "dirty_writeback_centisecs",
)  # fmt: skip
QUEUE_FILES = ("read_ahead_kb", "scheduler", "nr_requests", "max_sectors_kb")
KNOBS = {  # key -> what a valid value looks like
    "read_ahead_kb": (0, 2**20),
    "scheduler": None,
    "nr_requests": (4, 2048),
    "max_sectors_kb": (4, 1024),
    "stripe_cache_size": (17, 32768),
    "vm.dirty_ratio": (0, 100),
    "vm.dirty_background_ratio": (0, 100),
    "vm.dirty_bytes": (8192, 2**34),
    "vm.dirty_background_bytes": (8192, 2**34),
    "vm.dirty_expire_centisecs": (0, 360_000),
    "vm.dirty_writeback_centisecs": (0, 360_000),
}


# --- JSON text the fuzzer controls byte by byte ----------------------------------------------
@dataclass(frozen=True)
class Raw:
    """JSON text inserted as is: 1e999, -0, a 4000-digit number, NaN (not JSON)."""

    text: str


def to_json(value: Any, ascii_only: bool = True) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        items = (
            f"{to_json(str(k), ascii_only)}:{to_json(v, ascii_only)}" for k, v in value.items()
        )
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(to_json(v, ascii_only) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


def to_line(value: Any, ascii_only: bool = True) -> bytes:
    # surrogatepass: a lone surrogate sent unescaped is invalid UTF-8, as a hostile client may
    return to_json(value, ascii_only).encode("utf-8", "surrogatepass")


def nested(depth: int, leaf: Any, use_list: bool = True) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if use_list else {"a": value}
    return value


# --- the oracle: what the helper must make of a line, judged without its code ----------------
def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def depth_of(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend(
                (child, level + 1) for child in (item.values() if isinstance(item, dict) else item)
            )
        # scalars add no level
    return deepest


@dataclass
class Expected:
    reply: bool  # False for a blank line: the helper skips it without a word
    id: int | None = None
    code: str | None = None  # a code the line must get, when the line alone decides it
    verb: str | None = None
    args: Any = None


def expect(line: bytes) -> Expected:
    if not line.strip():
        return Expected(reply=False)
    if len(line) > MAX_LINE:
        return Expected(True, None, "too_large")
    try:
        message = json.loads(line.decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return Expected(True, None, "bad_json")
    if depth_of(message) > MAX_DEPTH:
        return Expected(True, None, "bad_json")
    if not isinstance(message, dict):
        return Expected(True, None, "bad_request")
    request_id = message.get("id")
    if type(request_id) is not int or not 1 <= request_id <= MAX_ID:
        return Expected(True, None, "bad_request")
    verb, args = message.get("verb"), message.get("args", {})
    if (
        not isinstance(verb, str)
        or not isinstance(args, dict)
        or set(message) - {"id", "verb", "args"}
    ):
        return Expected(True, request_id, "bad_request")
    return Expected(True, request_id, None, verb, args)


# --- the world the generated messages point at -----------------------------------------------
@dataclass
class World:
    bench: Path  # owned by nobody: the one place a benchmark may run
    links: Path  # owned by nobody: a symlink to /etc, a root-only directory, a plain file
    root: Path  # the fake root (--root)
    state: Path  # --state-dir
    fake_devices: tuple[str, ...]
    real_devices: tuple[str, ...]
    device_nodes: tuple[str, ...]


def block_devices() -> tuple[str, ...]:
    return tuple(sorted(os.listdir("/sys/block"))) if os.path.isdir("/sys/block") else ()


def add_loop_like_device(root: Path) -> str:
    """A loop device's queue files copied (read only) from a real one, under its name: were
    --root ignored, the writes would land on the real device, and the snapshot would say so."""
    loops = [n for n in block_devices() if n.startswith("loop")]
    name = loops[-1] if loops else "loop7"
    source = Path("/sys/block") / name
    defaults = {
        "queue/read_ahead_kb": "128",
        "queue/scheduler": "[none] mq-deadline kyber bfq",
        "queue/nr_requests": "128",
        "queue/max_sectors_kb": "1280",
        "queue/max_hw_sectors_kb": "1280",
        "mq/0/nr_tags": "128",
        "diskseq": "9",
    }
    for relative, default in defaults.items():
        try:
            text = (source / relative).read_text().strip()
        except OSError:
            text = default
        path = root / "sys/block" / name / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    return name


# --- the grammar ------------------------------------------------------------------------------
class Grammar:
    def __init__(self, rng: random.Random, world: World) -> None:
        self.rng = rng
        self.world = world
        self.next_id = 1000
        self.drop_caches = 0
        self.cancel_next = False

    # numbers, strings and shapes a careless parser trips over
    def nasty(self) -> Any:
        r = self.rng
        choices: list[Callable[[], Any]] = [
            lambda: None, lambda: True, lambda: False, lambda: 0, lambda: -1,
            lambda: Raw("-0"), lambda: Raw("-0.0"), lambda: 0.5, lambda: -1e308,
            lambda: Raw("1e999"), lambda: Raw("-1e999"), lambda: Raw("1E400"),
            lambda: Raw("0." + "0" * 400 + "1"), lambda: Raw("1" * r.randint(20, 4000)),
            lambda: 2**53, lambda: 2**63, lambda: 2**64, lambda: -(2**64), lambda: 10**30,
            lambda: r.randint(-(2**70), 2**70), lambda: "", lambda: " ", lambda: "\x00",
            lambda: "\ud800", lambda: "\udcff", lambda: "é" * r.randint(1, 300),
            lambda: "\U0001f642" * r.randint(1, 100), lambda: "x" * r.randint(200, 20000),
            lambda: "../../../etc/passwd", lambda: "/etc/shadow", lambda: "$(reboot)",
            lambda: "; rm -rf /", lambda: "%s%n%x", lambda: "\n", lambda: "a\nb", lambda: "\r\n",
            lambda: "1e999", lambda: "NaN", lambda: "Infinity", lambda: "-1", lambda: "0x10",
            lambda: "1_000", lambda: "٣", lambda: " 4 ", lambda: "4M", lambda: "9" * 500 + "G",
            lambda: [], lambda: {}, lambda: [None], lambda: {"": None}, lambda: [[[]]],
            lambda: nested(r.randint(2, 50), r.choice([None, 1, "x", {}]), r.random() < 0.5),
            lambda: {"key": "read_ahead_kb", "value": 128, "device": "sdq"},
            lambda: [r.randint(0, 9)] * r.randint(100, 3000),
        ]  # fmt: skip
        return r.choice(choices)()

    def pick(self, good: list[Any], bad: list[Any], p_good: float = 0.75) -> Any:
        return self.rng.choice(good if self.rng.random() < p_good else bad)

    def text(self) -> str:
        r = self.rng
        alphabet = "abcXYZ019 _-.:/\\\"'\t\u00e9\u4e2d\u0000\ud800"
        return "".join(r.choice(alphabet) for _ in range(r.randint(0, 40)))

    def serial(self) -> str:
        return SERIAL_PREFIX + "".join(self.rng.choice("ABCDEF0123") for _ in range(10))

    # arguments, valid or close to it, per verb
    def device_name(self) -> Any:
        w = self.world
        return self.pick(
            [*w.fake_devices, *(f"/dev/{d}" for d in w.fake_devices)],
            [*w.real_devices, "sdz", "../../etc", "sdq/../md0", "/dev/../etc/passwd", "sd q",
             "", ".", "..", "md0\n", "sdq\x00", "a" * 65, "é", "/sys/block/sdq", "sdq/queue",
             "-sdq", "md0 ", "\ud800"],
            0.85,
        )  # fmt: skip

    def value_for(self, key: str) -> Any:
        r = self.rng
        bounds = KNOBS.get(key) or KNOBS.get(f"vm.{key}")
        if key == "scheduler":
            return r.choice(["none", "mq-deadline", "bfq", "kyber", "noop", "cfq", "[none]"])
        if bounds is None:
            return r.randint(0, 4096)
        low, high = bounds
        value = self.pick([low, high, r.randint(low, high)], [high + 1, low - 1], 0.8)
        return str(value) if r.random() < 0.2 else value

    def setting(self) -> dict[str, Any]:
        r = self.rng
        key = self.pick([*KNOBS, "dirty_ratio", "dirty_bytes"], ["vm.swappiness", "bogus", "vm."])
        item: dict[str, Any] = {"key": key, "value": self.value_for(key)}
        is_global = key.startswith("vm.") or key.startswith("dirty")
        if not is_global or r.random() < 0.1:
            item["device"] = self.device_name()
        return item

    def settings(self) -> list[dict[str, Any]]:
        return [self.setting() for _ in range(self.rng.choice([1, 1, 1, 1, 2, 2, 3, 5]))]

    def journal_id(self) -> Any:
        return self.rng.choice(
            [None, "20240101T000000-abcdef", "x" * 41, "../x", "", "abc\n", 5, "é", "a-b"]
        )

    def bench_target(self) -> tuple[str, bool]:
        """-> (target, whether it is the benchmark directory)."""
        r, w = self.rng, self.world
        if r.random() < 0.35:
            return r.choice([str(w.bench), f"{w.bench}/", f"{w.bench}//"]), True
        refused = [
            "/etc", "/root", "/proc", "/sys", "/dev", "/", "/usr", "/boot", "/run", "/tmp/..",
            "/var/lib/dpkg", "/proc/self/fd/0", "/proc/self/cwd", "/dev/null", "/dev/zero",
            "/dev/sdzz", "/dev/vda1", "/nonexistent/dir", "relative/dir", "", ".",
            f"{w.bench}/../../etc", f"{w.bench}/.", f"{w.links}/etc", f"{w.links}/etc/cron.d",
            f"{w.links}/root-only", f"{w.links}/plain-file", str(w.root), str(w.state),
            f"{w.bench}/\x00", f"{w.bench}/\ud800", "/" + "a" * 5000, "/" + "a/" * 3000,
            *w.device_nodes,
        ]  # fmt: skip
        return r.choice(refused), False

    def bench_args(self) -> dict[str, Any]:
        r = self.rng
        target, ours = self.bench_target()
        args: dict[str, Any] = {
            "target": target,
            "size": r.choice(["4M", "1M", "2M", 2**20, 4 * 2**20, "512K", "4MiB", 3 * 2**20]),
            "phases": r.sample(PHASES, r.randint(1, 3)),
        }
        makers: tuple[tuple[str, Callable[[], Any]], ...] = (
            ("block_size", lambda: r.choice([4096, 65536, "1M", 2**20, "128k"])),
            ("random_block_size", lambda: r.choice([4096, 512, "8k"])),
            ("direct", lambda: r.random() < 0.7),
            ("queue_depth", lambda: r.randint(1, 4)),
            ("streams", lambda: r.randint(1, 2)),
            ("repetitions", lambda: r.randint(1, 2)),
            ("runtime_cap_s", lambda: r.choice([1, 2, 5, 2.5])),
            ("sample_rate_hz", lambda: r.choice([1, 2, 10, 5.5])),
            ("engine", lambda: r.choice(["builtin"] * 12 + ["fio"])),
        )
        for key, make in makers:
            if r.random() < 0.4:
                args[key] = make()
        if not ours and r.random() < 0.5:
            args["confirm_serial"] = self.serial()
            args["overwrite"] = r.random() < 0.5
        return args

    def args_for(self, verb: str) -> dict[str, Any]:
        r, w = self.rng, self.world
        if verb == "hello":
            return {"protocol": r.choice([1, 1, 1, 2, 0])}
        if verb == "bench.start":
            return self.bench_args()
        if verb == "tuning.apply":
            args: dict[str, Any] = {"settings": self.settings()}
            if r.random() < 0.3:
                args["label"] = self.pick(["fuzz", "é" * 10], ["x" * 201, "a\nb", self.text()])
            return args
        if verb in ("tuning.verify", "tuning.revert"):
            return {} if r.random() < 0.7 else {"journal": self.journal_id()}
        if verb == "tuning.persist":
            action = r.choice(["show", "preview", "preview", "write", "write", "remove", "delete"])
            args = {"action": action}
            if action in ("preview", "write") or r.random() < 0.1:
                args["settings"] = self.settings()
            return args
        if verb == "enclosure.locate":
            return {
                "enclosure": self.pick(["0:0:0:0", "1:0:8:0", "99999:0:0:0"],
                                       ["0:0:0", "a:b:c:d", "0:0:0:0/../..", "0:0:0:0\n",
                                        "123456:0:0:0"]),
                "bay": self.pick(["Slot 07", "Slot07", "0", "Disk.Bay-1:A"],
                                 ["../../../etc/passwd", "Slot 07/..", "", "a" * 65,
                                  "Slot\n07", "Slot 07\n", "ÄÖ"]),
                "on": r.random() < 0.5,
            }  # fmt: skip
        if verb == "array.create":
            disks = [f"/dev/{n}" for n in w.real_devices if n.startswith(("sd", "vd", "nvme"))]
            bad_devices = [
                "/dev/loop0", "/dev/vda1", "/dev/disk/by-id/ata-FUZZ_DISK", "/etc/passwd",
                "/dev/disk/by-id/../../vda", "/dev/md0", "/dev/sda\n", *w.device_nodes,
            ]  # fmt: skip

            def device() -> Any:
                return self.pick([*disks, "/dev/sdzz", "/dev/nvme9n9"], bad_devices, 0.8)

            args = {
                "name": self.pick(
                    ["data", "fuzz0"], ["a" * 33, "0bad", "md/../x", "data\n", ""], 0.9
                ),
                "level": self.pick(
                    ["raid0", "raid1", "raid5", "raid6", "raid10"], ["raid50", "5"], 0.9
                ),
                "members": [
                    {"device": device(), "serial": self.serial()}
                    for _ in range(self.pick([2, 3, 4, 5], [0, 1, 65]))
                ],
            }
            if r.random() < 0.6:
                args["chunk_kib"] = self.pick([4, 64, 512, 2048], [3, 4096, 0])
            if r.random() < 0.3:
                args["spares"] = [{"device": device(), "serial": self.serial()}]
            return args
        return {}

    # mutations: anywhere in the tree
    def mutate(self, value: Any, keep: float = 0.7) -> Any:
        """`value` with one thing changed somewhere inside; `keep`: the chance that a
        container is kept and something in it changed, rather than replaced whole."""
        r = self.rng
        if value == {} and r.random() < keep:
            return {r.choice([self.text(), "args", "run", "force", "id"]): self.nasty()}
        if isinstance(value, dict) and value and r.random() < keep:
            key = r.choice(list(value))
            choice = r.random()
            copy = dict(value)
            if choice < 0.45:
                copy[key] = self.mutate(copy[key])
            elif choice < 0.6:
                del copy[key]
            elif choice < 0.75:
                copy[r.choice([self.text(), key.upper(), key + " ", "__proto__", "id"])] = (
                    self.nasty()
                )
            elif choice < 0.85:
                copy[key] = [copy[key]]
            else:
                copy[key] = nested(r.randint(1, 50), copy[key], r.random() < 0.5)
            return copy
        if isinstance(value, list) and value and r.random() < keep:
            items = list(value)
            index = r.randrange(len(items))
            choice = r.random()
            if choice < 0.6:
                items[index] = self.mutate(items[index])
            elif choice < 0.8:
                del items[index]
            else:
                items.extend(items * r.randint(1, 100))  # past every count limit
            return items
        return self.nasty()

    def request(self, verb: str) -> tuple[dict[str, Any], Any]:
        args: Any = self.args_for(verb)
        for _ in range(self.rng.choice([0, 0, 0, 1, 1, 2, 3])):
            args = self.mutate(args, keep=0.97)  # args that are not an object: now and then
        if verb == "bench.start" and isinstance(args, dict):
            self.keep_devices_refused(args)
        if verb == "array.create":
            keep_serials_wrong(args)
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "verb": verb}
        if args != {} or self.rng.random() < 0.5:
            message["args"] = args
        return message, args

    def keep_devices_refused(self, args: dict[str, Any]) -> None:
        """A block device is read without a serial; only writing needs one. Every phase list
        aimed at a device keeps a writing phase, so the device is refused, never read."""
        target, phases = args.get("target"), args.get("phases")
        writing = {"seq_write", "rewrite", "random_write", "mixed"}
        if (
            isinstance(target, str)
            and target.startswith("/dev/")
            and isinstance(phases, list)
            and not writing & {p for p in phases if isinstance(p, str)}
        ):
            phases.append("seq_write")
        typed = args.get("confirm_serial")
        if isinstance(typed, str) and not typed.startswith(SERIAL_PREFIX):  # none is right
            args["confirm_serial"] = SERIAL_PREFIX + typed

    # whole lines
    def envelope(self, message: dict[str, Any]) -> dict[str, Any]:
        """The request's own fields mutated: id, verb, args, extra fields."""
        r = self.rng
        copy = dict(message)
        choice = r.randrange(9)
        if choice == 0:
            copy["id"] = r.choice([0, -1, 2**53, 2**64, "7", 1.0, True, None, [1], Raw("1e999")])
        elif choice == 1:
            del copy["id"]
        elif choice == 2:
            copy["id"] = MAX_ID
        elif choice == 3:
            copy["verb"] = r.choice(
                ["", "HELLO", "bench.start.now", "bench..start", "run.shell", "héllo", 5, None,
                 "hello\n", "tuning.", "_x", "drop caches", "x" * 5000]
            )  # fmt: skip
        elif choice == 4:
            del copy["verb"]
        elif choice == 5:
            copy["args"] = r.choice([[], "x", None, 1, [{}], True])
        elif choice == 6:
            copy[r.choice(["extra", "ID", "Verb", "result", "ok", ""])] = self.nasty()
        elif choice == 7:
            copy["verb"] = r.choice(["bench.stop", "tuning.undo", "array.destroy", "shell"])
        else:
            copy["id"] = r.randint(1, MAX_ID)
        return copy

    def garbage(self, template: dict[str, Any]) -> bytes:
        r = self.rng
        text = to_line(template)
        choice = r.randrange(17)
        if choice == 0:
            return bytes(
                r.choice([b for b in range(256) if b != 10]) for _ in range(r.randint(1, 200))
            )
        if choice == 1:
            return r.choice([b"\xff\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80",
                             b"\xe2\x82", text[:-3] + b"\xff\"}"])  # fmt: skip
        if choice == 2:
            return text[: r.randint(1, max(1, len(text) - 1))]
        if choice == 3:
            return r.choice([b"[]", b"1", b'"hello"', b"null", b"true", b"[" + text + b"]", b"-0"])
        if choice == 4:
            return text + r.choice([b"x", b" {}", b"]", text, b"\x00"])
        if choice == 5:
            return r.choice([b" ", b"\t", b"\r", b"\x0b\x0c", b"  \t \r"])
        if choice == 6:
            return b"\xef\xbb\xbf" + text
        if choice == 7:
            return text.replace(b'"', b"'")
        if choice == 8:
            return self.padded(template, MAX_LINE + r.choice([-1, 0, 0, 1, 1]))
        if choice == 9:
            return self.padded(template, r.choice([MAX_LINE + 2, 70_000, 200_000, 1_100_000]))
        if choice == 10:
            depth = r.choice([MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 100, 1000])
            opening, closing = r.choice([("[", "]"), ('{"a":', "}")])
            inner = opening * (depth - 2) + "1" + closing * (depth - 2)  # request, args: 2 more
            head = to_json({"id": template["id"], "verb": template["verb"]})[:-1]
            return f'{head},"args":{{"a":{inner}}}}}'.encode()
        if choice == 11:
            return b"[" * r.randint(65, 5000)
        if choice == 12:
            return text.replace(
                b'"id":', b'"id":' + r.choice([b"NaN,", b"Infinity,", b"-Infinity,"]) + b'"x":'
            )
        if choice == 13:
            return to_line(template, ascii_only=False)  # raw UTF-8; lone surrogates invalid
        if choice == 14:
            return b'{"id":1,"id":"x","verb":"hello"}'
        if choice == 15:
            return b'{"id": 1' + b"0" * 5000 + b', "verb": "hello"}'
        return text.replace(b"{", b"{ \t\r ", 1)

    def padded(self, template: dict[str, Any], size: int) -> bytes:
        """A request exactly `size` bytes long: a long string in an extra argument."""
        args = template.get("args")
        message = {**template, "args": {**(args if isinstance(args, dict) else {}), "pad": ""}}
        bare = len(to_line(message))
        message["args"]["pad"] = "p" * max(0, size - bare)
        line = to_line(message)
        assert len(line) == size or size < bare
        return line

    def line(self, greeted: bool) -> bytes:
        r = self.rng
        verbs = VERBS if greeted else VERBS[1:]
        verb = r.choices(verbs, VERB_WEIGHTS if greeted else VERB_WEIGHTS[1:])[0]
        if self.cancel_next:  # a benchmark may have started: stop it, so that the next
            verb, self.cancel_next = "bench.cancel", False  # bench.start is not just `busy`
        if verb == "drop_caches":
            self.drop_caches += 1
            if self.drop_caches > DROP_CACHES_AT_MOST:
                verb = "capabilities"
        message, args = self.request(verb)
        if verb == "bench.start" and isinstance(args, dict):
            self.cancel_next = str(args.get("target", "")).startswith(str(self.world.bench))
            self.cancel_next &= r.random() < 0.7
        roll = r.random()
        if roll < 0.12:
            return self.garbage(message)
        if roll < 0.2:
            return to_line(self.envelope(message))
        return to_line(message, ascii_only=r.random() < 0.8)


def keep_serials_wrong(args: Any) -> None:
    """array.create may only ever meet a wrong serial: one that no disk has."""
    if not isinstance(args, dict):
        return
    for key in ("members", "spares"):
        entries = args.get(key)
        if isinstance(entries, list):
            for entry in entries:
                typed = entry.get("serial") if isinstance(entry, dict) else None
                if isinstance(typed, str) and not typed.startswith(SERIAL_PREFIX):
                    entry["serial"] = SERIAL_PREFIX + typed


# --- the helper, driven in batches ------------------------------------------------------------
@dataclass
class Output:
    replies: queue.Queue[dict[str, Any]] = field(default_factory=queue.Queue)
    events: list[dict[str, Any]] = field(default_factory=list)
    bad: list[bytes] = field(default_factory=list)
    stderr: bytearray = field(default_factory=bytearray)


class FuzzedHelper:
    def __init__(self, world: World) -> None:
        command = [sys.executable, "-m", "stripewise.helper.server"]
        command += ["--state-dir", str(world.state), "--root", str(world.root)]
        if PRIVILEGED:
            command += ["--caller", str(NOBODY)]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.out = Output()
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            if not line.endswith(b"\n") or not isinstance(message, dict):
                self.out.bad.append(line)
            elif "event" in message and "id" not in message:
                self.out.events.append(message)
            elif set(message) in ({"id", "ok", "result"}, {"id", "ok", "error"}):
                self.out.replies.put(message)
            else:
                self.out.bad.append(line)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := os.read(self.process.stderr.fileno(), 65536):
            self.out.stderr += chunk

    def send(self, lines: list[bytes]) -> None:
        """Written from a thread: a helper that stops reading fails the test, not hangs it."""
        stdin = self.process.stdin
        assert stdin is not None
        failed: list[BaseException] = []

        def write() -> None:
            try:
                stdin.write(b"".join(line + b"\n" for line in lines))
                stdin.flush()
            except OSError as exc:  # the helper is gone: replies() says so
                failed.append(exc)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        writer.join(BATCH_TIMEOUT_S)
        assert not writer.is_alive(), f"the helper stopped reading its stdin\n{self.stderr()}"

    def replies(self, count: int, timeout: float = BATCH_TIMEOUT_S) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        got: list[dict[str, Any]] = []
        while len(got) < count:
            try:
                got.append(self.out.replies.get(timeout=0.2))
            except queue.Empty:
                alive = self.process.poll() is None
                assert alive, f"the helper exited ({self.process.returncode})\n{self.stderr()}"
                assert time.monotonic() < deadline, f"{count - len(got)} replies missing"
        return got

    def ask(self, verb: str, args: dict[str, Any], request_id: int) -> dict[str, Any]:
        self.send([to_line({"id": request_id, "verb": verb, "args": args})])
        (reply,) = self.replies(1)
        assert reply["id"] == request_id, reply
        return reply

    def stderr(self) -> str:
        return bytes(self.out.stderr).decode("utf-8", "replace")[-4000:]

    def close(self) -> int:
        """Close stdin as a client does; a helper that does not exit then is killed."""
        assert self.process.stdin is not None
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            code = self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            code = -1
        for thread in self._threads:
            thread.join(timeout=10)
        return code


# --- snapshots: what must not change ----------------------------------------------------------
Entry = tuple[Any, ...]


def _lstat(path: str) -> Entry:
    try:
        info = os.lstat(path)
    except OSError as exc:
        return ("unreadable", exc.errno)
    return (stat.S_IFMT(info.st_mode), info.st_size, info.st_mtime_ns, info.st_ino)


def _text(path: str) -> Entry:
    try:
        with open(path, "rb") as handle:
            return ("text", handle.read(4096))
    except OSError as exc:
        return ("unreadable", exc.errno)


def _listing(directory: str) -> list[str]:
    try:
        return sorted(os.listdir(directory))
    except OSError:
        return []


def system_snapshot() -> dict[str, Entry]:
    """The machine outside the test's own files: nothing here may change."""
    found: dict[str, Entry] = {}
    for directory in ("/etc", "/etc/sysctl.d", "/etc/udev/rules.d", "/root"):
        found[directory] = _lstat(directory)
        for name in _listing(directory):
            found[f"{directory}/{name}"] = _lstat(f"{directory}/{name}")
    # the default state directory, but for `created/`: other helpers' records come and go
    # there (see own_records)
    for name in _listing(DEFAULT_STATE):
        if name != "created":
            for top, _dirs, files in os.walk(f"{DEFAULT_STATE}/{name}"):
                for path in [top, *(os.path.join(top, f) for f in files)]:
                    found[path] = _lstat(path)
    for device in block_devices():
        for name in QUEUE_FILES:
            path = f"/sys/block/{device}/queue/{name}"
            if os.path.exists(path):
                found[path] = _text(path)
    for name in VM_FILES:
        found[f"/proc/sys/vm/{name}"] = _text(f"/proc/sys/vm/{name}")
    for path in glob.glob("/sys/class/enclosure/*/*/locate"):
        found[path] = _text(path)
    return found


def own_records(pid: int) -> list[str]:
    """Records in the default state directory written by the helper with this pid."""
    found = []
    for path in glob.glob(f"{DEFAULT_STATE}/created/*.json"):
        with contextlib.suppress(OSError, ValueError):
            if json.loads(Path(path).read_text()).get("helper_pid") == pid:
                found.append(path)
    return found


def tree_snapshot(top: Path) -> dict[str, Entry]:
    """Files by content and inode, directories by existence (their mtimes move when the
    helper's temp files come and go)."""
    found: dict[str, Entry] = {}
    for directory, dirs, files in os.walk(top):
        for name in dirs:
            found[os.path.relpath(os.path.join(directory, name), top)] = ("dir",)
        for name in files:
            path = os.path.join(directory, name)
            found[os.path.relpath(path, top)] = (*_lstat(path), _text(path))
    return found


def differences(before: dict[str, Entry], after: dict[str, Entry]) -> dict[str, str]:
    """path -> what changed, for every path that differs."""
    return {
        path: f"{path}: {before.get(path, 'absent')!r} -> {after.get(path, 'absent')!r}"[:400]
        for path in sorted(set(before) | set(after))
        if before.get(path) != after.get(path)
    }


def tunable_files(world: World) -> set[str]:
    """What tuning.apply/revert may write under the fake root, relative to it."""
    allowed = {f"proc/sys/vm/{name}" for name in VM_FILES}
    for device in world.fake_devices:
        allowed |= {f"sys/block/{device}/queue/{name}" for name in QUEUE_FILES}
        allowed.add(f"sys/block/{device}/md/stripe_cache_size")
    return allowed


# --- the fuzz run -----------------------------------------------------------------------------
@dataclass
class Tally:
    sent: int = 0
    blank: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    by_verb: Counter[tuple[str, str]] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    runs: set[str] = field(default_factory=set)
    internal: int = 0

    def problem(self, text: str, line: bytes) -> None:
        shown = line[:300] + (b"..." if len(line) > 300 else b"")
        self.problems.append(f"{text}\n    request: {shown!r}")


def check_reply(
    reply: dict[str, Any], line: bytes, wanted: Expected, greeted: bool, world: World, tally: Tally
) -> None:
    ok = reply["ok"] is True
    code = "ok" if ok else reply["error"].get("code")
    tally.codes[str(code)] += 1
    tally.by_verb[(str(wanted.verb), str(code))] += 1
    if reply["id"] != wanted.id:
        tally.problem(f"reply id {reply['id']!r}, expected {wanted.id!r}: {reply}", line)
    if not ok:
        message = reply["error"].get("message")
        if code == "internal":
            tally.internal += 1
            tally.problem(f"internal: {message}", line)
        elif code not in KNOWN_CODES:
            tally.problem(f"unknown code {code!r}: {message}", line)
        if not isinstance(message, str) or not message or "\n" in message:
            tally.problem(f"the message is not one line of text: {message!r}", line)
    if wanted.code is not None and code != wanted.code:
        tally.problem(f"{code}, expected {wanted.code}: {reply}", line)
    if not greeted and code not in BEFORE_HELLO_CODES:
        tally.problem(f"before hello: {reply}", line)
    verb, args = wanted.verb, wanted.args
    if verb == "hello" and ok and (type(args.get("protocol")) is not int or args["protocol"] != 1):
        tally.problem(f"hello accepted protocol {args.get('protocol')!r}", line)
    if verb == "bench.start" and ok:
        target = reply["result"].get("target", "")
        if not target.startswith(f"{world.bench}/"):
            tally.problem(f"a benchmark started on {target}", line)
        tally.runs.add(reply["result"]["run"])
    if verb == "array.create" and greeted and code not in ARRAY_CODES:
        tally.problem(f"array.create got {code}: {reply}", line)
    if verb == "enclosure.locate" and ok and not os.path.isdir("/sys/class/enclosure"):
        tally.problem(f"enclosure.locate succeeded without enclosures: {reply}", line)


def run_batch(
    helper: FuzzedHelper, lines: list[bytes], greeted: bool, world: World, tally: Tally
) -> None:
    wanted = [expect(line) for line in lines]
    helper.send(lines)
    tally.sent += len(lines)
    answering = [(line, w) for line, w in zip(lines, wanted, strict=True) if w.reply]
    tally.blank += len(lines) - len(answering)
    replies = helper.replies(len(answering))
    for reply, (line, w) in zip(replies, answering, strict=True):
        check_reply(reply, line, w, greeted, world, tally)
    assert helper.process.poll() is None, f"the helper exited\n{helper.stderr()}"


def finish(helper: FuzzedHelper, tally: Tally) -> None:
    """Cancel a running benchmark and wait for every run's result; revert every open apply
    and remove the boot-time files, so the fake root is left as the journal allows."""
    request_id = 10**9
    cancel = helper.ask("bench.cancel", {}, request_id)
    assert cancel["ok"] or cancel["error"]["code"] == "not_running", cancel
    deadline = time.monotonic() + 60
    while True:
        finished = {e["run"] for e in list(helper.out.events) if e.get("event") == "run_result"}
        if tally.runs <= finished:
            break
        assert time.monotonic() < deadline, f"runs without a result: {tally.runs - finished}"
        time.sleep(0.05)
    for _ in range(100):
        request_id += 1
        reverted = helper.ask("tuning.revert", {}, request_id)
        if not reverted["ok"]:
            assert reverted["error"]["code"] in ("nothing_to_revert", "not_privileged"), reverted
            break
    request_id += 1
    removed = helper.ask("tuning.persist", {"action": "remove"}, request_id)
    assert removed["ok"] or not PRIVILEGED, removed


@contextlib.contextmanager
def fuzz_world(tmp_path: Path) -> Iterator[World]:
    """The benchmark directory lives in /tmp (nobody cannot reach pytest's tmp_path), owned
    by nobody; a sibling holds a symlink to /etc, a root-only directory and a plain file."""
    top = Path(tempfile.mkdtemp(prefix="stripewise-fuzz-", dir="/tmp"))
    try:
        os.chmod(top, 0o755)
        bench, links = top / "bench", top / "links"
        bench.mkdir()
        links.mkdir()
        (links / "etc").symlink_to("/etc")
        (links / "root-only").mkdir(mode=0o700)
        (links / "plain-file").write_text("not a directory\n")
        if PRIVILEGED:
            for path in (bench, links, links / "plain-file"):
                os.chown(path, NOBODY, NOBODY)
            os.lchown(links / "etc", NOBODY, NOBODY)
        root = fake_root(tmp_path)
        loop_like = add_loop_like_device(root)
        state = tmp_path / "state"
        state.mkdir(mode=0o755)
        real = block_devices()
        nodes = tuple(f"/dev/{n}" for n in real if os.path.exists(f"/dev/{n}"))
        yield World(
            bench=bench,
            links=links,
            root=root,
            state=state,
            fake_devices=("md0", "sdq", "sdr", loop_like),
            real_devices=(
                *[n for n in real if not n.startswith("loop")][:6],
                *[n for n in real if n.startswith("loop") and n != loop_like][:2],
            ),
            device_nodes=nodes[:8],
        )
    finally:
        shutil.rmtree(top, ignore_errors=True)


def fuzz(seed: int, count: int, tmp_path: Path) -> None:
    print(f"\nprotocol fuzz: seed {seed} (STRIPEWISE_FUZZ_SEED={seed} to repeat)")
    started = time.monotonic()
    with fuzz_world(tmp_path) as world:
        system_before = system_snapshot()
        root_before = tree_snapshot(world.root)
        links_before = tree_snapshot(world.links)
        grammar = Grammar(random.Random(seed), world)
        helper = FuzzedHelper(world)
        tally = Tally()
        try:
            run_batch(
                helper,
                [grammar.line(greeted=False) for _ in range(BEFORE_HELLO)],
                False,
                world,
                tally,
            )
            hello = helper.ask("hello", {"protocol": 1}, 1)
            assert hello["ok"], hello
            tally.sent += 1
            done = 0
            while done < count:
                size = min(BATCH, count - done)
                run_batch(
                    helper, [grammar.line(greeted=True) for _ in range(size)], True, world, tally
                )
                done += size
            finish(helper, tally)
        finally:
            exit_code = helper.close()
        elapsed = time.monotonic() - started
        stderr = helper.stderr()
        system_after = system_snapshot()
        root_after = tree_snapshot(world.root)
        links_after = tree_snapshot(world.links)
        state_after = sorted(str(p.relative_to(world.state)) for p in world.state.rglob("*"))
        bench_after = sorted(os.listdir(world.bench))
        records_elsewhere = own_records(helper.process.pid)

    statuses = Counter(e["status"] for e in helper.out.events if e.get("event") == "run_result")
    crashed = exit_code != 0 or "Traceback" in stderr
    print(
        f"protocol fuzz: seed {seed}, {tally.sent} messages sent ({tally.blank} blank lines), "
        f"{sum(tally.codes.values())} replies {dict(sorted(tally.codes.items()))}, "
        f"benchmarks {dict(sorted(statuses.items()))}, crashes {int(crashed)}, "
        f"internal {tally.internal}, elapsed {elapsed:.1f} s"
    )
    failures = list(tally.problems)
    if exit_code != 0:
        failures.append(f"the helper exited with {exit_code}")
    if "Traceback" in stderr:
        failures.append(f"a traceback on stderr:\n{stderr}")
    failures += [
        f"stdout line that is not one JSON object: {line[:300]!r}" for line in helper.out.bad
    ]
    changed = differences(system_before, system_after)
    failures += [f"changed outside the test's files: {text}" for text in changed.values()]
    # values of existing tunable files; the directories tuning.persist made for its files
    allowed = tunable_files(world) & set(root_before) & set(root_after)
    allowed |= {"etc", "etc/sysctl.d", "etc/udev", "etc/udev/rules.d"}
    changed = differences(root_before, root_after)
    failures += [
        f"changed under the fake root: {t}" for p, t in changed.items() if p not in allowed
    ]
    helper_files = {"tuning-journal.json", "tuning.lock", "created"}
    failures += [
        f"unexpected in the state directory: {p}" for p in state_after if p not in helper_files
    ]
    failures += [f"left in the benchmark directory: {name}" for name in bench_after]
    changed = differences(links_before, links_after)
    failures += [f"changed beside the benchmark directory: {t}" for t in changed.values()]
    failures += [f"a record outside --state-dir: {path}" for path in records_elsewhere]
    if tally.runs and PRIVILEGED and not (world.state / "created").is_dir():
        failures.append("the benchmarks' records were not kept in --state-dir")
    shown = "\n".join(failures[:25])
    assert not failures, f"seed {seed}: {len(failures)} problem(s), the first ones:\n{shown}"


@pytest.mark.skipif(not os.path.isdir("/sys/block"), reason="needs sysfs")
def test_generated_messages_get_one_clean_reply_each_and_write_nothing_else(
    tmp_path: Path,
) -> None:
    fuzz(SEED, MESSAGES, tmp_path)


# --- what the fuzzer found, pinned ------------------------------------------------------------
TWO_MISSING = [{"device": "/dev/sdzz", "serial": "x"}, {"device": "/dev/sdzy", "serial": "y"}]
TWO_NEWLINES = [{"device": "/dev/sda\n", "serial": "x"}, {"device": "/dev/sdb\n", "serial": "y"}]
FOUND = [
    # level as a list or object: `level not in LEVELS` raised TypeError (unhashable) -> internal
    ("array.create", {"name": "data", "level": ["raid5"], "members": []}, "bad_args", "level"),
    ("array.create", {"name": "data", "level": {"raid5": 1}, "members": []}, "bad_args", "level"),
    # "$" matched before a final newline: these passed validation, and the newline ended up
    # in a path and in a two-line error message
    (
        "array.create",
        {"name": "data\n", "level": "raid1", "members": TWO_MISSING},
        "bad_args",
        "name",
    ),
    ("array.create", {"name": "d", "level": "raid1", "members": TWO_NEWLINES}, "bad_args", "by-id"),
    ("enclosure.locate", {"enclosure": "0:0:0:0\n", "bay": "B", "on": True}, "bad_args", "H:C"),
    (
        "enclosure.locate",
        {"enclosure": "0:0:0:0", "bay": "Slot 1\n", "on": True},
        "bad_args",
        "bay",
    ),
    ("tuning.verify", {"journal": "20240101T000000-abcdef\n"}, "bad_args", "journal"),
    # hello took true and 1.0 for protocol 1
    ("hello", {"protocol": True}, "protocol_mismatch", "True"),
    ("hello", {"protocol": 1.0}, "protocol_mismatch", "1.0"),
]


def test_what_the_fuzzer_found_is_refused_in_one_line(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    helper = subprocess.Popen(
        [sys.executable, "-m", "stripewise.helper.server", "--state-dir", str(state)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    requests = [{"id": 1, "verb": "hello", "args": {"protocol": 1}}]
    requests += [{"id": n, "verb": v, "args": a} for n, (v, a, _c, _w) in enumerate(FOUND, 2)]
    out, err = helper.communicate(b"".join(to_line(r) + b"\n" for r in requests), timeout=60)
    replies = [json.loads(line) for line in out.splitlines()]
    assert helper.returncode == 0 and b"Traceback" not in err, err
    assert replies[0]["ok"], replies[0]
    for reply, (verb, args, code, word) in zip(replies[1:], FOUND, strict=True):
        error = reply["error"]
        assert error["code"] == code, (verb, args, reply)
        assert word in error["message"] and "\n" not in error["message"], (verb, args, reply)
