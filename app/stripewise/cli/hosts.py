"""`stripewise hosts add|list|remove|check`: host groups and whether their hosts are ready.

Exit codes: 0 done (for `check`: every host reachable with this machine's fio protocol),
1 `check` found a host that is not, 2 bad input (a host, group name or database that cannot
be used; one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from stripewise.cli.errors import EXIT_FAILED, EXIT_OK, CliError, database_url, open_history
from stripewise.cli.options import Parser, add_db_option, finite
from stripewise.model.host_address import HostAddress, HostAddressError, parse_host
from stripewise.model.host_group import HostGroup, check_group_name
from stripewise.model.wording import count_noun

if TYPE_CHECKING:
    from stripewise.history.database import Database
    from stripewise.hosts.checks import HostCheck

MAX_TIMEOUT_S = 300.0


class HostWordsParser(Parser):
    """The actions' parser: a word that reads as an option but is none of theirs
    (`-oProxyCommand=x`) stands where a host or group goes, so it is named as one that cannot
    be, where argparse would say only that HOST is missing or the word unrecognised."""

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        given = args[0] if args else kwargs.get("args")
        words = list(sys.argv[1:] if given is None else given)
        value_next = False  # the word after an option that takes one is its value
        for word in words[: words.index("--")] if "--" in words else words:
            if value_next:
                value_next = False
                continue
            named = self._options_named(word)
            if len(named) == 1:  # a value next, unless it is a host (`--host HOST`)
                (action,) = named
                value_next = "=" not in word and action.nargs != 0 and action.metavar != "HOST"
            elif named:
                continue  # a prefix of several: argparse names the options it could be
            elif word.startswith("-") and word != "-" and not _NEGATIVE_NUMBER.fullmatch(word):
                self.error(
                    f"{word}: a host or group name cannot begin with '-' (ssh would take it "
                    f"for an option), and `{self.prog}` has no such option"
                )
        return super().parse_known_args(*args, **kwargs)

    def _options_named(self, word: str) -> set[argparse.Action]:
        """The options `word` can name, as argparse reads it: the one it is (`--db=URL`), or
        every one a long prefix (`--ti`) begins."""
        name = word.partition("=")[0]
        options = self._option_string_actions  # argparse keeps no public list of them
        if name in options:
            return {options[name]}
        if name.startswith("--") and len(name) > 2:
            return {options[o] for o in options if o.startswith(name)}
        return set()


_NEGATIVE_NUMBER = re.compile(r"-\d+|-\d*\.\d+")  # as argparse tells values from options


def fill_parser(hosts: argparse.ArgumentParser) -> None:
    hosts.description = (
        "Host groups for runs on several hosts at once. A host is HOST:PORT (a running "
        "`fio --server`; port 8765 if omitted) or ssh://[user@]host[:port] (Stripewise starts "
        "fio on the host's loopback over ssh). See docs/hosts.md."
    )
    actions = hosts.add_subparsers(
        dest="hosts_command", metavar="ACTION", required=True, parser_class=HostWordsParser
    )
    add = actions.add_parser("add", help="add hosts to a group (created if new)")
    add.add_argument("group", metavar="GROUP", help="group name: letters, digits, . _ -")
    add.add_argument("hosts", metavar="HOST", nargs="+", help="HOST[:PORT] or ssh://[user@]host")
    add_db_option(add, top=False)

    listing = actions.add_parser("list", help="the groups and their hosts")
    listing.add_argument("group", metavar="GROUP", nargs="?", help="only this group")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    add_db_option(listing, top=False)

    remove = actions.add_parser("remove", help="remove hosts from a group, or the whole group")
    remove.add_argument("group", metavar="GROUP")
    remove.add_argument(
        "hosts", metavar="HOST", nargs="*", help="hosts to remove (none: the whole group)"
    )
    add_db_option(remove, top=False)

    check = actions.add_parser(
        "check",
        help="are the hosts reachable, running fio, with this machine's fio protocol? "
        "(exit 1 if one is not)",
    )
    check.add_argument(
        "group",
        metavar="GROUP|HOST",
        nargs="?",
        help="every host of the group, or one host (HOST:PORT or ssh://...)",
    )
    check.add_argument(
        "--host",
        dest="check_hosts",
        metavar="HOST",
        action="append",
        default=[],
        help="a host to check (repeatable), instead of a group",
    )
    check.add_argument(
        "--timeout",
        type=_timeout,
        default=5.0,
        metavar="SECONDS",
        help="how long to wait for each host's fio server (default 5; ssh hosts get 15 or more)",
    )
    check.add_argument("--json", action="store_true", help="machine-readable output")
    add_db_option(check, top=False)


def _timeout(text: str) -> float:
    """Seconds, refused as typed: read first, 99999999999999999999999 was echoed as 1e+23."""
    seconds = finite(text)
    if not 0 < seconds <= MAX_TIMEOUT_S:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most {MAX_TIMEOUT_S:g}: {text}")
    return seconds


def run(args: argparse.Namespace) -> int:
    action: Callable[[argparse.Namespace], int] = {
        "add": _add,
        "list": _list,
        "remove": _remove,
        "check": _check,
    }[args.hosts_command]
    return action(args)


# -- actions -------------------------------------------------------------------------------


def _add(args: argparse.Namespace) -> int:
    name = _group_name(args.group)
    addresses = _addresses(args.hosts)
    from stripewise.history import host_groups

    with _database(args) as db:
        group, before = host_groups.add_hosts_to(db, name, addresses)
    known = set(before or ())
    added = [a for a in dict.fromkeys(addresses) if a not in known]
    already = [a for a in dict.fromkeys(addresses) if a in known]
    verb = "created" if before is None else "updated"
    print(f"{verb} group {group.name}: {count_noun(len(group.hosts), 'host')}")
    for address in added:
        print(f"  added   {address.label}")
    for address in already:
        print(f"  already {address.label}")
    for address in added:
        if address.kind == "fio" and not address.is_loopback:
            print(
                f"note: {address.label} is a fio server on a network address; fio has no "
                "authentication, so anyone who reaches it runs commands as its user "
                "(docs/hosts.md). ssh:// hosts keep fio on their loopback.",
                file=sys.stderr,
            )
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    from stripewise.history import host_groups

    with _database(args) as db:
        if args.group is None:
            groups = host_groups.list_groups(db)
        else:
            name = _group_name(args.group)
            found = host_groups.get_group(db, name)
            if found is None:
                raise CliError(f"no host group named {name}")
            groups = [found]
    if args.json:
        print(json.dumps({"groups": [group_json(g) for g in groups]}, indent=2))
        return EXIT_OK
    if not groups:
        print("no host groups; add one with: stripewise hosts add GROUP HOST [HOST...]")
    for group in groups:
        print(f"{group.name} ({count_noun(len(group.hosts), 'host')})")
        for address in group.hosts:
            print(f"  {address.label}")
    return EXIT_OK


def _remove(args: argparse.Namespace) -> int:
    name = _group_name(args.group)
    addresses = _addresses(args.hosts)
    from stripewise.history import host_groups

    with _database(args) as db:
        group = host_groups.get_group(db, name)
        if group is None:
            raise CliError(f"no host group named {name}")
        if not addresses:
            host_groups.remove_group(db, name)
            print(f"removed group {name} ({count_noun(len(group.hosts), 'host')})")
            return EXIT_OK
        missing = [a.label for a in addresses if a not in group.hosts]
        if missing:
            raise CliError(f"not in group {name}: {', '.join(missing)}; nothing removed")
        left = host_groups.remove_hosts(db, name, addresses)
    print(
        f"group {name}: removed {count_noun(len(set(addresses)), 'host')}, {len(left.hosts)} left"
    )
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    if args.group is not None and _names_a_host(args.group):
        args.check_hosts, args.group = [args.group, *args.check_hosts], None
    if (args.group is None) == (not args.check_hosts):
        raise CliError("check needs a GROUP or --host HOST (one of the two)")
    if args.group is not None:
        name = _group_name(args.group)
        from stripewise.history import host_groups

        with _database(args) as db:
            group = host_groups.get_group(db, name)
        if group is None:
            raise CliError(f"no host group named {name}{_as_host_hint(name)}")
        if not group.hosts:
            raise CliError(f"group {name} has no hosts; add some with: stripewise hosts add")
        addresses: Sequence[HostAddress] = group.hosts
    else:
        addresses = tuple(dict.fromkeys(_addresses(args.check_hosts)))
    from stripewise.hosts.checks import check_hosts

    checks = check_hosts(addresses, timeout_s=args.timeout)
    every_host_ok = all(c.ok for c in checks)
    if args.json:
        print(json.dumps({"ok": every_host_ok, "hosts": [check_json(c) for c in checks]}, indent=2))
    else:
        for check in checks:
            mark = "ok  " if check.ok else "FAIL"
            print(f"{mark} {check.message}")
    return EXIT_OK if every_host_ok else EXIT_FAILED


# -- output --------------------------------------------------------------------------------


def address_json(address: HostAddress) -> dict[str, Any]:
    return {
        "label": address.label,
        "kind": address.kind,
        "host": address.host,
        "port": address.port,
        "user": address.user,
    }


def group_json(group: HostGroup) -> dict[str, Any]:
    return {"name": group.name, "hosts": [address_json(a) for a in group.hosts]}


def check_json(check: HostCheck) -> dict[str, Any]:
    info = check.info
    return {
        **address_json(check.address),
        "ok": check.ok,
        "reachable": check.reachable,
        "fio_version": check.fio_version,
        "protocol_matches": check.protocol_matches,
        "protocol_version": info.protocol_version if info else None,
        "local_protocol_version": info.local_protocol_version if info else None,
        "hostname": info.hostname if info else None,
        "message": check.message,
    }


# -- input ---------------------------------------------------------------------------------


def _group_name(text: str) -> str:
    try:
        return check_group_name(text)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def _names_a_host(text: str) -> bool:
    """A word that cannot be a group name but reads as a host (`ssh://...`, `HOST:PORT`)."""
    try:
        check_group_name(text)
        return False
    except ValueError:
        pass
    try:
        parse_host(text)
        return True
    except HostAddressError:
        return False


def _as_host_hint(name: str) -> str:
    """For a name that is no group but reads as a host: how to check that host instead (a
    group name wins the positional; `hosts add` takes a host without its port)."""
    try:
        address = parse_host(name)
    except HostAddressError:
        return ""
    return f"; to check the host, give {address.label} or --host {name}"


def _addresses(texts: Sequence[str]) -> list[HostAddress]:
    try:
        return [parse_host(text) for text in texts]
    except HostAddressError as exc:
        raise CliError(str(exc)) from None


@contextmanager
def _database(args: argparse.Namespace) -> Iterator[Database]:
    url = database_url(args)
    from stripewise.history import database  # lazy: SQLAlchemy only for commands that use it

    db = open_history(url)
    try:
        yield db
    except database.DatabaseError as exc:
        raise CliError(str(exc)) from None
    finally:
        db.close()
